"""How the scale of activations (or of their gradients) changes from layer to layer.

The numbers come from :mod:`dltutor.stats` (which needs no matplotlib); this draws them.
"""
from __future__ import annotations

from typing import Any, Callable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..autograd import Tensor
from ..nn import Module
from ..stats import activation_stats, gradient_stats
from .common import MAX_FIGWIDTH, axes_or_new, readable_legend, set_scale
from .language import give_chinese_text_a_font, words


def layer_statistics(model: Module, x: Any, ax: Axes | None = None, kind: str = "activation",
                     loss_fn: Callable[[Tensor], Tensor] | None = None, label: str | None = None,
                     log: bool | None = None) -> list[tuple[str, float]]:
    """Plot the std of each layer's output (``kind="activation"``) or of the gradient w.r.t.
    each layer's output (``kind="gradient"``) through ``model`` (usually a Sequential).

    See :func:`activation_stats` and :func:`gradient_stats` for what is computed. Call it once
    per initializer with ``label=`` on the same Axes to compare them: a good initialization
    keeps the std roughly constant from layer to layer. Returns ``[(layer name, std), ...]``
    (the line it drew is ``ax.lines[-1]``).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import dltutor as dt
    >>> from dltutor import nn, plot
    >>> _ = dt.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
    >>> stats = plot.layer_statistics(net, dt.randn(128, 64), label="default init")
    >>> [name for name, std in stats]
    ['0', '1', '2', '3']
    >>> plt.close("all")
    """
    if kind not in ("activation", "gradient"):
        raise ValueError(f"layer_statistics: kind must be 'activation' or 'gradient', got {kind!r}")
    stats = (activation_stats(model, x) if kind == "activation"
             else gradient_stats(model, x, loss_fn))
    modules = dict(model.named_children())
    ax = axes_or_new(ax, figsize=(min(MAX_FIGWIDTH, max(6.0, 0.4 * len(stats) + 1.5)), 4.0))
    stds = np.array([std for _, _, std in stats])
    positions = np.arange(len(stats))
    ax.plot(positions, stds, marker="o", lw=1.6, label=label)
    ticks = [f"{n}\n{type(modules[n]).__name__}" for n, _, _ in stats]
    ax.set_xticks(positions, ticks, fontsize="small")
    if _crowded(ax, ticks):
        ax.tick_params(axis="x", labelrotation=90)     # never a smaller font: stays readable
    set_scale(ax, stds, log)
    ax.set_ylabel(words(f"layers.{kind}_ylabel"))
    ax.set_title(words(f"layers.{kind}_title"))
    ax.set_xlabel(words(f"layers.{kind}_xlabel"))
    ax.grid(True, alpha=0.3)
    if label is not None:
        readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return [(n, s) for n, _, s in stats]


def _crowded(ax: Axes, ticks: list[str]) -> bool:
    """Whether the tick labels (in the "small" font) would overlap side by side on ``ax``."""
    char_in = 0.6 * 0.833 * plt.rcParams["font.size"] / 72     # a character's mean width
    widest = max(len(line) for tick in ticks for line in tick.split("\n"))
    fig: Figure = ax.figure  # type: ignore[assignment]  # never a SubFigure here
    width_in = ax.get_position().width * fig.get_figwidth()
    return len(ticks) * (widest * char_in + 0.06) > width_in
