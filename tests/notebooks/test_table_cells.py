"""The names tables, cell by cell: every cell of a PyTorch, Paddle or MegEngine column is a claim.

A chapter's "what the frameworks call it" table (a cell tagged ``claim-torch-names-NN``) and
the glossary's table say, row by row, what each framework calls an idea; the README's table
lists Paddle's and MegEngine's own spellings that dltutor takes. A name that resolves
is not enough (``tests/frameworks/test_names.py`` checks that): the cell must do what its row
says. So:

* every PyTorch and Paddle cell, a "—" included, has a test in ``tests/frameworks/`` marked
  ``@row(TABLE, ROW, CELL)`` (``claims.row``) that runs the framework and checks the row's
  meaning (what the code returns, its type, what it changes; for a "—", that the obvious
  spellings are absent). CELL is the cell's text as the test proved it: when the cell changes,
  this register fails until the test is read again and its marker updated;
* every MegEngine cell, a "—" included, has a row in ``notebooks/SOURCES.md``'s section
  "MegEngine, cell by cell" citing the source (file, function, release) and saying what it
  shows; a "—" row says what was searched.

TABLE is the table's claim id with the framework's prefix (``torch-names-04``,
``paddle-names-04``, ``mge-names-04``, ``torch-names-glossary``); ROW is the row's first cell
(the glossary's: its English column). This file runs in the main suite: it reads the sources,
the markers (``ast``) and SOURCES.md, and needs no framework.
"""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
GLOSSARY = ROOT / "notebooks" / "GLOSSARY.md"
README = ROOT / "README.md"
SOURCES = ROOT / "notebooks" / "SOURCES.md"
FRAMEWORK_TESTS = ROOT / "tests" / "frameworks"
CELL_SECTION = "## MegEngine, cell by cell"
TAG = re.compile(r"^claim-torch-names-(\d\d(-[a-z])?)$")
PREFIXES = {"PyTorch": "torch", "Paddle": "paddle", "MegEngine": "mge"}
COMMENT = re.compile(r"<!--.*?-->")


def _framework_names_module():
    """tests/frameworks/names.py (plain Python: it reads the same tables for test_names.py)."""
    spec = importlib.util.spec_from_file_location("framework_names", FRAMEWORK_TESTS / "names.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


markdown_tables = _framework_names_module().markdown_tables


def normal(text: str) -> str:
    """A cell's text with its spacing made even (and HTML comments, the claim marks, out)."""
    return " ".join(COMMENT.sub("", text).split())


def table_cells(text: str, suffix: str) -> dict[tuple[str, str], str]:
    """``{(TABLE, ROW): cell}`` for the framework columns of the tables in ``text``."""
    found = {}
    for table in markdown_tables(text):
        header = [normal(title).split(" ")[0].split(",")[0] for title in table[0]]
        label_at = header.index("English") if "English" in header else 0
        for framework, prefix in PREFIXES.items():
            if framework not in header:
                continue
            at = header.index(framework)
            for row in table[1:]:
                if at < len(row):
                    found[(f"{prefix}-names-{suffix}", normal(row[label_at]))] = normal(row[at])
    return found


def readme_cells() -> dict[tuple[str, str], str]:
    """The README's table of Paddle's and MegEngine's own spellings ("you write (framework)"):
    each row's first cell is the framework's spelling (MegEngine's say so), and is its own ROW."""
    found = {}
    for table in markdown_tables(README.read_text(encoding="utf-8")):
        if normal(table[0][0]).startswith("you write"):
            for row in table[1:]:
                spelling = normal(row[0])
                prefix = "mge" if "(MegEngine" in spelling else "paddle"
                found[(f"{prefix}-names-readme", spelling)] = spelling
    return found


def all_cells() -> dict[tuple[str, str], str]:
    """Every framework cell of every names table: the chapters', the glossary's, the README's."""
    found = {}
    for source in CHAPTERS:
        for cell in jupytext.read(source).cells:
            for tag in cell.metadata.get("tags", []):
                if TAG.match(tag):
                    found.update(table_cells(cell.source.replace("\n#", "\n"),
                                             TAG.match(tag).group(1)))
    found.update(table_cells(GLOSSARY.read_text(encoding="utf-8"), "glossary"))
    found.update(readme_cells())
    return found


def row_markers() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """``{(TABLE, ROW): [(CELL, test), ...]}`` from the ``row(...)`` markers in tests/frameworks."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path in sorted(FRAMEWORK_TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _string_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                        and decorator.func.id == "row"):
                    table, label, cell = (constants[a.id] if isinstance(a, ast.Name)
                                          else ast.literal_eval(a) for a in decorator.args)
                    found.setdefault((table, normal(label)), []).append(
                        (normal(cell), f"{path.name}::{node.name}"))
    return found


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """A test module's names for strings (``T04 = "torch-names-04"``), as markers use them."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:                  # T04 = "..." or T04, P04 = "...", "..."
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for name, value in zip(names, values):
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant):
                    found[name.id] = value.value
    return found


def cited_cells() -> dict[tuple[str, str], list[str]]:
    """``{(TABLE, ROW): [file, function, release, what the source shows]}`` from SOURCES.md."""
    text = SOURCES.read_text(encoding="utf-8")
    section = text.split(CELL_SECTION, 1)[1] if CELL_SECTION in text else ""
    rows = {}
    for table in markdown_tables(section)[:1]:
        for row in table[1:]:
            rows[(normal(row[0]), normal(row[1]))] = [normal(c) for c in row[2:]]
    return rows


CELLS = all_cells()


def test_the_tables_are_read():
    """Every chapter from 00 to 12 and the glossary give cells in all three columns."""
    tables = {table for table, _ in CELLS}
    for prefix in PREFIXES.values():
        assert f"{prefix}-names-glossary" in tables and f"{prefix}-names-04" in tables
    assert {"paddle-names-readme", "mge-names-readme"} <= tables
    assert len(CELLS) > 400


@pytest.mark.parametrize("prefix", ["torch", "paddle"])
def test_every_cell_has_a_test_of_its_meaning(prefix):
    markers = row_markers()
    missing, changed = [], []
    for (table, label), cell in sorted(CELLS.items()):
        if not table.startswith(prefix + "-"):
            continue
        proved = markers.get((table, label), [])
        if not proved:
            missing.append(f"{table} | {label} | {cell}")
        for text, test in proved:
            if text != cell:
                changed.append(f"{table} | {label}: the table reads {cell!r}, {test} proved "
                               f"{text!r}")
    assert not missing, (f"{len(missing)} cells with no test of their meaning (mark one "
                         "@row(TABLE, ROW, CELL) in tests/frameworks):\n" + "\n".join(missing))
    assert not changed, "cells changed since their test proved them:\n" + "\n".join(changed)


def test_every_row_marker_points_at_a_cell():
    orphans = [f"{table} | {label} ({', '.join(t for _, t in tests)})"
               for (table, label), tests in row_markers().items()
               if (table, label) not in CELLS]
    assert not orphans, "row markers that name no cell of a table:\n" + "\n".join(orphans)


def test_every_megengine_cell_cites_the_source():
    cited = cited_cells()
    cells = {key: cell for key, cell in CELLS.items() if key[0].startswith("mge-")}
    missing = [f"{table} | {label} | {cell}" for (table, label), cell in sorted(cells.items())
               if (table, label) not in cited]
    assert not missing, (f"{len(missing)} MegEngine cells with no row in SOURCES.md's "
                         f"'{CELL_SECTION}':\n" + "\n".join(missing))
    orphans = sorted(set(cited) - set(cells))
    assert not orphans, f"rows of '{CELL_SECTION}' that name no MegEngine cell: {orphans}"
    for key, (file, function, release, shows) in cited.items():
        assert file and function and shows, f"{key}: a row needs file, function and a finding"
        assert re.search(r"\d+\.\d+", release), f"{key}: name the release ({release!r})"
        if cells[key].startswith("—"):
            assert "searched" in shows.lower(), f"{key}: a '—' row says what was searched"
