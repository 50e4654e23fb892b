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
import shutil
import subprocess
from pathlib import Path

import pytest

from dltutor.lab import LabError, demos
from dltutor.lab.chart import chart_frame, layer_colors

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
    assert markers == [{"x": 3, "text": "clip global norm 1"}, {"x": 5, "text": "layer 2 frozen"}]


# -- chart.js, in Node ---------------------------------------------------------------------------
DRIVER = """
import * as chart from "./chart.mjs";
const input = JSON.parse(process.argv[2]);
const measure = (t) => t.length * %d;
if (input.kind === "place") {
  const marks = input.marks.map((m) => ({ ...m }));
  const boxes = chart.placeLabels(marks, (x) => input.left + x * input.scale, measure,
                                  input.left, input.right);
  const same = JSON.stringify(marks) === JSON.stringify(input.marks);
  console.log(JSON.stringify({ boxes, untouched: same }));
} else {
  globalThis.window = { devicePixelRatio: 1 };
  const ctx = new Proxy({}, { get: (t, k) => k === "measureText" ? (s) => ({ width: measure(s) })
                                             : (k in t ? t[k] : () => {}),
                              set: (t, k, v) => { t[k] = v; return true; } });
  const canvas = { width: 0, height: 0, style: {}, dataset: {}, getContext: () => ctx };
  const x = btoa(String.fromCharCode(...new Uint8Array(new Float32Array(input.x).buffer)));
  chart.drawPanel(canvas, { id: "loss" }, chart.decodeFrame({ x, markers: input.markers }),
                  input.width);
  console.log(JSON.stringify({ labels: JSON.parse(canvas.dataset.markLabels),
                               box: JSON.parse(canvas.dataset.plotBox) }));
}
""" % CHAR


@pytest.fixture(scope="module")
def run_chart(tmp_path_factory):
    if NODE is None:
        pytest.skip("Node.js is not installed")
    folder = tmp_path_factory.mktemp("chart")
    (folder / "chart.mjs").write_text(CHART_JS.read_text(encoding="utf-8")
                                      + "\nexport { placeLabels, drawPanel, decodeFrame };\n",
                                      encoding="utf-8")
    (folder / "driver.mjs").write_text(DRIVER, encoding="utf-8")

    def run(**payload):
        out = subprocess.run([NODE, str(folder / "driver.mjs"), json.dumps(payload)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


def place(run_chart, marks, left=50, right=650, scale=1.0):
    result = run_chart(kind="place", marks=[{"x": x, "text": t} for x, t in marks], left=left,
                       right=right, scale=scale)
    assert result["untouched"], "placeLabels changed the marks it was given"
    return result["boxes"]


def width(text):
    return len(text) * CHAR


def test_a_label_starts_just_after_its_mark_in_the_first_row(run_chart):
    [box] = place(run_chart, [(100, "lr 0.3")])
    assert (box["text"], box["x"], box["y"], box["w"], box["at"]) == \
        ("lr 0.3", 50 + 100 + 3, 2, width("lr 0.3"), 150)


def test_a_label_near_the_right_edge_ends_there_with_room_for_a_count(run_chart):
    [box] = place(run_chart, [(595, "layer 2 frozen")])
    assert box["x"] == 650 - width("layer 2 frozen +9") and box["w"] == width("layer 2 frozen")
    [box] = place(run_chart, [(0, "x" * 200)])          # wider than the plot: starts at left
    assert box["x"] == 50


def test_overlapping_labels_take_the_second_row_then_are_counted(run_chart):
    boxes = place(run_chart, [(100, "lr 0.1"), (101, "lr 0.2"), (102, "lr 0.3"),
                              (103, "lr 0.4")])
    assert [(b["text"], b["y"]) for b in boxes] == [("lr 0.1", 2), ("lr 0.2 +2", 2 + LANE_ROW)]
    assert boxes[1]["w"] == width("lr 0.2 +2")


def test_labels_are_placed_in_the_order_of_their_steps_whatever_the_order_given(run_chart):
    boxes = place(run_chart, [(300, "late"), (100, "early"), (102, "close")])
    assert [(b["text"], b["y"]) for b in boxes] == [("early", 2), ("close", 2 + LANE_ROW),
                                                    ("late", 2)]


def test_labels_far_enough_apart_share_the_first_row_with_a_gap_of_six(run_chart):
    text = "lr 1"
    needed = width(text + " +9") + 6                    # the gap the layout keeps
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
    counted = sum(int(b["text"].rpartition("+")[2]) if " +" in b["text"] else 0 for b in boxes)
    assert len(boxes) + counted == len(marks)           # every mark shown or counted
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
