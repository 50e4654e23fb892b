"""The collectives on the host, by MPI: what every process group runs on NumPy arrays.

MPI (``mpi4py`` over the MPICH library, both installed with the kit) works on host memory:
each call below is mpi4py's buffer call on a contiguous NumPy array, with no pickling. An
array that is not one (a GPU's, or a non-contiguous view) travels through a host copy and
back. Both backends of :func:`~dltutor.distributed.init_process_group` use these: "mpi" for
every array, "nccl" for the arrays on the host (the kit's own bookkeeping: DDP's used-flags,
the replica check's fingerprints, SyncBatchNorm's statistics), see ``nccl_collectives.py``.

>>> carrier = MpiCollectives(mpi().COMM_SELF)          # a group of one: the sum is itself
>>> values = np.array([1.0, 2.0])
>>> carrier.all_reduce(values, "sum"); values
array([1., 2.])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import backend as B

#: What a learner installs to run data-parallel (the MPI library comes as a wheel).
INSTALL_HINT = "pip install mpi4py mpich   (the kit's own install brings both)"


def mpi() -> Any:
    """mpi4py's ``MPI`` module, or an ImportError that says what to install."""
    try:
        from mpi4py import MPI  # (imported when first asked: `import dltutor` stays light)
        return MPI
    except ImportError as exc:
        raise ImportError(f"dltutor.distributed needs mpi4py and an MPI library ({exc}). "
                          f"Install them with: {INSTALL_HINT}") from None


def through_host(array: Any, collective: Callable[[np.ndarray], None]) -> None:
    """Run ``collective(host_array)`` on a contiguous NumPy array holding ``array``'s values,
    then put the result back into ``array`` itself (on its own backend).

    >>> view = np.arange(6.0)[::2]                     # not contiguous: MPI needs a copy
    >>> through_host(view, lambda host: host.__imul__(10)); view
    array([ 0., 20., 40.])
    """
    if isinstance(array, np.ndarray) and array.flags.c_contiguous:
        collective(array)                    # MPI reads and writes the array itself
        return
    host = np.ascontiguousarray(B.to_numpy(array))
    collective(host)
    array[...] = (B.backend_of(array) or B.NUMPY).asarray(host)


class MpiCollectives:
    """The three collectives of ``dltutor.distributed`` on one array, by MPI's own calls.

    ``op`` is a reduction's name: "sum", "max", "min" or "product" (an average is a sum that
    the caller divides: the same for every backend, see ``collectives.all_reduce``).
    """

    name = "mpi"

    def __init__(self, comm: Any):
        self.comm = comm                     # mpi4py's communicator of the group

    def all_reduce(self, array: Any, op: str) -> None:
        """Leave in ``array`` the ``op`` of every process's ``array``."""
        MPI = mpi()
        mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "product": MPI.PROD}[op]
        through_host(array, lambda host: self.comm.Allreduce(MPI.IN_PLACE, host, op=mpi_op))

    def broadcast(self, array: Any, src: int) -> None:
        """Copy process ``src``'s ``array`` into every process's."""
        through_host(array, lambda host: self.comm.Bcast(host, root=src))

    def all_gather(self, array: Any) -> np.ndarray:
        """Every process's ``array``, stacked in rank order: shape ``(world, *array.shape)``."""
        mine = np.ascontiguousarray(B.to_numpy(array))
        gathered = np.empty((self.comm.Get_size(),) + mine.shape, dtype=mine.dtype)
        self.comm.Allgather(mine, gathered)
        return gathered

    def gather_object(self, obj: Any, dst: int) -> list | None:
        """Every process's Python object, in rank order, on process ``dst`` (None elsewhere).
        mpi4py pickles them between the processes of this one job."""
        return self.comm.gather(obj, root=dst)
