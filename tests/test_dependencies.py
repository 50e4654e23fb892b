"""Every package the kit declares as a dependency is used: a learner's install pulls in nothing
the kit never imports (a declared but unused package is weight, and a sign that something meant
to use it was never written: issue 47 found tqdm declared with no progress bar anywhere).

"Used" means imported (``import x`` or ``from x ...``, in code or in a command line the kit
runs) by the package ``dltutor/`` or by a chapter's source in ``notebooks/src/``; a package that
brings programs and no module (MPICH: ``mpiexec``) is used when the kit names one of them.
"""
from __future__ import annotations

import re
from importlib.metadata import files, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def declared() -> list[str]:
    """The distribution names of pyproject.toml's ``dependencies``, as the installed kit's
    metadata has them (``make test`` reinstalls when pyproject.toml changes); the extras'
    requirements, marked ``extra == ...``, are left out."""
    return [re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()
            for requirement in requires("dltutor") if "extra ==" not in requirement]


def modules_of(distribution: str) -> set[str]:
    """The top-level modules an installed distribution provides (``scikit-learn``: sklearn)."""
    wanted = distribution.replace("_", "-").lower()
    return {module for module, owners in packages_distributions().items()
            if any(owner.replace("_", "-").lower() == wanted for owner in owners)}


def programs_of(distribution: str) -> set[str]:
    """The programs an installed distribution puts in the environment's ``bin/``."""
    return {Path(str(f)).name for f in files(distribution) or []
            if Path(str(f)).parent.name == "bin"}


def named_anywhere(programs: set[str]) -> list[str]:
    """The files of the kit and the chapter sources that name one of ``programs`` in a string."""
    pattern = re.compile(r"[\"'](" + "|".join(map(re.escape, programs)) + r")[\"']")
    files_ = [*(ROOT / "dltutor").rglob("*.py"), *(ROOT / "notebooks" / "src").glob("*.py")]
    return [str(path.relative_to(ROOT)) for path in files_
            if pattern.search(path.read_text(encoding="utf-8"))]


def imported_anywhere(modules: set[str]) -> list[str]:
    """The files of the kit and the chapter sources that import one of ``modules``."""
    pattern = re.compile(r"\b(?:import|from)\s+(?:[\w.]+\s*,\s*)*("
                         + "|".join(map(re.escape, modules)) + r")\b")
    files = [*(ROOT / "dltutor").rglob("*.py"), *(ROOT / "notebooks" / "src").glob("*.py")]
    return [str(path.relative_to(ROOT)) for path in files
            if "chapters" not in path.parts and pattern.search(path.read_text(encoding="utf-8"))]


def test_every_declared_dependency_is_imported_by_the_kit_or_a_chapter():
    unused = {}
    for distribution in declared():
        modules, programs = modules_of(distribution), programs_of(distribution)
        assert modules or programs, f"{distribution} is declared but not installed here: run make test"
        if modules and not imported_anywhere(modules):
            unused[distribution] = sorted(modules)
        elif not modules and not named_anywhere(programs):
            unused[distribution] = sorted(programs)
    assert not unused, ("declared in pyproject.toml's dependencies but imported nowhere in "
                        f"dltutor/ or notebooks/src/: {unused}; use it or drop it")


def test_the_check_sees_an_unused_module():
    assert imported_anywhere({"numpy"}) and not imported_anywhere({"no_such_module_here"})
    assert named_anywhere({"mpiexec"}) and not named_anywhere({"no-such-program"})
    assert imported_anywhere({"voila"})         # "import warnings, voila" in the launcher
