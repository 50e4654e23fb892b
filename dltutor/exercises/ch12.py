"""The guided experiments of chapter 12 (the live lab): run an experiment with the lab's
controls, store what you measured, and the check runs the same experiment to compare and
explain.

>>> Q2.verdict({"late_clip_accuracy": 0.97, "norm_after_3": 16.0}).status
'not yet'
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..i18n import text
from ..lab import demos
from .answers import called, number, same_number
from .checker import CheckResult, Exercise


@lru_cache(maxsize=None)
def _first_layer_frozen_accuracy() -> float:
    """The experiment of 12.1, run once per kernel (the demos are seeded: it always gives the
    same accuracy)."""
    lab = demos.moons_mlp()
    lab.freeze("0")
    lab.run(300)
    return lab.accuracy()


def _frozen_first_layer(accuracy_first_frozen: Any) -> CheckResult:
    want = _first_layer_frozen_accuracy()
    got = float(accuracy_first_frozen)
    if abs(got - want) <= 0.02:
        return None, text("ch12.frozen_random_first_layer")
    if got > 1:
        return text("ch12.accuracy_share_between_lab")
    return text("ch12.not_what_experiment_gives")


Q1 = Exercise(
    "12.1", names=("accuracy_first_frozen",),
    title="ch12.q1.title",
    expects="ch12.q1.expects",
    check=_frozen_first_layer,
    hints=("ch12.q1.hint1", "ch12.q1.hint2"),
    solution=("lab = demos.moons_mlp()\n"
              "lab.freeze('0')\n"
              "lab.run(300)\n"
              "accuracy_first_frozen = lab.accuracy()"))

#: How many steps 12.2 takes before it switches clipping on.
_UNCLIPPED_STEPS = 3


@lru_cache(maxsize=None)
def _late_clip_run() -> tuple[float, float, float, float]:
    """The experiment of 12.2, run once per kernel: the accuracy after the 300 clipped steps,
    the largest layer norm of the unclipped steps, of the first step, and of the whole run."""
    lab = demos.exploding_gradients()
    lab.step(_UNCLIPPED_STEPS)
    lab.set_clip("global_norm", 1.0)
    lab.run(300)
    norms = lab.recorder.series("param_norm")
    return (lab.accuracy(), float(norms[:_UNCLIPPED_STEPS].max()), float(norms[0].max()),
            float(norms.max()))


def _late_clip(late_clip_accuracy: Any, norm_after_3: Any) -> CheckResult:
    accuracy, norm = number(late_clip_accuracy), number(norm_after_3)
    if accuracy is None or norm is None:
        return text("ch12.give_two_numbers_lab")
    want_accuracy, want_norm, first_norm, whole_run_norm = _late_clip_run()
    if accuracy > 1:
        return text("ch12.accuracy_share_between_lab")
    if abs(accuracy - want_accuracy) > 0.02:
        return text("ch12.runs_without_error_now")
    if same_number(norm, want_norm, rel_tol=1e-3):
        return None, text("ch12.clipping_switched_late_stops")
    if same_number(norm, whole_run_norm, rel_tol=1e-3):
        return text("ch12.largest_norm_whole_run")
    if same_number(norm, first_norm, rel_tol=1e-3):
        return text("ch12.first_step_weights_grow")
    return text("ch12.norm_after_largest_value")


Q2 = Exercise(
    "12.2", names=("late_clip_accuracy", "norm_after_3"),
    title="ch12.q2.title",
    expects="ch12.q2.expects",
    check=_late_clip,
    hints=("ch12.q2.hint1", "ch12.q2.hint2", "ch12.q2.hint3"),
    solution=("lab = demos.exploding_gradients()\n"
              "lab.step(3)\n"
              "lab.set_clip('global_norm', 1.0)\n"
              "lab.run(300)\n"
              "late_clip_accuracy = lab.accuracy()              # far below 0.95\n"
              "norm_after_3 = lab.recorder.series('param_norm')[:3].max()"))


def _steps_to_90(lab: Any) -> int:
    """The hint's measurement: steps until the accuracy reaches 0.9, checked every 25 steps."""
    return _steps_to(lab, 0.9, 25)


@lru_cache(maxsize=None)
def _measured_speedup() -> float:
    """The experiment itself, run again (once per kernel: the demos are seeded): steps at
    lr x 1 over steps with layer '0' at lr x 10."""
    fast = demos.spirals_mlp()
    fast.set_lr_mult("0", 10)
    return _steps_to_90(demos.spirals_mlp()) / _steps_to_90(fast)


def _speedup(speedup: Any) -> CheckResult:
    got = number(speedup)
    if got is None:
        return text("ch12.give_speedup_number_steps")
    want = _measured_speedup()                   # rerun, so a guess cannot pass
    if abs(got / want - 1) <= 0.02:
        return None, text("ch12.narrow_first_layer_learns")
    if got < 1:
        return text("ch12.speedup_below_means_lr")
    return text("ch12.measure_both_runs_same")


Q3 = Exercise(
    "12.3", names=("speedup",),
    title="ch12.q3.title",
    expects="ch12.q3.expects",
    check=_speedup,
    hints=("ch12.q3.hint1", "ch12.q3.hint2"),
    solution=("def steps_to_90(lab):\n"
              "    while lab.accuracy() < 0.9:\n"
              "        lab.step(25)\n"
              "    return lab.steps_done\n"
              "\n"
              "fast = demos.spirals_mlp()\n"
              "fast.set_lr_mult('0', 10)\n"
              "speedup = steps_to_90(demos.spirals_mlp()) / steps_to_90(fast)"))


def _steps_to(lab: Any, target: float, every: int) -> int:
    """The reference: steps done when the accuracy, checked every ``every`` steps, first
    reaches ``target``."""
    while lab.accuracy() < target:
        lab.step(every)
    return lab.steps_done


def _moons_first_layer_frozen() -> Any:
    lab = demos.moons_mlp()
    lab.freeze("0")
    return lab


# Runs for 12.4 the learner has not measured, each known to reach its target:
# (what: the key of its name, how to make the lab, target accuracy, check every so many steps).
_RUNS_TO_MEASURE = (("ch12.moons_mlp", demos.moons_mlp, 0.97, 15),
                    ("ch12.spirals_mlp", demos.spirals_mlp, 0.95, 50),
                    ("ch12.demos_moons_mlp_layer", _moons_first_layer_frozen, 0.95, 10))


def _steps_to_reach(steps_to_reach: Any) -> CheckResult:
    if not callable(steps_to_reach):
        return text("ch12.steps_reach_function_lab")
    for what, make_lab, target, every in _RUNS_TO_MEASURE:
        lab = make_lab()
        steps, failure = called("steps_to_reach", steps_to_reach, lab, target, every)
        if failure:
            return failure
        if lab.steps_done == 0:
            return text("ch12.lab_has_not_taken")
        want = _steps_to(make_lab(), target, every)
        if number(steps) != want:
            return text("ch12.accuracy_first_seen_step", what=text(what), target=target, want=want,
                        every=every, got=steps)
    return None


Q4 = Exercise(
    "12.4", names=("steps_to_reach",),
    title="ch12.q4.title",
    expects="ch12.q4.expects",
    check=_steps_to_reach,
    hints=("ch12.q4.hint1", "ch12.q4.hint2"),
    solution=("def steps_to_reach(lab, target, every):\n"
              "    while lab.accuracy() < target:\n"
              "        lab.step(every)\n"
              "    return lab.steps_done"))

EXERCISES = [Q1, Q2, Q3, Q4]
