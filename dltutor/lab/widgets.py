"""The live view of a :class:`~dltutor.lab.controller.TrainingLab`: ipywidgets controls and
ipympl plots, bound to the controller.

``lab.show()`` (or ``lab`` as the last line of a cell) displays a :class:`LabView`:

* **buttons**: play / pause / step (one step) / reset, and a **speed** slider (training steps
  per second, from 1 to "max"; it starts at the lab's ``pace``, a speed at which a demo takes
  about half a minute, so you can watch it learn and steer it);
* **per layer**: a *freeze* checkbox and an *lr x* slider (the layer's lr multiplier, on a
  log-like scale that includes 0: ``LR_MULTS``);
* **clipping**: a mode selector (off / value / norm / global norm) and a threshold slider;
* **lr**: the global learning rate (type a number, press Enter);
* **plots** (ipympl, redrawn while training): the loss, each layer's parameter norm, its
  gradient norm before (solid) and after (dashed) clipping, its update / parameter ratio, the
  steps where it was frozen (shaded in its colour), and the decision boundary when the data
  has two features (``lab.X.shape[1] == 2``);
* **a status line**: step, loss, clip scale, steps per second and the last error.

This module is a thin layer. Every control calls one :class:`TrainingLab` method
(``freeze``, ``set_lr_mult``, ``set_clip``, ``set_lr``, ``step``, ``reset``) and every
picture is read from ``lab.state()`` and ``lab.recorder``. When the controller refuses a value
(it raises :class:`~dltutor.lab.controller.LabError` and changes nothing), the message goes to
the status line and the widget snaps back to the controller's current value. Changes made in
code (``lab.freeze("2")`` in another cell) show in the widgets within a tenth of a second.

Training runs as an :mod:`asyncio` task on the kernel's event loop: slices of about 20 ms of
steps, each followed by ``await asyncio.sleep(0.001)`` so widget messages are handled between
slices and a control takes effect from the next step. Pressing play twice does not start a
second loop. The plots are redrawn with ``canvas.draw_idle()`` at most ten times a second,
and less often when drawing is slow (it gets at most ``DRAW_SHARE``, 40 %, of the time, so
training keeps most of it on a slow machine). Most redraws are blits: only the data is
repainted on a saved background, and the axes (their limits change with some slack) are
drawn again only when the data outgrows them. The figure belongs to the view, not to pyplot:
``plt.close("all")`` and ``%matplotlib`` settings neither see nor disturb it.

One live view per lab name: showing a lab again (re-running the cell, even with a new lab of
the same name) closes the previous view's figures and stops its training task.

For tests and for the curious, the page exposes the state:

* every control has a CSS class: ``dltutor-play``, ``dltutor-pause``, ``dltutor-step``,
  ``dltutor-reset``, ``dltutor-freeze-<key>``, ``dltutor-lr-mult-<key>``,
  ``dltutor-clip-mode``, ``dltutor-clip-threshold``, ``dltutor-lr``, ``dltutor-status-line``
  (the status widget; the div inside it is ``dltutor-status``), ``dltutor-legend``,
  ``dltutor-plots`` (the ipympl canvas) and the whole view ``dltutor-lab``;
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
import warnings
from collections import deque
from itertools import count
from typing import Any, Callable

import ipywidgets as W
import numpy as np
from ipympl.backend_nbagg import Canvas, FigureManager
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

from ..autograd import no_grad, tensor
from ..stats import eval_mode
from ..trace import Recorder
from .controller import TrainingLab

__all__ = ["LabView", "layer_key", "live_views", "close_all", "LR_MULTS", "CLIP_THRESHOLDS",
           "PACES"]

#: The choices of the per-layer lr multiplier slider (0 stops the layer).
LR_MULTS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The choices of the speed slider, in training steps per second (inf: as fast as it goes).
PACES = (1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, math.inf)
#: The choices of the clip threshold slider.
CLIP_THRESHOLDS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: The clip mode selector: (label, value); the value goes to ``lab.set_clip`` ("off" -> None).
CLIP_CHOICES = (("off", "off"), ("value", "value"), ("norm (each tensor)", "norm"),
                ("global norm", "global_norm"))
#: Shortest time between two redraws of the plots (seconds): at most 10 per second.
REDRAW_INTERVAL = 0.1
#: Drawing may take at most this share of the time; slower drawings are requested less often.
DRAW_SHARE = 0.4
#: Seconds of training steps between two looks at the widget messages.
SLICE_SECONDS = 0.02
#: At most this many points per line (longer histories are thinned for drawing).
MAX_POINTS = 400
#: Resolution of the decision-boundary grid.
GRID = 60
#: Slack of the axis limits: the x axis runs ahead of the data by this share of its span, and
#: a y axis gets this share of its span as margin and shrinks when the data fills less than
#: Y_SHRINK of it. Limits that change less often mean fewer full drawings.
X_SLACK, Y_MARGIN, Y_SHRINK = 0.4, 0.3, 0.2
#: At most this many views stay live; showing one more closes the oldest.
MAX_LIVE = 4

_LIVE: dict[str, "LabView"] = {}     # lab name -> its live view
_TASKS: set[asyncio.Task] = set()    # strong references: asyncio keeps only weak ones
_numbers = count(1)


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
    """Close every live view: stop its training task and close its figure and widgets."""
    for view in list(_LIVE.values()):
        view.close()


def _number(value: Any) -> str:
    """A number for a data attribute: full precision, ``nan`` for missing."""
    if value is None:
        return "nan"
    value = float(value)
    return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else
                                                      ("inf" if value > 0 else "-inf"))


def _label(value: float) -> str:
    return f"{value:g}"


def _pace_label(value: float) -> str:
    return "max" if math.isinf(value) else f"{value:g}/s"


def _with_option(options: tuple, value: float, label: Callable[[float], str] = _label) -> tuple:
    """SelectionSlider options ``(label, value)`` including ``value`` (kept sorted)."""
    if any(v == value for _, v in options):
        return options
    return tuple(sorted(options + ((label(value), value),), key=lambda o: o[1]))


def _message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _css_color(color: str) -> str:
    return to_hex(color)


def _power_label(value: float, _position: Any = None) -> str:
    """Log-axis tick label without mathtext (cheaper to draw): ``1e-3``, ``1``, ``10``."""
    if value <= 0:
        return ""
    exponent = math.log10(value)
    if abs(exponent - round(exponent)) > 1e-6:
        return ""
    exponent = int(round(exponent))
    return {0: "1", 1: "10"}.get(exponent, f"1e{exponent}")


class _LabCanvas(Canvas):
    """ipympl's canvas, counting and timing the drawings the browser asks for.

    When the browser asks for a drawing (after ``draw_idle``), ``fast_draw`` (set by the view)
    gets the first go: if the axes, ticks and titles are unchanged it repaints only the data
    on a saved background (blitting) and returns True; otherwise the whole figure is drawn.
    """

    def __init__(self, figure: Figure, *args: Any, **kwargs: Any):
        super().__init__(figure, *args, **kwargs)
        self.dltutor_draws = 0
        self.dltutor_full_draws = 0
        self.dltutor_draw_seconds = 0.0
        # moving averages of the time of a full drawing and of a blit (seconds)
        self.dltutor_full_average = self.dltutor_fast_average = 0.0
        self.fast_draw: Callable[[], bool] | None = None

    def draw(self) -> None:
        started = time.perf_counter()
        full = True
        try:
            if self.fast_draw is not None and self.fast_draw():
                full = False
                # matplotlib's public blit(): marks the image changed and sends the
                # changed pixels to the page (ipympl's refresh_all)
                self.blit()
            else:
                self.dltutor_full_draws += 1
                super().draw()
        finally:
            self.dltutor_draws += 1
            self.dltutor_draw_seconds = seconds = time.perf_counter() - started
            name = "dltutor_full_average" if full else "dltutor_fast_average"
            average = getattr(self, name)
            setattr(self, name, seconds if average == 0 else 0.7 * average + 0.3 * seconds)


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

    ``redraw_interval``: the shortest time between redraws (0.1 s: at most 10 per second).
    ``slice_seconds``: how long the training task steps before it lets widget messages in.
    ``pace``: the speed training starts at, in steps per second (None: as fast as it goes);
    by default the lab's own ``lab.pace``. The speed slider changes it while it runs.

    The controls, for scripts and tests: ``buttons`` (``"play"``, ``"pause"``, ``"step"``,
    ``"reset"``), ``freeze[layer]``, ``lr_mult[layer]``, ``clip_mode``, ``clip_threshold``,
    ``lr``, ``status``; the plots: ``figure`` and ``canvas``; the whole view: ``widget``.
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
        self._last_status = self._last_plot = self._last_relimit = -math.inf
        self._plot_interval = redraw_interval
        self._steps_rate, self._draw_rate = _Rate(), _Rate()
        self.draw_requests = 0
        self._build_controls()
        self._build_figure()
        self.widget = W.VBox([self._controls_box, self.status, self.legend, self.canvas],
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

        self.buttons = {
            "play": button("play", "play", "play", "train continuously", self.play),
            "pause": button("pause", "pause", "pause", "stop after the current slice",
                            self.pause),
            "step": button("step", "step", "step-forward", "train one step", self.step_once),
            "reset": button("reset", "reset", "undo",
                            "initial weights, fresh optimizer; the controls stay",
                            self.reset),
        }
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
            what = f"{type(module).__name__}, {size} params" if module is not None else ""
            label = W.HTML(f"<b>layer {html.escape(name or '(root)')}</b> "
                           f"<span style='color:#666'>{html.escape(what)}</span>",
                           layout=W.Layout(width="210px"))
            box = W.Checkbox(value=row["frozen"], description="freeze", indent=False,
                             layout=W.Layout(width="80px"))
            box.add_class(f"dltutor-freeze-{key}")
            box.observe(lambda change, n=name: self._apply(
                lambda: self.lab.freeze(n, change["new"])), names="value")
            options = _with_option(tuple((_label(v), v) for v in LR_MULTS), row["lr_mult"])
            slider = W.SelectionSlider(options=options, value=row["lr_mult"],
                                       description="lr ×", continuous_update=True,
                                       layout=W.Layout(width="300px"),
                                       style={"description_width": "36px"})
            slider.add_class(f"dltutor-lr-mult-{key}")
            slider.observe(lambda change, n=name: self._apply(
                lambda: self.lab.set_lr_mult(n, change["new"])), names="value")
            self.freeze[name], self.lr_mult[name] = box, slider
            rows.append(W.HBox([label, box, slider]))

        mode = state["clip_mode"] or "off"
        self.clip_mode = W.Dropdown(options=CLIP_CHOICES, value=mode, description="clip",
                                    layout=W.Layout(width="230px"),
                                    style={"description_width": "36px"})
        self.clip_mode.add_class("dltutor-clip-mode")
        threshold = state["clip_threshold"] if state["clip_threshold"] is not None else 1.0
        self.clip_threshold = W.SelectionSlider(
            options=_with_option(tuple((_label(v), v) for v in CLIP_THRESHOLDS), threshold),
            value=threshold, description="at", continuous_update=True,
            layout=W.Layout(width="300px"), style={"description_width": "24px"})
        self.clip_threshold.add_class("dltutor-clip-threshold")
        self.clip_mode.observe(lambda change: self._apply(self._set_clip), names="value")
        self.clip_threshold.observe(lambda change: self._apply(self._set_clip), names="value")
        self.lr = W.FloatText(value=state["lr"], description="lr", step=None,
                              layout=W.Layout(width="170px"),
                              style={"description_width": "24px"})
        self.lr.add_class("dltutor-lr")
        self.lr.observe(lambda change: self._apply(lambda: self.lab.set_lr(change["new"])),
                        names="value")

        speed = math.inf if self.pace is None else self.pace
        self.speed = W.SelectionSlider(
            options=_with_option(tuple((_pace_label(v), v) for v in PACES), speed, _pace_label),
            value=speed, description="speed", continuous_update=True,
            layout=W.Layout(width="300px"), style={"description_width": "44px"},
            tooltip="training steps per second")
        self.speed.add_class("dltutor-pace")
        self.speed.observe(lambda change: self._set_pace(change["new"]), names="value")

        self.status = W.HTML(layout=W.Layout(width="100%"))
        self.status.add_class("dltutor-status-line")
        title = W.HTML(f"<b>{html.escape(lab.name)}</b>",
                       layout=W.Layout(margin="0 12px 0 4px"))
        self._controls_box = W.VBox([
            W.HBox([title, *self.buttons.values(), self.speed],
                   layout=W.Layout(align_items="center", flex_flow="row wrap")),
            *rows,
            W.HBox([self.clip_mode, self.clip_threshold, self.lr]),
        ])

    def _build_figure(self) -> None:
        lab = self.lab
        X = lab.X
        self._two_d = (X is not None and lab.y is not None and np.ndim(X) == 2
                       and np.shape(X)[1] == 2)
        fig = Figure(figsize=(10.5, 5.8), dpi=72)
        self.figure = fig
        self.canvas = _LabCanvas(fig)
        with warnings.catch_warnings():   # ipympl's Toolbar trips a traitlets deprecation
            warnings.simplefilter("ignore", DeprecationWarning)
            self._manager = FigureManager(self.canvas, next(_numbers))
        self.canvas.header_visible = False
        self.canvas.footer_visible = False
        self.canvas.toolbar_visible = False
        self.canvas.resizable = False
        self.canvas.add_class("dltutor-plots")

        if self._two_d:   # the decision boundary takes the right column, both rows
            gs = fig.add_gridspec(2, 3, left=0.055, right=0.99, bottom=0.085, top=0.94,
                                  wspace=0.28, hspace=0.38, width_ratios=(1, 1, 1.05))
        else:
            gs = fig.add_gridspec(2, 2, left=0.06, right=0.99, bottom=0.085, top=0.94,
                                  wspace=0.22, hspace=0.38)
        self.ax_loss = fig.add_subplot(gs[0, 0])
        self.ax_param = fig.add_subplot(gs[0, 1], sharex=self.ax_loss)
        self.ax_grad = fig.add_subplot(gs[1, 0], sharex=self.ax_loss)
        self.ax_ratio = fig.add_subplot(gs[1, 1], sharex=self.ax_loss)
        self.ax_boundary = fig.add_subplot(gs[:, 2]) if self._two_d else None
        # Few ticks and plain labels: text is most of the drawing time.
        for ax, title in ((self.ax_loss, "loss"), (self.ax_param, "parameter norm  ‖w‖"),
                          (self.ax_grad, "gradient norm  ‖∇w‖  (dashed: after clipping)"),
                          (self.ax_ratio, "update / parameter  ‖Δw‖ / ‖w‖")):
            ax.set_title(title, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(True, alpha=0.3)
            ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        self.ax_param.yaxis.set_major_locator(MaxNLocator(4))
        for ax in (self.ax_grad, self.ax_ratio):
            ax.set_xlabel("step", fontsize=8)
        for ax in (self.ax_loss, self.ax_grad, self.ax_ratio):
            ax.set_yscale("log", nonpositive="mask")
            ax.yaxis.set_major_locator(LogLocator(numticks=5))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.yaxis.set_major_formatter(FuncFormatter(_power_label))

        names = list(lab.recorder.names)
        self._names = names
        colors = [f"C{i % 10}" for i in range(len(names))]
        (self._loss_line,) = self.ax_loss.plot([], [], color="0.2", lw=1.2)
        self._param_lines = [self.ax_param.plot([], [], color=c, lw=1.4)[0] for c in colors]
        self._grad_lines = [self.ax_grad.plot([], [], color=c, lw=1.2)[0] for c in colors]
        self._clipped_lines = [self.ax_grad.plot([], [], color=c, lw=1.2, ls="--")[0]
                               for c in colors]
        (self._global_line,) = self.ax_grad.plot([], [], color="k", lw=1.0, alpha=0.7)
        (self._global_clipped,) = self.ax_grad.plot([], [], color="k", lw=1.0, ls="--",
                                                    alpha=0.7)
        self._threshold_line = self.ax_grad.axhline(1.0, color="0.35", lw=1.0, ls=":",
                                                    visible=False)
        self._ratio_lines = [self.ax_ratio.plot([], [], color=c, lw=1.2)[0] for c in colors]
        self.ax_ratio.axhline(1e-3, color="0.35", lw=1.0, ls=":")
        # Frozen steps: one collection of rectangles (full height) per name and panel.
        self._spans = []
        for ax in (self.ax_param, self.ax_grad, self.ax_ratio):
            row = []
            for c in colors:
                spans = PolyCollection([], facecolors=c, alpha=0.15, linewidths=0,
                                       transform=ax.get_xaxis_transform())
                ax.add_collection(spans, autolim=False)
                row.append(spans)
            self._spans.append(row)
        # The legend is HTML next to the plots (a matplotlib legend costs a lot per redraw).
        swatch = ("<span style='display:inline-block;width:22px;border-top:{style} {color};"
                  "vertical-align:middle;margin:0 4px 0 10px'></span>")
        keys = "".join(swatch.format(style="3px solid", color=_css_color(c))
                       + html.escape(f"{lab.recorder.by} {n}") for c, n in zip(colors, names))
        keys += (swatch.format(style="2px solid", color="#000") + "all layers (global)"
                 + swatch.format(style="2px dashed", color="#555") + "after clipping"
                 + swatch.format(style="2px dotted", color="#555")
                 + "clip threshold / ratio 1e-3"
                 + "<span style='display:inline-block;width:18px;height:10px;"
                   "background:rgba(0,0,0,0.15);margin:0 4px 0 10px'></span>"
                 + "shaded: steps the layer was frozen (its colour)")
        self.legend = W.HTML(f"<div style='font-size:11px;line-height:1.8'>{keys}</div>")
        self.legend.add_class("dltutor-legend")

        if self._two_d:
            self._setup_boundary()
        # Blitting: the data artists are "animated" (left out of the full drawing, painted on
        # a saved background); the axes keep limits we set, so the background stays valid.
        # (in drawing order: the shaded frozen spans under the lines)
        self._animated = [*(c for row in self._spans for c in row), self._loss_line,
                          *self._param_lines, *self._grad_lines, *self._clipped_lines,
                          self._global_line, self._global_clipped, self._threshold_line,
                          *self._ratio_lines]
        if self._two_d:
            self._animated += [self._image, self._boundary_title]
        for artist in self._animated:
            artist.set_animated(True)
        for ax in (self.ax_loss, self.ax_param, self.ax_grad, self.ax_ratio):
            ax.set_autoscale_on(False)
        self.ax_loss.set_xlim(0, 20)
        self.ax_loss.set_ylim(1e-2, 1)
        self.ax_param.set_ylim(0, 1)
        self.ax_grad.set_ylim(1e-3, 10)
        self.ax_ratio.set_ylim(1e-5, 1e-1)
        self._background = None
        self._background_key: tuple = ()
        self.canvas.mpl_connect("draw_event", self._on_full_draw)
        self.canvas.fast_draw = self._fast_draw

    def _setup_boundary(self) -> None:
        X, y = np.asarray(self.lab.X), np.asarray(self.lab.y).ravel()
        lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
        xs, ys = np.linspace(lo[0], hi[0], GRID), np.linspace(lo[1], hi[1], GRID)
        xx, yy = np.meshgrid(xs, ys)
        dtype = X.dtype if X.dtype.kind == "f" else np.float32
        self._grid = np.column_stack([xx.ravel(), yy.ravel()]).astype(dtype)
        self._X = X.astype(dtype, copy=False)
        self._y = y
        self._classes = int(max(2, y.max() + 1)) if y.size else 2
        ax = self.ax_boundary
        binary = self._classes == 2
        self._image = ax.imshow(np.zeros((GRID, GRID)), origin="lower", aspect="auto",
                                extent=(lo[0], hi[0], lo[1], hi[1]),
                                cmap="coolwarm" if binary else "tab10", alpha=0.45,
                                vmin=0.0 if binary else -0.5,
                                vmax=1.0 if binary else 9.5, interpolation="bilinear")
        ax.scatter(X[:, 0], X[:, 1], c=y, s=7, cmap="coolwarm" if binary else "tab10",
                   vmin=0 if binary else -0.5, vmax=1 if binary else 9.5, linewidths=0)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_xticks([])
        ax.set_yticks([])
        self._boundary_title = ax.set_title("decision boundary", fontsize=9)

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
        """Stop training, close the figure and every widget, and forget this view."""
        if self.closed:
            return
        self._want_running = False
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self.closed = True
        if _LIVE.get(self.lab.name) is self:
            del _LIVE[self.lab.name]
        self.canvas.fast_draw = None
        self._manager.destroy()            # closes the canvas widget
        for widget in self._all_widgets():
            widget.close()
        self.figure.clear()

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
        (over the last 2 s of training; 0 when paused), ``data-redraws`` (drawings the
        browser has made so far), ``data-full-redraws`` (those that redrew the axes, not
        only the data), ``data-redraws-per-second``, ``data-draw-requests``
        (``draw_idle`` calls), ``data-draw-ms`` (the last drawing's time),
        ``data-pace`` (the chosen speed in steps per second, or ``max``),
        ``data-clip-mode``, ``data-clip-threshold``, ``data-clip-scale``, ``data-lr``,
        ``data-error`` (empty when none), ``data-layer-keys`` (the keys, space separated)
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
            "data-redraws": str(self.canvas.dltutor_draws),
            "data-full-redraws": str(self.canvas.dltutor_full_draws),
            "data-redraws-per-second": f"{self._draw_rate.value():.2f}",
            "data-draw-requests": str(self.draw_requests),
            "data-draw-ms": f"{self.canvas.dltutor_draw_seconds * 1000:.1f}",
            "data-clip-mode": state["clip_mode"] or "off",
            "data-clip-threshold": _number(state["clip_threshold"]),
            "data-clip-scale": _number(state["clip_scale"]),
            "data-lr": _number(state["lr"]),
            "data-error": error,
            "data-layer-keys": " ".join(self.keys[row["name"]] for row in state["layers"]),
        }
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
        parts = [f"step <b>{data['data-step']}</b>",
                 f"loss <b>{loss:.4f}</b>" if math.isfinite(loss) else "loss –",
                 "clip " + ("off" if data["data-clip-mode"] == "off" else
                            f"{data['data-clip-mode'].replace('_', ' ')} at "
                            f"{float(data['data-clip-threshold']):g}, scale "
                            + (f"{float(scale):.3f}" if scale != "nan" else "–")),
                 ("<span style='color:#080'>running</span>, "
                  f"{float(data['data-steps-per-second']):.0f} steps/s"
                  if data["data-running"] == "1" else "paused")]
        frozen = [n for n in self.lab.layers if data[f"data-frozen-{self.keys[n]}"] == "1"]
        if frozen:
            parts.append("frozen: " + ", ".join(html.escape(n) for n in frozen))
        text = " · ".join(parts)
        if data["data-error"]:
            text += (f"<br><span style='color:#b00'>last error: "
                     f"{html.escape(data['data-error'])}</span>")
        return (f'<div class="dltutor-status" {attributes} '
                f'style="font-family:monospace;font-size:12px">{text}</div>')

    def _update_status(self) -> None:
        if self.closed:
            return
        value = self.status_html()
        if value != self.status.value:
            self.status.value = value

    def _tick(self) -> None:
        """Called between slices: status and widgets at most every ``redraw_interval``, the
        plots at most that often and never more than ``DRAW_SHARE`` of the time."""
        now = time.perf_counter()
        self._steps_rate.add(now, self.lab.steps_done)
        self._draw_rate.add(now, self.canvas.dltutor_draws)
        if now - self._last_status >= self.redraw_interval:
            self._last_status = now
            self._sync_controls()
            self._update_status()
        if now - self._last_plot >= self._plot_interval:
            # A full drawing (new axis limits) at most once per its cost / DRAW_SHARE; in
            # between, the data may run past the limits for a moment and blits go on.
            canvas = self.canvas
            relimit = now - self._last_relimit >= canvas.dltutor_full_average / DRAW_SHARE
            self._last_plot = now
            self._update_plots(relimit=relimit)
            self._request_draw()
            full = self._background is None or self._background_key != self._canvas_key()
            if full:
                self._last_relimit = now
            cost = canvas.dltutor_full_average if full else canvas.dltutor_fast_average
            self._plot_interval = max(self.redraw_interval, cost / DRAW_SHARE)

    def refresh(self, plots: bool = False) -> None:
        """Update the status line and widgets now (and the plots with ``plots=True``)."""
        if self.closed:
            return
        self._sync_controls()
        self._update_status()
        if plots:
            self._last_plot = time.perf_counter()
            self._update_plots()
            self._request_draw()

    def _request_draw(self) -> None:
        self.draw_requests += 1
        self.canvas.draw_idle()

    # -- plots ------------------------------------------------------------------------------------
    def _update_plots(self, relimit: bool = True) -> None:
        rec = self.lab.recorder
        steps = rec.steps
        n = len(steps)
        pick = np.arange(n - 1, -1, -max(1, math.ceil(n / MAX_POINTS)))[::-1]
        x = steps[pick].astype(float)
        self._loss_line.set_data(x, rec.series("loss")[pick])
        param = rec.series("param_norm")[pick]
        grad = rec.series("grad_norm")[pick]
        clipped_all = rec.series("clipped_grad_norm")
        clipped = clipped_all[pick]
        ratio = rec.series("update_ratio")[pick]
        for i in range(len(self._names)):
            self._param_lines[i].set_data(x, param[:, i])
            self._grad_lines[i].set_data(x, grad[:, i])
            self._clipped_lines[i].set_data(x, clipped[:, i])
            self._ratio_lines[i].set_data(x, ratio[:, i])
        self._global_line.set_data(x, rec.series("global_grad_norm")[pick])
        if n:
            with np.errstate(invalid="ignore"):
                total = np.sqrt(np.nansum(clipped_all[pick] ** 2, axis=1))
        else:
            total = np.zeros(0)
        self._global_clipped.set_data(x, total)
        mode, threshold = self.lab.clip_setting()
        if mode in ("norm", "global_norm") and threshold:
            self._threshold_line.set_ydata([threshold, threshold])
            self._threshold_line.set_visible(True)
        else:
            self._threshold_line.set_visible(False)
        self._update_spans(rec)
        if relimit:
            self._set_limits(steps, [
                (self.ax_loss, [self._loss_line.get_ydata()]),
                (self.ax_param, [line.get_ydata() for line in self._param_lines]),
                (self.ax_grad, [line.get_ydata() for line in
                                [*self._grad_lines, *self._clipped_lines, self._global_line,
                                 self._global_clipped]]
                 + ([[threshold]] if self._threshold_line.get_visible() else [])),
                (self.ax_ratio, [line.get_ydata() for line in self._ratio_lines] + [[1e-3]]),
            ])
        if self._two_d:
            self._update_boundary()

    def _set_limits(self, steps: np.ndarray, panels: list) -> None:
        """Axis limits with slack: they change (and the figure needs a full drawing) only
        when the data leaves them or fills much less of them; otherwise the next drawing is
        a cheap blit."""
        x0, x1 = self.ax_loss.get_xlim()
        if len(steps):
            first, last = float(steps[0]), float(steps[-1])
            span = max(last - first, 20.0)
            if last > x1 or first < x0 or first > x0 + X_SLACK * (x1 - x0) \
                    or (x1 - x0) > 3 * span:
                self.ax_loss.set_xlim(first - 0.5, first + (1 + X_SLACK) * span + 0.5)
        elif (x0, x1) != (0, 20):
            self.ax_loss.set_xlim(0, 20)
        for ax, series in panels:
            log = ax.get_yscale() == "log"
            values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in series])
            values = values[np.isfinite(values) & ((values > 0) if log else True)]
            if values.size == 0:
                continue
            if ax is self.ax_loss and values.size > 50:
                # mini-batch losses spike: a spike may poke out rather than rescale the axis
                low, high = values.min(), float(np.percentile(values, 99))
            else:
                low, high = values.min(), values.max()
            if log:
                low, high = math.log10(low), math.log10(high)
            y0, y1 = ax.get_ylim()
            if log:
                y0, y1 = math.log10(y0), math.log10(y1)
            span = max(high - low, 0.5 if log else max(abs(high) * 0.05, 1e-6))
            if y0 <= low and high <= y1 and (high - low) >= Y_SHRINK * (y1 - y0):
                continue
            if y0 <= low and high <= y1 and (y1 - y0) <= 1.5 * span:
                continue          # a flat line: the span is already as small as it gets
            margin = Y_MARGIN * span
            low, high = (max(low - margin, 0.0) if low >= 0 and not log else low - margin,
                         high + margin)
            ax.set_ylim((10 ** low, 10 ** high) if log else (low, high))

    def _on_full_draw(self, event: Any) -> None:
        """After a full drawing (the data artists left out): keep it as the background and
        paint the data on it, before the image goes to the page."""
        canvas = self.canvas
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        self._background_key = self._canvas_key()
        self._draw_animated()

    def _canvas_key(self) -> tuple:
        return (*self.figure.bbox.size, self.figure.dpi, self.ax_loss.get_xlim(),
                *(ax.get_ylim() for ax in (self.ax_loss, self.ax_param, self.ax_grad,
                                           self.ax_ratio)))

    def _draw_animated(self) -> None:
        for artist in self._animated:
            if artist.get_visible():
                self.figure.draw_artist(artist)

    def _fast_draw(self) -> bool:
        """Repaint only the data on the saved background, if it is still valid."""
        if self._background is None or self._background_key != self._canvas_key():
            return False
        self.canvas.restore_region(self._background)
        self._draw_animated()
        return True

    def _update_spans(self, rec: Recorder) -> None:
        steps = rec.steps
        for i, name in enumerate(self._names):
            verts = []
            for first, last in rec.frozen_runs(name):
                x0, x1 = steps[first] - 0.5, steps[last] + 0.5
                verts.append([(x0, 0), (x0, 1), (x1, 1), (x1, 0)])
            for row in self._spans:
                row[i].set_verts(verts)

    def _predict(self, points: np.ndarray) -> np.ndarray:
        model = self.lab.model
        with eval_mode(model), no_grad(), np.errstate(all="ignore"):
            out = model(tensor(points)).numpy()
        return out.reshape(len(out), -1)

    def _update_boundary(self) -> None:
        try:
            out = self._predict(np.concatenate([self._grid, self._X]))
        except Exception:  # noqa: BLE001 - a broken model shows in the status line, not here
            return
        grid, points = out[:len(self._grid)], out[len(self._grid):]
        if out.shape[1] == 1:
            with np.errstate(over="ignore"):
                image = 1 / (1 + np.exp(-grid[:, 0]))
            predicted = (points[:, 0] > 0).astype(int)
        elif out.shape[1] == 2:
            with np.errstate(over="ignore", invalid="ignore"):
                image = 1 / (1 + np.exp(grid[:, 0] - grid[:, 1]))   # softmax of class 1
            predicted = points.argmax(axis=1)
        else:
            image = grid.argmax(axis=1).astype(float)
            predicted = points.argmax(axis=1)
        self._image.set_data(np.nan_to_num(image, nan=0.5).reshape(GRID, GRID))
        accuracy = float((predicted == self._y).mean()) if len(self._y) else math.nan
        self._boundary_title.set_text(f"decision boundary · accuracy {accuracy:.0%}")

    def __repr__(self) -> str:
        return (f"LabView({self.lab.name!r}, step {self.lab.steps_done}, "
                f"{'running' if self.running else 'paused'}"
                f"{', closed' if self.closed else ''})")
