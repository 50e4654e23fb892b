"""A stand-in for "another CPU": nudge the last bits of every result whose rounding differs
between machines, and see whether any stored output or claim notices.

Two CPUs give bit-identical results for ``+ - * /``, ``sqrt`` and comparisons (IEEE 754 rounds
them exactly), but not for what goes through BLAS (matmul, linear, conv) or through NumPy's
SIMD loops for ``exp``, ``log``, ``tanh`` and friends: another kernel sums in another order or
uses another polynomial, and the last bits move. Installing this probe moves them on purpose:
the forward output and the gradients of every such op are shifted by -2..+2 units in the last
place (ulps). The shift is a fixed function of the value's bits, so the same computation still
gives the same result (a run stays reproducible bit for bit), yet every number that depends on
rounding noise comes out different from an unprobed run.

A stored output or an assert that survives the probe does not depend on how this machine
rounds. ``tests/notebooks/test_every_machine.py`` runs the notebooks and doctests under it as
one of its variants; the IPython startup file it writes loads it into the notebooks' kernels, and
``-p rounding_probe`` loads it into a pytest process (for the doctests).
"""
from __future__ import annotations

import numpy as np

from dltutor.autograd.function import Function

# Ops whose results are exactly rounded, hence identical on every CPU: left alone.
EXACT_OPS = {
    "add", "sub", "mul", "div", "neg", "abs", "relu", "leaky_relu", "maximum", "minimum",
    "where", "clip", "reshape", "permute", "broadcast_to", "getitem", "concat", "stack", "cast",
    "to_backend", "max", "min", "max_pool2d", "dropout", "embedding", "sqrt",
    # NumPy's pairwise float summation is compiled once, not per CPU, so sums, means and what
    # is built from them with exact ops agree on every machine too.
    "sum", "mean", "var", "mse_loss", "avg_pool2d", "batch_norm",
}

# dtype -> (unsigned view, hash multiplier, bits, low mantissa bits that a "round" value has clear)
_UINT = {np.dtype(np.float32): (np.uint32, 0x9E3779B1, 32, 12),
         np.dtype(np.float64): (np.uint64, 0x9E3779B97F4A7C15, 64, 24)}
_installed = False


def nudge(array):
    """``array`` with each finite nonzero float moved by -2..+2 ulps, chosen by its own bits.

    Round values (``1.0``, ``0.5``, ``-3.0``: the low mantissa bits all zero) stay: every
    correct libm returns ``exp(0) == 1`` and ``log(1) == 0`` exactly, so no CPU differs there.

    >>> x = np.array([1.1, 2.2, 3.3, 0.5], dtype=np.float32)
    >>> y = nudge(x)
    >>> bool(np.all(np.abs(y - x) <= 2 * np.spacing(x))), bool(np.array_equal(nudge(x), y)), y[3]
    (True, True, np.float32(0.5))
    """
    if not isinstance(array, np.ndarray) or array.dtype not in _UINT:
        return array
    uint, multiplier, width, low_bits = _UINT[array.dtype]
    result = np.array(array, order="C")                 # a copy that keeps 0-d arrays 0-d
    bits = result.view(uint)
    with np.errstate(over="ignore"):
        hashed = bits * uint(multiplier)
    shift = (hashed >> uint(width - 3)).astype(np.int64) % 5 - 2          # -2 .. +2
    info = np.finfo(result.dtype)
    magnitude = np.abs(result)
    safe = np.isfinite(result) & (magnitude > info.tiny * 8) & (magnitude < info.max / 2) & \
        (bits & uint((1 << low_bits) - 1) != 0)
    moved = bits + shift.astype(uint)                    # unsigned wrap-around adds -1, -2 too
    result.view(uint)[safe] = moved[safe]
    return result


def _nudged_backward(backward):
    def nudged(self, grad):
        return tuple(None if g is None else nudge(g) for g in backward(self, grad))

    nudged.probed = True
    return nudged


def _probing_call(original):
    def call(self, *inputs):
        out = original(self, *inputs)
        if self.op_name in EXACT_OPS:
            return out
        cls = type(self)
        if not getattr(cls.backward, "probed", False):
            # Wrapped once per class, not per op: a closure on the op would keep its saved
            # arrays alive in a reference cycle, and chapter 11 counts what stays alive.
            cls.backward = _nudged_backward(cls.backward)
        out.data = nudge(out.data)
        return out

    return call


def install() -> None:
    """Switch the probe on in this process (once). The ops run ``Op(...).apply(x)``, and
    ``__call__`` is the same method under another name: both names get the probe (wrapping
    ``__call__`` alone probed nothing the kit's functions do; test_rounding_probe.py checks
    that it nudges)."""
    global _installed
    if not _installed:
        Function.apply = Function.__call__ = _probing_call(Function.apply)
        _installed = True


def pytest_configure(config) -> None:  # loaded with ``-p rounding_probe``
    install()
