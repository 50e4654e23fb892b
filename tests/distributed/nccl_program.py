"""The program tests/distributed/test_nccl.py runs in 2 processes under mpiexec, against the
FAKE CuPy and NCCL of fake_cupy_nccl.py (no GPU needed), or against the real ones.

``python nccl_program.py OUT_DIR``: every process runs every scenario on the fake and writes
what it saw, the fake NCCL's calls included, to ``OUT_DIR/rank<N>.json``;
``python nccl_program.py OUT_DIR gpu`` does the same on real GPUs (real_gpu below).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import fake_cupy_nccl as fake

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

OPS = ["SUM", "AVG", "MAX", "MIN", "PRODUCT"]


def refused(**machine) -> str | None:
    """The error init_process_group("nccl") raises on the fake ``machine``, or None."""
    fake.install(**machine)
    try:
        dist.init_process_group("nccl")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        fake.uninstall()
    dist.destroy_process_group()
    return None


def own_gpu_each(rank: int) -> dict:
    """One GPU visible to each process, a different one each (CUDA_VISIBLE_DEVICES)."""
    fake.install(gpus=1, bus_id=lambda rank, device: f"0000:{rank + 1:02x}:00.0")
    try:
        dist.init_process_group("nccl")
        dist.destroy_process_group()
        return {"uses": [args["id"] for name, args in fake.calls if name == "Device.use"]}
    finally:
        fake.uninstall()


def reductions(rank: int) -> dict:
    """Each op on float32 and float64, on a GPU array (NCCL) and on a host array (MPI)."""
    seen = {}
    for dtype in ("float32", "float64"):
        for name in OPS:
            values = [rank + 1.5, -2.0 * rank, 3.0 + rank]
            on_gpu, on_host = fake.on_gpu(values, dtype), np.array(values, dtype)
            before = len(fake.calls)
            dist.all_reduce(on_gpu, dist.ReduceOp[name])
            nccl_calls = fake.calls[before:]
            dist.all_reduce(on_host, dist.ReduceOp[name])
            seen[f"{dtype} {name}"] = {
                "nccl": on_gpu.tobytes().hex(), "mpi": on_host.tobytes().hex(),
                "values": on_gpu.tolist(), "calls": nccl_calls,
                "host_calls": len(fake.calls) - before - len(nccl_calls)}
    return seen


def calls_of(run) -> list:
    """The fake NCCL's calls that ``run()`` makes."""
    before = len(fake.calls)
    run()
    return fake.calls[before:]


def copies(rank: int) -> dict:
    """broadcast (a whole tensor, a strided view), an int64 sum and all_gather (into host
    tensors), on the fake GPU."""
    whole = dt.tensor(fake.on_gpu([10.0 * rank, 1.0], "float32"))
    backing = fake.on_gpu(np.arange(6.0) * (rank + 1))
    counts = fake.on_gpu([rank + 1, 5], "int64")
    gathered = [dt.zeros(2, dtype=dt.float32) for _ in range(2)]
    mine = dt.tensor(fake.on_gpu([rank, rank + 0.5], "float32"))
    return {"whole_calls": calls_of(lambda: dist.broadcast(whole, src=1)),
            "backing_calls": calls_of(lambda: dist.broadcast(backing[::2], src=0)),
            "counts_calls": calls_of(lambda: dist.all_reduce(counts)),
            "gather_calls": calls_of(lambda: dist.all_gather(gathered, mine)),
            "whole": whole.tolist(), "backing": backing.tolist(), "counts": counts.tolist(),
            "gathered": [g.tolist() for g in gathered],
            "gathered_on": [type(g.data).__name__ for g in gathered]}


def refusals(rank: int) -> dict:
    """What the NCCL group refuses: a CPU tensor, a bool sum, an array on another GPU."""
    said = {}
    elsewhere = fake.on_gpu([1.0])
    elsewhere.device_id = 1 - rank                      # the other process's GPU
    for case, run in (("cpu_tensor", lambda: dist.all_reduce(dt.tensor([1.0]))),
                      ("bool", lambda: dist.all_reduce(fake.on_gpu([True, False]))),
                      ("other_gpu", lambda: dist.broadcast(elsewhere))):
        try:
            run()
            said[case] = None
        except (TypeError, ValueError) as exc:
            said[case] = f"{type(exc).__name__}: {exc}"
    return said


def data_parallel(rank: int) -> dict:
    """DistributedDataParallel and the replica check on the fake GPU, unchanged: the gradients
    go through NCCL, the used-flags and fingerprints (host arrays) through MPI."""
    dt.manual_seed(rank)                                # different starts: DDP evens them
    model = nn.Sequential(nn.Linear(3, 2)).to("gpu")
    ddp = dist.DistributedDataParallel(model)
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    rng = np.random.default_rng(rank)                   # each process its own batch
    before = len(fake.calls)
    loss = ddp(dt.tensor(fake.on_gpu(rng.standard_normal((4, 3))))).sum()
    loss.backward()
    opt.step()
    step_calls = [name for name, _ in fake.calls[before:]]
    report = dist.check_replicas(ddp)
    return {"weights": [p.tolist() for p in ddp.parameters()], "step_calls": step_calls,
            "on_gpu": [type(p.data).__name__ for p in ddp.parameters()],
            "replicas_equal": report.equal}


def working(rank: int) -> dict:
    """A good machine (2 GPUs): the setup's calls, then the collectives."""
    fake.install(gpus=2)
    try:
        dist.init_process_group("nccl")
        setup = list(fake.calls)
        objects = [None, None] if rank == 0 else None
        dist.gather_object({"rank": rank}, objects, dst=0)
        result = {"backend": dist.get_backend(), "setup": setup,
                  "reductions": reductions(rank), "copies": copies(rank),
                  "refusals": refusals(rank), "data_parallel": data_parallel(rank),
                  "objects": objects}
        dist.destroy_process_group()
        result["last_call"] = fake.calls[-1][0]
        return result
    finally:
        fake.uninstall()


def real_gpu(rank: int) -> dict:
    """The real CuPy and NCCL (DLTUTOR_TEST_CUPY=1 on a machine with GPUs): the collectives
    and a DDP step, or the error init_process_group("nccl") gives (one GPU for 2 processes)."""
    try:
        dist.init_process_group("nccl")
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    with dt.backend.use("gpu"):
        total, mean = dt.tensor([rank + 1.0, 2.0]), dt.tensor([rank + 1.0, 2.0])
        dist.all_reduce(total)
        dist.all_reduce(mean, dist.ReduceOp.AVG)
        shared = dt.tensor([10.0 * rank])
        dist.broadcast(shared, src=1)
        gathered = [dt.zeros(1) for _ in range(2)]
        dist.all_gather(gathered, dt.tensor([rank + 0.5]))
        dt.manual_seed(rank)
        ddp = dist.DistributedDataParallel(nn.Linear(3, 1).to("gpu"))
        ddp(dt.randn(4, 3) * (rank + 1)).sum().backward()
        result = {"sum": total.tolist(), "avg": mean.tolist(), "broadcast": shared.tolist(),
                  "gathered": [g.tolist() for g in gathered],
                  "grad": ddp.module.weight.grad.tolist(),
                  "replicas_equal": dist.check_replicas(ddp).equal}
    dist.destroy_process_group()
    return result


def main(out_dir: str, mode: str = "fake") -> None:
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    if mode == "gpu":
        result = real_gpu(rank)
    else:
        result = {"no_cupy": refused(cupy_installed=False),
                  "no_nccl": refused(nccl_available=False),
                  "no_gpu": refused(gpus=0),
                  "more_processes_than_gpus": refused(gpus=1),
                  "own_gpu_each": own_gpu_each(rank),
                  "working": working(rank)}
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:])
