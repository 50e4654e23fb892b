"""The learner's run: every notebook of both editions, top to bottom, with the full-length loops.

The tests and ``make notebooks`` set ``DLTUTOR_QUICK=1`` so long loops are short; a learner
opening a notebook has it unset and runs them whole. Here each notebook is executed that way,
in a fresh kernel, as "Run All" would: every cell must complete and every assert hold (the
outputs are not compared: they come from longer loops). Cells tagged ``raises-exception`` may
raise, as they do on purpose.

The long loops show a progress bar here (tqdm's, ``disable=dt.quick_mode()``): the learner
waits for them. Under the tests' quick mode they draw none, so no stored output holds a timing.

The English notebooks only. A Chinese notebook runs the English notebook's code
(tests/notebooks/test_translations.py) after a first cell that switches the kit's language, and
the language changes only the text printed, never a number: its full-length run computes what
the English one does here. What the language can break, a Chinese text or figure label, is
checked by nbval's run of every Chinese notebook (the same cells, shorter loops) and by
tests/i18n (every Chinese text takes the English text's fields). Running them again here would
double this, the slowest run of the suite, and could find nothing new; the CPU-variant runs
(tests/notebooks/test_every_machine.py) skip them for the same reason.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

pytestmark = pytest.mark.learner_run


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")),   # English: see above
                         ids=lambda p: str(p.relative_to(NOTEBOOKS).with_suffix("")))
def test_notebook_runs_whole_without_quick_mode(notebook, monkeypatch):
    monkeypatch.delenv("DLTUTOR_QUICK", raising=False)     # the kernel inherits this environment
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}})
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{notebook.name} fails in the learner's run (DLTUTOR_QUICK unset):\n{error}")
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
    for cell in nb.cells:
        if cell.cell_type == "code" and "disable=dt.quick_mode()" in cell.source:
            bars = [o for o in cell.outputs if o.get("data", {}).get("text/plain", "").count("|")]
            assert bars, f"{notebook.name}: no progress bar in the learner's run of\n{cell.source}"
    if "quick mode:" in printed:          # the chapters that print it must say it is off
        assert "quick mode: False" in printed, "the kernel still ran in quick mode"
