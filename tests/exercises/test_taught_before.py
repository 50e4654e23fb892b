"""Exercises ask only what was taught (issue 49, item 3).

For every exercise of every chapter, the names its reference solution uses (the ``solution=``
of each Exercise in ``dltutor/exercises/chNN.py``) must have been met by a learner who reads
the chapters in order: each appears in a code cell of an earlier chapter, in a code cell of the
exercise's own chapter at or before the exercise's cell, or in the exercise's own text (the
markdown between the previous exercise and this one, in both editions), which then teaches it.
Code in a "Going deeper" section (tools/deeper.py) does not count: a learner who reads only the
core path still meets every exercise's prerequisites (notebooks/AUTHORING.md). Nor does a
PyTorch or Paddle twin (tools/twins.py): it shows another framework's spelling.

What counts as a name the solution uses, read from its syntax tree:

* every attribute read or called (``init.eye_`` -> ``eye_``, ``m.named_children()``);
* every function called by its bare name (``restore_grads()``), unless it is a Python builtin
  or the solution defines it itself;
* every keyword argument (``backward(retain_graph=True)`` -> ``retain_graph=``);
* every name imported (``from dltutor.nn import init`` -> ``init``).

NumPy's functions (``np.full``) and the standard library's (``tempfile.mkdtemp``) are left out:
the authoring guide writes for "a learner who knows Python and NumPy". A code cell shows an attribute when it reads one of that name, a
function when it calls, defines or imports it, a keyword when it passes or defines a parameter
of that name.
"""
from __future__ import annotations

import ast
import builtins
import re
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

import jupytext
import pytest

from dltutor import exercises

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import deeper  # noqa: E402 - tools/deeper.py
import twins  # noqa: E402 - tools/twins.py
import translations  # noqa: E402 - tools/translations.py

SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))

#: Modules whose functions a learner knows before chapter 00 (AUTHORING.md: "a learner who
#: knows Python and NumPy"): NumPy and Python's standard library.
KNOWN_MODULES = {"np", "numpy"} | set(sys.stdlib_module_names)

#: (exercise id, name) pairs allowed to fail for now, each with who owns the fix. The list may
#: only shrink: an entry whose name is taught fails the test until it is taken off.
NOT_YET_TAUGHT: dict[tuple[str, str], str] = {}


class Use(NamedTuple):
    """One name a solution uses: its ``kind`` ("attribute", "call", "keyword") and ``name``;
    ``shown`` is how the failure message writes it (``init.eye_``, ``retain_graph=``)."""

    kind: str
    name: str
    shown: str


# -- what a solution uses --------------------------------------------------------------------
def _defined_by(tree: ast.AST) -> tuple[set[str], set[str]]:
    """What a piece of code defines itself: ``(names, members)``. Names are its variables,
    functions, parameters and imports; members the attributes it assigns and the methods it
    writes (``self.head = ...``, ``def forward`` in a module of its own)."""
    names, members = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            members.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            members.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names, members


def _root(node: ast.expr) -> str | None:
    """The plain name an attribute chain starts from (``nn`` for ``nn.init.eye_``), or None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.Attribute) -> str:
    """How a message writes an attribute: the whole chain when it is made of names only
    (``init.eye_``), else just ``.eye_``."""
    return ast.unparse(node) if _root(node) is not None else "." + node.attr


def uses(solution: str) -> list[Use]:
    """The names ``solution`` uses that a chapter must have taught, in order, each once.

    >>> [u.shown for u in uses("m = dt.nn.Linear(2, 3)\\nfor name, child in m.named_children():\\n"
    ...                        "    print(name, len(child.weight.shape), np.full(2, 1.0))")]
    ['dt.nn.Linear', 'dt.nn', 'm.named_children', 'child.weight.shape', 'child.weight']
    >>> [u.shown for u in uses("loss.backward(retain_graph=True)\\nrestore_grads()")]
    ['loss.backward', 'retain_graph=', 'restore_grads']
    """
    tree = ast.parse(solution)
    own, members = _defined_by(tree)
    assigned = {node.id for node in ast.walk(tree)        # a variable named like a module
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    found: dict[tuple[str, str], Use] = {}
    for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0),
                                                       getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Attribute):
            if _root(node) not in KNOWN_MODULES - assigned and node.attr not in members:
                found.setdefault(("attribute", node.attr), Use("attribute", node.attr,
                                                               _dotted(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in own and node.func.id not in dir(builtins):
                found.setdefault(("call", node.func.id), Use("call", node.func.id, node.func.id))
        elif isinstance(node, ast.keyword) and node.arg is not None:
            found.setdefault(("keyword", node.arg), Use("keyword", node.arg, node.arg + "="))
        elif isinstance(node, ast.ImportFrom) and node.module not in KNOWN_MODULES:
            for alias in node.names:
                found.setdefault(("call", alias.name), Use("call", alias.name, alias.name))
    return list(found.values())


# -- what a code cell shows ------------------------------------------------------------------
class Shown(NamedTuple):
    """The names some code cells show, by kind."""

    attributes: frozenset
    names: frozenset
    keywords: frozenset

    def has(self, use: Use) -> bool:
        if use.kind == "attribute":
            return use.name in self.attributes
        if use.kind == "keyword":
            return use.name in self.keywords
        return use.name in self.names or use.name in self.attributes


def _parsable(code: str) -> str:
    """A code cell without IPython's magics and shell escapes, which Python cannot parse."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in code.splitlines())


def shown_by(code: str) -> Shown:
    """The attributes, functions and keywords a code cell shows.

    >>> shown = shown_by("from dltutor.nn import init\\ninit.eye_(w)\\nf(x, scale=2)")
    >>> sorted(shown.attributes), sorted(shown.keywords), "init" in shown.names
    (['eye_'], ['scale'], True)
    """
    tree = ast.parse(_parsable(code))
    attributes, names, keywords = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            keywords.add(node.arg)
        elif isinstance(node, ast.arg):
            keywords.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.update((node.asname or node.name).split("."))
            names.add(node.name.rsplit(".", 1)[-1])
    return Shown(frozenset(attributes), frozenset(names), frozenset(keywords))


def _union(shown: list[Shown]) -> Shown:
    return Shown(*(frozenset().union(*(getattr(s, field) for s in shown))
                   for field in Shown._fields))


# -- where each exercise sits ----------------------------------------------------------------
class Place(NamedTuple):
    """What a learner has met by the time they do one exercise."""

    chapter: str            # the source's name, "02_parameter_access"
    code: Shown             # every code cell up to and including the exercise's own
    texts: tuple            # the exercise's own markdown: (English, Chinese)


def _checks(code: str) -> set[str]:
    """The exercises (``"q3"``) whose ``check()`` a code cell calls."""
    return set(re.findall(r"\bex\.(q\d+)\.check\(\)", code))


def _chinese_prose(name: str) -> list[str]:
    """The Chinese prose cells of chapter ``name``, which pair in order with its English ones
    (tests/notebooks/test_translations.py keeps them paired); none when it has no Chinese."""
    if not (translations.ZH_SOURCES / f"{name}.py").exists():
        return []
    return [text for _, text in translations.chinese_prose(name)]


def places() -> Iterator[tuple[str, Place]]:
    """(exercise id, its Place) for every exercise of every chapter, in order."""
    earlier: list[Shown] = []
    for source in SOURCES:
        number = source.name[:2]
        chinese = _chinese_prose(source.stem)
        chapter_code: list[Shown] = []
        own_text: list[str] = []                 # the prose cells since the last exercise
        prose_cells = 0
        cells = jupytext.read(source).cells
        folded = deeper.in_deeper_section((cell.cell_type, cell.source) for cell in cells)
        for cell, in_deeper in zip(cells, folded):
            if cell.cell_type == "markdown":
                own_text.append(cell.source)
                prose_cells += 1
                continue
            # A going-deeper section is not the core a learner must read, and a PyTorch or
            # Paddle twin teaches that framework, not the kit.
            if not in_deeper and twins.twin_framework(cell) is None:
                chapter_code.append(shown_by(cell.source))
            checked = _checks(cell.source)
            for q in sorted(checked):
                first = prose_cells - len(own_text)
                yield f"{number}.{q[1:]}", Place(
                    source.stem, _union(earlier + chapter_code),
                    ("\n".join(own_text), "\n".join(chinese[first:prose_cells])))
            if checked or "exercises.chapter(" in cell.source:
                own_text = []            # the next exercise's text starts after this cell
        earlier += chapter_code


def _mentions(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a whole word (``eye_`` in "`init.eye_(w)` fills")."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


PLACES = dict(places())
EXERCISES = exercises.all_exercises()


def untaught(exercise) -> list[Use]:
    """The names ``exercise``'s solution uses that its learner has not met."""
    place = PLACES[exercise.id]
    return [use for use in uses(exercise.code) if not place.code.has(use)
            and not all(_mentions(text, use.name) for text in place.texts)]


def test_every_exercise_is_found_in_its_chapter():
    assert sorted(PLACES) == sorted(e.id for e in EXERCISES)


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_the_solution_uses_only_what_was_taught(exercise):
    missing = [use for use in untaught(exercise) if (exercise.id, use.name) not in NOT_YET_TAUGHT]
    chapter = PLACES[exercise.id].chapter
    assert not missing, "\n".join(
        f"Exercise {exercise.id}'s solution uses {use.shown}, which no code cell before it "
        f"(in {chapter} or an earlier chapter) shows and its own text does not name in both "
        f"editions: show it in a code cell of {chapter} before the exercise, or teach it in "
        f"the exercise's text (English and Chinese)."
        for use in missing)


@pytest.mark.parametrize("key", sorted(NOT_YET_TAUGHT), ids=lambda key: "-".join(key))
def test_the_allow_list_holds_only_what_still_fails(key):
    exercise_id, name = key
    (exercise,) = [e for e in EXERCISES if e.id == exercise_id]
    assert name in {use.name for use in untaught(exercise)}, (
        f"{exercise_id} now teaches {name}: take it off NOT_YET_TAUGHT")


@pytest.mark.parametrize("known", [
    ("02.5", "named_children"), ("02.6", "named_modules"), ("02.6", "recurse"),
    ("03.2", "eye_"), ("08.4", "get_submodule"), ("01.5", "retain_graph")])
def test_the_names_the_teacher_found_are_read_from_the_solutions(known):
    """The reader sees the uses the teacher's review found (issue 49, item 4): whether or not
    they are taught now, each is among the names its solution uses."""
    exercise_id, name = known
    (exercise,) = [e for e in EXERCISES if e.id == exercise_id]
    assert name in {use.name for use in uses(exercise.code)}
