"""The spread of values: ``var`` and ``std`` over any axes, with PyTorch's ``correction``
(1, unbiased, by default). ``std`` is its own op, not ``sqrt(var)``: where every value is the
same its gradient is 0, as PyTorch's, where sqrt's would be NaN.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 3.0], [2.0, 2.0]], requires_grad=True)
>>> x.std(dim=1).sum().backward()
>>> x.grad                            # the equal row gets 0, not NaN
tensor([[-0.7071,  0.7071],
        [ 0.0000,  0.0000]])
"""
from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING

from ... import backend as B
from ..arrays import Array
from .gates import gate
from .reduce import Reduction, mean_over, run_reduction
from .operands import Axes

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class Var(Reduction):
    """Variance with ``correction`` (1: unbiased, PyTorch's default; 0: population)."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool, correction: int):
        super().__init__(axes, keepdims)
        self.correction = correction

    def forward(self, a: Array) -> Array:
        return self.finish(self.variance_of(a))

    def variance_of(self, a):
        """The variance, reduced axes kept as size 1; keeps what :meth:`gradient_from` needs."""
        self.shape = a.shape
        count = math.prod(a.shape[i] for i in self.axes)
        self.denominator = builtins.max(count - self.correction, 0)
        self.centered = a - mean_over(a, self.axes, count)
        squares = (self.centered * self.centered).sum(axis=self.axes, keepdims=True)
        with B.ignore_float_errors(a):      # no degrees of freedom left: NaN, as in PyTorch
            return squares / self.denominator

    def gradient_from(self, g_var):
        """The input's gradient given ``g_var``, the variance's (reduced axes as size 1):
        ``g_var * 2 / (n - correction) * (a - mean)``. With no degrees of freedom left
        (one value, correction 1) the variance is NaN and so is this, as in PyTorch (the
        factor is inf, not Python's ZeroDivisionError)."""
        scale = 2 / self.denominator if self.denominator else math.inf
        return g_var * scale * self.centered

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (self.gradient_from(self.expand(g)),)


class Std(Var):
    """Standard deviation, the square root of :class:`Var`'s result. Its gradient is
    ``g / (2 * std)`` passed to the variance's, and 0 where the std is 0 (all values equal),
    as in PyTorch: ``sqrt``'s inf times the variance's zeros would be NaN there."""

    def forward(self, a: Array) -> Array:
        self.std = get_array_module(a).sqrt(self.variance_of(a))
        return self.finish(self.std)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (self.gradient_from(gate(self.expand(g) / (2 * self.std), self.std != 0)),)


def var(a: Tensor, axis: Axes = None, keepdims: bool = False, correction: int = 1, *,
        dim: Axes = None, keepdim: bool | None = None, unbiased: bool | None = None) -> Tensor:
    """Variance over ``axis``; unbiased (divides by n - 1) by default, as in PyTorch.

    >>> import dltutor as dt
    >>> x = dt.tensor([1.0, 2.0, 3.0, 4.0])
    >>> dt.var(x), dt.var(x, correction=0)
    (tensor(1.6667), tensor(1.2500))
    """
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return run_reduction(Var, a, axis, keepdims, dim, keepdim, "var", correction=correction)


def std(a: Tensor, axis: Axes = None, keepdims: bool = False, correction: int = 1, *,
        dim: Axes = None, keepdim: bool | None = None, unbiased: bool | None = None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments.

    >>> import dltutor as dt
    >>> dt.std(dt.tensor([1.0, 3.0]))
    tensor(1.4142)
    """
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return run_reduction(Std, a, axis, keepdims, dim, keepdim, "std", correction=correction)
