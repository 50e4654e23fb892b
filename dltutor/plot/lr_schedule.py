"""A learning-rate schedule drawn as the lr each ``scheduler.step()`` gives."""
from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from ..optim.lr_scheduler import preview
from .common import axes_or_new, readable_legend, set_scale, as_numpy
from .language import give_chinese_text_a_font, words


def lr_schedule(lrs_or_make_scheduler: Any, steps: int | None = None, ax: Axes | None = None,
                label: str | None = None, lr: float = 0.1, log: bool | None = False) -> list[Artist]:
    """Draw a learning-rate schedule as a step plot: the lr each ``scheduler.step()`` gives.

    Give either the lrs (a list or array, e.g. from ``lr_scheduler.preview``), or a function
    ``make_scheduler(optimizer)`` and ``steps``: it is run on a throwaway optimizer of lr ``lr``
    by :func:`~dltutor.optim.lr_scheduler.preview`. Step ``t`` is drawn from ``t`` to ``t + 1``.
    Call it several times with ``label=`` on one Axes to compare schedules.
    Returns the drawn step outline (a ``StepPatch``; ``get_data().values`` are the lrs).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> from dltutor.optim.lr_scheduler import StepLR
    >>> [stairs] = plot.lr_schedule(lambda opt: StepLR(opt, step_size=2, gamma=0.5), steps=5)
    >>> stairs.get_data().values.tolist()
    [0.1, 0.1, 0.05, 0.05, 0.025]
    >>> plt.close(stairs.figure)
    """
    if callable(lrs_or_make_scheduler):
        if steps is None:
            raise TypeError("lr_schedule: with a make_scheduler function give steps=..., e.g. "
                            "plot.lr_schedule(lambda opt: StepLR(opt, step_size=10), steps=50)")
        lrs = preview(lrs_or_make_scheduler, steps, lr)
    else:
        lrs = as_numpy(lrs_or_make_scheduler).astype(float).ravel()
        if steps is not None:
            lrs = lrs[:steps]
    ax = axes_or_new(ax)
    stairs = ax.stairs(lrs, np.arange(len(lrs) + 1), baseline=None, lw=2.0, label=label)
    set_scale(ax, lrs, log)
    ax.set_xlabel(words("schedule.xlabel"))
    ax.set_ylabel(words("schedule.ylabel"))
    ax.set_title(words("schedule.title"))
    ax.grid(True, alpha=0.3)
    if label is not None:
        readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return [stairs]
