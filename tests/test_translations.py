"""The Chinese edition: its prose pairs with the English prose, and its code is the English code.

Each Chinese chapter is built from two sources (see ``tools/translations.py``): the English
source's code cells and ``notebooks/src/zh/NN_name.py``'s prose cells. These tests fail when an
English prose cell changed after it was translated, when a Chinese notebook was not rebuilt
after either source changed, or when its code differs from the English notebook's in any way
other than the first cell, which switches the kit to Chinese.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks  # noqa: E402
import translations  # noqa: E402

CHINESE = sorted((ROOT / "notebooks" / "src" / "zh").glob("*.py"))


def cells(nb, kind: str) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == kind]


def test_there_is_a_chinese_edition():
    assert {p.stem for p in CHINESE} >= {"00_welcome", "lab"}


@pytest.mark.parametrize("source", CHINESE, ids=lambda p: p.stem)
def test_every_english_prose_cell_has_its_current_translation(source):
    assert translations.problems(source.stem) == []


@pytest.mark.parametrize("source", CHINESE, ids=lambda p: p.stem)
def test_the_chinese_notebook_has_the_english_code_and_the_chinese_prose(source):
    target = ROOT / "notebooks" / "zh" / f"{source.stem}.ipynb"
    assert target.exists(), f"run `make notebooks NAMES={source.stem}`"
    built = nbformat.read(target, as_version=4)
    english = jupytext.read(ROOT / "notebooks" / "src" / source.name)
    first, *code = cells(built, "code")
    assert first == build_notebooks.LANGUAGE_CELL.strip()
    assert built.cells[0].metadata.get("tags") == ["language"]
    assert code == cells(english, "code"), (
        f"notebooks/zh/{target.name} is stale: its code differs from the English source; run "
        f"`make notebooks NAMES={source.stem}`")
    assert cells(built, "markdown") == [text.strip() for _, text in
                                        translations.chinese_prose(source.stem)], (
        f"notebooks/zh/{target.name} is stale: its prose differs from {source.name}")


def test_a_changed_english_cell_is_caught(tmp_path, monkeypatch):
    english = translations.english_prose("00_welcome")
    monkeypatch.setattr(translations, "english_prose",
                        lambda name: [english[0] + " One more sentence."] + english[1:])
    found = translations.problems("00_welcome")
    assert len(found) == 1 and "prose cell 0" in found[0] and "stamp 00_welcome" in found[0]


def test_an_untranslated_cell_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(translations, "ZH_SOURCES", tmp_path)
    english = translations.english_prose("lab")
    translations.write_cells(tmp_path / "lab.py", [(translations.stamp_of(english[0]), english[0])])
    found = translations.problems("lab")
    assert len(found) == 1 and "not translated yet" in found[0]
