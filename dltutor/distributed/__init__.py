"""Data-parallel training over MPI, with PyTorch's names (``torch.distributed``).

Run the same program in N processes, ``mpiexec -n 4 python train.py``, and in it::

    import dltutor.distributed as dist
    dist.init_process_group("mpi")
    model = dist.SyncBatchNorm.convert_sync_batchnorm(model)   # (optional, see below)
    model = dist.DistributedDataParallel(model)            # replicas start equal
    opt = dist.ZeroRedundancyOptimizer(model.parameters(), optim.Adam, lr=1e-3)  # (optional)
    sampler = dist.DistributedSampler(dataset)             # each process its share
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            ...                                            # backward averages the gradients
    print(dist.check_replicas(model))                      # still one model? (every process)

SyncBatchNorm takes BatchNorm's statistics over every process's batch, not each one's own;
ZeroRedundancyOptimizer keeps each parameter's optimizer state in one process only (ZeRO-1).
MPI (``mpi4py`` and the MPICH library, both installed with the kit) is the engine
underneath; each name here is a thin layer over one of its collectives. On NVIDIA GPUs,
``init_process_group("nccl")`` has NCCL (through CuPy) carry the GPU's arrays GPU to GPU,
still launched by ``mpiexec`` (untested on a real GPU so far). In a notebook,
:func:`start_engines` starts the processes and ``%%px`` cells run in all of them.
"""
from .collectives import ReduceOp, all_gather, all_reduce, broadcast, gather_object
from .ddp import DistributedDataParallel
from .engines import Engines, start_engines
from .process_group import (barrier, destroy_process_group, get_backend, get_rank,
                            get_world_size, init_process_group, is_initialized)
from .replicas import ReplicaReport, check_replicas
from .sampler import DistributedSampler
from .sync_batchnorm import SyncBatchNorm
from .zero import ZeroRedundancyOptimizer

__all__ = [
    "init_process_group", "destroy_process_group", "is_initialized", "get_rank",
    "get_world_size", "get_backend", "barrier", "ReduceOp", "all_reduce", "broadcast",
    "all_gather", "gather_object",
    "DistributedSampler", "DistributedDataParallel", "SyncBatchNorm",
    "ZeroRedundancyOptimizer", "check_replicas", "ReplicaReport", "start_engines", "Engines",
]
