"""``softmax`` and ``log_softmax`` along one axis, both shifted by the maximum so that inputs
such as ``[-1000, 1]`` neither overflow nor take the log of 0.

>>> import dltutor as dt
>>> dt.softmax(dt.tensor([[1.0, 1.0], [0.0, 1000.0]]), dim=1)
tensor([[0.5000, 0.5000],
        [0.0000, 1.0000]])
"""
from __future__ import annotations

from typing import Any

from ... import backend as B
from ..arrays import Array
from ..function import Function
from .operands import one_axis

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


def softmax(a: Any, axis: int = -1, *, dim: int | None = None) -> Any:
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


def log_softmax(a: Any, axis: int = -1, *, dim: int | None = None) -> Any:
    """``log(softmax(a))`` along ``axis``, computed without taking the log of 0.

    >>> import dltutor as dt
    >>> dt.log_softmax(dt.tensor([-1000.0, 1.0]))
    tensor([-1001.,     0.])
    """
    return LogSoftmax(one_axis("log_softmax", axis, dim, a.ndim)).apply(a)
