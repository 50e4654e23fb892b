"""Histograms of one parameter's values (or its gradient's) as training goes on."""
from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from ..trace import Recorder
from .common import axes_or_new, readable_legend
from .language import give_chinese_text_a_font, words


def histograms(recorder: Recorder, name: str, kind: str = "params", ax: Axes | None = None,
               cmap: str = "viridis") -> list[Artist]:
    """Histograms of one parameter's values (``kind="params"``) or its gradient's
    (``kind="grads"``) over time: one outline per kept histogram, coloured from early (dark)
    to late (yellow), with a colorbar of the optimizer step. Each outline is a density (the
    counts divided by the total and the bin width), so histograms with different bin ranges
    compare fairly.

    The recorder must keep histograms: ``Recorder(model, opt, histograms_every=5)``. They are
    kept per parameter (``"0.weight"``) even for a ``by="layer"`` recorder. A step where the
    parameter had no gradient (frozen) has no gradient histogram. Returns the outlines.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=10, histograms_every=3)
    >>> outlines = plot.histograms(rec, "0.weight")
    >>> len(outlines), [h["step"] for h in rec.histograms]
    (4, [0, 3, 6, 9])
    >>> plt.close(outlines[0].figure)
    """
    if kind not in ("params", "grads"):
        raise ValueError(f"histograms: kind must be 'params' or 'grads', got {kind!r}")
    if not recorder.histograms:
        raise ValueError("histograms: the recorder kept no histograms; make it with "
                         "Recorder(model, optimizer, histograms_every=5) (every 5th record)")
    if name not in recorder.param_names:
        raise KeyError(f"histograms are kept per parameter; no {name!r}. Parameters: "
                       f"{', '.join(recorder.param_names)}")
    entries = [(h["step"], h[kind][name]) for h in recorder.histograms if name in h[kind]]
    if not entries:
        raise ValueError(f"histograms: {name!r} never had a gradient when a histogram was "
                         f"kept (was it frozen the whole time?)")
    ax = axes_or_new(ax)
    first, last = entries[0][0], entries[-1][0]
    norm = mpl.colors.Normalize(vmin=first, vmax=last if last > first else first + 1)
    colormap = mpl.colormaps[cmap]
    outlines: list[Artist] = [ax.stairs(counts / (counts.sum() * np.diff(edges)), edges, lw=1.2, alpha=0.9,
                          color=colormap(norm(step)), label=words("histogram.step", step=step))
                for step, (counts, edges) in entries]
    if len(entries) > 1:
        ax.figure.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=colormap), ax=ax,
                           label=words("step_axis"))
    else:
        readable_legend(ax)
    ax.set_xlabel(words(f"histogram.{kind}_xlabel"))
    ax.set_ylabel(words("histogram.ylabel"))
    ax.set_title(words(f"histogram.{kind}_title", name=name))
    ax.grid(True, alpha=0.3)
    give_chinese_text_a_font(ax.figure)
    return outlines
