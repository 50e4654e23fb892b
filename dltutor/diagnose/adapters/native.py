"""The adapter for dltutor's own modules and optimizers: every answer is the kit's own object
saying it (``optimizer.decay_of``, the clip's ``applies_to`` and ``predict_scales``), so a
report cannot disagree with ``step()``.

>>> from dltutor import nn, optim
>>> net = nn.Linear(2, 1)
>>> net.bias.lr_mult = 0.5
>>> opt = optim.SGD(net.named_parameters(), lr=0.1)
>>> adapter = NativeAdapter()
>>> [adapter.effective_lr(entry) for entry in adapter.entries(opt)]
[0.1, 0.05]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import backend as B
from ...i18n import text
from ...optim.decay import Decay
from ..lookup import Entry, loss_reaches
from .base import Adapter, Clip


class NativeAdapter(Adapter):
    framework = "dltutor"
    display_name = "dltutor"

    def requires_grad(self, param: Any) -> bool:
        return bool(param.requires_grad)

    def grad(self, param: Any) -> np.ndarray | None:
        return None if param.grad is None else B.to_numpy(param.grad.data)

    def values(self, param: Any) -> np.ndarray:
        return B.to_numpy(param.data)

    def lr_mult(self, param: Any) -> float:
        return float(getattr(param, "lr_mult", 1.0))

    def regularizer(self, param: Any) -> Any | None:
        return getattr(param, "regularizer", None)

    def need_clip(self, param: Any) -> bool:
        return bool(getattr(param, "need_clip", True))

    def loss_reaches(self, loss: Any, param: Any) -> bool | None:
        return loss_reaches(loss, param)

    def entries(self, optimizer: Any) -> list[Entry]:
        """Each parameter with a global group index; a MultiOptimizer's inner optimizers in
        turn (``opt_index`` says which)."""
        if hasattr(optimizer, "optimizers"):
            inner, multi = list(optimizer.optimizers), True
        elif hasattr(optimizer, "param_entries") and hasattr(optimizer, "param_groups"):
            inner, multi = [optimizer], False
        else:
            raise TypeError("expected an optimizer (e.g. optim.SGD(model.named_parameters(), "
                            f"lr=0.1)) or an optim.MultiOptimizer, got {type(optimizer).__name__}")
        out, offset = [], 0
        for k, opt in enumerate(inner):
            index_of = {id(g): offset + i for i, g in enumerate(opt.param_groups)}
            for name, param, group in opt.param_entries():
                out.append(Entry(name, param, group, index_of[id(group)], opt,
                                 k if multi else None))
            offset += len(opt.param_groups)
        return out

    def group_lr(self, entry: Entry) -> float:
        return float(entry.group["lr"])

    def effective_lr(self, entry: Entry) -> float:
        return float(entry.opt.effective_lr(entry.param, entry.group))

    def decay(self, entry: Entry) -> Decay:
        return entry.opt.decay_of(entry.param)

    def clip(self, entry: Entry) -> Clip | None:
        clip = getattr(entry.opt, "grad_clip", None)
        if clip is None:
            return None
        applies = bool(clip.applies_to(entry.param))
        return Clip(repr(clip), applies, getattr(clip, "last_scale", None),
                    _predicted_scale(entry, clip) if applies else None)

    def no_clip_text(self, entry: Entry) -> str:
        return text("diagnose.lr.no_clip", optimizer=type(entry.opt).__name__)

    def momentum_state(self, entry: Entry) -> list[tuple[str, np.ndarray]]:
        state = entry.opt.state.get(entry.param, {}) if hasattr(entry.opt, "state") else {}
        return [(key, B.to_numpy(state[key])) for key in getattr(entry.opt, "momentum_state", ())
                if hasattr(state.get(key), "shape")]


def _predicted_scale(entry: Entry, clip: Any) -> float | None:
    """The factor by which the clip would change the norm of this parameter's current
    gradient (None without a gradient, or with an all-zero one)."""
    grad = entry.param.grad
    if grad is None or not bool((grad.data != 0).any()):
        return None
    params = [param for _, param, _ in entry.opt.param_entries()]
    index = next(i for i, param in enumerate(params) if param is entry.param)
    return clip.predict_scales(params)[index]
