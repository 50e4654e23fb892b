"""SyncBatchNorm: BatchNorm whose batch statistics come from every process's batch.

In data-parallel training each process normalizes its own share of the batch. BatchNorm then
uses that share's mean and variance: with a small share they are noisy, they differ from one
process to the next, and each process's running statistics drift apart from the others'.
SyncBatchNorm (PyTorch's ``torch.nn.SyncBatchNorm``) takes the statistics over the values of
all the processes together (a few all-reduces per layer, forward and backward), so N processes
with batch B normalize, and update the running statistics, exactly as one process with batch
N x B would. In evaluation it is BatchNorm: the running statistics, no collective.
(PyTorch's syncs only CUDA tensors and refuses CPU ones in training; this one runs on the
CPU over MPI, and a GPU's arrays travel through the host.)

Turn a model's BatchNorm layers into SyncBatchNorm before wrapping it in
DistributedDataParallel; their parameters and buffers stay the same objects:

>>> import dltutor as dt, dltutor.distributed as dist
>>> from dltutor import nn
>>> dist.init_process_group("mpi")                       # one process here
>>> model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU())
>>> weight = model[1].weight
>>> model = SyncBatchNorm.convert_sync_batchnorm(model)
>>> model[1]
SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> model[1].weight is weight
True
>>> model(dt.randn(8, 3)).shape
(8, 4)
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from ..autograd import Tensor
from ..nn import BatchNorm1d, BatchNorm2d, Module
from ..nn.normalization import BatchNormBase
from .process_group import is_initialized
from .sync_norm_op import sync_batch_norm


class SyncBatchNorm(BatchNormBase):
    """Batch normalization over the batches of all the processes, of inputs (N, C, ...) with
    C channels on axis 1 (BatchNorm1d's and BatchNorm2d's arguments and buffers).

    >>> import dltutor as dt, dltutor.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> bn = SyncBatchNorm(2)
    >>> y = bn(dt.tensor([[1.0, 5.0], [3.0, 9.0]]))
    >>> bn.running_mean                 # 10% of the way to the mean [2, 7] of every process
    tensor([0.2000, 0.7000])
    >>> dist.destroy_process_group()
    """

    ranks = (2, 3, 4, 5)

    def normalize(self, x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                  batch_stats: bool) -> Tensor:
        """In training, with the statistics of every process's batch (:func:`sync_batch_norm`).
        In evaluation, BatchNorm's own, with no collective even where it takes the batch's
        statistics (``use_global_stats=False``), as PyTorch's syncs only in training: the
        processes may evaluate different numbers of batches, and a collective that only some
        of them reach waits forever. Before ``init_process_group`` (a notebook's single
        process) it is BatchNorm, as PyTorch's is."""
        if not self.training or not is_initialized():
            return super().normalize(x, running_mean, running_var, batch_stats)
        return sync_batch_norm(x, running_mean, running_var, self.weight, self.bias,
                               training=batch_stats, momentum=self._momentum(), eps=self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module) -> Module:
        """``module`` with every BatchNorm1d and BatchNorm2d in it (itself included) replaced by
        a SyncBatchNorm with the same settings, the same parameter and buffer objects (an
        optimizer made before still updates them) and the same train/eval mode. Returns the
        module (a new one when ``module`` itself was a BatchNorm).

        >>> from dltutor import nn
        >>> net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, momentum=0.5).eval())
        >>> net = SyncBatchNorm.convert_sync_batchnorm(net)
        >>> type(net[1]).__name__, net[1].momentum, net[1].training
        ('SyncBatchNorm', 0.5, False)
        """
        if isinstance(module, (BatchNorm1d, BatchNorm2d)):
            return cls.from_batchnorm(module)
        for name, child in list(module.named_children()):
            converted = cls.convert_sync_batchnorm(child)
            if converted is not child:
                module.add_module(name, converted)
        return module

    @classmethod
    def from_batchnorm(cls, batchnorm: BatchNormBase) -> "SyncBatchNorm":
        """A SyncBatchNorm that takes over ``batchnorm``'s settings, parameters and buffers."""
        sync = cls(batchnorm.num_features, eps=batchnorm.eps, momentum=batchnorm.momentum,
                   affine=batchnorm.affine, use_global_stats=batchnorm.use_global_stats)
        if batchnorm.affine:
            sync.weight, sync.bias = batchnorm.weight, batchnorm.bias
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            sync.register_buffer(name, getattr(batchnorm, name))
        sync.train(batchnorm.training)
        return sync


__all__ = ["SyncBatchNorm"]
