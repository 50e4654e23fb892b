"""The PyTorch and Paddle twins, as the kit's environment sees them (issue 50).

The kit's environment has no PyTorch: nbval skips the twins (``tests/frameworks/test_twins.py``
runs them in the frameworks environment and compares). Here each twin is checked for the shape
a learner meets (tools/twins.py): it follows the code it mirrors, its first line names its
framework in the notebook's language, it opens folded, it stores what the framework printed,
and the Chinese notebook holds the English twins' code and outputs.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402 - tools/translations.py
import twins  # noqa: E402 - tools/twins.py

SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


def built(source: Path, language: str) -> nbformat.NotebookNode:
    folder = ROOT / "notebooks"
    path = (folder / f"{source.stem}.ipynb" if language == "en"
            else folder / "zh" / translations.chinese_notebook(source.stem))
    return nbformat.read(path, as_version=4)


def twin_cells(nb) -> list:
    return [c for c in nb.cells if twins.twin_framework(c)]


def problems_of_twin(cell, previous, language: str) -> list[str]:
    """What is wrong with one built twin cell (empty when nothing)."""
    framework, tags = twins.twin_framework(cell), twins.tags_of(cell)
    found = []
    if previous is None or previous.cell_type != "code":
        found.append("does not follow a code cell: put it right after the kit's cell it mirrors")
    if not cell.source.startswith(twins.heading(framework, language) + "\n"):
        found.append(f"does not start with {twins.heading(framework, language)!r}: rebuild it")
    if "nbval-skip" not in tags:
        found.append("is not tagged nbval-skip: the kit's environment has no " + framework)
    if cell.metadata.get("jupyter") != {"source_hidden": True, "outputs_hidden": True}:
        found.append("does not open folded (jupyter.source_hidden / outputs_hidden)")
    if not cell.outputs:
        found.append(f"stores no output: a twin shows what {framework} printed")
    if any("image/png" in output.get("data", {}) for output in cell.outputs):
        # The Chinese notebook shows the English twin's outputs: a figure would speak English
        # there (tests/plot/test_figure_words.py); print the numbers it would draw.
        found.append("draws a figure: print the numbers it would draw")
    return found


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_twin_is_folded_named_and_holds_what_its_framework_printed(source, language):
    nb = built(source, language)
    found = [f"cell {i} ({twins.twin_framework(c)} twin) {problem}"
             for i, c in enumerate(nb.cells) if twins.twin_framework(c)
             for problem in problems_of_twin(c, nb.cells[i - 1] if i else None, language)]
    assert not found, f"{source.stem} ({language}):\n" + "\n".join(found)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_twin_follows_code_in_the_source(source):
    cells = jupytext.read(source).cells
    misplaced = [i for i, c in enumerate(cells)
                 if twins.twin_framework(c) and (i == 0 or cells[i - 1].cell_type != "code")]
    assert not misplaced, (f"{source.name}: the twins at cells {misplaced} do not follow the "
                           "kit's code cell they mirror")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_chinese_notebook_holds_the_english_twins(source):
    english, chinese = twin_cells(built(source, "en")), twin_cells(built(source, "zh"))
    assert [twins.without_heading(c.source) for c in chinese] == \
        [twins.without_heading(c.source) for c in english], f"{source.stem}: rebuild both editions"
    assert [c.outputs for c in chinese] == [c.outputs for c in english], (
        f"{source.stem}: the Chinese twins' outputs differ from the English ones: rebuild")


def test_the_checks_see_a_misplaced_unfolded_twin():
    """The shape check itself: a bare twin after prose fails on every count."""
    prose = nbformat.v4.new_markdown_cell("text")
    bare = nbformat.v4.new_code_cell("import torch", metadata={"tags": ["twin-torch"]})
    assert len(problems_of_twin(bare, prose, "en")) == 5


#: The chapters whose lessons have a PyTorch twin (00 welcomes, 12 is the live lab), and the
#: share of their lesson code cells that must have one (issue 50).
CHAPTERS_WITH_TWINS = [p for p in SOURCES if "01" <= p.name[:2] <= "11"]
MIN_SHARE = 0.8


def lesson_code_cells(cells) -> list[int]:
    """The indexes of a chapter's lesson code cells: its code cells but the first (imports and
    seeds), the twins, the cells that only assert, and the exercises (from the cell that loads
    them on)."""
    found, first = [], True
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or twins.twin_framework(cell):
            continue
        if "exercises.chapter(" in cell.source or "from dltutor import exercises" in cell.source:
            break
        if first:
            first = False
            continue
        body = ast.parse(cell.source).body
        if body and not all(isinstance(statement, ast.Assert) for statement in body):
            found.append(index)
    return found


def has_pytorch_twin(cells, index: int) -> bool:
    """Whether a PyTorch twin is among the twins right after cell ``index``."""
    after = index + 1
    while after < len(cells) and twins.twin_framework(cells[after]):
        if twins.twin_framework(cells[after]) == "PyTorch":
            return True
        after += 1
    return False


@pytest.mark.parametrize("source", CHAPTERS_WITH_TWINS, ids=lambda p: p.stem)
def test_most_lesson_cells_have_a_pytorch_twin(source):
    cells = jupytext.read(source).cells
    lesson = lesson_code_cells(cells)
    without = [i for i in lesson if not has_pytorch_twin(cells, i)]
    share = 1 - len(without) / len(lesson)
    assert share >= MIN_SHARE, (
        f"{source.stem}: {share:.0%} of its {len(lesson)} lesson code cells have a PyTorch twin "
        f"(at least {MIN_SHARE:.0%}); cells without one: {without}")
