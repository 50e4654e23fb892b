"""The shape of dltutor.lab, kept: the controller never imports its view (not even inside a
function), and the training loop and the status line run without ipywidgets. (No cycles, no
private names between files and the line budget are tests/test_architecture.py's, for the
whole package.)"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[2] / "dltutor" / "lab"
VIEW_MODULES = {"widgets", "chart", "app", "status", "pacing", "controls"}


def imports(module: str) -> list[tuple[str, list[str]]]:
    """Every import in the module, at the top or inside a function: (what is imported from,
    the names). ``from .widgets import LabView`` gives (".widgets", ["LabView"])."""
    found = []
    for node in ast.walk(ast.parse((LAB / f"{module}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
    return found


def test_the_controller_never_imports_its_view():
    for source, names in imports("controller"):
        parts = set(source.strip(".").split(".")) | set(names)
        assert not parts & VIEW_MODULES, f"controller.py imports {source} {names}"


@pytest.mark.parametrize("module", ["controller", "pacing", "status"])
def test_the_loop_the_controller_and_the_status_line_need_no_widgets(module):
    for source, _ in imports(module):
        assert source.split(".")[0] not in {"ipywidgets", "anywidget"}, (module, source)
