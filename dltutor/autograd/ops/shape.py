"""Ops that move values around without changing them: ``reshape`` and its relatives
(``flatten``, ``unsqueeze``, ``squeeze``), ``permute``/``transpose``, ``broadcast_to``/
``expand``, and joining tensors with ``concat`` and ``stack``. Each backward moves the
gradient back to where its values came from.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> y = x.reshape(3, 1) * dt.tensor([[1.0], [10.0], [100.0]])
>>> y.sum().backward()
>>> x.grad
tensor([[  1.,  10., 100.]])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from ... import backend as B
from ..arrays import Array
from ..function import Function, is_tensor
from .operands import Operand, Size, as_tensor, axis_index, one_axis, reduction_axes

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class Reshape(Function):
    """The same values in a new shape: the gradient is reshaped back."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape

    def forward(self, a: Array) -> Array:
        self.in_shape = a.shape
        return a.reshape(self.shape)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g.reshape(self.in_shape),)


def _resolve_shape(shape: Sequence[int], size: int, old: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` worked out from ``size``; an error if it does not fit."""
    shape = tuple(int(n) for n in shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    if len(unknown) > 1:
        raise ValueError(f"reshape: only one dimension can be -1, got {shape}")
    if unknown and known and size % known == 0:
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size or any(n < 0 for n in shape):
        raise ValueError(f"reshape: cannot reshape a tensor of shape {old} ({size} elements) "
                         f"into shape {shape}")
    return shape


def reshape(a: Tensor, *shape: Any) -> Tensor:
    """The same values in a new shape (one dimension may be -1: worked out from the rest).

    >>> import dltutor as dt
    >>> dt.reshape(dt.arange(6), 2, -1).shape
    (2, 3)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    new = _resolve_shape(shape, a.data.size, tuple(a.shape))
    if new == a.shape:
        return a
    return Reshape(new).apply(a)


def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one (``nn.Flatten`` starts at 1).

    >>> import dltutor as dt
    >>> dt.flatten(dt.zeros(2, 3, 4), 1).shape
    (2, 12)
    """
    if a.ndim == 0:
        return reshape(a, 1)
    start, end = axis_index("flatten", start_dim, a.ndim), axis_index("flatten", end_dim, a.ndim)
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = a.shape[:start] + (math.prod(a.shape[start:end + 1]),) + a.shape[end + 1:]
    return reshape(a, shape)


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim`` (e.g. a channel axis for images).

    >>> import dltutor as dt
    >>> dt.unsqueeze(dt.zeros(28, 28), 0).shape
    (1, 28, 28)
    """
    dim = axis_index("unsqueeze", dim, a.ndim, extra=1)
    return reshape(a, a.shape[:dim] + (1,) + a.shape[dim:])


def squeeze(a: Tensor, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (only ``dim`` if given, and only if its size is 1).

    >>> import dltutor as dt
    >>> dt.squeeze(dt.zeros(1, 3, 1)).shape
    (3,)
    """
    if dim is None:
        return reshape(a, tuple(n for n in a.shape if n != 1))
    axes = reduction_axes("squeeze", dim, a.ndim)
    if not axes or a.shape[axes[0]] != 1:      # (a 0-d tensor has no dimension to remove)
        return a
    dim = axes[0]
    return reshape(a, a.shape[:dim] + a.shape[dim + 1:])


class Permute(Function):
    """Dimensions reordered by ``axes``: the gradient goes back by the inverse order."""

    def __init__(self, axes: tuple[int, ...]):
        self.axes = axes

    def forward(self, a: Array) -> Array:
        return get_array_module(a).transpose(a, self.axes)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        inverse = [0] * len(self.axes)
        for i, ax in enumerate(self.axes):
            inverse[ax] = i
        return (get_array_module(g).transpose(g, inverse),)


def permute(a: Tensor, *axes: Size) -> Tensor:
    """Reorder dimensions: ``permute(x, 2, 0, 1)`` makes axis 2 the first.

    >>> import dltutor as dt
    >>> dt.permute(dt.zeros(2, 3, 4), 2, 0, 1).shape
    (4, 2, 3)
    """
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    order = tuple(axis_index("permute", ax, a.ndim) for ax in axes)
    if sorted(order) != list(range(a.ndim)):
        raise ValueError(f"permute: {axes} is not an ordering of the {a.ndim} dimensions of a "
                         f"tensor of shape {tuple(a.shape)}")
    return Permute(order).apply(a)


def transpose(a: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Swap two dimensions (the last two by default); ``t.T`` reverses all of them.

    >>> import dltutor as dt
    >>> dt.transpose(dt.zeros(2, 3)).shape
    (3, 2)
    """
    i, j = axis_index("transpose", dim0, a.ndim), axis_index("transpose", dim1, a.ndim)
    if a.ndim < 2:
        return a
    axes = list(range(a.ndim))
    axes[i], axes[j] = axes[j], axes[i]
    return Permute(tuple(axes)).apply(a)


class BroadcastTo(Function):
    """A read-only broadcast view; its backward hands the gradient to the engine's one
    broadcast reduction."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape

    def forward(self, a: Array) -> Array:
        return get_array_module(a).broadcast_to(a, self.shape)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g,)


def broadcast_to(a: Tensor, shape: Sequence[int]) -> Tensor:
    """Repeat size-1 dimensions (and add leading ones) to reach ``shape`` without copying.

    >>> import dltutor as dt
    >>> dt.broadcast_to(dt.tensor([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    shape = tuple(int(n) for n in shape)
    try:
        get_array_module(a.data).broadcast_shapes(a.shape, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(a.shape)} to "
                         f"{shape}") from None
    if shape == a.shape:
        return a
    return BroadcastTo(shape).apply(a)


def expand(a: Tensor, *sizes: Any) -> Tensor:
    """PyTorch's ``expand``: like :func:`broadcast_to`, and -1 keeps a dimension's size.

    >>> import dltutor as dt
    >>> dt.expand(dt.zeros(3, 1), -1, 4).shape
    (3, 4)
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - a.ndim
    shape = tuple(a.shape[i - lead] if n == -1 else n for i, n in enumerate(sizes))
    return broadcast_to(a, shape)


def _as_tensors(values: Sequence[Operand], op: str) -> list[Tensor]:
    """A list of tensors for ``concat``/``stack`` (numbers and arrays next to the first tensor)."""
    values = list(values)
    if not values:
        raise ValueError(f"{op}: needs at least one tensor")
    like = next((v for v in values if is_tensor(v)), None)
    if like is None:
        raise TypeError(f"{op}: expects a list of tensors")
    return [as_tensor(v, like) for v in values]


class Concat(Function):
    """Tensors joined along ``axis``: each gets its own slice of the gradient."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, *arrays: Array) -> Array:
        self.sizes = [x.shape[self.axis] for x in arrays]
        try:
            return get_array_module(arrays[0]).concatenate(arrays, axis=self.axis)
        except ValueError:
            shapes = ", ".join(str(x.shape) for x in arrays)
            raise ValueError(f"concat along axis {self.axis}: shapes {shapes} must agree in "
                             "every other dimension") from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        grads, start = [], 0
        for size in self.sizes:
            index = [slice(None)] * g.ndim
            index[self.axis] = slice(start, start + size)
            grads.append(g[tuple(index)])
            start += size
        return tuple(grads)


def concat(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis (PyTorch: ``cat``).

    >>> import dltutor as dt
    >>> dt.concat([dt.zeros(2, 3), dt.ones(1, 3)]).shape
    (3, 3)
    """
    tensors = _as_tensors(tensors, "concat")
    for i, t in enumerate(tensors):
        if t.ndim == 0:     # PyTorch refuses it too: a 0-d tensor has no dimension to join along
            raise ValueError(f"concat: the tensor at position {i} is 0-d (a single number) and "
                             "has no dimension to join along; use dt.stack, or unsqueeze it")
    axis = one_axis("concat", axis, dim, tensors[0].ndim)
    return Concat(axis).apply(*tensors)


cat = concat


class Stack(Function):
    """Tensors stacked along a new ``axis``: each gets its own slice of the gradient."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, *arrays: Array) -> Array:
        try:
            return get_array_module(arrays[0]).stack(arrays, axis=self.axis)
        except ValueError:
            shapes = ", ".join(str(x.shape) for x in arrays)
            raise ValueError(f"stack: all tensors must have the same shape, got {shapes}") from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        index: list[slice | int] = [slice(None)] * g.ndim
        grads = []
        for i in range(g.shape[self.axis]):
            index[self.axis] = i
            grads.append(g[tuple(index)])
        return tuple(grads)


def stack(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis.

    >>> import dltutor as dt
    >>> dt.stack([dt.zeros(3), dt.ones(3)]).shape
    (2, 3)
    """
    tensors = _as_tensors(tensors, "stack")
    axis = dim if dim is not None else axis
    return Stack(axis_index("stack", axis, tensors[0].ndim, extra=1)).apply(*tensors)
