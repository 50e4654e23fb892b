"""The program tests/distributed/test_replicas.py runs in 2 processes under mpiexec.

``python replica_program.py OUT_DIR``: every process runs every scenario (check_replicas, and
the diagnostics on a model trained data-parallel) and writes what it saw to
``OUT_DIR/rank<N>.json``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import diagnose, nn, optim
from mpi_program import TwoHeads  # (beside this file: a program's folder is on its path)


def mlp():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to(dtype=dt.float64)


def train(ddp, opt, rank, steps=3):
    """``steps`` SGD steps, each process on its own rows (so only averaging keeps them equal)."""
    rng = np.random.default_rng(rank)
    for _ in range(steps):
        opt.zero_grad()
        x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 1))
        nn.functional.mse_loss(ddp(dt.tensor(x)), dt.tensor(y)).backward()
        opt.step()


def replicas(rank):
    dt.manual_seed(rank)                                # different starts: DDP makes them equal
    ddp = dist.DistributedDataParallel(mlp())
    opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    train(ddp, opt, rank)
    after_steps = dist.check_replicas(ddp)
    if rank == 1:
        ddp.module[2].weight.data[0, 1] += 0.5          # a hand edit on one process
    edited = dist.check_replicas(ddp)
    bn = nn.BatchNorm1d(2)
    bn.running_mean.data[...] = rank                    # a buffer differs by 1.0
    try:
        dist.check_replicas(nn.Linear(2, 2 + rank))     # not replicas of one model
        refused = None
    except ValueError as exc:
        refused = str(exc)
    return {"after_steps": after_steps.to_dict(), "edited": edited.to_dict(),
            "edited_text": repr(edited), "edited_html": edited._repr_html_(),
            "buffer": dist.check_replicas(bn).to_dict(), "refused": refused}


def unfrozen_after_wrapping(rank):
    """(a) and (c): layer 0 frozen when wrapped, unfrozen after: it trains apart."""
    dt.manual_seed(0)
    net = mlp()
    net[0].requires_grad_(False)
    ddp = dist.DistributedDataParallel(net)
    net[0].requires_grad_(True)
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    train(ddp, opt, rank)
    check = diagnose.why_not_updating(ddp, opt, "module.0.weight", check_replicas=True)
    inner = diagnose.why_not_updating(net, opt, "2.weight", check_replicas=True)
    table = diagnose.summary(ddp, opt, check_replicas=True)
    return {"cause": check.cause, "will_move": check.will_move, "verdict": check.verdict,
            "rows": {r["key"]: [r["status"], r["answer"]] for r in check.rows},
            "inner_cause": inner.cause,
            "inner_rows": {r["key"]: r["status"] for r in inner.rows},
            "in_reducer": [row["in_reducer"] for row in table.rows],
            "summary_lines": table.to_dict()["data_parallel"], "summary_text": repr(table)}


def edited_on_one_rank(rank):
    """(c) alone: every parameter in the reducer, one edited by hand on rank 1."""
    dt.manual_seed(0)
    ddp = dist.DistributedDataParallel(mlp())
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    train(ddp, opt, rank, steps=1)
    if rank == 1:
        ddp.module[0].bias.data[2] -= 0.25
    edited = diagnose.why_not_updating(ddp, opt, "module.0.bias", check_replicas=True)
    untouched = diagnose.why_not_updating(ddp, opt, "module.2.bias", check_replicas=True)
    asked_not = diagnose.why_not_updating(ddp, opt, "module.0.bias")
    return {"edited": [edited.cause, edited.verdict], "untouched": untouched.cause,
            "not_asked": {r["key"]: r["status"] for r in asked_not.rows}}


def unreached(find_unused_parameters):
    """(b): a head the forward never uses."""
    dt.manual_seed(0)
    ddp = dist.DistributedDataParallel(TwoHeads(), find_unused_parameters=find_unused_parameters)
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    before = diagnose.why_not_updating(ddp, opt, "module.unused.weight").rows
    ddp(dt.ones(2, 2)).sum().backward()
    check = diagnose.why_not_updating(ddp.module, opt, "unused.weight")
    used = diagnose.why_not_updating(ddp, opt, "module.used.weight")
    return {"before": {r["key"]: r["status"] for r in before}, "cause": check.cause,
            "verdict": check.verdict, "used_cause": used.cause,
            "summary_lines": diagnose.summary(ddp).to_dict()["data_parallel"]}


def main(out_dir: str) -> None:
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    result = {"rank": rank, "replicas": replicas(rank),
              "unfrozen": unfrozen_after_wrapping(rank), "edited": edited_on_one_rank(rank),
              "skipped": unreached(True), "stops": unreached(False)}
    dist.barrier()
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
