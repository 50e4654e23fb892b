"""Type and device changes and copies: ``t.float()``, ``dt.cast(t, dtype)``, ``t.to("gpu")``,
``t.clone()``.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0], requires_grad=True)
>>> (cast(x, dt.float64) * 2).sum().backward()
>>> x.grad, x.grad.dtype                  # the gradient flows back, in x's own dtype
(tensor([2., 2.]), dtype('float32'))
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import DTypeLike

from ... import backend as B
from ..arrays import Array
from ..dtypes import as_dtype
from ..function import Function

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor


class Cast(Function):
    """A dtype change; the gradient goes back in the input's dtype (none for integers)."""

    def __init__(self, dtype: np.dtype | None):
        self.dtype = dtype

    def forward(self, a: Array) -> Array:
        self.in_dtype = a.dtype
        return a.astype(self.dtype)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g.astype(self.in_dtype) if self.in_dtype.kind in "fc" else None,)


def cast(a: Tensor, dtype: DTypeLike) -> Tensor:
    """The tensor converted to ``dtype``; gradients flow back for float to float casts.

    >>> import dltutor as dt
    >>> dt.cast(dt.tensor([1, 2]), dt.float32)
    tensor([1., 2.])
    """
    target = as_dtype(dtype)
    if a.data.dtype == target:
        return a
    return Cast(target).apply(a)


class ToBackend(Function):
    """A move to another backend (device); the gradient moves back."""

    def __init__(self, target: B.Backend):
        self.target = target

    def forward(self, a: Array) -> Array:
        self.source = B.backend_of(a) or B.NUMPY   # (an op's array always has one)
        return self.target.asarray(a)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (self.source.asarray(g),)


def to_backend(a: Tensor, target: B.Backend) -> Tensor:
    """The tensor moved to ``target``'s device (itself when already there).

    >>> import dltutor as dt
    >>> x = dt.ones(2)
    >>> to_backend(x, B.NUMPY) is x
    True
    """
    if B.backend_of(a.data) is target:
        return a
    return ToBackend(target).apply(a)


class Clone(Function):
    """A copy in new memory; the gradient passes through unchanged."""

    def forward(self, a: Array) -> Array:
        return a.copy()

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g,)


def clone(a: Tensor) -> Tensor:
    """A copy of the tensor in its own memory, still in the graph (PyTorch's ``clone``).

    ``t.detach().clone()`` is the usual way to keep the values of a parameter as they are now:
    ``detach()`` alone shares memory, so an in-place update would change the kept values too.

    >>> import dltutor as dt
    >>> w = dt.tensor([1.0, 2.0], requires_grad=True)
    >>> kept = w.detach().clone()
    >>> with dt.no_grad():
    ...     w -= 1.0
    >>> kept, w.detach()
    (tensor([1., 2.]), tensor([0., 1.]))
    >>> (w.clone() * 3).sum().backward()         # the gradient flows through a clone
    >>> w.grad
    tensor([3., 3.])
    """
    return Clone().apply(a)
