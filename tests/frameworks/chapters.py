"""What the framework tests share: a chapter's own code, and Paddle in dynamic-graph mode.

A claim such as "these lines run unchanged in PyTorch with ``torch`` for ``dt``" is proved by
running the chapter's own lines, read from its source, never by a copy that could drift:

>>> "def parameter_table" in chapter_cell("02_parameter_access", "def parameter_table(model):")
True
"""
from __future__ import annotations

import re
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2] / "notebooks" / "src"


def chapter_cell(chapter: str, starts_with: str) -> str:
    """The source of chapter ``chapter``'s one code cell that starts with ``starts_with``; a
    PyTorch or Paddle twin (tagged ``twin-...``: tools/twins.py) is not the chapter's own code."""
    text = (SOURCES / f"{chapter}.py").read_text(encoding="utf-8")
    parts = re.split(r"^(# %%.*)$", text, flags=re.M)       # text, header, body, header, ...
    cells = [body.strip() for header, body in zip(parts[1::2], parts[2::2])
             if "twin-" not in header]
    found = [c for c in cells if c.startswith(starts_with)]
    assert len(found) == 1, f"{chapter}: {len(found)} code cells start with {starts_with!r}"
    return found[0]


def chapter_definition(chapter: str, starts_with: str, namespace: dict) -> dict:
    """Run the first definition (``def``/``class``) of the cell that starts with ``starts_with``
    in ``namespace`` (e.g. ``{"dt": torch}``), leaving out the rest of the cell."""
    cell = chapter_cell(chapter, starts_with)
    definition = re.split(r"\n(?=\S)", cell + "\n")[0]       # up to the first unindented line
    exec(definition, namespace)
    return namespace


def paddle_dynamic():
    """Paddle, in dynamic-graph mode (a static-graph test may have switched it off)."""
    import paddle

    paddle.disable_static()
    return paddle
