"""The live view of a :class:`~dltutor.lab.controller.TrainingLab`: ipywidgets controls and
live plots drawn in the browser (:mod:`dltutor.lab.chart`), bound to the controller.

``lab.show()`` (or ``lab`` as the last line of a cell) displays a :class:`LabView`:

* **buttons**: play / pause / step (one step) / reset, and a **speed** slider (training steps
  per second, from 1 to "max"; it starts at the lab's ``pace``, a speed at which a demo takes
  about half a minute, so you can watch it learn and steer it);
* **per layer**: a *freeze* checkbox and an *lr x* slider (the layer's lr multiplier, on a
  log-like scale that includes 0: ``LR_MULTS``);
* **clipping**: a mode selector (off / value / norm / global norm) and a threshold slider;
* **lr**: the global learning rate (type a number, press Enter);
* **plots** (drawn by the browser from numbers the kernel sends, twelve frames a second;
  see :mod:`dltutor.lab.chart`): the loss, each layer's parameter norm, its gradient norm
  before clipping (thin) and after (thick, dashed), its update / parameter ratio, the steps
  where it was frozen (shaded in its colour), a mark at every step where a control changed
  ("layer 2 frozen", "clip global norm 0.1"), and the decision boundary when the data has two
  features. Values of 0 (a frozen layer's gradient) sit on a floor line labelled 0. The
  panels share the width they get: side by side on a wide page, stacked on a narrow one;
* **a status line**: step, loss, clip scale, steps per second and the last error.

This module is a thin layer. Every control calls one :class:`TrainingLab` method
(``freeze``, ``set_lr_mult``, ``set_clip``, ``set_lr``, ``step``, ``reset``) and every
picture is read from ``lab.state()`` and ``lab.recorder``. When the controller refuses a value
(it raises :class:`~dltutor.lab.controller.LabError` and changes nothing), the message goes to
the status line and the widget snaps back to the controller's current value. Changes made in
code (``lab.freeze("2")`` in another cell) show in the widgets within a tenth of a second.

Training runs as an :mod:`asyncio` task on the kernel's event loop: slices of about 20 ms of
steps, each followed by a short ``await asyncio.sleep`` so widget messages are handled between
slices and a control takes effect from the next step (at a chosen speed, the task sleeps until
the next step is due). Pressing play twice does not start a second loop. A new frame of plot
numbers goes to the page every ``redraw_interval`` (1/12 s); building one costs the
kernel about a millisecond, and the browser draws it.

One live view per lab name: showing a lab again (re-running the cell, even with a new lab of
the same name) closes the previous view's widgets and stops its training task.

For tests and for the curious, the page exposes the state:

* every control has a CSS class: ``dltutor-play``, ``dltutor-pause``, ``dltutor-step``,
  ``dltutor-reset``, ``dltutor-freeze-<key>``, ``dltutor-lr-mult-<key>``,
  ``dltutor-clip-mode``, ``dltutor-clip-threshold``, ``dltutor-lr``, ``dltutor-status-line``
  (the status widget; the div inside it is ``dltutor-status``), ``dltutor-legend``,
  ``dltutor-plots`` (the chart), ``dltutor-grad-norm`` (the gradient norm beside the clip
  slider) and the whole view ``dltutor-lab``;
* the status line is ``<div class="dltutor-status" data-step="123" data-loss="0.31"
  data-running="1" data-steps-per-second="412.5" data-redraws="37" data-norm-0="2.3456789"
  ...>``; see :meth:`LabView.status_data` for every attribute.

``<key>`` is the layer name made safe for a CSS class and a ``data-`` attribute name
(:func:`layer_key`): lower case, and every run of characters other than ``a-z`` and ``0-9``
turned into one ``-`` (``"block 1.0"`` -> ``"block-1-0"``, the root module ``""`` ->
``"root"``); if two layers would get the same key, the later ones get ``-2``, ``-3``, ...
The status line lists the keys in ``data-layer-keys``.

>>> from dltutor.lab import demos
>>> view = LabView(demos.moons_mlp())
>>> view.keys
{'0': '0', '2': '2', '4': '4'}
>>> view.freeze["2"].value = True          # what ticking the box does
>>> view.lab.state()["layers"][1]["frozen"]
True
>>> view.lr.value = -1.0                   # a bad value: refused, reported, restored
>>> view.lr.value, view.status_data()["data-error"][:8]
(0.1, 'LabError')
>>> view.close()
"""
from __future__ import annotations

import asyncio
import html
import math
import re
import time
from collections import deque
from typing import Any, Callable

import ipywidgets as W
import numpy as np

from ..autograd import no_grad, tensor
from ..i18n import sentence, text
from ..stats import eval_mode
from .chart import LiveChart, chart_frame, chart_spec, layer_colors
from .controller import TrainingLab

__all__ = ["LabView", "layer_key", "live_views", "close_all", "LR_MULTS", "CLIP_THRESHOLDS",
           "PACES"]

#: The choices of the per-layer lr multiplier slider (0 stops the layer).
LR_MULTS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The choices of the speed slider, in training steps per second (inf: as fast as it goes).
PACES = (1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0, 200.0, 500.0, math.inf)
#: The choices of the clip threshold slider.
CLIP_THRESHOLDS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: The clip modes of the selector; the value goes to ``lab.set_clip`` ("off" -> None). Their
#: labels are ``text("lab.clip.<mode>")``, in the learner's language.
CLIP_MODES = ("off", "value", "norm", "global_norm")
#: Time between two frames of the plots (seconds): 12 per second, so that at least 10 reach
#: the page while training runs flat out.
REDRAW_INTERVAL = 1 / 12
#: Seconds of training steps between two looks at the widget messages.
SLICE_SECONDS = 0.02
#: At most this many views stay live; showing one more closes the oldest.
MAX_LIVE = 4

_LIVE: dict[str, "LabView"] = {}     # lab name -> its live view
_TASKS: set[asyncio.Task] = set()    # strong references: asyncio keeps only weak ones


def layer_key(name: str) -> str:
    """A layer name as it appears in CSS classes and ``data-`` attribute names.

    >>> layer_key("0"), layer_key("block 1.0"), layer_key("Encoder.Layer_2"), layer_key("")
    ('0', 'block-1-0', 'encoder-layer-2', 'root')
    """
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return key or "root"


def layer_keys(names: list[str]) -> dict[str, str]:
    """:func:`layer_key` of each name, made unique with ``-2``, ``-3``, ... suffixes.

    >>> layer_keys(["a.b", "a-b", "c"])
    {'a.b': 'a-b', 'a-b': 'a-b-2', 'c': 'c'}
    """
    keys: dict[str, str] = {}
    for name in names:
        base = key = layer_key(name)
        n = 2
        while key in keys.values():
            key, n = f"{base}-{n}", n + 1
        keys[name] = key
    return keys


def live_views() -> list["LabView"]:
    """The views shown and not yet closed (at most one per lab name)."""
    return list(_LIVE.values())


def close_all() -> None:
    """Close every live view: stop its training task and close its widgets."""
    for view in list(_LIVE.values()):
        view.close()


def _number(value: Any) -> str:
    """A number for a data attribute: full precision, ``nan`` for missing."""
    if value is None:
        return "nan"
    value = float(value)
    return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else
                                                      ("inf" if value > 0 else "-inf"))


def readable(value: float) -> str:
    """A number for a person to read in the status line: four decimals in the everyday range,
    three significant digits in scientific notation beyond it (an exploding loss is
    ``3.29e+25``, not 26 digits).

    >>> readable(0.31234567), readable(32948414425426366608441344.0), readable(2e-7), readable(0)
    ('0.3123', '3.29e+25', '2e-07', '0.0000')
    """
    return f"{value:.4f}" if value == 0 or 1e-3 <= abs(value) < 1e4 else f"{value:.3g}"


def _label(value: float) -> str:
    return f"{value:g}"


def _pace_label(value: float) -> str:
    return text("lab.max") if math.isinf(value) else f"{value:g}/s"


def _with_option(options: tuple, value: float, label: Callable[[float], str] = _label) -> tuple:
    """SelectionSlider options ``(label, value)`` including ``value`` (kept sorted)."""
    if any(v == value for _, v in options):
        return options
    return tuple(sorted(options + ((label(value), value),), key=lambda o: o[1]))


def _message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Rate:
    """Events per second over the last ``window`` seconds, from (time, total count) samples."""

    def __init__(self, window: float = 2.0):
        self.window, self.samples = window, deque()

    def add(self, now: float, total: float) -> None:
        self.samples.append((now, total))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()

    def clear(self) -> None:
        self.samples.clear()

    def value(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        (t0, n0), (t1, n1) = self.samples[0], self.samples[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0


class LabView:
    """Widgets and live plots for one :class:`TrainingLab` (see the module docstring).

    ``redraw_interval``: the time between two frames of the plots (1/12 s).
    ``slice_seconds``: how long the training task steps before it lets widget messages in.
    ``pace``: the speed training starts at, in steps per second (None: as fast as it goes);
    by default the lab's own ``lab.pace``. The speed slider changes it while it runs.

    The controls, for scripts and tests: ``buttons`` (``"play"``, ``"pause"``, ``"step"``,
    ``"reset"``), ``freeze[layer]``, ``lr_mult[layer]``, ``clip_mode``, ``clip_threshold``,
    ``lr``, ``speed``, ``status``, ``grad_norm``; the plots: ``chart``; the whole view:
    ``widget``.
    """

    def __init__(self, lab: TrainingLab, redraw_interval: float = REDRAW_INTERVAL,
                 slice_seconds: float = SLICE_SECONDS, pace: float | None | str = "lab"):
        if not isinstance(lab, TrainingLab):
            raise TypeError(f"LabView shows a TrainingLab, got {type(lab).__name__}")
        pace = lab.pace if pace == "lab" else pace
        if pace is not None and not (isinstance(pace, (int, float)) and pace > 0):
            raise ValueError(f"LabView: pace must be a number of steps per second > 0, or None "
                             f"for as fast as it goes; got {pace!r}")
        self.lab = lab
        self.pace: float | None = None if pace is None or math.isinf(pace) else float(pace)
        self._pace_anchor = (time.perf_counter(), lab.steps_done)
        self.redraw_interval, self.slice_seconds = redraw_interval, slice_seconds
        self.keys = layer_keys(lab.layers)
        self.closed = False
        self._task: asyncio.Task | None = None
        self._want_running = False
        self._stop_at: tuple[int | None, float | None] = (None, None)
        self._syncing = False
        self._ui_error: str | None = None
        self._last_status = self._last_plot = -math.inf
        self._steps_rate, self._draw_rate = _Rate(), _Rate()
        self.draw_requests = 0            # frames sent to the page
        self._frame_seconds = 0.0         # what building the last one cost the kernel
        self._build_controls()
        self._build_chart()
        self.widget = W.VBox([self._controls_box, self.status, self.legend, self.chart],
                             layout=W.Layout(width="100%"))
        self.widget.add_class("dltutor-lab")
        self.refresh(plots=True)

    # -- building --------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        lab, state = self.lab, self.lab.state()

        def button(name: str, description: str, icon: str, tooltip: str,
                   action: Callable[[], None]) -> W.Button:
            b = W.Button(description=description, icon=icon, tooltip=tooltip,
                         layout=W.Layout(width="92px"))
            b.add_class(f"dltutor-{name}")
            b.on_click(lambda _: action())
            return b

        icons = {"play": "play", "pause": "pause", "step": "step-forward", "reset": "undo"}
        actions = {"play": self.play, "pause": self.pause, "step": self.step_once,
                   "reset": self.reset}
        self.buttons = {name: button(name, text(f"lab.{name}"), icons[name],
                                     text(f"lab.{name}.tip"), actions[name]) for name in icons}
        self.buttons["pause"].disabled = True

        self.freeze: dict[str, W.Checkbox] = {}
        self.lr_mult: dict[str, W.SelectionSlider] = {}
        modules = dict(lab.model.named_modules())
        rows = []
        for row in state["layers"]:
            name, key = row["name"], self.keys[row["name"]]
            module = modules.get(name)
            size = sum(int(np.prod(p.shape)) for p in module.parameters(recurse=False)) \
                if module is not None else 0
            what = (text("lab.layer_size", kind=type(module).__name__, size=size)
                    if module is not None else "")
            label = W.HTML(f"<b>{html.escape(text('lab.layer', name=name or '(root)'))}</b> "
                           f"<span style='color:#666'>{html.escape(what)}</span>",
                           layout=W.Layout(width="210px"))
            box = W.Checkbox(value=row["frozen"], description=text("lab.freeze"), indent=False,
                             layout=W.Layout(width="80px"))
            box.add_class(f"dltutor-freeze-{key}")
            box.observe(lambda change, n=name: self._apply(
                lambda: self.lab.freeze(n, change["new"])), names="value")
            options = _with_option(tuple((_label(v), v) for v in LR_MULTS), row["lr_mult"])
            slider = W.SelectionSlider(options=options, value=row["lr_mult"],
                                       description="lr ×", continuous_update=True,
                                       layout=W.Layout(width="300px", min_width="220px"),
                                       style={"description_width": "36px"})
            slider.add_class(f"dltutor-lr-mult-{key}")
            slider.observe(lambda change, n=name: self._apply(
                lambda: self.lab.set_lr_mult(n, change["new"])), names="value")
            self.freeze[name], self.lr_mult[name] = box, slider
            rows.append(W.HBox([label, box, slider], layout=W.Layout(flex_flow="row wrap")))

        mode = state["clip_mode"] or "off"
        self.clip_mode = W.Dropdown(options=[(text(f"lab.clip.{m}"), m) for m in CLIP_MODES],
                                    value=mode, description=text("lab.clip"),
                                    layout=W.Layout(width="230px"),
                                    style={"description_width": "36px"})
        self.clip_mode.add_class("dltutor-clip-mode")
        threshold = state["clip_threshold"] if state["clip_threshold"] is not None else 1.0
        self.clip_threshold = W.SelectionSlider(
            options=_with_option(tuple((_label(v), v) for v in CLIP_THRESHOLDS), threshold),
            value=threshold, description=text("lab.clip_at"), continuous_update=True,
            layout=W.Layout(width="300px", min_width="220px"),
            style={"description_width": "36px"})
        self.clip_threshold.add_class("dltutor-clip-threshold")
        self.clip_mode.observe(lambda change: self._apply(self._set_clip), names="value")
        self.clip_threshold.observe(lambda change: self._apply(self._set_clip), names="value")
        # What the threshold is compared with: the global gradient norm of the latest step.
        self.grad_norm = W.HTML(layout=W.Layout(width="190px", margin="0 8px"))
        self.grad_norm.add_class("dltutor-grad-norm")
        self.lr = W.FloatText(value=state["lr"], description="lr", step=None,
                              layout=W.Layout(width="170px"),
                              style={"description_width": "24px"})
        self.lr.add_class("dltutor-lr")
        self.lr.observe(lambda change: self._apply(lambda: self.lab.set_lr(change["new"])),
                        names="value")

        speed = math.inf if self.pace is None else self.pace
        self.speed = W.SelectionSlider(
            options=_with_option(tuple((_pace_label(v), v) for v in PACES), speed, _pace_label),
            value=speed, description=text("lab.speed"), continuous_update=True,
            layout=W.Layout(width="300px"), style={"description_width": "44px"},
            tooltip=text("lab.speed.tip"))
        self.speed.add_class("dltutor-pace")
        self.speed.observe(lambda change: self._set_pace(change["new"]), names="value")

        self.status = W.HTML(layout=W.Layout(width="100%"))
        self.status.add_class("dltutor-status-line")
        title = W.HTML(f"<b>{html.escape(sentence(lab.name))}</b>",
                       layout=W.Layout(margin="0 12px 0 4px"))
        self._controls_box = W.VBox([
            W.HBox([title, *self.buttons.values(), self.speed],
                   layout=W.Layout(align_items="center", flex_flow="row wrap")),
            *rows,
            W.HBox([self.clip_mode, self.clip_threshold, self.grad_norm, self.lr],
                   layout=W.Layout(align_items="center", flex_flow="row wrap")),
        ])

    def _build_chart(self) -> None:
        """The plots (a :class:`~dltutor.lab.chart.LiveChart`) and their legend, in HTML."""
        lab = self.lab
        self._colors = layer_colors(lab)
        self.chart = LiveChart(spec=chart_spec(lab), layout=W.Layout(width="100%"))
        self.chart.add_class("dltutor-plots")
        swatch = ("<span style='display:inline-block;width:24px;border-top:{style} {color};"
                  "vertical-align:middle;margin:0 5px 0 12px'></span>")
        by = text(f"lab.legend.by.{lab.recorder.by}")
        keys = "".join(swatch.format(style="3px solid", color=c)
                       + html.escape(text("lab.legend.trace", by=by, name=n))
                       for c, n in zip(self._colors, lab.recorder.names))
        keys += (swatch.format(style="2px solid", color="#000") + text("lab.legend.global")
                 + swatch.format(style="3px dashed", color="#555") + text("lab.legend.clipped")
                 + swatch.format(style="2px dotted", color="#555")
                 + text("lab.legend.threshold")
                 + swatch.format(style="2px dashed", color="#7a4dd8")
                 + text("lab.legend.changed")
                 + "<span style='display:inline-block;width:18px;height:11px;"
                   "background:rgba(0,0,0,0.15);margin:0 5px 0 12px'></span>"
                 + text("lab.legend.frozen"))
        self.legend = W.HTML(f"<div style='font-size:12px;line-height:1.9'>{keys}</div>")
        self.legend.add_class("dltutor-legend")

    # -- showing and closing ---------------------------------------------------------------------
    def show(self) -> W.VBox:
        """Register this view as the lab's live one (closing the previous view of a lab with
        the same name, and the oldest if more than ``MAX_LIVE`` are live); returns the widget
        to display."""
        key = self.lab.name
        previous = _LIVE.pop(key, None)
        if previous is not None and previous is not self:
            previous.close()
        _LIVE[key] = self
        while len(_LIVE) > MAX_LIVE:
            next(iter(_LIVE.values())).close()
        return self.widget

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.show())

    def close(self) -> None:
        """Stop training, close every widget (the chart too), and forget this view."""
        if self.closed:
            return
        self._want_running = False
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self.closed = True
        if _LIVE.get(self.lab.name) is self:
            del _LIVE[self.lab.name]
        for widget in self._all_widgets():
            widget.close()

    def _all_widgets(self) -> list[W.Widget]:
        found, stack = [], [self.widget]
        while stack:
            widget = stack.pop()
            found.append(widget)
            stack.extend(c for c in getattr(widget, "children", ()) if isinstance(c, W.Widget))
        return found

    # -- training ---------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the training task is alive and asked to go on."""
        return self._want_running and self._task is not None and not self._task.done()

    def play(self, steps: int | None = None, seconds: float | None = None) -> None:
        """Train continuously in a task on the running asyncio loop (the kernel's) until
        ``pause()``, an error, or ``steps`` more steps / ``seconds`` seconds. Pressing play
        while it runs changes nothing: there is never a second loop."""
        if self.closed:
            return
        self._want_running = True
        self._stop_at = (None if steps is None else self.lab.steps_done + steps,
                         None if seconds is None else time.perf_counter() + seconds)
        if self._task is not None and not self._task.done():
            return
        self._pace_anchor = (time.perf_counter(), self.lab.steps_done)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = asyncio.get_event_loop()
        self._task = loop.create_task(self._loop())
        _TASKS.add(self._task)
        self._task.add_done_callback(_TASKS.discard)
        self._set_buttons(True)
        self.refresh()

    def pause(self) -> None:
        """Stop training after the current slice (at most ``slice_seconds``)."""
        self._want_running = False
        self._set_buttons(False)

    async def train(self, steps: int | None = None, seconds: float | None = None) -> None:
        """``play(steps, seconds)`` and wait until the loop stops (for scripts and tests:
        ``asyncio.run(view.train(steps=100))``)."""
        self.play(steps=steps, seconds=seconds)
        if self._task is not None:
            await self._task

    async def _loop(self) -> None:
        try:
            while self._want_running and not self.closed:
                stop_step, stop_time = self._stop_at
                deadline = time.perf_counter() + self.slice_seconds
                while True:
                    if stop_step is not None and self.lab.steps_done >= stop_step:
                        self._want_running = False
                        break
                    if self._steps_due() <= 0:      # at the chosen speed, not yet
                        break
                    self.lab.step(1)
                    now = time.perf_counter()
                    if now >= deadline:
                        break
                if stop_time is not None and time.perf_counter() >= stop_time:
                    self._want_running = False
                self._tick()
                await asyncio.sleep(self._pause_before_next_step())
        except Exception as exc:  # noqa: BLE001 - shown in the status line (and lab.error)
            self._ui_error = _message(exc)
        finally:
            self._want_running = False
            self._steps_rate.clear()
            if not self.closed:
                self._set_buttons(False)
                self.refresh(plots=True)

    def _set_pace(self, value: float) -> None:
        """The speed slider: ``value`` steps per second from now on (inf: as fast as it goes)."""
        self.pace = None if math.isinf(value) else float(value)
        self._pace_anchor = (time.perf_counter(), self.lab.steps_done)
        self._update_status()

    def _steps_due(self) -> int:
        """How many steps the chosen speed allows now: the steps that fit in the time since the
        speed was set (or play pressed), minus those done. A machine that falls more than a
        second behind starts counting afresh, rather than racing to catch up."""
        if self.pace is None:
            return 1
        start, done_then = self._pace_anchor
        now = time.perf_counter()
        due = int((now - start) * self.pace) + 1 - (self.lab.steps_done - done_then)
        if due > self.pace + 1:
            self._pace_anchor = (now - 1 / self.pace, self.lab.steps_done)
            return 1
        return due

    def _pause_before_next_step(self) -> float:
        """Seconds to sleep between slices: a moment for the widget messages, or, at a chosen
        speed, until the next step is due (at most one slice, so controls stay responsive)."""
        if self.pace is None:
            return 0.001
        start, done_then = self._pace_anchor
        next_due = start + (self.lab.steps_done - done_then) / self.pace
        return min(max(next_due - time.perf_counter(), 0.001), max(self.slice_seconds, 0.05))

    def step_once(self) -> None:
        """One training step (the step button); an error goes to the status line."""
        try:
            self.lab.step(1)
        except Exception as exc:  # noqa: BLE001 - shown in the status line (and lab.error)
            self._ui_error = _message(exc)
        self.refresh(plots=True)

    def reset(self) -> None:
        """``lab.reset()`` (the reset button): initial weights, the controls stay. A running
        lab keeps running from step 0."""
        self.lab.reset()
        self._ui_error = None
        self._steps_rate.clear()
        self.refresh(plots=True)

    def _set_buttons(self, running: bool) -> None:
        if self.closed:
            return
        self.buttons["play"].disabled = running
        self.buttons["pause"].disabled = not running

    # -- controls ---------------------------------------------------------------------------------
    def _set_clip(self) -> None:
        mode = self.clip_mode.value
        self.lab.set_clip(None if mode == "off" else mode, self.clip_threshold.value)

    def _apply(self, action: Callable[[], None]) -> None:
        """Run one control's controller call. When it fails, nothing changed: show why and
        put every widget back to the controller's values."""
        if self._syncing or self.closed:
            return
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - LabError, or anything else: shown, not raised
            self._ui_error = _message(exc)
        else:
            self._ui_error = None
        self._sync_controls()
        self._update_status()

    def _sync_controls(self) -> None:
        """Set every widget to the controller's current value (without calling it back)."""
        if self.closed:
            return
        state = self.lab.state()
        self._syncing = True
        try:
            for row in state["layers"]:
                name = row["name"]
                if name not in self.freeze:
                    continue
                self.freeze[name].value = bool(row["frozen"])
                slider = self.lr_mult[name]
                options = _with_option(slider.options, row["lr_mult"])
                if options != slider.options:
                    slider.options = options
                slider.value = row["lr_mult"]
            self.clip_mode.value = state["clip_mode"] or "off"
            if state["clip_threshold"] is not None:
                threshold = float(state["clip_threshold"])
                options = _with_option(self.clip_threshold.options, threshold)
                if options != self.clip_threshold.options:
                    self.clip_threshold.options = options
                self.clip_threshold.value = threshold
            if self.lr.value != state["lr"]:
                self.lr.value = state["lr"]
        finally:
            self._syncing = False

    # -- what the page shows ----------------------------------------------------------------------
    def status_data(self) -> dict[str, str]:
        """The status line's data attributes (all strings):

        ``data-step``, ``data-loss``, ``data-running`` (1 or 0), ``data-steps-per-second``
        (over the last 2 s of training; 0 when paused), ``data-redraws`` (frames the
        browser has drawn so far), ``data-redraws-per-second``, ``data-draw-requests``
        (frames sent to the page), ``data-draw-ms`` (what building the last frame cost the
        kernel), ``data-grad-norm`` (the latest global gradient norm, before clipping),
        ``data-pace`` (the chosen speed in steps per second, or ``max``),
        ``data-clip-mode``, ``data-clip-threshold``, ``data-clip-scale``, ``data-lr``,
        ``data-error`` (empty when none), ``data-watch-<i>`` (the lab's watched numbers, in
        order), ``data-layer-keys`` (the keys, space separated)
        and per layer ``data-norm-<key>`` (parameter norm after the latest step, full
        precision), ``data-frozen-<key>`` (1 or 0) and ``data-lr-mult-<key>``.
        """
        state = self.lab.state()
        error = self._ui_error or state["error"] or ""
        data = {
            "data-step": str(state["step"]),
            "data-loss": _number(state["loss"]),
            "data-running": "1" if self.running else "0",
            "data-steps-per-second": f"{self._steps_rate.value():.1f}",
            "data-pace": "max" if self.pace is None else _number(self.pace),
            "data-redraws": str(self.chart.frames_drawn),
            "data-redraws-per-second": f"{self._draw_rate.value():.2f}",
            "data-draw-requests": str(self.draw_requests),
            "data-draw-ms": f"{self._frame_seconds * 1000:.1f}",
            "data-grad-norm": _number(self._latest_grad_norm()),
            "data-clip-mode": state["clip_mode"] or "off",
            "data-clip-threshold": _number(state["clip_threshold"]),
            "data-clip-scale": _number(state["clip_scale"]),
            "data-lr": _number(state["lr"]),
            "data-error": error,
            "data-layer-keys": " ".join(self.keys[row["name"]] for row in state["layers"]),
        }
        for index, value in enumerate(state["watch"].values()):
            data[f"data-watch-{index}"] = _number(value)
        for row in state["layers"]:
            key = self.keys[row["name"]]
            data[f"data-norm-{key}"] = _number(row.get("param_norm", math.nan))
            data[f"data-frozen-{key}"] = "1" if row["frozen"] else "0"
            data[f"data-lr-mult-{key}"] = _number(row["lr_mult"])
        return data

    def status_html(self) -> str:
        """The status line: a visible summary in a div that carries :meth:`status_data`."""
        data = self.status_data()
        attributes = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in data.items())
        loss = float(data["data-loss"])
        scale = data["data-clip-scale"]
        mode = data["data-clip-mode"]
        clip = (text("lab.status.clip_off") if mode == "off" else
                text("lab.status.clip_on", mode=text(f"lab.clip.{mode}"),
                     threshold=f"{float(data['data-clip-threshold']):g}",
                     scale=readable(float(scale)) if scale != "nan" else "–"))
        rate = text("lab.status.rate", rate=f"{float(data['data-steps-per-second']):.0f}")
        parts = [f"{text('lab.status.step')} <b>{data['data-step']}</b>",
                 f"{text('lab.status.loss')} " + (f"<b>{readable(loss)}</b>" if math.isfinite(loss)
                                                  else "–"),
                 f"{text('lab.status.clip')} {clip}",
                 (f"<span style='color:#080'>{text('lab.status.running')}</span>, {rate}"
                  if data["data-running"] == "1" else text("lab.status.paused"))]
        for label, value in self.lab.state()["watch"].items():
            label = html.escape(sentence(label))
            parts.append(f"{label} <b>{value:.1%}</b>" if 0 <= value <= 1
                         else f"{label} <b>{readable(value)}</b>")
        frozen = [n for n in self.lab.layers if data[f"data-frozen-{self.keys[n]}"] == "1"]
        if frozen:
            parts.append(f"{text('lab.status.frozen')}: "
                         + ", ".join(html.escape(n) for n in frozen))
        line = " · ".join(parts)
        if data["data-error"]:
            line += (f"<br><span style='color:#b00'>{text('lab.status.error')}: "
                     f"{html.escape(data['data-error'])}</span>")
        # Two lines are always reserved, so the plots do not jump when an error line appears.
        return (f'<div class="dltutor-status" {attributes} '
                f'style="font-family:monospace;font-size:13px;min-height:3.2em">{line}</div>')

    def _update_status(self) -> None:
        if self.closed:
            return
        value = self.status_html()
        if value != self.status.value:
            self.status.value = value
        norm = self._latest_grad_norm()
        shown = f"<b>{norm:.3g}</b>" if math.isfinite(norm) else "–"
        label = f"<span style='font-size:13px'>{html.escape(text('lab.grad_now'))} {shown}</span>"
        if label != self.grad_norm.value:
            self.grad_norm.value = label

    def _tick(self) -> None:
        """Called between slices: status, widgets and a frame of the plots, each at most every
        ``redraw_interval``."""
        now = time.perf_counter()
        self._steps_rate.add(now, self.lab.steps_done)
        self._draw_rate.add(now, self.chart.frames_drawn)
        if now - self._last_status >= self.redraw_interval:
            self._last_status = now
            self._sync_controls()
            self._update_status()
        if now - self._last_plot >= self.redraw_interval:
            # On a fixed beat (not "interval after the last one"): slices end at odd times,
            # and counting from each would lose a frame in every few.
            behind = now - self._last_plot >= 2 * self.redraw_interval
            self._last_plot = now if behind else self._last_plot + self.redraw_interval
            self._send_frame()

    def refresh(self, plots: bool = False) -> None:
        """Update the status line and widgets now (and the plots with ``plots=True``)."""
        if self.closed:
            return
        self._sync_controls()
        self._update_status()
        if plots:
            self._last_plot = time.perf_counter()
            self._send_frame()

    # -- plots ------------------------------------------------------------------------------------
    def _send_frame(self) -> None:
        """The latest numbers to the chart (the browser draws them)."""
        started = time.perf_counter()
        self.chart.frame = chart_frame(self.lab, self._colors, self._predict)
        self.draw_requests += 1
        self._frame_seconds = time.perf_counter() - started

    def _latest_grad_norm(self) -> float:
        values = self.lab.recorder.series("global_grad_norm")
        return float(values[-1]) if len(values) else math.nan

    def _predict(self, points: np.ndarray) -> np.ndarray:
        model = self.lab.model
        with eval_mode(model), no_grad(), np.errstate(all="ignore"):
            out = model(tensor(points)).numpy()
        return out.reshape(len(out), -1)

    def __repr__(self) -> str:
        return (f"LabView({self.lab.name!r}, step {self.lab.steps_done}, "
                f"{'running' if self.running else 'paused'}"
                f"{', closed' if self.closed else ''})")
