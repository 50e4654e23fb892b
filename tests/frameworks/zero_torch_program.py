"""PyTorch's side of test_zero_syncbn_referee.py: ZeroRedundancyOptimizer and SyncBatchNorm in
gloo process groups of 1, 2 and 4 processes.

``python zero_torch_program.py INPUTS.npz CASES.json OUT_DIR`` starts 4 processes with
``torch.multiprocessing.spawn``; they meet through a file in OUT_DIR and make the groups of
processes [0], [0, 1] and [0, 1, 2, 3]. Rank 0 writes what it saw to ``OUT_DIR/torch0.json``,
rank 1 to ``torch1.json`` (ranks 2 and 3 only make up the group of 4):

* ``partitions``: for each case of CASES.json (groups of parameter shapes) and each group
  size, the process that PyTorch's own ZeroRedundancyOptimizer gives each parameter;
* ``sgd`` and ``adam``: 3 steps of ZeroRedundancyOptimizer on the 2-process group, every
  process on the whole batch; the weights, and on rank 0 the state consolidated there beside
  a plain optimizer's;
* ``sync_bn``: what SyncBatchNorm does with a CPU input once a group exists.
"""
from __future__ import annotations

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
from torch.distributed.optim import ZeroRedundancyOptimizer

WORLD = 4
STEPS = 3
OPTIMIZERS = {"sgd": (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
              "adam": (torch.optim.Adam, {"lr": 0.01})}


def owners(shapes, group):
    """The rank PyTorch's ZeroRedundancyOptimizer (over ``group``) gives each parameter of
    the parameter groups ``shapes``, read from the object (its ``_param_to_rank``)."""
    params = [[nn.Parameter(torch.zeros(shape)) for shape in shapes_of_group]
              for shapes_of_group in shapes]
    opt = ZeroRedundancyOptimizer([{"params": ps} for ps in params], torch.optim.SGD,
                                  process_group=group, lr=0.1)
    return [[opt._param_to_rank[p] for p in ps] for ps in params]


def mlp(arrays):
    """The MLP of the kit's side, starting from the kit's weights (saved by the test)."""
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.from_numpy(arrays[name]))
    return net


def train(net, opt, arrays):
    """STEPS steps on the whole batch (every process computes the same gradients)."""
    x, y = torch.from_numpy(arrays["x"]), torch.from_numpy(arrays["y"])
    for _ in range(STEPS):
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()


def plain_values(state_dict):
    """A state dict with its tensors as lists (JSON)."""
    def value(v):
        return v.tolist() if isinstance(v, torch.Tensor) else v
    return {"state": {str(key): {k: value(v) for k, v in entry.items()}
                      for key, entry in state_dict["state"].items()},
            "param_groups": [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()}
                             for g in state_dict["param_groups"]]}


def sharded(kind, arrays, pair, rank):
    """ZeroRedundancyOptimizer on the group ``pair`` and a plain optimizer, STEPS steps each."""
    rule, settings = OPTIMIZERS[kind]
    net, plain_net = mlp(arrays), mlp(arrays)
    zero = ZeroRedundancyOptimizer(net.parameters(), rule, process_group=pair, **settings)
    plain = rule(plain_net.parameters(), **settings)
    train(net, zero, arrays)
    train(plain_net, plain, arrays)
    zero.consolidate_state_dict(to=0)
    result = {"weights": [p.tolist() for p in net.parameters()],
              "plain_weights": [p.tolist() for p in plain_net.parameters()],
              "local_state_entries": len(zero.optim.state)}
    if rank == 0:
        result["consolidated"] = plain_values(zero.state_dict())
        result["plain"] = plain_values(plain.state_dict())
    return result


def sync_bn_on_cpu(group):
    """A training forward and an evaluation forward of SyncBatchNorm over ``group``."""
    bn = nn.SyncBatchNorm(3, process_group=group)
    x = torch.arange(12.0).reshape(4, 3)
    try:
        bn(x)
        training = None
    except ValueError as error:
        training = str(error)
    bn.eval()
    plain = nn.BatchNorm1d(3).eval()
    return {"training_error": training, "eval_same": torch.equal(bn(x), plain(x))}


def worker(rank, inputs, cases_file, out_dir):
    torch.set_num_threads(1)               # 4 processes on a 2-core machine
    tdist.init_process_group("gloo", init_method=f"file://{Path(out_dir) / 'rendezvous'}",
                             rank=rank, world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        groups = {1: tdist.new_group([0]), 2: tdist.new_group([0, 1]), 4: tdist.group.WORLD}
        cases = json.loads(Path(cases_file).read_text())
        partitions = {name: {size: owners(shapes, group) for size, group in groups.items()
                             if rank < size}
                      for name, shapes in cases.items()}
        result = {"rank": rank, "partitions": partitions}
        if rank < 2:
            arrays = dict(np.load(inputs))
            for kind in OPTIMIZERS:
                result[kind] = sharded(kind, arrays, groups[2], rank)
            result["sync_bn"] = {size: sync_bn_on_cpu(groups[size]) for size in (1, 2)
                                 if rank < size}
        tdist.barrier()
        if rank < 2:
            (Path(out_dir) / f"torch{rank}.json").write_text(json.dumps(result))
    finally:
        tdist.destroy_process_group()
    # Done: leave without the interpreter's teardown, where PyTorch (2.13, gloo) now and then
    # aborts at exit (see ddp_torch_program.py), after the results are written.
    os._exit(0)


if __name__ == "__main__":
    mp.spawn(worker, args=tuple(sys.argv[1:4]), nprocs=WORLD, join=True)
