"""Plots of a Recorder's series over the optimizer steps: norms, update ratios, clipping, loss.

Steps where a parameter was frozen (its step changed nothing) are shaded in its line's colour,
so a line that goes flat or stops can be told apart from one that merely learns slowly.
The titles and axis labels of each series are the ``plot.title.<kind>`` and
``plot.ylabel.<kind>`` texts of the i18n tables.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from ..trace import STEP_SERIES, Recorder
from .common import axes_or_new, readable_legend, set_scale
from .language import figure_language, give_chinese_text_a_font, words

_FROZEN_ALPHA = 0.13


def _names(recorder: Recorder, names: str | Iterable[str] | None) -> list[str]:
    if names is None:
        return list(recorder.names)
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in recorder.names]
    if unknown:
        raise KeyError(f"Recorder has no {recorder.by} {unknown[0]!r}; it records: "
                       f"{', '.join(recorder.names)}")
    return names


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _number(value: float) -> str:
    """``1e-3`` as ``10^-3`` (powers of ten), anything else as ``:g``. The power is mathtext
    in English; in Chinese it is Unicode (10⁻³), since mathtext cannot draw the Chinese
    characters of the same label."""
    exponent = math.log10(value) if value > 0 else math.nan
    if math.isfinite(exponent) and abs(exponent - round(exponent)) < 1e-9:
        power = int(round(exponent))
        if figure_language() == "en":
            return f"$10^{{{power}}}$"
        return "10" + str(power).translate(_SUPERSCRIPT)
    return f"{value:g}"


def _per(kind: str, recorder: Recorder) -> str:
    """The title of a per-name series: "Update norm per layer"."""
    return words("title.per", title=words(f"title.{kind}"), by=words(f"by.{recorder.by}"))


def _label_axes(ax: Axes, ylabel: str, title: str) -> None:
    """The step axis, ``ylabel`` and ``title``, and a light grid."""
    ax.set_xlabel(words("step_axis"))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)


def _record_edges(steps: np.ndarray) -> np.ndarray:
    """Boundaries between records: halfway between neighbours, half a spacing at the ends."""
    steps = np.asarray(steps, dtype=float)
    if steps.size == 0:
        return steps
    gap = float(np.median(np.diff(steps))) if steps.size > 1 else 1.0
    middle = (steps[1:] + steps[:-1]) / 2
    return np.concatenate([[steps[0] - gap / 2], middle, [steps[-1] + gap / 2]])


def _shade_frozen(ax: Axes, recorder: Recorder, names: list[str],
                  colors: list[Any]) -> list[Any]:
    """Shade the steps where each name was frozen (not updated); returns the spans.

    A record at step ``s`` covers from halfway to the previous record to halfway to the next
    one, so one frozen step between steps 3 and 5 is the band 3.5 .. 4.5. Names frozen over
    exactly the same steps (a layer's weight and bias) share one grey span labelled
    ``"frozen (0.weight, 0.bias)"``; a span of one name alone takes its line's colour.
    """
    edges = _record_edges(recorder.steps)
    runs: dict[tuple[int, int], list[int]] = {}
    for i, name in enumerate(names):
        for run in recorder.frozen_runs(name):
            runs.setdefault(run, []).append(i)
    labelled: set[tuple[int, ...]] = set()
    spans = []
    for (first, last), members in runs.items():
        key = tuple(members)
        color = colors[members[0]] if len(members) == 1 else "0.45"
        label = (words("frozen", names=words("list_sep").join(names[i] for i in members))
                 if key not in labelled else "_nolegend_")
        labelled.add(key)
        spans.append(ax.axvspan(edges[first], edges[last + 1], color=color,
                                alpha=_FROZEN_ALPHA, linewidth=0, label=label))
    return spans


def traces(recorder: Recorder, kind: str = "param_norm", names: str | Iterable[str] | None = None,
           ax: Axes | None = None, log: bool | None = None) -> list[Artist]:
    """One line per parameter (or layer) of a recorded series over the optimizer steps.

    ``kind`` is one of ``trace.PARAM_SERIES`` (``"param_norm"``, ``"grad_norm"``,
    ``"clipped_grad_norm"``, ``"update_norm"``, ``"update_ratio"``, ``"lr"``, ``"frozen"``) or
    a per-step series (``"loss"``, ``"global_grad_norm"``, ``"clip_scale"``: one line).
    ``names``: one name or a list (default: all the recorder's names). ``log``: True / False,
    or None to use a log y-axis when the values span more than two decades.

    Steps where a parameter was frozen (not updated) are shaded in its line's colour.
    Returns the lines, then the shaded spans.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=10, freeze_at=5)   # layer "0" frozen from step 5
    >>> artists = plot.traces(rec, "grad_norm", names=["0.weight", "2.weight"])
    >>> [a.get_label() for a in artists]
    ['0.weight', '2.weight', 'frozen (0.weight)']
    >>> bool((artists[0].get_ydata() == rec.series("grad_norm", "0.weight")).all())
    True
    >>> plt.close(artists[0].figure)
    """
    ax = axes_or_new(ax)
    steps = recorder.steps
    if kind in STEP_SERIES:
        values = recorder.series(kind)
        artists: list[Any] = ax.plot(steps, values, label=words(f"series.{kind}"), lw=1.6)
        title = words(f"title.{kind}")
    else:
        names = _names(recorder, names)
        values = recorder.series(kind)[:, [recorder.names.index(n) for n in names]]
        artists = [ax.plot(steps, values[:, i], label=name, lw=1.6)[0]
                   for i, name in enumerate(names)]
        if kind != "frozen":
            artists += _shade_frozen(ax, recorder, names, [a.get_color() for a in artists])
        title = _per(kind, recorder)
    set_scale(ax, values, log)
    _label_axes(ax, words(f"ylabel.{kind}"), title)
    readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return artists


def update_ratio(recorder: Recorder, names: str | Iterable[str] | None = None,
                 ax: Axes | None = None, band: tuple[float, float] = (1e-4, 1e-2),
                 reference: float = 1e-3) -> list[Artist]:
    """The update-to-parameter ratio ``||dw|| / ||w||`` of each parameter, on a log scale.

    The rule of thumb: around ``reference`` (1e-3) per step is healthy; much smaller and the
    parameter learns slowly (or is frozen: its line stops, and the steps are shaded), much
    larger and training tends to be unstable. The band (1e-4 .. 1e-2) is shaded and the
    reference drawn dashed. Returns the lines, the frozen spans, then the band and the reference.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=10)
    >>> artists = plot.update_ratio(rec)
    >>> reference = artists[-1]
    >>> reference.get_ydata()[0], reference.get_linestyle(), artists[0].axes.get_yscale()
    (0.001, '--', 'log')
    >>> plt.close(artists[0].figure)
    """
    ax = axes_or_new(ax)
    names = _names(recorder, names)
    steps = recorder.steps
    lines = [ax.plot(steps, recorder.series("update_ratio", n), label=n, lw=1.6)[0]
             for n in names]
    spans = _shade_frozen(ax, recorder, names, [line.get_color() for line in lines])
    low, high = band
    # What far outside the band means goes in the legend, not in notes on the plot, which the
    # legend or the lines could cover.
    band_patch = ax.axhspan(low, high, color="tab:green", alpha=0.10, linewidth=0,
                            label=words("ratio.band", low=_number(low), high=_number(high)))
    ref = ax.axhline(reference, color="0.25", ls="--", lw=1.2,
                     label=words("ratio.reference", value=_number(reference)))
    ax.set_yscale("log", nonpositive="mask")
    _label_axes(ax, words("ylabel.update_ratio"), _per("update_ratio", recorder))
    readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return [*lines, *spans, band_patch, ref]


def grad_norm_clipping(recorder: Recorder, name: str | None = None, ax: Axes | None = None,
                       log: bool | None = None) -> list[Artist]:
    """The gradient norm before and after the optimizer's ``grad_clip``.

    With ``name=None`` the global norm over all parameters: before is the recorder's
    ``global_grad_norm``; after is the norm of the clipped gradients (the square root of the
    sum of the squared ``clipped_grad_norm``s, which stays right when some parameters have
    ``need_clip=False``). With a name, that parameter's ``grad_norm`` and
    ``clipped_grad_norm``. What clipping removed is shaded. Only clipping done by the
    optimizer (``grad_clip=``) shows; ``clip_grad_norm_`` called by hand happens before the
    recorder sees the gradients. Returns the two lines (and the shading if anything was clipped).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import optim, plot
    >>> rec = plot.example_recorder(steps=10, grad_clip=optim.ClipGradByGlobalNorm(0.1))
    >>> before, after, *shading = plot.grad_norm_clipping(rec)
    >>> bool((after.get_ydata() <= 0.1 + 1e-6).all()), bool((before.get_ydata() > 0.1).any())
    (True, True)
    >>> plt.close(before.figure)
    """
    ax = axes_or_new(ax)
    steps = recorder.steps
    if name is None:
        before = recorder.series("global_grad_norm")
        clipped = recorder.series("clipped_grad_norm")
        after = np.sqrt(np.nansum(clipped * clipped, axis=1)) if clipped.size else before.copy()
        what = words("clip.global")
    else:
        _names(recorder, name)
        before = recorder.series("grad_norm", name)
        after = recorder.series("clipped_grad_norm", name)
        what = name
    line_before = ax.plot(steps, before, color="tab:red", lw=1.6, label=words("clip.before"))[0]
    line_after = ax.plot(steps, after, color="tab:blue", lw=1.6, ls="--",
                         label=words("clip.after"))[0]
    artists: list[Any] = [line_before, line_after]
    clipped_mask = np.isfinite(before) & (before > after * (1 + 1e-9))
    if clipped_mask.any():
        artists.append(ax.fill_between(steps, after, before, where=clipped_mask, step=None,
                                       interpolate=True, color="tab:red", alpha=0.12,
                                       linewidth=0, label=words("clip.removed")))
    set_scale(ax, np.concatenate([before, after]), log)
    _label_axes(ax, words("clip.ylabel"), words("clip.title", what=what))
    readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return artists


def _ema(values: np.ndarray, smooth: float) -> np.ndarray:
    """Debiased exponential moving average over the finite values (NaN elsewhere)."""
    out = np.full(values.shape, np.nan)
    avg, weight = 0.0, 0.0
    for i, v in enumerate(values):
        if not np.isfinite(v):
            continue
        avg = smooth * avg + (1 - smooth) * v
        weight = smooth * weight + (1 - smooth)
        out[i] = avg / weight
    return out


def loss(recorder: Recorder, ax: Axes | None = None, smooth: float = 0.0,
         log: bool | None = None) -> list[Artist]:
    """The recorded loss over the optimizer steps (give it with ``recorder.log_loss(loss)``).

    ``smooth`` in [0, 1): with e.g. 0.9, also draw an exponential moving average
    (``avg = smooth * avg + (1 - smooth) * loss``, debiased at the start, as TensorBoard does)
    over a fainter raw curve. Returns the raw line (and the smoothed one).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=10)
    >>> raw, smoothed = plot.loss(rec, smooth=0.8)
    >>> bool((raw.get_ydata() == rec.series("loss")).all()), smoothed.get_label()
    (True, 'moving average (smooth=0.8)')
    >>> plt.close(raw.figure)
    """
    if not 0 <= smooth < 1:
        raise ValueError(f"loss: smooth must be in [0, 1) (e.g. 0.9), got {smooth}")
    values = recorder.series("loss")
    if values.size and np.isnan(values).all():
        raise ValueError("loss: the recorder has no loss values; call recorder.log_loss(loss) "
                         "before opt.step() in your training loop")
    ax = axes_or_new(ax)
    steps = recorder.steps
    artists: list[Artist] = []
    if smooth:
        artists += ax.plot(steps, values, color="tab:blue", alpha=0.3, lw=1.0,
                          label=words("loss.label"))
        artists += ax.plot(steps, _ema(values, smooth), color="tab:blue", lw=2.0,
                           label=words("loss.smoothed", smooth=smooth))
    else:
        artists += ax.plot(steps, values, color="tab:blue", lw=1.6, label=words("loss.label"))
    set_scale(ax, values, log)
    _label_axes(ax, words("loss.ylabel"), words("title.loss"))
    if smooth:
        readable_legend(ax)
    give_chinese_text_a_font(ax.figure)
    return artists
