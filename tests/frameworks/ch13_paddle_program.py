"""The Paddle side of chapter 13's names table (tests/frameworks/test_ch13_processes.py).

Started by ``python -m paddle.distributed.launch --nproc_per_node 2 ch13_paddle_program.py
OUT_DIR``: 2 processes on the CPU. Each wraps models in ``paddle.DataParallel`` (different
starting weights and data per process), with ``no_sync`` and ``find_unused_parameters``, reads
its share from a ``DistributedBatchSampler``, converts a model with
``SyncBatchNorm.convert_sync_batchnorm`` and tries ``group_sharded_parallel(level="os")``, then
writes what it saw to ``OUT_DIR/paddle<rank>.json``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import paddle
import paddle.distributed as dist


class TwoHeads(paddle.nn.Layer):
    """A model whose second head no forward uses."""

    def __init__(self):
        super().__init__()
        self.main = paddle.nn.Linear(3, 1)
        self.aux = paddle.nn.Linear(3, 1)

    def forward(self, x):
        return self.main(x)


def rows(rank: int):
    return paddle.to_tensor(np.full((2, 3), rank + 1.0, dtype="float32"))


def data_parallel(rank: int) -> dict:
    paddle.seed(100 + rank)                          # different starting weights per process
    net = paddle.nn.Linear(3, 1)
    before = net.weight.numpy().tolist()
    model = paddle.DataParallel(net)
    after = net.weight.numpy().tolist()
    model(rows(rank)).sum().backward()               # this process's gradient: 2 x (rank + 1)
    averaged = net.weight.grad.numpy().ravel().tolist()
    net.clear_gradients()
    with model.no_sync():
        model(rows(rank)).sum().backward()
    own = net.weight.grad.numpy().ravel().tolist()
    return {"before": before, "after": after, "averaged": averaged, "no_sync": own}


def unused(rank: int) -> dict:
    paddle.seed(0)
    net = TwoHeads()
    model = paddle.DataParallel(net, find_unused_parameters=True)
    for _ in range(2):                               # a second step: no error
        net.clear_gradients()
        model(rows(rank)).sum().backward()
    return {"aux_grad_none": net.aux.weight.grad is None,
            "main_grad": net.main.weight.grad.numpy().ravel().tolist()}


def sampler() -> list[int]:
    dataset = paddle.io.TensorDataset([paddle.arange(10).astype("float32")])
    batches = paddle.io.DistributedBatchSampler(dataset, batch_size=2, shuffle=True)
    return [i for batch in batches for i in batch]


def sync_batchnorm() -> dict:
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(3, 3), paddle.nn.BatchNorm1D(3))
    weight = model[1].weight
    model = paddle.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    try:
        model.train()
        model(paddle.ones([4, 3]))
        error = None
    except RuntimeError as err:
        error = str(err)
    return {"type": type(model[1]).__name__, "same_weight": model[1].weight is weight,
            "cpu_error": error}


def sharding() -> str | None:
    from paddle.distributed.sharding import group_sharded_parallel
    net = paddle.nn.Linear(6, 1)
    opt = paddle.optimizer.Adam(parameters=net.parameters(), learning_rate=0.01)
    try:
        group_sharded_parallel(net, opt, level="os")
    except AssertionError as err:
        return str(err)
    return None


def main(out_dir: str) -> None:
    dist.init_parallel_env()
    rank = dist.get_rank()
    seen = {"rank": rank, "world": dist.get_world_size(), "data_parallel": data_parallel(rank),
            "unused": unused(rank), "sampler": sampler(), "sync_batchnorm": sync_batchnorm(),
            "sharding_on_cpu": sharding()}
    (Path(out_dir) / f"paddle{rank}.json").write_text(json.dumps(seen))


if __name__ == "__main__":
    main(sys.argv[1])
