"""PyTorch and Paddle twins: the code a framework's learner writes for a lesson, beside the kit's.

A chapter's source (``notebooks/src/NN_name.py``) places a twin right after the kit's code cell
it mirrors (or after another twin of that cell), as a code cell tagged ``twin-torch`` or
``twin-paddle``. An extra tag ``twin-same-numbers`` says that the numbers the twin prints are
the numbers the kit's cell prints (``tests/frameworks/test_twins.py`` checks it).

* The notebook build (``tools/build_notebooks.py``) gives each twin a first line that names its
  framework (``# In PyTorch``; Chinese ``# 在 PyTorch 中``), hides its code and output
  (JupyterLab 4 shows a hidden cell as its first line: one click opens it), tags it
  ``nbval-skip`` (the kit's environment has no PyTorch), and runs the chapter's PyTorch twins,
  in order, in a kernel of the frameworks environment (``.venv-frameworks``), and its Paddle
  twins in another, to store what the real framework printed. The Chinese notebook takes the English twins' code and outputs.
* ``tests/frameworks/test_twins.py`` runs them again there and compares (nbval's rules).
* The website shows a kit cell and its twins as tabs (``tools/build_site.py``).
* The time label and the cell budget do not count twins (``tests/notebooks/test_chapter_shape.py``).

>>> twin_framework({"cell_type": "code", "metadata": {"tags": ["twin-paddle"]}})
'Paddle'
>>> twin_framework({"cell_type": "code", "metadata": {}}) is None
True
>>> heading("PyTorch", "zh")
'# 在 PyTorch 中'
"""
from __future__ import annotations

from typing import Mapping

# The headings live in the kit, which reads them in a learner's kernel (dltutor/twins.py).
from dltutor.twins import HEADINGS, heading, twin_heading_framework  # noqa: F401 - re-exported for the tools

#: The tag that makes a code cell a twin, and the framework it runs.
TWIN_TAGS = {"twin-torch": "PyTorch", "twin-paddle": "Paddle"}
#: The extra tag of a twin that prints the same numbers as the kit's cell it follows.
SAME_NUMBERS = "twin-same-numbers"
#: Set in the twins' kernels: Paddle's start-up notes (glog, and a warning about a compiler
#: cache that names this machine's paths) are not what the lesson prints; and one thread, as
#: the lessons' networks are small (more threads only wait on each other on a busy machine).
KERNEL_ENV = {"GLOG_minloglevel": "2", "PYTHONWARNINGS": "ignore:No ccache found",
              "OMP_NUM_THREADS": "1"}


def tags_of(cell: Mapping) -> list[str]:
    """A notebook cell's tags (a jupytext or nbformat cell, or a plain dict)."""
    return list(cell.get("metadata", {}).get("tags", []))


def twin_framework(cell: Mapping) -> str | None:
    """The framework a cell is a twin in ("PyTorch", "Paddle"), or None for a kit cell."""
    if cell.get("cell_type") != "code":
        return None
    found = [TWIN_TAGS[tag] for tag in tags_of(cell) if tag in TWIN_TAGS]
    return found[0] if found else None


def without_heading(source: str) -> str:
    """A built twin's code without the first line the build gave it (its source's code).

    >>> without_heading("# In Paddle\\nimport paddle")
    'import paddle'
    """
    first, _, rest = source.partition("\n")
    return rest if twin_heading_framework(first) else source
