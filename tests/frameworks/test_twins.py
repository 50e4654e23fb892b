"""The chapters' PyTorch and Paddle twins, run by the real frameworks (issue 50).

Each chapter's twins (tools/twins.py) run again here, in order, in fresh kernels of this
environment (PyTorch's in one, Paddle's in another), with ``DLTUTOR_QUICK=1`` as the notebook build ran them, and what they print must
be what the English notebook stores, compared as nbval compares (streams, plain-text results
and error messages, after tests/nbval_sanitize.cfg's replacements). A twin tagged
``twin-same-numbers`` must also print the numbers its kit cell printed.
"""
from __future__ import annotations

import configparser
import functools
import math
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from claims import claim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import twins  # noqa: E402 - tools/twins.py

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WITH_TWINS = [p for p in NOTEBOOKS
              if any(twins.twin_framework(c) for c in nbformat.read(p, as_version=4).cells)]
#: A number as a chapter prints it: 0.1, -3, 1e-05, 2.5e+03 (not a digit inside a name).
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def sanitizers() -> list[tuple[re.Pattern, str]]:
    """The replacements nbval makes before it compares (tests/nbval_sanitize.cfg)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


SANITIZERS = sanitizers()


def sanitized(text: str) -> str:
    for pattern, replacement in SANITIZERS:
        text = pattern.sub(replacement, text)
    return text


def shown(outputs: list) -> list[tuple[str, str]]:
    """What a learner reads in a cell's outputs, as nbval compares it: each stream's text,
    each result's plain text, each error's name and message; pictures are left out."""
    parts = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            parts.append((output["name"], sanitized(output["text"])))
        elif kind in ("execute_result", "display_data") and "text/plain" in output["data"]:
            parts.append(("result", sanitized(output["data"]["text/plain"])))
        elif kind == "error":
            parts.append(("error", f"{output['ename']}: {sanitized(output['evalue'])}"))
    return parts


def joined_streams(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Neighbouring pieces of one stream joined (how a print is cut depends on timing)."""
    joined: list[tuple[str, str]] = []
    for name, text in parts:
        if joined and joined[-1][0] == name and name in ("stdout", "stderr"):
            joined[-1] = (name, joined[-1][1] + text)
        else:
            joined.append((name, text))
    return joined


def printed_numbers(outputs: list) -> list[float]:
    """Every number in what a cell printed (its streams and results), in order."""
    text = "\n".join(t for kind, t in shown(outputs) if kind != "error")
    return [float(n) for n in NUMBER.findall(text)]


#: PyTorch's CPU kernels as this machine picks them (""), and its plain ones ("default"), as
#: a CPU without AVX runs them: a twin prints nothing whose digits depend on the CPU.
CPU_KERNELS = ["", "default"]


@functools.lru_cache(maxsize=None)
def run_twins(notebook: Path, cpu_kernels: str = "") -> tuple[list, list]:
    """The notebook's twins as stored, and the same cells run afresh here: PyTorch's in order
    in one kernel, Paddle's in another, as the build runs them (once per chapter and kernel
    choice: the tests read the one run). ``cpu_kernels`` names PyTorch's (ATEN_CPU_CAPABILITY)."""
    stored = [c for c in nbformat.read(notebook, as_version=4).cells if twins.twin_framework(c)]
    fresh = {}
    for framework in twins.TWIN_TAGS.values():
        mine = [c for c in stored if twins.twin_framework(c) == framework]
        nb = nbformat.v4.new_notebook()
        # Without the first line the build wrote: that line makes a learner's kernel run the
        # twin apart from the lesson (dltutor/twins.py); here the kernel is the twins' own.
        nb.cells = [nbformat.v4.new_code_cell(twins.without_heading(c.source),
                                              metadata={"tags": twins.tags_of(c)})
                    for c in mine]
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("DLTUTOR_QUICK", "1")
            patch.setenv("DLTUTOR_PROGRESS", "off")
            for name, value in twins.KERNEL_ENV.items():
                patch.setenv(name, value)
            if cpu_kernels:
                patch.setenv("ATEN_CPU_CAPABILITY", cpu_kernels)
            if nb.cells:
                NotebookClient(nb, timeout=600, kernel_name="python3",
                               resources={"metadata": {"path": str(notebook.parent)}}).execute()
        fresh.update({id(old): new for old, new in zip(mine, nb.cells)})
    return stored, [fresh[id(c)] for c in stored]


def kit_cell_before(cells: list, index: int):
    """The kit's code cell that the twin at ``index`` mirrors (skipping its other twins)."""
    for cell in reversed(cells[:index]):
        if cell.cell_type == "code" and not twins.twin_framework(cell):
            return cell
    raise AssertionError(f"twin at cell {index} follows no kit cell")


@claim("torch-readme-twins", "paddle-readme-twins")
@pytest.mark.parametrize("cpu_kernels", CPU_KERNELS, ids=["this-cpu", "plain-kernels"])
@pytest.mark.parametrize("notebook", WITH_TWINS, ids=lambda p: p.stem)
def test_every_twin_prints_what_the_notebook_stores(notebook, cpu_kernels):
    stored, fresh = run_twins(notebook, cpu_kernels)
    differ = [f"twin {i + 1} ({twins.twin_framework(a)}):\n  stored {shown(a.outputs)}\n"
              f"  now    {shown(b.outputs)}"
              for i, (a, b) in enumerate(zip(stored, fresh))
              if joined_streams(shown(a.outputs)) != joined_streams(shown(b.outputs))]
    assert not differ, (f"{notebook.name}: the twins print something else now; rebuild the "
                        "chapter (make notebooks) or fix the twin:\n" + "\n".join(differ))


@pytest.mark.parametrize("notebook", WITH_TWINS, ids=lambda p: p.stem)
def test_a_twin_tagged_same_numbers_prints_the_kit_cells_numbers(notebook):
    cells = nbformat.read(notebook, as_version=4).cells
    tagged = [i for i, c in enumerate(cells)
              if twins.twin_framework(c) and twins.SAME_NUMBERS in twins.tags_of(c)]
    if not tagged:
        pytest.skip(f"{notebook.stem}: no twin claims the kit's numbers")
    _, fresh = run_twins(notebook)
    fresh_by_source = {twins.without_heading(c.source): c for c in fresh}
    for index in tagged:
        kit = printed_numbers(kit_cell_before(cells, index).outputs)
        twin = printed_numbers(fresh_by_source[twins.without_heading(cells[index].source)].outputs)
        assert kit, f"{notebook.stem} cell {index}: the kit cell prints no number to compare"
        assert len(kit) == len(twin) and all(
            math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6) for a, b in zip(kit, twin)), (
            f"{notebook.stem} cell {index}: the kit printed {kit}, "
            f"{twins.twin_framework(cells[index])} printed {twin}")


def test_numbers_are_read_as_printed():
    out = [{"output_type": "stream", "name": "stdout", "text": "fc1.weight 0.25 [-1. 2e-05]\n"}]
    assert printed_numbers(out) == [0.25, -1.0, 2e-05]


def test_a_learner_with_pytorch_runs_twins_apart_from_the_lesson(tmp_path):
    """In a learner's kernel that has the frameworks (dltutor/twins.py), a twin's names never
    replace the lesson's, nor another framework's twins'; a twin's last expression is shown."""
    cells = ["import dltutor as dt\nnet = 'the lesson net'",
             "# In PyTorch\nimport torch\nnet = torch.nn.Linear(2, 1)\ntype(net).__name__",
             "# In Paddle\nprint(net if 'net' in globals() else 'no net here')",
             "# In PyTorch\nprint(type(net).__module__)",
             "print(net)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with pytest.MonkeyPatch.context() as patch:
        for name, value in twins.KERNEL_ENV.items():
            patch.setenv(name, value)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    seen = [text for cell in nb.cells[1:] for _, text in shown(cell.outputs)]
    assert seen == ["'Linear'", "no net here\n", "torch.nn.modules.linear\n",
                     "the lesson net\n"]
