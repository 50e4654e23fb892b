"""dltutor's side of test_zero_syncbn_referee.py: the ZeroRedundancyOptimizer scenarios of
``zero_torch_program.py``, on the same numbers, in 2 processes under ``mpiexec -n 2``.

``mpiexec -n 2 python zero_kit_program.py INPUTS.npz CASES.json OUT_DIR``: each process writes
what it saw to ``OUT_DIR/kit<rank>.json``, with the keys of PyTorch's side (the partitions of
the 2 processes only: the test asks ``assign_ranks`` for the other group sizes).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

STEPS = 3
OPTIMIZERS = {"sgd": (optim.SGD, {"lr": 0.1, "momentum": 0.9}),
              "adam": (optim.Adam, {"lr": 0.01})}


def owners(shapes):
    """The process the kit's ZeroRedundancyOptimizer gives each parameter (its rank_of)."""
    params = [[nn.Parameter(dt.zeros(*shape)) for shape in shapes_of_group]
              for shapes_of_group in shapes]
    opt = dist.ZeroRedundancyOptimizer([{"params": ps} for ps in params], optim.SGD, lr=0.1)
    return [[opt.rank_of(p) for p in ps] for ps in params]


def mlp(arrays):
    """The MLP whose starting weights the test saved (and copied into PyTorch's)."""
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    for name, p in net.named_parameters():
        p.data[...] = arrays[name]
    return net


def train(net, opt, arrays):
    x, y = dt.tensor(arrays["x"]), dt.tensor(arrays["y"])
    for _ in range(STEPS):
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()


def plain_values(state_dict):
    """A state dict with its tensors as lists (JSON)."""
    def value(v):
        return v.tolist() if hasattr(v, "tolist") else list(v) if isinstance(v, tuple) else v
    return {**{k: v for k, v in state_dict.items() if k not in ("state", "param_groups")},
            "state": {key: {k: value(v) for k, v in entry.items()}
                      for key, entry in state_dict["state"].items()},
            "param_groups": [{k: value(v) for k, v in g.items()}
                             for g in state_dict["param_groups"]]}


def sharded(kind, arrays, rank):
    rule, settings = OPTIMIZERS[kind]
    net, plain_net = mlp(arrays), mlp(arrays)
    zero = dist.ZeroRedundancyOptimizer(net.named_parameters(), rule, **settings)
    plain = rule(plain_net.named_parameters(), **settings)
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


def main(inputs: str, cases_file: str, out_dir: str) -> None:
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    arrays = dict(np.load(inputs))
    cases = json.loads(Path(cases_file).read_text())
    result = {"rank": rank, "world": dist.get_world_size(),
              "partitions": {name: {"2": owners(shapes)} for name, shapes in cases.items()},
              **{kind: sharded(kind, arrays, rank) for kind in OPTIMIZERS}}
    dist.barrier()
    (Path(out_dir) / f"kit{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:4])
