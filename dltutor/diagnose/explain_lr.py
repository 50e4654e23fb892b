"""explain_lr(optimizer, name): how the number that multiplies one gradient is made."""
from __future__ import annotations

from typing import Any

from ..i18n import text
from .adapters import Adapter, adapter_for
from .lookup import Entry, find_entry
from .optimizer_rules import decay_text
from .report import cell_text, pad_to_width, Report, text_width


class LRExplanation(Report):
    """What :func:`explain_lr` returns: a short derivation. ``.rows`` holds its lines
    (``step``, ``value``, ``note``); ``to_dict()`` the numbers and codes, which are also
    attributes (``.effective_lr``, ``.decay``, ``.frozen``, ...).

    >>> from dltutor import nn, optim
    >>> net = nn.Linear(2, 1)
    >>> explanation = explain_lr(optim.SGD(net.named_parameters(), lr=0.1), "bias")
    >>> explanation.effective_lr, explanation.status
    (0.1, 'trainable')
    """

    columns = ["step", "value", "note"]

    def __init__(self, data: dict[str, Any], rows: list[dict[str, Any]]):
        self.data, self.rows = data, rows
        self.title = data["name"] if data["opt_index"] is None else \
            text("diagnose.lr.title_in", name=data["name"], index=data["opt_index"],
                 optimizer=data["optimizer"])

    def __getattr__(self, key: str) -> Any:
        data = self.__dict__.get("data", {})
        if key in data:
            return data[key]
        raise AttributeError(f"LRExplanation has no attribute {key!r}; it has {sorted(data)}")

    def __repr__(self) -> str:
        # Label and value columns line up; a note follows the value where there is one.
        label_w = max(text_width(r["step"]) for r in self.rows)
        value_w = max((text_width(cell_text(r["value"])) for r in self.rows if r["note"]), default=0)
        lines = [self.title]
        for r in self.rows:
            value = cell_text(r["value"])
            line = "  " + pad_to_width(r["step"], label_w) + "  "
            line += (pad_to_width(value, value_w) + "  " + r["note"]) if r["note"] else value
            lines.append(line.rstrip())
        return "\n".join(lines)

    def _cells(self) -> list[list[str]]:
        return [[r["step"], cell_text(r["value"]), r["note"]] for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        """The derivation as plain data (lrs, factor, decay kinds and text, clip, status)."""
        return dict(self.data)


def explain_lr(optimizer: Any, name: Any) -> LRExplanation:
    """How is the number that multiplies this parameter's gradient made?

    Reads the live optimizer: the group's lr (and, when a scheduler changed it, the initial lr
    and the scheduler's factor ``lr / initial_lr``), times the parameter's ``lr_mult``, gives the
    effective lr. Then which decay applies (the parameter's own L1Decay/L2Decay, which replaces
    the group's coupled ``weight_decay``; the group's; AdamW's decoupled decay, or its exclusion
    by ``apply_decay_param_fun``), whether its gradient is clipped and by which clip object, and
    whether it is frozen (``requires_grad=False``, ``lr_mult=0`` or group lr 0).

    ``name`` is the optimizer's name for the parameter (``"0.weight"`` when the optimizer was
    given ``model.named_parameters()``, ``"#i"`` by position otherwise; ``"opt1/0.weight"`` picks
    an inner optimizer of a MultiOptimizer when names clash) or the Parameter itself.
    An unknown name raises a KeyError that lists close matches and the optimizer's names.

    >>> from dltutor import nn, optim
    >>> from dltutor.optim import lr_scheduler
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    >>> net[2].weight.lr_mult = 2.0
    >>> net[2].weight.regularizer = optim.L2Decay(1e-4)
    >>> opt = optim.SGD([{"params": net[0].named_parameters(prefix="0")},
    ...                  {"params": net[2].named_parameters(prefix="2"), "lr": 0.1}],
    ...                 lr=0.5, weight_decay=0.01, grad_clip=optim.ClipGradByGlobalNorm(1.0))
    >>> sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    >>> sched.step()
    >>> explain_lr(opt, "2.weight")
    2.weight
      group 1 lr      0.01  (initial 0.1 x scheduler factor 0.1)
      x lr_mult       2.0
      = effective lr  0.02
      decay           L2Decay(0.0001) from the parameter (replaces group 1's weight_decay 0.01)
      clipping        ClipGradByGlobalNorm(clip_norm=1) (need_clip=True)
      status          trainable
    >>> round(explain_lr(opt, "2.weight").effective_lr, 6)
    0.02
    """
    adapter = adapter_for(None, optimizer)
    entry = find_entry(adapter.entries(optimizer), optimizer, name)
    gi = entry.group_index
    lr = adapter.group_lr(entry)
    initial = adapter.initial_lr(entry)
    factor, note = _scheduler_factor(lr, initial)
    lr_mult = adapter.lr_mult(entry.param)
    effective = adapter.effective_lr(entry)
    decay, kinds, coeff = decay_text(adapter, entry)
    clip, clip_text = _clip_text(adapter, entry)
    clipped = clip is not None and clip.applies
    reasons = _frozen_reasons(adapter, entry)
    status = (text("diagnose.lr.frozen", reasons=text("diagnose.evidence_sep").join(reasons)) if reasons
              else text("diagnose.lr.trainable"))
    rows: list[dict[str, Any]]
    rows = [{"step": text("diagnose.lr.group", group=gi), "value": lr, "note": note},
            {"step": text("diagnose.lr.mult"), "value": lr_mult,
             "note": "" if lr_mult is not None else
             text("diagnose.lr.no_mult", framework=adapter.display_name)},
            {"step": text("diagnose.lr.effective"), "value": effective, "note": ""},
            {"step": text("diagnose.lr.decay"), "value": decay, "note": ""},
            {"step": text("diagnose.lr.clipping"), "value": clip_text, "note": ""},
            {"step": text("diagnose.lr.status"), "value": status, "note": ""}]
    data = {"name": entry.name, "optimizer": type(entry.opt).__name__,
            "opt_index": entry.opt_index, "group": gi, "group_lr": lr,
            "initial_lr": float(initial) if initial is not None else None,
            "scheduler_factor": factor, "lr_mult": lr_mult, "effective_lr": effective,
            "decay": decay, "decay_kinds": kinds, "decay_coeff": coeff,
            "clip": clip.description if clipped else None,
            "clipped": clipped, "frozen": bool(reasons), "frozen_reasons": reasons,
            "status": status}
    return LRExplanation(data, rows)


def _scheduler_factor(lr: float, initial: Any) -> tuple[float | None, str]:
    """(lr / initial_lr, a note saying so) when a scheduler changed the group's lr."""
    if initial is not None and float(initial) != lr and float(initial) != 0:
        factor = lr / float(initial)
        return factor, text("diagnose.lr.scheduler", initial=cell_text(initial), factor=cell_text(factor))
    return None, ""


def _clip_text(adapter: Adapter, entry: Entry) -> tuple[Any, str]:
    """The optimizer's clip for this parameter (None: none), and which clip object clips this
    gradient (and the last step's scale), or why none does."""
    clip = adapter.clip(entry)
    if clip is None:
        return None, adapter.no_clip_text(entry)
    if not clip.applies:
        return clip, text("diagnose.lr.clip_excluded", clip=clip.description)
    said = text("diagnose.lr.clip", clip=clip.description)
    if clip.last_scale is not None:
        said += text("diagnose.lr.clip_scale", scale=cell_text(clip.last_scale))
    return clip, said


def _frozen_reasons(adapter: Adapter, entry: Entry) -> list[str]:
    """Every reason the parameter cannot move (empty when it is trainable)."""
    reasons = []
    if not adapter.requires_grad(entry.param):
        reasons.append(text("diagnose.lr.reason_requires_grad"))
    if adapter.lr_mult(entry.param) == 0:
        reasons.append(text("diagnose.lr.reason_mult"))
    if adapter.group_lr(entry) == 0:
        reasons.append(text("diagnose.lr.reason_lr", group=entry.group_index))
    return reasons
