"""The live lab's control widgets, each made by one short function.

Every function here makes ipywidgets and gives each one its CSS class, so tests and the
curious can find it on the page; what a control *does* is the callback it is given.
:class:`~dltutor.lab.widgets.LabView` passes callbacks that call the controller, and lays the
widgets out. The classes: ``dltutor-play``, ``dltutor-pause``, ``dltutor-step``,
``dltutor-reset``, ``dltutor-pace`` (speed), ``dltutor-freeze-<key>``,
``dltutor-lr-mult-<key>``, ``dltutor-clip-mode``, ``dltutor-clip-threshold``, ``dltutor-lr``,
``dltutor-grad-norm`` (the gradient norm beside the clip slider), ``dltutor-layer-label``;
the view adds ``dltutor-title`` (the lab's name), ``dltutor-layer-row``,
``dltutor-status-line`` (the status widget; the div inside it is ``dltutor-status``, see
:mod:`dltutor.lab.status`), ``dltutor-legend``, ``dltutor-plots`` (the chart) and
``dltutor-lab`` (the whole view). The lab page's template gives a phone a compact layout by
these classes (``share/jupyter/voila/templates/dltutor``).

``<key>`` is the layer name made safe for a CSS class and a ``data-`` attribute name
(:func:`layer_key`): lower case, and every run of characters other than ``a-z`` and ``0-9``
turned into one ``-`` (``"block 1.0"`` -> ``"block-1-0"``, the root module ``""`` ->
``"root"``); if two layers would get the same key, the later ones get ``-2``, ``-3``, ...
The status line lists the keys in ``data-layer-keys``.

>>> slider = lr_mult_slider("block-1", 1.0, on_change=print)
>>> slider.value = 3.0                     # what dragging the slider does
3.0
>>> [label for label, _ in slider.options][:4]
['0', '0.01', '0.03', '0.1']
"""
from __future__ import annotations

import html
import math
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import numpy as np

from ..i18n import text

__all__ = ["BUTTONS", "CLIP_MODES", "CLIP_THRESHOLDS", "LR_MULTS", "PACES", "button",
           "clip_controls", "freeze_box", "grad_norm_label", "layer_key", "layer_keys",
           "layer_label", "lr_mult_slider", "lr_text", "row", "show_value", "speed_slider"]

#: The choices of the per-layer lr multiplier slider (0 stops the layer).
LR_MULTS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The choices of the speed slider, in training steps per second (inf: as fast as it goes).
PACES = (1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0, 200.0, 500.0, math.inf)
#: The choices of the clip threshold slider.
CLIP_THRESHOLDS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: The clip modes of the selector; the value goes to ``lab.set_clip`` ("off" -> None). Their
#: labels are ``text("lab.clip.<mode>")``, in the learner's language.
CLIP_MODES = ("off", "value", "norm", "global_norm")
#: The buttons: name -> its icon (Font Awesome). Label and tooltip: ``text("lab.<name>")`` and
#: ``text("lab.<name>.tip")``.
BUTTONS = {"play": "play", "pause": "pause", "step": "step-forward", "reset": "undo"}


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


def _label(value: float) -> str:
    return f"{value:g}"


def _pace_label(value: float) -> str:
    return text("lab.max") if math.isinf(value) else f"{value:g}/s"


def _with_option(options: tuple, value: float, label: Callable[[float], str] = _label) -> tuple:
    """SelectionSlider options ``(label, value)`` including ``value`` (kept sorted)."""
    if any(v == value for _, v in options):
        return options
    return tuple(sorted(options + ((label(value), value),), key=lambda o: o[1]))


def _choices(values: tuple, value: float, label: Callable[[float], str] = _label) -> tuple:
    """A slider's options: ``values`` with their labels, and ``value`` if it is not one."""
    return _with_option(tuple((label(v), v) for v in values), value, label)


def show_value(slider: W.SelectionSlider, value: float) -> None:
    """Move a slider to ``value``, adding it to the choices first if it is not one of them
    (``lab.set_lr_mult("0", 2.0)`` in code: the slider shows 2).

    >>> slider = lr_mult_slider("0", 1.0, on_change=lambda value: None)
    >>> show_value(slider, 2.0)
    >>> slider.value, ("2", 2.0) in slider.options
    (2.0, True)
    """
    options = _with_option(slider.options, value)
    if options != slider.options:
        slider.options = options
    slider.value = value


def _on_value(widget: W.ValueWidget, on_change: Callable[[Any], None]) -> None:
    """Call ``on_change(new value)`` whenever the widget's value changes."""
    widget.observe(lambda change: on_change(change["new"]), names="value")


def button(name: str, action: Callable[[], None]) -> W.Button:
    """One of :data:`BUTTONS`, calling ``action()`` when clicked."""
    made = W.Button(description=text(f"lab.{name}"), icon=BUTTONS[name],
                    tooltip=text(f"lab.{name}.tip"), layout=W.Layout(width="92px"))
    made.add_class(f"dltutor-{name}")
    made.on_click(lambda _: action())
    return made


def speed_slider(pace: float | None, on_change: Callable[[float], None]) -> W.SelectionSlider:
    """The speed, in steps per second (inf, shown as "max": as fast as it goes)."""
    speed = math.inf if pace is None else pace
    slider = W.SelectionSlider(
        options=_choices(PACES, speed, _pace_label), value=speed,
        description=text("lab.speed"), continuous_update=True,
        layout=W.Layout(width="300px"), style={"description_width": "44px"},
        tooltip=text("lab.speed.tip"))
    slider.add_class("dltutor-pace")
    _on_value(slider, on_change)
    return slider


def layer_label(name: str, module: Any) -> W.HTML:
    """A layer row's label: its name, its kind and its number of parameters."""
    size = (sum(int(np.prod(p.shape)) for p in module.parameters(recurse=False))
            if module is not None else 0)
    what = (text("lab.layer_size", kind=type(module).__name__, size=size)
            if module is not None else "")
    label = W.HTML(f"<b>{html.escape(text('lab.layer', name=name or '(root)'))}</b> "
                   f"<span style='color:#666'>{html.escape(what)}</span>",
                   layout=W.Layout(width="210px"))
    label.add_class("dltutor-layer-label")     # on a phone, the page hides the <span>
    return label


def freeze_box(key: str, frozen: bool, on_change: Callable[[bool], None]) -> W.Checkbox:
    """A layer's freeze checkbox (``key``: the layer's key on the page)."""
    box = W.Checkbox(value=frozen, description=text("lab.freeze"), indent=False,
                     layout=W.Layout(width="80px"))
    box.add_class(f"dltutor-freeze-{key}")
    _on_value(box, on_change)
    return box


def lr_mult_slider(key: str, value: float,
                   on_change: Callable[[float], None]) -> W.SelectionSlider:
    """A layer's lr multiplier, on the stops of :data:`LR_MULTS` (and ``value``)."""
    slider = W.SelectionSlider(options=_choices(LR_MULTS, value), value=value,
                               description="lr ×", continuous_update=True,
                               layout=W.Layout(width="300px", min_width="220px"),
                               style={"description_width": "36px"})
    slider.add_class(f"dltutor-lr-mult-{key}")
    _on_value(slider, on_change)
    return slider


def clip_controls(mode: str | None, threshold: float | None,
                  on_change: Callable[[], None]) -> tuple[W.Dropdown, W.SelectionSlider]:
    """The clip mode selector and threshold slider; ``on_change()`` when either changes
    (the threshold waits at ``threshold``, or 1, until a mode is chosen)."""
    selector = W.Dropdown(options=[(text(f"lab.clip.{m}"), m) for m in CLIP_MODES],
                          value=mode or "off", description=text("lab.clip"),
                          layout=W.Layout(width="230px"), style={"description_width": "36px"})
    selector.add_class("dltutor-clip-mode")
    threshold = threshold if threshold is not None else 1.0
    slider = W.SelectionSlider(options=_choices(CLIP_THRESHOLDS, threshold), value=threshold,
                               description=text("lab.clip_at"), continuous_update=True,
                               layout=W.Layout(width="300px", min_width="220px"),
                               style={"description_width": "36px"})
    slider.add_class("dltutor-clip-threshold")
    for widget in (selector, slider):
        _on_value(widget, lambda _: on_change())
    return selector, slider


def grad_norm_label() -> W.HTML:
    """Where the latest global gradient norm shows: what the clip threshold is compared with
    (its text is :func:`dltutor.lab.status.grad_norm_html`)."""
    label = W.HTML(layout=W.Layout(width="190px", margin="0 8px"))
    label.add_class("dltutor-grad-norm")
    return label


def lr_text(value: float, on_change: Callable[[float], None]) -> W.FloatText:
    """The global learning rate: type a number, press Enter."""
    box = W.FloatText(value=value, description="lr", step=None, layout=W.Layout(width="170px"),
                      style={"description_width": "24px"})
    box.add_class("dltutor-lr")
    _on_value(box, on_change)
    return box


def row(*children: W.Widget, css_class: str | None = None) -> W.HBox:
    """Widgets side by side, wrapping onto the next line on a narrow page; ``css_class`` names
    the row for the page's stylesheet (the phone layout of the Voilà template).

    >>> row(W.Label("a"), css_class="dltutor-layer-row")._dom_classes
    ('dltutor-layer-row',)
    """
    box = W.HBox(list(children), layout=W.Layout(align_items="center", flex_flow="row wrap"))
    if css_class:
        box.add_class(css_class)
    return box


def lab_title(name: str) -> W.HTML:
    """The lab's name in bold beside its buttons (the phone layout hides it for room).

    >>> lab_title("two moons").value
    '<b>two moons</b>'
    """
    title = W.HTML(f"<b>{html.escape(name)}</b>", layout=W.Layout(margin="0 12px 0 4px"))
    title.add_class("dltutor-title")
    return title
