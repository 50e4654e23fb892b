"""No exercise that a constant or a coin toss can pass (issue 49, item 4).

For every exercise, each guess a learner could make without doing it is submitted to its check,
the way tests/exercises/test_chapters.py submits answers (``Exercise.verdict``), and must be
refused. The guesses, for each variable the exercise's starter cell asks for:

* the usual constants: 0, 1, 2, -1, 0.5, 0.0, 1.0, True, False, None, empty containers, the
  strings "", "True", "False", "yes", "no", and the types int, float, bool and str;
* every exception class a learner can meet (Python's and the kit's) and each one's name;
* each choice the exercise offers: a quoted string in its ``expects`` ("'requires_grad' or
  'lr_mult'") or in a code span of its text (``"forward"`` or ``"backward"``).

An exercise with several such variables gets every combination of the constants and choices
(two True-or-False answers are a coin toss of four), and each exception guess in each place, the
others None. A variable the chapter sets itself (09.3's ``original``, the chapter's gradients) keeps its right value from
tests/exercises/answers/chNN.py.
"""
from __future__ import annotations

import builtins
import itertools
import re
from typing import Iterator

import pytest

import dltutor
from dltutor import exercises, i18n

from .answers import CHAPTERS
from .test_taught_before import PLACES, SOURCES

CONSTANTS = (0, 1, 2, -1, 0.5, 0.0, 1.0, True, False, None, "", "True", "False", "yes", "no",
             (), [], set(), {}, int, float, bool, str)

#: The exercises allowed to be guessed for now, each with who owns the fix (issue 49, item 4).
#: The list may only shrink: an entry that no guess passes fails the test until it is taken off.
GUESSABLE_FOR_NOW: dict[str, str] = {}


def _exception_classes() -> list[type]:
    """Every exception class of Python's builtins and of the kit, in a stable order."""
    found, todo = set(), [BaseException]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    ours = [c for c in found | {BaseException}
            if c.__module__ == "builtins" and hasattr(builtins, c.__name__)
            or c.__module__.split(".")[0] == dltutor.__name__]
    return sorted(ours, key=lambda c: (c.__module__, c.__name__))


EXCEPTIONS = _exception_classes()
QUOTED = re.compile(r"""(?:^|[\s(`])(['"])([^'"`\n]{1,40})\1""")


def choices(exercise) -> list[str]:
    """The quoted strings an exercise offers as answers: in its ``expects``, and in the code
    spans of its text.

    >>> choices(exercises.CHAPTERS["09"][3])                   # bad_pass: "forward" or "backward"
    ['forward', 'backward']
    """
    spans = re.findall(r"`([^`\n]+)`", PLACES[exercise.id].texts[0])
    expects = i18n.text(exercise.expects)
    found = [m.group(2) for text in [expects, *spans] for m in QUOTED.finditer(text)]
    return list(dict.fromkeys(found))


def guesses(exercise, count: int) -> Iterator[tuple]:
    """The values a learner could try for ``count`` variables of ``exercise`` without solving
    it, one tuple of values a try.

    >>> len(list(guesses(exercises.CHAPTERS["09"][3], 2))) > len(CONSTANTS) ** 2
    True
    """
    small = [*CONSTANTS, *choices(exercise)]
    yield from itertools.product(small, repeat=count)
    for place in range(count):
        for error in [*EXCEPTIONS, *(cls.__name__ for cls in EXCEPTIONS)]:
            yield tuple(error if i == place else None for i in range(count))


def starter_names(number: str) -> set[str]:
    """The variables chapter ``number``'s starter cells ask for (``name = ____``)."""
    (source,) = [s for s in SOURCES if s.name.startswith(number + "_")]
    return set(re.findall(r"^(\w+) = ____$", source.read_text(encoding="utf-8"), re.M))


def passing_guesses(exercise) -> list[dict]:
    """The combinations of guesses that ``exercise``'s check accepts."""
    number = exercise.id.split(".")[0]
    right = CHAPTERS[number][0][exercise.id][0]
    asked = [name for name in exercise.names if name in starter_names(number)]
    passed = []
    for combination in guesses(exercise, len(asked)):
        values = {**right, **dict(zip(asked, combination))}
        if exercise.verdict(values).status == "correct":
            passed.append(dict(zip(asked, combination)))
    return passed


EXERCISES = exercises.all_exercises()


def test_every_exercise_asks_for_at_least_one_variable():
    for exercise in EXERCISES:
        assert set(exercise.names) & starter_names(exercise.id.split(".")[0]), exercise.id


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_no_guess_passes(exercise):
    if exercise.id in GUESSABLE_FOR_NOW:
        pytest.skip(GUESSABLE_FOR_NOW[exercise.id])
    passed = passing_guesses(exercise)
    assert not passed, (f"Exercise {exercise.id} accepts a guess made without solving it: "
                        f"{passed[:3]}. Ask for something the learner computes or measures "
                        f"(a value from their own run, two numbers, the exception object "
                        f"caught from running code), so that no constant passes.")


@pytest.mark.parametrize("exercise_id", sorted(GUESSABLE_FOR_NOW))
def test_the_allow_list_holds_only_what_is_still_guessable(exercise_id):
    (exercise,) = [e for e in EXERCISES if e.id == exercise_id]
    assert passing_guesses(exercise), f"{exercise_id} is no longer guessable: take it off"
