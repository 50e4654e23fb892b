"""The checks every chapter's exercises must pass, shared by ``tests/test_exercises_chNN.py``.

A chapter's test file defines ``CASES`` (for each exercise id: the right values of the
variables it reads, and typical wrong values with words the "not yet" message must contain)
and ``SELF_CONTAINED`` (the ids whose solution runs on its own), then calls
``chapter_tests(number, CASES, SELF_CONTAINED)`` to get the test functions:

* the reference answer is correct, each typical wrong answer is "not yet" and names what
  differs, the untouched starter is "not attempted";
* every exercise of the chapter has a case;
* the chapter's code, run with each starter (``name = ____``) replaced by the exercise's
  solution, prints "correct" for every check (so the solutions work where learners run them).
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
from dltutor import exercises
from dltutor.exercises import ____

ROOT = Path(__file__).resolve().parent.parent


def chapter_source(number: str) -> Path:
    (path,) = sorted((ROOT / "notebooks" / "src").glob(f"{number}_*.py"))
    return path


def run_chapter_with_solutions(number: str) -> list[str]:
    """The verdict lines printed when chapter ``number`` runs with every starter replaced by
    its exercise's solution (in quick mode, in a scratch folder)."""
    import jupytext

    by_name = {name: exercise for exercise in exercises.CHAPTERS[number]
               for name in exercise.names}
    namespace: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in jupytext.read(chapter_source(number)).cells:
            if cell.cell_type != "code":
                continue
            code = cell.source
            for line in code.splitlines():
                name = line.split("=")[0].strip()
                if line.strip().endswith("= ____") and name in by_name:
                    code = code.replace(line, by_name[name].code)
            try:
                exec(compile(code, chapter_source(number).name, "exec"), namespace)  # noqa: S102
            except Exception:
                if "raises-exception" not in cell.metadata.get("tags", []):
                    raise
    return [line for line in out.getvalue().splitlines() if line.startswith("Exercise ")]


def chapter_tests(number: str, cases: dict, self_contained: set) -> dict:
    """The test functions for chapter ``number``'s exercises (assign them to module names)."""
    by_id = {exercise.id: exercise for exercise in exercises.CHAPTERS[number]}

    def test_every_exercise_has_a_case():
        assert set(by_id) == set(cases)
        assert len(by_id) >= 3, "at least three checked exercises per chapter"

    @pytest.mark.parametrize("exercise_id", sorted(cases))
    def test_the_reference_answer_is_correct(exercise_id):
        verdict = by_id[exercise_id].verdict(cases[exercise_id][0])
        assert verdict.status == "correct", verdict.message
        assert verdict.message.startswith(f"Exercise {exercise_id}: correct.")

    @pytest.mark.parametrize("exercise_id", sorted(cases))
    def test_typical_wrong_answers_say_what_differs(exercise_id):
        wrong = cases[exercise_id][1]
        assert wrong, "each exercise needs at least one typical wrong answer"
        for values, words in wrong:
            verdict = by_id[exercise_id].verdict(values)
            assert verdict.status == "not yet", (values, verdict.message)
            for word in words:
                assert word in verdict.message, (word, verdict.message)

    @pytest.mark.parametrize("exercise_id", sorted(cases))
    def test_the_starter_reports_not_attempted(exercise_id):
        exercise = by_id[exercise_id]
        starter = {name: ____ for name in exercise.names}
        assert exercise.verdict(starter).status == "not attempted"
        assert exercise.verdict({}).status == "not attempted"
        assert "replace ____" in exercise.verdict(starter).message

    @pytest.mark.parametrize("exercise_id", sorted(self_contained))
    def test_self_contained_solutions_run_and_are_correct(exercise_id):
        exercise = by_id[exercise_id]
        namespace = {"dt": dt, "np": np}
        exec(exercise.code, namespace)                            # noqa: S102 - our own code
        assert exercise.verdict(namespace).status == "correct"

    def test_each_solution_is_correct_in_its_chapter(monkeypatch, tmp_path):
        import matplotlib

        matplotlib.use("Agg")
        monkeypatch.setenv("DLTUTOR_QUICK", "1")
        monkeypatch.chdir(tmp_path)
        verdicts = run_chapter_with_solutions(number)
        assert len(verdicts) == len(by_id), verdicts
        assert all(": correct." in line for line in verdicts), verdicts

    tests = {name: value for name, value in locals().items() if name.startswith("test_")}
    if not self_contained:          # (an empty parametrization would only report a skip)
        del tests["test_self_contained_solutions_run_and_are_correct"]
    return tests
