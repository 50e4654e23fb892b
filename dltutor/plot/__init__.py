"""Plots for the chapters and the lab: traces of a training run, lr schedules, init statistics.

Every drawing function takes ``ax=None``: give it a matplotlib ``Axes`` to draw into one panel
of your own figure, or leave it out and it makes a new figure of a sensible size. It returns
what it drew (lines, patches, ...) so you can check the numbers or restyle them, and it never
changes matplotlib's global style, never calls ``plt.show()`` (Jupyter shows the figure) and
never picks a backend. The numbers behind :func:`layer_statistics` come from
:mod:`dltutor.stats`, which needs no matplotlib.

=============================  ==================================================================
:func:`traces`                 one recorded series (norms, ratios, lr, ...) per parameter or layer
:func:`update_ratio`           ``||dw|| / ||w||`` against the 1e-3 rule of thumb
:func:`grad_norm_clipping`     gradient norm before and after clipping
:func:`loss`                   the loss curve, optionally smoothed
:func:`lr_schedule`            a learning-rate schedule, step by step
:func:`layer_statistics`       std of each layer's output (or its gradient) through a network
:func:`histograms`             parameter or gradient histograms over time
:func:`decision_boundary`      a classifier's regions on a 2-D toy data set
:func:`example_recorder`       a short recorded run to try them on
:func:`show`                   ``plt.show()``, with your own figure's words in the kit's language
=============================  ==================================================================

The first four live in ``traces.py`` (they all read a Recorder's series), the others in a
file named after them; ``common.py`` has what they share (new Axes, log scale, legend).

Their titles, labels and legends speak the kit's language (``dt.set_language("zh")``): the
words come from the i18n tables, and ``language.py`` finds an installed font that draws
Chinese (Noto Sans CJK SC, Microsoft YaHei, PingFang SC, ...) without touching your
rcParams. Without one, the figures stay English and a warning says which font to install.
A figure you draw yourself with matplotlib (``ax.set_title(...)``) is English; ending its cell
with ``plot.show()`` instead of ``plt.show()`` puts its texts through the same tables (the
chapters' figure words are in ``dltutor/i18n/zh_figures.py``), so the Chinese edition shows them
in Chinese.

Typical use, after training with a :class:`~dltutor.trace.Recorder` attached:

>>> import matplotlib; matplotlib.use("Agg")     # only needed outside Jupyter
>>> import matplotlib.pyplot as plt
>>> from dltutor import plot
>>> rec = plot.example_recorder()                # a short real run on the moons data
>>> fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), layout="constrained")
>>> lines = plot.traces(rec, "grad_norm", ax=axes[0])
>>> lines = plot.update_ratio(rec, ax=axes[1])
>>> plt.close(fig)
"""
from .common import LOG_DECADES as LOG_DECADES  # re-exported: a setting, not a drawing
from .decision_boundary import decision_boundary
from .example import example_recorder
from .histograms import histograms
from .layer_statistics import layer_statistics
from .lr_schedule import lr_schedule
from .show import show
from .traces import grad_norm_clipping, loss, traces, update_ratio

__all__ = [
    "traces",
    "update_ratio",
    "grad_norm_clipping",
    "loss",
    "lr_schedule",
    "layer_statistics",
    "histograms",
    "decision_boundary",
    "example_recorder",
    "show",
]
