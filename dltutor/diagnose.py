"""Diagnose parameter management: what is in the model, what the optimizer does to each
parameter, and why a parameter is (or is not) changing.

Four questions, four functions. Each returns a small report object that prints as aligned plain
text, shows as an HTML table in a notebook, and keeps its answers as plain data (``.rows``, a
list of dicts, and ``to_dict()``) for tests and your own code.

=================================  ===========================================================
:func:`summary`                    every parameter name: shape, count, dtype, requires_grad,
                                   lr_mult, regularizer, need_clip, group, effective lr, ties
:func:`explain_lr`                 how the number that multiplies this gradient is made, which
                                   decay and which clipping apply, frozen or not
:func:`why_not_updating`           a checklist answered from the live objects, and a verdict
:func:`ties`                       the groups of names that share one parameter object
=================================  ===========================================================

>>> import dltutor as dt
>>> from dltutor import nn, optim, diagnose
>>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
>>> net[0].requires_grad_(False)
Linear(in_features=2, out_features=3, bias=True)
>>> opt = optim.SGD(net.named_parameters(), lr=0.1)
>>> net(dt.ones(4, 2)).sum().backward()
>>> diagnose.why_not_updating(net, opt, "0.weight").verdict
'not updating because: requires_grad is False (frozen)'

Nothing here changes the model or the optimizer: every report only reads them.
"""
from __future__ import annotations

import difflib
import html
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Iterator

from . import backend as B
from .autograd.tensor import Tensor
from .optim.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .optim.regularizer import Regularizer

__all__ = ["summary", "explain_lr", "why_not_updating", "ties", "Summary", "LRExplanation",
           "UpdateCheck", "Ties", "UnknownNameError", "CLIPPED_SCALE"]

#: A clip that scales a gradient by less than this is reported as "clipped to near zero".
CLIPPED_SCALE = 1e-3


class UnknownNameError(KeyError):
    """A name that the model or optimizer does not have; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would print the message quoted, on one line
        return str(self.args[0])


# ------------------------------------------------------------------------------------------------
# Formatting: plain text with aligned columns, and escaped HTML
# ------------------------------------------------------------------------------------------------
def _fmt(value: Any, digits: int = 4) -> str:
    """A cell's text: numbers short (0.1 * 0.1 prints as 0.01), None as '-', lists joined.

    Four significant digits hide float32 rounding in a single pass; a value derived from
    several float32 results (an estimate) gets fewer, so it prints the same on every CPU.
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        text = f"{float(value):.{digits}g}"
        return text + ".0" if text.lstrip("-").isdigit() else text
    if isinstance(value, (list, tuple)) and not value:
        return "-" if isinstance(value, list) else "()"
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _text_table(headers: list[str], cells: list[list[str]], indent: str = "  ") -> list[str]:
    """Left-aligned columns separated by two spaces; every column starts at the same place."""
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths))).rstrip()

    return [line(headers), line(["-" * len(h) for h in headers])] + [line(r) for r in cells]


def _html_table(title: str, headers: list[str], cells: list[list[str]], footer: list[str],
                row_styles: list[str] | None = None) -> str:
    esc = html.escape
    parts = ['<div class="dltutor-diagnose">']
    if title:
        parts.append(f"<p><b>{esc(title)}</b></p>")
    parts.append("<table>")
    parts.append("<thead><tr>" + "".join(f'<th style="text-align:left">{esc(h)}</th>'
                                         for h in headers) + "</tr></thead>")
    parts.append("<tbody>")
    for i, row in enumerate(cells):
        style = row_styles[i] if row_styles else ""
        attr = f' style="{style}"' if style else ""
        parts.append(f"<tr{attr}>" + "".join(
            f'<td style="text-align:left"><code>{esc(c)}</code></td>' for c in row) + "</tr>")
    parts.append("</tbody></table>")
    for text in footer:
        parts.append(f"<p>{esc(text)}</p>")
    parts.append("</div>")
    return "\n".join(parts)


class _Report:
    """Shared printing: a title, a table built from ``rows`` and ``columns``, footer lines."""

    title: str = ""
    columns: list[tuple[str, str]] = []  # (key in each row, header)
    rows: list[dict[str, Any]]
    empty_text = "(nothing to show)"

    def _footer(self) -> list[str]:
        return []

    def _cells(self) -> list[list[str]]:
        return [[_fmt(row[key]) for key, _ in self.columns] for row in self.rows]

    def _row_styles(self) -> list[str] | None:
        return None

    def __repr__(self) -> str:
        lines = [self.title] if self.title else []
        if self.rows:
            lines += _text_table([h for _, h in self.columns], self._cells())
        else:
            lines.append("  " + self.empty_text)
        return "\n".join(lines + self._footer())

    def _repr_html_(self) -> str:
        if not self.rows:
            return _html_table(self.title, [self.empty_text], [], self._footer())
        return _html_table(self.title, [h for _, h in self.columns], self._cells(),
                           self._footer(), self._row_styles())


# ------------------------------------------------------------------------------------------------
# Finding parameters in an optimizer (plain or MultiOptimizer)
# ------------------------------------------------------------------------------------------------
@dataclass
class _Entry:
    """One parameter as an optimizer sees it."""

    name: str            # the optimizer's name for it ("0.weight", or "#i" by position)
    param: Tensor
    group: dict
    group_index: int     # global: the index in optimizer.param_groups (MultiOptimizer too)
    opt: Any             # the optimizer that steps it (an inner one for a MultiOptimizer)
    opt_index: int | None  # which inner optimizer of a MultiOptimizer, else None

    @property
    def qualified(self) -> str:
        return self.name if self.opt_index is None else f"opt{self.opt_index}/{self.name}"

    @property
    def where(self) -> str:
        text = f"group {self.group_index}"
        if self.opt_index is not None:
            text += f" (optimizer {self.opt_index}: {type(self.opt).__name__})"
        return text


def _entries(optimizer: Any) -> list[_Entry]:
    if hasattr(optimizer, "optimizers"):
        inner = list(optimizer.optimizers)
        multi = True
    elif hasattr(optimizer, "named_params") and hasattr(optimizer, "param_groups"):
        inner = [optimizer]
        multi = False
    else:
        raise TypeError(f"expected an optimizer (e.g. optim.SGD(model.named_parameters(), lr=0.1))"
                        f" or an optim.MultiOptimizer, got {type(optimizer).__name__}")
    out, offset = [], 0
    for k, opt in enumerate(inner):
        index_of = {id(g): offset + i for i, g in enumerate(opt.param_groups)}
        for name, param, group in opt.named_params():
            out.append(_Entry(name, param, group, index_of[id(group)], opt, k if multi else None))
        offset += len(opt.param_groups)
    return out


def _by_param(entries: list[_Entry]) -> dict[int, _Entry]:
    return {id(e.param): e for e in entries}


def _unknown(kind: str, name: Any, known: list[str], hint: str = "") -> UnknownNameError:
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
    lines = [f"{kind} has no parameter named {name!r}."]
    if close:
        lines.append("Did you mean: " + ", ".join(map(repr, close)) + "?")
    shown = known if len(known) <= 30 else known[:30] + [f"... ({len(known) - 30} more)"]
    lines.append("Its names: " + (", ".join(map(repr, shown)) if shown else "none"))
    if hint:
        lines.append(hint)
    return UnknownNameError("\n".join(lines))


def _find_entry(optimizer: Any, name: Any) -> _Entry:
    entries = _entries(optimizer)
    if isinstance(name, Tensor):
        entry = _by_param(entries).get(id(name))
        if entry is None:
            raise UnknownNameError(f"this parameter (shape {tuple(name.shape)}) is not in "
                                   f"{type(optimizer).__name__}: the optimizer never updates it")
        return entry
    exact = [e for e in entries if e.qualified == name]
    if not exact:
        exact = [e for e in entries if e.name == name]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise UnknownNameError(f"{name!r} names parameters in several optimizers of the "
                               "MultiOptimizer; say which one: "
                               + ", ".join(repr(e.qualified) for e in exact))
    multi = any(e.opt_index is not None for e in entries)
    known = [e.qualified if multi else e.name for e in entries]
    hint = ""
    if any(e.name.startswith("#") for e in entries):
        hint = ("Parameters given without names are called '#0', '#1', ... by position; "
                "pass model.named_parameters() to the optimizer to use the model's names.")
    raise _unknown(type(optimizer).__name__, name, known, hint)


# ------------------------------------------------------------------------------------------------
# summary
# ------------------------------------------------------------------------------------------------
class Summary(_Report):
    """The table :func:`summary` returns: ``.rows`` (one dict per parameter name) and
    ``.totals`` (``tensors``, ``names``, ``total``, ``trainable``, ``frozen``)."""

    def __init__(self, rows: list[dict[str, Any]], totals: dict[str, int], with_opt: bool,
                 multi: bool, title: str, outside: list[str]):
        self.rows, self.totals, self.title = rows, totals, title
        self.outside = outside
        cols = [("name", "name"), ("shape", "shape"), ("count", "count"), ("dtype", "dtype"),
                ("requires_grad", "requires_grad"), ("lr_mult", "lr_mult"),
                ("regularizer", "regularizer"), ("need_clip", "need_clip")]
        if multi:
            cols.append(("optimizer", "optimizer"))
        if with_opt:
            cols += [("group", "group"), ("effective_lr", "effective_lr")]
        cols.append(("tied_to", "tied_to"))
        self.columns = cols
        self.empty_text = "this model has no parameters"

    def _footer(self) -> list[str]:
        t = self.totals
        lines = [f"total: {t['total']:,} parameters in {t['tensors']} tensor(s), each counted once"
                 + (f" ({t['names']} names: tied ones are listed under every alias)"
                    if t["names"] != t["tensors"] else ""),
                 f"trainable (requires_grad=True): {t['trainable']:,}    "
                 f"frozen (requires_grad=False): {t['frozen']:,}"]
        if t.get("not_in_optimizer"):
            lines.append(f"not in the optimizer (never updated): {t['not_in_optimizer']:,} "
                         f"parameters in {t['tensors_not_in_optimizer']} tensor(s)")
        if self.outside:
            lines.append("in the optimizer but not in this model: " + ", ".join(self.outside))
        return lines

    def to_dict(self) -> dict[str, Any]:
        """``{"rows": [...], "totals": {...}}`` as plain Python data."""
        return {"rows": [dict(r) for r in self.rows], "totals": dict(self.totals),
                "in_optimizer_not_in_model": list(self.outside)}


def summary(model: Any, optimizer: Any = None) -> Summary:
    """What parameters does this model have, and what will the optimizer do with each?

    One row per parameter NAME: a tied parameter (one object reachable under several names)
    gets a row for every alias, and ``tied_to`` lists the other names. The totals count each
    parameter object once. ``count`` is the number of scalars in the tensor.

    With an ``optimizer``, two more columns say which ``group`` each parameter is in and its
    ``effective_lr`` (group lr after schedulers x ``lr_mult``); both are ``-`` (None in
    ``.rows``) for a parameter the optimizer does not hold, which it never updates.
    For a :class:`~dltutor.optim.MultiOptimizer` the group index is global, the index into
    ``multi.param_groups`` (the list its schedulers drive), and an ``optimizer`` column says
    which inner optimizer (``"1 Adam"``) steps the parameter.

    >>> from dltutor import nn, optim
    >>> shared = nn.Linear(2, 2)
    >>> net = nn.Sequential(shared, nn.ReLU(), shared)
    >>> net[0].bias.lr_mult = 2.0
    >>> opt = optim.SGD(net.named_parameters(), lr=0.1)
    >>> s = summary(net, opt)
    >>> s
    summary of Sequential with SGD
      name      shape   count  dtype    requires_grad  lr_mult  regularizer  need_clip  group  effective_lr  tied_to
      ----      -----   -----  -----    -------------  -------  -----------  ---------  -----  ------------  -------
      0.weight  (2, 2)  4      float32  True           1.0      -            True       0      0.1           2.weight
      0.bias    (2,)    2      float32  True           2.0      -            True       0      0.2           2.bias
      2.weight  (2, 2)  4      float32  True           1.0      -            True       0      0.1           0.weight
      2.bias    (2,)    2      float32  True           2.0      -            True       0      0.2           0.bias
    total: 6 parameters in 2 tensor(s), each counted once (4 names: tied ones are listed under every alias)
    trainable (requires_grad=True): 6    frozen (requires_grad=False): 0
    >>> s.totals["total"], s.rows[2]["tied_to"]
    (6, ['0.weight'])
    """
    named = list(model.named_parameters(remove_duplicate=False))
    names_of: dict[int, list[str]] = {}
    for name, p in named:
        names_of.setdefault(id(p), []).append(name)
    entries = _entries(optimizer) if optimizer is not None else []
    by_param = _by_param(entries)
    multi = any(e.opt_index is not None for e in entries)
    rows = []
    for name, p in named:
        reg = getattr(p, "regularizer", None)
        row = {"name": name, "shape": tuple(p.shape), "count": int(p.numel()),
               "dtype": str(p.dtype), "requires_grad": bool(p.requires_grad),
               "lr_mult": float(getattr(p, "lr_mult", 1.0)),
               "regularizer": repr(reg) if reg is not None else None,
               "need_clip": bool(getattr(p, "need_clip", True))}
        if optimizer is not None:
            entry = by_param.get(id(p))
            if multi:
                row["optimizer"] = (f"{entry.opt_index} {type(entry.opt).__name__}"
                                    if entry is not None else None)
            row["group"] = entry.group_index if entry is not None else None
            row["effective_lr"] = (float(entry.opt.effective_lr(p, entry.group))
                                   if entry is not None else None)
        row["tied_to"] = [n for n in names_of[id(p)] if n != name]
        rows.append(row)
    unique = {id(p): p for _, p in named}
    totals = {"tensors": len(unique), "names": len(named),
              "total": sum(int(p.numel()) for p in unique.values()),
              "trainable": sum(int(p.numel()) for p in unique.values() if p.requires_grad),
              "frozen": sum(int(p.numel()) for p in unique.values() if not p.requires_grad)}
    outside: list[str] = []
    title = f"summary of {type(model).__name__}"
    if optimizer is not None:
        left_out = [p for k, p in unique.items() if k not in by_param]
        totals["not_in_optimizer"] = sum(int(p.numel()) for p in left_out)
        totals["tensors_not_in_optimizer"] = len(left_out)
        outside = [e.qualified for e in entries if id(e.param) not in unique]
        title += f" with {type(optimizer).__name__}"
    return Summary(rows, totals, optimizer is not None, multi, title, outside)


# ------------------------------------------------------------------------------------------------
# explain_lr
# ------------------------------------------------------------------------------------------------
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


def _clip_text(entry: _Entry) -> tuple[str, bool]:
    clip = getattr(entry.opt, "grad_clip", None)
    if clip is None:
        return f"none ({type(entry.opt).__name__} has no grad_clip)", False
    if not getattr(entry.param, "need_clip", True):
        return f"excluded: need_clip=False (the optimizer's {clip!r} skips it)", False
    text = f"{clip!r} (need_clip=True)"
    scale = getattr(clip, "last_scale", None)
    if scale is not None:
        text += f"; the last step scaled the clipped gradients by {_fmt(scale)}"
    return text, True


def _frozen_reasons(entry: _Entry) -> list[str]:
    reasons = []
    if not entry.param.requires_grad:
        reasons.append("requires_grad=False (no gradient: step skips it)")
    if getattr(entry.param, "lr_mult", 1.0) == 0:
        reasons.append("lr_mult=0")
    if entry.group["lr"] == 0:
        reasons.append(f"group {entry.group_index} lr is 0")
    return reasons


class LRExplanation(_Report):
    """What :func:`explain_lr` returns: a short derivation. ``.rows`` holds its lines
    (``step``, ``value``, ``note``); ``to_dict()`` the numbers and codes."""

    columns = [("step", "step"), ("value", "value"), ("note", "note")]

    def __init__(self, data: dict[str, Any], rows: list[dict[str, Any]]):
        self.data, self.rows = data, rows
        self.title = data["name"] if data["opt_index"] is None else \
            f"{data['name']}  (optimizer {data['opt_index']}: {data['optimizer']})"

    def __getattr__(self, key: str) -> Any:
        data = self.__dict__.get("data", {})
        if key in data:
            return data[key]
        raise AttributeError(f"LRExplanation has no attribute {key!r}; it has {sorted(data)}")

    def __repr__(self) -> str:
        # Label and value columns line up; a note follows the value where there is one.
        label_w = max(len(r["step"]) for r in self.rows)
        value_w = max((len(_fmt(r["value"])) for r in self.rows if r["note"]), default=0)
        lines = [self.title]
        for r in self.rows:
            value = _fmt(r["value"])
            text = "  " + r["step"].ljust(label_w) + "  "
            text += (value.ljust(value_w) + "  " + r["note"]) if r["note"] else value
            lines.append(text.rstrip())
        return "\n".join(lines)

    def _cells(self) -> list[list[str]]:
        return [[r["step"], _fmt(r["value"]), r["note"]] for r in self.rows]

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
    entry = _find_entry(optimizer, name)
    param, group, gi = entry.param, entry.group, entry.group_index
    lr = float(group["lr"])
    initial = group.get("initial_lr")
    factor = None
    note = ""
    if initial is not None and float(initial) != lr and float(initial) != 0:
        factor = lr / float(initial)
        note = f"(initial {_fmt(initial)} x scheduler factor {_fmt(factor)})"
    lr_mult = float(getattr(param, "lr_mult", 1.0))
    effective = float(entry.opt.effective_lr(param, group))
    decay, kinds, coeff = _decay_text(entry)
    clip_text, clipped = _clip_text(entry)
    reasons = _frozen_reasons(entry)
    status = "frozen: " + "; ".join(reasons) if reasons else "trainable"
    rows = [{"step": f"group {gi} lr", "value": lr, "note": note},
            {"step": "x lr_mult", "value": lr_mult, "note": ""},
            {"step": "= effective lr", "value": effective, "note": ""},
            {"step": "decay", "value": decay, "note": ""},
            {"step": "clipping", "value": clip_text, "note": ""},
            {"step": "status", "value": status, "note": ""}]
    data = {"name": entry.name, "optimizer": type(entry.opt).__name__,
            "opt_index": entry.opt_index, "group": gi, "group_lr": lr,
            "initial_lr": float(initial) if initial is not None else None,
            "scheduler_factor": factor, "lr_mult": lr_mult, "effective_lr": effective,
            "decay": decay, "decay_kinds": kinds, "decay_coeff": coeff,
            "clip": repr(getattr(entry.opt, "grad_clip", None)) if clipped else None,
            "clipped": clipped, "frozen": bool(reasons), "frozen_reasons": reasons,
            "status": status}
    return LRExplanation(data, rows)


# ------------------------------------------------------------------------------------------------
# why_not_updating
# ------------------------------------------------------------------------------------------------
def _array_stats(array: Any) -> tuple[bool, float, float]:
    """(any non-zero, L2 norm, largest absolute value) of a backend array."""
    xp = B.get_array_module(array)
    flat = array.reshape(-1)
    if flat.size == 0:
        return False, 0.0, 0.0
    absmax = float(xp.abs(flat).max())
    norm = float(xp.linalg.norm(flat))
    return absmax > 0, norm, absmax


def _reaches(loss: Any, param: Tensor) -> bool | None:
    """True if ``param`` is an input of some Function reachable from ``loss``; False if not;
    None if part of the graph was freed by backward (then it cannot tell)."""
    if not isinstance(loss, Tensor):
        raise TypeError(f"why_not_updating: loss must be the loss Tensor (before backward), got "
                        f"{type(loss).__name__}")
    if loss is param:
        return True
    fn = loss.grad_fn
    if fn is None:
        return False
    stack, seen, freed = [fn], {id(fn)}, False
    while stack:
        fn = stack.pop()
        inputs = fn.inputs
        if inputs is None:
            freed = True
            continue
        for t in inputs:
            if t is param:
                return True
            child = t.grad_fn
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return None if freed else False


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


_VERDICTS = {
    "not_in_optimizer": "it is not in the optimizer (optimizer.step() never sees it)",
    "requires_grad_false": "requires_grad is False (frozen)",
    "no_grad": "its grad is None, so step() skips it",
    "not_reached": "the loss does not reach it (not used, or cut off by detach()/no_grad "
                   "upstream), so it gets no gradient",
    "zero_grad": "its gradient is all zeros and nothing else (momentum, weight decay) moves it",
    "lr_zero": "its group's lr is 0",
    "lr_mult_zero": "its lr_mult is 0",
    "clipped_to_zero": "gradient clipping scales its gradient to nearly zero",
    "bn_stats_frozen": "the BatchNorm does not update its running statistics",
    "not_a_parameter": "it is a buffer, not a parameter: no optimizer updates it",
}


class UpdateCheck(_Report):
    """What :func:`why_not_updating` returns: ``.rows`` (check, answer, status), ``.verdict``,
    ``.cause`` (a short code, None when it should update) and ``.will_move`` (whether the next
    ``optimizer.step()`` changes it, as far as the checks can tell)."""

    columns = [("check", "check"), ("answer", "answer"), ("status", "status")]

    def __init__(self, name: str, rows: list[dict[str, Any]], cause: str | None, verdict: str,
                 will_move: bool | None):
        self.name, self.rows, self.cause, self.verdict = name, rows, cause, verdict
        self.will_move = will_move
        self.title = f"why is {name!r} (not) updating?"

    def _footer(self) -> list[str]:
        return ["verdict: " + self.verdict]

    def _row_styles(self) -> list[str]:
        colour = {"problem": "color:#b00020", "warning": "color:#a05a00"}
        return [colour.get(r["status"], "") for r in self.rows]

    @property
    def problems(self) -> list[dict[str, Any]]:
        """The rows whose status is "problem"."""
        return [r for r in self.rows if r["status"] == "problem"]

    def to_dict(self) -> dict[str, Any]:
        """The checklist, cause and verdict as plain data."""
        return {"name": self.name, "rows": [dict(r) for r in self.rows], "cause": self.cause,
                "verdict": self.verdict, "will_move": self.will_move}


def _row(check: str, answer: str, status: str, cause: str | None = None) -> dict[str, Any]:
    return {"check": check, "answer": answer, "status": status, "cause": cause}


def _buffer_check(model: Any, name: str, buffer: Tensor) -> UpdateCheck:
    path, _, attr = name.rpartition(".")
    module = model.get_submodule(path)
    kind = type(module).__name__
    where = f"{kind} at {path!r}" if path else kind
    rows = [_row("a parameter?", f"no: a buffer of {where} (state, not learned); optimizers "
                 "never see it", "ok")]
    bn = hasattr(module, "uses_batch_stats") and attr in ("running_mean", "running_var",
                                                          "num_batches_tracked")
    if not bn:
        rows.append(_row("who updates it?", f"only {kind}'s own code in forward", "problem",
                         "not_a_parameter"))
        return UpdateCheck(name, rows, "not_a_parameter",
                           "not updating because: " + _VERDICTS["not_a_parameter"], None)
    ugs = module.use_global_stats
    rows.append(_row("module mode", "training" if module.training else "eval (training=False)",
                     "ok" if module.training or ugs is not None else "problem",
                     None if module.training or ugs is not None else "bn_stats_frozen"))
    rows.append(_row("use_global_stats", f"{ugs}" + {
        None: " (follows train()/eval())",
        True: ": always uses and never updates the running statistics",
        False: ": always normalizes with the batch's statistics"}[ugs],
        "problem" if ugs is True else "ok", "bn_stats_frozen" if ugs is True else None))
    updates = module.uses_batch_stats() and module.training
    if updates:
        rows.append(_row("running stats", "updated by every forward: running = "
                         f"{1 - module.momentum:g}*running + {module.momentum:g}*batch", "ok"))
        return UpdateCheck(name, rows, None,
                           f"should update: {where} is in training mode and uses batch "
                           f"statistics, so the next forward updates {attr} (a buffer: the "
                           "optimizer does not touch it)", True)
    if ugs is True:
        why = f"{where} has use_global_stats=True"
    elif ugs is None:
        why = f"{where} is in eval mode; call .train() to update them"
    else:
        why = f"{where} is in eval mode; use_global_stats=False still normalizes with batch " \
              "statistics but only training mode updates the running ones"
        rows[1].update(status="problem", cause="bn_stats_frozen")
    rows.append(_row("running stats", "frozen: forward uses them but does not change them",
                     "problem", "bn_stats_frozen"))
    return UpdateCheck(name, rows, "bn_stats_frozen",
                       f"not updating because: {_VERDICTS['bn_stats_frozen']} ({why})", False)


def why_not_updating(model: Any, optimizer: Any, name: str, loss: Any = None) -> UpdateCheck:
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

    For a BatchNorm buffer (``"1.running_mean"``) it checks train/eval mode and
    ``use_global_stats`` instead: buffers are not parameters.

    ``.cause`` is the first problem found: ``"not_in_optimizer"``, ``"requires_grad_false"``,
    ``"no_grad"``, ``"not_reached"``, ``"zero_grad"``, ``"lr_zero"``, ``"lr_mult_zero"``,
    ``"clipped_to_zero"``, ``"bn_stats_frozen"``, ``"not_a_parameter"``; or, when the gradient
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
    params = dict(model.named_parameters(remove_duplicate=False))
    if name not in params:
        buffers = dict(model.named_buffers(remove_duplicate=False))
        if name in buffers:
            return _buffer_check(model, name, buffers[name])
        raise _unknown(type(model).__name__, name, list(params) + list(buffers))
    param = params[name]
    entries = _entries(optimizer) if optimizer is not None else []
    entry = _by_param(entries).get(id(param))
    rows: list[dict[str, Any]] = []

    # 1. in the optimizer?
    if optimizer is None:
        rows.append(_row("in the optimizer?", "not checked (no optimizer given)", "n/a"))
    elif entry is None:
        same_name = [e for e in entries if e.name == name]
        answer = "no: optimizer.step() never sees it"
        if same_name:
            answer += (f" (the optimizer holds ANOTHER object named {name!r}: was the model or "
                       "the parameter replaced after the optimizer was built?)")
        rows.append(_row("in the optimizer?", answer, "problem", "not_in_optimizer"))
    else:
        alias = f" as {entry.name!r}" if entry.name != name else ""
        rows.append(_row("in the optimizer?", f"yes: {entry.where}{alias}", "ok"))

    # 2. requires_grad
    if param.requires_grad:
        rows.append(_row("requires_grad?", "True", "ok"))
    else:
        rows.append(_row("requires_grad?", "False: frozen, backward gives it no gradient",
                         "problem", "requires_grad_false"))

    # 4 (computed first, it refines 3): does the loss reach it?
    reached = _reaches(loss, param) if loss is not None else "skip"

    # 3. gradient
    grad = param.grad
    grad_zero = False
    if grad is None:
        if not param.requires_grad:
            rows.append(_row("gradient", "None (expected: requires_grad is False)", "problem"))
        elif reached is False:
            rows.append(_row("gradient", "None: the loss does not reach it (see next row)",
                             "problem"))
        elif reached is True:
            rows.append(_row("gradient", "None so far, but the loss reaches it: "
                             "loss.backward() will give it one", "ok"))
        else:
            rows.append(_row("gradient", "None: backward has not reached it (not used in the "
                             "loss, cut by detach(), or zero_grad() after backward); step() "
                             "skips it", "problem", "no_grad"))
    else:
        nonzero, norm, _ = _array_stats(grad.data)
        if nonzero:
            rows.append(_row("gradient", f"non-zero (norm {_fmt(norm)})", "ok"))
        else:
            grad_zero = True
            rows.append(_row("gradient", "all zeros (e.g. a dead ReLU, or multiplied by 0): the "
                             "gradient alone does not move it", "problem", "zero_grad"))

    # 4. reached from the loss
    if reached == "skip":
        rows.append(_row("reached from the loss?", "not checked (pass loss=... before calling "
                         "backward, or backward with retain_graph=True)", "n/a"))
    elif reached is True:
        rows.append(_row("reached from the loss?", "yes", "ok"))
    elif reached is False:
        rows.append(_row("reached from the loss?", "no: not used in the loss, or cut off by "
                         "detach() / no_grad() upstream", "problem", "not_reached"))
    else:
        rows.append(_row("reached from the loss?", "cannot tell: graph freed by backward; pass "
                         "the loss before calling backward, or use retain_graph=True",
                         "unknown"))

    # 5. effective lr
    effective = None
    if entry is None:
        rows.append(_row("effective lr", "-", "n/a"))
    else:
        lr, mult = entry.group["lr"], getattr(param, "lr_mult", 1.0)
        effective = float(entry.opt.effective_lr(param, entry.group))
        text = (f"{_fmt(effective)} = group {entry.group_index} lr {_fmt(lr)} x lr_mult "
                f"{_fmt(mult)}")
        if lr == 0:
            rows.append(_row("effective lr", text + ": the group's lr is 0", "problem", "lr_zero"))
        elif mult == 0:
            rows.append(_row("effective lr", text + ": lr_mult is 0", "problem", "lr_mult_zero"))
        elif effective == 0:
            rows.append(_row("effective lr", text, "problem", "lr_zero"))
        else:
            rows.append(_row("effective lr", text, "ok"))

    # 6. clipping
    if entry is None:
        rows.append(_row("clipping", "-", "n/a"))
    else:
        clip = getattr(entry.opt, "grad_clip", None)
        if clip is None:
            rows.append(_row("clipping", "none", "ok"))
        elif not getattr(param, "need_clip", True):
            rows.append(_row("clipping", f"excluded from {clip!r} (need_clip=False)", "ok"))
        else:
            predicted = _predicted_scale(entry, entries)
            last = getattr(clip, "last_scale", None)
            parts = [f"{clip!r}"]
            if predicted is not None:
                parts.append(f"scales this gradient by about {_fmt(predicted, digits=2)}")
            if last is not None:
                parts.append(f"last step's scale {_fmt(last)}")
            scale = predicted if predicted is not None else last
            if scale is not None and scale < CLIPPED_SCALE:
                rows.append(_row("clipping", ", ".join(parts), "problem", "clipped_to_zero"))
            else:
                rows.append(_row("clipping", ", ".join(parts), "ok"))

    # 7, 8. what moves a parameter whose gradient is zero
    movers: list[tuple[str, str]] = []
    if entry is None or not grad_zero:
        why = "-" if entry is None else ("n/a: step() skips a parameter whose grad is None"
                                         if grad is None else "n/a: the gradient is non-zero")
        rows.append(_row("momentum with a zero gradient", why, "n/a"))
        rows.append(_row("weight decay with a zero gradient", why, "n/a"))
    else:
        moving_lr = effective is not None and effective > 0
        state = entry.opt.state.get(param, {}) if hasattr(entry.opt, "state") else {}
        found = []
        for key in ("momentum_buffer", "exp_avg"):
            value = state.get(key)
            if value is not None and hasattr(value, "shape"):
                nonzero, _, absmax = _array_stats(value)
                if nonzero:
                    found.append(f"largest |{key}| {_fmt(absmax)}")
        if found and moving_lr:
            text = "momentum buffer non-zero (" + "; ".join(found) + ")"
            movers.append(("moves_by_momentum", text))
            rows.append(_row("momentum with a zero gradient", "will still move: " + text,
                             "warning"))
        elif found:
            rows.append(_row("momentum with a zero gradient", "non-zero state ("
                             + "; ".join(found) + ") but the effective lr is 0", "ok"))
        else:
            rows.append(_row("momentum with a zero gradient", "no momentum state to move it",
                             "ok"))
        decay, kinds, coeff = _decay_text(entry)
        p_nonzero = _array_stats(param.data)[0]
        applies = bool(kinds) and kinds != ["decoupled_excluded"] and bool(coeff)
        if applies and p_nonzero and moving_lr:
            text = f"weight decay applies ({decay})"
            movers.append(("moves_by_weight_decay", text))
            rows.append(_row("weight decay with a zero gradient", "will still move: " + text,
                             "warning"))
        elif applies and not moving_lr:
            rows.append(_row("weight decay with a zero gradient",
                             "applies, but the effective lr is 0", "ok"))
        elif applies:
            rows.append(_row("weight decay with a zero gradient",
                             "applies, but the parameter is all zeros so it adds nothing", "ok"))
        else:
            rows.append(_row("weight decay with a zero gradient", f"none ({decay})", "ok"))

    if movers:  # a zero gradient is not a problem when something else moves the parameter
        for r in rows:
            if r["cause"] == "zero_grad":
                r.update(status="warning", cause=None)

    # verdict: the first problem in checklist order
    causes = [r["cause"] for r in rows if r["status"] == "problem" and r["cause"]]
    if causes:
        cause = causes[0]
        detail = _VERDICTS[cause]
        if cause in ("lr_zero", "lr_mult_zero", "clipped_to_zero"):
            detail += " (" + next(r["answer"] for r in rows if r["cause"] == cause) + ")"
        return UpdateCheck(name, rows, cause, "not updating because: " + detail, False)
    if movers:
        return UpdateCheck(name, rows, movers[0][0], "will still move although its gradient is "
                           "zero: "
                           + "; ".join(text for _, text in movers), True)
    evidence = [r["check"].rstrip("?") + ": " + r["answer"] for r in rows if r["status"] == "ok"]
    if optimizer is None:
        return UpdateCheck(name, rows, None, "should update, if an optimizer holds it: "
                           + "; ".join(evidence), None)
    return UpdateCheck(name, rows, None, "should update: " + "; ".join(evidence), True)


# ------------------------------------------------------------------------------------------------
# ties
# ------------------------------------------------------------------------------------------------
class Ties(_Report):
    """What :func:`ties` returns: ``.groups`` (a list of lists of names) and ``.rows``."""

    columns = [("names", "names"), ("shape", "shape"), ("count", "count")]
    empty_text = "no tied parameters: every parameter has exactly one name"

    def __init__(self, groups: list[list[str]], rows: list[dict[str, Any]], title: str):
        self.groups, self.rows, self.title = groups, rows, title

    def _cells(self) -> list[list[str]]:
        return [[" = ".join(r["names"]), _fmt(r["shape"]), _fmt(r["count"])] for r in self.rows]

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self) -> Iterator[list[str]]:
        return iter(self.groups)

    def to_dict(self) -> dict[str, Any]:
        """``{"groups": [[names...], ...]}``."""
        return {"groups": [list(g) for g in self.groups]}


def ties(model: Any) -> Ties:
    """Which names in this model are one and the same parameter object?

    Returns the groups of two or more names that share a parameter, in the order the
    parameters are first reached. Each group is one tensor: it is stored once, counted once,
    updated once per step, and its gradient is the sum over every place it is used.

    >>> from dltutor import nn
    >>> shared = nn.Linear(3, 3)
    >>> net = nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(3, 1))
    >>> t = ties(net)
    >>> t.groups
    [['0.weight', '2.weight'], ['0.bias', '2.bias']]
    >>> t
    tied parameters of Sequential
      names                 shape   count
      -----                 -----   -----
      0.weight = 2.weight   (3, 3)  9
      0.bias = 2.bias       (3,)    3
    """
    names_of: dict[int, list[str]] = {}
    objects: dict[int, Tensor] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names_of.setdefault(id(p), []).append(name)
        objects[id(p)] = p
    tied = [(objects[key], names) for key, names in names_of.items() if len(names) > 1]
    groups = [names for _, names in tied]
    rows = [{"names": list(names), "shape": tuple(p.shape), "count": int(p.numel())}
            for p, names in tied]
    return Ties(groups, rows, f"tied parameters of {type(model).__name__}")
