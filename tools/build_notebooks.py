"""Build the chapter notebooks: ``make notebooks`` (or ``python tools/build_notebooks.py [NAME...]``).

Each chapter is written as a readable Python script, ``notebooks/src/NN_name.py`` in jupytext's
"percent" format (``# %%`` starts a code cell, ``# %% [markdown]`` a text cell, and
``# %% tags=["nbval-ignore-output"]`` gives a cell tags). This script turns each into
``notebooks/NN_name.ipynb``, executes it top to bottom in a fresh ``python3`` kernel and saves it
with its outputs, normalised so that a rebuild on the same machine changes nothing:

* the kernel runs with ``DLTUTOR_QUICK=1``, as the tests do, so long loops are short and the
  stored outputs are exactly what nbval will see (``dt.quick_mode()`` reads it), and with
  ``DLTUTOR_PROGRESS=off``, so the exercise checks of the build record no learner's progress;
* cell ids are numbered, execution timings and widget state are dropped (a cell that shows a
  live widget keeps no output at all, nor does a cell tagged ``timing``), the kernelspec is
  ``python3``, an error a cell shows on purpose is stored as its message alone, and the pieces
  a stream (stdout, stderr) arrived in are joined (how a print is cut into messages depends on
  timing).

Notebooks seed their own random numbers with ``dt.manual_seed``.

**Twins.** A code cell tagged ``twin-torch`` or ``twin-paddle`` is the lesson's code in PyTorch
or Paddle (see ``tools/twins.py``). The build runs the kit's cells in the kit's kernel and then
each framework's twins, in order, in a kernel of the frameworks environment (``.venv-frameworks``,
which ``make notebooks`` creates; PyTorch's and Paddle's in two), so each twin stores what the real framework printed; it gives
each twin its first line (``# In PyTorch``) and folds it. The Chinese notebook takes the English
twins' outputs.

**The Chinese edition.** When ``notebooks/src/zh/NN_name.py`` exists (the chapter's prose in
Chinese, see ``tools/translations.py``), the same command also builds
``notebooks/zh/NN_name.zh.ipynb``: the English notebook's code cells, the Chinese prose cells in
their place, and under the title a cell that switches the kit to Chinese (``dt.set_language("zh")``), so
that verdicts, hints and the lab speak Chinese. It is executed and normalised the same way.
``--lang en`` or ``--lang zh`` builds one edition only.

A progress bar (on stderr, one step a notebook) shows how far the build is; each notebook built
still gets its line on stdout (cells, seconds).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import deeper  # tools/deeper.py, beside this file
import translations  # tools/translations.py, beside this file
import twins  # tools/twins.py, beside this file

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "notebooks" / "src"
OUTPUT = ROOT / "notebooks"
ZH_OUTPUT = OUTPUT / "zh"
#: The cell under the title of every Chinese notebook (the only code the English edition lacks).
LANGUAGE_CELL = ('import dltutor as dt\n\n'
                 'dt.set_language("zh")     # 练习反馈、提示、诊断和实验室界面都用中文')
#: Joins the pieces one stream arrived in (and applies "\r" as a terminal would, as nbval does
#: before it compares).
JOIN_STREAMS = CoalesceStreamsPreprocessor()
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: The Python of the frameworks environment (PyTorch, Paddle) that runs the twins; ``make
#: notebooks`` creates it. ``DLTUTOR_FRAMEWORKS_PYTHON`` names another.
FRAMEWORKS_PYTHON = Path(os.environ.get("DLTUTOR_FRAMEWORKS_PYTHON",
                                        ROOT / ".venv-frameworks" / "bin" / "python"))


def notebook_from_source(source: Path) -> nbformat.NotebookNode:
    """The notebook for one source script, not yet executed, with normalised metadata."""
    nb = jupytext.read(source)
    # Of the source's own metadata only Voilà's is kept: the lab's page names its template
    # there (``voila: template: dltutor``, a page that loads nothing from outside).
    voila = nb.metadata.get("voila")
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    if voila:
        nb.metadata["voila"] = voila
    for index, cell in enumerate(nb.cells):
        cell.id = f"{source.stem[:2]}-{index:03d}"
        tags = cell.metadata.get("tags")
        cell.metadata = {"tags": tags} if tags else {}
    return nb


def execute(nb: nbformat.NotebookNode, folder: Path = OUTPUT, timeout: int = 600,
            python: Path | None = None) -> None:
    """Run every cell in a fresh kernel started in ``folder`` with DLTUTOR_QUICK=1, no
    progress file, and figure texts checked for a translation (as under the tests). The
    kernel is the kit's ``python3``, or one of the interpreter ``python`` (the twins')."""
    os.environ["DLTUTOR_QUICK"] = "1"
    os.environ["DLTUTOR_PROGRESS"] = "off"
    os.environ["DLTUTOR_CHECK_FIGURE_WORDS"] = "1"
    options = dict(timeout=timeout, resources={"metadata": {"path": str(folder)}},
                   record_timing=False, store_widget_state=False)
    if python is None:
        NotebookClient(nb, kernel_name="python3", **options).execute()
        return
    with tempfile.TemporaryDirectory() as kernels:
        NotebookClient(nb, km=kernel_of(python, Path(kernels)), **options).execute()


def kernel_of(python: Path, kernels: Path) -> KernelManager:
    """A kernel manager for an ipykernel run by ``python`` (its spec written under ``kernels``)."""
    spec = kernels / "twins"
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "frameworks", "language": "python", "env": twins.KERNEL_ENV}),
        encoding="utf-8")
    return KernelManager(kernel_name="twins",
                         kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))


def only(nb: nbformat.NotebookNode, framework: str | None) -> nbformat.NotebookNode:
    """The notebook with only the twins of ``framework`` (None: only the kit's cells): the
    same cell objects, so what a kernel stores in them lands in ``nb``."""
    kept = [c for c in nb.cells if twins.twin_framework(c) == framework]
    return nbformat.NotebookNode({**nb, "cells": kept})


def execute_twins(nb: nbformat.NotebookNode, folder: Path) -> None:
    """Run the chapter's PyTorch twins, in order, in a kernel of the frameworks environment,
    and its Paddle twins in another (a PyTorch learner's code and a Paddle learner's)."""
    for framework in twins.TWIN_TAGS.values():
        twin_cells = only(nb, framework)
        if not twin_cells.cells:
            continue
        if not FRAMEWORKS_PYTHON.exists():
            raise SystemExit(f"{FRAMEWORKS_PYTHON} is missing: the chapter's PyTorch and "
                             "Paddle twins run in the frameworks environment. Create it with "
                             "`make notebooks` (or `make test-frameworks`), or name another "
                             "with DLTUTOR_FRAMEWORKS_PYTHON.")
        execute(twin_cells, folder, python=FRAMEWORKS_PYTHON)


def fold_twins(nb: nbformat.NotebookNode) -> None:
    """Hide each twin's code and output until a click opens them (JupyterLab shows the first
    line), and keep nbval away from it (the kit's environment has no PyTorch;
    tests/frameworks/test_twins.py runs it)."""
    for cell in nb.cells:
        if twins.twin_framework(cell) is not None:
            cell.metadata["tags"] = twins.tags_of(cell) + ["nbval-skip"]
            cell.metadata["jupyter"] = {"source_hidden": True, "outputs_hidden": True}


def name_twins(nb: nbformat.NotebookNode, language: str) -> None:
    """Give each twin its first line (``# In PyTorch``), after it ran: in a learner's kernel
    that line runs the twin apart from the lesson's names (dltutor/twins.py), which the
    twins' own kernel must not do."""
    for cell in nb.cells:
        framework = twins.twin_framework(cell)
        if framework is not None:
            cell.source = f"{twins.heading(framework, language)}\n{cell.source}"


def copy_twin_outputs(nb: nbformat.NotebookNode, english: Path) -> None:
    """Give the Chinese notebook's twins the outputs the English build stored (same code,
    same framework: run once). Stops when the English notebook is not built from this code."""
    stored = [c for c in nbformat.read(english, as_version=4).cells if twins.twin_framework(c)]
    ours = [c for c in nb.cells if twins.twin_framework(c)]
    same = len(stored) == len(ours) and all(
        twins.without_heading(a.source) == twins.without_heading(b.source)
        for a, b in zip(stored, ours))
    if not same:
        raise SystemExit(f"{english.relative_to(ROOT)} does not hold this chapter's twins: "
                         "build the English edition first (drop --lang zh)")
    for cell, twin in zip(ours, stored):
        cell.outputs, cell.execution_count = twin.outputs, twin.execution_count


def chinese_notebook(source: Path) -> nbformat.NotebookNode:
    """The Chinese edition of ``source``: its code cells, the Chinese prose in place of the
    English, and the language cell right under the title (a reader sees the chapter's name
    first, not a line of code). Stops with what to do when the prose is out of step."""
    found = translations.problems(source.stem)
    if found:
        raise SystemExit(f"notebooks/zh/{translations.chinese_notebook(source.stem)} cannot be "
                         f"built:\n  "
                         + "\n  ".join(found))
    nb = notebook_from_source(source)
    prose = iter(text for _, text in translations.chinese_prose(source.stem))
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = translations.localize_links(next(prose))
    switch = nbformat.v4.new_code_cell(LANGUAGE_CELL, metadata={"tags": ["language"]})
    # The title is prose and prints nothing, so the switch still runs before any output.
    nb.cells.insert(1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0, switch)
    for index, cell in enumerate(nb.cells):
        cell.id = f"zh-{source.stem[:2]}-{index:03d}"
    return nb


def fold_deeper_sections(nb: nbformat.NotebookNode) -> None:
    """Mark each "Going deeper" heading cell collapsed, so JupyterLab opens the notebook with
    the section folded under its heading (see tools/deeper.py); its cells stay and run."""
    for cell in nb.cells:
        if deeper.opens_deeper_section(cell.cell_type, cell.source):
            cell.metadata["jp-MarkdownHeadingCollapsed"] = True


def normalise(nb: nbformat.NotebookNode) -> None:
    """Drop what changes from run to run or should never be committed."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    for index, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        if any("application/vnd.jupyter.widget-view+json" in output.get("data", {})
               for output in cell.get("outputs", [])):
            # A live widget (the lab) cannot be stored; its text stand-in
            # ("VBox(children=...)") would only show before the cell runs. Keep nothing.
            cell.outputs = []
        if "timing" in cell.metadata.get("tags", []):
            # Seconds measured here are this machine's, this minute's: never committed.
            cell.outputs = []
        if cell.cell_type == "code":
            JOIN_STREAMS.preprocess_cell(cell, {}, index)
        for output in cell.get("outputs", []):
            output.get("metadata", {}).pop("execution", None)
            if output.get("output_type") == "error":
                # The message is the lesson; a traceback through the kit's internals (with this
                # machine's paths) is not. nbval never compares tracebacks.
                output["traceback"] = [f"{output['ename']}: {output['evalue']}"]


def build(source: Path, language: str = "en") -> Path:
    """Build, execute and write one edition of one chapter; returns the notebook's path."""
    if language == "zh":
        nb, folder = chinese_notebook(source), ZH_OUTPUT
        name = translations.chinese_notebook(source.stem)
    else:
        nb, folder, name = notebook_from_source(source), OUTPUT, f"{source.stem}.ipynb"
    fold_deeper_sections(nb)
    fold_twins(nb)
    folder.mkdir(exist_ok=True)
    started = time.perf_counter()
    execute(only(nb, None), folder)
    if language == "zh":
        copy_twin_outputs(nb, OUTPUT / f"{source.stem}.ipynb")
    else:
        execute_twins(nb, folder)
    name_twins(nb, language)
    normalise(nb)
    target = folder / name
    nbformat.write(nb, target)
    # through the bar, which then draws itself again below the line
    tqdm.write(f"{target.relative_to(ROOT)}: {len(nb.cells)} cells, "
               f"{time.perf_counter() - started:.1f} s", file=sys.stdout)
    return target


def editions(sources: list[Path], languages: list[str]) -> list[tuple[Path, str]]:
    """Each notebook to build, as ``(source, language)``: the English edition of every source
    in ``languages``, and the Chinese one where its prose exists.

    >>> [(s.stem, lang) for s, lang in editions([SOURCES / "06_optimizers.py"], ["en", "zh"])]
    [('06_optimizers', 'en'), ('06_optimizers', 'zh')]
    """
    return [(source, language) for source in sources for language in ("en", "zh")
            if language in languages
            and (language == "en" or (SOURCES / "zh" / source.name).exists())]


def main(args: list[str]) -> int:
    languages = ["en", "zh"]
    if "--lang" in args:
        at = args.index("--lang")
        languages, args = [args[at + 1]], args[:at] + args[at + 2:]
    names = args
    sources = sorted(SOURCES.glob("*.py"))
    if names:
        sources = [s for s in sources if any(s.stem.startswith(n) or s.stem == n for n in names)]
        if not sources:
            print(f"no notebook source matches {names}; sources: "
                  f"{', '.join(s.stem for s in sorted(SOURCES.glob('*.py')))}")
            return 1
    for source, language in tqdm(editions(sources, languages), unit="notebook",
                                 file=sys.stderr, desc="notebooks"):
        build(source, language)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
