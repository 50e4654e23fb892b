"""The README's map of ``loss.backward()`` (both editions) names every file the call visits.

The map is traced, not remembered: a profiler records which of the package's files run during
``loss.backward()`` on a small network (a convolution, pooling, ReLU, a linear layer and
cross-entropy), and each must be named in the README paragraph that maps the call.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dltutor as dt
from dltutor import nn

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(dt.__file__).resolve().parent


def files_backward_visits() -> set[str]:
    """The package's files (relative to the repository) that run inside ``loss.backward()``."""
    dt.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(8, 3))
    loss = nn.functional.cross_entropy(net(dt.randn(2, 1, 6, 6)), dt.tensor([0, 2]))
    visited: set[str] = set()

    def record(frame, event, arg):
        path = Path(frame.f_code.co_filename).resolve()
        if event == "call" and path.is_relative_to(PACKAGE):
            visited.add(path.relative_to(ROOT).as_posix())

    sys.setprofile(record)
    try:
        loss.backward()
    finally:
        sys.setprofile(None)
    return visited


def backward_map(readme: str) -> str:
    """The paragraph of ``readme`` that maps ``loss.backward()``: it names ``engine.py``."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    found = [p for p in text.split("\n\n") if "loss.backward()" in p and "engine.py" in p]
    assert len(found) == 1, f"{readme}: no one paragraph names both loss.backward() and engine.py"
    return found[0]


def named_in(paragraph: str, path: str) -> bool:
    """A file is named by its path, or by its folder when the paragraph names ``ops/``."""
    return f"`{path}`" in paragraph or f"`{Path(path).name}`" in paragraph or (
        "/ops/" in path and "ops/`" in paragraph)


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readme_names_every_file_loss_backward_visits(readme):
    paragraph = backward_map(readme)
    visited = files_backward_visits()
    assert "dltutor/autograd/engine.py" in visited       # the trace did see the engine
    missing = sorted(path for path in visited if not named_in(paragraph, path))
    assert not missing, f"{readme}'s map of loss.backward() does not name {missing}"
