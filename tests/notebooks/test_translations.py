"""The Chinese edition: its prose pairs with the English prose, and its code is the English code.

Each Chinese chapter is built from two sources (see ``tools/translations.py``): the English
source's code cells and ``notebooks/src/zh/NN_name.py``'s prose cells. These tests fail when an
English prose cell changed after it was translated, when a Chinese notebook was not rebuilt
after either source changed, or when its code differs from the English notebook's in any way
other than the first cell, which switches the kit to Chinese.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks  # noqa: E402 - from tools/, on sys.path above
import translations  # noqa: E402 - from tools/, on sys.path above
import twins  # noqa: E402 - from tools/, on sys.path above

CHINESE = sorted((ROOT / "notebooks" / "src" / "zh").glob("*.py"))


def cells(nb, kind: str) -> list[str]:
    """The sources of the cells of ``kind``; a twin's without the first line the build gives it
    in each edition (tools/twins.py)."""
    return [twins.without_heading(c.source).strip() for c in nb.cells if c.cell_type == kind]


def test_every_chapter_and_the_lab_page_have_a_chinese_edition():
    english = {p.stem for p in (ROOT / "notebooks" / "src").glob("*.py")}
    assert {p.stem for p in CHINESE} == english, "python tools/translations.py skeleton NN"
    built = {p.name for p in (ROOT / "notebooks" / "zh").glob("*.ipynb")}
    assert built == {translations.chinese_notebook(name) for name in english}


@pytest.mark.parametrize("source", CHINESE, ids=lambda p: p.stem)
def test_every_english_prose_cell_has_its_current_translation(source):
    assert translations.problems(source.stem) == []


@pytest.mark.parametrize("source", CHINESE, ids=lambda p: p.stem)
def test_the_chinese_notebook_has_the_english_code_and_the_chinese_prose(source):
    target = ROOT / "notebooks" / "zh" / translations.chinese_notebook(source.stem)
    assert target.exists(), f"run `make notebooks NAMES={source.stem}`"
    built = nbformat.read(target, as_version=4)
    english = jupytext.read(ROOT / "notebooks" / "src" / source.name)
    first, *code = cells(built, "code")
    assert first == build_notebooks.LANGUAGE_CELL.strip()
    # the chapter's title first, then the switch to Chinese (before any code runs)
    assert built.cells[0].cell_type == "markdown" and built.cells[0].source.startswith("# ")
    assert built.cells[1].metadata.get("tags") == ["language"]
    assert code == cells(english, "code"), (
        f"notebooks/zh/{target.name} is stale: its code differs from the English source; run "
        f"`make notebooks NAMES={source.stem}`")
    assert cells(built, "markdown") == [translations.localize_links(text).strip() for _, text in
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


def test_the_chinese_faq_index_is_current_and_every_link_works():
    from .test_notebooks import FAQ_IDS, faq_links, headings

    zh_faq = ROOT / "notebooks" / "zh" / "FAQ.md"
    assert zh_faq.read_text(encoding="utf-8") == translations.chinese_faq(), (
        "notebooks/zh/FAQ.md is stale: run `python tools/translations.py faq`")
    rows = {}
    for line in zh_faq.read_text(encoding="utf-8").splitlines():
        match = translations.FAQ_ROW.match(line)
        if match:
            rows[match.group(1)] = line
    # every question of the English index (the specification's ids and the recipes' R ids)
    assert sorted(rows) == sorted(faq_links()) and set(FAQ_IDS) <= set(rows)
    for faq_id, line in rows.items():
        question = line.split("|")[2]
        assert translations.HAN.search(question), f"{faq_id}: the question is not in Chinese"
        targets = re.findall(r"\]\(([^)]+)\)", line)
        assert targets, f"{faq_id} has no link"
        for target in targets:
            path, _, anchor = target.partition("#")
            notebook = (zh_faq.parent / path).resolve()
            assert notebook.exists(), f"{faq_id}: {path} does not exist"
            assert anchor in headings(notebook), f"{faq_id}: {path} has no heading #{anchor}"


def test_the_chinese_readme_has_the_two_commands_and_the_ways_in():
    readme_zh = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert "make lab" in readme_zh and "make test" in readme_zh and "make lab-zh" in readme_zh
    for link in ("notebooks/zh/FAQ.md", "notebooks/GLOSSARY.md", "README.md"):
        assert f"]({link})" in readme_zh, link
    assert "](README.zh.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("readme, topic", [("README.md", "parameters"),
                                           ("README.zh.md", "参数")])
def test_each_readme_says_what_the_kit_is_then_gives_the_two_commands(readme, topic):
    """A visitor reads what the kit is and whom it is for before any command, and the two
    commands come right after, in the README's first code block."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    before, _, rest = text.partition("```bash\n")
    opening = before.split("\n", 1)[1].strip()             # after the "# dltutor" heading
    assert len(opening) >= 150 and topic in opening and "Jupyter" in opening, opening
    first_block = rest.split("```", 1)[0]
    assert first_block.startswith("make lab") and "\nmake test" in first_block, first_block


def test_both_editions_point_to_the_glossary():
    glossary = (ROOT / "notebooks" / "GLOSSARY.md").read_text(encoding="utf-8")
    glossary = re.sub(r" ?<!--.*?-->", "", glossary)        # the claim ids in its header
    assert "| 中文 | English | dltutor | PyTorch | Paddle | MegEngine |" in glossary
    for welcome in ("notebooks/00_welcome.ipynb", "notebooks/zh/00_welcome.zh.ipynb"):
        prose = cells(nbformat.read(ROOT / welcome, as_version=4), "markdown")
        assert any("GLOSSARY.md" in text for text in prose), welcome
