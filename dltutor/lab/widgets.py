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
  :mod:`dltutor.lab.chart`): the loss, each layer's parameter norm, its gradient norm
  before clipping (thin) and after (thick, dashed), its update / parameter ratio, the steps
  where it was frozen (shaded), a mark at every step where a control changed ("layer 2
  frozen"), and the decision boundary when the data has two features;
* **a status line** (:mod:`dltutor.lab.status`): step, loss, clip scale, steps per second
  and the last error.

This module is a thin layer. Every control calls one :class:`TrainingLab` method
(``freeze``, ``set_lr_mult``, ``set_clip``, ``set_lr``, ``step``, ``reset``) and every
picture is read from ``lab.state()`` and ``lab.recorder``. When the controller refuses a value
(it raises :class:`~dltutor.lab.errors.LabError` and changes nothing), the message goes to
the status line and the widget snaps back to the controller's current value. Changes made in
code (``lab.freeze("2")`` in another cell) show in the widgets within a tenth of a second.

Training runs as an asyncio task on the kernel's event loop, in short slices of steps so that
a click takes effect from the next step (:mod:`dltutor.lab.pacing`). A new frame of plot
numbers goes to the page every ``redraw_interval`` (1/12 s); building one costs the kernel
about a millisecond, and the browser draws it.

One live view per lab name: showing a lab again (re-running the cell, even with a new lab of
the same name) closes the previous view's widgets and stops its training task.

Every control has a CSS class and the status line carries the numbers as ``data-``
attributes, so tests (and the curious) can read the state from the page; see
:mod:`dltutor.lab.controls` and :mod:`dltutor.lab.status`.

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

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import ipywidgets as W

from . import controls
from .chart import LiveChart, chart_frame, chart_spec, layer_colors, legend_html
from .chart import predict as model_outputs
from .controller import TrainingLab
from .controls import CLIP_THRESHOLDS, LR_MULTS, PACES, layer_key, layer_keys
from .pacing import SLICE_SECONDS, PacedTrainer
from .status import Rate, error_text, grad_norm_html, status_data, status_html

# layer_key, layer_keys, LR_MULTS, CLIP_THRESHOLDS and PACES live in dltutor.lab.controls; they
# stay importable from here, where they were first (tests and scripts import them from here).
__all__ = ["CLIP_THRESHOLDS", "LR_MULTS", "PACES", "LabView", "close_all", "layer_key",
           "layer_keys", "live_views"]

#: Time between two frames of the plots (seconds): 12 per second, so that at least 10 reach
#: the page while training runs flat out.
REDRAW_INTERVAL = 1 / 12
#: At most this many views stay live; showing one more closes the oldest.
MAX_LIVE = 4

_LIVE: dict[str, LabView] = {}     # lab name -> its live view


def live_views() -> list[LabView]:
    """The views shown and not yet closed (at most one per lab name)."""
    return list(_LIVE.values())


def close_all() -> None:
    """Close every live view: stop its training task and close its widgets."""
    for view in list(_LIVE.values()):
        view.close()


class LabView:
    """Widgets and live plots for one :class:`TrainingLab` (see the module docstring).

    ``redraw_interval``: the time between two frames of the plots (1/12 s).
    ``slice_seconds``: how long the training task steps before it lets widget messages in.
    ``pace``: the speed training starts at, in steps per second (None: as fast as it goes);
    by default the lab's own ``lab.pace``. The speed slider changes it while it runs.

    The controls, for scripts and tests: ``buttons`` (``"play"``, ``"pause"``, ``"step"``,
    ``"reset"``), ``freeze[layer]``, ``lr_mult[layer]``, ``clip_mode``, ``clip_threshold``,
    ``lr``, ``speed``, ``status``, ``grad_norm``; the plots: ``chart``; the whole view:
    ``widget``; the training loop: ``trainer`` (a :class:`~dltutor.lab.pacing.PacedTrainer`).
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
        self.trainer = PacedTrainer(lab, pace, slice_seconds, on_slice=self._tick,
                                    on_stop=self._training_stopped)
        self.redraw_interval = redraw_interval
        self.keys = layer_keys(lab.layers)
        self.closed = False
        self._syncing = False
        self._ui_error: str | None = None
        self._last_status = self._last_plot = -math.inf
        self._steps_rate, self._draw_rate = Rate(), Rate()
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
        """Every control (made in :mod:`dltutor.lab.controls`, bound here to the controller)
        and the status line, laid out in ``_controls_box``."""
        state = self.lab.state()
        actions = {"play": self.play, "pause": self.pause, "step": self.step_once,
                   "reset": self.reset}
        self.buttons = {name: controls.button(name, act) for name, act in actions.items()}
        self.buttons["pause"].disabled = True
        self.speed = controls.speed_slider(self.pace, self._set_pace)
        self.freeze: dict[str, W.Checkbox] = {}
        self.lr_mult: dict[str, W.SelectionSlider] = {}
        modules = dict(self.lab.model.named_modules())
        layer_rows = [self._build_layer_row(layer, modules.get(layer["name"]))
                      for layer in state["layers"]]
        threshold = state["clip_threshold"]          # None while clipping is off
        self.clip_mode, self.clip_threshold = controls.clip_controls(
            state["clip_mode"], self.lab.clip_default if threshold is None else threshold,
            lambda: self._apply(self._set_clip))
        self.grad_norm = controls.grad_norm_label()
        self.lr = controls.lr_text(state["lr"], self._control("set_lr"))
        self.status = W.HTML(layout=W.Layout(width="100%"))
        self.status.add_class("dltutor-status-line")
        self._controls_box = W.VBox([
            controls.row(controls.lab_title(self.lab.title), *self.buttons.values(), self.speed),
            *layer_rows,
            controls.row(self.clip_mode, self.clip_threshold, self.grad_norm, self.lr),
        ])

    def _build_layer_row(self, layer: dict[str, Any], module: Any) -> W.HBox:
        """One layer's label, freeze checkbox and lr multiplier slider (kept in ``freeze`` and
        ``lr_mult``)."""
        name, key = layer["name"], self.keys[layer["name"]]
        self.freeze[name] = controls.freeze_box(key, layer["frozen"],
                                                self._control("freeze", name))
        self.lr_mult[name] = controls.lr_mult_slider(key, layer["lr_mult"],
                                                     self._control("set_lr_mult", name))
        return controls.row(controls.layer_label(name, module), self.freeze[name],
                            self.lr_mult[name], css_class="dltutor-layer-row")

    def _control(self, method: str, *args: Any) -> Callable[[Any], None]:
        """A widget's callback: ``lab.<method>(*args, new value)``, through :meth:`_apply`.
        (The method is looked up at each call, so a patched ``lab.freeze`` is the one called.)"""
        return lambda value: self._apply(lambda: getattr(self.lab, method)(*args, value))

    def _build_chart(self) -> None:
        """The plots (a :class:`~dltutor.lab.chart.LiveChart`) and their legend, in HTML."""
        self._colors = layer_colors(self.lab)
        self._predict = partial(model_outputs, self.lab)     # for the decision boundary
        self.chart = LiveChart(spec=chart_spec(self.lab), layout=W.Layout(width="100%"))
        self.chart.add_class("dltutor-plots")
        self.legend = W.HTML(legend_html(self.lab, self._colors))
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
        self.trainer.close()
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

    # -- training (the loop itself is self.trainer's) -------------------------------------------
    @property
    def running(self) -> bool:
        """True while the training task is alive and asked to go on."""
        return self.trainer.running

    @property
    def pace(self) -> float | None:
        """The chosen speed in steps per second (None: as fast as it goes)."""
        return self.trainer.pace

    def play(self, steps: int | None = None, seconds: float | None = None) -> None:
        """Train continuously in a task on the running asyncio loop (the kernel's) until
        ``pause()``, an error, or ``steps`` more steps / ``seconds`` seconds. Pressing play
        while it runs changes nothing: there is never a second loop."""
        if self.trainer.play(steps=steps, seconds=seconds):
            self._set_buttons(True)
            self.refresh()

    def pause(self) -> None:
        """Stop training after the current slice (at most ``slice_seconds``)."""
        self.trainer.pause()
        self._set_buttons(False)

    async def train(self, steps: int | None = None, seconds: float | None = None) -> None:
        """``play(steps, seconds)`` and wait until the loop stops (for scripts and tests:
        ``asyncio.run(view.train(steps=100))``)."""
        self.play(steps=steps, seconds=seconds)
        await self.trainer.wait()

    def _training_stopped(self, error: Exception | None) -> None:
        """The loop ended (paused, done, closed, or an error, shown in the status line)."""
        if error is not None:
            self._ui_error = error_text(error)
        self._steps_rate.clear()
        if not self.closed:
            self._set_buttons(False)
            self.refresh(plots=True)

    def _set_pace(self, value: float) -> None:
        """The speed slider: ``value`` steps per second from now on (inf: as fast as it goes)."""
        self.trainer.set_pace(value)
        self._update_status()

    def step_once(self) -> None:
        """One training step (the step button); an error goes to the status line."""
        try:
            self.lab.step(1)
        except Exception as exc:  # shown in the status line (and lab.error)
            self._ui_error = error_text(exc)
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
        except Exception as exc:  # LabError, or anything else: shown, not raised
            self._ui_error = error_text(exc)
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
                if row["name"] in self.freeze:
                    self.freeze[row["name"]].value = bool(row["frozen"])
                    controls.show_value(self.lr_mult[row["name"]], row["lr_mult"])
            self.clip_mode.value = state["clip_mode"] or "off"
            if state["clip_threshold"] is not None:
                controls.show_value(self.clip_threshold, float(state["clip_threshold"]))
            if self.lr.value != state["lr"]:
                self.lr.value = state["lr"]
        finally:
            self._syncing = False

    # -- what the page shows ----------------------------------------------------------------------
    def status_data(self) -> dict[str, str]:
        """The status line's data attributes (all strings; every one is listed in
        :func:`dltutor.lab.status.status_data`)."""
        return status_data(self.lab, self.keys, running=self.running, pace=self.pace,
                           steps_per_second=self._steps_rate.value(),
                           redraws=self.chart.frames_drawn,
                           redraws_per_second=self._draw_rate.value(),
                           draw_requests=self.draw_requests, draw_seconds=self._frame_seconds,
                           error=self._ui_error)

    def status_html(self) -> str:
        """The status line: a visible summary in a div that carries :meth:`status_data`."""
        return status_html(self.status_data(), self.lab.state())

    def _update_status(self) -> None:
        if self.closed:
            return
        value = self.status_html()
        if value != self.status.value:
            self.status.value = value
        label = grad_norm_html(self.lab)
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

    def __repr__(self) -> str:
        return (f"LabView({self.lab.name!r}, step {self.lab.steps_done}, "
                f"{'running' if self.running else 'paused'}"
                f"{', closed' if self.closed else ''})")

