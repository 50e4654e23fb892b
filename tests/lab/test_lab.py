"""The lab's controller, without a browser: live controls, errors, reset, demos."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dltutor import data, nn, optim
from dltutor.autograd.rng import manual_seed
from dltutor.lab import LabError, TrainingLab, demos
from dltutor.nn import functional as F


def values(lab, layer):
    return [p.numpy().copy() for p in lab._layer_params(layer)]


def plain_sgd_lab(seed=0):
    """Full-batch SGD without momentum: one step's update is exactly -lr_eff * grad."""
    manual_seed(seed)
    X, y = data.make_moons(n=64, seed=seed)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    return TrainingLab(model, optim.SGD(model.named_parameters(), lr=0.1), F.cross_entropy,
                       (X, y))


def test_freezing_mid_run_keeps_that_layer_bit_identical_while_others_move():
    lab = demos.moons_mlp()
    lab.step(10)
    lab.freeze("2")
    frozen, other = values(lab, "2"), values(lab, "0")
    lab.step(20)
    for before, after in zip(frozen, values(lab, "2")):
        np.testing.assert_array_equal(before, after)
    assert any(not np.array_equal(a, b) for a, b in zip(other, values(lab, "0")))
    flags = lab.recorder.series("frozen", "2")
    assert flags[:10].tolist() == [0.0] * 10 and flags[10:].tolist() == [1.0] * 20
    lab.freeze("2", False)
    lab.step(1)
    assert any(not np.array_equal(a, b) for a, b in zip(frozen, values(lab, "2")))


def test_lr_mult_zero_stops_a_layer_and_two_doubles_its_sgd_update():
    updates = {}
    for mult in (1.0, 2.0, 0.0):
        lab = plain_sgd_lab()
        lab.set_lr_mult("2", mult)
        before = values(lab, "2")
        lab.step(1)
        updates[mult] = [after - b for after, b in zip(values(lab, "2"), before)]
    for one, two, zero in zip(updates[1.0], updates[2.0], updates[0.0]):
        np.testing.assert_allclose(two, 2 * one, rtol=1e-5, atol=1e-7)  # float32 rounding
        assert not zero.any()


def test_global_norm_clipping_caps_the_recorded_post_clip_norm():
    lab = demos.exploding_gradients()
    lab.set_clip("global_norm", 0.5)
    lab.step(10)
    assert lab.recorder.series("global_grad_norm").min() > 0.5         # every step was clipped
    clipped = lab.recorder.series("clipped_grad_norm")[-10:]
    totals = np.sqrt((clipped ** 2).sum(axis=1))
    assert (totals <= 0.5 * (1 + 1e-5)).all()
    assert lab.state()["clip_mode"] == "global_norm" and lab.state()["clip_threshold"] == 0.5
    assert lab.state()["clip_scale"] < 1.0
    lab.set_clip(None)
    assert lab.optimizer.grad_clip is None


@pytest.mark.parametrize("mode, cls", [("value", optim.ClipGradByValue),
                                       ("norm", optim.ClipGradByNorm),
                                       ("global_norm", optim.ClipGradByGlobalNorm)])
def test_each_clip_mode_installs_its_clip_object(mode, cls):
    lab = demos.moons_mlp()
    lab.set_clip(mode, 0.3)
    assert isinstance(lab.optimizer.grad_clip, cls)
    assert lab.clip_setting() == (mode, 0.3)


@pytest.mark.parametrize("action, message", [
    (lambda lab: lab.set_lr_mult("2", -1.0), "must be a number >= 0"),
    (lambda lab: lab.set_lr_mult("2", float("nan")), "must be a number >= 0"),
    (lambda lab: lab.set_lr_mult("9", 1.0), "unknown layer '9'.*'0', '2', '4'"),
    (lambda lab: lab.freeze("nope"), "unknown layer"),
    (lambda lab: lab.freeze("0", "yes"), "True or False"),
    (lambda lab: lab.set_clip("global_norm", 0.0), "threshold must be a number > 0"),
    (lambda lab: lab.set_clip("norm", -1.0), "threshold must be a number > 0"),
    (lambda lab: lab.set_clip("global_norm"), "threshold must be a number > 0"),
    (lambda lab: lab.set_clip("l1", 1.0), "clip mode must be one of"),
    (lambda lab: lab.set_lr(-0.1), "learning rate must be a number >= 0"),
    (lambda lab: lab.set_lr(True), "learning rate must be a number >= 0"),
])
def test_bad_values_raise_and_change_nothing(action, message):
    lab = demos.moons_mlp()
    lab.set_clip("norm", 2.0)
    lab.step(2)
    before = lab.state()
    params = {n: p.numpy().copy() for n, p in lab.model.named_parameters()}
    with pytest.raises(LabError, match=message):
        action(lab)
    after = lab.state()
    assert after == before or (math.isnan(after["loss"]) and math.isnan(before["loss"]))
    for name, p in lab.model.named_parameters():
        np.testing.assert_array_equal(params[name], p.numpy())
        assert p.lr_mult == 1.0 and p.requires_grad


def test_set_lr_changes_every_group_and_keeps_their_ratio():
    manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.SGD([{"params": model[0].parameters(), "lr": 0.1},
                     {"params": model[2].parameters(), "lr": 0.01}], lr=0.1)
    lab = TrainingLab(model, opt, F.cross_entropy, data.make_moons(n=32))
    lab.set_lr(0.5)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.5, 0.05])
    assert lab.state()["lr"] == 0.5


def test_an_error_inside_a_step_stops_the_loop_and_is_kept():
    lab = plain_sgd_lab()
    lab.set_lr(1e30)
    assert lab.run(50) is False
    assert "the loss became" in lab.state()["error"] and "lower the learning rate" in \
        lab.state()["error"]
    stopped_at = lab.steps_done
    with pytest.raises(LabError, match="call lab.reset"):
        lab.step(1)
    assert lab.steps_done == stopped_at
    lab.reset()
    assert lab.error is None and lab.steps_done == 0


def test_reset_restores_the_initial_weights_and_the_same_trajectory():
    lab = demos.moons_mlp()
    initial = {n: p.numpy().copy() for n, p in lab.model.named_parameters()}
    lab.step(15)
    first = lab.recorder.series("loss").copy()
    lab.reset()
    for name, p in lab.model.named_parameters():
        np.testing.assert_array_equal(initial[name], p.numpy())
    assert lab.recorder.count == 0 and not lab.optimizer.state
    lab.step(15)
    np.testing.assert_array_equal(first, lab.recorder.series("loss"))


def test_reset_keeps_the_controls():
    lab = demos.moons_mlp()
    lab.freeze("0")
    lab.set_lr_mult("2", 0.5)
    lab.set_clip("value", 0.1)
    lab.set_lr(0.05)
    lab.step(3)
    lab.reset()
    state = lab.state()
    assert state["layers"][0]["frozen"] and state["layers"][1]["lr_mult"] == 0.5
    assert state["clip_mode"] == "value" and state["lr"] == 0.05
    assert lab.optimizer.param_groups[0]["lr"] == 0.05


def test_state_describes_layers_and_latest_traces():
    lab = demos.moons_mlp()
    lab.step(3)
    state = lab.state()
    assert state["step"] == 3 and math.isfinite(state["loss"]) and state["error"] is None
    assert [row["name"] for row in state["layers"]] == ["0", "2", "4"]
    row = state["layers"][0]
    assert row["param_norm"] > 0 and row["grad_norm"] > 0 and not row["frozen"]


@pytest.mark.parametrize("make", [demos.moons_mlp, demos.exploding_gradients, demos.tied_mlp,
                                  demos.digits_mlp])
def test_every_demo_builds_and_trains(make):
    lab = make()
    assert lab.run(5)
    assert lab.steps_done == 5 and lab.recorder.count == 5


def test_tied_layer_is_one_layer_and_freezing_it_freezes_both_uses():
    lab = demos.tied_mlp()
    assert lab.model[2] is lab.model[4] and "4" not in lab.layers
    lab.freeze("2")
    before = values(lab, "2")
    lab.step(5)
    for a, b in zip(before, values(lab, "2")):
        np.testing.assert_array_equal(a, b)


def test_data_must_be_a_loader_or_a_pair():
    model = nn.Linear(2, 2)
    with pytest.raises(LabError, match="DataLoader or a pair"):
        TrainingLab(model, optim.SGD(model.parameters(), lr=0.1), F.cross_entropy, [1, 2, 3])


def test_accuracy_gives_every_module_its_own_mode_back():
    lab = demos.moons_mlp()
    lab.model[1].eval()                                  # one module kept in eval on purpose
    lab.accuracy()
    assert lab.model.training and lab.model[0].training and not lab.model[1].training
