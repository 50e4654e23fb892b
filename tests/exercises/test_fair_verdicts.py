"""Verdicts a teacher checked against the chapters (issue 49): an exception in the learner's
own code is named as such, the answers a chapter presents as right pass, and every hint that
is a complete answer passes its own check, in both languages.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from dltutor import exercises, nn, optim
from dltutor.i18n import text, use_language
from dltutor.nn import functional as F
from dltutor.nn import init

EXERCISES = {exercise.id: exercise for exercise in exercises.all_exercises()}


def step_memory_mb(model, batch_size, optimizer):
    return sum(p.numpy().nbytes for p in model.parameters()) * undefined_factor  # noqa: F821 - undefined on purpose: the answer must fail


def decay_groups_raising(model, weight_decay):
    named = list(model.named_parameters())
    return [{"params": named, "weight_decay": weight_decay / zero}]  # noqa: F821 - undefined on purpose: the answer must fail


@pytest.mark.parametrize("exercise_id, name, function", [
    ("11.1", "step_memory_mb", step_memory_mb),
    ("06.4", "decay_groups", decay_groups_raising),
])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_exception_in_the_learners_function_is_named_as_such(exercise_id, name, function,
                                                                language):
    with use_language(language):
        verdict = EXERCISES[exercise_id].verdict({name: function})
        said = text("exercise.raised", name=name, kind="NameError", message="")
    assert verdict.status == "not yet"
    assert said in verdict.message, verdict.message
    assert "undefined_factor" in verdict.message or "zero" in verdict.message


def decay_groups_by_regularizer(model, weight_decay):
    """The chapter's third way: a zero L2Decay on each 1-D parameter replaces the decay."""
    for _, param in model.named_parameters():
        if param.ndim < 2:
            param.regularizer = optim.L2Decay(0.0)
    return [{"params": list(model.named_parameters()), "weight_decay": weight_decay}]


def decay_groups_by_l1(model, weight_decay):
    for _, param in model.named_parameters():
        if param.ndim < 2:
            param.regularizer = optim.L1Decay(0.01)
    return [{"params": list(model.named_parameters()), "weight_decay": weight_decay}]


def test_the_chapters_third_way_of_weight_decay_answers_06_4():
    verdict = EXERCISES["06.4"].verdict({"decay_groups": decay_groups_by_regularizer})
    assert verdict.status == "correct", verdict.message


def test_a_regularizer_that_is_not_weight_decay_is_named_in_06_4():
    verdict = EXERCISES["06.4"].verdict({"decay_groups": decay_groups_by_l1})
    assert verdict.status == "not yet"
    assert "L1Decay(0.01)" in verdict.message and "not a weight decay" in verdict.message


@pytest.mark.parametrize("answer", [[[1.5, 2.25, 3.0]], np.array([[1.5], [2.25], [3.0]]),
                                    dt.tensor([1.5, 2.25, 3.0])])
def test_08_1_takes_the_nested_list_its_check_promises(answer):
    verdict = EXERCISES["08.1"].verdict({"predicted_running_mean": answer})
    assert verdict.status == "correct", verdict.message


@pytest.mark.parametrize("answer", [(4.9, 3.2), (4.0, 3.5), (4, 3, 0), ("4", "3")])
def test_10_2_refuses_what_is_not_two_whole_numbers(answer):
    verdict = EXERCISES["10.2"].verdict({"batches": answer})
    assert verdict.status == "not yet", (answer, verdict.message)


def test_10_2_takes_whole_numbers_written_as_floats():
    assert EXERCISES["10.2"].verdict({"batches": (4.0, 3.0)}).status == "correct"


def answer_hints(exercise):
    """The hints of ``exercise`` that are complete answers: the convention is that such a hint
    starts with the code that sets one of the variables the exercise reads (``def name(`` or
    ``name =``)."""
    return [hint for hint in exercise.hints
            if any(text(hint).startswith((f"def {name}(", f"{name} =")) for name in exercise.names)]


#: What a chapter has imported by its exercises (each chapter imports these at the top).
CHAPTER_NAMES = {"dt": dt, "np": np, "nn": nn, "optim": optim, "init": init, "F": F,
                 "math": math}
ANSWER_HINTS = [(exercise.id, n) for exercise in EXERCISES.values()
                for n, hint in enumerate(exercise.hints) if hint in answer_hints(exercise)]


def test_the_hints_that_are_answers_are_found():
    assert ("03.2", 1) in ANSWER_HINTS


@pytest.mark.parametrize("exercise_id, n", ANSWER_HINTS,
                         ids=[f"{e}-{n + 1}" for e, n in ANSWER_HINTS])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_hint_that_is_an_answer_passes_its_own_check(exercise_id, n, language):
    exercise = EXERCISES[exercise_id]
    with use_language(language):
        code = text(exercise.hints[n])
    namespace = dict(CHAPTER_NAMES)
    exec(compile(code, f"hint {n + 1} of {exercise_id}", "exec"), namespace)
    verdict = exercise.verdict(namespace)
    assert verdict.status == "correct", (code, verdict.message)


def test_code_meant_as_an_answer_starts_its_hint():
    """A hint that defines a function anywhere but at its start escapes the test above."""
    late = [(exercise.id, text(hint)) for exercise in EXERCISES.values() for hint in exercise.hints
            if "def " in text(hint) and hint not in answer_hints(exercise)]
    assert not late, late
