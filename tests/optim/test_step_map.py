"""``opt.step()`` reads in three files: the base (optimizer.py), the rule (sgd.py) and the clip.

Traced, not remembered: a profiler records which of the package's files run during one
``opt.step()`` of SGD with momentum, weight decay, an lr multiplier and global-norm clipping.
Besides the layers below the optimizer (the array backend, autograd's ``no_grad`` and the
parameter's own attributes), a reader who follows the step opens only those three files.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dltutor as dt
from dltutor import nn, optim

PACKAGE = Path(dt.__file__).resolve().parent
#: The layers below the optimizer: what the step stands on, not what it does.
BELOW = ("backend.py", "sums_of_squares.py", "autograd/", "nn/parameter.py")  # (the NumPy backend's sums)


def files_step_visits() -> set[str]:
    """The package's files (relative to ``dltutor/``) that run inside one ``opt.step()``."""
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    net[0].weight.lr_mult = 0.5
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4,
                    grad_clip=optim.ClipGradByGlobalNorm(1.0))
    net(dt.randn(3, 4)).sum().backward()
    opt.step()                 # the traced step is the second: momentum buffers exist
    opt.zero_grad()
    net(dt.randn(3, 4)).sum().backward()
    visited: set[str] = set()

    def record(frame, event, arg):
        path = Path(frame.f_code.co_filename).resolve()
        if event == "call" and path.is_relative_to(PACKAGE):
            visited.add(path.relative_to(PACKAGE).as_posix())

    sys.setprofile(record)
    try:
        opt.step()
    finally:
        sys.setprofile(None)
    return visited


def test_sgd_step_reads_three_files():
    visited = files_step_visits()
    read = sorted(path for path in visited if not path.startswith(BELOW))
    assert "optim/sgd.py" in read                       # the trace did see the rule
    assert read == ["optim/clip.py", "optim/optimizer.py", "optim/sgd.py"], read


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readme_names_the_files_opt_step_reads(readme):
    text = (PACKAGE.parent / readme).read_text(encoding="utf-8")
    found = [p for p in text.split("\n\n") if p.startswith("`opt.step()`")]
    assert len(found) == 1, f"{readme}: no one paragraph starts with `opt.step()`"
    read = sorted(path for path in files_step_visits() if not path.startswith(BELOW))
    missing = [path for path in read if f"`dltutor/{path}`" not in found[0]]
    assert not missing, f"{readme}'s map of opt.step() does not name {missing}"
