"""A model trained data-parallel: what DistributedDataParallel does with each parameter.

When the model given to :func:`~dltutor.diagnose.why_not_updating` or
:func:`~dltutor.diagnose.summary` is a :class:`~dltutor.distributed.DistributedDataParallel`,
or the module one wraps, three more questions matter, and this module answers them:

(a) Is the parameter in the reducer? Only parameters with ``requires_grad=True`` when the model
    was wrapped are; one unfrozen later trains in each process on its own gradient, never
    averaged, and the replicas drift apart.
(b) Did the last iteration reach it? With ``find_unused_parameters=True`` an unreached
    parameter is skipped (no gradient, no update); without it the next forward stops.
(c) Is it the same in every process? Only when asked (``check_replicas=True``): the answer is
    :func:`dltutor.distributed.check_replicas`, a collective, so every process must make the
    same diagnose call.

The wrapper of a module is found through its parameters' post-accumulate hooks (the reducer
hooks every parameter it averages), so nothing has to remember which model was wrapped.
``dltutor.distributed`` never imports ``dltutor.diagnose``: the imports go one way.

>>> import dltutor.distributed as dist
>>> from dltutor import nn
>>> dist.init_process_group("mpi")
>>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
>>> _ = net[0].requires_grad_(False)
>>> ddp = dist.DistributedDataParallel(net)
>>> _ = net[0].requires_grad_(True)                   # unfrozen after wrapping
>>> view = data_parallel_view(net)
>>> [name for name, p in net.named_parameters() if not view.in_reducer(p)]
['0.weight', '0.bias']
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..autograd import engine
from ..distributed import DistributedDataParallel, ReplicaReport, check_replicas
from ..distributed import get_world_size, is_initialized
from ..i18n import text
from .update_check import checklist_row

#: The causes that leave the parameter moving, but differently in each process.
APART_CAUSES = ("outside_reducer", "not_averaged", "differs_across_replicas")


@dataclass
class DataParallelView:
    """What the diagnostics know about one model's data-parallel training: its wrapper (None
    when only the replicas were compared), the ids of the parameters in the reducer and of
    those the last iteration did not reach, and the replica comparison (None unless asked)."""

    ddp: DistributedDataParallel | None
    world_size: int
    reduced: set[int]
    unreached: set[int]
    replicas: ReplicaReport | None

    def in_reducer(self, param: Any) -> bool:
        """Whether backward averages ``param``'s gradient over the processes."""
        return id(param) in self.reduced


def data_parallel_view(model: Any, compare_replicas: bool = False) -> DataParallelView | None:
    """The view of ``model`` (a DistributedDataParallel, or a module inside one), or None
    when it is not trained data-parallel and no comparison was asked for.
    ``compare_replicas`` runs :func:`~dltutor.distributed.check_replicas` (a collective)."""
    ddp = wrapper_of(model)
    if ddp is None and not compare_replicas:
        return None
    if not is_initialized():
        raise RuntimeError("check_replicas=True compares the processes of the group: call "
                           "dist.init_process_group('mpi') first (in every process)")
    replicas = check_replicas(model) if compare_replicas else None
    if ddp is None:
        return DataParallelView(None, get_world_size(), set(), set(), replicas)
    params = dict(ddp.module.named_parameters())
    reduced = {id(p) for p in params.values() if _hooked_by(p, ddp)}
    unreached = {id(params[name]) for name in ddp.unreached_parameters}
    return DataParallelView(ddp, get_world_size(), reduced, unreached, replicas)


def wrapper_of(model: Any) -> DistributedDataParallel | None:
    """``model`` itself if it is a DistributedDataParallel, else the one whose reducer hooks
    one of its parameters, else None."""
    if isinstance(model, DistributedDataParallel):
        return model
    for param in getattr(model, "parameters", lambda: [])():
        for hook in engine.POST_ACCUMULATE_HOOKS.get(id(param), ()):
            owner = getattr(hook, "__self__", None)
            if isinstance(owner, DistributedDataParallel):
                return owner
    return None


def _hooked_by(param: Any, ddp: DistributedDataParallel) -> bool:
    """Whether ``ddp``'s reducer hooked ``param`` (every parameter it averages, and no other)."""
    return any(getattr(hook, "__self__", None) is ddp
               for hook in engine.POST_ACCUMULATE_HOOKS.get(id(param), ()))


# ------------------------------------------------------------------------------------------------
# why_not_updating's rows
# ------------------------------------------------------------------------------------------------
def reducer_rows(view: DataParallelView, param: Any) -> list[dict[str, Any]]:
    """Checks (a) and (b) for one parameter: in the reducer? reached by the last iteration?"""
    if view.ddp is None:
        return []
    return [_in_reducer_row(view, param), _reached_row(view, param)]


def _in_reducer_row(view: DataParallelView, param: Any) -> dict[str, Any]:
    if view.in_reducer(param):
        return checklist_row("in_reducer", text("diagnose.ddp.reduced", world=view.world_size),
                             "ok")
    if param.requires_grad:
        return checklist_row("in_reducer", text("diagnose.ddp.outside"), "problem",
                             "outside_reducer")
    return checklist_row("in_reducer", text("diagnose.ddp.outside_frozen"), "ok")


def _reached_row(view: DataParallelView, param: Any) -> dict[str, Any]:
    if not view.in_reducer(param):
        return checklist_row("ddp_reached", "-", "n/a")
    assert view.ddp is not None
    if id(param) not in view.unreached:
        if view.unreached and not view.ddp.find_unused_parameters:   # the others stopped it
            return checklist_row("ddp_reached", text("diagnose.ddp.not_averaged"), "problem",
                                 "not_averaged")
        return checklist_row("ddp_reached", text("diagnose.ddp.reached"), "ok")
    if view.ddp.find_unused_parameters:
        return checklist_row("ddp_reached", text("diagnose.ddp.skipped"), "problem",
                             "unreached_skipped")
    return checklist_row("ddp_reached", text("diagnose.ddp.stops"), "problem",
                         "unreached_stops")


def replica_row(view: DataParallelView | None, name: str) -> list[dict[str, Any]]:
    """Check (c) for the parameter ``name``: the comparison's answer, or how to ask for it
    (no row for a model that is not trained data-parallel)."""
    if view is None:
        return []
    if view.replicas is None:
        return [checklist_row("replicas", text("diagnose.ddp.replicas_not_checked"), "n/a")]
    row = next((r for r in view.replicas.rows if r["name"] == name), None)
    if row is None:
        return [checklist_row("replicas", text("diagnose.ddp.replicas_equal",
                                               world=view.world_size), "ok")]
    where = ReplicaReport.row_text(row)
    differs = checklist_row("replicas", text("diagnose.ddp.replicas_differ", row=where),
                            "problem", "differs_across_replicas")
    differs["detail"] = where                     # for the verdict: which ranks, how much
    return [differs]


# ------------------------------------------------------------------------------------------------
# summary's lines
# ------------------------------------------------------------------------------------------------
def summary_lines(view: DataParallelView | None, named: list[tuple[str, Any]]) -> list[str]:
    """The footer lines ``summary`` adds: the reducer, the last iteration, the replicas."""
    if view is None:
        return []
    lines = []
    if view.ddp is not None:
        lines += _reducer_lines(view, named)
    if view.replicas is None:
        lines.append(text("diagnose.ddp.summary_not_compared"))
    else:
        lines += view.replicas.lines()
    return lines


def _reducer_lines(view: DataParallelView, named: list[tuple[str, Any]]) -> list[str]:
    assert view.ddp is not None
    sep = text("diagnose.list_sep")
    outside = [n for n, p in named if p.requires_grad and not view.in_reducer(p)]
    unreached = [n for n, p in named if id(p) in view.unreached]
    lines = [text("diagnose.ddp.summary_head", world=view.world_size,
                  reduced=sum(view.in_reducer(p) for _, p in named), names=len(named))]
    if outside:
        lines.append(text("diagnose.ddp.summary_outside", names=sep.join(outside)))
    if unreached:
        key = ("diagnose.ddp.summary_skipped" if view.ddp.find_unused_parameters
               else "diagnose.ddp.summary_stops")
        lines.append(text(key, names=sep.join(unreached)))
    return lines
