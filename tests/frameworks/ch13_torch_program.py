"""The PyTorch side of chapter 13's names table (tests/frameworks/test_ch13_processes.py).

``python ch13_torch_program.py OUT_DIR``: 2 gloo processes on the CPU, started by
``torch.multiprocessing.spawn``, meet through a file in OUT_DIR; each converts a model with
``SyncBatchNorm.convert_sync_batchnorm``, trains a model with ``ZeroRedundancyOptimizer`` around
Adam (measuring its share of the state) and consolidates the state on rank 0, then writes what
it saw to ``OUT_DIR/torch<rank>.json``.
"""
from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as tdist
import torch.multiprocessing as mp
from torch.distributed.optim import ZeroRedundancyOptimizer

WORLD = 2


def state_bytes(optimizer) -> int:
    """The bytes of the tensors in an optimizer's state (Adam's moments; its step counts too)."""
    return sum(v.numel() * v.element_size() for entry in optimizer.state.values()
               for v in entry.values() if torch.is_tensor(v) and v.dim() > 0)


def converted() -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3))
    weight = model[1].weight
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    try:
        model.train()(torch.randn(4, 3))
        error = None
    except ValueError as err:
        error = str(err)
    return {"type": type(model[1]).__name__, "same_weight": model[1].weight is weight,
            "cpu_error": error}


def sharded(rank: int) -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(6, 6) for _ in range(4)], torch.nn.Linear(6, 1))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    plain = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(2, 6)).sum().backward()
    plain.step()                          # the whole state, as one process keeps it
    opt.step()
    opt.consolidate_state_dict(to=0)
    whole = opt.state_dict() if rank == 0 else None
    return {"share_bytes": state_bytes(opt.optim), "plain_bytes": state_bytes(plain),
            "consolidated_entries": None if whole is None else len(whole["state"]),
            "parameters": len(list(model.parameters()))}


def worker(rank: int, out_dir: str) -> None:
    tdist.init_process_group("gloo", init_method=f"file://{Path(out_dir) / 'rendezvous'}",
                             rank=rank, world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        seen = {"rank": rank, "sync_batchnorm": converted(), "zero": sharded(rank)}
        (Path(out_dir) / f"torch{rank}.json").write_text(json.dumps(seen))
    finally:
        tdist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1],), nprocs=WORLD, join=True)
