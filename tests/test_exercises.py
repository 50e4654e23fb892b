"""Every exercise answers back: the reference answer passes, typical wrong answers fail with a
message that points at the idea, and the untouched starter reports "not attempted".

``CASES`` holds, for each exercise id, the right values of the variables it reads and a few
wrong ones with words the "not yet" message must contain. A new exercise without a case fails
``test_every_exercise_has_a_case``.
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

def _loaded_case(same=True, kind="linear"):
    """The variables of exercise 02.3: a net and a layer that got (or did not get) its first
    layer's values."""
    from dltutor import nn

    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    layer = nn.Linear(4, 8) if kind == "linear" else nn.ReLU()
    if same:
        layer.load_state_dict(net[0].state_dict())
    return {"loaded": layer, "net": net}


CASES = {
    "01.1": ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32, requires_grad=True)},
             [({"t": dt.tensor(np.arange(6).reshape(2, 3))}, ["int64", "floating"]),
              ({"t": dt.tensor(np.arange(6).reshape(2, 3), dtype=dt.float32)}, ["requires_grad"]),
              ({"t": np.arange(6).reshape(2, 3)}, ["dt.tensor"])]),
    "01.2": ({"predicted_grad": np.full((3, 1), 4.0)},
             [({"predicted_grad": np.ones((3, 1))}, ["add up"]),
              ({"predicted_grad": np.full((3, 4), 4.0)}, ["shape", "(3, 1)"])]),
    "01.3": ({"mul_shape": (2, 1, 6)},
             [({"mul_shape": (2, 6)}, ["(2, 1)"]), ({"mul_shape": [2, 3, 6]}, ["rows"])]),
    "01.4": ({"with_grad": ["stage2.weight", "stage2.bias", "stage3.weight", "stage3.bias"]},
             [({"with_grad": {"stage3.weight", "stage3.bias"}}, ["stage2", "downstream"]),
              ({"with_grad": {"stage1.weight", "stage2.weight", "stage2.bias", "stage3.weight",
                              "stage3.bias"}}, ["stage1", "upstream"]),
              ({"with_grad": {"fc.weight"}}, ["'fc.weight'"])]),
    "01.5": ({"second_backward_error": RuntimeError},
             [({"second_backward_error": ValueError}, ["'ValueError'", "read"])]),
    "02.1": ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"], "block_values": 76},
             [({"block_names": ["0.block 2.0.weight"], "block_values": 76}, ["from inside"]),
              ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"],
                "block_values": 4}, ["numel"])]),
    "02.2": ({"bias_grad_ratio": 2.0},
             [({"bias_grad_ratio": 1.0}, ["adds"]), ({"bias_grad_ratio": 4}, ["added"])]),
    "02.3": (_loaded_case(same=True), [(_loaded_case(same=False), ["load net[0].state_dict()"]),
                                        (_loaded_case(same=False, kind="relu"), ["Linear"])]),
    "02.4": ({"keys_in_file": ["0.weight", "0.bias", "2.weight", "2.bias"]},
             [({"keys_in_file": ["0.weight", "1.weight"]}, ["ReLU"])]),
    "02.5": ({"child_names": ["0", "1", "2", "3"]},
             [({"child_names": ["block 0", "block 1", "block 2", "block 3"]}, ["position"])]),
}

#: Solutions that run on their own (the others use the chapter's variables).
SELF_CONTAINED = {"01.1", "01.2", "01.5"}

EXERCISES = {exercise.id: exercise for exercise in exercises.all_exercises()}


def test_every_exercise_has_a_case():
    assert set(EXERCISES) == set(CASES)


@pytest.mark.parametrize("exercise_id", sorted(CASES))
def test_the_reference_answer_is_correct(exercise_id):
    right, _ = CASES[exercise_id]
    verdict = EXERCISES[exercise_id].verdict(right)
    assert verdict.status == "correct", verdict.message
    assert verdict.message.startswith(f"Exercise {exercise_id}: correct.")


@pytest.mark.parametrize("exercise_id", sorted(CASES))
def test_typical_wrong_answers_say_what_differs(exercise_id):
    _, wrong = CASES[exercise_id]
    assert wrong, "each exercise needs at least one typical wrong answer"
    for values, words in wrong:
        verdict = EXERCISES[exercise_id].verdict(values)
        assert verdict.status == "not yet", (values, verdict.message)
        for word in words:
            assert word in verdict.message, (word, verdict.message)


@pytest.mark.parametrize("exercise_id", sorted(CASES))
def test_the_starter_reports_not_attempted(exercise_id):
    exercise = EXERCISES[exercise_id]
    starter = {name: ____ for name in exercise.names}
    assert exercise.verdict(starter).status == "not attempted"
    assert exercise.verdict({}).status == "not attempted"          # never assigned at all
    assert "replace ____" in exercise.verdict(starter).message


@pytest.mark.parametrize("exercise_id", sorted(SELF_CONTAINED))
def test_self_contained_solutions_run_and_are_correct(exercise_id):
    exercise = EXERCISES[exercise_id]
    namespace = {"dt": dt, "np": np}
    exec(exercise.code, namespace)                                # noqa: S102 - our own code
    assert exercise.verdict(namespace).status == "correct"


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
        mul_shape = (2, 6)                                        # noqa: F841
        with contextlib.redirect_stdout(io.StringIO()) as out:
            ex.q3.check()
        return out.getvalue()

    assert inside_a_function().startswith("Exercise 01.3: not yet.")


def test_hints_come_one_at_a_time_then_point_to_the_solution():
    exercise = exercises.Exercise("99.1", ("x",), lambda x: None, ("first", "second"), "x = 1")
    assert printed(exercise.hint) == "Hint 1 of 2 for exercise 99.1: first\n"
    assert printed(exercise.hint) == "Hint 2 of 2 for exercise 99.1: second\n"
    assert "ex.q1.solution()" in printed(exercise.hint)
    assert printed(lambda: exercise.hint(1)).startswith("Hint 1 of 2")
    assert printed(exercise.solution) == "A solution to exercise 99.1:\nx = 1\n"
    with pytest.raises(ValueError, match="hints 1 to 2"):
        exercise.hint(3)


def test_an_answer_that_breaks_the_check_is_not_yet_with_the_error():
    exercise = exercises.Exercise("99.2", ("x",), lambda x: None if x + 1 == 2 else "no", (),
                                  "x = 1")
    verdict = exercise.verdict({"x": "one"})
    assert verdict.status == "not yet" and "TypeError" in verdict.message


def test_progress_lists_every_exercise_with_its_last_verdict():
    exercise = EXERCISES["01.2"]
    exercise.verdict(CASES["01.2"][0])
    out = printed(exercises.progress)
    assert f"  01.2   correct" in out and out.splitlines()[0].endswith("correct in this session.")
    assert len(out.splitlines()) == len(EXERCISES) + 1


def test_an_unknown_chapter_is_named():
    with pytest.raises(ValueError, match="'42'"):
        exercises.chapter("42")


ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = {"01": "01_tensors_autograd", "02": "02_parameter_access"}


@pytest.mark.parametrize("number", sorted(exercises.CHAPTERS))
def test_each_solution_is_correct_in_its_chapter(number, monkeypatch, tmp_path):
    """Run the chapter's code with every starter (``name = ____``) replaced by the exercise's
    solution: each check must then print "correct" (the solutions use the chapter's own
    variables, so they are tested where a learner runs them)."""
    import jupytext
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setenv("DLTUTOR_QUICK", "1")
    monkeypatch.chdir(tmp_path)
    source = jupytext.read(ROOT / "notebooks" / "src" / f"{NOTEBOOKS[number]}.py")
    by_name = {name: exercise for exercise in exercises.CHAPTERS[number]
               for name in exercise.names}
    namespace: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in source.cells:
            if cell.cell_type != "code":
                continue
            code = cell.source
            for line in code.splitlines():
                name = line.split("=")[0].strip()
                if line.strip().endswith("= ____") and name in by_name:
                    code = code.replace(line, by_name[name].code)
            try:
                exec(compile(code, NOTEBOOKS[number], "exec"), namespace)   # noqa: S102
            except Exception:
                if "raises-exception" not in cell.metadata.get("tags", []):
                    raise
    verdicts = [line for line in out.getvalue().splitlines() if line.startswith("Exercise ")]
    assert len(verdicts) == len(exercises.CHAPTERS[number])
    assert all(": correct." in line for line in verdicts), verdicts
