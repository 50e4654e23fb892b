"""The collectives on NVIDIA GPUs, by NCCL through CuPy (``cupy.cuda.nccl``).

NCCL (NVIDIA's collective library) sums, copies and gathers arrays in GPU memory, GPU to GPU,
with no trip through the host. ``init_process_group("nccl")`` sets it up in every process that
``mpiexec`` started; MPI still gives each process its rank and the world's size, carries the
arrays on the host and the Python objects, and hands NCCL its meeting point:

1. Each process takes a GPU of its machine: its rank among the processes of that machine
   (MPI's shared-memory split, ``COMM_TYPE_SHARED``) modulo the GPUs it sees. The modulo is
   for launchers that already give each process a GPU of its own (``CUDA_VISIBLE_DEVICES``,
   as Slurm can): each then sees one GPU, numbered 0, and takes it.
2. No two processes of one machine may land on the same GPU (NCCL refuses: "Duplicate GPU
   detected"); every process checks, by the GPUs' PCI bus ids, before NCCL is asked.
3. Process 0 makes NCCL's unique id (``nccl.get_unique_id()``); MPI broadcasts it; each
   process makes its communicator, ``nccl.NcclCommunicator(world_size, unique_id, rank)``.

A collective then runs on a CuPy array in place (a non-contiguous one through a contiguous
copy on the GPU), queued on CuPy's current stream behind the work that made the array.

**Untested on a GPU so far**: no GPU was lent while this was written. The tests run it in 2 MPI
processes against a stand-in ``cupy.cuda.nccl`` (tests/distributed/fake_cupy_nccl.py) that
carries the bytes by MPI; a test marked for a real GPU runs under ``DLTUTOR_TEST_CUPY=1``.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from .. import backend as B

#: NCCL's element type for each dtype an all-reduce may sum (NCCL adds in that type).
NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
              "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
              "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64"}
#: NCCL's reduction for each of ours. No "avg": NCCL has one only from version 2.10, and the
#: caller's sum-then-divide gives every backend the same bytes (see collectives.all_reduce).
NCCL_OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN", "product": "NCCL_PROD"}
ON_CPU_INSTEAD = "or train on the CPU with init_process_group('mpi')"


def cupy_with_nccl() -> tuple[Any, Any]:
    """CuPy and its ``cupy.cuda.nccl``, or a GPUUnavailableError that says what to install."""
    try:
        cupy = importlib.import_module("cupy")
        nccl = importlib.import_module("cupy.cuda.nccl")
    except ImportError as exc:
        raise B.GPUUnavailableError(
            f"init_process_group('nccl') needs CuPy ({exc}). Install it with: "
            f"{B.INSTALL_HINT}, {ON_CPU_INSTEAD}") from None
    if not getattr(nccl, "available", True):
        raise B.GPUUnavailableError(
            "init_process_group('nccl'): CuPy is installed but finds no NCCL library. Install "
            f"it with: pip install nvidia-nccl-cu12 (cu13 for CUDA 13), {ON_CPU_INSTEAD}")
    return cupy, nccl


def gpu_count(cupy: Any) -> int:
    """How many GPUs this process sees, or a GPUUnavailableError when it sees none."""
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDA driver missing or broken: CuPy raises its own kinds
        raise B.GPUUnavailableError(
            f"init_process_group('nccl'): CuPy finds no usable GPU ({type(exc).__name__}: "
            f"{exc}). Check `nvidia-smi`, {ON_CPU_INSTEAD}") from None
    if count < 1:
        raise B.GPUUnavailableError(
            f"init_process_group('nccl'): this machine has no GPU; {ON_CPU_INSTEAD}")
    return count


def join(comm: Any, MPI: Any) -> NcclCollectives:
    """Set NCCL up in this process (every process of ``comm`` calls it; see the module
    docstring for the steps). Any process's problem stops every process with its message."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)      # the processes of this machine
    local_rank = local.Get_rank()
    local.Free()
    try:
        cupy, nccl = cupy_with_nccl()
        count = gpu_count(cupy)
        device = cupy.cuda.Device(local_rank % count)
        device.use()
        problem, seat = None, (MPI.Get_processor_name(), str(device.pci_bus_id), count)
    except B.GPUUnavailableError as exc:
        problem, seat = str(exc), None
    reports = comm.allgather((problem, seat))          # every process decides alike
    refuse_problems(reports)                           # (past it, every process has a GPU)
    unique_id = nccl.get_unique_id() if comm.Get_rank() == 0 else None
    unique_id = comm.bcast(unique_id, root=0)
    communicator = nccl.NcclCommunicator(comm.Get_size(), unique_id, comm.Get_rank())
    return NcclCollectives(communicator, nccl, cupy, device.id, comm.Get_size())


def refuse_problems(reports: list[tuple[str | None, Any]]) -> None:
    """Raise, in every process alike, the first process's problem, or two processes of one
    machine on one GPU. ``reports`` has each rank's ``(problem, (machine, bus id, count))``.

    >>> refuse_problems([(None, ("m", "0000:01:00.0", 2)), (None, ("m", "0000:02:00.0", 2))])
    >>> refuse_problems([(None, ("m", "0000:01:00.0", 1)), (None, ("m", "0000:01:00.0", 1))])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dltutor.backend.GPUUnavailableError: init_process_group('nccl'): ranks [0, 1] share GPU ...
    """
    for rank, (problem, _) in enumerate(reports):
        if problem is not None:
            raise B.GPUUnavailableError(f"process {rank}: {problem}")
    seats = [seat for _, seat in reports]          # each (machine, bus id, GPUs seen)
    for machine, bus_id, count in seats:
        sharing = [rank for rank, seat in enumerate(seats) if seat[:2] == (machine, bus_id)]
        if len(sharing) > 1:
            raise B.GPUUnavailableError(
                f"init_process_group('nccl'): ranks {sharing} share GPU {bus_id} on machine "
                f"{machine!r}, which shows each of them {count} GPU(s); NCCL needs a GPU of "
                f"its own for each process. Start at most {count} process(es) per machine "
                f"(mpiexec -n {count}), {ON_CPU_INSTEAD}")


class NcclCollectives:
    """The three collectives of ``dltutor.distributed`` on one CuPy array, by NCCL."""

    name = "nccl"

    def __init__(self, communicator: Any, nccl: Any, cupy: Any, device_id: int,
                 world_size: int):
        self.communicator, self.nccl, self.cupy = communicator, nccl, cupy
        self.device_id, self.world_size = device_id, world_size

    def carries(self, array: Any, caller: str) -> bool:
        """Whether ``array`` is a CuPy array (NCCL's to carry), refusing one on another GPU
        than this process's: NCCL reads only its own GPU's memory."""
        if not isinstance(array, self.cupy.ndarray):
            return False
        if array.device.id != self.device_id:
            raise ValueError(
                f"{caller}: the array is on GPU {array.device.id}, but this process's NCCL "
                f"communicator is on GPU {self.device_id}: make the model and tensors after "
                "init_process_group('nccl'), which makes this process's GPU the current one")
        return True

    def all_reduce(self, array: Any, op: str) -> None:
        """Leave in ``array`` the ``op`` of every process's ``array``."""
        if array.dtype.name not in NCCL_TYPES:
            raise TypeError(f"all_reduce over NCCL: NCCL cannot add {array.dtype} values; "
                            f"use one of {sorted(NCCL_TYPES)}")
        datatype = getattr(self.nccl, NCCL_TYPES[array.dtype.name])
        nccl_op = getattr(self.nccl, NCCL_OPS[op])
        self._in_place(array, lambda buffer: self.communicator.allReduce(
            buffer.data.ptr, buffer.data.ptr, buffer.size, datatype, nccl_op, self._stream()))

    def broadcast(self, array: Any, src: int) -> None:
        """Copy process ``src``'s ``array`` into every process's (as bytes: a copy does no
        arithmetic, so any dtype travels)."""
        self._in_place(array, lambda buffer: self.communicator.bcast(
            buffer.data.ptr, buffer.nbytes, self.nccl.NCCL_UINT8, src, self._stream()))

    def all_gather(self, array: Any) -> Any:
        """Every process's ``array``, stacked in rank order on this GPU:
        shape ``(world, *array.shape)``."""
        mine = self.cupy.ascontiguousarray(array)
        gathered = self.cupy.empty((self.world_size,) + mine.shape, dtype=mine.dtype)
        self.communicator.allGather(mine.data.ptr, gathered.data.ptr, mine.nbytes,
                                    self.nccl.NCCL_UINT8, self._stream())
        return gathered

    def _in_place(self, array: Any, collective: Callable[[Any], None]) -> None:
        """Run ``collective(buffer)`` on ``array`` itself, or on a contiguous copy of it on
        the GPU that is then put back (NCCL reads and writes one block of memory)."""
        buffer = array if array.flags.c_contiguous else self.cupy.ascontiguousarray(array)
        collective(buffer)
        if buffer is not array:
            array[...] = buffer

    def _stream(self) -> int:
        """CuPy's current stream: NCCL's work queues behind the kernels that made the array."""
        return int(self.cupy.cuda.get_current_stream().ptr)
