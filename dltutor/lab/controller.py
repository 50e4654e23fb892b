"""TrainingLab: a training loop you can steer while it runs (no widgets in this file).

The lab owns the loop — ``step(n)``, ``run(steps)``, ``reset()`` — and live controls that take
effect at the next step: ``freeze(layer)``, ``set_lr_mult(layer, value)``,
``set_clip(mode, threshold)`` and ``set_lr(value)``. A bad value raises a clear error and
changes nothing. The lab does one thing at a time: ``step``, ``run`` or ``reset`` called while
it is training (from a hook, the loss function or another thread) is refused with a
:class:`LabError`, and the training under way goes on unchanged. A
:class:`~dltutor.trace.Recorder` traces every step, so plots (and the widget view in
``dltutor.lab.widgets``) can show what each control did.

>>> from dltutor.lab import demos
>>> lab = demos.moons_mlp()
>>> lab.layers
['0', '2', '4']
>>> lab.step(5)
>>> lab.freeze("0")
>>> lab.step(5)
>>> lab.state()["layers"][0]["frozen"], lab.steps_done
(True, 10)
"""
from __future__ import annotations

import contextlib
import copy
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .. import backend as B
from .. import checks
from ..i18n import text
from ..nn import Parameter
from ..optim import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from ..trace import Recorder
from .errors import LabError, check_control, error_text
from .parts import accuracy, as_loader, check_parts, plain_state

CLIP_MODES = {None: None, "value": ClipGradByValue, "norm": ClipGradByNorm,
              "global_norm": ClipGradByGlobalNorm}


# The controller never imports its view: the view (dltutor.lab.widgets) imports the controller,
# so importing it back would make a cycle, and the controller must work without ipywidgets.
# Instead the package, which knows both, tells the controller how to show a lab:
# dltutor/lab/__init__.py calls set_show_view once. lab.show() calls what it set.
_show_view: Callable[[TrainingLab], Any] | None = None


def set_show_view(show_view: Callable[[TrainingLab], Any] | None) -> Callable | None:
    """Make ``lab.show()`` return ``show_view(lab)``; returns the function it replaces.

    >>> from dltutor.lab import demos
    >>> before = set_show_view(lambda lab: f"a view of {lab.name}")
    >>> demos.moons_mlp().show()
    'a view of moons MLP'
    >>> _ = set_show_view(before)          # the widget view again
    """
    global _show_view
    previous, _show_view = _show_view, show_view
    return previous


class TrainingLab:
    """A model, its optimizer, a loss and data, trained step by step under live control.

    ``data`` is a ``DataLoader``, or a pair of arrays ``(X, y)`` (then ``batch_size`` and
    ``seed`` make the loader; ``batch_size=None`` trains on the whole set each step).
    ``loss_fn(output, target)`` returns the loss tensor. ``recorder`` defaults to a per-layer
    Recorder. ``X``/``y`` are kept (as NumPy) for plots such as the decision boundary.
    ``pace`` is the speed the live view starts at, in steps per second (None: as fast as it
    goes); the demos choose one at which a run takes about half a minute, so you can watch it.
    ``watch`` maps a name to a function of no arguments returning a number that the view shows
    beside the loss (e.g. the accuracy on a task the network learned before).
    ``clip_default`` is the threshold the view's clip slider starts at: a demo picks one below
    its usual gradient norm, so that switching clipping on visibly clips.
    ``name`` names the lab (in its repr, and a name has one live view at a time); ``title`` is
    what the view shows beside the buttons (the name unless given; a demo's is in the kit's
    language).
    """

    def __init__(self, model: Any, optimizer: Any, loss_fn: Callable, data: Any,
                 recorder: Recorder | None = None, batch_size: int | None = None,
                 seed: int = 0, name: str = "lab", pace: float | None = None,
                 watch: dict[str, Callable[[], float]] | None = None, clip_default: float = 1.0,
                 title: str | None = None):
        check_parts(model, optimizer, loss_fn)
        watch = dict(watch or {})
        for label, fn in watch.items():
            if not isinstance(label, str) or not callable(fn):
                raise LabError(f"watch maps names to functions of no arguments; got {label!r}: "
                               f"{type(fn).__name__}")
        self.watch = watch
        if pace is not None:
            checks.positive("TrainingLab", "pace", pace,
                            hint="steps per second, or None for as fast as it goes")
        self.pace = pace
        checks.positive("TrainingLab", "clip_default", clip_default,
                        hint="the clip threshold the view starts at")
        self.clip_default = float(clip_default)
        self.model, self.optimizer, self.loss_fn, self.name = model, optimizer, loss_fn, name
        self.title = name if title is None else title
        self.loader, self.X, self.y = as_loader(data, batch_size, seed)
        self.recorder = recorder if recorder is not None else Recorder(
            model, optimizer, by="layer", capacity=5000)
        self.layers = [name for name, module in model.named_modules()
                       if list(module.parameters(recurse=False))]   # holds parameters itself
        self._modules = dict(model.named_modules())
        self.steps_done = 0
        self.last_loss = math.nan
        self.error: BaseException | None = None
        self._batches = iter(())
        # Held while steps run: a second step(), run() or reset() meanwhile (from a hook, the
        # loss function or another thread) is refused instead of interleaving with this one.
        self._busy = threading.Lock()
        # Everything reset() needs: values, optimizer state and the lr of every group.
        self._initial_model = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        self._initial_optimizer = copy.deepcopy(plain_state(optimizer.state_dict()))
        self._initial_lrs = [group["lr"] for group in optimizer.param_groups]
        self.base_lr = self._initial_lrs[0]
        # The controls changed so far, as (step, control, what): the plots mark each one at
        # its step, and a label can show a control's latest value (see ``marks``).
        self._marks: list[tuple[int, str, str]] = []

    # -- running ---------------------------------------------------------------------------------
    def _next_batch(self) -> tuple:
        try:
            return next(self._batches)
        except StopIteration:
            self._batches = iter(self.loader)
            return next(self._batches)

    def _one_step(self) -> float:
        inputs, target = self._next_batch()
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.model(inputs), target)
        value = float(loss.item())
        if not math.isfinite(value):
            raise FloatingPointError(text("lab.error.loss_not_finite", value=value,
                                          step=self.steps_done))
        loss.backward()
        self.recorder.log_loss(value)
        self.optimizer.step()
        self.steps_done += 1
        self.last_loss = value
        return value

    def step(self, n: int = 1) -> None:
        """Train ``n`` steps (an integer >= 0). An error stops the steps, is kept in
        ``lab.error`` and raised.

        Refused with a :class:`LabError`, changing nothing: a count that is not an integer
        >= 0, a lab stopped by an error (``reset()`` first), and a call made while the lab is
        already training (from a hook or the loss function inside a step, or from a second
        thread): the steps under way go on as if it had not been made.
        """
        n = _count("step", "n", n)
        with self._exclusive("step"):
            self._train(n)

    def run(self, steps: int) -> bool:
        """Train ``steps`` steps; returns False (and keeps ``lab.error``) if a step failed.

        A bad count, or a call while the lab is already training, is refused with a
        :class:`LabError` as in :meth:`step` (raised, not returned: it is a mistake in the
        call, not something that happened in training).
        """
        steps = _count("run", "steps", steps)
        with self._exclusive("run"):
            try:
                self._train(steps)
            except Exception:  # the error is kept in self.error
                return False
        return True

    def _train(self, n: int) -> None:
        if self.error is not None:
            raise LabError(text("lab.error.stopped", step=self.steps_done, error=self.error))
        # The lab reports a non-finite loss itself, so NumPy's overflow warnings are noise here.
        with B.ignore_float_errors(next(iter(self.model.parameters())).data):
            for _ in range(n):
                try:
                    self._one_step()
                except Exception as exc:  # kept for the UI, which shows it, not a traceback
                    self.error = exc
                    raise

    @contextlib.contextmanager
    def _exclusive(self, what: str) -> Iterator[None]:
        """Hold the lab for ``what``; refuse if something else holds it (nothing is changed)."""
        if not self._busy.acquire(blocking=False):
            raise LabError(f"lab.{what}() was called while the lab is already training (from a "
                           "hook, the loss function or another thread); it was refused and the "
                           f"training under way goes on unchanged. Call lab.{what}() after "
                           "step()/run() returns")
        try:
            yield
        finally:
            self._busy.release()

    def reset(self) -> None:
        """Back to the initial weights, a fresh optimizer state and the first batch order.

        The controls you set (frozen layers, lr multipliers, clipping, lr) stay as they are.
        Called while the lab is training (from a hook or the loss function), it is refused
        with a :class:`LabError` and changes nothing; call it after the step returns.
        """
        with self._exclusive("reset"):
            self.model.load_state_dict(self._initial_model)
            current_lrs = [group["lr"] for group in self.optimizer.param_groups]
            self.optimizer.load_state_dict(copy.deepcopy(self._initial_optimizer))
            for group, lr in zip(self.optimizer.param_groups, current_lrs):
                group["lr"] = lr
            self.recorder.clear()
            if hasattr(self.loader, "set_epoch"):
                self.loader.set_epoch(0)
            self._batches = iter(())
            self.steps_done, self.last_loss, self.error = 0, math.nan, None
            self._marks.clear()

    # -- controls --------------------------------------------------------------------------------
    def _layer_params(self, layer: str) -> list[Parameter]:
        if layer not in self.layers:
            raise LabError(text("lab.error.unknown_layer", layer=repr(layer),
                                layers=text("lab.list_sep").join(map(repr, self.layers))))
        module = self._modules[layer]
        return list(module.parameters(recurse=False))

    def freeze(self, layer: str, frozen: bool = True) -> None:
        """Stop (or restart) training one layer: its parameters get ``requires_grad=False``,
        so they get no gradient and the optimizer skips them from the next step on."""
        params = self._layer_params(layer)
        if not isinstance(frozen, bool):
            raise LabError(text("lab.error.freeze_bool", layer=repr(layer), value=repr(frozen)))
        for p in params:
            p.requires_grad_(not frozen)
            if frozen:
                p.grad = None
        self._note(f"freeze {layer}",
                   text("lab.mark.frozen" if frozen else "lab.mark.unfrozen", layer=layer))

    def set_lr_mult(self, layer: str, value: float) -> None:
        """Scale one layer's learning rate: effective lr = lr x ``value`` (0 stops it, 2 doubles
        its SGD updates)."""
        params = self._layer_params(layer)
        check_control(value, "lab.what.lr_mult", layer=repr(layer))
        for p in params:
            p.lr_mult = float(value)
        self._note(f"lr_mult {layer}", text("lab.mark.lr_mult", layer=layer, value=f"{float(value):g}"))

    def set_clip(self, mode: str | None, threshold: float | None = None) -> None:
        """Clip gradients in the optimizer: ``None`` (off), ``"value"``, ``"norm"`` (each
        tensor) or ``"global_norm"`` (all together), at ``threshold`` (> 0)."""
        if not (mode is None or isinstance(mode, str)) or mode not in CLIP_MODES:
            raise LabError(text("lab.error.clip_mode", modes=list(CLIP_MODES), mode=repr(mode)))
        if mode is not None or threshold is not None:     # a threshold given is always checked
            check_control(threshold, "lab.what.clip_threshold", positive=True)
        if mode is None:
            self.optimizer.grad_clip = None
            self._note("clip", text("lab.mark.clip_off"))
            return
        clip: Any = CLIP_MODES[mode]     # (a class: mode is not None here)
        limit: Any = threshold           # (a number: check_control checked it)
        self.optimizer.grad_clip = clip(float(limit))
        self._note("clip", text("lab.mark.clip", mode=text(f"lab.mark.mode.{mode}"),
                                threshold=f"{float(limit):g}"))

    def set_lr(self, value: float) -> None:
        """Set the learning rate of every parameter group (groups keep their ratios to the
        first group's initial lr)."""
        check_control(value, "lab.what.lr")
        first = self._initial_lrs[0]
        new_lrs = [initial * (value / first) if first else float(value)
                   for initial in self._initial_lrs]
        for lr in new_lrs:        # a huge value overflows to inf in a group with a larger lr
            check_control(lr, "lab.what.lr")
        for group, lr in zip(self.optimizer.param_groups, new_lrs):
            group["lr"] = lr
        self.base_lr = float(value)
        self._note("lr", text("lab.mark.lr", value=f"{float(value):g}"))

    def _note(self, control: str, what: str) -> None:
        """Remember that ``control`` changed to ``what`` at this step. A second change of the
        same control at the same step replaces the first: dragging a slider leaves one mark."""
        if self._marks and self._marks[-1][:2] == (self.steps_done, control):
            self._marks.pop()
        self._marks.append((self.steps_done, control, what))

    @property
    def events(self) -> list[tuple[int, str]]:
        """The controls changed so far, as (step, what): the plots mark each one at its step.

        >>> from dltutor.lab import demos
        >>> lab = demos.moons_mlp()
        >>> lab.set_lr_mult("0", 3); lab.step(1); lab.set_lr_mult("0", 10)
        >>> lab.events
        [(0, 'layer 0 lr × 3'), (1, 'layer 0 lr × 10')]
        """
        return [(step, what) for step, _, what in self._marks]

    @property
    def marks(self) -> list[tuple[int, str, str]]:
        """The same changes as :attr:`events`, with the control each one changed:
        (step, control, what). Marks of one control share its name (``"lr_mult 0"``), so a
        plot too crowded to label each change can show the latest, the value in force.

        >>> from dltutor.lab import demos
        >>> lab = demos.moons_mlp()
        >>> lab.freeze("2"); lab.set_lr(0.3)
        >>> lab.marks
        [(0, 'freeze 2', 'layer 2 frozen'), (0, 'lr', 'lr 0.3')]
        """
        return list(self._marks)

    # -- what the UI shows -----------------------------------------------------------------------
    def clip_setting(self) -> tuple[str | None, float | None]:
        """The current clip mode and threshold."""
        clip = self.optimizer.grad_clip
        for mode, cls in CLIP_MODES.items():
            if cls is not None and isinstance(clip, cls):
                threshold = getattr(clip, "clip_norm", None) or getattr(clip, "max", None)
                return mode, threshold
        return None, None

    def state(self) -> dict[str, Any]:
        """Everything a view needs, as plain data: step, loss, controls, latest traces, error."""
        latest = {kind: self.recorder.latest(kind) for kind in
                  ("param_norm", "grad_norm", "clipped_grad_norm", "update_ratio")}
        layers = []
        for layer in self.layers:
            params = self._layer_params(layer)
            row = {"name": layer, "frozen": not any(p.requires_grad for p in params),
                   "lr_mult": params[0].lr_mult if hasattr(params[0], "lr_mult") else 1.0}
            if self.recorder.by == "layer":
                row.update({kind: values.get(layer, math.nan) for kind, values in latest.items()})
            layers.append(row)
        mode, threshold = self.clip_setting()
        clip = self.optimizer.grad_clip
        return {
            "step": self.steps_done, "loss": self.last_loss, "lr": self.base_lr,
            "layers": layers, "clip_mode": mode, "clip_threshold": threshold,
            "clip_scale": getattr(clip, "last_scale", None) if clip is not None else None,
            "error": None if self.error is None else error_text(self.error),
            "watch": {label: float(fn()) for label, fn in self.watch.items()},
        }

    def accuracy(self) -> float:
        """Accuracy of the model on the lab's data (for classification demos)."""
        if self.X is None:
            raise LabError("accuracy needs the data as arrays (X, y)")
        return accuracy(self.model, self.X, self.y)

    def show(self) -> Any:
        """Display the live widget view (needs ipywidgets and anywidget; see dltutor.lab.widgets)."""
        if _show_view is None:
            raise LabError("no view to show the lab with: import dltutor.lab, which sets one "
                           "(see set_show_view)")
        return _show_view(self)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.show())

    def __repr__(self) -> str:
        return (f"TrainingLab({self.name!r}, {len(self.layers)} layers, step {self.steps_done}, "
                f"loss {self.last_loss:.4f})")


def _count(method: str, name: str, value: Any) -> int:
    """A step count: an integer >= 0 (not a bool, not 2.0), else a LabError naming the call."""
    try:
        return checks.integer(f"lab.{method}", name, value, minimum=0,
                              hint="a number of training steps")
    except (TypeError, ValueError) as exc:
        raise LabError(str(exc)) from None
