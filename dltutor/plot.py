"""Plots for the chapters and the lab: traces of a training run, lr schedules, init statistics.

Every drawing function takes ``ax=None``: give it a matplotlib ``Axes`` to draw into one panel
of your own figure, or leave it out and it makes a new figure of a sensible size. It returns
what it drew (lines, patches, ...) so you can check the numbers or restyle them, and it never
changes matplotlib's global style, never calls ``plt.show()`` (Jupyter shows the figure) and
never picks a backend. The statistics behind :func:`layer_statistics`
(:func:`activation_stats`, :func:`gradient_stats`) need no matplotlib at all; this module
imports matplotlib only when something is drawn.

=============================  ==================================================================
:func:`traces`                 one recorded series (norms, ratios, lr, ...) per parameter or layer
:func:`update_ratio`           ``||dw|| / ||w||`` against the 1e-3 rule of thumb
:func:`grad_norm_clipping`     gradient norm before and after clipping
:func:`loss`                   the loss curve, optionally smoothed
:func:`lr_schedule`            a learning-rate schedule, step by step
:func:`layer_statistics`       std of each layer's output (or its gradient) through a network
:func:`histograms`             parameter or gradient histograms over time
:func:`decision_boundary`      a classifier's regions on a 2-D toy data set
=============================  ==================================================================

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
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from . import backend as B
from .autograd.creation import tensor as _tensor
from .autograd.tensor import Tensor, no_grad
from .trace import STEP_SERIES

if TYPE_CHECKING:  # pragma: no cover - only for type checkers
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

    from .nn import Module
    from .trace import Recorder

__all__ = [
    "traces",
    "update_ratio",
    "grad_norm_clipping",
    "loss",
    "lr_schedule",
    "activation_stats",
    "gradient_stats",
    "layer_statistics",
    "histograms",
    "decision_boundary",
    "example_recorder",
]

#: Axis labels of the recorded series (mathtext: renders the same with every font).
YLABELS = {
    "param_norm": r"parameter norm $\|w\|_2$",
    "grad_norm": r"gradient norm $\|\nabla w\|_2$",
    "clipped_grad_norm": r"gradient norm after clipping $\|\nabla w\|_2$",
    "update_norm": r"update norm $\|\Delta w\|_2$",
    "update_ratio": r"update ratio $\|\Delta w\|_2 \,/\, \|w\|_2$",
    "lr": "effective learning rate (group lr × lr_mult)",
    "frozen": "frozen (1 = not updated this step)",
    "loss": "loss",
    "global_grad_norm": r"global gradient norm $\|\nabla\|_2$ (all parameters)",
    "clip_scale": "clip scale (after / before; 1 = not clipped)",
}
_TITLES = {
    "param_norm": "Parameter norm",
    "grad_norm": "Gradient norm",
    "clipped_grad_norm": "Gradient norm after clipping",
    "update_norm": "Update norm",
    "update_ratio": "Update / parameter ratio",
    "lr": "Effective learning rate",
    "frozen": "Frozen parameters",
    "loss": "Training loss",
    "global_grad_norm": "Global gradient norm",
    "clip_scale": "Clip scale",
}
STEP_LABEL = "optimizer step"
#: Log scale is chosen automatically when the positive values span more than this many decades.
LOG_DECADES = 2.0
_FROZEN_ALPHA = 0.13


# =============================================================================================
# Small helpers
# =============================================================================================
def _pyplot() -> Any:
    import matplotlib.pyplot as plt

    return plt


def _axes(ax: Axes | None, figsize: tuple[float, float] = (7.0, 4.0)) -> Axes:
    """``ax`` itself, or the axes of a new figure (constrained layout: labels never overlap)."""
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def _spans_decades(values: Any, decades: float = LOG_DECADES) -> bool:
    """True when the positive, finite values span more than ``decades`` powers of ten."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    return v.size >= 2 and math.log10(v.max() / v.min()) > decades


def _set_scale(ax: Axes, values: Any, log: bool | None) -> bool:
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


def _names(recorder: Recorder, names: str | Iterable[str] | None) -> list[str]:
    if names is None:
        return list(recorder.names)
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in recorder.names]
    if unknown:
        raise KeyError(f"Recorder has no {recorder.by} {unknown[0]!r}; it records: "
                       f"{', '.join(recorder.names)}")
    return names


def _legend(ax: Axes, title: str | None = None) -> None:
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


def _number(value: float) -> str:
    """``1e-3`` as mathtext ``10^-3`` (powers of ten), anything else as ``:g``."""
    exponent = math.log10(value) if value > 0 else math.nan
    if math.isfinite(exponent) and abs(exponent - round(exponent)) < 1e-9:
        return f"$10^{{{int(round(exponent))}}}$"
    return f"{value:g}"


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges ``(first, last)`` of the contiguous True runs of ``mask``."""
    runs, start = [], None
    for i, flag in enumerate(mask):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i - 1))
            start = None
    if start is not None:
        runs.append((start, len(mask) - 1))
    return runs


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
        for run in _runs(recorder.series("frozen", name) == 1.0):
            runs.setdefault(run, []).append(i)
    labelled: set[tuple[int, ...]] = set()
    spans = []
    for (first, last), members in runs.items():
        key = tuple(members)
        color = colors[members[0]] if len(members) == 1 else "0.45"
        label = (f"frozen ({', '.join(names[i] for i in members)})" if key not in labelled
                 else "_nolegend_")
        labelled.add(key)
        spans.append(ax.axvspan(edges[first], edges[last + 1], color=color,
                                alpha=_FROZEN_ALPHA, linewidth=0, label=label))
    return spans


def _to_numpy(values: Any) -> np.ndarray:
    if isinstance(values, Tensor):
        values = values.data
    return B.to_numpy(values) if B.backend_of(values) is not None else np.asarray(values)


def _first_param(model: Module) -> Any:
    return next(iter(model.parameters()), None)


def _model_input(model: Module, x: Any, requires_grad: bool = False) -> Tensor:
    """``x`` as a fresh tensor on the model's device, with the model's float dtype."""
    data = x.data if isinstance(x, Tensor) else x
    array = np.asarray(B.to_numpy(data) if B.backend_of(data) is not None else data)
    param = _first_param(model)
    if param is not None and array.dtype.kind == "f":
        array = array.astype(param.dtype, copy=False)
    if param is not None and param.device != "cpu":
        return _tensor(_tensor(array).to(param.device).data, requires_grad=requires_grad)
    return _tensor(array, requires_grad=requires_grad)


# =============================================================================================
# Recorder plots
# =============================================================================================
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
    ax = _axes(ax)
    steps = recorder.steps
    if kind in STEP_SERIES:
        values = recorder.series(kind)
        artists: list[Any] = ax.plot(steps, values, label=kind.replace("_", " "), lw=1.6)
        title = _TITLES[kind]
    else:
        names = _names(recorder, names)
        values = recorder.series(kind)[:, [recorder.names.index(n) for n in names]]
        artists = [ax.plot(steps, values[:, i], label=name, lw=1.6)[0]
                   for i, name in enumerate(names)]
        if kind != "frozen":
            artists += _shade_frozen(ax, recorder, names, [a.get_color() for a in artists])
        title = f"{_TITLES.get(kind, kind)} per {recorder.by}"
    _set_scale(ax, values, log)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(YLABELS.get(kind, kind))
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    _legend(ax)
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
    ax = _axes(ax)
    names = _names(recorder, names)
    steps = recorder.steps
    lines = [ax.plot(steps, recorder.series("update_ratio", n), label=n, lw=1.6)[0]
             for n in names]
    spans = _shade_frozen(ax, recorder, names, [line.get_color() for line in lines])
    low, high = band
    band_patch = ax.axhspan(low, high, color="tab:green", alpha=0.10, linewidth=0,
                            label=f"typical range {_number(low)} – {_number(high)}")
    ref = ax.axhline(reference, color="0.25", ls="--", lw=1.2,
                     label=f"rule of thumb {_number(reference)}")
    ax.set_yscale("log", nonpositive="mask")
    note = dict(transform=ax.get_yaxis_transform(), ha="right", fontsize="x-small",
                color="0.25", bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none",
                                        alpha=0.75))
    ax.text(0.99, high / 1.2, "↑ far above: unstable?", va="top", **note)
    ax.text(0.99, low * 1.2, "↓ far below: learning slowly", va="bottom", **note)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(YLABELS["update_ratio"])
    ax.set_title(f"Update / parameter ratio per {recorder.by}")
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax)
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
    ax = _axes(ax)
    steps = recorder.steps
    if name is None:
        before = recorder.series("global_grad_norm")
        clipped = recorder.series("clipped_grad_norm")
        after = np.sqrt(np.nansum(clipped * clipped, axis=1)) if clipped.size else before.copy()
        what = "global (all parameters)"
    else:
        _names(recorder, name)
        before = recorder.series("grad_norm", name)
        after = recorder.series("clipped_grad_norm", name)
        what = name
    line_before = ax.plot(steps, before, color="tab:red", lw=1.6, label="before clipping")[0]
    line_after = ax.plot(steps, after, color="tab:blue", lw=1.6, ls="--",
                         label="after clipping")[0]
    artists: list[Any] = [line_before, line_after]
    clipped_mask = np.isfinite(before) & (before > after * (1 + 1e-9))
    if clipped_mask.any():
        artists.append(ax.fill_between(steps, after, before, where=clipped_mask, step=None,
                                       interpolate=True, color="tab:red", alpha=0.12,
                                       linewidth=0, label="clipped away"))
    _set_scale(ax, np.concatenate([before, after]), log)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(r"gradient norm $\|\nabla\|_2$")
    ax.set_title(f"Gradient norm before and after clipping: {what}")
    ax.grid(True, alpha=0.3)
    _legend(ax)
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
    ax = _axes(ax)
    steps = recorder.steps
    if smooth:
        artists = ax.plot(steps, values, color="tab:blue", alpha=0.3, lw=1.0, label="loss")
        artists += ax.plot(steps, _ema(values, smooth), color="tab:blue", lw=2.0,
                           label=f"moving average (smooth={smooth:g})")
    else:
        artists = ax.plot(steps, values, color="tab:blue", lw=1.6, label="loss")
    _set_scale(ax, values, log)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel("loss (of the mini-batch)")
    ax.set_title(_TITLES["loss"])
    ax.grid(True, alpha=0.3)
    if smooth:
        _legend(ax)
    return artists


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
    from .optim.lr_scheduler import preview

    if callable(lrs_or_make_scheduler):
        if steps is None:
            raise TypeError("lr_schedule: with a make_scheduler function give steps=..., e.g. "
                            "plot.lr_schedule(lambda opt: StepLR(opt, step_size=10), steps=50)")
        lrs = preview(lrs_or_make_scheduler, steps, lr)
    else:
        lrs = _to_numpy(lrs_or_make_scheduler).astype(float).ravel()
        if steps is not None:
            lrs = lrs[:steps]
    ax = _axes(ax)
    stairs = ax.stairs(lrs, np.arange(len(lrs) + 1), baseline=None, lw=2.0, label=label)
    _set_scale(ax, lrs, log)
    ax.set_xlabel("scheduler step (each scheduler.step(): an epoch or a batch)")
    ax.set_ylabel("learning rate")
    ax.set_title("Learning-rate schedule")
    ax.grid(True, alpha=0.3)
    if label is not None:
        _legend(ax)
    return [stairs]


# =============================================================================================
# Initialization statistics (I8)
# =============================================================================================
def _layer_pass(model: Module, x: Any, gradient: bool,
                loss_fn: Callable[[Tensor], Tensor] | None) -> list[tuple[str, np.ndarray]]:
    """Arrays per direct child of ``model``, in the order they ran: outputs, or the
    gradients of the loss w.r.t. the outputs. Hooks are removed and parameter gradients
    restored before returning."""
    names = {id(m): n for n, m in model.named_children()}
    if not names:
        raise ValueError(f"layer statistics need a model with layers (children), e.g. "
                         f"nn.Sequential(...); {type(model).__name__} has none")
    order: list[str] = []
    arrays: dict[int, np.ndarray] = {}
    tensor_handles: list[Any] = []

    def forward_hook(module: Any, inputs: tuple, output: Any) -> None:
        index = len(order)
        order.append(names[id(module)])
        if not gradient:
            arrays[index] = _to_numpy(output)
        elif isinstance(output, Tensor) and output.requires_grad:
            def grad_hook(grad: Any, index: int = index) -> None:
                arrays[index] = _to_numpy(grad)
            tensor_handles.append(output.register_hook(grad_hook))

    handles = [m.register_forward_hook(forward_hook) for _, m in model.named_children()]
    # backward adds into existing gradients (replacing their .data): keep both to restore
    saved_grads = [(p, p.grad, None if p.grad is None else p.grad.data)
                   for p in model.parameters()]
    try:
        if gradient:
            out = model(_model_input(model, x, requires_grad=True))
            target = loss_fn(out) if loss_fn is not None else out.sum()
            target.backward()
        else:
            with no_grad():
                model(_model_input(model, x))
    finally:
        for handle in handles + tensor_handles:
            handle.remove()
        for p, grad, data in saved_grads:
            if grad is not None:
                grad.data = data
            p.grad = grad
    return [(name, arrays.get(i, np.array([np.nan]))) for i, name in enumerate(order)]


def _stats(pairs: list[tuple[str, np.ndarray]]) -> list[tuple[str, float, float]]:
    return [(name, float(np.mean(a)), float(np.std(a))) for name, a in pairs]


def activation_stats(model: Module, x: Any) -> list[tuple[str, float, float]]:
    """``(name, mean, std)`` of the output of each layer (direct child) of ``model`` on ``x``.

    One forward pass under ``no_grad()`` with forward hooks, in the order the layers ran (a
    layer used twice appears twice); the hooks are removed afterwards. The std is NumPy's
    (``np.std``, over every element of the batch). Needs no matplotlib.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> from dltutor.plot import activation_stats
    >>> _ = dt.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(100, 100), nn.Tanh(), nn.Linear(100, 100), nn.Tanh())
    >>> [(name, round(std, 2)) for name, mean, std in activation_stats(net, dt.randn(256, 100))]
    [('0', 0.58), ('1', 0.46), ('2', 0.27), ('3', 0.26)]
    """
    return _stats(_layer_pass(model, x, gradient=False, loss_fn=None))


def gradient_stats(model: Module, x: Any, loss_fn: Callable[[Tensor], Tensor] | None = None
                   ) -> list[tuple[str, float, float]]:
    """``(name, mean, std)`` of the gradient with respect to each layer's OUTPUT.

    Runs ``model(x)``, then backward of ``loss_fn(output)`` (default: ``output.sum()``), with
    a gradient hook on every layer's output tensor. This is the signal that flows back
    through the network: if it shrinks layer by layer the early layers barely learn. With the
    default ``output.sum()`` the gradient w.r.t. the last output is all ones (std 0), so every
    change of scale you see comes from the backward pass itself. The model's parameter
    gradients are left as they were, and all hooks are removed.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> from dltutor.plot import gradient_stats
    >>> _ = dt.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1))
    >>> stats = gradient_stats(net, dt.randn(32, 10))
    >>> [name for name, mean, std in stats], stats[-1][2]      # d(sum)/d(output) is all ones
    (['0', '1', '2'], 0.0)
    >>> net[0].weight.grad is None
    True
    """
    return _stats(_layer_pass(model, x, gradient=True, loss_fn=loss_fn))


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
    ax = _axes(ax, figsize=(max(6.0, 0.55 * len(stats) + 2.0), 4.0))
    stds = np.array([std for _, _, std in stats])
    positions = np.arange(len(stats))
    ax.plot(positions, stds, marker="o", lw=1.6, label=label)
    ax.set_xticks(positions, [f"{n}\n{type(modules[n]).__name__}" for n, _, _ in stats],
                  fontsize="small" if len(stats) <= 10 else "x-small")
    _set_scale(ax, stds, log)
    if kind == "activation":
        ax.set_ylabel("std of the layer's output")
        ax.set_title("Activation scale through the network")
    else:
        ax.set_ylabel("std of the gradient w.r.t. the layer's output")
        ax.set_title("Gradient scale through the network")
    ax.set_xlabel("layer (in forward order)" if kind == "activation" else
                  "layer (in forward order; backward runs right to left)")
    ax.grid(True, alpha=0.3)
    if label is not None:
        _legend(ax)
    return [(n, s) for n, _, s in stats]


# =============================================================================================
# Histograms and decision boundaries
# =============================================================================================
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
    known = recorder.histograms[-1]["params"]
    if name not in known:
        raise KeyError(f"histograms are kept per parameter; no {name!r}. Parameters: "
                       f"{', '.join(known)}")
    entries = [(h["step"], h[kind][name]) for h in recorder.histograms if name in h[kind]]
    if not entries:
        raise ValueError(f"histograms: {name!r} never had a gradient when a histogram was "
                         f"kept (was it frozen the whole time?)")
    import matplotlib as mpl

    ax = _axes(ax)
    first, last = entries[0][0], entries[-1][0]
    norm = mpl.colors.Normalize(vmin=first, vmax=last if last > first else first + 1)
    colormap = mpl.colormaps[cmap]
    outlines = [ax.stairs(counts / (counts.sum() * np.diff(edges)), edges, lw=1.2, alpha=0.9,
                          color=colormap(norm(step)), label=f"step {step}")
                for step, (counts, edges) in entries]
    if len(entries) > 1:
        ax.figure.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=colormap), ax=ax,
                           label=STEP_LABEL)
    else:
        _legend(ax)
    what = "parameter" if kind == "params" else "gradient"
    ax.set_xlabel(f"{what} value")
    ax.set_ylabel("density (area 1)")
    ax.set_title(f"Histogram of {name}" + (" gradient" if kind == "grads" else "")
                 + " over training")
    ax.grid(True, alpha=0.3)
    return outlines


def decision_boundary(model: Module, X: Any, y: Any, ax: Axes | None = None,
                      resolution: int = 200, padding: float = 0.5) -> list[Artist]:
    """A classifier's decision regions on 2-D data, with the points coloured by class.

    Evaluates ``model`` on a ``resolution`` x ``resolution`` grid that covers ``X`` plus
    ``padding`` on every side, under ``no_grad()`` in ``eval()`` mode (each module's training
    flag is restored afterwards). The predicted class is the argmax of the logits (or
    ``logit > 0`` for a single output). The title gives the accuracy on the points shown.
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
    X_np, y_np = _to_numpy(X), _to_numpy(y).ravel()
    if X_np.ndim != 2 or X_np.shape[1] != 2:
        raise ValueError(f"decision_boundary: X must have shape (n, 2) (two features to plot), "
                         f"got {X_np.shape}")
    if len(y_np) != len(X_np):
        raise ValueError(f"decision_boundary: X has {len(X_np)} rows but y has {len(y_np)}")
    lo, hi = X_np.min(axis=0) - padding, X_np.max(axis=0) + padding
    xs, ys = np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution)
    xx, yy = np.meshgrid(xs, ys)
    grid = np.column_stack([xx.ravel(), yy.ravel()]).astype(np.float32)

    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        with no_grad():
            def predict(points: np.ndarray) -> np.ndarray:
                chunks = []
                for start in range(0, len(points), 8192):
                    out = _to_numpy(model(_model_input(model, points[start:start + 8192])))
                    out = out.reshape(len(out), -1)
                    chunks.append(out.argmax(axis=1) if out.shape[1] > 1 else
                                  (out[:, 0] > 0).astype(np.int64))
                return np.concatenate(chunks)

            Z = predict(grid).reshape(xx.shape)
            accuracy = float((predict(X_np.astype(np.float32)) == y_np).mean())
    finally:
        for module, mode in modes:
            module.training = mode

    import matplotlib as mpl

    classes = int(max(Z.max(), y_np.max()) + 1)
    palette = [mpl.colormaps["tab10"](i % 10) for i in range(classes)]
    ax = _axes(ax, figsize=(6.0, 4.5))
    contour = ax.contourf(xx, yy, Z, levels=np.arange(classes + 1) - 0.5,
                          colors=palette, alpha=0.25)
    scatters = [ax.scatter(X_np[y_np == c, 0], X_np[y_np == c, 1], s=18, color=palette[c],
                           edgecolors="white", linewidths=0.5, label=f"class {c}")
                for c in range(classes) if (y_np == c).any()]
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel("feature 0")
    ax.set_ylabel("feature 1")
    ax.set_title(f"Decision boundary (accuracy on these points: {accuracy:.1%})")
    _legend(ax)
    return [contour, *scatters]


# =============================================================================================
# A run to try the plots on
# =============================================================================================
def example_recorder(steps: int = 40, freeze_at: int | None = None, grad_clip: Any = None,
                     histograms_every: int = 0, lr: float = 0.5, seed: int = 0) -> Recorder:
    """A :class:`~dltutor.trace.Recorder` of a short real run, to try the plots on.

    A 2-16-16-2 tanh MLP learns the moons data (full batch, SGD with momentum 0.9, ``lr``);
    from step ``freeze_at`` its first layer ``"0"`` is frozen with ``requires_grad_(False)``.
    ``grad_clip`` goes to the optimizer; ``histograms_every`` to the recorder.

    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=5, freeze_at=3)
    >>> rec.steps.tolist(), rec.series("frozen", "0.weight").tolist()
    ([0, 1, 2, 3, 4], [0.0, 0.0, 0.0, 1.0, 1.0])
    """
    import dltutor as dt
    from dltutor import nn, optim
    from dltutor.data import make_moons
    from dltutor.nn import functional as F
    from dltutor.trace import Recorder

    dt.manual_seed(seed)
    X, y = make_moons(n=200, noise=0.15, seed=seed)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                        nn.Linear(16, 2))
    opt = optim.SGD(net.parameters(), lr=lr, momentum=0.9, grad_clip=grad_clip)
    rec = Recorder(net, opt, histograms_every=histograms_every)
    xb, yb = dt.tensor(X), dt.tensor(y)
    for step in range(steps):
        if step == freeze_at:
            net[0].requires_grad_(False)
        opt.zero_grad()
        value = F.cross_entropy(net(xb), yb)
        value.backward()
        rec.log_loss(value)
        opt.step()
    return rec
