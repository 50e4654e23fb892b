"""A classifier's decision regions on a 2-D toy data set, with the points on top."""
from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from ..autograd import no_grad
from ..nn import Module
from ..stats import as_model_input, eval_mode
from .common import axes_or_new, readable_legend, as_numpy
from .language import give_chinese_text_a_font, words


def decision_boundary(model: Module, X: Any, y: Any, ax: Axes | None = None,
                      resolution: int = 200, padding: float = 0.5) -> list[Artist]:
    """A classifier's decision regions on 2-D data, with the points coloured by class.

    Evaluates ``model`` on a ``resolution`` x ``resolution`` grid that covers ``X`` plus
    ``padding`` on every side, under ``no_grad()`` in eval mode
    (:func:`~dltutor.stats.eval_mode`: each module's training flag is restored afterwards).
    The predicted class is the argmax of the logits (or ``logit > 0`` for a single output).
    The title gives the accuracy on the points shown.
    Returns the filled contour, then one scatter per class.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import dltutor as dt
    >>> from dltutor import nn, plot
    >>> from dltutor.data import make_moons
    >>> X, y = make_moons(n=100, seed=0)
    >>> net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    >>> contour, *points = plot.decision_boundary(net, X, y, resolution=50)
    >>> [p.get_label() for p in points], net.training
    (['class 0', 'class 1'], True)
    >>> plt.close(contour.axes.figure)
    """
    X_np, y_np = as_numpy(X), as_numpy(y).ravel()
    if X_np.ndim != 2 or X_np.shape[1] != 2:
        raise ValueError(f"decision_boundary: X must have shape (n, 2) (two features to plot), "
                         f"got {X_np.shape}")
    if len(y_np) != len(X_np):
        raise ValueError(f"decision_boundary: X has {len(X_np)} rows but y has {len(y_np)}")
    lo, hi = X_np.min(axis=0) - padding, X_np.max(axis=0) + padding
    xs, ys = np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution)
    xx, yy = np.meshgrid(xs, ys)
    grid = np.column_stack([xx.ravel(), yy.ravel()]).astype(np.float32)

    with eval_mode(model), no_grad():
        Z = _predict(model, grid).reshape(xx.shape)
        accuracy = float((_predict(model, X_np.astype(np.float32)) == y_np).mean())

    classes = int(max(Z.max(), y_np.max()) + 1)
    palette = [mpl.colormaps["tab10"](i % 10) for i in range(classes)]
    ax = axes_or_new(ax, figsize=(6.0, 4.5))
    contour = ax.contourf(xx, yy, Z, levels=np.arange(classes + 1) - 0.5,
                          colors=palette, alpha=0.25)
    scatters = [ax.scatter(X_np[y_np == c, 0], X_np[y_np == c, 1], s=18, color=palette[c],
                           edgecolors="white", linewidths=0.5, label=words("boundary.class", c=c))
                for c in range(classes) if (y_np == c).any()]
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel(words("boundary.feature", i=0))
    ax.set_ylabel(words("boundary.feature", i=1))
    ax.set_title(words("boundary.title", accuracy=accuracy))
    readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return [contour, *scatters]


def _predict(model: Module, points: np.ndarray) -> np.ndarray:
    """The predicted class of each point: argmax of the logits, or ``logit > 0`` for a single
    output. In chunks, so a fine grid does not make one huge batch."""
    chunks = []
    for start in range(0, len(points), 8192):
        out = as_numpy(model(as_model_input(model, points[start:start + 8192])))
        out = out.reshape(len(out), -1)
        chunks.append(out.argmax(axis=1) if out.shape[1] > 1 else
                      (out[:, 0] > 0).astype(np.int64))
    return np.concatenate(chunks)
