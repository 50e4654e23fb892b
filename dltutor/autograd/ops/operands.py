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
from typing import TYPE_CHECKING, Sequence, TypeAlias

import numpy as np

from ... import backend as B
from ..arrays import Array
from ..dtypes import default_float
from ..function import is_tensor, make_tensor
from .convert import cast

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from numpy.typing import ArrayLike

    from ..tensor import Tensor

#: What an operator takes besides a Tensor: a number, a list of numbers, an array.
Operand: TypeAlias = "Tensor | ArrayLike"
#: An axis argument: one axis, several, or None for all of them.
Axes: TypeAlias = "int | Sequence[int] | None"
#: A shape or a list of sizes: one at a time, ``f(2, 3)``, or as one sequence, ``f((2, 3))``.
Size: TypeAlias = "int | Sequence[int]"


def as_tensor(value: Operand, like: Tensor, op: str = "a tensor op") -> Tensor:
    """``value`` as a constant tensor on ``like``'s backend; a Python number takes ``like``'s
    dtype (except a float next to an integer tensor, which becomes float32, as in PyTorch).
    Anything but real numbers (a string, None, a complex number) is refused, naming ``op``.

    >>> import dltutor as dt
    >>> as_tensor(2, dt.ones(1, dtype=dt.float64)).dtype
    dtype('float64')
    >>> as_tensor("x", dt.ones(1), "add")
    Traceback (most recent call last):
    ...
    TypeError: add: cannot use a str ('x') as an operand; use a number or a Tensor
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
    elif getattr(value, "dtype", np.dtype(object)).kind not in "biuf" and not (
            isinstance(value, (list, tuple)) and np.asarray(value).dtype.kind in "biuf"):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise TypeError(f"{op}: cannot use a {type(value).__name__} ({shown}) as an operand; "
                        "use a number or a Tensor")
    return make_tensor(backend.asarray(value, dtype=dtype))


def _the_tensor(b: Operand, a: Operand, op: str) -> Tensor:
    """``b``, which must be a Tensor when ``a`` is not (else a TypeError naming ``op``)."""
    if is_tensor(b):
        return b
    raise TypeError(f"{op}: needs a Tensor among its operands; got a {type(a).__name__} and a "
                    f"{type(b).__name__}")


def promote(a: Operand, b: Operand, op: str = "a tensor op") -> tuple[Tensor, Tensor]:
    """Two operands as tensors, an integer one cast to the other's float dtype."""
    if not is_tensor(a):
        b = _the_tensor(b, a, op)
        a = as_tensor(a, b, op)
    elif not is_tensor(b):
        b = as_tensor(b, a, op)
    if a.data.dtype != b.data.dtype:
        ka, kb = a.data.dtype.kind, b.data.dtype.kind
        if ka in "fc" and kb not in "fc":
            b = cast(b, a.data.dtype)
        elif kb in "fc" and ka not in "fc":
            a = cast(a, b.data.dtype)
    return a, b


def broadcast_error(op: str, a: Array, b: Array) -> ValueError:
    """The error for two arrays whose shapes do not broadcast, naming the op and the shapes."""
    return ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast: "
                      "trailing dimensions must be equal or 1 (see the broadcasting rules of "
                      "NumPy). Reshape or unsqueeze one operand.")


class AxisError(IndexError, ValueError):
    """An axis (``dim``) outside a tensor's dimensions. An IndexError, as in PyTorch
    ("Dimension out of range"), and a ValueError, as it was in dltutor before."""


def axis_index(op: str, axis: Axes, ndim: int, *, extra: int = 0) -> int:
    """One axis of a tensor with ``ndim`` dimensions as a non-negative index (negatives count
    from the end); ``extra=1`` for ops that may name one past the end (``unsqueeze``, ``stack``).
    An axis that does not exist is an error, never wrapped around.

    >>> axis_index("sum", -1, ndim=3)
    2
    >>> axis_index("transpose", 5, ndim=2)
    Traceback (most recent call last):
    ...
    dltutor.autograd.ops.operands.AxisError: transpose: dimension 5 is out of range for a tensor with 2 dimension(s): use -2 to 1
    """
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: a dimension must be an integer, got {axis!r} of type "
                        f"{type(axis).__name__}")
    size = builtins.max(ndim + extra, 1)        # a 0-d tensor still takes axis 0 or -1
    if not -size <= axis < size:
        raise AxisError(f"{op}: dimension {axis} is out of range for a tensor with {ndim} "
                        f"dimension(s): use {-size} to {size - 1}")
    return int(axis) % size


def reduction_axes(op: str, axis: Axes, ndim: int) -> tuple[int, ...]:
    """``axis`` (None for all, an int or a tuple; negatives count from the end) as sorted
    non-negative axes; an axis named twice is an error, as in PyTorch. A 0-d tensor takes
    dimension 0 or -1, as in PyTorch, and has no axis to reduce: its axes are ``()``.

    >>> reduction_axes("sum", -1, ndim=0), reduction_axes("sum", (0, -1), ndim=2)
    ((), (0, 1))
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = [axis_index(op, ax, ndim) for ax in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dimension {axis!r} names the same dimension twice")
    return tuple(sorted(out)) if ndim else ()


def one_axis(op: str, axis: Axes, dim: Axes, ndim: int) -> int:
    """The single axis an op such as softmax works along (``dim`` is PyTorch's name).

    >>> one_axis("softmax", -1, None, ndim=2), one_axis("softmax", 0, 1, ndim=2)
    (1, 1)
    """
    return axis_index(op, dim if dim is not None else axis, ndim)
