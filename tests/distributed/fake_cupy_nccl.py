"""A FAKE CuPy with a FAKE ``cupy.cuda.nccl``, for checking dltutor's NCCL plumbing without a GPU.

dltutor/distributed/nccl_collectives.py talks to CuPy's real API; no GPU is at hand, so this
stands in for it in real MPI processes (nccl_program.py, under mpiexec):

* A "GPU array" is a NumPy array of the subclass :class:`FakeGpuArray`: its ``.data.ptr`` is the
  address of its bytes (``.ctypes.data``), as a CuPy array's is the address of its GPU memory.
* :class:`NcclCommunicator` performs each collective by MPI on the bytes at the pointers it is
  given, so a wrong pointer, count or type gives wrong numbers, not silence.
* Every call into the fake NCCL is appended to :data:`calls` for the tests to read.
* The constants are CuPy's own (``cupy_backends/cuda/libs/nccl.pxd``).

It proves what dltutor asks of NCCL and that the answers equal the MPI path's; it proves nothing
about NCCL or a GPU themselves: tests/distributed/test_nccl.py has a test for a real GPU.
"""
from __future__ import annotations

import ctypes
import sys
import types
from typing import Any, Callable

import numpy as np
from mpi4py import MPI

from dltutor import backend as B

# CuPy's values (cupy_backends/cuda/libs/nccl.pxd), so a test can check the numbers passed.
NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4
NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32 = 0, 1, 2, 3
NCCL_INT64, NCCL_UINT64, NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = 4, 5, 6, 7, 8
DTYPES = {NCCL_INT8: np.int8, NCCL_UINT8: np.uint8, NCCL_INT32: np.int32,
          NCCL_UINT32: np.uint32, NCCL_INT64: np.int64, NCCL_UINT64: np.uint64,
          NCCL_FLOAT16: np.float16, NCCL_FLOAT32: np.float32, NCCL_FLOAT64: np.float64}
MPI_OPS = {NCCL_SUM: MPI.SUM, NCCL_PROD: MPI.PROD, NCCL_MAX: MPI.MAX, NCCL_MIN: MPI.MIN}

#: Every call into the fake NCCL, in order: (name, its arguments as a dict).
calls: list[tuple[str, dict]] = []


class FakeCudaError(RuntimeError):
    """What the fake CUDA runtime raises when it is told there is no GPU (as CuPy's
    CUDARuntimeError does)."""


class Machine:
    """What the fake GPUs look like: how many this process sees, and each one's PCI bus id
    (``bus_id(rank, device)``: the same string means the same physical GPU)."""

    def __init__(self, gpus: int = 2, bus_id: Callable[[int, int], str] | None = None,
                 nccl_available: bool = True):
        self.gpus, self.nccl_available = gpus, nccl_available
        self.bus_id = bus_id or (lambda rank, device: f"0000:{device + 1:02x}:00.0")
        self.current = 0                     # the device that Device(i).use() made current


machine = Machine()


class FakeGpuArray(np.ndarray):
    """A NumPy array standing in for a cupy.ndarray: ``.data.ptr`` is its bytes' address,
    ``.device.id`` the fake GPU it was made on."""

    def __array_finalize__(self, obj: Any) -> None:
        self.device_id = getattr(obj, "device_id", machine.current)

    @property
    def data(self) -> Any:                   # (CuPy's name: what holds the pointer)
        return types.SimpleNamespace(ptr=self.ctypes.data)

    @property
    def device(self) -> Device:
        return Device(self.device_id)


def on_gpu(values: Any, dtype: Any = None) -> FakeGpuArray:
    """``values`` copied onto the current fake GPU."""
    return np.array(values, dtype=dtype).view(FakeGpuArray)


class Device:
    """cupy.cuda.Device: ``use()`` makes it current; ``pci_bus_id`` names the physical GPU."""

    def __init__(self, device_id: int):
        self.id = device_id

    def use(self) -> Device:
        calls.append(("Device.use", {"id": self.id}))
        machine.current = self.id
        return self

    @property
    def pci_bus_id(self) -> str:
        return machine.bus_id(MPI.COMM_WORLD.Get_rank(), self.id)


def get_device_count() -> int:
    if machine.gpus == 0:
        raise FakeCudaError("cudaErrorNoDevice: no CUDA-capable device is detected")
    return machine.gpus


def get_unique_id() -> tuple:
    """NCCL's unique id: 128 small ints; this one says which rank made it."""
    rank = MPI.COMM_WORLD.Get_rank()
    calls.append(("get_unique_id", {"rank": rank}))
    return tuple([rank + 1] * 128)


def _at(pointer: int, count: int, datatype: int) -> np.ndarray:
    """The ``count`` values of ``datatype`` at ``pointer``, as a NumPy array over those bytes."""
    dtype = np.dtype(DTYPES[datatype])
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(pointer)
    return np.frombuffer(raw, dtype=dtype)


class NcclCommunicator:
    """cupy.cuda.nccl.NcclCommunicator, its collectives done by MPI on the pointed-at bytes."""

    def __init__(self, ndev: int, commId: tuple, rank: int):
        assert len(commId) == 128, "NCCL's unique id is 128 bytes"
        calls.append(("NcclCommunicator", {"ndev": ndev, "commId": list(commId), "rank": rank}))
        self.comm = MPI.COMM_WORLD

    def allReduce(self, sendbuf: int, recvbuf: int, count: int, datatype: int, op: int,
                  stream: int) -> None:
        calls.append(("allReduce", {"in_place": sendbuf == recvbuf, "count": count,
                                    "datatype": datatype, "op": op, "stream": stream}))
        received = _at(recvbuf, count, datatype)
        sent = MPI.IN_PLACE if sendbuf == recvbuf else _at(sendbuf, count, datatype)
        self.comm.Allreduce(sent, received, op=MPI_OPS[op])

    def bcast(self, buff: int, count: int, datatype: int, root: int, stream: int) -> None:
        calls.append(("bcast", {"count": count, "datatype": datatype, "root": root,
                                "stream": stream}))
        self.comm.Bcast(_at(buff, count, datatype), root=root)

    def allGather(self, sendbuf: int, recvbuf: int, count: int, datatype: int,
                  stream: int) -> None:
        calls.append(("allGather", {"count": count, "datatype": datatype, "stream": stream}))
        self.comm.Allgather(_at(sendbuf, count, datatype),
                            _at(recvbuf, count * self.comm.Get_size(), datatype))

    def destroy(self) -> None:
        calls.append(("destroy", {}))


class ArrayModule(types.ModuleType):
    """The fake ``cupy`` itself: NumPy's functions, their arrays made FakeGpuArrays (an array
    module as CuPy is one, so dltutor's tensors and ops run on the fake GPU)."""

    def __getattr__(self, name: str) -> Any:
        found = getattr(np, name)
        if isinstance(found, type) or not callable(found):
            return found                         # dtypes (cupy.float32), constants

        def on_fake_gpu(*args: Any, **kwargs: Any) -> Any:
            out = found(*args, **kwargs)
            if isinstance(out, (tuple, list)):
                return type(out)(_made_fake(piece) for piece in out)
            return _made_fake(out)
        return on_fake_gpu


def _made_fake(out: Any) -> Any:
    return out.view(FakeGpuArray) if type(out) is np.ndarray else out


def _modules() -> dict[str, types.ModuleType]:
    """The fake ``cupy``, ``cupy.cuda``, ``cupy.cuda.runtime`` and ``cupy.cuda.nccl``."""
    nccl = types.ModuleType("cupy.cuda.nccl")
    nccl.available = machine.nccl_available
    for name, value in globals().items():
        if name.startswith("NCCL_"):
            setattr(nccl, name, value)
    nccl.get_unique_id, nccl.NcclCommunicator = get_unique_id, NcclCommunicator
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = get_device_count
    cuda = types.ModuleType("cupy.cuda")
    cuda.nccl, cuda.runtime, cuda.Device = nccl, runtime, Device
    cuda.get_current_stream = lambda: types.SimpleNamespace(ptr=7)   # a stream's handle
    cupy = ArrayModule("cupy")
    cupy.cuda, cupy.ndarray = cuda, FakeGpuArray
    return {"cupy": cupy, "cupy.cuda": cuda, "cupy.cuda.runtime": runtime,
            "cupy.cuda.nccl": nccl}


def install(gpus: int = 2, bus_id: Callable[[int, int], str] | None = None,
            nccl_available: bool = True, cupy_installed: bool = True) -> None:
    """Put the fake in ``sys.modules`` (or, ``cupy_installed=False``, make ``import cupy``
    fail) and register its arrays as dltutor's "cupy" backend; :func:`uninstall` undoes it."""
    global machine
    machine = Machine(gpus, bus_id, nccl_available)
    calls.clear()
    modules = _modules()
    for name, module in modules.items():
        _saved.setdefault(name, sys.modules.get(name))         # a real CuPy comes back after
        sys.modules[name] = module if cupy_installed else None   # None: ImportError
    B.register(B.Backend("cupy", "gpu", modules["cupy"], FakeGpuArray,
                         to_numpy=lambda a: np.array(a).view(np.ndarray), from_numpy=on_gpu))


def uninstall() -> None:
    """Take the fake out: the real CuPy's modules, if any, come back (its backend is loaded
    again when next asked for)."""
    for name, module in _saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module
    _saved.clear()
    B.unregister("cupy")


_saved: dict[str, Any] = {}          # what sys.modules held under the fake's names
