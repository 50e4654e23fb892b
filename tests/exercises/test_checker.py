"""The exercise checker itself: reading the caller's variables, hints in steps, solutions,
errors in a learner's answer, progress. Each chapter's exercises are tested in
``tests/exercises/test_chapters.py`` (with the shared checks of ``tests/exercise_checks.py``).
"""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from dltutor import exercises
from dltutor.exercises import view
from dltutor.i18n import text

EXERCISES = {exercise.id: exercise for exercise in exercises.all_exercises()}


def printed(call):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        call()
    return out.getvalue()


def test_check_reads_the_variables_of_the_code_that_calls_it():
    ex = exercises.chapter("01")
    mul_shape = (2, 1, 6)                                         # noqa: F841 - read by check()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        ex.q3.check()                                             # as a notebook cell calls it
    assert out.getvalue() == "Exercise 01.3: correct.\n"

    def inside_a_function():
        mul_shape = (2, 6)                                        # noqa: F841 - read by check()
        with contextlib.redirect_stdout(io.StringIO()) as out:
            ex.q3.check()
        return out.getvalue()

    assert inside_a_function().startswith("Exercise 01.3: not yet.")


def test_hints_come_one_at_a_time_then_point_to_the_solution():
    first, second = "ch03.q1.hint1", "ch03.q1.hint2"            # any two hints of the tables
    exercise = exercises.Exercise("99.1", ("x",), "ch03.q1.expects", lambda x: None,
                                  (first, second), "x = 1")
    assert printed(exercise.hint) == f"Hint 1 of 2 for exercise 99.1: {text(first)}\n"
    assert printed(exercise.hint) == f"Hint 2 of 2 for exercise 99.1: {text(second)}\n"
    assert "ex.q1.solution()" in printed(exercise.hint)
    assert printed(lambda: exercise.hint(1)).startswith("Hint 1 of 2")
    assert printed(exercise.solution) == "A solution to exercise 99.1:\nx = 1\n"
    with pytest.raises(ValueError, match="hints 1 to 2"):
        exercise.hint(3)


def test_an_answer_that_breaks_the_check_says_what_kind_of_value_was_expected():
    exercise = exercises.Exercise("99.2", ("x",), "ch03.q1.expects",          # "a number"
                                  lambda x: None if x + 1 == 2 else "no", (), "x = 1")
    verdict = exercise.verdict({"x": "one"})
    assert verdict.status == "not yet"
    assert verdict.message == ("Exercise 99.2: not yet. x should be a number; this answer is of "
                               "type str.")
    assert "TypeError" not in verdict.message           # not the check's own exception


@pytest.mark.parametrize("odd", [object(), "x", None, 7, [1, "a"], {"k": 1}])
def test_no_check_shows_the_learner_an_exception(odd):
    """Every exercise, fed answers of kinds it does not expect, answers in one sentence: a
    "not yet" that says what to do or what kind of value it expects, never a traceback."""
    for exercise in EXERCISES.values():
        verdict = exercise.verdict({name: odd for name in exercise.names})
        assert verdict.status == "not yet", (exercise.id, odd, verdict.message)
        assert "Error" not in verdict.message and "raised" not in verdict.message, verdict.message


def test_progress_lists_every_exercise_with_its_last_verdict_once():
    exercise = EXERCISES["01.2"]
    exercise.verdict({"predicted_grad": np.full((3, 1), 4.0)})
    out = printed(exercises.progress)
    assert out == ""                            # nothing printed: Jupyter shows what it returns
    report = exercises.progress()
    assert ("01.2", "correct") in report.rows and len(report.rows) == len(EXERCISES)
    lines = repr(report).splitlines()
    assert lines[0].endswith("correct so far.")
    assert len(lines) == 1 + len(exercises.CHAPTERS)          # a line per chapter
    assert "01.2 correct" in lines[1]
    page = report._repr_html_()
    assert page.count('class="dltutor-badge') == len(EXERCISES)
    assert 'dltutor-verdict-correct" title="01.2: correct"' in page


def test_a_verdict_in_a_notebook_is_a_coloured_box_with_its_sentence(monkeypatch):
    shown = []
    monkeypatch.setattr(view, "in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
    exercise = exercises.Exercise("99.4", ("x",), "ch03.q1.expects",
                                  lambda x: None if x == 1 else "not 1", (), "")
    x = 2                                                          # read by check()
    exercise.check()
    x = 1                                                          # noqa: F841 - read by check()
    exercise.check()
    (wrong, right) = shown
    assert wrong["text/plain"] == "Exercise 99.4: not yet. not 1"
    assert 'role="status"' in wrong["text/html"] and "dltutor-verdict-not-yet" in wrong["text/html"]
    assert "✗" in wrong["text/html"] and "✓" in right["text/html"]
    assert view.LOOKS["correct"].border in right["text/html"]


def test_an_unknown_chapter_is_named():
    with pytest.raises(ValueError, match="'42'"):
        exercises.chapter("42")




def test_not_attempted_names_only_what_is_still_to_be_set():
    exercise = exercises.Exercise("99.3", ("answer", "net"), "ch03.q1.expects",
                                  lambda answer, net: None, (), "")
    message = exercise.verdict({"answer": exercises.____, "net": object()}).message
    assert "Set answer (replace ____" in message and "net" not in message


def test_step_memory_counted_with_the_input_batch_is_also_right():
    from .answers.ch11 import memory
    verdict = EXERCISES["11.1"].verdict({"step_memory_mb": memory(input_from=0)})
    assert verdict.status == "correct" and "input batch" in verdict.message



def test_an_exercise_that_does_not_exist_names_those_that_do():
    """Issue 47: ``ex.q9`` in a chapter of four was a bare AttributeError. It names the
    chapter's exercises, by attribute, id and title, in the kit's language, and is still an
    AttributeError (hasattr, getattr with a default and tab completion rely on that)."""
    from dltutor.i18n import use_language

    ex = exercises.chapter("08")
    with pytest.raises(exercises.UnknownExercise) as raised:
        ex.q9.check()
    assert str(raised.value).splitlines() == [
        "Chapter 08 has no exercise q9. Its exercises are:",
        "  q1  08.1  BatchNorm's running mean",
        "  q2  08.2  Why a zeroed branch does not update",
        "  q3  08.3  Which freeze still gets a gradient",
        "  q4  08.4  Write freeze_block",
        "  q5  08.5  Write masked_step"]
    assert isinstance(raised.value, AttributeError) and raised.value.name == "q9"
    assert not hasattr(ex, "q9") and getattr(ex, "q6", None) is None and hasattr(ex, "q5")
    assert {"q1", "q2", "q3", "q4", "q5"} <= set(dir(ex))
    with use_language("zh"), pytest.raises(AttributeError) as chinese:
        ex.q0  # noqa: B018 - looking the name up is what must raise
    assert str(chinese.value).splitlines()[:2] == ["第 08 章没有练习 q0。这一章的练习是：",
                                                   "  q1  08.1  BatchNorm 的滑动均值"]
    with pytest.raises(AttributeError) as private:       # Python's own lookups: the usual error
        ex._repr_html_  # noqa: B018 - looking the name up is what must raise
    assert not isinstance(private.value, exercises.UnknownExercise)


def test_every_exercise_has_a_title_of_its_own():
    """A title's two languages are the tables' business (tests/i18n); here: each has one, and
    no two exercises share a title."""
    untitled = [e.id for e in exercises.all_exercises() if not e.title.strip()]
    assert not untitled, f"give these exercises a title=: {untitled}"
    assert len({e.shown_title() for e in exercises.all_exercises()}) == len(EXERCISES)


def test_an_exercise_refuses_a_key_the_tables_do_not_have():
    with pytest.raises(ValueError, match=r"exercise 99\.5: no text has the key 'ch03\.q1\.hnit1'"):
        exercises.Exercise("99.5", ("x",), "ch03.q1.expects", lambda x: None, ("ch03.q1.hnit1",),
                           "", title="ch03.q1.title")
