"""The guided experiments of chapter 12 (the live lab): run an experiment with the lab's
controls, store what you measured, and the check runs the same experiment to compare and
explain.

>>> Q2.verdict({"late_clip_accuracy": 0.97, "norm_after_3": 16.0}).status
'not yet'
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..i18n import sentence
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
        return None, ("A frozen random first layer is a fixed random map of the two inputs to 16 "
                      "features; the two layers after it still learn to separate the moons.")
    if got > 1:
        return "An accuracy is a share between 0 and 1: lab.accuracy()."
    return ("That is not what this experiment gives: lab = demos.moons_mlp(); lab.freeze('0') "
            "before any step; lab.run(300); lab.accuracy().")


Q1 = Exercise(
    "12.1", names=("accuracy_first_frozen",),
    title="Training with the first layer frozen",
    expects="a number",
    check=_frozen_first_layer,
    hints=("Freeze before the first step, so layer 0 keeps its random start for the whole run.",
           "lab = demos.moons_mlp(); lab.freeze('0'); lab.run(300); then lab.accuracy()."),
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
        return "Give two numbers: lab.accuracy() after the run, and the largest layer norm."
    want_accuracy, want_norm, first_norm, whole_run_norm = _late_clip_run()
    if accuracy > 1:
        return "An accuracy is a share between 0 and 1: lab.accuracy()."
    if abs(accuracy - want_accuracy) > 0.02:
        return ("It runs without an error now, but look at lab.accuracy() after the 300 steps: "
                "compare it with 0.95.")
    if same_number(norm, want_norm, rel_tol=1e-3):
        return None, ("Clipping switched on late stops the overflow, but three unclipped steps "
                      "already threw the weights so far that most ReLUs never fire again: "
                      "clip from the first step.")
    if same_number(norm, whole_run_norm, rel_tol=1e-3):
        return ("That is the largest norm of the whole run; take the 3 unclipped steps only: "
                "the first 3 rows of the series.")
    if same_number(norm, first_norm, rel_tol=1e-3):
        return ("That is the first step's; the weights grow in each unclipped step: take the "
                "largest value of the first 3 rows.")
    return ("norm_after_3 is the largest value in the first 3 rows of "
            "lab.recorder.series('param_norm') (one row a step, one column a layer).")


Q2 = Exercise(
    "12.2", names=("late_clip_accuracy", "norm_after_3"),
    title="Clipping switched on late",
    expects="two numbers",
    check=_late_clip,
    hints=("lab = demos.exploding_gradients(); lab.step(3); lab.set_clip('global_norm', 1.0); "
           "lab.run(300).",
           "run() returning True only means no step failed; the question is the accuracy.",
           "lab.recorder.series('param_norm')[:3] holds the layer norms of the 3 unclipped "
           "steps; compare them with the first row."),
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
        return "Give the speedup as a number: steps at lr x 1 divided by steps at lr x 10."
    want = _measured_speedup()                   # rerun, so a guess cannot pass
    if abs(got / want - 1) <= 0.02:
        return None, ("The narrow first layer learns slowest; ten times its step size untangles "
                      "the arms in about half the steps.")
    if got < 1:
        return ("A speedup below 1 means lr x 10 was slower: divide the steps at x1 by the "
                "steps at x10.")
    return ("Measure both runs the same way: steps until lab.accuracy() >= 0.9, checking every "
            "25 steps, for lr x 1 and lr x 10 on layer '0'.")


Q3 = Exercise(
    "12.3", names=("speedup",),
    title="The speedup of lr × 10 on one layer",
    expects="a number",
    check=_speedup,
    hints=("Write a loop: while lab.accuracy() < 0.9: lab.step(25); then lab.steps_done.",
           "Run it on demos.spirals_mlp() twice, once after lab.set_lr_mult('0', 10)."),
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
# (what, how to make the lab, target accuracy, check every so many steps).
_RUNS_TO_MEASURE = (("demos.moons_mlp()", demos.moons_mlp, 0.97, 15),
                    ("demos.spirals_mlp()", demos.spirals_mlp, 0.95, 50),
                    ("demos.moons_mlp() with layer '0' frozen", _moons_first_layer_frozen, 0.95,
                     10))


def _steps_to_reach(steps_to_reach: Any) -> CheckResult:
    if not callable(steps_to_reach):
        return "steps_to_reach should be a function of (lab, target, every)."
    for what, make_lab, target, every in _RUNS_TO_MEASURE:
        lab = make_lab()
        steps, failure = called("steps_to_reach", steps_to_reach, lab, target, every)
        if failure:
            return failure
        if lab.steps_done == 0:
            return "The lab has not taken a step: train it with lab.step(every) in a loop."
        want = _steps_to(make_lab(), target, every)
        if number(steps) != want:
            return sentence("On {what}, accuracy {target} is first seen at step {want} when "
                            "checking every {every} steps; steps_to_reach returned {got!r}.",
                            what=sentence(what), target=target, want=want, every=every,
                            got=steps)
    return None


Q4 = Exercise(
    "12.4", names=("steps_to_reach",),
    title="Write steps_to_reach",
    expects="a function of (lab, target, every) returning a step count",
    check=_steps_to_reach,
    hints=("Check first, then step: a lab that starts above the target needs 0 steps.",
           "while lab.accuracy() < target: lab.step(every); then return lab.steps_done."),
    solution=("def steps_to_reach(lab, target, every):\n"
              "    while lab.accuracy() < target:\n"
              "        lab.step(every)\n"
              "    return lab.steps_done"))

EXERCISES = [Q1, Q2, Q3, Q4]
