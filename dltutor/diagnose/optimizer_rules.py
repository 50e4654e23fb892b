"""What the optimizer and its clip will do to one parameter, worked out by diagnose itself.

Two answers the reports need that the optimizer does not give yet: which decay applies to a
parameter (its own regularizer, the group's coupled ``weight_decay``, AdamW's decoupled decay or
its exclusion) and by how much the clip object will scale its gradient. Both restate rules that
``dltutor.optim`` applies inside ``step()``; they are kept here, together and unchanged, so that
they can be replaced in one place by asking the optimizer and the clip object once those can
answer.
"""
from __future__ import annotations

import math
from typing import Any

from .. import backend as B
from ..optim.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from ..optim.regularizer import Regularizer
from .lookup import _Entry
from .report import _fmt


def _array_stats(array: Any) -> tuple[bool, float, float]:
    """(any non-zero, L2 norm, largest absolute value) of a backend array."""
    xp = B.get_array_module(array)
    flat = array.reshape(-1)
    if flat.size == 0:
        return False, 0.0, 0.0
    absmax = float(xp.abs(flat).max())
    norm = float(xp.linalg.norm(flat))
    return absmax > 0, norm, absmax


def _decay_text(entry: _Entry) -> tuple[str, list[str], float | None]:
    """(description, kinds, coefficient of the first decay) of the decay this parameter gets."""
    opt, param, group = entry.opt, entry.param, entry.group
    gi = entry.group_index
    wd = group.get("weight_decay", 0)
    coupled = getattr(opt, "coupled_weight_decay", True)
    own = getattr(param, "regularizer", None)
    parts, kinds, coeff = [], [], None
    if own is not None:
        if isinstance(wd, Regularizer) or (wd and coupled):
            shown = repr(wd) if isinstance(wd, Regularizer) else _fmt(wd)
            note = f"(replaces group {gi}'s weight_decay {shown})"
        else:
            note = "(coupled: added to the gradient)"
        parts.append(f"{own!r} from the parameter {note}")
        kinds.append("param_regularizer")
        coeff = getattr(own, "coeff", None)
    elif isinstance(wd, Regularizer):
        parts.append(f"{wd!r} from group {gi}'s weight_decay (coupled: added to the gradient)")
        kinds.append("group_regularizer")
        coeff = wd.coeff
    elif wd and coupled:
        parts.append(f"coupled L2 {_fmt(wd)} from group {gi}'s weight_decay "
                     f"(g += {_fmt(wd)} * p)")
        kinds.append("coupled_l2")
        coeff = float(wd)
    if wd and not coupled and not isinstance(wd, Regularizer):
        decays = getattr(opt, "decays", None)
        if decays is None or decays(entry.name):
            parts.append(f"decoupled weight decay {_fmt(wd)} from group {gi} "
                         f"({type(opt).__name__}: p *= 1 - lr * {_fmt(wd)} before the step)")
            kinds.append("decoupled")
            coeff = float(wd) if coeff is None else coeff
        else:
            parts.append(f"no decoupled decay: apply_decay_param_fun({entry.name!r}) is False "
                         f"(group {gi}'s weight_decay {_fmt(wd)} skipped)")
            kinds.append("decoupled_excluded")
    if not parts:
        return "none", kinds, None
    return "; plus ".join(parts), kinds, coeff


def _predicted_scale(entry: _Entry, entries: list[_Entry]) -> float | None:
    """The factor the optimizer's clip would scale this parameter's current gradient by."""
    clip, grad = entry.opt.grad_clip, entry.param.grad
    if grad is None:
        return None
    nonzero, norm, absmax = _array_stats(grad.data)
    if not nonzero:
        return None
    if isinstance(clip, ClipGradByGlobalNorm):
        total = math.sqrt(sum(_array_stats(e.param.grad.data)[1] ** 2 for e in entries
                              if e.opt is entry.opt and e.param.grad is not None
                              and getattr(e.param, "need_clip", True)))
        return clip.clip_norm / max(total, clip.clip_norm)
    if isinstance(clip, ClipGradByNorm):
        return clip.clip_norm / max(norm, clip.clip_norm)
    if isinstance(clip, ClipGradByValue):
        return min(1.0, max(abs(clip.min), abs(clip.max)) / absmax)
    return None
