"""Bad input to the lab (controls, counts, runs from inside runs, other threads, the demos):
refused, named, and nothing changed (``refused`` of tests/bad_input.py: the call must raise
``error``, the message must name what was wrong, and every object in ``state`` must be
bit-identical afterwards)."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from dltutor import data, nn, optim
from dltutor.autograd.rng import manual_seed
from dltutor.lab import LabError, TrainingLab, demos
from dltutor.nn import functional as F

from bad_input import GlobalGenerator, refused

NAN, INF = math.nan, math.inf


# -- the lab -------------------------------------------------------------------------------------
def lab_state(lab):
    """Everything of the lab a refused call must leave alone: model, optimizer (clip included),
    recorder (its table too), loader, and the lab's own settings (step, loss, lr, error)."""
    return [lab.model, lab.optimizer, lab.recorder, lab.recorder._records, lab.loader, lab]


@pytest.fixture
def lab():
    lab = demos.moons_mlp()
    lab.set_clip("norm", 2.0)
    lab.set_lr_mult("2", 0.5)
    lab.step(2)
    return lab


@pytest.mark.parametrize("call, names", [
    (lambda lab: lab.step(-1), ["lab.step", "n", "-1"]),
    (lambda lab: lab.step(1.5), ["lab.step", "n", "1.5"]),
    (lambda lab: lab.step(True), ["lab.step", "n", "True"]),
    (lambda lab: lab.step("x"), ["lab.step", "n", "'x'"]),
    (lambda lab: lab.step(None), ["lab.step", "n", "None"]),
    (lambda lab: lab.run(-5), ["lab.run", "steps", "-5"]),
    (lambda lab: lab.run("x"), ["lab.run", "steps", "'x'"]),
    (lambda lab: lab.run(2.0), ["lab.run", "steps", "2.0"]),
    (lambda lab: lab.freeze("nope"), ["unknown layer 'nope'", "'0', '2', '4'"]),
    (lambda lab: lab.freeze("0", "yes"), ["freeze", "'yes'"]),
    (lambda lab: lab.set_lr_mult("0", NAN), ["lr multiplier", "'0'", "nan"]),
    (lambda lab: lab.set_lr_mult("0", -1), ["lr multiplier", "-1"]),
    (lambda lab: lab.set_lr_mult("9", 1.0), ["unknown layer '9'"]),
    (lambda lab: lab.set_clip("bogus", 1.0), ["clip mode", "'bogus'"]),
    (lambda lab: lab.set_clip(["value"], 1.0), ["clip mode", "['value']"]),
    (lambda lab: lab.set_clip({}, 1.0), ["clip mode", "{}"]),
    (lambda lab: lab.set_clip("value", 0), ["clip threshold", "0"]),
    (lambda lab: lab.set_clip("global_norm", -1), ["clip threshold", "-1"]),
    (lambda lab: lab.set_clip("norm", NAN), ["clip threshold", "nan"]),
    (lambda lab: lab.set_lr(NAN), ["learning rate", "nan"]),
    (lambda lab: lab.set_lr(-0.1), ["learning rate", "-0.1"]),
    (lambda lab: lab.set_lr(INF), ["learning rate", "inf"]),
    (lambda lab: lab.set_lr("0.1"), ["learning rate", "'0.1'"]),
    (lambda lab: lab.set_lr(True), ["learning rate", "True"]),
    (lambda lab: lab.set_lr_mult("0", "0.5"), ["lr multiplier", "'0'", "'0.5'"]),
    (lambda lab: lab.set_lr_mult("0", INF), ["lr multiplier", "inf"]),
    (lambda lab: lab.set_lr_mult("0", None), ["lr multiplier", "None"]),
    (lambda lab: lab.set_lr_mult("0", np.array(0.5)), ["lr multiplier", "array(0.5)"]),
    (lambda lab: lab.set_clip("value", None), ["clip threshold", "None"]),
    (lambda lab: lab.set_clip("value", "1"), ["clip threshold", "'1'"]),
    (lambda lab: lab.set_clip(None, "x"), ["clip threshold", "'x'"]),
    (lambda lab: lab.set_clip(None, NAN), ["clip threshold", "nan"]),
    (lambda lab: lab.freeze("0", 1), ["freeze", "1"]),
])
def test_a_bad_control_or_count_changes_nothing_in_the_lab(lab, call, names):
    refused(lambda: call(lab), LabError, *names, state=lab_state(lab))


def test_an_lr_that_would_overflow_in_a_group_with_a_larger_lr_changes_nothing():
    """set_lr keeps the groups' ratios: 1e308 for a first group of lr 0.1 would make a group of
    lr 1.0 inf. Refused before any group is changed."""
    manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.SGD([{"params": model[0].parameters(), "lr": 0.1},
                     {"params": model[2].parameters(), "lr": 1.0}], lr=0.1)
    X, y = data.make_moons(n=16, seed=0)
    lab = TrainingLab(model, opt, F.cross_entropy, (X, y))
    lab.step(1)
    refused(lambda: lab.set_lr(1e308), LabError, "learning rate", "inf", state=lab_state(lab))
    lab.set_lr(1e307)
    assert [g["lr"] for g in opt.param_groups] == [0.1 * (1e307 / 0.1), 1.0 * (1e307 / 0.1)]


def test_a_run_started_from_inside_a_run_is_refused_and_the_run_goes_on():
    lab = demos.moons_mlp()
    loss_fn, refusals = lab.loss_fn, []

    def loss_that_starts_a_run(output, target):
        if lab.steps_done == 1:
            refusals.append(refused(lambda: lab.run(2), LabError, "lab.run", "already training",
                                    state=lab_state(lab)))
        return loss_fn(output, target)

    lab.loss_fn = loss_that_starts_a_run
    assert lab.run(5) is True
    assert lab.steps_done == 5 and lab.recorder.count == 5 and len(refusals) == 1


def test_a_reset_from_inside_a_step_is_refused_and_the_step_finishes():
    lab = demos.moons_mlp()
    loss_fn, refusals = lab.loss_fn, []

    def loss_that_resets(output, target):
        refusals.append(refused(lambda: lab.reset(), LabError, "lab.reset", "already training",
                                state=lab_state(lab)))
        return loss_fn(output, target)

    lab.step(2)
    lab.loss_fn = loss_that_resets
    lab.step(1)
    assert lab.steps_done == 3 and len(refusals) == 1 and lab.error is None


def test_a_step_from_a_second_thread_during_a_run_is_refused():
    lab = demos.moons_mlp()
    loss_fn, refusals = lab.loss_fn, []

    def loss_that_asks_another_thread(output, target):
        if lab.steps_done == 2:
            def other():
                refusals.append(refused(lambda: lab.step(1), LabError, "lab.step",
                                        "already training"))
            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
        return loss_fn(output, target)

    lab.loss_fn = loss_that_asks_another_thread
    assert lab.run(4) is True
    assert lab.steps_done == 4 and len(refusals) == 1


def small_parts():
    manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    X, y = data.make_moons(n=16, seed=0)
    return model, optim.SGD(model.parameters(), lr=0.1), X, y


@pytest.mark.parametrize("change, names", [
    (lambda m, o, f, d: (nn.Sequential(nn.ReLU()), o, f, d), ["no parameters"]),
    (lambda m, o, f, d: (m, o, "mse", d), ["loss_fn", "'mse'"]),
    (lambda m, o, f, d: (m, {"lr": 0.1}, f, d), ["optimizer", "dict"]),
    (lambda m, o, f, d: (lambda x: x, o, f, d), ["model", "nn.Module"]),
])
def test_a_lab_that_could_not_take_a_step_is_refused_when_it_is_made(change, names):
    model, opt, X, y = small_parts()
    args = change(model, opt, F.cross_entropy, (X, y))
    refused(lambda: TrainingLab(*args), LabError, "TrainingLab", *names, state=[model, opt])


def test_a_lab_on_string_features_is_refused():
    model, opt, X, y = small_parts()
    refused(lambda: TrainingLab(model, opt, F.cross_entropy, (np.array(["a"] * 16), y)),
            TypeError, "TensorDataset", "<U1", state=[model, opt])


@pytest.mark.parametrize("make, kwargs, error, names", [
    (demos.moons_mlp, {"hidden": -1}, ValueError, ["hidden", "-1"]),
    (demos.moons_mlp, {"hidden": "x"}, TypeError, ["hidden", "'x'"]),
    (demos.moons_mlp, {"seed": -1}, ValueError, ["seed", "-1"]),
    (demos.moons_mlp, {"batch_size": 0}, ValueError, ["batch_size", "0"]),
    (demos.exploding_gradients, {"gain": NAN}, ValueError, ["gain", "nan"]),
    (demos.exploding_gradients, {"depth": -1}, ValueError, ["depth", "-1"]),
    (demos.tied_mlp, {"lr": -1}, ValueError, ["lr", "-1"]),
    (demos.digits_mlp, {"lr": "x"}, ValueError, ["lr", "'x'"]),
])
def test_a_demo_refuses_bad_arguments_before_seeding_anything(make, kwargs, error, names):
    refused(lambda: make(**kwargs), error, f"demos.{make.__name__}", *names,
            state=[GlobalGenerator()])

