"""Matrix products: ``a @ b`` (batched, broadcasting, NumPy's rules for 1-D operands) and a
fully connected layer's ``x @ w.T + b`` as one op.

>>> import dltutor as dt
>>> w = dt.tensor([[1.0, 2.0]], requires_grad=True)
>>> x = dt.tensor([[3.0, 4.0], [5.0, 6.0]])
>>> dt.linear(x, w).sum().backward()
>>> w.grad                            # the inputs summed over the batch
tensor([[ 8., 10.]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ... import backend as B
from ..arrays import Array
from ..function import Function
from .operands import Operand, promote

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class Matmul(Function):
    """Batched, broadcasting matrix product with NumPy's rules for 1-D operands."""

    def forward(self, a: Array, b: Array) -> Array:
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: operands must have at least 1 dimension, got shapes "
                             f"{a.shape} and {b.shape}; use * for scalars")
        ka = a.shape[-1]
        kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if ka != kb:
            raise ValueError(f"matmul: {a.shape} @ {b.shape}: inner dimensions {ka} and {kb} "
                             "differ")
        self.a, self.b = a, b
        try:
            return a @ b
        except ValueError:
            raise ValueError(f"matmul: {a.shape} @ {b.shape}: batch dimensions "
                             f"{a.shape[:-2]} and {b.shape[:-2]} do not broadcast") from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        ta, tb = self.inputs
        a, b = self.a, self.b
        xp = get_array_module(g)
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if ta.requires_grad else None, g * a if tb.requires_grad else None)
        if a.ndim == 1:                     # (k,) @ (..., k, n) -> (..., n)
            g2 = g[..., None, :]
            ga = (g2 @ xp.swapaxes(b, -1, -2))[..., 0, :] if ta.requires_grad else None
            gb = a[:, None] * g2 if tb.requires_grad else None
            return ga, gb
        if b.ndim == 1:                     # (..., m, k) @ (k,) -> (..., m)
            g2 = g[..., :, None]
            ga = g2 * b if ta.requires_grad else None
            gb = (xp.swapaxes(a, -1, -2) @ g2)[..., 0] if tb.requires_grad else None
            return ga, gb
        ga = g @ xp.swapaxes(b, -1, -2) if ta.requires_grad else None
        gb = xp.swapaxes(a, -1, -2) @ g if tb.requires_grad else None
        return ga, gb


def matmul(a: Operand, b: Operand) -> Tensor:
    """Matrix product ``a @ b``; leading (batch) dimensions broadcast, 1-D operands work.

    >>> import dltutor as dt
    >>> (dt.ones(5, 2, 3) @ dt.ones(3, 4)).shape
    (5, 2, 4)
    """
    a, b = promote(a, b, "matmul")
    return Matmul().apply(a, b)


class Linear(Function):
    """``x @ w.T + b`` in one op (weight shaped (out, in) as in PyTorch). ``b`` is usually a
    vector of ``out`` numbers; any shape that broadcasts, (1, out) or (), works, as in PyTorch
    (forward then says its gradient shapes are not exact, and the engine sums ``b``'s back)."""

    grad_shapes_exact = True

    def forward(self, x: Array, w: Array, b: Array | None = None) -> Array:
        if x.shape[-1:] != w.shape[1:]:     # (slices: a 0-d input has no last dimension)
            features = x.shape[-1] if x.ndim else "no"
            raise ValueError(f"linear: input of shape {x.shape} has {features} features but "
                             f"the weight of shape {w.shape} expects {w.shape[1]} (in its last "
                             "dimension)")
        self.x, self.w = x, w
        out = x @ w.T
        if b is None:
            return out
        if b.shape != out.shape[-1:]:   # (1, out), () ...: broadcast; the engine sums back
            self.grad_shapes_exact = False
            _check_bias_fits(b.shape, out.shape)
        out += b  # ``out`` is a fresh array, so adding in place is safe
        return out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        x, w = self.x, self.w
        inputs = self.inputs
        gx = g @ w if inputs[0].requires_grad else None
        gw = gb = None
        if inputs[1].requires_grad:
            if x.ndim == 2:
                gw = g.T @ x
            else:
                gw = g.reshape(-1, g.shape[-1]).T @ x.reshape(-1, x.shape[-1])
        if len(inputs) == 3 and inputs[2].requires_grad:
            if self.grad_shapes_exact:    # a vector bias: summed over every axis but the last
                gb = g.sum(axis=0) if g.ndim == 2 else g.sum(axis=tuple(range(g.ndim - 1)))
            else:                         # a bias that broadcast otherwise: the engine reduces g
                gb = g
        return gx, gw, gb


def _check_bias_fits(bias_shape: tuple, out_shape: tuple) -> None:
    """Refuse a bias that would make the output larger than ``x @ w.T`` (PyTorch's linear
    refuses it too), or that does not broadcast against it at all."""
    fits = len(bias_shape) <= len(out_shape) and all(
        b in (1, o) for b, o in zip(bias_shape[::-1], out_shape[::-1]))
    if not fits:
        raise ValueError(f"linear: a bias of shape {bias_shape} does not fit the output of shape "
                         f"{out_shape}: give it one number per output feature, shape "
                         f"({out_shape[-1]},)")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """A fully connected layer's arithmetic: ``x @ weight.T + bias``.

    >>> import dltutor as dt
    >>> dt.linear(dt.ones(2, 3), dt.ones(4, 3), dt.zeros(4)).shape
    (2, 4)
    """
    if bias is None:
        return Linear().apply(x, weight)
    return Linear().apply(x, weight, bias)
