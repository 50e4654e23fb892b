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

from .. import backend as B
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
_NAMES = {"float": float32, "double": float64, "long": int64, "int": int32, "half": float16,
          "bool": bool_}


def as_dtype(dtype: Any) -> np.dtype | None:
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


def to_array(data: Any, dtype: Any = None) -> Any:
    """A new array of ``data`` with PyTorch's dtype rules, on the current backend (or on
    ``data``'s own GPU backend): Python floats become float32, ints int64, and an array keeps
    its dtype. ``data`` is always copied, as ``torch.tensor`` copies.

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
    backend = owner if owner not in (None, B.NUMPY) else B.current()
    if owner is None and dtype is None and not isinstance(data, np.generic):
        probe = np.asarray(data)  # Python numbers and lists (a NumPy scalar keeps its dtype)
        if probe.dtype == np.float64:
            dtype = default_float
        elif probe.dtype.kind == "O":
            raise TypeError(f"cannot make a tensor from {type(data).__name__} data: use numbers, "
                            "(nested) lists of numbers or an array")
    array = backend.asarray(data, dtype=dtype)
    if owner is not None and (array is data or getattr(array, "base", None) is data):
        array = array.copy()
    return array
