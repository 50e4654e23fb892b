"""The lint and types, checked on every run: ``ruff check`` on the package, its tests, tools and
benchmarks, and ``mypy dltutor``, must both find nothing. What they check, and why each rule is
in or out, is in pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``); both come with
``pip install -e '.[test]'``.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What ruff checks, all with the one rule set of pyproject.toml: the package, and the code that
#: checks it, builds the site and measures it (a bug there hides one in the package).
LINTED = ("dltutor", "tests", "tools", "benchmarks")


def run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m module args`` in the repository root, or skip when it is not installed."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]' brings it")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def test_ruff_finds_nothing_in_the_package_its_tests_tools_and_benchmarks():
    # --no-cache: a test run writes nothing into the checkout
    result = run_tool("ruff", "check", "--no-cache", *LINTED)
    assert result.returncode == 0, (f"ruff check {' '.join(LINTED)}:\n"
                                    f"{result.stdout}{result.stderr}")


def test_mypy_finds_nothing_in_the_package():
    # its cache lives in the system's temporary folder: a second run takes seconds, not a minute
    cache = Path(tempfile.gettempdir()) / "dltutor-mypy-cache"
    result = run_tool("mypy", "--cache-dir", str(cache), "dltutor")
    assert result.returncode == 0, f"mypy dltutor:\n{result.stdout}{result.stderr}"


# -- noqa comments only with a reason ------------------------------------------------------------
#: Where a noqa comment may hide a finding: wherever ruff looks.
NOQA_FOLDERS = LINTED
#: ``noqa: E731 - why`` (or ``(why)``): the codes it silences, then the reason in words.
NOQA_WITH_REASON = re.compile(r"noqa: [A-Z]+[0-9]+(,\s*[A-Z]+[0-9]+)*\s+(- |\()\w")


def noqa_without_reason(source: str) -> list[int]:
    """The lines of ``source`` whose ``# noqa`` comment names no code or gives no reason
    (only comments count: a string that mentions noqa is not one)."""
    comments = [token for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT]
    return [token.start[0] for token in comments
            if re.search(r"#\s*noqa", token.string, re.IGNORECASE)
            and not NOQA_WITH_REASON.search(token.string)]


def test_every_noqa_names_its_codes_and_says_why():
    """A `# noqa` hides a finding from every later reader; the reason is what lets one judge
    whether it still holds (ruff's RUF100 finds the ones that no longer hide anything)."""
    found = [f"{path.relative_to(ROOT)}:{line}"
             for folder in NOQA_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for line in noqa_without_reason(path.read_text(encoding="utf-8"))]
    assert not found, ("a `# noqa` without its codes and a reason; write it as "
                       "`# noqa: E731 - why`:\n" + "\n".join(found))


def test_the_noqa_reader_sees_a_bare_one_and_skips_strings():
    source = ("x = 1  # noqa\ny = 2  # noqa: F841\nz = 3  # noqa: F841 - read by check()\n"
              "text = '# noqa'\n")
    assert noqa_without_reason(source) == [1, 2]


# -- the ops typed array to array ----------------------------------------------------------------
OPS = ROOT / "dltutor" / "autograd" / "ops"


def unannotated_passes(source: str) -> list[str]:
    """``Class.forward`` / ``Class.backward`` in ``source`` that leave a parameter (``self``
    aside) or the result without a type: mypy would not check what such a pass does."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if not (isinstance(method, ast.FunctionDef)
                    and method.name in ("forward", "backward")):
                continue
            arguments = method.args
            params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                      *filter(None, (arguments.vararg, arguments.kwarg))]
            if method.returns is None or any(
                    param.annotation is None for param in params if param.arg != "self"):
                missing.append(f"{node.name}.{method.name}")
    return missing


def test_every_op_is_typed_array_to_array():
    """Each op's forward and backward say what they take and give (``Array``, from
    dltutor/autograd/arrays.py), so mypy checks their bodies too."""
    missing = [f"{path.name}: {name}" for path in sorted(OPS.glob("*.py"))
               for name in unannotated_passes(path.read_text(encoding="utf-8"))]
    assert not missing, ("annotate these (forward(self, a: Array) -> Array, backward(self, g: "
                         "Array) -> tuple[Array | None, ...]):\n" + "\n".join(missing))


def test_the_pass_reader_sees_a_missing_type():
    source = ("class Exp(Function):\n    def forward(self, a: Array) -> Array:\n        ...\n"
              "    def backward(self, g):\n        ...\n"
              "class Cat(Function):\n    def forward(self, *arrays) -> Array:\n        ...\n")
    assert unannotated_passes(source) == ["Exp.backward", "Cat.forward"]
