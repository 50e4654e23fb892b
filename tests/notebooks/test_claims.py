"""The register of claims: every statement about PyTorch, Paddle or MegEngine has its referee.

A chapter's markdown cell that says what another framework does carries one tag per claim,
``claim-torch-...``, ``claim-paddle-...`` or ``claim-mge-...`` (the Chinese edition is built
from the same cells, so it carries the same tags). A Markdown page (README, FAQ) marks a claim
with ``<!-- claim: torch-... -->`` in the paragraph, list item or table row that makes it.

* a ``torch-`` or ``paddle-`` id is proved by a test in ``tests/frameworks/`` marked
  ``@claim("id")`` that runs the real framework;
* an ``mge-`` id (MegEngine has no wheel for our Python) or a ``paddle1-`` id (Paddle 1.x's
  ``fluid`` API, gone from Paddle 3) has a row in ``notebooks/SOURCES.md`` that cites the
  framework's source: file, function, release.

This file runs in the main suite (no framework needed): it reads the tags, the markers and the
table, and fails on a claim without a referee, a referee without a claim, or a cell that names a
framework and carries no claim at all.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "notebooks" / "src"
FRAMEWORK_TESTS = ROOT / "tests" / "frameworks"
MEGENGINE_TABLE = ROOT / "notebooks" / "SOURCES.md"
# Pages outside the chapters that speak about the frameworks; each pair must carry equal ids.
PAGES = [(ROOT / "README.md", ROOT / "README.zh.md"),
         (ROOT / "notebooks" / "FAQ.md", ROOT / "notebooks" / "zh" / "FAQ.md")]
BILINGUAL_PAGES = [ROOT / "notebooks" / "GLOSSARY.md"]      # one page in both languages

ID = re.compile(r"^(torch|paddle|paddle1|mge)-[a-z0-9]+(-[a-z0-9]+)*$")
PAGE_MARK = re.compile(r"<!--\s*claim:\s*([a-z0-9-]+)\s*-->")
# A cell that names a framework or a framework's module says something about it.
NAMES_A_FRAMEWORK = re.compile(r"PyTorch|Paddle|MegEngine|\btorch\.|\bpaddle\.|\bmge\.|\bmegengine\b")


NAMES_TABLE = re.compile(r"^(torch|paddle)-names-(\d\d(-[a-z])?|glossary)$")
CITED = ("mge-", "paddle1-")     # claims proved by citing source, not by running it
# SOURCES.md's second table, one row per MegEngine cell of a names table (test_table_cells.py)
CELL_SECTION = "## MegEngine, cell by cell"


def chapter_sources() -> list[Path]:
    return sorted(SOURCES.glob("[0-9][0-9]_*.py"))


def cell_claims() -> dict[str, list[str]]:
    """``{claim id: [where, ...]}`` from the tags of every chapter's markdown cells."""
    found: dict[str, list[str]] = {}
    for source in chapter_sources():
        for index, cell in enumerate(jupytext.read(source).cells):
            for tag in cell.metadata.get("tags", []):
                if tag.startswith("claim-"):
                    found.setdefault(tag[len("claim-"):], []).append(f"{source.stem} cell {index}")
    return found


def page_claims(page: Path) -> list[str]:
    return PAGE_MARK.findall(page.read_text(encoding="utf-8")) if page.exists() else []


def all_claims() -> dict[str, list[str]]:
    found = cell_claims()
    for page in [english for english, _ in PAGES] + BILINGUAL_PAGES:
        for claim_id in page_claims(page):
            found.setdefault(claim_id, []).append(page.name)
    return found


def claims_with_tests() -> dict[str, list[str]]:
    """``{claim id: [test, ...]}`` from the ``claim(...)`` markers in tests/frameworks."""
    found: dict[str, list[str]] = {}
    for path in sorted(FRAMEWORK_TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                        and decorator.func.id == "claim"):
                    for arg in decorator.args:
                        if isinstance(arg, ast.Constant):
                            found.setdefault(arg.value, []).append(f"{path.name}::{node.name}")
    # The names tables are checked row by row by one parametrised test of test_names.py.
    for claim_id in all_claims():
        if NAMES_TABLE.match(claim_id):
            found.setdefault(claim_id, []).append("test_names.py")
    return found


def megengine_rows() -> dict[str, list[str]]:
    """``{claim id: [file, function, release, what it shows]}`` from notebooks/SOURCES.md."""
    rows: dict[str, list[str]] = {}
    if not MEGENGINE_TABLE.exists():
        return rows
    claims_part = MEGENGINE_TABLE.read_text(encoding="utf-8").split(CELL_SECTION, 1)[0]
    for line in claims_part.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells and cells[0].strip("`").startswith(CITED):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_claim_id_is_well_formed():
    bad = {i: where for i, where in {**all_claims(), **claims_with_tests()}.items() if not ID.match(i)}
    assert not bad, f"claim ids must look like torch-..., paddle-... or mge-... (lower case): {bad}"


def test_every_cell_that_names_a_framework_carries_a_claim():
    missing = []
    for source in chapter_sources():
        for index, cell in enumerate(jupytext.read(source).cells):
            tags = cell.metadata.get("tags", [])
            if (cell.cell_type == "markdown" and NAMES_A_FRAMEWORK.search(cell.source)
                    and not any(t.startswith("claim-") for t in tags)):
                missing.append(f"{source.stem} cell {index}: {cell.source.splitlines()[0][:70]}")
    assert not missing, ("these cells say something about PyTorch, Paddle or MegEngine but carry "
                         "no claim-... tag (give each claim an id and a referee):\n"
                         + "\n".join(missing))


def blocks(text: str) -> list[str]:
    """A Markdown page's paragraphs, list items and tables, without code blocks or headings."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line for line in paragraph.splitlines() if not line.startswith("#")]
        if lines and lines[0].startswith("|"):
            found.append("\n".join(lines))                   # a table: one claim for it all
        else:
            found += [item for item in re.split(r"\n(?=\s*[*-] |\s*\d+\. )", "\n".join(lines)) if item]
    return found


@pytest.mark.parametrize("page", [p for pair in PAGES for p in pair] + BILINGUAL_PAGES,
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_paragraph_of_a_page_that_names_a_framework_carries_a_claim(page):
    bare = [block.strip()[:80] for block in blocks(page.read_text(encoding="utf-8"))
            if NAMES_A_FRAMEWORK.search(block) and not PAGE_MARK.search(block)]
    assert not bare, (f"{page.name}: these paragraphs say something about PyTorch, Paddle or "
                      "MegEngine without a <!-- claim: ID --> mark:\n" + "\n".join(bare))


def test_every_torch_and_paddle_claim_has_a_framework_test():
    tested = claims_with_tests()
    untested = {i: w for i, w in all_claims().items() if not i.startswith(CITED) and i not in tested}
    assert not untested, ("claims with no test in tests/frameworks (add one marked "
                          f"@claim('ID') that runs the framework): {untested}")


def test_every_framework_test_proves_a_claim_a_chapter_makes():
    claims = all_claims()
    orphans = {i: t for i, t in claims_with_tests().items() if i not in claims}
    assert not orphans, f"framework tests whose claim id no chapter or page carries: {orphans}"


def test_every_megengine_and_paddle_1x_claim_cites_source():
    rows = megengine_rows()
    claims = {i: w for i, w in all_claims().items() if i.startswith(CITED)}
    uncited = {i: w for i, w in claims.items() if i not in rows}
    assert not uncited, f"MegEngine / Paddle 1.x claims with no row in notebooks/SOURCES.md: {uncited}"
    orphans = sorted(set(rows) - set(claims))
    assert not orphans, f"rows of notebooks/SOURCES.md that no chapter claims: {orphans}"
    for claim_id, cells in rows.items():
        file, function, release = (cells + ["", "", ""])[:3]
        assert file and function and release, f"{claim_id}: a row needs file, function and release"
        assert re.search(r"\d+\.\d+", release), f"{claim_id}: name the release ({release!r})"


@pytest.mark.parametrize("english, chinese", PAGES, ids=lambda p: p.name)
def test_both_editions_of_a_page_carry_the_same_claims(english, chinese):
    assert sorted(page_claims(english)) == sorted(page_claims(chinese))


def test_the_built_notebooks_carry_the_sources_claims_in_both_editions():
    for source in chapter_sources():
        expected = sorted(t for cell in jupytext.read(source).cells
                          for t in cell.metadata.get("tags", []) if t.startswith("claim-"))
        for built_path in (ROOT / "notebooks" / f"{source.stem}.ipynb",
                           ROOT / "notebooks" / "zh" / f"{source.stem}.zh.ipynb"):
            built = json.loads(built_path.read_text(encoding="utf-8"))
            tags = sorted(t for cell in built["cells"] for t in cell["metadata"].get("tags", [])
                          if t.startswith("claim-"))
            assert tags == expected, f"{built_path.name}: rebuild it (make notebooks)"

