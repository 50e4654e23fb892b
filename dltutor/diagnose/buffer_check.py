"""A buffer is not learned: why_not_updating's short checklist for one (BatchNorm's running
statistics get their own checks: the module's mode and ``use_global_stats``).

>>> from dltutor import nn
>>> buffer_or_unknown(nn.BatchNorm1d(2).eval(), "running_mean", ["weight", "bias"]).cause
'bn_stats_frozen'
"""
from __future__ import annotations

from typing import Any

from ..i18n import text
from .lookup import unknown_name_error
from .update_check import UpdateCheck, cause_sentence, checklist_row

_BATCHNORM_STATS = ("running_mean", "running_var", "num_batches_tracked")


def buffer_or_unknown(model: Any, name: str, param_names: list[str],
                      buffer_names: list[str] | None = None) -> UpdateCheck:
    """The checklist of buffer ``name`` of ``model``, or the error for a name that is neither
    one of its parameters (``param_names``) nor a buffer (``buffer_names``: default, what
    ``model.named_buffers(remove_duplicate=False)`` names)."""
    if buffer_names is None:
        buffer_names = [n for n, _ in model.named_buffers(remove_duplicate=False)]
    if name in buffer_names:
        return _buffer_check(model, name)
    raise unknown_name_error(type(model).__name__, name, param_names + list(buffer_names))


def _buffer_check(model: Any, name: str) -> UpdateCheck:
    """No optimizer updates a buffer; BatchNorm's running statistics have their own checks."""
    path, _, attr = name.rpartition(".")
    module = model.get_submodule(path)
    kind = type(module).__name__
    where = text("diagnose.why.buffer_where", kind=kind, path=repr(path)) if path else kind
    rows = [checklist_row("a_parameter", text("diagnose.why.buffer", where=where), "ok")]
    if hasattr(module, "uses_batch_stats") and attr in _BATCHNORM_STATS:
        return _batchnorm_stats_check(module, name, where, rows)
    rows.append(checklist_row("who_updates", text("diagnose.why.own_code", kind=kind), "problem",
                     "not_a_parameter"))
    return UpdateCheck(name, rows, "not_a_parameter",
                       text("diagnose.why.not_updating", detail=cause_sentence("not_a_parameter")), None)


def _batchnorm_stats_check(module: Any, name: str, where: str,
                           rows: list[dict[str, Any]]) -> UpdateCheck:
    """A forward updates the running statistics only in training mode, and only when it
    normalizes with the batch's own statistics (``use_global_stats`` not True)."""
    attr = name.rpartition(".")[2]
    ugs = module.use_global_stats
    # eval mode freezes them unless use_global_stats=True (which freezes them by itself)
    mode_freezes = not module.training and ugs is not True
    rows.append(checklist_row("module_mode", text("diagnose.why.mode_training") if module.training
                     else text("diagnose.why.mode_eval"),
                     "problem" if mode_freezes else "ok",
                     "bn_stats_frozen" if mode_freezes else None))
    rows.append(checklist_row("use_global_stats", text(f"diagnose.why.ugs_{str(ugs).lower()}"),
        "problem" if ugs is True else "ok", "bn_stats_frozen" if ugs is True else None))
    if module.uses_batch_stats() and module.training:
        rows.append(checklist_row("running_stats", text("diagnose.why.stats_updated",
                                                keep=f"{1 - module.momentum:g}",
                                                momentum=f"{module.momentum:g}"), "ok"))
        return UpdateCheck(name, rows, None, text("diagnose.why.bn_should", where=where,
                                                  attr=attr), True)
    if ugs is True:
        why = text("diagnose.why.bn_ugs", where=where)
    elif ugs is None:
        why = text("diagnose.why.bn_eval", where=where)
    else:
        why = text("diagnose.why.bn_eval_ugs_false", where=where)
    rows.append(checklist_row("running_stats", text("diagnose.why.stats_frozen"), "problem",
                     "bn_stats_frozen"))
    detail = text("diagnose.why.with_reason", detail=cause_sentence("bn_stats_frozen"), why=why)
    return UpdateCheck(name, rows, "bn_stats_frozen",
                       text("diagnose.why.not_updating", detail=detail), False)
