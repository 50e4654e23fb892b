"""A twin cell run without its framework: one line that says how to install it, not a traceback.

Many lesson cells of the chapters are followed by a *twin*: the same lesson written in PyTorch
or Paddle (issue 50), whose first line names its framework (``# In PyTorch``, in the Chinese
edition ``# 在 PyTorch 中``). The kit itself never needs either framework, so a learner who
opens a twin in the kit's own environment would meet ``ModuleNotFoundError: No module named
'torch'`` under a traceback, which reads as "the kit is broken", and JupyterLab's Run All would
stop there, short of the rest of the lesson. Inside a notebook (an IPython kernel),
``import dltutor`` therefore registers an input transformer: a twin cell whose framework is not
installed runs as one line, in the learner's language (``dt.set_language``), that says what the
cell is and the command that installs the framework. The cell succeeds, so Run All goes on.
With the framework installed, the twin runs as written, in a namespace of its framework's
twins: a PyTorch twin's ``net`` or ``nn`` never replaces the lesson's.

>>> print(note_for("Paddle"))
This cell shows the lesson in Paddle: it needs paddle, which is not installed here (the kit
itself never needs it). To run it, run this in a cell: %pip install paddlepaddle
>>> twin_heading_framework("# 在 PyTorch 中"), twin_heading_framework("# In numpy")
('PyTorch', None)
"""
from __future__ import annotations

import ast
import importlib.util
import itertools
import linecache
import sys

from . import i18n

__all__ = ["FRAMEWORKS", "HEADINGS", "explain_missing_frameworks", "heading", "note_for",
           "run_twin", "twin_heading_framework"]

#: Each framework a twin runs: (the module it imports, the command that installs it).
#: ``%pip`` installs into the Python the kernel runs, wherever that is; a plain ``pip`` in a
#: terminal may be another Python's. PyTorch's CPU build leaves out the CUDA libraries
#: (gigabytes) of its default build: the twins never use a GPU.
FRAMEWORKS = {
    "PyTorch": ("torch", "%pip install torch --index-url https://download.pytorch.org/whl/cpu"),
    "Paddle": ("paddle", "%pip install paddlepaddle"),
}
#: The first line of a twin in a built notebook, in each edition (tools/build_notebooks.py).
HEADINGS = {"en": "# In {framework}", "zh": "# 在 {framework} 中"}


def heading(framework: str, language: str) -> str:
    """The first line of a ``framework`` twin in a notebook of ``language``.

    >>> heading("PyTorch", "en")
    '# In PyTorch'
    """
    return HEADINGS[language].format(framework=framework)


def twin_heading_framework(line: str) -> str | None:
    """The framework a twin's first line names, or None when the line is not a twin's heading."""
    known = {heading(f, lang): f for f in FRAMEWORKS for lang in HEADINGS}
    return known.get(line.strip())


def note_for(framework: str) -> str:
    """The one line for a twin whose ``framework`` is not installed, in the kit's current
    language.

    >>> "download.pytorch.org/whl/cpu" in note_for("PyTorch")
    True
    >>> with i18n.use_language("zh"):
    ...     "在 PyTorch 中" in note_for("PyTorch")
    True
    """
    module, command = FRAMEWORKS[framework]
    return i18n.text("twins.missing", framework=framework, module=module, command=command)


#: The names each framework's twins have defined in this kernel, apart from the lesson's.
_namespaces: dict[str, dict] = {}
#: Numbers the twins run in this kernel, so each has a file name of its own in tracebacks.
_twins_run = itertools.count(1)


def run_twin(framework: str, code: str) -> None:
    """Run a twin's ``code`` in the namespace of ``framework``'s twins, as a cell runs: the
    value of a last bare expression is shown. The lesson's names (``net``, ``nn``, ``opt``)
    are the kit's; a PyTorch twin's ``net`` must not replace them, nor a Paddle twin's.

    >>> run_twin("PyTorch", "seen = 41")
    >>> run_twin("PyTorch", "print(seen + 1)")
    42
    >>> "seen" in globals()
    False
    """
    namespace = _namespaces.setdefault(framework, {"__name__": "__main__"})
    # Tracebacks through a twin show its lines, as they do for a cell.
    filename = f"<{framework} twin {next(_twins_run)}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, filename, "exec"), namespace)       # the learner's own cell, as written
    if isinstance(last, ast.Expr):
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            sys.displayhook(value)


def run_or_explain(lines: list[str]) -> list[str]:
    """IPython's input transformer for a twin cell (its first line names its framework): with
    the framework installed it runs in that framework's own namespace (:func:`run_twin`);
    without, it prints its note (on stderr, which notebooks show as "did not run"). Every
    other cell is unchanged.

    >>> run_or_explain(["x = 1\\n"])
    ['x = 1\\n']
    """
    framework = twin_heading_framework(lines[0]) if lines else None
    if framework is None:
        return lines
    if importlib.util.find_spec(FRAMEWORKS[framework][0]) is None:
        return [f"print({note_for(framework)!r}, file=__import__('sys').stderr)\n"]
    code = "".join(lines[1:])
    return [f"__import__('dltutor').twins.run_twin({framework!r}, {code!r})\n"]


def explain_missing_frameworks() -> bool:
    """In an IPython kernel, make a twin whose framework is missing print one line and succeed.

    Returns True when the transformer is in place (calling twice adds it once), False outside
    IPython.

    >>> explain_missing_frameworks()        # a doctest runs outside IPython: nothing to do
    False
    """
    # Only look: IPython is imported already when we run inside it, and the kit's engine must
    # never import (or need) it.
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    transformers = shell.input_transformers_cleanup
    # A reload of the kit makes a new function object: compare by name, keep one.
    transformers[:] = [t for t in transformers if getattr(t, "__qualname__", "") !=
                       run_or_explain.__qualname__ or getattr(t, "__module__", "") != __name__]
    transformers.append(run_or_explain)
    return True
