"""Normalisation: ``batch_norm`` (per channel, over the batch; with running statistics) and
``layer_norm`` (per sample, over its last dimensions).

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 10.0], [3.0, 30.0]])
>>> batch_norm(x, None, None, training=True)          # each column to mean 0, std 1
tensor([[-1.0000, -1.0000],
        [ 1.0000,  1.0000]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ... import backend as B
from ..arrays import Array
from ..dtypes import float16, float32
from ..function import Function, make_tensor
from .convert import cast
from .elementwise import sqrt
from .operands import Size
from .reduce import mean
from .variance import var

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class BatchNorm(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (axis 1).

    Without ``running`` statistics the mean and (biased) variance come from the batch and the
    gradient flows through them; otherwise ``running`` (mean, var) are constants.
    """

    def __init__(self, eps: float, running: tuple[Array, Array] | None = None):
        self.eps, self.running, self.use_batch_stats = eps, running, running is None

    def forward(self, x: Array, w: Array, b: Array) -> Array:
        xp = get_array_module(x)
        self.axes = (0,) + tuple(range(2, x.ndim))
        shape = [1] * x.ndim
        shape[1] = x.shape[1]
        self.channel_shape = tuple(shape)
        if self.running is None:
            self.mean = x.mean(axis=self.axes, keepdims=True)
            self.var = x.var(axis=self.axes, keepdims=True)
        else:  # running statistics, in the input's dtype
            running_mean, running_var = self.running
            self.mean = running_mean.reshape(self.channel_shape).astype(x.dtype, copy=False)
            self.var = running_var.reshape(self.channel_shape).astype(x.dtype, copy=False)
        self.inv_std = 1 / xp.sqrt(self.var + self.eps)
        self.xhat = (x - self.mean) * self.inv_std
        self.w = w.reshape(self.channel_shape)
        return self.xhat * self.w + b.reshape(self.channel_shape)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        inputs = self.inputs
        gxhat = g * self.w
        gx = gw = gb = None
        if inputs[0].requires_grad:
            if self.use_batch_stats:
                count = g.size // g.shape[1]
                gx = (self.inv_std / count) * (
                    count * gxhat - gxhat.sum(axis=self.axes, keepdims=True)
                    - self.xhat * (gxhat * self.xhat).sum(axis=self.axes, keepdims=True))
            else:
                gx = gxhat * self.inv_std
        if inputs[1].requires_grad:
            gw = (g * self.xhat).sum(axis=self.axes)
        if inputs[2].requires_grad:
            gb = g.sum(axis=self.axes)
        return gx, gw, gb


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (axis 1) of ``x`` (N, C) or (N, C, H, W).

    ``training=True`` uses the batch's statistics and, when running buffers are given, updates
    them in place: ``running = (1 - momentum) * running + momentum * batch`` (PyTorch's
    convention), with the unbiased batch variance. ``training=False`` uses the running buffers.

    >>> import dltutor as dt
    >>> x = dt.tensor([[1.0], [3.0]])
    >>> rm, rv = dt.zeros(1), dt.ones(1)
    >>> batch_norm(x, rm, rv, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> rm, rv     # moved 10% of the way to the batch mean 2 and unbiased variance 2
    (tensor([0.2000]), tensor([1.1000]))
    """
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input must be (N, C, ...), got {tuple(x.shape)}")
    channels = x.shape[1]
    xp = get_array_module(x.data)
    if weight is None:
        weight = make_tensor(xp.ones(channels, dtype=x.data.dtype))
    if bias is None:
        bias = make_tensor(xp.zeros(channels, dtype=x.data.dtype))
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.shape != (channels,):
            raise ValueError(f"batch_norm: {name} has shape {tuple(t.shape)} but the input has "
                             f"{channels} channels (shape {tuple(x.shape)})")
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False needs running_mean and running_var")
        op = BatchNorm(eps, (running_mean.data, running_var.data))
        return op.apply(x, weight, bias)
    count = x.data.size // channels
    if count < 2:
        raise ValueError(f"batch_norm: training needs more than one value per channel to compute "
                         f"a variance, got input shape {tuple(x.shape)}")
    op = BatchNorm(eps)
    out = op.apply(x, weight, bias)
    if running_mean is not None and running_var is not None:
        batch_mean = op.mean.reshape(channels)
        batch_var = op.var.reshape(channels) * (count / (count - 1))
        running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * batch_mean
        running_var.data[...] = (1 - momentum) * running_var.data + momentum * batch_var
    return out


def layer_norm(x: Tensor, normalized_shape: Size, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions of each sample.

    >>> import dltutor as dt
    >>> y = layer_norm(dt.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 4) for v in y.tolist()[0]]
    [-1.0, 1.0]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ValueError(f"layer_norm: the last dimensions of the input {tuple(x.shape)} must be "
                         f"{shape}")
    if x.dtype == float16:
        # In float32 and rounded once at the end, as PyTorch's forward: in float16 the mean and
        # the variance lose the digits the gradient needs (it was 35% off for two close values).
        weight32, bias32 = (None if t is None else cast(t, float32) for t in (weight, bias))
        return cast(layer_norm(cast(x, float32), shape, weight32, bias32, eps), float16)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    centered = x - mean(x, axes, keepdims=True)
    out = centered / sqrt(var(x, axes, keepdims=True, correction=0) + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out
