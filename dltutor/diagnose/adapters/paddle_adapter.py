"""The adapter for a ``paddle.nn.Layer`` trained by a ``paddle.optimizer.Optimizer``.

Read from Paddle's own state: ``stop_gradient`` (``trainable=False`` sets it), ``.grad``, the
parameter's ``optimize_attr["learning_rate"]`` (ParamAttr's multiplier), ``regularizer`` and
``need_clip``; the optimizer's lr (``get_lr()``, a scheduler's ``base_lr``), its parameter
groups with their ``learning_rate`` scale, ``weight_decay`` and ``grad_clip``, AdamW's
decoupled decay and ``apply_decay_param_fun``, and its accumulators (``velocity``,
``moment1``). Paddle keeps most of the optimizer's settings in attributes with a leading
underscore (``_param_groups``, ``_grad_clip``, ``_accumulators``...); this adapter reads them,
and tests/frameworks/test_diagnose_paddle.py checks every answer against what Paddle's
``step()`` really does. Paddle names a parameter in its optimizer by its own name
(``linear_0.w_0``), so that is the name ``explain_lr`` takes (or pass the parameter itself).
Imported only when a Paddle object arrives.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import paddle

from ...i18n import text
from ...optim import L1Decay, L2Decay
from ...optim.decay import Decay
from ..buffer_check import buffer_or_unknown
from ..lookup import Entry
from .base import Adapter, Clip, framework_class

#: The accumulators of each Paddle optimizer that keep moving a parameter after its gradient
#: became zero (Paddle's names).
MOMENTUM_STATE = {"Momentum": ("velocity",), "Adam": ("moment1",), "AdamW": ("moment1",)}


class PaddleAdapter(Adapter):
    framework = "paddle"
    display_name = "Paddle"

    def buffer_check(self, model: Any, name: str, param_names: list[str]) -> Any:
        """(Paddle's ``named_buffers`` has no ``remove_duplicate``.)"""
        return buffer_or_unknown(model, name, param_names,
                                 [n for n, _ in model.named_buffers()])

    def requires_grad(self, param: Any) -> bool:
        return not param.stop_gradient

    def grad(self, param: Any) -> np.ndarray | None:
        return None if param.grad is None else param.grad.numpy()

    def values(self, param: Any) -> np.ndarray:
        return param.numpy()

    def lr_mult(self, param: Any) -> float:
        return float(param.optimize_attr.get("learning_rate", 1.0))

    def regularizer(self, param: Any) -> Any | None:
        return _as_dltutor_decay(param.regularizer)

    def need_clip(self, param: Any) -> bool:
        return bool(param.need_clip)

    def loss_reaches(self, loss: Any, param: Any) -> bool | None:
        """Asks Paddle for the gradient without writing it (``paddle.grad`` with
        ``allow_unused``): None back means the loss does not reach the parameter. Paddle
        refuses once backward freed the graph, or for a frozen parameter: then None."""
        if loss is param:
            return True
        try:
            found = paddle.grad(loss, [param], retain_graph=True, allow_unused=True)
        except (RuntimeError, ValueError):
            return None
        return found[0] is not None

    def entries(self, optimizer: Any) -> list[Entry]:
        """Each parameter in group order, under Paddle's name for it (``param.name``)."""
        groups = optimizer._param_groups
        if groups and not isinstance(groups[0], dict):      # a plain list: one group
            groups = [{"params": list(optimizer._parameter_list)}]
        return [Entry(param.name, param, group, index, optimizer, None)
                for index, group in enumerate(groups) for param in group["params"]]

    def group_lr(self, entry: Entry) -> float:
        """The optimizer's lr now, times the group's ``learning_rate`` (a scale in Paddle)."""
        return float(entry.opt.get_lr()) * float(entry.group.get("learning_rate", 1.0))

    def initial_lr(self, entry: Entry) -> float | None:
        scheduler = entry.opt._learning_rate
        if not isinstance(scheduler, paddle.optimizer.lr.LRScheduler):
            return None
        return float(scheduler.base_lr) * float(entry.group.get("learning_rate", 1.0))

    def decay(self, entry: Entry) -> Decay:
        """Paddle's precedence: the parameter's own regularizer replaces the coupled decay of
        its group (or optimizer); AdamW's decoupled decay applies besides it, unless
        ``apply_decay_param_fun(param.name)`` says False."""
        opt, param = entry.opt, entry.param
        own = _as_dltutor_decay(param.regularizer)
        decoupled, excluded = 0.0, False
        if framework_class(opt, "paddle") == "AdamW":
            group_decay = None
            coefficient = entry.group.get("weight_decay", opt._weight_decay)
            decoupled = float(coefficient if isinstance(coefficient, (int, float)) else 0.0)
            rule = opt._apply_decay_param_fun
            if decoupled and rule is not None and not rule(param.name):
                decoupled, excluded = 0.0, True
        else:
            group_decay = _as_dltutor_decay(entry.group.get("weight_decay", _optimizer_decay(opt)))
        if own is not None:
            return Decay(own, "parameter", group_decay, decoupled, excluded)
        return Decay(group_decay, "group" if group_decay is not None else None, None,
                     decoupled, excluded)

    def clip(self, entry: Entry) -> Clip | None:
        clip = entry.group.get("grad_clip") or entry.opt._grad_clip
        if clip is None:
            return None
        applies = bool(entry.param.need_clip)
        return Clip(_describe_clip(clip), applies, None,
                    _predicted_scale(clip, entry) if applies else None)

    def no_clip_text(self, entry: Entry) -> str:
        return text("diagnose.lr.no_clip", optimizer=type(entry.opt).__name__)

    def momentum_state(self, entry: Entry) -> list[tuple[str, np.ndarray]]:
        found = []
        for key in MOMENTUM_STATE.get(framework_class(entry.opt, "paddle"), ()):
            value = entry.opt._accumulators.get(key, {}).get(entry.param.name)
            if value is not None:
                found.append((key, value.numpy()))
        return found

    def watch_steps(self, optimizer: Any, before: Any, after: Any) -> Any:
        """Paddle's optimizers have no step hooks: this instance's ``step`` is wrapped (the
        class's own comes back when the returned function runs). ``minimize()`` bypasses it.
        Two Recorders wrap it twice; stopping one leaves the other's wrapper measuring."""
        original = optimizer.step

        def step(*args: Any, **kwargs: Any) -> Any:
            if not wrapper.watching:     # stopped, but a later wrapper still calls through us
                return original(*args, **kwargs)
            before()
            result = original(*args, **kwargs)
            after()
            return result

        wrapper: Any = step              # the wrapper carries two attributes of its own
        wrapper.watching = True
        wrapper.inner = original if "step" in vars(optimizer) else None   # None: the class's

        def stop() -> None:
            wrapper.watching = False
            current = vars(optimizer).get("step")      # unwrap the stopped wrappers outside
            while getattr(current, "watching", None) is False:
                if current.inner is None:
                    del optimizer.step
                    break
                optimizer.step = current = current.inner

        optimizer.step = step
        return stop


def _optimizer_decay(opt: Any) -> Any:
    """The optimizer-wide coupled decay: its regularizer, or the L2 coefficient Momentum keeps
    for its own kernel (``weight_decay=0.01`` there leaves ``regularization`` None)."""
    if opt.regularization is not None:
        return opt.regularization
    if getattr(opt, "_regularization_method", "") == "l2_decay":
        return float(opt._regularization_coeff)
    return None


def _as_dltutor_decay(value: Any) -> Any:
    """A Paddle L1Decay/L2Decay as dltutor's (the same rule, printed the same way); a number
    stays a number (coupled L2); nothing or 0 is None."""
    if value is None or (isinstance(value, (int, float)) and not value):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    kind = {"L1Decay": L1Decay, "L2Decay": L2Decay}[framework_class(value, "paddle")]
    return kind(float(value._coeff))


def _describe_clip(clip: Any) -> str:
    if hasattr(clip, "clip_norm"):
        return f"{type(clip).__name__}(clip_norm={clip.clip_norm:g})"
    return f"{type(clip).__name__}(max={clip.max:g}, min={clip.min:g})"


def _predicted_scale(clip: Any, entry: Entry) -> float | None:
    """The factor Paddle's clip would multiply this gradient's norm by: ``clip_norm /
    max(norm, clip_norm)``, with the norm over every clipped gradient of the optimizer
    (ClipGradByGlobalNorm) or of this one (ClipGradByNorm); None for ClipGradByValue, or
    without a non-zero gradient."""
    grad = entry.param.grad
    if not hasattr(clip, "clip_norm") or grad is None or not bool((grad != 0).any()):
        return None
    if framework_class(clip, "paddle") == "ClipGradByGlobalNorm":
        params = [e.param for e in PaddleAdapter().entries(entry.opt)
                  if e.param.need_clip and e.param.grad is not None]
    else:
        params = [entry.param]
    norm = float(np.sqrt(sum(float((p.grad.numpy().astype(np.float64) ** 2).sum())
                             for p in params)))
    return clip.clip_norm / max(norm, clip.clip_norm)
