"""What every plot shares: a new Axes when none is given, the automatic log scale, a legend
that stays readable, and arrays from tensors. (The words they draw, in the kit's language,
come from ``language.py``.)

Every drawing function takes ``ax=None``: give it a matplotlib ``Axes`` to draw into one panel
of your own figure, or leave it out and it makes a new figure of a sensible size.
"""
from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .. import backend as B
from ..autograd import Tensor

#: The widest new figure a helper makes, in inches. Pages (the kit's website, a narrow notebook)
#: scale a wider figure down to their text column (658 px on the website); up to about 7.3 in at
#: any dpi, the smallest text the helpers draw ("small", 8.3 pt: legends, notes) stays >= 10 px.
#: Give your own figures of several panels the same width and more rows, not more columns.
MAX_FIGWIDTH = 7.2
#: Log scale is chosen automatically when the positive values span more than this many decades.
LOG_DECADES = 2.0


def axes_or_new(ax: Axes | None, figsize: tuple[float, float] = (7.0, 4.0)) -> Axes:
    """``ax`` itself, or the axes of a new figure (constrained layout: labels never overlap)."""
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _spans_decades(values: Any, decades: float = LOG_DECADES) -> bool:
    """True when the positive, finite values span more than ``decades`` powers of ten."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    return v.size >= 2 and math.log10(v.max() / v.min()) > decades


def set_scale(ax: Axes, values: Any, log: bool | None) -> bool:
    """Apply ``log`` (True / False) or decide it from the data (None). Returns whether log.

    On a log scale, zeros (a frozen parameter's gradient) leave gaps instead of diving down.
    Automatic mode only ever switches to log, so several calls into one Axes combine.
    """
    use_log = _spans_decades(values) if log is None else bool(log)
    if use_log:
        ax.set_yscale("log", nonpositive="mask")
    elif log is not None:
        ax.set_yscale("linear")
    return use_log


def readable_legend(ax: Axes, title: str | None = None) -> None:
    """A legend that stays readable: small font, and outside on the right when it is long."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) > 7:
        ax.legend(fontsize="small", title=title, title_fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    else:
        ax.legend(fontsize="small", title=title, title_fontsize="small", loc="best",
                  framealpha=0.85)


def as_numpy(values: Any) -> np.ndarray:
    """A NumPy array of a Tensor, a NumPy or CuPy array, or a list (what plots are given)."""
    return B.to_numpy(values.data if isinstance(values, Tensor) else values)
