"""The chapters: sources and notebooks in step, clean stored outputs, and a complete FAQ index.

nbval (run by ``make test``) re-executes every notebook and compares the outputs; these tests
check what nbval does not: that each notebook was built from its current source, has no widget
state or error output, and that notebooks/FAQ.md answers every learner question.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import sys

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import twins  # noqa: E402 - tools/twins.py
NOTEBOOKS = ROOT / "notebooks"
SOURCES = sorted((NOTEBOOKS / "src").glob("*.py"))

FAQ_IDS = ([f"A{i}" for i in range(1, 6)] + [f"I{i}" for i in range(1, 9)]
           + [f"T{i}" for i in range(1, 6)] + [f"O{i}" for i in range(1, 12)]
           + [f"F{i}" for i in range(1, 5)] + [f"C{i}" for i in range(1, 5)]
           + [f"D{i}" for i in range(1, 6)] + ["G1", "G2", "L1"])


def code_cells(nb) -> list[str]:
    """The code of each code cell; a twin's without the first line the build gives it."""
    return [twins.without_heading(c.source).strip() for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_was_built_from_its_current_source(source):
    target = NOTEBOOKS / f"{source.stem}.ipynb"
    assert target.exists(), f"{target.name} is missing: run `make notebooks NAMES={source.stem}`"
    built = nbformat.read(target, as_version=4)
    assert code_cells(built) == code_cells(jupytext.read(source)), (
        f"{target.name} is stale: its code differs from {source.name}; run `make notebooks "
        f"NAMES={source.stem}`")


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("zh/*.ipynb")),
                         ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_stored_notebook_is_clean(notebook):
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], "widget state must not be committed"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("execution_count") is not None, f"cell {index} was never run"
        tags = cell.get("metadata", {}).get("tags", [])
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error" or "raises-exception" in tags, \
                f"cell {index} stores an error"
            assert "application/vnd.jupyter.widget-view+json" not in output.get("data", {}) \
                or "nbval-ignore-output" in tags, f"cell {index} stores a widget view untagged"
        assert not ("timing" in tags and cell.get("outputs")), \
            f"cell {index} is tagged timing but stores this machine's seconds: rebuild it"
        streams = [(o["output_type"], o.get("name")) for o in cell.get("outputs", [])]
        assert all(a != b or a[0] != "stream" for a, b in zip(streams, streams[1:])), \
            f"cell {index} stores one stream in pieces (cut by timing): rebuild it"


def headings(notebook: Path) -> set[str]:
    """JupyterLab's anchors for the notebook's headings: the text with spaces as dashes."""
    nb = nbformat.read(notebook, as_version=4)
    anchors = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                match = re.match(r"#+\s+(.*)", line)
                if match:
                    anchors.add(match.group(1).strip().replace(" ", "-"))
    return anchors


def faq_links() -> dict[str, list[str]]:
    text = (NOTEBOOKS / "FAQ.md").read_text(encoding="utf-8")
    links: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.match(r"\|\s*([A-Z]\d+)\s*\|", line)
        if match:
            links[match.group(1)] = re.findall(r"\]\(([^)]+)\)", line)
    return links


def test_faq_index_answers_every_question_with_a_working_link():
    links = faq_links()
    shared = ROOT.parent / "shared" / "FAQ.md"
    if shared.exists():  # the list the kit was specified from, when it is beside the clone
        ids = set(re.findall(r"^\|\s*([A-Z]\d+)\s*\|", shared.read_text(encoding="utf-8"), re.M))
        assert ids == set(FAQ_IDS), "FAQ ids changed; update FAQ_IDS in this test"
    missing = [i for i in FAQ_IDS if not links.get(i)]
    assert not missing, f"notebooks/FAQ.md has no link for {missing}"
    for faq_id, targets in links.items():
        for target in targets:
            name, _, anchor = target.partition("#")
            notebook = NOTEBOOKS / name
            assert notebook.exists(), f"{faq_id}: {name} does not exist"
            assert anchor in headings(notebook), f"{faq_id}: {name} has no heading #{anchor}"
