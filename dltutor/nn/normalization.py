"""Normalization layers: BatchNorm1d/BatchNorm2d (per channel, over the batch, with running
statistics in buffers) and LayerNorm (per sample).

>>> import dltutor as dt
>>> bn = BatchNorm1d(2)
>>> list(bn.state_dict())
['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
"""
from __future__ import annotations

from typing import Any

from .. import autograd as ag
from .. import checks
from ..autograd import Tensor, no_grad
from . import functional as F
from .layers import float_input
from .module import Module
from .parameter import Parameter


class BatchNormBase(Module):
    """Shared by BatchNorm1d, BatchNorm2d and distributed.SyncBatchNorm; subclasses say which
    input ranks they accept (SyncBatchNorm also how to normalize: :meth:`normalize`)."""

    ranks: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, use_global_stats: bool | None = None):
        super().__init__()
        owner = type(self).__name__
        checks.integer(owner, "num_features", num_features, minimum=1)
        checks.positive(owner, "eps", eps)
        if momentum is not None:       # None: a cumulative average of every batch (PyTorch)
            checks.between(owner, "momentum", momentum, 0, 1)
        if use_global_stats not in (None, True, False):
            raise TypeError(f"{owner}: use_global_stats must be None, True or False, got "
                            f"{use_global_stats!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.use_global_stats = bool(affine), use_global_stats
        if affine:
            self.weight = Parameter(ag.ones(num_features))
            self.bias = Parameter(ag.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", ag.zeros(num_features))
        self.register_buffer("running_var", ag.ones(num_features))
        self.register_buffer("num_batches_tracked", ag.tensor(0))

    def _momentum(self) -> float:
        """The weight of this batch in the running statistics: ``momentum``, or with
        ``momentum=None`` 1 / (batches seen, this one included): a plain average of them all."""
        if self.momentum is not None:
            return self.momentum
        return 1.0 / (int(self.num_batches_tracked.item()) + 1)

    def uses_batch_stats(self) -> bool:
        """True when this forward normalizes with the batch's own mean and variance.

        ``use_global_stats``: None follows train()/eval(); True always uses (and never updates)
        the running statistics; False always uses the batch's.
        """
        if self.use_global_stats is None:
            return self.training
        return not self.use_global_stats

    def forward(self, x: Tensor) -> Tensor:
        float_input(self, x)
        if x.ndim not in self.ranks or x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}) expects input of rank "
                             f"{' or '.join(map(str, self.ranks))} with {self.num_features} "
                             f"channels on axis 1, got shape {tuple(x.shape)}")
        batch_stats = self.uses_batch_stats()
        update = batch_stats and self.training
        out = self.normalize(x, self.running_mean if (update or not batch_stats) else None,
                             self.running_var if (update or not batch_stats) else None,
                             batch_stats)
        if update:      # counted only once batch_norm accepted the batch (a batch of 1 is not)
            with no_grad():
                self.num_batches_tracked.data[...] = self.num_batches_tracked.data + 1
        return out

    def normalize(self, x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                  batch_stats: bool) -> Tensor:
        """``F.batch_norm`` with this layer's parameters and settings: with the batch's
        statistics when ``batch_stats`` (updating the running buffers given), else with the
        running ones. (SyncBatchNorm takes the batch's over every process.)"""
        return F.batch_norm(x, running_mean, running_var, self.weight, self.bias,
                            training=batch_stats, momentum=self._momentum(), eps=self.eps)

    def extra_repr(self) -> str:
        # PyTorch's fields in PyTorch's order; dltutor's BatchNorm always keeps running statistics.
        text = (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, track_running_stats=True")
        if self.use_global_stats is not None:
            text += f", use_global_stats={self.use_global_stats}"
        return text


class BatchNorm1d(BatchNormBase):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C.

    >>> import dltutor as dt
    >>> bn = BatchNorm1d(2)
    >>> y = bn(dt.tensor([[1.0, 5.0], [3.0, 9.0]]))
    >>> bn.running_mean                 # 10% of the way to the batch mean [2, 7]
    tensor([0.2000, 0.7000])
    """

    ranks = (2, 3)


class BatchNorm2d(BatchNormBase):
    """Batch normalization of (N, C, H, W) images, per channel C.

    >>> import dltutor as dt
    >>> BatchNorm2d(3)(dt.randn(4, 3, 5, 5)).shape
    (4, 3, 5, 5)
    """

    ranks = (4,)


class LayerNorm(Module):
    """Normalize each sample over its last dimensions (no batch statistics, no buffers).

    >>> import dltutor as dt
    >>> LayerNorm(4)(dt.randn(2, 4)).shape
    (2, 4)
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = bool(elementwise_affine)
        if elementwise_affine:
            self.weight = Parameter(ag.ones(*shape))
            self.bias = Parameter(ag.zeros(*shape))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]
