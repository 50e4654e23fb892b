"""Every chapter's exercises answer back: the reference answer is correct, typical wrong answers
say what differs, the starter is "not attempted", and each solution is correct in its chapter.

One parametrized set of tests over every chapter: the data (each chapter's right and wrong
answers) is in tests/exercises/answers/chNN.py, the checks in tests/exercise_checks.py.
"""
from __future__ import annotations

import pytest

import exercise_checks as checks

from .answers import CHAPTERS

NUMBERS = sorted(CHAPTERS)
#: (chapter number, exercise id) of every exercise with a case, in chapter order
CASES = [(number, exercise_id) for number in NUMBERS for exercise_id in sorted(CHAPTERS[number][0])]
SELF_CONTAINED = [(number, exercise_id) for number in NUMBERS
                  for exercise_id in sorted(CHAPTERS[number][1])]


def by_id(cases):
    return pytest.mark.parametrize("number, exercise_id", cases, ids=[c[1] for c in cases])


@pytest.mark.parametrize("number", NUMBERS)
def test_every_exercise_has_a_case(number):
    checks.check_every_exercise_has_a_case(number, CHAPTERS[number][0])


@by_id(CASES)
def test_the_reference_answer_is_correct(number, exercise_id):
    checks.check_the_reference_answer_is_correct(exercise_id, CHAPTERS[number][0][exercise_id][0])


@by_id(CASES)
def test_typical_wrong_answers_say_what_differs(number, exercise_id):
    checks.check_typical_wrong_answers_say_what_differs(exercise_id,
                                                        CHAPTERS[number][0][exercise_id][1])


@by_id(CASES)
def test_the_starter_reports_not_attempted(number, exercise_id):
    checks.check_the_starter_reports_not_attempted(exercise_id)


@by_id(SELF_CONTAINED)
def test_self_contained_solutions_run_and_are_correct(number, exercise_id):
    checks.check_the_self_contained_solution_runs_and_is_correct(exercise_id)


@pytest.mark.parametrize("number", NUMBERS)
def test_each_solution_is_correct_in_its_chapter(number, monkeypatch, tmp_path):
    checks.check_each_solution_is_correct_in_its_chapter(number, monkeypatch, tmp_path)
