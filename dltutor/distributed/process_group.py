"""The processes that train one model together: the process group, over MPI (and NCCL).

Data-parallel training runs the same program in N processes (``mpiexec -n 4 python
train.py``), each on its share of every batch. The processes find each other through MPI,
an existing, well-tested engine for exactly this (``mpi4py`` with the MPICH library, both
from the package registry, installed with the kit). dltutor speaks PyTorch's
names over it: :func:`init_process_group`, :func:`get_rank` (this process's number, 0 to
N-1), :func:`get_world_size` (N).

The group's backend says which engine carries the arrays of the collectives: "mpi" carries
every array, on the host; "nccl" (NVIDIA GPUs, through CuPy: ``nccl_collectives.py``) carries
the GPU's arrays GPU to GPU, and MPI still the host's. "nccl" is untested on a real GPU so far.

>>> import dltutor.distributed as dist
>>> dist.init_process_group("mpi")        # one process here: a world of one
>>> dist.get_rank(), dist.get_world_size()
(0, 1)
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .mpi_collectives import MpiCollectives, mpi
from .nccl_collectives import NcclCollectives, join

BACKENDS = ("mpi", "nccl")


class ProcessGroup:
    """The initialized group: its backend's name, MPI's communicator (ranks, sizes, Python
    objects, barriers) and the engines that carry arrays. :meth:`collectives_for` is the
    one place that picks an engine for an array."""

    def __init__(self, backend: str, comm: Any, nccl: NcclCollectives | None = None):
        self.backend, self.comm, self.nccl = backend, comm, nccl
        self.mpi = MpiCollectives(comm)

    def collectives_for(self, array: Any, caller: str, *,
                        of_tensor: bool) -> MpiCollectives | NcclCollectives:
        """NCCL for a GPU array in an "nccl" group, MPI for anything else, except a Tensor on
        the host in an "nccl" group: that is a model or tensor left off the GPU, so it is
        refused (as PyTorch does) rather than quietly carried the slow way. (The kit's own
        small host arrays, a DDP's used-flags or SyncBatchNorm's sums, are not Tensors.)"""
        if self.nccl is None:
            return self.mpi
        if self.nccl.carries(array, caller):
            return self.nccl
        if of_tensor:
            found = B.backend_of(array) or B.NUMPY
            raise TypeError(
                f"{caller}: the tensor is on the {found.device} (backend {found.name!r}), but this "
                "process group is 'nccl', which carries GPU tensors: move it (and the model) "
                "to the GPU with .to('gpu'), or use init_process_group('mpi')")
        return self.mpi


_group: ProcessGroup | None = None          # the initialized group, or None


def init_process_group(backend: str = "mpi", *, world_size: int | None = None,
                       rank: int | None = None) -> None:
    """Join the processes that ``mpiexec`` started (a plain ``python`` run is a world of one).

    ``backend`` is "mpi" (CPUs: every array over MPI) or "nccl" (NVIDIA GPUs: each process
    takes a GPU of its machine, and the GPU's arrays go GPU to GPU by NCCL; see
    ``nccl_collectives.py``). Either way ``mpiexec`` starts the processes. ``world_size`` and
    ``rank``, if given, are checked against what MPI says: the launcher decides them
    (``mpiexec -n 4``), not the program.
    """
    global _group
    if backend not in BACKENDS:
        raise ValueError(f"init_process_group: backend must be one of {BACKENDS}, got "
                         f"{backend!r} ('mpi' on CPUs, 'nccl' on NVIDIA GPUs)")
    if _group is not None:
        raise RuntimeError("init_process_group: the process group is already initialized; "
                           "call destroy_process_group() first")
    MPI = mpi()
    comm = MPI.COMM_WORLD
    for name, given, actual in (("world_size", world_size, comm.Get_size()),
                                ("rank", rank, comm.Get_rank())):
        if given is not None and given != actual:
            raise ValueError(f"init_process_group: {name}={given}, but mpiexec started this "
                             f"process with {name} {actual}; leave {name} out (mpiexec -n "
                             "decides it)")
    _group = ProcessGroup(backend, comm, join(comm, MPI) if backend == "nccl" else None)


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and no destroy since).

    >>> is_initialized()
    False
    """
    return _group is not None


def destroy_process_group() -> None:
    """Leave the group: NCCL's communicator is destroyed, MPI itself stays up until the
    process ends (as mpi4py arranges)."""
    global _group
    if _group is not None and _group.nccl is not None:
        _group.nccl.communicator.destroy()
    _group = None


def group() -> ProcessGroup:
    """The initialized group, or a RuntimeError that says what to call first."""
    if _group is None:
        raise RuntimeError("dltutor.distributed: call dist.init_process_group('mpi') (or "
                           "'nccl' on GPUs) first, in every process")
    return _group


def get_backend() -> str:
    """The group's backend: "mpi" or "nccl" (PyTorch's ``dist.get_backend()``).

    >>> init_process_group("mpi"); get_backend()
    'mpi'
    >>> destroy_process_group()
    """
    return group().backend


def get_rank() -> int:
    """This process's number in the group: 0 to ``get_world_size() - 1``."""
    return int(group().comm.Get_rank())


def get_world_size() -> int:
    """How many processes the group has."""
    return int(group().comm.Get_size())


def barrier() -> None:
    """Wait until every process of the group has reached this call (an MPI barrier: it waits
    for the processes, not for work already queued on a GPU)."""
    group().comm.Barrier()
