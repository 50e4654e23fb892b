"""PyTorch's side of test_distributed_referee.py: DistributedDataParallel in 2 processes (gloo).

``python ddp_torch_program.py INPUTS.npz OUT_DIR`` starts 2 processes with
``torch.multiprocessing.spawn``; they meet through a file in OUT_DIR, run every scenario of
``ddp_kit_program.py`` (dltutor's side, the same scenarios on the same numbers) and each writes
what it saw to ``OUT_DIR/torch<rank>.json``. The test bounds the whole run with a timeout.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import torch
import torch.distributed as tdist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

WORLD = 2


def mlp(arrays):
    """The MLP of the kit's side, starting from the kit's weights (saved by the test)."""
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.from_numpy(arrays[name]))
    return net


def grads(net):
    return [None if p.grad is None else p.grad.tolist() for p in net.parameters()]


def my_rows(arrays):
    """This process's rows of the data set, by DistributedSampler's rule (no shuffling)."""
    return list(DistributedSampler(range(len(arrays["x"])), shuffle=False))


def loss_of(net, arrays, rows):
    x, y = torch.from_numpy(arrays["x"][rows]), torch.from_numpy(arrays["y"][rows])
    return nn.functional.mse_loss(net(x), y)


def training(arrays):
    """3 SGD-momentum steps, each process on its batches of 4 of its share."""
    ddp = DDP(mlp(arrays))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    dataset = TensorDataset(torch.from_numpy(arrays["x"]), torch.from_numpy(arrays["y"]))
    sampler = DistributedSampler(dataset, shuffle=False)
    steps = 0
    for xb, yb in DataLoader(dataset, batch_size=4, sampler=sampler):
        opt.zero_grad()
        nn.functional.mse_loss(ddp(xb), yb).backward()
        opt.step()
        steps += 1
    return {"rows": list(sampler), "steps": steps,
            "weights": [p.tolist() for p in ddp.module.parameters()]}


def start_equal(rank):
    """Each process builds its own weights (and a buffer); the wrapper makes them rank 0's."""
    torch.manual_seed(100 + rank)
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    net[1].running_mean.fill_(rank + 1.0)
    before = [p.tolist() for p in net.parameters()] + [net[1].running_mean.tolist()]
    DDP(net)
    after = [p.tolist() for p in net.parameters()] + [net[1].running_mean.tolist()]
    return {"before": before, "after": after}


def averaged(arrays):
    """One backward on this process's rows, alone and through the wrapper."""
    rows, alone, net = my_rows(arrays), mlp(arrays), mlp(arrays)
    loss_of(alone, arrays, rows).backward()
    ddp = DDP(net)                # kept: its reducer (and hooks) live as long as it does
    loss_of(ddp, arrays, rows).backward()
    return {"alone": grads(alone), "ddp": grads(net)}


def accumulated(arrays):
    """Two micro-batches: the first inside no_sync(), the second synced."""
    rows, alone, net = my_rows(arrays), mlp(arrays), mlp(arrays)
    first, second = rows[:len(rows) // 2], rows[len(rows) // 2:]
    ddp = DDP(net)
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
    """A model whose forward uses one of its two heads."""

    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(2, 1), nn.Linear(2, 1)

    def forward(self, x):
        return self.used(x)


def unused(find_unused_parameters):
    """Two forward-backward passes that never use ``unused``; where (if anywhere) it stops."""
    torch.manual_seed(0)
    model = TwoHeads()
    ddp = DDP(model, find_unused_parameters=find_unused_parameters)
    error, where = None, None
    for step in (1, 2):
        try:
            out = ddp(torch.ones(2, 2))
        except RuntimeError as exc:
            error, where = str(exc), f"forward {step}"
            break
        out.sum().backward()
    return {"error": error, "where": where,
            "unused_grad": None if model.unused.weight.grad is None
            else model.unused.weight.grad.tolist(),
            "used_grad": model.used.weight.grad.tolist()}


def buffers(arrays, first_in_no_sync=False):
    """BatchNorm's running mean after each of two training forwards on this process's rows
    (the first inside no_sync(), if asked)."""
    rows = my_rows(arrays)
    bn = nn.BatchNorm1d(4)
    ddp = DDP(bn)
    seen, means = [], []
    for step, part in enumerate((rows[:len(rows) // 2], rows[len(rows) // 2:])):
        x = torch.from_numpy(arrays["x"][part])
        with ddp.no_sync() if first_in_no_sync and step == 0 else contextlib.nullcontext():
            (ddp(x) ** 2).sum().backward()
        seen.append(bn.running_mean.tolist())
        means.append(x.mean(0).tolist())
    return {"running_mean": seen, "batch_means": means, "momentum": bn.momentum}


def worker(rank, inputs, out_dir):
    torch.set_num_threads(1)               # 2 processes on a 2-core machine
    tdist.init_process_group("gloo", init_method=f"file://{Path(out_dir) / 'rendezvous'}",
                             rank=rank, world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        arrays = dict(np.load(inputs))
        result = {"rank": tdist.get_rank(), "world": tdist.get_world_size(),
                  "training": training(arrays), "start_equal": start_equal(rank),
                  "averaged": averaged(arrays), "accumulated": accumulated(arrays),
                  "unused_refused": unused(False), "unused_found": unused(True),
                  "buffers": buffers(arrays),
                  "buffers_after_no_sync": buffers(arrays, first_in_no_sync=True)}
        tdist.barrier()
        (Path(out_dir) / f"torch{rank}.json").write_text(json.dumps(result))
    finally:
        tdist.destroy_process_group()
    # Done: leave without the interpreter's teardown, where PyTorch (2.13, gloo) now and then
    # aborts ("terminate called without an active exception", no Python frame left; about one
    # run in five on a busy machine), after the results are written.
    os._exit(0)


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1], sys.argv[2]), nprocs=WORLD, join=True)
