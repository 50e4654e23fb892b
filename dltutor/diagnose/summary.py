"""summary(model, optimizer=None): one row per parameter name, with what decides its fate."""
from __future__ import annotations

from typing import Any

from ..i18n import text
from .adapters import Adapter, adapter_for
from .data_parallel import data_parallel_view, summary_lines
from .lookup import entries_by_param, Entry
from .report import Report


class Summary(Report):
    """The table :func:`summary` returns: ``.rows`` (one dict per parameter name) and
    ``.totals`` (``tensors``, ``names``, ``total``, ``trainable``, ``frozen``).

    >>> from dltutor import nn
    >>> s = summary(nn.Linear(3, 2))
    >>> s.totals["total"], [row["name"] for row in s.rows]
    (8, ['weight', 'bias'])
    """

    def __init__(self, rows: list[dict[str, Any]], totals: dict[str, int], with_opt: bool,
                 multi: bool, title: str, outside: list[str],
                 data_parallel: list[str] | None = None):
        self.rows, self.totals, self.title = rows, totals, title
        self.outside = outside
        self.data_parallel = data_parallel or []     # the lines about the processes
        cols = ["name", "shape", "count", "dtype", "requires_grad", "lr_mult", "regularizer",
                "need_clip"]
        if multi:
            cols.append("optimizer")
        if with_opt:
            cols += ["group", "effective_lr"]
        if rows and "in_reducer" in rows[0]:
            cols.append("in_reducer")
        cols.append("tied_to")
        self.columns = cols
        self.empty_text = text("diagnose.summary.empty")

    def _footer(self) -> list[str]:
        t = self.totals
        lines = [text("diagnose.summary.total", total=f"{t['total']:,}", tensors=t["tensors"])
                 + (text("diagnose.summary.aliases", names=t["names"])
                    if t["names"] != t["tensors"] else ""),
                 text("diagnose.summary.trainable", trainable=f"{t['trainable']:,}",
                      frozen=f"{t['frozen']:,}")]
        if t.get("not_in_optimizer"):
            lines.append(text("diagnose.summary.left_out", count=f"{t['not_in_optimizer']:,}",
                              tensors=t["tensors_not_in_optimizer"]))
        if self.outside:
            lines.append(text("diagnose.summary.outside", names=text("diagnose.list_sep").join(self.outside)))
        return lines + self.data_parallel

    def to_dict(self) -> dict[str, Any]:
        """``{"rows": [...], "totals": {...}}`` as plain Python data."""
        return {"rows": [dict(r) for r in self.rows], "totals": dict(self.totals),
                "in_optimizer_not_in_model": list(self.outside),
                "data_parallel": list(self.data_parallel)}


def summary(model: Any, optimizer: Any = None, *, check_replicas: bool = False) -> Summary:
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

    For a :class:`~dltutor.distributed.DistributedDataParallel` (or the module one wraps) an
    ``in_reducer`` column says whose gradient backward averages over the processes, and the
    footer names the parameters outside the reducer, those the last iteration did not reach,
    and (``check_replicas=True``, a collective: every process must call) those that differ
    across the processes.

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
    adapter = adapter_for(model, optimizer)
    named = adapter.named_parameters(model)
    view = (data_parallel_view(model, check_replicas) if adapter.framework == "dltutor"
            else None)
    names_of: dict[int, list[str]] = {}
    for name, p in named:
        names_of.setdefault(id(p), []).append(name)
    entries = adapter.entries(optimizer) if optimizer is not None else []
    by_param = entries_by_param(entries)
    multi = any(e.opt_index is not None for e in entries)
    rows = []
    for name, p in named:
        row = _parameter_columns(adapter, name, p)
        if optimizer is not None:
            row.update(_optimizer_columns(adapter, by_param.get(id(p)), multi))
        if view is not None and view.ddp is not None:
            row["in_reducer"] = view.in_reducer(p)
        row["tied_to"] = [n for n in names_of[id(p)] if n != name]
        rows.append(row)
    unique = {id(p): p for _, p in named}
    totals = {"tensors": len(unique), "names": len(named), **_totals(adapter, unique.values())}
    outside: list[str] = []
    title = text("diagnose.summary.title", model=type(model).__name__)
    if optimizer is not None:
        left_out = [p for k, p in unique.items() if k not in by_param]
        totals["not_in_optimizer"] = sum(adapter.count(p) for p in left_out)
        totals["tensors_not_in_optimizer"] = len(left_out)
        outside = [e.qualified for e in entries if id(e.param) not in unique]
        title = text("diagnose.summary.title_with", model=type(model).__name__,
                     optimizer=type(optimizer).__name__)
    return Summary(rows, totals, optimizer is not None, multi, title, outside,
                   summary_lines(view, named))


def _parameter_columns(adapter: Adapter, name: str, p: Any) -> dict[str, Any]:
    """What the parameter itself says: shape, size, dtype and its per-parameter attributes
    (None where the framework has no such attribute: PyTorch's lr_mult, for one)."""
    reg = adapter.regularizer(p)
    return {"name": name, "shape": adapter.shape(p), "count": adapter.count(p),
            "dtype": adapter.dtype(p), "requires_grad": adapter.requires_grad(p),
            "lr_mult": adapter.lr_mult(p),
            "regularizer": repr(reg) if reg is not None else None,
            "need_clip": adapter.need_clip(p)}


def _optimizer_columns(adapter: Adapter, entry: Entry | None, multi: bool) -> dict[str, Any]:
    """What the optimizer says: which optimizer and group hold it, and its effective lr."""
    row: dict[str, Any] = {}
    if multi:
        row["optimizer"] = (f"{entry.opt_index} {type(entry.opt).__name__}"
                            if entry is not None else None)
    row["group"] = entry.group_index if entry is not None else None
    row["effective_lr"] = adapter.effective_lr(entry) if entry is not None else None
    return row


def _totals(adapter: Adapter, params: Any) -> dict[str, int]:
    """Counts over the parameter objects, each counted once however many names it has."""
    counts = [(adapter.count(p), adapter.requires_grad(p)) for p in params]
    return {"total": sum(n for n, _ in counts),
            "trainable": sum(n for n, trainable in counts if trainable),
            "frozen": sum(n for n, trainable in counts if not trainable)}
