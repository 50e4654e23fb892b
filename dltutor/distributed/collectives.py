"""Collectives: operations every process of the group calls together, on a tensor each.

``all_reduce(t)`` leaves in every process's ``t`` the sum (or average, max, ...) of all the
processes' ``t``: how data-parallel training agrees on one gradient. ``broadcast(t, src=0)``
copies process ``src``'s ``t`` into everyone's: how replicas start from the same weights.
``all_gather`` collects one tensor from each process. Each is MPI's own collective on the
tensor's array (mpi4py's buffer calls, no pickling); a GPU array travels through the host.

>>> import dltutor as dt, dltutor.distributed as dist
>>> dist.init_process_group("mpi")                   # a world of one: the sum is itself
>>> t = dt.tensor([1.0, 2.0])
>>> dist.all_reduce(t); t
tensor([1., 2.])
>>> dist.destroy_process_group()
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from .process_group import mpi, world


class ReduceOp(enum.Enum):
    """How :func:`all_reduce` combines the processes' values (PyTorch's names)."""

    SUM = "sum"
    AVG = "avg"            # the sum divided by the number of processes
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


def _array(tensor: Any) -> Any:
    """The array a collective works on: a Tensor's ``.data``, or the array itself."""
    return tensor.data if isinstance(tensor, Tensor) else tensor


def _in_place(tensor: Any, collective: Any) -> None:
    """Run ``collective(host_array)`` on a contiguous NumPy array holding ``tensor``'s values,
    then put the result back into the tensor's own array (on its backend)."""
    array = _array(tensor)
    if isinstance(array, np.ndarray) and array.flags.c_contiguous:
        collective(array)                    # MPI reads and writes the array itself
        return
    host = np.ascontiguousarray(B.to_numpy(array))
    collective(host)
    array[...] = (B.backend_of(array) or B.NUMPY).asarray(host)


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM) -> None:
    """Combine every process's ``tensor`` with ``op``; each process's tensor gets the result."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"all_reduce: op must be a dist.ReduceOp (SUM, AVG, MAX, MIN, "
                        f"PRODUCT), got {op!r}")
    MPI, comm = mpi(), world()
    mpi_op = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.MAX: MPI.MAX,
              ReduceOp.MIN: MPI.MIN, ReduceOp.PRODUCT: MPI.PROD}[op]

    def reduce(array: np.ndarray) -> None:
        comm.Allreduce(MPI.IN_PLACE, array, op=mpi_op)
        if op is ReduceOp.AVG:
            array /= comm.Get_size()
    _in_place(tensor, reduce)


def broadcast(tensor: Any, src: int = 0) -> None:
    """Copy process ``src``'s ``tensor`` into every process's ``tensor``."""
    comm = world()
    if not 0 <= src < comm.Get_size():
        raise ValueError(f"broadcast: src={src} is not a rank of this group (0 to "
                         f"{comm.Get_size() - 1})")
    _in_place(tensor, lambda array: comm.Bcast(array, root=src))


def all_gather(tensor_list: list, tensor: Any) -> None:
    """Fill ``tensor_list[i]`` with process ``i``'s ``tensor`` (a list as long as the group,
    each entry shaped like ``tensor``)."""
    comm = world()
    if len(tensor_list) != comm.Get_size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries; the group "
                         f"has {comm.Get_size()} processes")
    mine = np.ascontiguousarray(B.to_numpy(_array(tensor)))
    gathered = np.empty((comm.Get_size(),) + mine.shape, dtype=mine.dtype)
    comm.Allgather(mine, gathered)
    for out, values in zip(tensor_list, gathered):
        target = _array(out)
        target[...] = (B.backend_of(target) or B.NUMPY).asarray(values)
