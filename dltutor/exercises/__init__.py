"""Exercises that answer back: ``check()``, ``hint()`` and ``solution()`` for each chapter.

In a chapter's exercise section::

    from dltutor import exercises
    ex = exercises.chapter("01")

    t = ____                 # your answer here
    ex.q1.check()            # correct / not yet, and what differs / not attempted (coloured)
    ex.q1.hint()             # one hint at a time
    ex.q1.solution()         # an answer, when you want it

``check()`` reads your variables from the notebook, so you write ordinary code. Every verdict
is a short, fixed sentence, shown in a notebook as a box in the colour of its verdict.
:func:`progress` lists every exercise and how it stands. Checks and hints are also written to
a small file beside the notebooks (record.py), so progress survives a restart and a teacher can
gather a class's files with ``dltutor progress DIR ...`` (classtable.py).

>>> ex = chapter("01")
>>> ex.q1.verdict({"t": ____}).status
'not attempted'
>>> len(all_exercises()) >= 5
True
"""
from __future__ import annotations

import importlib
import pkgutil

from ..i18n import text
from . import record
from .checker import Exercise, Verdict, ____
from .view import Progress

__all__ = ["____", "Exercise", "Verdict", "Progress", "UnknownExercise", "chapter",
           "all_exercises", "progress"]


def _load_chapters() -> dict[str, list[Exercise]]:
    """Each module ``chNN`` of this package holds chapter NN's ``EXERCISES``."""
    found = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.startswith("ch") and module[2:].isdigit():
            found[module[2:]] = importlib.import_module(f".{module}", __name__).EXERCISES
    return found


#: The exercises of each chapter, by the chapter's number ("01": [...]).
CHAPTERS: dict[str, list[Exercise]] = _load_chapters()


def _restore_progress() -> None:
    """Give every exercise the status and hints recorded in this learner's progress file, so
    that progress() survives a kernel restart (record.py)."""
    recorded = record.load(record.the_file())
    for exercises in CHAPTERS.values():
        for exercise in exercises:
            if exercise.id in recorded:
                exercise.restore(recorded[exercise.id])


_restore_progress()


class UnknownExercise(AttributeError):
    """An exercise the chapter does not have (``ex.q9`` in a chapter of four). An
    AttributeError, so that ``hasattr`` and tab completion treat it as any missing attribute;
    its message lists the exercises there are, by name, id and title."""


class Chapter:
    """The exercises of one chapter as attributes: ``ex.q1``, ``ex.q2``, ...

    >>> chapter("08").q9                                        # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dltutor.exercises.UnknownExercise: Chapter 08 has no exercise q9. Its exercises are:
      q1  08.1  BatchNorm's running mean
    ...
    """

    def __init__(self, number: str, exercises: list[Exercise]):
        self.number = number
        for exercise in exercises:
            setattr(self, _attribute(exercise), exercise)
        self.exercises = list(exercises)

    def __getattr__(self, name: str) -> Exercise:
        # Only called for an attribute that is not there. Python's own lookups (_repr_html_,
        # __deepcopy__, ...) get the usual short error; a learner's ex.q9 gets the list.
        if name.startswith("_") or "exercises" not in self.__dict__:
            raise AttributeError(f"'Chapter' object has no attribute {name!r}")
        listing = "\n".join(text("exercise.unknown_item", name=_attribute(e), id=e.id,
                                  title=e.shown_title()) for e in self.exercises)
        raise UnknownExercise(text("exercise.unknown", chapter=self.number, name=name,
                                   listing=listing), name=name)

    def __repr__(self) -> str:
        return f"Chapter {self.number}: " + ", ".join(_attribute(e) for e in self.exercises)


def _attribute(exercise: Exercise) -> str:
    """The attribute a chapter gives an exercise: ``q3`` for exercise 08.3."""
    return "q" + exercise.id.split(".")[1]


def chapter(number: str) -> Chapter:
    """The exercises of chapter ``number`` (``"01"``), to check, hint and solve.

    >>> chapter("01")
    Chapter 01: q1, q2, q3, q4, q5, q6
    >>> chapter("1")                                            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no exercises for chapter '1'; the chapters with exercises are 01, 02, ..., 13
    """
    if number not in CHAPTERS:
        raise ValueError(text("exercise.unknown_chapter", number=repr(number),
                              chapters=", ".join(CHAPTERS)))
    return Chapter(number, CHAPTERS[number])


def all_exercises() -> list[Exercise]:
    """Every exercise of every chapter, in order."""
    return [exercise for exercises in CHAPTERS.values() for exercise in exercises]


def progress() -> Progress:
    """How every exercise stands, checks recorded before a restart included: correct, not yet,
    not attempted, or not checked (its ``check()`` was never run). A notebook shows it as a
    table of coloured badges, one row per chapter; ``print(progress())`` gives plain text
    (``.rows`` the pairs).

    >>> report = progress()
    >>> report.rows[0][0], report.total == len(all_exercises())
    ('01.1', True)
    """
    return Progress([(exercise.id, exercise.last_status) for exercise in all_exercises()])
