"""Operators and methods on :class:`Tensor`, each a thin call to the op in ``ops``.

Kept apart from ``tensor.py`` so that file stays about the engine; this one is the menu.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, -2.0]])
>>> (x.T @ x).shape, x.abs().sum().item(), x.relu()
((2, 2), 3.0, tensor([[1., 0.]]))
"""
from __future__ import annotations

import operator
from typing import Any

from . import nn_ops, ops
from .creation import as_dtype
from .ops import Add, Mul
from .tensor import Tensor


def _add(self: Tensor, other: Any) -> Tensor:
    # The hot path of every training loop: skip the generic promotion when it is not needed.
    # (Built-in dtypes are singletons, so ``is`` is a cheap first test; ``add`` does the rest.)
    if isinstance(other, Tensor) and other.data.dtype is self.data.dtype:
        return Add()(self, other)
    return ops.add(self, other)


def _mul(self: Tensor, other: Any) -> Tensor:
    if isinstance(other, Tensor) and other.data.dtype is self.data.dtype:
        return Mul()(self, other)
    return ops.mul(self, other)


def _float(self: Tensor) -> Tensor:
    """The tensor as float32."""
    return ops.cast(self, "float32")


def _double(self: Tensor) -> Tensor:
    """The tensor as float64."""
    return ops.cast(self, "float64")


def _long(self: Tensor) -> Tensor:
    """The tensor as int64 (class labels, indices)."""
    return ops.cast(self, "int64")


def _astype(self: Tensor, dtype: Any) -> Tensor:
    """The tensor converted to ``dtype`` (NumPy's spelling; PyTorch says ``.to(dtype)``)."""
    return ops.cast(self, as_dtype(dtype))


def _view(self: Tensor, *shape: Any) -> Tensor:
    return ops.reshape(self, *shape)


def _setitem(self: Tensor, index: Any, value: Any) -> None:
    from .tensor import is_grad_enabled

    if self.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "assigning into a tensor that requires grad would change values backward needs; "
            "do it inside `with dt.no_grad():` (or use p.set_value(...) for parameters)")
    value = value.data if isinstance(value, Tensor) else value
    self.data[ops._normalise_index(index, self.data)] = value


def _in_place(op: str, compute: Any) -> Any:
    """``t += x`` and friends: change ``t.data`` in place (same object, as in PyTorch).

    Allowed when no graph is being recorded for it (inside ``dt.no_grad()``, or when neither
    side requires grad); otherwise it would overwrite values backward still needs.
    """

    def method(self: Tensor, other: Any) -> Tensor:
        from .tensor import is_grad_enabled

        other_data = other.data if isinstance(other, Tensor) else other
        records = is_grad_enabled() and (
            self.requires_grad or (isinstance(other, Tensor) and other.requires_grad))
        if records:
            raise RuntimeError(
                f"in-place {op} on a tensor in a recorded computation would change values "
                f"backward needs; write `t = t {op[0]} x` instead, or update parameters inside "
                "`with dt.no_grad():`")
        compute(self.data, other_data)
        return self

    return method


def _all(self: Tensor) -> bool:
    return bool(self.data.all())


def _any(self: Tensor) -> bool:
    return bool(self.data.any())


_METHODS = {
    # arithmetic operators
    "__add__": _add,
    "__radd__": lambda self, other: ops.add(other, self),
    "__sub__": lambda self, other: ops.sub(self, other),
    "__rsub__": lambda self, other: ops.sub(other, self),
    "__mul__": _mul,
    "__rmul__": lambda self, other: ops.mul(other, self),
    "__truediv__": lambda self, other: ops.div(self, other),
    "__rtruediv__": lambda self, other: ops.div(other, self),
    "__pow__": lambda self, other: ops.pow(self, other),
    "__rpow__": lambda self, other: ops.pow(ops.lift(other, self), self),
    "__matmul__": lambda self, other: ops.matmul(self, other),
    "__rmatmul__": lambda self, other: ops.matmul(other, self),
    "__iadd__": _in_place("+=", operator.iadd),
    "__isub__": _in_place("-=", operator.isub),
    "__imul__": _in_place("*=", operator.imul),
    "__itruediv__": _in_place("/=", operator.itruediv),
    "__neg__": ops.neg,
    "__pos__": lambda self: self,
    "__abs__": ops.abs,
    "__getitem__": ops.getitem,
    "__setitem__": _setitem,
    # comparisons give boolean tensors without gradients
    "__lt__": lambda self, other: ops._compare(self, other, "__lt__"),
    "__le__": lambda self, other: ops._compare(self, other, "__le__"),
    "__gt__": lambda self, other: ops._compare(self, other, "__gt__"),
    "__ge__": lambda self, other: ops._compare(self, other, "__ge__"),
    "__eq__": lambda self, other: ops._compare(self, other, "__eq__"),
    "__ne__": lambda self, other: ops._compare(self, other, "__ne__"),
    # elementwise
    "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "abs": ops.abs, "tanh": ops.tanh,
    "sigmoid": ops.sigmoid, "relu": ops.relu, "leaky_relu": ops.leaky_relu, "clip": ops.clip,
    "clamp": ops.clip, "pow": ops.pow, "maximum": ops.maximum, "minimum": ops.minimum,
    # reductions
    "sum": ops.sum, "mean": ops.mean, "max": ops.max, "min": ops.min, "var": ops.var,
    "std": ops.std, "logsumexp": ops.logsumexp, "argmax": ops.argmax, "argmin": ops.argmin,
    "softmax": ops.softmax, "log_softmax": ops.log_softmax, "all": _all, "any": _any,
    # shapes
    "reshape": ops.reshape, "view": _view, "flatten": ops.flatten, "permute": ops.permute,
    "transpose": ops.transpose, "unsqueeze": ops.unsqueeze, "squeeze": ops.squeeze,
    "expand": ops.expand, "broadcast_to": ops.broadcast_to, "matmul": ops.matmul,
    # types
    "float": _float, "double": _double, "long": _long, "astype": _astype,
}

for _name, _func in _METHODS.items():
    setattr(Tensor, _name, _func)

Tensor.T = property(lambda self: ops.permute(self, tuple(reversed(range(self.ndim)))),
                    doc="The tensor with its dimensions reversed (the transpose of a matrix).")

__all__ = ["nn_ops"]
