"""A stand-in GPU backend for machines without one: NumPy arrays of a marker subclass.

The CI machines have no GPU, so this is how the suite proves that every op stays on its
backend. It is stricter than CuPy:

* Arrays are :class:`Marked`, an ``ndarray`` subclass registered as its own backend.
* The backend's array module (:data:`XP`) wraps NumPy: its functions take Marked arrays and
  return Marked arrays.
* Calling a NumPy function directly on a Marked array (``np.exp(x)`` inside an op instead of
  ``xp.exp(x)``) raises :class:`StrayNumpyCall`. Array methods and operators stay allowed,
  as they are on CuPy arrays.
* A NumPy function that makes a new array (``np.zeros``) returns a plain ndarray, which the
  tests catch when they check the class of every array an op produces
  (:func:`checking_apply`, which the ``backend`` fixture of conftest.py installs).
* Every array operation passes through this module, so :func:`counting` can count them: on
  a GPU each is about one kernel launch (a convolution's must not grow with its kernel).
"""
from __future__ import annotations

import collections
import contextlib
import threading
import types
from typing import Any

import numpy as np

from dltutor import backend as B

_state = threading.local()


class StrayNumpyCall(TypeError):
    """A NumPy function was called on a marked array outside the backend's array module."""


@contextlib.contextmanager
def _allowed():
    previous = getattr(_state, "allowed", False)
    _state.allowed = True
    try:
        yield
    finally:
        _state.allowed = previous


def _is_allowed() -> bool:
    return getattr(_state, "allowed", False)


@contextlib.contextmanager
def counting():
    """Count, by name, the array operations run on the marked backend inside the block: calls
    of ``xp``'s functions (its submodules' too) and ufuncs, and the methods and operators of
    marked arrays (views like ``reshape`` and indexing included). What one of them does
    inside NumPy is not counted again: each counts once, as one call of the array library
    (on CuPy, about one kernel launch or one view).

    >>> register().name
    'marked'
    >>> with B.use("marked"), counting() as counts:
    ...     a = XP.ones(3)
    ...     b = (a + a).sum()
    >>> sorted(counts.items())
    [('__add__', 1), ('ones', 1), ('sum', 1)]
    """
    counts: collections.Counter = collections.Counter()
    previous = getattr(_state, "counts", None)
    _state.counts = counts
    try:
        yield counts
    finally:
        _state.counts = previous


def _count(name: str) -> None:
    """Count one array operation (inside :func:`counting`; not the ones an operation runs)."""
    counts = getattr(_state, "counts", None)
    if counts is not None and not _is_allowed():
        counts[name] += 1


def _plain(value: Any) -> Any:
    """Marked arrays (also inside lists and tuples) as plain ndarrays."""
    if isinstance(value, Marked):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _mark(value: Any) -> Any:
    """Results as Marked arrays; NumPy scalars become 0-d Marked arrays (CuPy never returns scalars)."""
    if isinstance(value, np.ndarray):
        return value if isinstance(value, Marked) else value.view(Marked)
    if isinstance(value, np.generic):
        return np.asarray(value).view(Marked)
    if isinstance(value, tuple):
        return tuple(_mark(v) for v in value)
    return value


class Marked(np.ndarray):
    """An ndarray that belongs to the marked test backend."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not _is_allowed():
            raise StrayNumpyCall(f"np.{ufunc.__name__} ({method}) was called directly on a marked "
                                 "array: ops must use the backend's array module (xp)")
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        with _allowed():
            return _mark(getattr(ufunc, method)(*_plain(inputs), **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        if not _is_allowed():
            raise StrayNumpyCall(f"np.{func.__name__} was called directly on a marked array: ops "
                                 "must use the backend's array module (xp)")
        with _allowed():
            return _mark(func(*_plain(args), **_plain(kwargs)))


def _allowing(name: str):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        _count(name)
        with _allowed():
            result = base(self.view(np.ndarray), *_plain(args), **_plain(kwargs))
        if result is NotImplemented:
            return result
        if name.startswith("__i") and name not in ("__invert__", "__index__", "__int__"):
            return self  # in-place operators change self
        return _mark(result)

    method.__name__ = name
    return method


# Methods and operators of an array are part of the array API (CuPy has them too).
_ARRAY_METHODS = [
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__",
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__invert__", "__and__",
    "__or__", "__xor__", "__rand__", "__ror__", "__iadd__", "__isub__", "__imul__",
    "__itruediv__", "__ipow__", "__iand__", "__ior__", "__getitem__", "__setitem__",
    "sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "prod", "all", "any",
    "reshape", "transpose", "swapaxes", "astype", "copy", "ravel", "squeeze", "clip", "fill",
    "cumsum", "dot", "nonzero", "round", "take",
]
for _name in _ARRAY_METHODS:
    setattr(Marked, _name, _allowing(_name))


class _MarkedUfunc:
    """A ufunc of the marked module: calls and ``.at``/``.reduce`` take and give Marked arrays."""

    def __init__(self, ufunc: np.ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        _count(self._ufunc.__name__)
        with _allowed():
            return _mark(self._ufunc(*_plain(args), **_plain(kwargs)))

    def __getattr__(self, method: str):
        target = getattr(self._ufunc, method)
        if not callable(target):
            return target

        def call(*args, **kwargs):
            _count(f"{self._ufunc.__name__}.{method}")
            with _allowed():
                return _mark(target(*_plain(args), **_plain(kwargs)))

        return call


class _MarkedModule:
    """The marked backend's ``xp``: NumPy's namespace, with Marked arrays in and out; its
    submodules too (``xp.lib.stride_tricks.as_strided``, which CuPy has under the same name)."""

    def __init__(self, module: types.ModuleType = np, name: str = "marked_numpy"):
        self._module = module
        self.__name__ = name

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._module, name)
        if isinstance(target, types.ModuleType):
            return _MarkedModule(target, f"{self.__name__}.{name}")
        if isinstance(target, np.ufunc):
            return _MarkedUfunc(target)
        if callable(target) and not isinstance(target, type):
            def call(*args, **kwargs):
                _count(name)
                with _allowed():
                    return _mark(target(*_plain(args), **_plain(kwargs)))

            call.__name__ = name
            return call
        return target  # constants (inf, pi), dtypes, submodules


XP = _MarkedModule()

def _erf(array: Marked) -> Marked:
    from scipy.special import erf

    with _allowed():
        return _mark(erf(_plain(array)))


#: What a fused kernel may call: NumPy's elementwise functions (ufuncs) and ``where``, the
#: kind of call ``cupy.fuse`` compiles into one kernel; a reduction or a new array is not.
ELEMENTWISE = types.SimpleNamespace(
    where=np.where, **{name: f for name, f in vars(np).items() if isinstance(f, np.ufunc)})


def _fuse(kernel):
    """A fused kernel counts as ONE operation, as on CuPy (one launch); it runs on the arrays'
    plain NumPy views (its writes land in the marked arrays), with only :data:`ELEMENTWISE`
    as its ``xp``."""
    def run(*args):
        _count(f"fused {kernel.__name__}")
        with _allowed():
            return kernel(ELEMENTWISE, *_plain(args))
    return run


MARKED = B.Backend(
    "marked", "marked", XP, Marked,
    to_numpy=lambda a: np.array(a.view(np.ndarray)),
    from_numpy=lambda a: np.asarray(a).view(Marked),
    erf=_erf, fuse=_fuse,
)


def register() -> B.Backend:
    """Register the marked backend (idempotent)."""
    return B.register(MARKED)


def assert_marked(array: Any, what: str) -> None:
    """Fail with a readable message unless ``array`` is a Marked array."""
    if not isinstance(array, Marked):
        raise AssertionError(f"{what} is a {type(array).__module__}.{type(array).__name__}, not a "
                             "marked array: some op made it with NumPy instead of the backend")


#: How many forward outputs and backward passes the per-op check has looked at since the
#: counts were last set to 0: a test reads them to prove the check really runs.
checked = {"forward": 0, "backward": 0}


def checking_apply(original):
    """Wrap ``Function.apply`` so every op's forward output and backward gradients are checked
    to be marked arrays (``wrap_every_op_call`` installs it)."""

    def apply(self, *inputs):
        out = original(self, *inputs)
        assert_marked(out.data, f"the forward output of {self.op_name}")
        checked["forward"] += 1
        if out.grad_fn is self:
            backward = self.backward

            def checked_backward(grad):
                grads = backward(grad)
                for i, g in enumerate(grads):
                    if g is not None:
                        assert_marked(g, f"{self.op_name}'s gradient for input {i}")
                checked["backward"] += 1
                return grads

            self.backward = checked_backward
        return out

    return apply


def wrap_every_op_call(monkeypatch, wrap) -> None:
    """Replace ``Function.apply`` with ``wrap(Function.apply)`` for one test. The ops run
    ``Op(...).apply(x)``, and ``Op(...)(x)`` is the same method under the name ``__call__``
    (an alias made when the class was defined), so both names are patched: patching
    ``__call__`` alone checks nothing the kit's own functions do."""
    from dltutor.autograd.function import Function

    wrapped = wrap(Function.apply)
    monkeypatch.setattr(Function, "apply", wrapped)
    monkeypatch.setattr(Function, "__call__", wrapped)
