"""The live lab's plots: numbers from Python, drawing in the browser (``chart.js``).

The lab's plots change twelve times a second while a network trains. Drawing them with
matplotlib in the kernel and sending pictures to the page (ipympl) managed 2-3 redraws a
second on two cores; sending the numbers and drawing them with the browser's canvas costs the
kernel about a millisecond per frame, so the plots keep up (the numbers are in
``benchmarks/RESULTS.md``). The chapters keep matplotlib for their static figures.

:class:`LiveChart` is an `anywidget <https://anywidget.dev>`_ with two inputs:

* ``spec``: what does not change while the lab runs: the panels (title, log or linear y axis,
  whether values of 0 sit on a floor line, whether frozen steps are shaded), and for data with
  two features the decision-boundary box (its extent, the data points, the class colours);
* ``frame``: the latest numbers, made by :func:`chart_frame` from the lab's recorder: the steps,
  one entry per line (its colour, width, dash, and its values as base64 float32 bytes: small,
  and NaN survives the trip), the frozen spans, the markers where a control changed, the
  reference lines (clip threshold, the 1e-3 update ratio) and the boundary's class grid.

and one output, ``frames_drawn``: how many frames the browser has drawn (the status line's
``data-redraws``).

>>> from dltutor.lab import demos
>>> lab = demos.moons_mlp()
>>> lab.step(3)
>>> frame = chart_frame(lab, layer_colors(lab))
>>> sorted(frame["panels"]), len(frame["panels"]["param"]["lines"])
(['grad', 'loss', 'param', 'ratio'], 3)
"""
from __future__ import annotations

import base64
import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import traitlets

from ..autograd import no_grad, tensor
from ..i18n import text
from ..stats import eval_mode
from .controller import TrainingLab

__all__ = ["GRID", "MAX_POINTS", "LiveChart", "chart_frame", "chart_spec", "layer_colors",
           "legend_html", "predict"]

#: At most this many points per line (longer histories are thinned, the latest step kept).
MAX_POINTS = 400
#: Resolution of the decision-boundary grid (GRID x GRID cells).
GRID = 60
#: matplotlib's ten default colours ("C0".."C9"), so the lab matches the chapters' plots.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
#: The colours of the classes in the decision boundary (RGB).
CLASS_COLORS = ((59, 76, 192), (180, 4, 38), (44, 160, 44), (255, 127, 14), (148, 103, 189))


class LiveChart(anywidget.AnyWidget):
    """The plots of a live lab, drawn by the browser from ``spec`` and ``frame``."""

    _esm = Path(__file__).with_name("chart.js")
    spec = traitlets.Dict().tag(sync=True)
    frame = traitlets.Dict().tag(sync=True)
    frames_drawn = traitlets.Int(0).tag(sync=True)


def layer_colors(lab: TrainingLab) -> list[str]:
    """One colour per traced layer, in the recorder's order."""
    return [PALETTE[i % len(PALETTE)] for i in range(len(lab.recorder.names))]


def legend_html(lab: TrainingLab, colors: list[str]) -> str:
    """The legend under the plots (HTML): a swatch per layer, then the line styles shared by
    every layer (global norm, after clipping, threshold, control changed, frozen steps).

    >>> from dltutor.lab import demos
    >>> lab = demos.moons_mlp()
    >>> legend_html(lab, layer_colors(lab)).count("3px solid")     # one per layer
    3
    """
    swatch = ("<span style='display:inline-block;width:24px;border-top:{style} {color};"
              "vertical-align:middle;margin:0 5px 0 12px'></span>")
    by = text(f"lab.legend.by.{lab.recorder.by}")
    keys = "".join(swatch.format(style="3px solid", color=c)
                   + html.escape(text("lab.legend.trace", by=by, name=n))
                   for c, n in zip(colors, lab.recorder.names))
    keys += (swatch.format(style="2px solid", color="#000") + text("lab.legend.global")
             + swatch.format(style="3px dashed", color="#555") + text("lab.legend.clipped")
             + swatch.format(style="2px dotted", color="#555") + text("lab.legend.threshold")
             + swatch.format(style="2px dashed", color="#7a4dd8") + text("lab.legend.changed")
             + "<span style='display:inline-block;width:18px;height:11px;"
               "background:rgba(0,0,0,0.15);margin:0 5px 0 12px'></span>"
             + text("lab.legend.frozen"))
    return f"<div style='font-size:12px;line-height:1.9'>{keys}</div>"


def chart_spec(lab: TrainingLab) -> dict[str, Any]:
    """The panels, and the decision-boundary box when the data has two features.

    >>> from dltutor.lab import demos
    >>> [p["id"] for p in chart_spec(demos.moons_mlp())["panels"]]
    ['loss', 'param', 'grad', 'ratio']
    """
    panels = [
        {"id": "loss", "title": text("lab.panel.loss"), "log": True},
        {"id": "param", "title": text("lab.panel.param"), "log": False, "spans": True},
        {"id": "grad", "title": text("lab.panel.grad"), "log": True,
         "zero_floor": True, "spans": True},
        {"id": "ratio", "title": text("lab.panel.ratio"), "log": True,
         "zero_floor": True, "spans": True},
    ]
    # A label with no room for itself is counted into its neighbour: "{mark} (and 2 more)".
    spec: dict[str, Any] = {"panels": panels,
                            "mark_more": text("lab.mark.more", mark="{mark}", count="{count}")}
    if has_boundary(lab):
        X, y = np.asarray(lab.X, dtype=float), np.asarray(lab.y).ravel().astype(int)
        lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
        spec["boundary"] = {
            "title": text("lab.panel.boundary"), "grid": GRID,
            "extent": [float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])],
            "points": [[round(float(a), 3), round(float(b), 3), int(c)]
                       for (a, b), c in zip(X, y)],
            "palette": [list(c) for c in CLASS_COLORS],
        }
    return spec


def has_boundary(lab: TrainingLab) -> bool:
    """True when the lab's data has two features and labels: a boundary can be drawn."""
    return (lab.X is not None and lab.y is not None and np.ndim(lab.X) == 2
            and np.shape(lab.X)[1] == 2)


def _bytes(values: Any) -> str:
    """Numbers as base64 float32 bytes (what chart.js decodes)."""
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f4").tobytes()).decode()


def _line(values: Any, color: str, width: float = 1.5, dash: list | None = None,
          alpha: float = 1.0) -> dict[str, Any]:
    return {"y": _bytes(values), "color": color, "width": width, "dash": dash or [],
            "alpha": alpha}


def chart_frame(lab: TrainingLab, colors: list[str],
                predict: Callable[[np.ndarray], np.ndarray] | None = None) -> dict[str, Any]:
    """The latest numbers of ``lab`` for the chart (see the module docstring).

    ``predict(points)`` gives the model's outputs for an array of 2-D points; with it (and
    data with two features) the frame carries the decision boundary.
    """
    rec = lab.recorder
    steps = rec.steps
    n = len(steps)
    pick = np.arange(n - 1, -1, -max(1, math.ceil(n / MAX_POINTS)))[::-1]
    names = list(rec.names)
    param, grad = rec.series("param_norm")[pick], rec.series("grad_norm")[pick]
    clipped, ratio = rec.series("clipped_grad_norm")[pick], rec.series("update_ratio")[pick]
    clip_mode, threshold = lab.clip_setting()
    clipping = clip_mode is not None
    grad_lines = []
    for i, color in enumerate(colors):
        # before clipping: thin and light when clipping is on; after: thick and dashed
        grad_lines.append(_line(grad[:, i], color, 1.2, alpha=0.55 if clipping else 1.0))
        if clipping:
            grad_lines.append(_line(clipped[:, i], color, 2.4, [6, 3]))
    global_norm = rec.series("global_grad_norm")[pick]
    grad_lines.append(_line(global_norm, "#000000", 1.2, alpha=0.55 if clipping else 0.9))
    if clipping:
        with np.errstate(invalid="ignore"):
            total = np.sqrt(np.nansum(clipped ** 2, axis=1)) if n else np.zeros(0)
        grad_lines.append(_line(total, "#000000", 2.4, [6, 3]))
    grad_refs = ([{"y": float(threshold), "label": text("lab.panel.threshold", threshold=f"{threshold:g}")}]
                 if clip_mode in ("norm", "global_norm") and threshold else [])
    frame: dict[str, Any] = {
        "step": lab.steps_done,
        "x": _bytes(steps[pick]),
        "panels": {
            "loss": {"lines": [_line(rec.series("loss")[pick], "#333333", 1.3)]},
            "param": {"lines": [_line(param[:, i], c, 1.8) for i, c in enumerate(colors)]},
            "grad": {"lines": grad_lines, "hlines": grad_refs},
            "ratio": {"lines": [_line(ratio[:, i], c, 1.4) for i, c in enumerate(colors)],
                      "hlines": [{"y": 1e-3, "label": "1e-3"}]},
        },
        "spans": [{"x0": float(steps[first]) - 0.5, "x1": float(steps[last]) + 0.5,
                   "color": colors[i]}
                  for i, name in enumerate(names) for first, last in rec.frozen_runs(name)],
        "markers": [{"x": step, "control": control, "text": what}
                    for step, control, what in lab.marks],
    }
    if predict is not None and has_boundary(lab):
        frame["boundary"] = boundary(lab, predict)
    return frame


def predict(lab: TrainingLab, points: np.ndarray) -> np.ndarray:
    """The model's outputs for an array of points, one row per point (in eval mode, no
    gradients): what :func:`boundary` colours the grid by.

    >>> from dltutor.lab import demos
    >>> predict(demos.moons_mlp(), np.zeros((5, 2), dtype=np.float32)).shape
    (5, 2)
    """
    model = lab.model
    with eval_mode(model), no_grad(), np.errstate(all="ignore"):
        out = model(tensor(points)).numpy()
    return out.reshape(len(out), -1)


def boundary(lab: TrainingLab, predict: Callable[[np.ndarray], np.ndarray]) -> dict[str, Any]:
    """The class grid (two classes: the probability of class 1 in 0..255; more: the class)
    and the accuracy on the data."""
    X, y = np.asarray(lab.X), np.asarray(lab.y).ravel()
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], GRID), np.linspace(lo[1], hi[1], GRID))
    dtype = X.dtype if X.dtype.kind == "f" else np.float32
    grid = np.column_stack([xx.ravel(), yy.ravel()]).astype(dtype)
    out = predict(np.concatenate([grid, X.astype(dtype, copy=False)]))
    cells, points = out[:len(grid)], out[len(grid):]
    with np.errstate(over="ignore", invalid="ignore"):
        if out.shape[1] <= 2:
            logit = cells[:, 0] if out.shape[1] == 1 else cells[:, 1] - cells[:, 0]
            values = np.nan_to_num(1 / (1 + np.exp(-logit)), nan=0.5) * 255
            mode = "probability"
            predicted = (points[:, 0] > 0).astype(int) if out.shape[1] == 1 \
                else points.argmax(axis=1)
        else:
            values, mode, predicted = cells.argmax(axis=1), "class", points.argmax(axis=1)
    accuracy = float((predicted == y).mean()) if len(y) else math.nan
    return {"grid": base64.b64encode(np.asarray(values, dtype=np.uint8).tobytes()).decode(),
            "mode": mode, "title": text("lab.panel.accuracy", accuracy=f"{accuracy:.0%}"),
            "accuracy": accuracy}
