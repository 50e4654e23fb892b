"""The marks the lab's charts draw where a control changed: which marks the controller keeps
(dltutor/lab/controller.py, ``events``), what the frame sends (chart.py, ``markers``) and where
the browser puts their labels (chart.js, ``placeLabels`` and ``drawPanel``).

chart.js runs here in Node (the browser tests, tests/browser, draw it in Chromium but only with
whatever marks a run happens to make): the file is imported as the ES module it is, with a
canvas that records nothing and measures every character as 6 pixels wide.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dltutor as dt
from dltutor.lab import LabError, demos
from dltutor.lab.chart import chart_frame, chart_spec, layer_colors

CHART_JS = Path(__file__).resolve().parents[2] / "dltutor" / "lab" / "chart.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
CHAR = 6                    # pixels per character of the stand-in measure
LANE_ROW = 14


# -- the controller's marks ---------------------------------------------------------------------
def test_each_control_change_leaves_one_mark_at_its_step():
    lab = demos.moons_mlp()
    lab.step(2)
    lab.set_lr(0.3)
    lab.freeze("2")
    lab.step(3)
    lab.set_lr_mult("0", 0.5)
    lab.set_clip("norm", 2.0)
    lab.set_clip(None)
    assert lab.events == [(2, "lr 0.3"), (2, "layer 2 frozen"), (5, "layer 0 lr × 0.5"),
                          (5, "clip off")]


def test_dragging_a_slider_within_one_step_leaves_its_last_value_only():
    lab = demos.moons_mlp()
    lab.step(1)
    for value in (0.1, 0.2, 0.3):
        lab.set_lr(value)
    assert lab.events == [(1, "lr 0.3")]
    lab.freeze("0")
    lab.set_lr(0.4)                    # another control came between: a mark of its own
    assert lab.events == [(1, "lr 0.3"), (1, "layer 0 frozen"), (1, "lr 0.4")]
    lab.step(1)
    lab.set_lr(0.5)                    # the same control at a later step: a new mark
    assert lab.events[-2:] == [(1, "lr 0.4"), (2, "lr 0.5")]


def test_the_same_control_on_two_layers_makes_two_marks():
    lab = demos.moons_mlp()
    lab.freeze("0")
    lab.freeze("2")
    lab.freeze("2", False)             # the same layer again: replaces its mark
    lab.set_lr_mult("0", 2.0)
    lab.set_lr_mult("2", 3.0)
    assert lab.events == [(0, "layer 0 frozen"), (0, "layer 2 unfrozen"),
                          (0, "layer 0 lr × 2"), (0, "layer 2 lr × 3")]


@pytest.mark.parametrize("change", [
    lambda lab: lab.set_lr(math.nan), lambda lab: lab.set_lr(-1.0),
    lambda lab: lab.set_lr_mult("0", math.inf), lambda lab: lab.set_lr_mult("9", 1.0),
    lambda lab: lab.freeze("0", "yes"), lambda lab: lab.set_clip("norm", 0.0),
    lambda lab: lab.set_clip("sideways", 1.0),
])
def test_a_refused_change_leaves_no_mark_and_does_not_swallow_the_next(change):
    lab = demos.moons_mlp()
    lab.set_lr(0.2)
    with pytest.raises(LabError):
        change(lab)
    assert lab.events == [(0, "lr 0.2")]
    lab.set_lr(0.3)                    # still the same drag: the refused change broke nothing
    assert lab.events == [(0, "lr 0.3")]


def test_reset_forgets_the_marks_and_a_mark_after_it_is_kept():
    lab = demos.moons_mlp()
    lab.step(2)
    lab.set_lr(0.2)
    lab.reset()
    assert lab.events == []
    lab.set_lr(0.3)
    lab.set_lr(0.4)
    assert lab.events == [(0, "lr 0.4")]


def test_the_frame_sends_every_mark_with_its_step_and_text():
    lab = demos.moons_mlp()
    lab.step(3)
    lab.set_clip("global_norm", 1.0)
    lab.step(2)
    lab.freeze("2")
    markers = chart_frame(lab, layer_colors(lab))["markers"]
    assert markers == [{"x": 3, "control": "clip", "text": "clip global norm 1"},
                       {"x": 5, "control": "freeze 2", "text": "layer 2 frozen"}]


# -- chart.js, in Node ---------------------------------------------------------------------------
DRIVER = """
import * as chart from "./chart.mjs";
const input = JSON.parse(process.argv[2]);
const measure = (t) => t.length * %d;
if (input.kind === "heights") {
  console.log(JSON.stringify(input.widths.map(chart.panelHeight)));
} else if (input.kind === "place") {
  const marks = input.marks.map((m) => ({ ...m }));
  const boxes = chart.placeLabels(marks, (x) => input.left + x * input.scale, measure,
                                  input.left, input.right, ...(input.more ? [input.more] : []));
  const same = JSON.stringify(marks) === JSON.stringify(input.marks);
  console.log(JSON.stringify({ boxes, untouched: same }));
} else {
  globalThis.window = { devicePixelRatio: 1 };
  const ctx = new Proxy({}, { get: (t, k) => k === "measureText" ? (s) => ({ width: measure(s) })
                                             : (k in t ? t[k] : () => {}),
                              set: (t, k, v) => { t[k] = v; return true; } });
  const canvas = { width: 0, height: 0, style: {}, dataset: {}, getContext: () => ctx };
  const x = btoa(String.fromCharCode(...new Uint8Array(new Float32Array(input.x).buffer)));
  const panels = { loss: { lines: [], hlines: input.hlines || [] } };
  chart.drawPanel(canvas, { id: "loss" }, chart.decodeFrame({ x, markers: input.markers, panels }),
                  input.width, input.height ? { height: input.height } : {});
  console.log(JSON.stringify({ labels: JSON.parse(canvas.dataset.markLabels),
                               box: JSON.parse(canvas.dataset.plotBox),
                               references: JSON.parse(canvas.dataset.refLabels) }));
}
""" % CHAR


@pytest.fixture(scope="module")
def run_chart(tmp_path_factory):
    if NODE is None:
        pytest.skip("Node.js is not installed")
    folder = tmp_path_factory.mktemp("chart")
    (folder / "chart.mjs").write_text(CHART_JS.read_text(encoding="utf-8")
                                      + "\nexport { placeLabels, drawPanel, decodeFrame, "
                                      "panelHeight };\n",
                                      encoding="utf-8")
    (folder / "driver.mjs").write_text(DRIVER, encoding="utf-8")

    def run(**payload):
        out = subprocess.run([NODE, str(folder / "driver.mjs"), json.dumps(payload)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


def place(run_chart, marks, left=50, right=650, scale=1.0, more=None):
    """placeLabels on ``marks``: (step, text) pairs, or the frame's markers (dicts)."""
    marks = [m if isinstance(m, dict) else {"x": m[0], "text": m[1]} for m in marks]
    result = run_chart(kind="place", marks=marks, left=left, right=right, scale=scale,
                       more=more)
    assert result["untouched"], "placeLabels changed the marks it was given"
    return result["boxes"]


def width(text):
    return len(text) * CHAR


def counted(text, count):
    """A label with ``count`` more counted into it, as chart.js writes it in English."""
    return f"{text} (and {count} more)"


def test_a_label_starts_just_after_its_mark_in_the_first_row(run_chart):
    [box] = place(run_chart, [(100, "lr 0.3")])
    assert (box["text"], box["x"], box["y"], box["w"], box["at"]) == \
        ("lr 0.3", 50 + 100 + 3, 2, width("lr 0.3"), 150)


def test_a_label_near_the_right_edge_ends_there_with_room_for_a_count(run_chart):
    [box] = place(run_chart, [(595, "layer 2 frozen")])
    assert box["x"] == 650 - width(counted("layer 2 frozen", 99))
    assert box["w"] == width("layer 2 frozen")
    [box] = place(run_chart, [(0, "x" * 200)])          # wider than the plot: starts at left
    assert box["x"] == 50


def test_overlapping_labels_take_the_second_row_then_are_counted(run_chart):
    boxes = place(run_chart, [(100, "lr 0.1"), (101, "lr 0.2"), (102, "lr 0.3"),
                              (103, "lr 0.4")])
    assert [(b["text"], b["y"]) for b in boxes] == [("lr 0.1", 2),
                                                    (counted("lr 0.2", 2), 2 + LANE_ROW)]
    assert boxes[1]["w"] == width(counted("lr 0.2", 2))


def test_labels_are_placed_in_the_order_of_their_steps_whatever_the_order_given(run_chart):
    boxes = place(run_chart, [(300, "late"), (100, "early"), (102, "close")])
    assert [(b["text"], b["y"]) for b in boxes] == [("early", 2), ("close", 2 + LANE_ROW),
                                                    ("late", 2)]


def test_labels_far_enough_apart_share_the_first_row_with_a_gap_of_six(run_chart):
    text = "lr 1"
    needed = width(counted(text, 99)) + 6               # the gap the layout keeps
    boxes = place(run_chart, [(100, text), (100 + needed, text)])
    assert [b["y"] for b in boxes] == [2, 2]
    boxes = place(run_chart, [(100, text), (100 + needed - 1, text)])
    assert [b["y"] for b in boxes] == [2, 2 + LANE_ROW]


def test_no_marks_no_labels_and_counted_labels_never_overlap(run_chart):
    assert place(run_chart, []) == []
    marks = [(x, f"lr {x}") for x in range(0, 600, 7)]
    boxes = place(run_chart, marks)
    for row in {b["y"] for b in boxes}:
        spans = sorted((b["x"], b["x"] + b["w"]) for b in boxes if b["y"] == row)
        assert all(end + 6 <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    count = re.compile(r" \(and (\d+) more\)$")
    hidden = sum(int(m.group(1)) for b in boxes if (m := count.search(b["text"])))
    assert len(boxes) + hidden == len(marks)            # every mark shown or counted
    assert all(50 <= b["x"] and b["x"] + b["w"] <= 650 for b in boxes)


@needs_node
def test_a_panel_labels_the_marks_inside_its_steps_only_ends_included(run_chart):
    result = run_chart(kind="panel", x=list(range(0, 21)), width=600, markers=[
        {"x": -1, "text": "before"}, {"x": 0, "text": "first"}, {"x": 20, "text": "last"},
        {"x": 21, "text": "after"}])
    assert sorted(label["text"] for label in result["labels"]) == ["first", "last"]
    box = result["box"]
    assert box["top"] == 6 + 2 * LANE_ROW                 # the lane of two rows is above
    assert all(label["y"] + label["h"] <= box["top"] for label in result["labels"])


# -- a burst of changes: the label shows the value in force ------------------------------------
def lab_after_a_burst(**extra_marks):
    """Moons at step 300 (the chart 2 px per step): layer 0's lr multiplier set to 0.1 at step
    0; at step 100 layer 2 frozen, then the multiplier moved 0.1 -> 10 with four key presses,
    one step apart (issue 47), and with ``also_freeze_4`` layer 4 frozen at the last press."""
    lab = demos.moons_mlp()
    lab.set_lr_mult("0", 0.1)
    lab.step(100)
    lab.freeze("2")
    for value in (0.3, 1.0, 3.0, 10.0):
        lab.step(1)
        lab.set_lr_mult("0", value)
    if extra_marks.get("also_freeze_4"):
        lab.freeze("4")
    lab.step(300 - lab.steps_done)
    return lab


def burst_labels(run_chart, lab):
    frame = chart_frame(lab, layer_colors(lab))
    more = chart_spec(lab)["mark_more"]
    return [b["text"] for b in place(run_chart, frame["markers"], scale=2.0, more=more)]


@pytest.mark.parametrize("language, in_force, counted_in", [
    ("en", "layer 0 lr × 10", "layer 0 lr × 10 (and 1 more)"),
    ("zh", "层 0 学习率 × 10", "层 0 学习率 × 10（另有 1 处）"),
])
def test_after_a_burst_of_changes_the_mark_shows_the_value_in_force(run_chart, language,
                                                                     in_force, counted_in):
    dt.set_language(language)
    try:
        lab = lab_after_a_burst()
        assert len(lab.events) == 1 + 1 + 4           # every change is kept, at its step
        start, frozen = lab.events[0][1], lab.events[1][1]   # at step 0 and step 100
        assert burst_labels(run_chart, lab) == [start, frozen, in_force]
        # a change of another control in the crowd is counted into the value in force
        crowded = lab_after_a_burst(also_freeze_4=True)
        assert burst_labels(run_chart, crowded) == [start, frozen, counted_in]
    finally:
        dt.set_language("en")


def test_changes_of_one_control_far_apart_each_keep_their_label(run_chart):
    boxes = place(run_chart, [{"x": 10, "control": "lr_mult 0", "text": "layer 0 lr × 3"},
                              {"x": 200, "control": "lr_mult 0", "text": "layer 0 lr × 10"}])
    assert [(b["text"], b["y"]) for b in boxes] == [("layer 0 lr × 3", 2),
                                                    ("layer 0 lr × 10", 2)]


def test_a_replaced_label_hands_on_what_was_counted_into_it(run_chart):
    marks = [{"x": 100, "control": "a", "text": "a 1"}, {"x": 100, "control": "b", "text": "b"},
             {"x": 100, "control": "c", "text": "c"}, {"x": 101, "control": "b", "text": "b 2"}]
    boxes = place(run_chart, marks)        # c is counted into b; b 2 replaces b, and keeps c
    assert [(b["text"], b["y"]) for b in boxes] == [("a 1", 2), (counted("b 2", 1), 2 + LANE_ROW)]


def test_panels_are_shorter_on_a_phone_only(run_chart):
    # the plots' width: a phone (412 px page), a narrow window, a desktop's three columns
    assert run_chart(kind="heights", widths=[382, 599, 600, 1250]) == [180, 180, 236, 236]


@needs_node
def test_a_threshold_label_stays_inside_the_plot_of_a_tall_or_short_panel(run_chart):
    results = [run_chart(kind="panel", x=list(range(0, 21)), width=width, height=height,
                         markers=[], hlines=[{"y": 1.0, "label": "clip threshold 1"}])
               for width, height in ((600, 236), (380, 180))]
    assert results[0]["box"]["bottom"] - results[1]["box"]["bottom"] == 236 - 180
    for result in results:
        [label] = result["references"]          # the only value: its line is at the very top
        box = result["box"]
        assert label["text"] == "clip threshold 1"
        assert box["top"] <= label["y"] and label["y"] + label["h"] <= box["bottom"]
        assert box["left"] <= label["x"] and label["x"] + label["w"] <= box["right"]
