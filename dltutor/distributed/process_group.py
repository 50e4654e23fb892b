"""The processes that train one model together: the process group, over MPI.

Data-parallel training runs the same program in N processes (``mpiexec -n 4 python
train.py``), each on its share of every batch. The processes find each other through MPI,
an existing, well-tested engine for exactly this (``mpi4py`` with the MPICH library, both
from the package registry, installed with the kit). dltutor speaks PyTorch's
names over it: :func:`init_process_group`, :func:`get_rank` (this process's number, 0 to
N-1), :func:`get_world_size` (N).

>>> import dltutor.distributed as dist
>>> dist.init_process_group("mpi")        # one process here: a world of one
>>> dist.get_rank(), dist.get_world_size()
(0, 1)
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from typing import Any

#: What a learner installs to run data-parallel (the MPI library comes as a wheel).
INSTALL_HINT = "pip install mpi4py mpich   (the kit's own install brings both)"
BACKENDS = ("mpi",)

_world: Any = None          # the MPI communicator of the initialized group, or None


def mpi() -> Any:
    """mpi4py's ``MPI`` module, or an ImportError that says what to install."""
    try:
        from mpi4py import MPI  # (imported when first asked: `import dltutor` stays light)
        return MPI
    except ImportError as exc:
        raise ImportError(f"dltutor.distributed needs mpi4py and an MPI library ({exc}). "
                          f"Install them with: {INSTALL_HINT}") from None


def init_process_group(backend: str = "mpi", *, world_size: int | None = None,
                       rank: int | None = None) -> None:
    """Join the processes that ``mpiexec`` started (a plain ``python`` run is a world of one).

    ``world_size`` and ``rank``, if given, are checked against what MPI says: with MPI the
    launcher decides them (``mpiexec -n 4``), not the program.
    """
    global _world
    if backend not in BACKENDS:
        raise ValueError(f"init_process_group: backend must be one of {BACKENDS}, got "
                         f"{backend!r} (NCCL for GPUs is not built yet; a GPU's arrays travel "
                         "through the host with 'mpi')")
    if _world is not None:
        raise RuntimeError("init_process_group: the process group is already initialized; "
                           "call destroy_process_group() first")
    comm = mpi().COMM_WORLD
    for name, given, actual in (("world_size", world_size, comm.Get_size()),
                                ("rank", rank, comm.Get_rank())):
        if given is not None and given != actual:
            raise ValueError(f"init_process_group: {name}={given}, but mpiexec started this "
                             f"process with {name} {actual}; leave {name} out (mpiexec -n "
                             "decides it)")
    _world = comm


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and no destroy since).

    >>> is_initialized()
    False
    """
    return _world is not None


def destroy_process_group() -> None:
    """Leave the group (MPI itself stays up until the process ends, as mpi4py arranges)."""
    global _world
    _world = None


def world() -> Any:
    """The communicator of the group, or a RuntimeError that says what to call first."""
    if _world is None:
        raise RuntimeError("dltutor.distributed: call dist.init_process_group('mpi') first "
                           "(in every process)")
    return _world


def get_rank() -> int:
    """This process's number in the group: 0 to ``get_world_size() - 1``."""
    return int(world().Get_rank())


def get_world_size() -> int:
    """How many processes the group has."""
    return int(world().Get_size())


def barrier() -> None:
    """Wait until every process of the group has reached this call."""
    world().Barrier()
