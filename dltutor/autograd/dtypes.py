"""The element types a tensor can hold, the names learners use for them, and PyTorch's rules
for the dtype a tensor gets from its data.

>>> import dltutor as dt
>>> dt.float32, as_dtype("double")
(dtype('float32'), dtype('float64'))
>>> to_array([1.0, 2.0]).dtype, to_array([1, 2]).dtype
(dtype('float32'), dtype('int64'))
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import backend as B
from .arrays import Array
from .function import is_tensor

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")
#: The dtype of floating-point tensors made from Python numbers (PyTorch's default).
default_float = float32

# PyTorch's short names, as in ``t.double()`` or ``dtype="long"``.
_NAMES: dict[str, np.dtype] = {"float": float32, "double": float64, "long": int64, "int": int32,
                              "half": float16, "bool": bool_}


def as_dtype(dtype: DTypeLike | None) -> np.dtype | None:
    """Turn ``"float32"``, ``np.float64``, ``dt.float32`` or ``"long"`` into a NumPy dtype.

    >>> as_dtype("long"), as_dtype(None)
    (dtype('int64'), None)
    """
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in _NAMES:
        return _NAMES[dtype]
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use dt.float32, dt.float64, dt.int64 "
                        "or a NumPy dtype") from None


_REAL_KINDS = "biuf"   # bool, signed and unsigned integers, floats: what a tensor may hold


def _numbers_only(data: Any, owner: str = "dt.tensor") -> np.ndarray:
    """``data`` as a NumPy array, if it holds real numbers only; a clear error otherwise
    (strings, objects, None, complex numbers, ragged lists).

    >>> _numbers_only([[1, 2], [3]])
    Traceback (most recent call last):
    ...
    ValueError: dt.tensor: the nested lists are ragged (rows of different lengths); every row must have the same length
    """
    try:
        probe = np.asarray(data)
    except ValueError:
        raise ValueError(f"{owner}: the nested lists are ragged (rows of different lengths); "
                         "every row must have the same length") from None
    if probe.dtype.kind not in _REAL_KINDS:
        _refuse_kind(probe.dtype, type(data).__name__, owner)
    return probe


def _refuse_kind(dtype: np.dtype, what: str, owner: str = "dt.tensor") -> None:
    """Raise the TypeError for data a tensor cannot hold (PyTorch refuses strings and objects
    too; it has complex tensors, dltutor does not)."""
    kind = {"U": "strings", "S": "bytes", "O": "Python objects (or None)", "c": "complex numbers",
            "M": "dates", "m": "time spans", "V": "raw records"}.get(dtype.kind, str(dtype))
    raise TypeError(f"{owner}: cannot make a tensor from {what} data holding {kind}; a tensor "
                    "holds real numbers (bool, int, float): pass numbers, (nested) lists of "
                    "numbers or a numeric array")


def to_array(data: Any, dtype: DTypeLike | None = None, caller: str = "dt.tensor") -> Array:
    """A new array of ``data`` with PyTorch's dtype rules, on the current backend (or on
    ``data``'s own GPU backend): Python floats become float32, ints int64, and an array keeps
    its dtype. ``data`` is always copied, as ``torch.tensor`` copies. Anything but real numbers
    is refused, naming ``caller`` (the function the learner called).

    >>> a = np.ones(2)
    >>> b = to_array(a)
    >>> b.dtype, b is a
    (dtype('float64'), False)
    """
    dtype = as_dtype(dtype)
    if is_tensor(data):
        data = data.data
    owner = B.backend_of(data)
    # Lists, scalars and NumPy arrays go to the current backend; a GPU array stays where it is.
    backend = B.current() if owner is None or owner is B.NUMPY else owner
    if owner is None:
        probe = _numbers_only(data, caller)
        if dtype is None and probe.dtype == np.float64 and not isinstance(data, np.generic):
            dtype = default_float   # Python floats (a NumPy scalar or array keeps its dtype)
    elif data.dtype.kind not in _REAL_KINDS:
        _refuse_kind(data.dtype, type(data).__name__, caller)
    array = backend.asarray(data, dtype=dtype)
    if owner is not None and (array is data or getattr(array, "base", None) is data):
        array = array.copy()
    return array


def cast_problem(values: Array, dtype: DTypeLike) -> str:
    """Why converting the array ``values`` to ``dtype`` would change a value (more than float
    rounding does), or "" when it is safe. Allowed: float rounding and
    underflow, NaN and inf into a float (values, as PyTorch's ``copy_`` keeps them); refused:
    overflow to inf, NaN/inf/fractions/out-of-range numbers into an integer, anything but 0/1
    into a bool. Every load and ``Parameter.set_value`` asks this one function.

    >>> cast_problem(np.array([0.1, np.nan, np.inf]), np.float32)   # rounding; NaN, inf stay
    ''
    >>> cast_problem(np.array([1.0, 1e300]), np.float32)
    'holds 1e+300, which float32 cannot hold (it would become inf)'
    >>> cast_problem(np.array(np.nan), np.int64)
    'holds nan, which int64 cannot hold (an integer is never NaN or inf)'
    >>> cast_problem(np.array([3, -1]), np.uint8)
    'holds -1, which uint8 cannot hold (it holds 0 to 255)'
    """
    source, target = values.dtype, np.dtype(dtype)
    if source == target or values.size == 0:
        return ""
    xp = B.get_array_module(values)
    if target.kind == "b":
        bad = (values != 0) & (values != 1)
        why = "a bool holds only 0 and 1, False and True"
    elif target.kind in "iu":
        bad, why = _outside_integers(xp, values, target)
    elif source.kind == "f":        # float to a smaller float: only overflow changes a value
        with B.ignore_float_errors(values):
            bad = xp.isinf(values.astype(target)) & xp.isfinite(values)
        why = "it would become inf"
    else:                           # bool or int to float: ints too large for float16
        with B.ignore_float_errors(values):
            bad = xp.isinf(values.astype(target))
        why = "it would become inf"
    if not bool(bad.any()):
        return ""
    first = B.to_numpy(values[bad][:1])[0].item()
    return f"holds {first!r}, which {target} cannot hold ({why})"


def _outside_integers(xp: Any, values: Array, target: np.dtype) -> tuple[Array, str]:
    """A mask of the ``values`` the integer dtype ``target`` cannot hold, and why."""
    info = np.iinfo(target)
    why = f"it holds {info.min} to {info.max}"
    if values.dtype.kind in "iub":  # compare as Python ints: exact for every integer dtype
        if values.dtype.kind == "b" or (info.min <= int(values.min())
                                        and int(values.max()) <= info.max):
            return xp.zeros(values.shape, dtype=bool), why
        return (values < info.min) | (values > info.max), why
    if not bool(xp.isfinite(values).all()):
        return ~xp.isfinite(values), "an integer is never NaN or inf"
    if not bool((values == xp.trunc(values)).all()):
        return values != xp.trunc(values), "an integer has no fraction"
    # Bounds as float64 powers of two, exact: info.max itself would round up (2**63 - 1).
    low, high = xp.asarray(float(info.min)), xp.asarray(2.0 ** (info.bits - (info.min < 0)))
    return (values < low) | (values >= high), why
