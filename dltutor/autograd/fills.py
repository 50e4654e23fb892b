"""Random values for tensors: drawn in float64, cast, then written. The one path for all of them.

``dt.rand`` / ``dt.randn`` / ``dt.normal`` make new tensors from these draws; ``t.normal_()`` and
``t.uniform_()`` fill a tensor in place, and ``dltutor.nn.init`` calls those (as PyTorch's
``nn.init.normal_`` calls ``tensor.normal_``) or, for its other fills, :func:`write`. Values
are drawn with NumPy in float64 from dltutor's generator (or the one given), cast to the
tensor's dtype in NumPy, then moved to its device: a seed gives the same numbers for every
dtype, on the CPU and on the GPU.

>>> import dltutor as dt
>>> _ = dt.manual_seed(0)
>>> t = normal_fill(dt.zeros(3), mean=5.0, std=0.0, generator=None)
>>> t
tensor([5., 5., 5.])
"""
from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .. import backend as B
from . import rng
from .arrays import Array

if TYPE_CHECKING:                       # never imported here: tensor.py imports this module
    from .tensor import Tensor


def generator_for(func: str, generator: object) -> np.random.Generator:
    """``generator``, or dltutor's own (the one ``dt.manual_seed`` seeds) when it is None.

    >>> generator_for("normal_", None) is rng.generator()
    True
    """
    if generator is None:
        return rng.generator()
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{func}: generator must be a numpy.random.Generator (or None for the "
                        f"one dt.manual_seed seeds), got {type(generator).__name__}")
    return generator


def number(func: str, name: str, value: object) -> float:
    """The argument ``name`` of ``func`` as a float, or a TypeError naming it (a one-element
    tensor counts as its number).

    >>> number("normal_", "std", 2)
    2.0
    """
    if hasattr(value, "item") and getattr(getattr(value, "data", None), "size", None) == 1:
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
        raise TypeError(f"{func}: {name} must be a number, got {value!r}")
    return float(value)


def require_floating(func: str, tensor: Tensor) -> None:
    """Random values only fit a floating-point tensor; say how to make one.

    >>> import dltutor as dt
    >>> require_floating("normal_", dt.zeros(2, dtype=dt.int64))
    Traceback (most recent call last):
    ...
    TypeError: normal_: the tensor of shape (2,) has dtype int64, but random initial values need a floating-point tensor; make it with dtype=dt.float32
    """
    if tensor.dtype.kind not in "fc":
        raise TypeError(f"{func}: the tensor of shape {tuple(tensor.shape)} has dtype "
                        f"{tensor.dtype}, but random initial values need a floating-point "
                        f"tensor; make it with dtype=dt.float32")


def on_backend(values: ArrayLike, dtype: np.dtype, backend: B.Backend) -> Array:
    """NumPy ``values`` cast to ``dtype`` in NumPy (the same rounding on every device), then
    made an array of ``backend``.

    >>> on_backend(np.array([0.1]), np.dtype(np.float32), B.NUMPY).dtype
    dtype('float32')
    """
    return backend.asarray(np.asarray(values).astype(dtype, copy=False))


def write(tensor: Tensor, values: ArrayLike) -> Tensor:
    """Copy NumPy ``values`` into ``tensor.data`` in place, on the tensor's own backend; returns
    the tensor (the same object, so ties and optimizers keep seeing it).

    >>> import dltutor as dt
    >>> write(dt.zeros(2), np.array([1.0, 2.0]))
    tensor([1., 2.])
    """
    backend = B.backend_of(tensor.data) or B.NUMPY
    tensor.data[...] = on_backend(values, tensor.dtype, backend)
    return tensor


def cast_within(values: np.ndarray, dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """``values`` (float64, all in ``[low, high]``) cast to ``dtype`` without leaving that range.

    Rounding to float32 can push a value just inside a bound to the float32 number just
    outside it (0.1 is 0.10000000149 in float32). Clipping to the representable numbers inside
    ``[low, high]`` keeps the promise "every value lies within the bound" in every dtype.

    >>> float(cast_within(np.array([0.1]), np.dtype(np.float32), -0.1, 0.1)[0]) <= 0.1
    True
    """
    out = np.asarray(values).astype(dtype)
    if dtype.kind != "f" or dtype == np.float64:
        return out
    with np.errstate(over="ignore"):
        lo, hi = np.asarray(low, dtype=dtype), np.asarray(high, dtype=dtype)
    if float(lo) < low:  # compare in float64 (NumPy 2 would compare in float32)
        lo = np.nextafter(lo, np.asarray(np.inf, dtype=dtype))
    if float(hi) > high:
        hi = np.nextafter(hi, np.asarray(-np.inf, dtype=dtype))
    return np.clip(out, lo, hi, out=out)


def standard_draws(kind: str, shape: tuple[int, ...],
                   generator: np.random.Generator | None = None) -> np.ndarray:
    """float64 draws of ``shape``: ``"uniform"`` from ``[0, 1)``, ``"normal"`` from N(0, 1).

    >>> standard_draws("uniform", (2, 3)).shape
    (2, 3)
    """
    gen = generator_for(f"dt.{'rand' if kind == 'uniform' else 'randn'}", generator)
    if kind == "uniform":
        return gen.random(shape, dtype=np.float64)
    return gen.standard_normal(shape, dtype=np.float64)


def normal_fill(tensor: Tensor, mean: object, std: object,
                generator: np.random.Generator | None) -> Tensor:
    """Fill ``tensor`` with draws from N(mean, std²), in place (``t.normal_``, ``init.normal_``).

    >>> import dltutor as dt
    >>> normal_fill(dt.zeros(2), 0.0, -1.0, None)
    Traceback (most recent call last):
    ...
    ValueError: normal_: std must be >= 0 (it is the spread of the values), got -1.0
    """
    func = "normal_"
    require_floating(func, tensor)
    mean, std = number(func, "mean", mean), number(func, "std", std)
    if not std >= 0:
        raise ValueError(f"normal_: std must be >= 0 (it is the spread of the values), got {std}")
    z = np.asarray(generator_for(func, generator).standard_normal(
        size=tuple(tensor.shape), dtype=np.float64))
    return write(tensor, mean + std * z)


def uniform_fill(tensor: Tensor, a: object, b: object,
                 generator: np.random.Generator | None) -> Tensor:
    """Fill ``tensor`` with draws from U(a, b), in place (``t.uniform_``, ``init.uniform_``);
    every value lies in ``[a, b]`` in the tensor's own dtype.

    >>> import dltutor as dt
    >>> bool(uniform_fill(dt.zeros(100), -0.1, 0.1, None).abs().max() <= 0.1)
    True
    """
    func = "uniform_"
    require_floating(func, tensor)
    a, b = number(func, "a", a), number(func, "b", b)
    if not a <= b:
        raise ValueError(f"uniform_: the range [a, b) needs a <= b, got a={a} and b={b}; "
                         f"swap them")
    values = generator_for(func, generator).uniform(a, b, size=tuple(tensor.shape))
    return write(tensor, cast_within(values, tensor.dtype, a, b))
