"""The live lab's status line: its data, its HTML, and the numbers in it (no widgets here).

The view (:class:`~dltutor.lab.widgets.LabView`) shows one line under its controls: the step,
the loss, the clip setting and scale, whether it is training and how fast, the lab's watched
numbers, the frozen layers and the last error. The same numbers ride on the line's ``<div>`` as
``data-`` attributes, at full precision, so that tests and the curious can read the state from
the page: ``<div class="dltutor-status" data-step="123" data-loss="0.31" data-running="1"
data-steps-per-second="412.5" data-redraws="37" data-norm-0="2.3456789" ...>``; see
:func:`status_data` for every attribute.

Everything here is a plain function of numbers the view hands over, so it runs (and is
tested) without a browser:

>>> from dltutor.lab import demos
>>> lab = demos.moons_mlp()
>>> lab.step(2)
>>> data = status_data(lab, {"0": "0", "2": "2", "4": "4"}, running=False, pace=3.0,
...                    steps_per_second=0.0, redraws=0, redraws_per_second=0.0,
...                    draw_requests=1, draw_seconds=0.001, error=None)
>>> data["data-step"], data["data-pace"], data["data-frozen-2"]
('2', '3.0', '0')
>>> status_html(data, lab.state()).startswith('<div class="dltutor-status" data-step="2"')
True
"""
from __future__ import annotations

import html
import math
from collections import deque
from typing import Any

from ..i18n import text
from .errors import error_text

__all__ = ["Rate", "error_text", "grad_norm_html", "latest_grad_norm", "readable", "status_data",
           "status_html"]


def readable(value: float) -> str:
    """A number for a person to read in the status line: four decimals in the everyday range,
    three significant digits in scientific notation beyond it (an exploding loss is
    ``3.29e+25``, not 26 digits).

    >>> readable(0.31234567), readable(32948414425426366608441344.0), readable(2e-7), readable(0)
    ('0.3123', '3.29e+25', '2e-07', '0.0000')
    """
    return f"{value:.4f}" if value == 0 or 1e-3 <= abs(value) < 1e4 else f"{value:.3g}"


def _number(value: Any) -> str:
    """A number for a data attribute: full precision, ``nan`` for missing."""
    if value is None:
        return "nan"
    value = float(value)
    return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else
                                                      ("inf" if value > 0 else "-inf"))


def latest_grad_norm(lab: Any) -> float:
    """The global gradient norm (before clipping) of the lab's latest step; NaN before the first.

    >>> from dltutor.lab import demos
    >>> lab = demos.moons_mlp()
    >>> math.isnan(latest_grad_norm(lab)), lab.step(1), latest_grad_norm(lab) > 0
    (True, None, True)
    """
    values = lab.recorder.series("global_grad_norm")
    return float(values[-1]) if len(values) else math.nan


class Rate:
    """Events per second over the last ``window`` seconds, from (time, total count) samples.

    >>> rate = Rate()
    >>> rate.add(10.0, 0); rate.add(10.5, 20)
    >>> rate.value()
    40.0
    """

    def __init__(self, window: float = 2.0):
        self.window = window
        self.samples: deque[tuple[float, float]] = deque()

    def add(self, now: float, total: float) -> None:
        self.samples.append((now, total))
        # Keep one sample older than the window, so the rate spans the whole window.
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()

    def clear(self) -> None:
        self.samples.clear()

    def value(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        (t0, n0), (t1, n1) = self.samples[0], self.samples[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0


def status_data(lab: Any, keys: dict[str, str], *, running: bool, pace: float | None,
                steps_per_second: float, redraws: int, redraws_per_second: float,
                draw_requests: int, draw_seconds: float, error: str | None) -> dict[str, str]:
    """The status line's data attributes (all strings), from ``lab``, the layers' keys
    (:func:`~dltutor.lab.controls.layer_keys`) and what the view counts itself:

    ``data-step``, ``data-loss``, ``data-running`` (1 or 0), ``data-steps-per-second``
    (over the last 2 s of training; 0 when paused), ``data-redraws`` (frames the
    browser has drawn so far), ``data-redraws-per-second``, ``data-draw-requests``
    (frames sent to the page), ``data-draw-ms`` (what building the last frame cost the
    kernel), ``data-grad-norm`` (the latest global gradient norm, before clipping),
    ``data-pace`` (the chosen speed in steps per second, or ``max``),
    ``data-clip-mode``, ``data-clip-threshold``, ``data-clip-scale``, ``data-lr``,
    ``data-error`` (``error``, the view's own, else the lab's; empty when none),
    ``data-watch-<i>`` (the lab's watched numbers, in order), ``data-layer-keys`` (the keys,
    space separated) and per layer ``data-norm-<key>`` (parameter norm after the latest step,
    full precision), ``data-frozen-<key>`` (1 or 0) and ``data-lr-mult-<key>``.

    The module docstring has an example.
    """
    state = lab.state()
    data = {
        "data-step": str(state["step"]),
        "data-loss": _number(state["loss"]),
        "data-running": "1" if running else "0",
        "data-steps-per-second": f"{steps_per_second:.1f}",
        "data-pace": "max" if pace is None else _number(pace),
        "data-redraws": str(redraws),
        "data-redraws-per-second": f"{redraws_per_second:.2f}",
        "data-draw-requests": str(draw_requests),
        "data-draw-ms": f"{draw_seconds * 1000:.1f}",
        "data-grad-norm": _number(latest_grad_norm(lab)),
        "data-clip-mode": state["clip_mode"] or "off",
        "data-clip-threshold": _number(state["clip_threshold"]),
        "data-clip-scale": _number(state["clip_scale"]),
        "data-lr": _number(state["lr"]),
        "data-error": error or state["error"] or "",
        "data-layer-keys": " ".join(keys[row["name"]] for row in state["layers"]),
    }
    for index, value in enumerate(state["watch"].values()):
        data[f"data-watch-{index}"] = _number(value)
    for row in state["layers"]:
        key = keys[row["name"]]
        data[f"data-norm-{key}"] = _number(row.get("param_norm", math.nan))
        data[f"data-frozen-{key}"] = "1" if row["frozen"] else "0"
        data[f"data-lr-mult-{key}"] = _number(row["lr_mult"])
    return data


def _clip_summary(data: dict[str, str]) -> str:
    """'off', or the mode, its threshold and the latest clip scale."""
    mode, scale = data["data-clip-mode"], data["data-clip-scale"]
    if mode == "off":
        return text("lab.status.clip_off")
    return text("lab.status.clip_on", mode=text(f"lab.clip.{mode}"),
                threshold=f"{float(data['data-clip-threshold']):g}",
                scale=readable(float(scale)) if scale != "nan" else "–")


def _watched(label: str, value: float) -> str:
    """A watched number: a fraction as a percentage (accuracy), anything else readable()."""
    shown = f"{value:.1%}" if 0 <= value <= 1 else readable(value)
    return f"{html.escape(label)} <b>{shown}</b>"


def status_html(data: dict[str, str], state: dict[str, Any]) -> str:
    """The status line: a visible summary (from ``data``, :func:`status_data`, and the watched
    numbers and frozen layers of ``state``) in a div that carries ``data`` as attributes."""
    attributes = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in data.items())
    loss = float(data["data-loss"])
    rate = text("lab.status.rate", rate=f"{float(data['data-steps-per-second']):.0f}")
    running = f"<span style='color:#080'>{text('lab.status.running')}</span>"
    parts = [text("lab.status.step", value=f"<b>{data['data-step']}</b>"),
             text("lab.status.loss", value=f"<b>{readable(loss)}</b>" if math.isfinite(loss)
                  else "–"),
             text("lab.status.clip", summary=_clip_summary(data)),
             (text("lab.status.running_at", running=running, rate=rate)
              if data["data-running"] == "1" else text("lab.status.paused"))]
    parts += [_watched(label, value) for label, value in state["watch"].items()]
    frozen = [row["name"] for row in state["layers"] if row["frozen"]]
    if frozen:
        parts.append(text("lab.status.frozen",
                          names=text("lab.list_sep").join(html.escape(n) for n in frozen)))
    line = " · ".join(parts)
    if data["data-error"]:
        line += (f"<br><span style='color:#b00'>"
                 f"{text('lab.status.error', error=html.escape(data['data-error']))}</span>")
    # Two lines are always reserved, so the plots do not jump when an error line appears.
    return (f'<div class="dltutor-status" {attributes} '
            f'style="font-family:monospace;font-size:13px;min-height:3.2em">{line}</div>')


def grad_norm_html(lab: Any) -> str:
    """The label beside the clip slider: the latest global gradient norm, what the clip
    threshold is compared with.

    >>> from dltutor.lab import demos
    >>> grad_norm_html(demos.moons_mlp()).endswith("–</span>")     # no step yet
    True
    """
    norm = latest_grad_norm(lab)
    shown = f"<b>{norm:.3g}</b>" if math.isfinite(norm) else "–"
    return f"<span style='font-size:13px'>{html.escape(text('lab.grad_now'))} {shown}</span>"
