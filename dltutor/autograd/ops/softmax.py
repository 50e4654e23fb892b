"""``softmax`` and ``log_softmax`` along one axis, and ``logsumexp`` over any axes, all shifted
by the maximum so that inputs such as ``[-1000, 1]`` neither overflow nor take the log of 0.

>>> import dltutor as dt
>>> dt.softmax(dt.tensor([[1.0, 1.0], [0.0, 1000.0]]), dim=1)
tensor([[0.5000, 0.5000],
        [0.0000, 1.0000]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ... import backend as B
from ..arrays import Array
from ..function import Function
from .operands import Axes, one_axis
from .reduce import Reduction, run_reduction

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class Softmax(Function):
    """``softmax(a)`` along ``axis``: the gradient is ``s * (g - sum(g * s))`` with ``s`` the
    kept output (the Jacobian-vector product without building the Jacobian)."""

    grad_shapes_exact = True

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        e = xp.exp(a - a.max(axis=self.axis, keepdims=True))
        self.out = e / e.sum(axis=self.axis, keepdims=True)
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        s = self.out
        return (s * (g - (g * s).sum(axis=self.axis, keepdims=True)),)


def softmax(a: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``exp(a) / sum(exp(a))`` along ``axis``, stable for inputs like ``[-1000, 1]``.

    >>> import dltutor as dt
    >>> dt.softmax(dt.tensor([-1000.0, 1.0]))
    tensor([0., 1.])
    """
    return Softmax(one_axis("softmax", axis, dim, a.ndim)).apply(a)


class LogSoftmax(Function):
    """``log(softmax(a))`` along ``axis``, computed stably: the gradient is
    ``g - softmax(a) * sum(g)``."""

    grad_shapes_exact = True

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        shifted = a - a.max(axis=self.axis, keepdims=True)
        self.out = shifted - xp.log(xp.exp(shifted).sum(axis=self.axis, keepdims=True))
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        return (g - xp.exp(self.out) * g.sum(axis=self.axis, keepdims=True),)


def log_softmax(a: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``log(softmax(a))`` along ``axis``, computed without taking the log of 0.

    >>> import dltutor as dt
    >>> dt.log_softmax(dt.tensor([-1000.0, 1.0]))
    tensor([-1001.,     0.])
    """
    return LogSoftmax(one_axis("log_softmax", axis, dim, a.ndim)).apply(a)


class LogSumExp(Reduction):
    """``log(sum(exp(a)))`` without overflow: shift by the max first."""

    name = "logsumexp"

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        self.shape, self.a = a.shape, a
        if a.size == 0:     # nothing to shift by: the sum of no terms is 0, its log -inf
            shift = xp.zeros(tuple(1 if i in self.axes else n for i, n in enumerate(a.shape)),
                             dtype=a.dtype)
        else:
            shift = a.max(axis=self.axes, keepdims=True)
            shift = xp.where(xp.isfinite(shift), shift, 0)  # all -inf: avoid inf - inf
        with B.ignore_float_errors(a):
            self.out = xp.log(xp.exp(a - shift).sum(axis=self.axes, keepdims=True)) + shift
        return self.finish(self.out)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (self.expand(g) * get_array_module(g).exp(self.a - self.out),)


def logsumexp(a: Tensor, axis: Axes = None, keepdims: bool = False, *, dim: Axes = None,
              keepdim: bool | None = None) -> Tensor:
    """``log(sum(exp(a)))`` over ``axis``, stable for large inputs.

    >>> import dltutor as dt
    >>> dt.logsumexp(dt.tensor([-1000.0, 1.0]))
    tensor(1.)
    """
    return run_reduction(LogSumExp, a, axis, keepdims, dim, keepdim, "logsumexp")
