"""What the optimizer will do to one parameter, put into the reports' words.

The answers come from the framework's adapter (adapters/), which reads the optimizer's own
objects: for dltutor, ``optimizer.decay_of(param)`` says which decay applies (see
``dltutor/optim/decay.py`` for the precedence), so a report cannot disagree with ``step()``.
"""
from __future__ import annotations

from typing import Any

from .. import backend as B
from ..i18n import text
from ..optim.regularizer import Regularizer
from .lookup import Entry
from .report import cell_text


def array_stats(array: Any) -> tuple[bool, float, float]:
    """(any non-zero, L2 norm, largest absolute value) of a backend array."""
    xp = B.get_array_module(array)
    flat = array.reshape(-1)
    if flat.size == 0:
        return False, 0.0, 0.0
    absmax = float(xp.abs(flat).max())
    norm = float(xp.linalg.norm(flat))
    return absmax > 0, norm, absmax


def decay_text(adapter: Any, entry: Entry) -> tuple[str, list[str], float | None]:
    """(description, kinds, coefficient of the first decay) of the decay this parameter gets,
    as ``adapter.decay(entry)`` answers it."""
    decay = adapter.decay(entry)
    gi, group_decay = entry.group_index, entry.group.get("weight_decay", 0)
    parts, kinds, coeff = [], [], None
    if decay.source == "parameter":
        note = (text("diagnose.decay.coupled_note") if decay.replaced is None else
                text("diagnose.decay.replaces", group=gi, decay=_decay_name(decay.replaced)))
        parts.append(text("diagnose.decay.from_param", regularizer=repr(decay.coupled), note=note))
        kinds.append("param_regularizer")
        coeff = getattr(decay.coupled, "coeff", None)
    elif isinstance(decay.coupled, Regularizer):
        parts.append(text("diagnose.decay.from_group", regularizer=repr(decay.coupled), group=gi))
        kinds.append("group_regularizer")
        coeff = decay.coupled.coeff
    elif decay.coupled is not None:
        shown = cell_text(decay.coupled)
        parts.append(text("diagnose.decay.coupled_l2", coeff=shown, group=gi))
        kinds.append("coupled_l2")
        coeff = float(decay.coupled)
    if decay.decoupled:
        shown = cell_text(decay.decoupled)
        parts.append(text("diagnose.decay.decoupled", coeff=shown, group=gi,
                          optimizer=type(entry.opt).__name__))
        kinds.append("decoupled")
        coeff = decay.decoupled if coeff is None else coeff
    if decay.excluded:
        parts.append(text("diagnose.decay.excluded", name=repr(entry.name), group=gi,
                          coeff=cell_text(group_decay)))
        kinds.append("decoupled_excluded")
    if not parts:
        return text("diagnose.decay.none"), kinds, None
    return text("diagnose.decay.plus").join(parts), kinds, coeff


def _decay_name(value: Any) -> str:
    """A group's weight_decay as the reports show it: a regularizer's repr, a number short."""
    return repr(value) if isinstance(value, Regularizer) else cell_text(value)
