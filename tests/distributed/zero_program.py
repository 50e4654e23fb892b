"""The program tests/distributed/test_zero.py runs in 1, 2 and 4 processes under mpiexec.

``python zero_program.py OUT_DIR [CHECKPOINT]``: every process trains the same model with a
ZeroRedundancyOptimizer (SGD with momentum, then Adam) and writes what it saw to
``OUT_DIR/rank<N>.json``. With 2 processes it also saves a checkpoint consolidated on process
0 (``OUT_DIR/checkpoint.safetensors``); given a CHECKPOINT, it resumes from it.
Every process computes the gradient of the whole batch (the same bits in each), so the test
can ask for the weights of a plain optimizer in one process, bit for bit.
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
OPTIMIZERS = {"sgd": (optim.SGD, {"lr": 0.05, "momentum": 0.9}),
              "adam": (optim.Adam, {"lr": 0.01})}


def data():
    rng = np.random.default_rng(0)
    return dt.tensor(rng.standard_normal((16, 6))), dt.tensor(rng.standard_normal((16, 1)))


def model():
    """Four 6x6 layers and a 6x1 one: 175 values, none more than a fifth of them, so each
    process's share shrinks as the processes grow from 1 to 2 to 4."""
    dt.manual_seed(0)
    layers = [m for _ in range(4) for m in (nn.Linear(6, 6), nn.Tanh())]
    return nn.Sequential(*layers, nn.Linear(6, 1)).to(dtype=dt.float64)


def train(net, opt, steps=STEPS, rows=slice(None)):
    x, y = data()
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(net(x[rows]), y[rows]).backward()
        opt.step()


def weights(net):
    return [p.data.tolist() for p in net.parameters()]


def sharded(kind):
    net = model()
    rule, settings = OPTIMIZERS[kind]
    opt = dist.ZeroRedundancyOptimizer(net.named_parameters(), rule, **settings)
    train(net, opt)
    plain_net = model()
    plain = rule(plain_net.named_parameters(), **settings)
    train(plain_net, plain)
    return net, opt, {"weights": weights(net), "state_bytes": dist.zero.optimizer_state_bytes(
        opt.optim), "plain_state_bytes": dist.zero.optimizer_state_bytes(plain),
        "owners": {name: opt.rank_of(p) for name, p in net.named_parameters()}}


def save_checkpoint(net, opt, out_dir, rank):
    """Consolidate on process 0 and save there; what process 1 is told if it asks too."""
    opt.consolidate_state_dict(to=0)
    if rank == 0:
        dt.save({"model": net.state_dict(), "optimizer": opt.state_dict()},
                Path(out_dir) / "checkpoint.safetensors")
        return None
    try:
        opt.state_dict()
    except RuntimeError as error:
        return str(error)
    return "no error"


def resume(checkpoint):
    saved = dt.load(checkpoint)
    net = model()
    net.load_state_dict(saved["model"])
    opt = dist.ZeroRedundancyOptimizer(net.named_parameters(), optim.Adam, lr=0.5)
    opt.load_state_dict(saved["optimizer"])          # lr 0.01 comes back with it
    loaded_bytes = dist.zero.optimizer_state_bytes(opt.optim)
    train(net, opt)
    return {"weights": weights(net), "lr": opt.optim.param_groups[0]["lr"],
            "loaded_state_bytes": loaded_bytes}


def nan_in_one_share():
    """A NaN in the gradient of the last bias only (process 1's with 2 or 4 processes), with
    nonfinite="skip": does any process step?"""
    net = model()
    opt = dist.ZeroRedundancyOptimizer(net.named_parameters(), optim.SGD, lr=0.1,
                                       nonfinite="skip")
    before = weights(net)
    x, y = data()
    nn.functional.mse_loss(net(x), y).backward()
    net[8].bias.grad.data[0] = np.nan
    opt.step()
    return {"unchanged": weights(net) == before, "skipped": opt.optim.skipped_steps,
            "owner": opt.rank_of(net[8].bias)}


def with_ddp(rank, world):
    """DDP (each process its rows) with ZeRO, and with a plain Adam: the same weights."""
    rows = slice(rank * 16 // world, (rank + 1) * 16 // world)
    results = []
    for zero in (True, False):
        ddp = dist.DistributedDataParallel(model())
        opt = (dist.ZeroRedundancyOptimizer(ddp.named_parameters(), optim.Adam, lr=0.01)
               if zero else optim.Adam(ddp.named_parameters(), lr=0.01))
        train(ddp, opt, rows=rows)
        results.append(weights(ddp))
    return results[0] == results[1]


def main(out_dir: str, checkpoint: str | None) -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    result: dict = {"rank": rank, "world": world}
    for kind in OPTIMIZERS:
        net, opt, result[kind] = sharded(kind)
    if world == 2:
        result["unconsolidated_error"] = save_checkpoint(net, opt, out_dir, rank)
    if checkpoint:
        result["resumed"] = resume(checkpoint)
    result["ddp_same"] = with_ddp(rank, world)
    result["nan"] = nan_in_one_share()
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
