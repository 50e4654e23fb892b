"""Picking elements out: ``t[index]`` with everything NumPy accepts, and the embedding lookup
(``weight[indices]`` for a table of word vectors). When an element is picked more than once,
the gradients of its copies add up. Also where the largest or smallest element is:
``argmax``/``argmin``, whose integer indices carry no gradient.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> x[[0, 0, 2]].sum().backward()
>>> x.grad
tensor([2., 0., 1.])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import backend as B
from ..arrays import Array
from ..dtypes import int64
from ..function import Function, is_tensor, make_tensor
from .operands import Axes, Operand, as_tensor, axis_index

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


def _is_basic(index: tuple) -> bool:
    """Basic indexing (ints, slices, None, ...) never repeats an element."""
    return all(isinstance(i, (int, slice)) or i is None or i is Ellipsis for i in index)


def index_arrays(index: Any, like: Array) -> tuple:
    """``index`` as a tuple NumPy/CuPy can use on ``like``: tensors become their arrays,
    lists become arrays of ``like``'s backend, 0-d integer arrays become ints."""
    if not isinstance(index, tuple):
        index = (index,)
    backend = B.backend_of(like) or B.current()
    out = []
    for i in index:
        if is_tensor(i):
            i = i.data
        elif isinstance(i, list):
            i = backend.asarray(i)
        if hasattr(i, "dtype") and getattr(i, "ndim", 1) == 0 and i.dtype.kind in "iu":
            i = int(i)
        out.append(i)
    return tuple(out)


class GetItem(Function):
    """``a[index]``; backward puts the gradient back where the values came from."""

    name = "getitem"

    def __init__(self, index: tuple):
        self.index = index

    def forward(self, a: Array) -> Array:
        self.shape, self.dtype = a.shape, a.dtype
        try:
            return a[self.index]
        except IndexError as exc:
            raise IndexError(f"indexing a tensor of shape {a.shape}: {exc}") from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        full = xp.zeros(self.shape, dtype=g.dtype)
        if _is_basic(self.index):
            full[self.index] = g
        else:  # integer arrays may repeat an element: their gradients must add up
            B.scatter_add(full, self.index, g)
        return (full,)


def getitem(a: Tensor, index: Any) -> Tensor:
    """``a[index]`` with everything NumPy accepts: ints, slices, integer arrays, boolean masks.

    >>> import dltutor as dt
    >>> dt.getitem(dt.tensor([[1.0, 2.0], [3.0, 4.0]]), (slice(None), 1))
    tensor([2., 4.])
    """
    return GetItem(index_arrays(index, a.data)).apply(a)


class Embedding(Function):
    """Rows of a table; a row looked up twice gets the sum of both gradients."""

    def __init__(self, indices: Array, padding_idx: int | None):
        self.indices, self.padding_idx = indices, padding_idx

    def forward(self, weight: Array) -> Array:
        self.table_shape = weight.shape
        return weight[self.indices]

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        grad = xp.zeros(self.table_shape, dtype=g.dtype)
        B.scatter_add(grad, self.indices, g)
        if self.padding_idx is not None:
            grad[self.padding_idx] = 0
        return (grad,)


def embedding(indices: Operand, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Look up rows of ``weight`` (num_embeddings, dim) for integer ``indices`` of any shape.

    The row at ``padding_idx`` receives no gradient.

    >>> import dltutor as dt
    >>> table = dt.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> embedding(dt.tensor([[2, 1]]), table)
    tensor([[[3., 4.],
             [1., 2.]]])
    """
    data = indices.data if is_tensor(indices) else as_tensor(indices, weight).data
    if data.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got {data.dtype}")
    rows = weight.shape[0]
    # A negative index would silently pick a row from the end: PyTorch refuses it, and so do we.
    if data.size and (int(data.min()) < 0 or int(data.max()) >= rows):
        bad = int(data.max()) if int(data.max()) >= rows else int(data.min())
        raise IndexError(f"embedding: index {bad} is out of range for a table of {rows} rows "
                         f"(valid: 0..{rows - 1})")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += rows
    return Embedding(data, padding_idx).apply(weight)


def _index_of_extreme(op: str, a: Tensor, axis: Axes, keepdims: bool, dim: Axes,
                      keepdim: bool | None) -> Tensor:
    """``argmax``/``argmin``: the index as an int64 tensor (``dim``/``keepdim`` are PyTorch's
    spellings of ``axis``/``keepdims``)."""
    axis = dim if dim is not None else axis
    keepdims = keepdim if keepdim is not None else keepdims
    if axis is not None:
        axis = axis_index(op, axis, a.ndim)
    index = getattr(a.data, op)(axis=axis, keepdims=keepdims)   # a NumPy scalar when 0-d
    return make_tensor(get_array_module(a.data).asarray(index, dtype=int64))


def argmax(a: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    """Index of the largest value (over the flattened tensor when ``axis`` is None).

    >>> import dltutor as dt
    >>> dt.argmax(dt.tensor([[1.0, 9.0], [8.0, 2.0]]), axis=1)
    tensor([1, 0])
    """
    return _index_of_extreme("argmax", a, axis, keepdims, dim, keepdim)


def argmin(a: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    """Index of the smallest value (over the flattened tensor when ``axis`` is None).

    >>> import dltutor as dt
    >>> dt.argmin(dt.tensor([3.0, 1.0, 2.0]))
    tensor(1)
    """
    return _index_of_extreme("argmin", a, axis, keepdims, dim, keepdim)
