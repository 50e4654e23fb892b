"""The op under SyncBatchNorm: batch normalization whose batch is every process's batch.

BatchNorm normalizes each channel with the mean and variance of the batch. Split that batch
over N processes and each sees only its share: its statistics, and so its outputs, differ from
what one process with the whole batch computes. :func:`sync_batch_norm` makes them the same.
The forward pass adds up, over the processes (an all-reduce), what the statistics are made of:
each channel's sum and count of values, which give the mean, then each channel's sum of
squared distances from that mean, which gives the (biased) variance. Backward all-reduces the
two per-channel sums its formula needs (see :class:`SyncBatchNormFunction`).

In one process each all-reduce leaves its array as it was: the op is BatchNorm.

>>> import dltutor as dt, dltutor.distributed as dist
>>> dist.init_process_group("mpi")                    # a world of one
>>> x = dt.tensor([[1.0, 10.0], [3.0, 30.0]])
>>> sync_batch_norm(x, None, None, training=True)     # each column to mean 0, std 1
tensor([[-1.0000, -1.0000],
        [ 1.0000,  1.0000]])
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from ..autograd.function import Function, make_tensor
from ..autograd.ops import batch_norm
from .collectives import all_reduce


def summed_over_processes(array: Any) -> Any:
    """The NumPy array ``array`` added up over every process, in float64 (a count stays exact:
    float32 holds whole numbers only up to 2**24), as a new array.

    >>> import dltutor.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> summed_over_processes(np.array([1.5, 2.0], dtype=np.float32))
    array([1.5, 2. ])
    >>> dist.destroy_process_group()
    """
    total = np.array(array, dtype=np.float64)
    all_reduce(total)
    return total


class SyncBatchNormFunction(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (axis 1), with ``mean``
    and ``var`` taken over the values of every process's ``x``.

    Forward, with ``n`` the number of values per channel in all the processes together::

        mean = all_reduce(sum of x) / n
        var  = all_reduce(sum of (x - mean)**2) / n          (biased, as BatchNorm's)
        xhat = (x - mean) / sqrt(var + eps)

    Backward, for ``g`` the gradient of this process's output (``gxhat = g * weight``)::

        dx      = (gxhat - all_reduce(sum of gxhat) / n
                         - xhat * all_reduce(sum of gxhat * xhat) / n) / sqrt(var + eps)
        dweight = sum of g * xhat        dbias = sum of g        (this process's rows only)

    ``dx`` is BatchNorm's formula with the two sums taken over every process, since each
    process's outputs depend on every process's inputs through the shared statistics: it is
    the gradient, with respect to this process's ``x``, of the sum of the processes' losses.
    ``dweight`` and ``dbias`` are this process's part; DistributedDataParallel then averages
    them (and every gradient upstream) over the processes, as it does for any parameter.
    """

    def __init__(self, eps: float):
        self.eps = eps

    def forward(self, x: Any, w: Any, b: Any) -> Any:
        xp = B.get_array_module(x)
        self.axes = (0,) + tuple(range(2, x.ndim))
        self.channel_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        sum_and_count = summed_over_processes(
            np.append(B.to_numpy(x.sum(axis=self.axes)), x.size // x.shape[1]))
        self.count = float(sum_and_count[-1])
        self.mean = xp.asarray(sum_and_count[:-1] / self.count, dtype=x.dtype)
        centered = x - self.mean.reshape(self.channel_shape)
        squares = summed_over_processes(B.to_numpy((centered * centered).sum(axis=self.axes)))
        self.var = xp.asarray(squares / self.count, dtype=x.dtype)
        self.inv_std = (1 / xp.sqrt(self.var + self.eps)).reshape(self.channel_shape)
        self.xhat = centered * self.inv_std
        self.w = w.reshape(self.channel_shape)
        return self.xhat * self.w + b.reshape(self.channel_shape)

    def backward(self, g: Any) -> tuple[Any, ...]:
        gx = gw = gb = None
        if self.inputs[0].requires_grad:
            xp = B.get_array_module(g)
            gxhat = g * self.w
            both = summed_over_processes(np.concatenate(
                [B.to_numpy(gxhat.sum(axis=self.axes)),
                 B.to_numpy((gxhat * self.xhat).sum(axis=self.axes))]))
            sum_gxhat, sum_gxhat_xhat = (xp.asarray(half, dtype=g.dtype).reshape(
                self.channel_shape) for half in np.split(both, 2))
            gx = (self.inv_std / self.count) * (
                self.count * gxhat - sum_gxhat - self.xhat * sum_gxhat_xhat)
        if self.inputs[1].requires_grad:
            gw = (g * self.xhat).sum(axis=self.axes)
        if self.inputs[2].requires_grad:
            gb = g.sum(axis=self.axes)
        return gx, gw, gb


def sync_batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                    weight: Tensor | None = None, bias: Tensor | None = None,
                    training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``batch_norm`` (same arguments) with the batch statistics of every process's batch.

    ``training=True`` normalizes with the statistics of all the processes' values together
    and, when running buffers are given, updates them with those: the global mean and the
    unbiased global variance (``var * n / (n - 1)``), as BatchNorm does with its batch's.
    ``training=False`` is plain ``batch_norm`` with the running statistics: no collective.

    >>> import dltutor as dt, dltutor.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> rm, rv = dt.zeros(1), dt.ones(1)
    >>> _ = sync_batch_norm(dt.tensor([[1.0], [3.0]]), rm, rv, training=True)
    >>> rm, rv     # moved 10% of the way to the mean 2 and the unbiased variance 2
    (tensor([0.2000]), tensor([1.1000]))
    >>> dist.destroy_process_group()
    """
    if not training:
        return batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    if x.ndim < 2:
        raise ValueError(f"sync_batch_norm: input must be (N, C, ...), got {tuple(x.shape)}")
    xp = B.get_array_module(x.data)
    channels = x.shape[1]
    weight = weight if weight is not None else make_tensor(xp.ones(channels, dtype=x.data.dtype))
    bias = bias if bias is not None else make_tensor(xp.zeros(channels, dtype=x.data.dtype))
    op = SyncBatchNormFunction(eps)
    out = op.apply(x, weight, bias)
    if op.count < 2:
        raise ValueError(f"sync_batch_norm: training needs more than one value per channel over "
                         f"all the processes to compute a variance, got {int(op.count)}")
    if running_mean is not None and running_var is not None:
        unbiased = op.var * (op.count / (op.count - 1))
        running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * op.mean
        running_var.data[...] = (1 - momentum) * running_var.data + momentum * unbiased
    return out
