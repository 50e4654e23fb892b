"""What ops do with their operands before they run: put a Python number next to a tensor,
promote ints to floats as PyTorch does, name the shapes when broadcasting fails, and turn
``axis=``/``dim=`` arguments into axes.

>>> import dltutor as dt
>>> a, b = promote(dt.tensor([1, 2]), 0.5)       # int tensor and a float: both become float32
>>> a.dtype, b.dtype
(dtype('float32'), dtype('float32'))
>>> reduction_axes("sum", (-1, 0), ndim=3)
(0, 2)
"""
from __future__ import annotations

import builtins
from typing import Any

from ... import backend as B
from ..dtypes import default_float
from ..function import is_tensor, make_tensor
from .convert import cast


def as_tensor(value: Any, like: Any) -> Any:
    """``value`` as a constant tensor on ``like``'s backend; a Python number takes ``like``'s
    dtype (except a float next to an integer tensor, which becomes float32, as in PyTorch).

    >>> import dltutor as dt
    >>> as_tensor(2, dt.ones(1, dtype=dt.float64)).dtype
    dtype('float64')
    """
    if is_tensor(value):
        return value
    backend = B.backend_of(like.data) or B.current()
    dtype = None
    if isinstance(value, (bool, int, float)):
        if like.data.dtype.kind in "fc" or not isinstance(value, float):
            dtype = like.data.dtype
        else:
            dtype = default_float  # int tensor * 0.5 is float32, as in PyTorch
    return make_tensor(backend.asarray(value, dtype=dtype))


def promote(a: Any, b: Any) -> tuple[Any, Any]:
    """Two operands as tensors, an integer one cast to the other's float dtype."""
    if not is_tensor(a):
        a = as_tensor(a, b)
    elif not is_tensor(b):
        b = as_tensor(b, a)
    if a.data.dtype != b.data.dtype:
        ka, kb = a.data.dtype.kind, b.data.dtype.kind
        if ka in "fc" and kb not in "fc":
            b = cast(b, a.data.dtype)
        elif kb in "fc" and ka not in "fc":
            a = cast(a, b.data.dtype)
    return a, b


def broadcast_error(op: str, a: Any, b: Any) -> ValueError:
    """The error for two arrays whose shapes do not broadcast, naming the op and the shapes."""
    return ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast: "
                      "trailing dimensions must be equal or 1 (see the broadcasting rules of "
                      "NumPy). Reshape or unsqueeze one operand.")


def reduction_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None for all, an int or a tuple; negatives count from the end) as sorted
    non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < builtins.max(ndim, 1):
            raise ValueError(f"{op}: axis {ax} is out of range for a tensor with {ndim} "
                             f"dimension(s)")
        out.append(ax % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def one_axis(op: str, axis: Any, dim: Any, ndim: int) -> int:
    """The single axis an op such as softmax works along (``dim`` is PyTorch's name)."""
    return reduction_axes(op, dim if dim is not None else axis, ndim)[0]
