"""Every PyTorch and Paddle name in the chapters' name tables exists, with the keywords shown.

A chapter's "what the frameworks call it" table is tagged ``claim-torch-names-NN`` and
``claim-paddle-names-NN``; this module finds those cells, reads the table's PyTorch or Paddle
column and resolves each code span in the real framework (``names.problems``). The names are
resolved against small real objects: ``net`` a Sequential, ``p`` a parameter, ``opt`` an
optimizer, ``x`` a tensor, and so on.
"""
from __future__ import annotations

import builtins
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest

import names
from claims import claim

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CHAPTERS = sorted((NOTEBOOKS / "src").glob("[0-9][0-9]_*.py"))
GLOSSARY = NOTEBOOKS / "GLOSSARY.md"
TAG = re.compile(r"^claim-(torch|paddle)-names-(\d\d(-[a-z])?)$")
PAGE_MARK = re.compile(r"<!--\s*claim:\s*((torch|paddle)-names-glossary)\s*-->")
HEADERS = {"torch": "PyTorch", "paddle": "Paddle"}


def tagged_tables(framework: str) -> dict[str, list[tuple[str, str]]]:
    """``{claim id: [(row label, cell), ...]}`` for every tagged names table of ``framework``:
    chapter cells tagged ``claim-torch-names-NN``, and the glossary where it is marked."""
    texts = [(tag[len("claim-"):], cell.source) for source in CHAPTERS
             for cell in jupytext.read(source).cells
             for tag in cell.metadata.get("tags", [])
             if TAG.match(tag) and TAG.match(tag).group(1) == framework]
    glossary = GLOSSARY.read_text(encoding="utf-8")
    texts += [(m.group(1), glossary) for m in PAGE_MARK.finditer(glossary) if m.group(2) == framework]
    return {claim_id: [row for table in names.markdown_tables(text)
                       for row in names.column(table, HEADERS[framework])]
            for claim_id, text in texts}


def torch_namespace() -> dict:
    import safetensors.torch
    import torch
    import torch.distributed.optim  # chapter 13 names torch.distributed.optim.ZeroRedundancyOptimizer
    import torch.nn.functional as F
    import torchinfo
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = torch.rand(2, 1, 4, 4)
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    net(torch.rand(5, 4)).sum().backward()
    opt.step()                                   # so that opt.state[p] holds a step count
    loss = net(torch.rand(5, 4)).sum()
    sched = torch.optim.lr_scheduler.StepLR(opt, 1)
    return dict(
        __modules__=[torch, torch.nn, torch.optim, torch.optim.lr_scheduler, torch.nn.utils,
                     torch.utils.data, torch.nn.init, builtins],
        __keyword_sources__=[torch.nn.Linear, torch.optim.SGD],
        torch=torch, nn=torch.nn, F=F, init=torch.nn.init, optim=torch.optim, np=np,
        safetensors=safetensors, torchinfo=torchinfo,
        DataLoader=DataLoader, TensorDataset=TensorDataset, **placeholders(),
        net=net, model=net, m=net[0], layer=net[0], module=net[0], p=net[0].weight,
        param=net[0].weight, w=net[0].weight, weight=net[0].weight, x=x, h=x, t=x, y=x,
        a=net[0], b=net[2], loss=loss, bn=torch.nn.BatchNorm1d(3),
        opt=opt, optimizer=opt, self=opt, group=opt.param_groups[0],
        ds=TensorDataset(torch.rand(10, 4), torch.rand(10)), g=torch.Generator(),
        sched=sched, scheduler=sched, state=net.state_dict(), sd=net.state_dict(),
        params=list(net.parameters()), parameters=list(net.parameters()),
    )


def placeholders() -> dict:
    """Values for the names a table uses as arguments (a size, a threshold, a path)."""
    return dict(N=2, n=1, c=3, i=0, e=0, v=1.0, max=1.0, max_norm=1.0, clip_norm=1.0,
                batch_size=4, input_size=(1, 4), path="checkpoint", f=lambda name: True,
                arr=np.zeros((2, 3), dtype=np.float32), array=np.zeros((2, 3), dtype=np.float32),
                param_and_grad=None, block=None, grad=None, fn=lambda module: None, out=2, k=3,
                ids=None, q=None, attr=None)


def paddle_namespace() -> dict:
    import paddle
    import paddle.nn.functional as F
    from paddle.io import DataLoader, TensorDataset

    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 2))
    x = paddle.rand([2, 1, 4, 4])
    loss = net(paddle.rand([5, 4])).sum()
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1)
    opt = paddle.optimizer.Adam(learning_rate=sched, parameters=net.parameters())
    return dict(
        __modules__=[paddle, paddle.nn, paddle.optimizer, paddle.optimizer.lr, paddle.regularizer,
                     paddle.io, paddle.nn.utils, paddle.nn.initializer, builtins],
        __keyword_sources__=[paddle.nn.Linear, paddle.static.nn.fc, paddle.static.nn.embedding,
                             paddle.optimizer.Optimizer],
        paddle=paddle, nn=paddle.nn, F=F, np=np, DataLoader=DataLoader,
        TensorDataset=TensorDataset, **placeholders(),
        net=net, model=net, m=net[0], layer=net[0], module=net[0], p=net[0].weight,
        param=net[0].weight, w=net[0].weight, weight=net[0].weight, x=x, h=x, t=x, y=x,
        a=net[0], b=net[2], loss=loss, bn=paddle.nn.BatchNorm1D(3), exe=paddle.static.Executor(),
        opt=opt, optimizer=opt, self=opt, sched=sched, scheduler=sched, group={"params": []},
        ds=TensorDataset([paddle.rand([10, 4]), paddle.rand([10])]),
        state=net.state_dict(), sd=net.state_dict(), params=net.parameters(),
        parameters=net.parameters(),
    )


TORCH_TABLES = tagged_tables("torch")
PADDLE_TABLES = tagged_tables("paddle")
CASES = [("torch", i, TORCH_TABLES[i]) for i in sorted(TORCH_TABLES)] + \
        [("paddle", i, PADDLE_TABLES[i]) for i in sorted(PADDLE_TABLES)]


@claim(*TORCH_TABLES, *PADDLE_TABLES)
@pytest.mark.parametrize("framework, claim_id, rows", CASES, ids=[case[1] for case in CASES])
def test_every_name_in_the_tables_exists_in_the_framework(framework, claim_id, rows):
    header = HEADERS[framework]
    assert rows, f"{claim_id}: the tagged cell has no table with a {header} column"
    namespace = torch_namespace() if framework == "torch" else paddle_namespace()
    wrong = [f"{label}: {p}" for label, cell in rows for p in names.problems(cell, namespace)]
    assert not wrong, f"{claim_id}: these {header} names do not hold in {header}:\n" + "\n".join(wrong)


def test_the_checker_catches_a_wrong_name():
    namespace = torch_namespace()
    assert names.problems("`torch.nn.init.xavier_uniform_(w, gain=1.0)`", namespace) == []
    assert names.problems("`torch.nn.init.xavier_uniform_(w, gian=1.0)`", namespace)
    assert names.problems("`torch.optim.SGD.clear_grad()`", namespace)
    assert names.problems("`p.detach().numpy()`", namespace) == []
