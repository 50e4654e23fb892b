"""The program tests/distributed/test_data_parallel.py runs in 2 processes under mpiexec.

``python mpi_program.py OUT_DIR``: every process runs every scenario and writes what it saw to
``OUT_DIR/rank<N>.json``; the test compares the processes with each other and with one process
doing the same work alone.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim
from dltutor.data import DataLoader, TensorDataset

BATCH = 8                       # the global batch: each of the 2 processes takes 4 rows


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((BATCH, 3)), rng.standard_normal((BATCH, 1))


def model():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to(dtype=dt.float64)


def start_equal(rank):
    dt.manual_seed(100 + rank)                      # a different start in each process
    before = model()
    first = before[0].weight.data.copy()
    wrapped = dist.DistributedDataParallel(before)
    return {"differed": bool((first != wrapped.module[0].weight.data).any()),
            "weights": [p.data.tolist() for p in wrapped.parameters()]}


def training(rank, world, accumulate=False):
    """3 SGD-momentum steps on this process's rows of the batch."""
    dt.manual_seed(0)
    ddp = dist.DistributedDataParallel(model())
    opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x, y = data()
    sampler = dist.DistributedSampler(TensorDataset(x, y), shuffle=False)
    rows = np.fromiter(sampler, dtype=np.int64)
    reductions = []
    original = dist.ddp.all_reduce

    def counted(tensor, *args):
        reductions.append(1)
        return original(tensor, *args)
    dist.ddp.all_reduce = counted
    try:
        for _ in range(3):
            opt.zero_grad()
            if accumulate:                           # two micro-batches, one all-reduce
                half = len(rows) // 2
                with ddp.no_sync():
                    nn.functional.mse_loss(ddp(dt.tensor(x[rows[:half]])),
                                           dt.tensor(y[rows[:half]])).backward()
                nn.functional.mse_loss(ddp(dt.tensor(x[rows[half:]])),
                                       dt.tensor(y[rows[half:]])).backward()
            else:
                nn.functional.mse_loss(ddp(dt.tensor(x[rows])), dt.tensor(y[rows])).backward()
            opt.step()
    finally:
        dist.ddp.all_reduce = original
    return {"rows": rows.tolist(), "weights": [p.data.tolist() for p in ddp.parameters()],
            "all_reduces": len(reductions)}


class TwoHeads(nn.Module):
    """A head the forward never uses (replica_program.py takes it from here too)."""

    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(2, 1), nn.Linear(2, 1)

    def forward(self, x):
        return self.used(x)


def unused(find_unused_parameters):
    dt.manual_seed(0)
    ddp = dist.DistributedDataParallel(TwoHeads(), find_unused_parameters=find_unused_parameters)
    error = None
    try:
        for _ in range(2):
            ddp(dt.ones(2, 2)).sum().backward()
    except RuntimeError as exc:
        error = str(exc)
    return {"error": error, "unused_grad": None if ddp.module.unused.weight.grad is None
            else ddp.module.unused.weight.grad.tolist(),
            "used_grad": ddp.module.used.weight.grad.tolist()}


def collectives(rank, world):
    t = dt.tensor([rank + 1.0, 10.0 * rank])
    dist.all_reduce(t)
    biggest = dt.tensor([float(rank)])
    dist.all_reduce(biggest, dist.ReduceOp.MAX)
    mean = dt.tensor([float(rank)])
    dist.all_reduce(mean, dist.ReduceOp.AVG)
    shared = dt.tensor([float(rank) + 5])
    dist.broadcast(shared, src=1)
    gathered = [dt.zeros(1) for _ in range(world)]
    dist.all_gather(gathered, dt.tensor([rank * 2.0]))
    return {"sum": t.tolist(), "max": biggest.tolist(), "avg": mean.tolist(),
            "broadcast": shared.tolist(), "gathered": [g.tolist() for g in gathered]}


def sampler_epochs():
    dataset = TensorDataset(np.arange(10))
    sampler = dist.DistributedSampler(dataset, seed=3)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler)
    epochs = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        epochs.append([int(v) for (xb,) in loader for v in xb.tolist()])
    return {"epochs": epochs, "batches": len(loader)}


def main(out_dir: str) -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {"rank": rank, "world": world, "start_equal": start_equal(rank),
              "training": training(rank, world),
              "accumulated": training(rank, world, accumulate=True),
              "unused_refused": unused(False), "unused_found": unused(True),
              "collectives": collectives(rank, world), "sampler": sampler_epochs()}
    dist.barrier()
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
