"""dltutor's side of test_distributed_referee.py: the scenarios of ``ddp_torch_program.py``,
on the same numbers, in 2 processes under ``mpiexec -n 2``.

``mpiexec -n 2 python ddp_kit_program.py INPUTS.npz OUT_DIR``: each process writes what it saw
to ``OUT_DIR/kit<rank>.json``, with the keys of PyTorch's side.
"""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim
from dltutor.data import DataLoader, TensorDataset


def mlp(arrays):
    """The MLP whose starting weights the test saved (and copied into PyTorch's)."""
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    for name, p in net.named_parameters():
        p.data[...] = arrays[name]
    return net


def grads(net):
    return [None if p.grad is None else p.grad.tolist() for p in net.parameters()]


def my_rows(arrays):
    return list(dist.DistributedSampler(np.arange(len(arrays["x"])), shuffle=False))


def loss_of(net, arrays, rows):
    return nn.functional.mse_loss(net(dt.tensor(arrays["x"][rows])),
                                  dt.tensor(arrays["y"][rows]))


def training(arrays):
    ddp = dist.DistributedDataParallel(mlp(arrays))
    opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    dataset = TensorDataset(arrays["x"], arrays["y"])
    sampler = dist.DistributedSampler(dataset, shuffle=False)
    steps = 0
    for xb, yb in DataLoader(dataset, batch_size=4, sampler=sampler):
        opt.zero_grad()
        nn.functional.mse_loss(ddp(xb), yb).backward()
        opt.step()
        steps += 1
    return {"rows": list(sampler), "steps": steps,
            "weights": [p.tolist() for p in ddp.module.parameters()]}


def start_equal(rank):
    dt.manual_seed(100 + rank)
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    net[1].running_mean.data[...] = rank + 1.0
    before = [p.tolist() for p in net.parameters()] + [net[1].running_mean.tolist()]
    dist.DistributedDataParallel(net)
    after = [p.tolist() for p in net.parameters()] + [net[1].running_mean.tolist()]
    return {"before": before, "after": after}


def averaged(arrays):
    rows, alone, net = my_rows(arrays), mlp(arrays), mlp(arrays)
    loss_of(alone, arrays, rows).backward()
    ddp = dist.DistributedDataParallel(net)
    loss_of(ddp, arrays, rows).backward()
    return {"alone": grads(alone), "ddp": grads(net)}


def accumulated(arrays):
    rows, alone, net = my_rows(arrays), mlp(arrays), mlp(arrays)
    first, second = rows[:len(rows) // 2], rows[len(rows) // 2:]
    ddp = dist.DistributedDataParallel(net)
    with ddp.no_sync():
        loss_of(ddp, arrays, first).backward()
    inside = grads(net)
    loss_of(ddp, arrays, second).backward()
    loss_of(alone, arrays, first).backward()
    alone_first = grads(alone)
    loss_of(alone, arrays, second).backward()
    return {"inside": inside, "after": grads(net), "alone_first": alone_first,
            "alone_sum": grads(alone)}


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(2, 1), nn.Linear(2, 1)

    def forward(self, x):
        return self.used(x)


def unused(find_unused_parameters):
    dt.manual_seed(0)
    model = TwoHeads()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=find_unused_parameters)
    error, where = None, None
    for step in (1, 2):
        try:
            out = ddp(dt.ones(2, 2))
        except RuntimeError as exc:
            error, where = str(exc), f"forward {step}"
            break
        out.sum().backward()
    return {"error": error, "where": where,
            "unused_grad": None if model.unused.weight.grad is None
            else model.unused.weight.grad.tolist(),
            "used_grad": model.used.weight.grad.tolist()}


def buffers(arrays, first_in_no_sync=False):
    rows = my_rows(arrays)
    bn = nn.BatchNorm1d(4)
    ddp = dist.DistributedDataParallel(bn)
    seen, means = [], []
    for step, part in enumerate((rows[:len(rows) // 2], rows[len(rows) // 2:])):
        x = arrays["x"][part]
        with ddp.no_sync() if first_in_no_sync and step == 0 else contextlib.nullcontext():
            out = ddp(dt.tensor(x))
            (out * out).sum().backward()
        seen.append(bn.running_mean.tolist())
        means.append(x.mean(0).tolist())
    return {"running_mean": seen, "batch_means": means, "momentum": bn.momentum}


def main(inputs: str, out_dir: str) -> None:
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    arrays = dict(np.load(inputs))
    result = {"rank": rank, "world": dist.get_world_size(),
              "training": training(arrays), "start_equal": start_equal(rank),
              "averaged": averaged(arrays), "accumulated": accumulated(arrays),
              "unused_refused": unused(False), "unused_found": unused(True),
              "buffers": buffers(arrays),
              "buffers_after_no_sync": buffers(arrays, first_in_no_sync=True)}
    dist.barrier()
    (Path(out_dir) / f"kit{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
