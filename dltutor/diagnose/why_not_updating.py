"""why_not_updating(model, optimizer, name, loss=None): the checklist a learner would go through.

Each check is one short function below, in the order of the list: is it in the optimizer, does
it require a gradient, what gradient did backward leave, does the loss reach it, is its
effective lr 0, does clipping erase its gradient, and (when the gradient is zero) will momentum
or weight decay move it anyway. Each returns one row ``{"check", "answer", "status", "cause"}``;
:func:`_verdict` names the first problem. A buffer (BatchNorm's running statistics) is not
learned and gets its own short checklist (buffer_check.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..i18n import text
from .adapters import Adapter, adapter_for
from .data_parallel import APART_CAUSES, data_parallel_view, reducer_rows, replica_row
from .lookup import Entry, entries_by_param
from .optimizer_rules import array_stats, decay_text
from .report import cell_text
from .update_check import UpdateCheck, cause_sentence, checklist_row

#: A clip that scales a gradient by less than this is reported as "clipped to near zero".
CLIPPED_SCALE = 1e-3

def why_not_updating(model: Any, optimizer: Any, name: str, loss: Any = None, *,
                     check_replicas: bool = False) -> UpdateCheck:
    """Why is this parameter not changing when I train (or why does a "frozen" one move)?

    Answers a checklist from the live model and optimizer, in this order:

    1. is it in the optimizer? (by object identity, so any alias of a tied parameter works)
    2. ``requires_grad``?
    3. is its ``.grad`` None, or all zeros, after the last backward?
    4. does the ``loss`` reach it? (only when you pass ``loss``: the graph is walked from
       ``loss.grad_fn``; pass it BEFORE ``backward()`` or use ``retain_graph=True``, because
       backward frees the graph; a ``detach()`` upstream shows as "not reached". Before
       backward a None gradient is expected, so it is not a problem when the loss reaches it)
    5. is its effective lr 0 (group lr 0, or ``lr_mult`` 0)?
    6. does gradient clipping scale it to nearly zero (scale below 1e-3)?
    7. with a zero gradient: will stale momentum (``momentum_buffer``, Adam's ``exp_avg``)
       still move it?
    8. with a zero gradient: will weight decay still move it?

    When the model is a :class:`~dltutor.distributed.DistributedDataParallel` (or the module
    one wraps), three more rows: is it in DDP's reducer (its gradient averaged over the
    processes), did the last iteration reach it, and (only with ``check_replicas=True``) is it
    the same in every process. That last check is a collective
    (:func:`~dltutor.distributed.check_replicas`): every process must make the same call.

    For a BatchNorm buffer (``"1.running_mean"``) it checks train/eval mode and
    ``use_global_stats`` instead: buffers are not parameters.

    ``.cause`` is the first problem found: ``"not_in_optimizer"``, ``"requires_grad_false"``,
    ``"no_grad"``, ``"not_reached"``, ``"zero_grad"``, ``"lr_zero"``, ``"lr_mult_zero"``,
    ``"clipped_to_zero"``, ``"bn_stats_frozen"``, ``"not_a_parameter"``, ``"unreached_skipped"``,
    ``"unreached_stops"``; or ``"outside_reducer"`` / ``"differs_across_replicas"`` (it moves,
    but differently in each process); or, when the gradient
    is zero but the parameter moves anyway, ``"moves_by_momentum"`` /
    ``"moves_by_weight_decay"``; or None ("should update", with the evidence). Each row of
    ``.rows`` is ``{"check", "answer", "status", "cause"}``; status is "ok", "problem",
    "warning" (it moves although its gradient is zero), "unknown" or "n/a".

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> net = nn.Sequential(nn.Linear(2, 1))
    >>> opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    >>> net(dt.ones(3, 2)).sum().backward(); opt.step()
    >>> net.zero_grad(); (net(dt.ones(3, 2)) * 0).sum().backward()   # now a zero gradient
    >>> check = why_not_updating(net, opt, "0.weight")
    >>> check.cause, check.will_move
    ('moves_by_momentum', True)
    >>> print(check.verdict)
    will still move although its gradient is zero: momentum buffer non-zero (largest |momentum_buffer| 3.0)
    """
    adapter = adapter_for(model, optimizer)
    params = dict(adapter.named_parameters(model))
    if name not in params:
        return adapter.buffer_check(model, name, list(params))
    q = _question(adapter, name, params[name], optimizer, loss)
    view = (data_parallel_view(model, check_replicas) if adapter.framework == "dltutor"
            else None)
    across = reducer_rows(view, q.param) if view is not None else []
    rows = [_in_optimizer(q), _requires_grad(q), *across, _gradient(q), _reached_from_loss(q),
            _effective_lr(q), _clipping(q), _momentum(q), _weight_decay(q),
            *replica_row(view, name)]
    return _verdict(q, rows)


@dataclass
class _Question:
    """What the checks read: the framework's adapter, the parameter and its gradient, where
    the optimizer holds it, whether the loss reaches it (True / False, None when it cannot
    tell, "skip" without a loss)."""

    adapter: Adapter
    name: str
    param: Any
    grad: Any
    optimizer: Any
    entries: list[Entry]
    entry: Entry | None
    reached: bool | None | str

    @property
    def effective_lr(self) -> float | None:
        if self.entry is None:
            return None
        return self.adapter.effective_lr(self.entry)

    @property
    def moving_lr(self) -> bool:
        effective = self.effective_lr
        return effective is not None and effective > 0

    @property
    def grad_zero(self) -> bool:
        """A gradient that exists and is all zeros."""
        return self.grad is not None and not array_stats(self.grad)[0]


def _question(adapter: Adapter, name: str, param: Any, optimizer: Any, loss: Any) -> _Question:
    entries = adapter.entries(optimizer) if optimizer is not None else []
    entry = entries_by_param(entries).get(id(param))
    reached = adapter.loss_reaches(loss, param) if loss is not None else "skip"
    return _Question(adapter, name, param, adapter.grad(param), optimizer, entries, entry,
                     reached)


# ------------------------------------------------------------------------------------------------
# The checks, in checklist order
# ------------------------------------------------------------------------------------------------
def _in_optimizer(q: _Question) -> dict[str, Any]:
    """1. Is it in the optimizer? By object identity, so any alias of a tied parameter works."""
    if q.optimizer is None:
        return checklist_row("in_optimizer", text("diagnose.why.not_checked_optimizer"), "n/a")
    if q.entry is None:
        answer = text("diagnose.why.not_held")
        if any(e.name == q.name for e in q.entries):
            answer += text("diagnose.why.other_object", name=repr(q.name))
        return checklist_row("in_optimizer", answer, "problem", "not_in_optimizer")
    if q.entry.name != q.name:
        return checklist_row("in_optimizer", text("diagnose.why.held_as", where=q.entry.where,
                                         alias=repr(q.entry.name)), "ok")
    return checklist_row("in_optimizer", text("diagnose.why.held", where=q.entry.where), "ok")


def _requires_grad(q: _Question) -> dict[str, Any]:
    """2. Does backward give it a gradient at all?"""
    if q.adapter.requires_grad(q.param):
        return checklist_row("requires_grad", text("diagnose.why.requires_grad_true"), "ok")
    return checklist_row("requires_grad", text("diagnose.why.requires_grad_false"), "problem",
                "requires_grad_false")


def _gradient(q: _Question) -> dict[str, Any]:
    """3. What did the last backward leave in ``.grad``?"""
    if q.grad is None:
        return _no_gradient(q)
    nonzero, norm, _ = array_stats(q.grad)
    if nonzero:
        return checklist_row("gradient", text("diagnose.why.grad_nonzero", norm=cell_text(norm)), "ok")
    return checklist_row("gradient", text("diagnose.why.grad_zeros"), "problem", "zero_grad")


def _no_gradient(q: _Question) -> dict[str, Any]:
    """3, when ``.grad`` is None: expected when frozen, or before backward if the loss reaches
    it; otherwise backward never reached it (the next check may say why)."""
    if not q.adapter.requires_grad(q.param):
        return checklist_row("gradient", text("diagnose.why.grad_none_frozen"), "problem")
    if q.reached is False:
        return checklist_row("gradient", text("diagnose.why.grad_none_unreached"), "problem")
    if q.reached is True:
        return checklist_row("gradient", text("diagnose.why.grad_none_yet"), "ok")
    return checklist_row("gradient", text("diagnose.why.grad_none"), "problem", "no_grad")


def _reached_from_loss(q: _Question) -> dict[str, Any]:
    """4. Does the loss reach it? (only when a loss was given)"""
    if q.reached == "skip":
        return checklist_row("reached", text("diagnose.why.reach_not_checked"), "n/a")
    if q.reached is True:
        return checklist_row("reached", text("diagnose.why.yes"), "ok")
    if q.reached is False:
        return checklist_row("reached", text("diagnose.why.reach_no"), "problem", "not_reached")
    return checklist_row("reached", text("diagnose.why.reach_unknown"), "unknown")


def _effective_lr(q: _Question) -> dict[str, Any]:
    """5. Is the number that multiplies its gradient 0 (group lr 0, or lr_mult 0)?"""
    if q.entry is None:
        return checklist_row("effective_lr", "-", "n/a")
    lr, mult = q.adapter.group_lr(q.entry), q.adapter.lr_mult(q.param)
    effective = q.effective_lr
    if mult is None:        # a framework without per-parameter multipliers (PyTorch)
        how = text("diagnose.why.lr_no_mult", effective=cell_text(effective),
                   group=q.entry.group_index)
    else:
        how = text("diagnose.why.lr", effective=cell_text(effective), group=q.entry.group_index,
                   lr=cell_text(lr), mult=cell_text(mult))
    if lr == 0:
        return checklist_row("effective_lr", text("diagnose.why.lr_group_zero", text=how), "problem",
                    "lr_zero")
    if mult == 0:
        return checklist_row("effective_lr", text("diagnose.why.lr_mult_zero", text=how), "problem",
                    "lr_mult_zero")
    if effective == 0:
        return checklist_row("effective_lr", how, "problem", "lr_zero")
    return checklist_row("effective_lr", how, "ok")


def _clipping(q: _Question) -> dict[str, Any]:
    """6. Does gradient clipping scale its gradient to nearly zero (below CLIPPED_SCALE)?"""
    if q.entry is None:
        return checklist_row("clipping", "-", "n/a")
    clip = q.adapter.clip(q.entry)
    if clip is None:
        if q.adapter.clips_in_optimizer:
            return checklist_row("clipping", text("diagnose.why.clip_none"), "ok")
        return checklist_row("clipping", q.adapter.no_clip_text(q.entry), "n/a")
    if not clip.applies:
        return checklist_row("clipping", text("diagnose.why.clip_excluded", clip=clip.description),
                             "ok")
    predicted, last = clip.predicted_scale, clip.last_scale
    parts = [clip.description]
    if predicted is not None:
        parts.append(text("diagnose.why.clip_predicted", scale=cell_text(predicted, digits=2)))
    if last is not None:
        parts.append(text("diagnose.why.clip_last", scale=cell_text(last)))
    scale = predicted if predicted is not None else last
    if scale is not None and scale < CLIPPED_SCALE:
        return checklist_row("clipping", text("diagnose.list_sep").join(parts), "problem",
                             "clipped_to_zero")
    return checklist_row("clipping", text("diagnose.list_sep").join(parts), "ok")


# What can move a parameter whose gradient is zero: the two checks below answer
# "will still move: ..." (status "warning") when it does; the verdict keeps what follows.
_MOVES_BY = {"momentum": "moves_by_momentum", "decay": "moves_by_weight_decay"}



def _momentum(q: _Question) -> dict[str, Any]:
    """7. With a zero gradient: will stale momentum (SGD's buffer, Adam's exp_avg) move it?"""
    if q.entry is None or not q.grad_zero:
        return checklist_row("momentum", _not_applicable(q), "n/a")
    found = text("diagnose.evidence_sep").join(_momentum_state(q, q.entry))
    if found and q.moving_lr:
        return _movingchecklist_row("momentum", text("diagnose.why.momentum_nonzero", found=found))
    if found:
        return checklist_row("momentum", text("diagnose.why.momentum_lr_zero", found=found), "ok")
    return checklist_row("momentum", text("diagnose.why.momentum_none"), "ok")


def _movingchecklist_row(check: str, what: str) -> dict[str, Any]:
    """A warning row: the parameter will move although its gradient is zero, because of
    ``what`` (kept under "moves" for the verdict)."""
    row = checklist_row(check, text("diagnose.why.will_move", what=what), "warning")
    row["moves"] = what
    return row


def _momentum_state(q: _Question, entry: Entry) -> list[str]:
    """The optimizer's non-zero momentum-like state for this parameter (``q.entry``), described."""
    found = []
    for key, value in q.adapter.momentum_state(entry):
        nonzero, _, absmax = array_stats(value)
        if nonzero:
            found.append(text("diagnose.why.momentum_largest", key=key, value=cell_text(absmax)))
    return found


def _weight_decay(q: _Question) -> dict[str, Any]:
    """8. With a zero gradient: will weight decay move it (towards zero)?"""
    if q.entry is None or not q.grad_zero:
        return checklist_row("decay", _not_applicable(q), "n/a")
    decay, kinds, coeff = decay_text(q.adapter, q.entry)
    applies = bool(kinds) and kinds != ["decoupled_excluded"] and bool(coeff)
    if not applies:
        return checklist_row("decay", text("diagnose.why.decay_none", decay=decay), "ok")
    if not q.moving_lr:
        return checklist_row("decay", text("diagnose.why.decay_lr_zero"), "ok")
    if not array_stats(q.adapter.values(q.param))[0]:
        return checklist_row("decay", text("diagnose.why.decay_zero_param"), "ok")
    return _movingchecklist_row("decay", text("diagnose.why.decay_applies", decay=decay))


def _not_applicable(q: _Question) -> str:
    """Why checks 7 and 8 do not apply: no optimizer entry, no gradient, or a non-zero one."""
    if q.entry is None:
        return "-"
    if q.grad is None:
        return text("diagnose.why.na_no_grad")
    return text("diagnose.why.na_nonzero")


def _verdict(q: _Question, rows: list[dict[str, Any]]) -> UpdateCheck:
    """The first problem in checklist order; else what moves it although its gradient is
    zero; else "should update" with the evidence."""
    movers = [(_MOVES_BY[r["key"]], r["moves"]) for r in rows if "moves" in r]
    if movers:  # a zero gradient is not a problem when something else moves the parameter
        for r in rows:
            if r["cause"] == "zero_grad":
                r.update(status="warning", cause=None)
    found = [r["cause"] for r in rows if r["status"] == "problem" and r["cause"]]
    causes = [c for c in found if c not in APART_CAUSES]    # those that stop it first
    if not causes and found:
        row = next(r for r in rows if r["cause"] == found[0])
        detail = cause_sentence(found[0])
        if "detail" in row:                           # the replicas: which ranks, how much
            detail = text("diagnose.why.with_reason", detail=detail, why=row["detail"])
        return UpdateCheck(q.name, rows, found[0],
                           text("diagnose.why.moves_apart", detail=detail), True)
    if causes:
        cause = causes[0]
        detail = cause_sentence(cause)
        if cause in ("lr_zero", "lr_mult_zero", "clipped_to_zero"):
            detail = text("diagnose.why.with_reason", detail=detail,
                          why=next(r["answer"] for r in rows if r["cause"] == cause))
        return UpdateCheck(q.name, rows, cause, text("diagnose.why.not_updating", detail=detail),
                           False)
    if movers:
        return UpdateCheck(q.name, rows, movers[0][0], text(
            "diagnose.why.moves_anyway",
            movers=text("diagnose.evidence_sep").join(what for _, what in movers)), True)
    evidence = text("diagnose.evidence_sep").join(
        text("diagnose.why.evidence", check=r["check"].rstrip("?？"), answer=r["answer"])
        for r in rows if r["status"] == "ok")
    if q.optimizer is None:
        return UpdateCheck(q.name, rows, None, text("diagnose.why.should_if", evidence=evidence),
                           None)
    return UpdateCheck(q.name, rows, None, text("diagnose.why.should", evidence=evidence), True)
