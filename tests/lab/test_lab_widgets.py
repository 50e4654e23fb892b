"""The lab's widget view without a browser: every control drives the controller, bad values
change nothing and are reported, one live view per lab, the status line's data attributes,
and the asyncio training loop (run briefly with asyncio.run)."""
from __future__ import annotations

import asyncio
import base64
import math
import re
import time
from html.parser import HTMLParser

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from dltutor import data, nn, optim
from dltutor.autograd.rng import manual_seed
from dltutor.lab import LabError, TrainingLab, demos
from dltutor.lab import widgets as lw
from dltutor.lab.widgets import LabView, layer_key, layer_keys, live_views
from dltutor.nn import functional as F
from bad_input import refused


@pytest.fixture(autouse=True)
def _close_views():
    yield
    lw.close_all()


def weights(lab, layer):
    return [p.numpy().copy() for p in lab._layer_params(layer)]


def status_attributes(view) -> dict[str, str]:
    """The attributes of the status div, parsed from its HTML as a browser would."""
    found: dict[str, str] = {}

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if "dltutor-status" in (attrs.get("class") or "").split():
                found.update(attrs)

    Parser().feed(view.status.value)
    return found


def nested_lab():
    """A lab whose layers have dotted names with spaces: 'block 1.0', 'block 1.2', 'head'."""
    manual_seed(0)
    X, y = data.make_moons(n=64, seed=0)
    model = nn.Sequential()
    model.add_module("block 1", nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 8)))
    model.add_module("head", nn.Linear(8, 2))
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), name="nested")


# -- controls drive the controller ---------------------------------------------------------------
def test_freeze_checkbox_freezes_and_unfreezes_the_layer():
    view = LabView(demos.moons_mlp())
    view.freeze["2"].value = True
    assert view.lab.state()["layers"][1]["frozen"] is True
    before = weights(view.lab, "2")
    view.lab.step(5)
    for a, b in zip(before, weights(view.lab, "2")):
        np.testing.assert_array_equal(a, b)
    view.freeze["2"].value = False
    assert view.lab.state()["layers"][1]["frozen"] is False
    assert status_attributes(view)["data-frozen-2"] == "0"


def test_lr_multiplier_slider_sets_the_layer_multiplier_including_zero():
    view = LabView(demos.moons_mlp())
    assert [v for _, v in view.lr_mult["0"].options] == list(lw.LR_MULTS)
    view.lr_mult["0"].value = 3.0
    view.lr_mult["4"].value = 0.0
    layers = view.lab.state()["layers"]
    assert layers[0]["lr_mult"] == 3.0 and layers[2]["lr_mult"] == 0.0
    assert all(p.lr_mult == 3.0 for p in view.lab._layer_params("0"))
    before = weights(view.lab, "4")
    view.lab.step(3)
    for a, b in zip(before, weights(view.lab, "4")):
        np.testing.assert_array_equal(a, b)          # lr x 0: the layer does not move


@pytest.mark.parametrize("mode", ["value", "norm", "global_norm"])
def test_clip_mode_and_threshold_set_the_optimizer_clip(mode):
    view = LabView(demos.moons_mlp())
    view.clip_threshold.value = 0.3
    assert view.lab.clip_setting() == (None, None)   # off: the threshold waits
    view.clip_mode.value = mode
    assert view.lab.clip_setting() == (mode, 0.3)
    view.clip_threshold.value = 3.0
    assert view.lab.clip_setting() == (mode, 3.0)
    view.clip_mode.value = "off"
    assert view.lab.optimizer.grad_clip is None


def test_the_clip_slider_starts_at_the_labs_threshold_where_clipping_bites():
    view = LabView(demos.moons_mlp())
    assert view.clip_mode.value == "off"
    assert view.clip_threshold.value == view.lab.clip_default == 0.3
    view.clip_mode.value = "global_norm"             # switching it on clips at that threshold
    assert view.lab.clip_setting() == ("global_norm", 0.3)
    view.close()
    lab = demos.moons_mlp()
    lab.set_clip("norm", 3.0)                        # a threshold set in code is the one shown
    view = LabView(lab)
    assert view.clip_threshold.value == 3.0
    view.close()


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, "1"])
def test_a_bad_clip_default_is_refused_before_the_lab_is_made(bad):
    model = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises((TypeError, ValueError), match="clip_default"):
        TrainingLab(model, optim.SGD(model.parameters(), lr=0.1), F.cross_entropy,
                    (np.zeros((4, 2), np.float32), np.zeros(4, np.int64)), clip_default=bad)


def test_global_lr_text_sets_the_learning_rate():
    view = LabView(demos.moons_mlp())
    view.lr.value = 0.05
    assert view.lab.base_lr == 0.05
    assert view.lab.optimizer.param_groups[0]["lr"] == 0.05


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_a_bad_lr_changes_nothing_is_reported_and_the_widget_snaps_back(bad):
    view = LabView(demos.moons_mlp())
    view.lab.step(3)
    before = {k: v.numpy().copy() for k, v in view.lab.model.state_dict().items()}
    view.lr.value = bad
    assert view.lr.value == 0.1 and view.lab.base_lr == 0.1
    assert view.lab.optimizer.param_groups[0]["lr"] == 0.1
    attrs = status_attributes(view)
    assert attrs["data-error"].startswith("LabError: learning rate must be")
    assert "last error" in view.status.value
    after = view.lab.model.state_dict()
    assert all(np.array_equal(before[k], after[k].numpy()) for k in before)   # nothing lost
    assert view.lab.steps_done == 3
    view.lr.value = 0.2                       # a good value clears the error
    assert view.lab.base_lr == 0.2 and status_attributes(view)["data-error"] == ""


def test_any_refused_control_restores_its_widget(monkeypatch):
    view = LabView(demos.moons_mlp())
    view.lr_mult["2"].value = 0.3

    def refuse(layer, value):
        raise LabError(f"no multiplier {value} for layer {layer!r} today")

    monkeypatch.setattr(view.lab, "set_lr_mult", refuse)
    monkeypatch.setattr(view.lab, "freeze", lambda layer, frozen=True: refuse(layer, frozen))
    view.lr_mult["2"].value = 10.0
    assert view.lr_mult["2"].value == 0.3                     # back to the controller's value
    assert "no multiplier 10.0" in status_attributes(view)["data-error"]
    view.freeze["0"].value = True
    assert view.freeze["0"].value is False
    assert view.lab.state()["layers"][0]["frozen"] is False


def test_buttons_step_and_reset():
    view = LabView(demos.moons_mlp())
    view.buttons["step"].click()
    view.buttons["step"].click()
    assert view.lab.steps_done == 2 and status_attributes(view)["data-step"] == "2"
    view.freeze["0"].value = True
    view.buttons["reset"].click()
    assert view.lab.steps_done == 0 and view.freeze["0"].value is True   # controls stay


def test_widgets_follow_changes_made_in_code():
    view = LabView(demos.moons_mlp())
    view.lab.freeze("2")
    view.lab.set_lr_mult("0", 2.0)                # not one of the slider's stops
    view.lab.set_clip("norm", 0.5)
    view.lab.set_lr(0.03)
    view.refresh()
    assert view.freeze["2"].value is True
    assert view.lr_mult["0"].value == 2.0 and (("2", 2.0) in view.lr_mult["0"].options)
    assert view.clip_mode.value == "norm" and view.clip_threshold.value == 0.5
    assert view.lr.value == 0.03
    assert view.lab.clip_setting() == ("norm", 0.5)   # syncing did not call the controller back


# -- the page: CSS classes and the status line -----------------------------------------------------
def test_every_control_has_its_css_class():
    view = LabView(demos.moons_mlp())
    classes = {c for w in view._all_widgets() for c in w._dom_classes}
    expected = {"dltutor-lab", "dltutor-play", "dltutor-pause", "dltutor-step", "dltutor-reset",
                "dltutor-clip-mode", "dltutor-clip-threshold", "dltutor-lr", "dltutor-pace",
                "dltutor-status-line", "dltutor-plots", "dltutor-legend", "dltutor-grad-norm"}
    expected |= {f"dltutor-{what}-{layer}" for what in ("freeze", "lr-mult")
                 for layer in ("0", "2", "4")}
    assert expected <= classes


def test_status_html_carries_the_data_attributes():
    view = LabView(demos.moons_mlp())
    view.lab.step(4)
    view.freeze["2"].value = True
    view.refresh()
    attrs = status_attributes(view)
    state = view.lab.state()
    assert attrs["data-step"] == "4" and float(attrs["data-loss"]) == state["loss"]
    assert attrs["data-running"] == "0" and attrs["data-layer-keys"] == "0 2 4"
    for row in state["layers"]:
        assert float(attrs[f"data-norm-{row['name']}"]) == row["param_norm"]   # full precision
    assert attrs["data-frozen-2"] == "1" and attrs["data-frozen-0"] == "0"
    for name in ("data-steps-per-second", "data-redraws", "data-clip-scale", "data-lr-mult-0",
                 "data-clip-mode", "data-draw-requests"):
        assert name in attrs
    assert {k: v for k, v in attrs.items() if k.startswith("data-")} == view.status_data()


def test_layer_names_with_dots_and_spaces_get_safe_keys():
    assert layer_key("block 1.0") == "block-1-0" and layer_key("") == "root"
    assert layer_keys(["a.b", "a_b", "A-B"]) == {"a.b": "a-b", "a_b": "a-b-2", "A-B": "a-b-3"}
    view = LabView(nested_lab())
    assert view.lab.layers == ["block 1.0", "block 1.2", "head"]
    view.lab.step(2)
    view.refresh()
    attrs = status_attributes(view)
    assert attrs["data-layer-keys"] == "block-1-0 block-1-2 head"
    assert float(attrs["data-norm-block-1-2"]) > 0
    assert "dltutor-freeze-block-1-0" in view.freeze["block 1.0"]._dom_classes
    for name in attrs:                          # valid attribute names for the HTML parser
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), name


# -- live views -----------------------------------------------------------------------------------
def test_show_twice_keeps_one_live_view_and_closes_the_old_figure():
    lab = demos.moons_mlp()
    first = lab.show()
    (view1,) = live_views()
    assert first is view1.widget
    lab.show()
    (view2,) = live_views()
    assert view2 is not view1 and view1.closed and not view2.closed
    assert view1.chart.comm is None and view1.freeze["0"].comm is None    # widgets closed
    demos.moons_mlp().show()                 # re-running `demos.moons_mlp().show()`
    (view3,) = live_views()
    assert view2.closed and view3.lab is not lab
    demos.exploding_gradients().show()            # another lab: both stay
    assert len(live_views()) == 2


def numbers(text):
    """A line of the chart's frame back as numbers (base64 float32, as chart.js reads it)."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


def test_the_view_makes_no_matplotlib_figure():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    view = LabView(demos.moons_mlp())
    assert plt.get_fignums() == before and "boundary" in view.chart.spec


def test_a_lab_without_2d_data_has_no_decision_boundary():
    view = LabView(demos.digits_mlp())
    view.lab.step(2)
    view.refresh(plots=True)
    assert "boundary" not in view.chart.spec and "boundary" not in view.chart.frame
    assert [p["id"] for p in view.chart.spec["panels"]] == ["loss", "param", "grad", "ratio"]


def test_the_frame_holds_the_recorded_steps_the_frozen_span_and_the_marks():
    view = LabView(demos.moons_mlp())
    view.lab.step(5)
    view.freeze["2"].value = True                # what ticking the box does
    view.lab.step(5)
    view.refresh(plots=True)
    frame = view.chart.frame
    assert list(numbers(frame["x"])) == list(range(10))
    np.testing.assert_array_equal(numbers(frame["panels"]["loss"]["lines"][0]["y"]),
                                  view.lab.recorder.series("loss").astype("<f4"))
    (span,) = frame["spans"]
    assert (span["x0"], span["x1"]) == (4.5, 9.5) and span["color"] == view._colors[1]
    assert frame["markers"] == [{"x": 5, "control": "freeze 2", "text": "layer 2 frozen"}]
    frozen_grad = numbers(frame["panels"]["grad"]["lines"][1]["y"])
    assert (frozen_grad[5:] == 0).all()          # drawn on the 0 floor line, not left out
    assert frame["boundary"]["title"].startswith("accuracy")


def test_clipping_adds_the_after_clipping_lines_and_the_threshold():
    view = LabView(demos.exploding_gradients())
    view.clip_mode.value = "global_norm"
    view.clip_threshold.value = 1.0
    view.lab.step(3)
    view.refresh(plots=True)
    grad = view.chart.frame["panels"]["grad"]
    after = [line for line in grad["lines"] if line["dash"]]
    assert len(after) == len(view.lab.layers) + 1          # each layer, and the global norm
    assert grad["hlines"] == [{"y": 1.0, "label": "clip threshold 1"}]
    global_after = numbers(after[-1]["y"])
    assert np.all(global_after <= 1.0 + 1e-5)               # pinned to the threshold
    assert view.chart.frame["markers"][-1]["text"] == "clip global norm 1"


def test_the_gradient_norm_beside_the_clip_slider_is_the_latest_one():
    view = LabView(demos.moons_mlp())
    view.lab.step(3)
    view.refresh()
    latest = view.lab.recorder.series("global_grad_norm")[-1]
    assert f"{latest:.3g}" in view.grad_norm.value
    assert status_attributes(view)["data-grad-norm"] == repr(float(latest))


# -- the asyncio training loop ---------------------------------------------------------------------
def test_train_runs_the_requested_steps_and_stops():
    view = LabView(demos.moons_mlp(), pace=None)            # as fast as it goes
    asyncio.run(view.train(steps=30))
    assert view.lab.steps_done == 30 and not view.running
    assert status_attributes(view)["data-running"] == "0"
    assert view.buttons["play"].disabled is False


def test_play_twice_starts_one_loop_and_controls_apply_mid_run():
    view = LabView(demos.moons_mlp(), slice_seconds=0.005, pace=None)

    async def scenario():
        view.play()
        task = view.trainer.task
        view.play()                               # pressing play again changes nothing
        assert view.trainer.task is task and view.running
        assert view.buttons["play"].disabled and not view.buttons["pause"].disabled
        while view.lab.steps_done < 20:
            await asyncio.sleep(0.005)
        assert status_attributes(view)["data-running"] == "1"
        view.freeze["2"].value = True              # what a click does, mid-run
        view.clip_mode.value = "global_norm"
        frozen_at, norm = view.lab.steps_done, weights(view.lab, "2")
        while view.lab.steps_done < frozen_at + 20:
            await asyncio.sleep(0.005)
        view.pause()
        await task
        return frozen_at, norm

    frozen_at, norm = asyncio.run(scenario())
    assert not view.running and view.lab.steps_done >= frozen_at + 20
    for a, b in zip(norm, weights(view.lab, "2")):
        np.testing.assert_array_equal(a, b)
    flags = view.lab.recorder.series("frozen", "2")
    assert flags[frozen_at:].tolist() == [1.0] * (len(flags) - frozen_at)
    assert view.lab.clip_setting()[0] == "global_norm"


def test_frames_are_sent_on_a_beat_of_twelve_per_second():
    view = LabView(demos.moons_mlp(), slice_seconds=0.002, pace=None)
    requests = view.draw_requests
    started = time.perf_counter()
    asyncio.run(view.train(seconds=0.6))
    elapsed = time.perf_counter() - started
    assert view.lab.steps_done > 0
    # a bound, not a speed: one frame per 1/12 s of the run, plus the first and the last
    assert view.draw_requests - requests <= elapsed * 12 + 2


def test_a_training_error_stops_the_loop_and_shows_in_the_status_line():
    view = LabView(demos.moons_mlp(), pace=None)
    view.lr.value = 1e6                      # the loss blows up within a few steps
    asyncio.run(view.train(steps=200))
    attrs = status_attributes(view)
    assert attrs["data-running"] == "0" and view.lab.error is not None
    assert attrs["data-error"].startswith("FloatingPointError")
    asyncio.run(view.train(steps=5))          # the stopped lab refuses to go on, says why
    assert "call lab.reset()" in status_attributes(view)["data-error"]
    view.lr.value = 0.1
    view.buttons["reset"].click()
    asyncio.run(view.train(steps=5))
    assert view.lab.steps_done == 5 and status_attributes(view)["data-error"] == ""


def test_close_stops_the_running_task():
    view = LabView(demos.moons_mlp())

    async def scenario():
        view.play()
        task = view.trainer.task
        await asyncio.sleep(0.05)
        view.close()
        with pytest.raises(asyncio.CancelledError):
            await task
        return view.lab.steps_done

    steps = asyncio.run(scenario())
    assert view.closed and not view.running and view.lab.steps_done == steps
    view.play()                                   # a closed view does not start again
    assert view.trainer.task.done()


def test_a_refused_step_shows_in_the_status_line_and_changes_nothing():
    """A NaN gradient (here planted by a hook) makes the optimizer refuse the step: the lab
    stops, the status line says which parameter and why, and the weights are the last good
    ones."""
    view = LabView(demos.moons_mlp())
    view.buttons["step"].click()
    weights = {k: v.numpy().copy() for k, v in view.lab.model.state_dict().items()}
    first = next(iter(view.lab.model.parameters()))
    first.register_hook(lambda grad: grad * float("nan"))
    view.buttons["step"].click()
    assert isinstance(view.lab.error, optim.NonFiniteGradientError)
    error = status_attributes(view)["data-error"]
    assert "NaN or Inf" in error and repr(view.lab.error.names[0]) in error
    assert view.lab.steps_done == 1
    for key, value in view.lab.model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), weights[key], err_msg=key)


# -- speed ---------------------------------------------------------------------------------------
def test_the_view_starts_at_the_labs_pace_and_the_slider_changes_it():
    view = LabView(demos.moons_mlp())
    assert view.pace == 3.0 and view.speed.value == 3.0
    assert status_attributes(view)["data-pace"] == "3.0"
    view.speed.value = math.inf                             # "max"
    assert view.pace is None and status_attributes(view)["data-pace"] == "max"
    view.close()
    refused(lambda: LabView(demos.moons_mlp(), pace=0), ValueError, "pace")


@pytest.mark.parametrize("pace", [10.0, 40.0])
def test_training_never_runs_ahead_of_the_chosen_speed(pace):
    view = LabView(demos.moons_mlp(), pace=pace, slice_seconds=0.005)
    start = time.perf_counter()
    asyncio.run(view.train(seconds=0.5))
    elapsed = time.perf_counter() - start
    # A correctness bound, not a speed test: step k may start only (k - 1) / pace seconds in.
    assert 1 <= view.lab.steps_done <= pace * elapsed + 1
    view.close()


def seconds_to_learn(make, target, pace, clip=False):
    lab = make()
    if clip:
        lab.set_clip("global_norm", 1.0)
    while lab.accuracy() < target:
        lab.step(5)
        assert lab.steps_done < 5000, "the demo never learned"
    return lab.steps_done / pace


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("demo, target, clip", [("moons_mlp", 0.97, False),
                                                ("exploding_gradients", 0.95, True),
                                                ("digits_mlp", 0.95, False),
                                                ("spirals_mlp", 0.9, False)])
def test_at_its_pace_a_demo_takes_20_to_60_seconds_to_learn(demo, target, clip, seed):
    make = getattr(demos, demo)
    pace = make(seed=seed).pace
    assert 20 <= seconds_to_learn(lambda: make(seed=seed), target, pace, clip) <= 60
