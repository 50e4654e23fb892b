"""The program tests/distributed/test_sync_batchnorm.py runs in 2 processes under mpiexec.

``python sync_bn_program.py OUT_DIR``: each process normalizes its half of one float64 batch
with a SyncBatchNorm (converted from a BatchNorm), in training mode then in evaluation mode,
and writes what it got to ``OUT_DIR/rank<N>.json``; the test compares it with one BatchNorm
given the whole batch in one process.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

SHAPES = {"1d": (8, 3), "2d": (4, 2, 3, 3)}      # the whole batch; each process takes half


def data(kind):
    """The whole batch, the weights the loss puts on each output, and the layer's start."""
    rng = np.random.default_rng({"1d": 1, "2d": 2}[kind])
    x = rng.standard_normal(SHAPES[kind]) * 3 + 1
    upstream = rng.standard_normal(SHAPES[kind])
    return x, upstream


def batchnorm(kind):
    """A float64 BatchNorm with non-trivial parameters and running statistics."""
    layer = (nn.BatchNorm1d if kind == "1d" else nn.BatchNorm2d)(SHAPES[kind][1])
    layer = layer.to(dtype=dt.float64)
    channels = SHAPES[kind][1]
    with dt.no_grad():
        layer.weight.data[...] = np.linspace(0.5, 2.0, channels)
        layer.bias.data[...] = np.linspace(-1.0, 1.0, channels)
        layer.running_mean.data[...] = np.linspace(0.1, 0.3, channels)
        layer.running_var.data[...] = np.linspace(1.0, 2.0, channels)
    return layer


def train_step(layer, x, upstream):
    """One training forward and backward of ``sum(layer(x) * upstream)``: what it gave."""
    inputs = dt.tensor(x, requires_grad=True)
    out = layer(inputs)
    (out * dt.tensor(upstream)).sum().backward()
    return inputs, out


def scenario(kind, rank, world):
    x, upstream = data(kind)
    rows = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    layer = nn.Sequential(batchnorm(kind))
    layer = dist.SyncBatchNorm.convert_sync_batchnorm(layer)
    inputs, out = train_step(layer, x[rows], upstream[rows])
    bn = layer[0]
    grads = {"weight": bn.weight.grad, "bias": bn.bias.grad}
    for grad in grads.values():          # each process has its rows' share: add them up
        dist.all_reduce(grad)
    collectives = []
    original = dist.sync_norm_op.all_reduce

    def counted(*args):
        collectives.append(1)
        return original(*args)
    dist.sync_norm_op.all_reduce = counted
    try:
        bn.eval()
        with dt.no_grad():
            evaluated = bn(dt.tensor(x[rows]))
            eval_collectives = len(collectives)
            bn.use_global_stats = False          # evaluation with the batch's own statistics
            own_stats = bn(dt.tensor(x[rows]))
    finally:
        dist.sync_norm_op.all_reduce = original
    return {"type": type(bn).__name__, "out": out.tolist(), "x_grad": inputs.grad.tolist(),
            "weight_grad": grads["weight"].tolist(), "bias_grad": grads["bias"].tolist(),
            "running_mean": bn.running_mean.tolist(), "running_var": bn.running_var.tolist(),
            "batches": int(bn.num_batches_tracked.item()), "eval_out": evaluated.tolist(),
            "eval_collectives": eval_collectives, "own_stats_out": own_stats.tolist(),
            "own_stats_collectives": len(collectives) - eval_collectives}


def network():
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(),
                         nn.Linear(4, 1)).to(dtype=dt.float64)


def network_data():
    rng = np.random.default_rng(3)
    return rng.standard_normal((8, 3)) * 2, rng.standard_normal((8, 1))


def train(net, rows, steps=3):
    """SGD steps on the mean squared error of ``rows`` of the batch."""
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = network_data()
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(net(dt.tensor(x[rows])), dt.tensor(y[rows])).backward()
        opt.step()
    return net


def with_ddp(rank, world):
    """DistributedDataParallel over the converted network, each process half the batch."""
    model = dist.SyncBatchNorm.convert_sync_batchnorm(network())
    ddp = train(dist.DistributedDataParallel(model),
                slice(rank * 8 // world, (rank + 1) * 8 // world))
    return {"weights": [p.data.tolist() for p in ddp.parameters()],
            "running_var": ddp.module[1].running_var.tolist()}


def main(out_dir: str) -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {kind: scenario(kind, rank, world) for kind in SHAPES}
    result["ddp"] = with_ddp(rank, world)
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
