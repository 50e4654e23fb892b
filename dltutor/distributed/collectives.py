"""Collectives: operations every process of the group calls together, on a tensor each.

``all_reduce(t)`` leaves in every process's ``t`` the sum (or average, max, ...) of all the
processes' ``t``: how data-parallel training agrees on one gradient. ``broadcast(t, src=0)``
copies process ``src``'s ``t`` into everyone's: how replicas start from the same weights.
``all_gather`` collects one tensor from each process. The group picks the engine for each
array (``ProcessGroup.collectives_for``, the one place that decides): in an "mpi" group MPI's
own collective on the array (mpi4py's buffer calls, no pickling; a GPU array travels through
the host), in an "nccl" group NCCL's on a GPU array, in place on the GPU (untested on a real
GPU so far), and MPI's on a host array.

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

from .. import backend as B
from ..autograd import Tensor
from .mpi_collectives import MpiCollectives
from .nccl_collectives import NcclCollectives
from .process_group import group


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


def _engine(tensor: Any, caller: str) -> MpiCollectives | NcclCollectives:
    """The engine that carries ``tensor``'s array in this group (the group decides)."""
    return group().collectives_for(_array(tensor), caller, of_tensor=isinstance(tensor, Tensor))


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM) -> None:
    """Combine every process's ``tensor`` with ``op``; each process's tensor gets the result.
    AVG is a SUM divided by the number of processes, here for every engine: MPI has no
    average, NCCL only from version 2.10, and so both give the same bytes."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"all_reduce: op must be a dist.ReduceOp (SUM, AVG, MAX, MIN, "
                        f"PRODUCT), got {op!r}")
    array = _array(tensor)
    _engine(tensor, "all_reduce").all_reduce(array, "sum" if op is ReduceOp.AVG else op.value)
    if op is ReduceOp.AVG:
        array /= group().comm.Get_size()


def broadcast(tensor: Any, src: int = 0) -> None:
    """Copy process ``src``'s ``tensor`` into every process's ``tensor``."""
    size = group().comm.Get_size()
    if not 0 <= src < size:
        raise ValueError(f"broadcast: src={src} is not a rank of this group (0 to {size - 1})")
    _engine(tensor, "broadcast").broadcast(_array(tensor), src)


def all_gather(tensor_list: list, tensor: Any) -> None:
    """Fill ``tensor_list[i]`` with process ``i``'s ``tensor`` (a list as long as the group,
    each entry shaped like ``tensor``)."""
    size = group().comm.Get_size()
    if len(tensor_list) != size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries; the group "
                         f"has {size} processes")
    gathered = _engine(tensor, "all_gather").all_gather(_array(tensor))
    for out, values in zip(tensor_list, gathered):
        target = _array(out)                 # (asarray moves values to target's backend)
        target[...] = (B.backend_of(target) or B.NUMPY).asarray(values)


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int = 0) -> None:
    """Fill, on process ``dst``, ``object_gather_list[i]`` with process ``i``'s ``obj`` (any
    picklable Python object; MPI carries it in every group). The other processes pass None.

    >>> import dltutor.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> objects = [None]                     # a world of one: one entry
    >>> dist.gather_object({"step": 3}, objects); objects
    [{'step': 3}]
    >>> dist.destroy_process_group()
    """
    world = group().comm
    if not 0 <= dst < world.Get_size():
        raise ValueError(f"gather_object: dst={dst} is not a rank of this group (0 to "
                         f"{world.Get_size() - 1})")
    if world.Get_rank() == dst and (object_gather_list is None
                                    or len(object_gather_list) != world.Get_size()):
        raise ValueError(f"gather_object: on process dst={dst}, object_gather_list must be a "
                         f"list of {world.Get_size()} entries, got {object_gather_list!r}")
    gathered = group().mpi.gather_object(obj, dst)
    if gathered is not None and object_gather_list is not None:
        object_gather_list[:] = gathered
