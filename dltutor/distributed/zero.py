"""ZeroRedundancyOptimizer: each process keeps the optimizer state of its share of the parameters.

In data-parallel training every process holds the whole model and, with a plain optimizer,
the whole optimizer state: SGD's momentum is one more copy of the parameters, Adam's two
moments two more. Every process computes the same update from the same averaged gradients, so
N processes hold N copies of a state that one would do. ZeRO stage 1 (Rajbhandari et al.,
2020; PyTorch's ``torch.distributed.optim.ZeroRedundancyOptimizer``) shares the work out
instead: the parameters are divided among the processes, each process runs the optimizer
(``optimizer_class``) on ITS share only, so each state exists once in the group, and after
each step every parameter is copied (a broadcast) from the process that updated it into all
the others. The update of a parameter is the same arithmetic as a plain optimizer's, so the
weights are the same, bit for bit; each process's state is about 1/N of it.

A checkpoint must hold the whole state: ``consolidate_state_dict(to=0)`` (called in every
process) gathers the shares on process 0, where ``state_dict()`` returns them in a plain
optimizer's layout; ``load_state_dict`` takes such a state, on any number of processes, and
keeps its own share.

>>> import dltutor as dt, dltutor.distributed as dist
>>> from dltutor import nn, optim
>>> dist.init_process_group("mpi")                  # one process here: it owns everything
>>> model = nn.Linear(3, 2)
>>> opt = ZeroRedundancyOptimizer(model.named_parameters(), optim.Adam, lr=0.01)
>>> opt
ZeroRedundancyOptimizer(Adam, process 0 of 1: 2 of 2 parameters, 8 of 8 values)
>>> model(dt.ones(4, 3)).sum().backward()
>>> opt.step()
>>> optimizer_state_bytes(opt.optim)   # Adam's two moments of 8 float32 values, 4 bytes each
64
>>> opt.consolidate_state_dict(to=0)
>>> sorted(opt.state_dict()["state"])
['bias', 'weight']
>>> dist.destroy_process_group()
"""
from __future__ import annotations

import math
from typing import Any, Callable

from .. import backend as B
from ..autograd import Tensor, enable_grad
from ..autograd.function import make_tensor
from ..optim import ClipGradByGlobalNorm, NonFiniteGradientError, Optimizer, OptimizerLoadResult
from ..optim.checkpoint import state_keys
from ..optim.nonfinite import nonfinite_names
from .collectives import broadcast, gather_object
from .process_group import get_rank, get_world_size

#: Group entries that are not hyperparameters (they say which parameters a group holds).
_MEMBERS = ("params", "param_names")


def assign_ranks(group_sizes: list[list[int]], world_size: int) -> list[list[int]]:
    """The process that owns each parameter, given each group's parameter sizes (numbers of
    values): PyTorch's rule (``ZeroRedundancyOptimizer._partition_parameters`` in
    torch/distributed/optim/zero_redundancy_optimizer.py). Group by group, the parameters
    largest first (equal sizes in their order), each goes to the process that holds the
    fewest values so far (the lowest rank on a tie); the counts carry over from one group to
    the next.

    >>> assign_ranks([[6, 1, 4, 3]], 2)     # 6 -> 0; 4 -> 1; 3 -> 1 (4 < 6); 1 -> 0 (6 < 7)
    [[0, 0, 1, 1]]
    """
    held = [0] * world_size
    ranks = []
    for sizes in group_sizes:
        owners = [0] * len(sizes)
        for index in sorted(range(len(sizes)), key=lambda i: sizes[i], reverse=True):
            owners[index] = held.index(min(held))
            held[owners[index]] += sizes[index]
        ranks.append(owners)
    return ranks


def optimizer_state_bytes(optimizer: Any) -> int:
    """The bytes of the arrays in ``optimizer.state`` (momentum, moments: not the step count).

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> w = nn.Parameter(dt.zeros(10))
    >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = dt.ones(10); opt.step()
    >>> optimizer_state_bytes(opt)          # one momentum buffer of 10 float32 values
    40
    """
    return sum(int(value.nbytes) for state in optimizer.state.values()
               for value in state.values() if hasattr(value, "nbytes") and value.ndim > 0)


class ZeroRedundancyOptimizer:
    """``optimizer_class(params, **defaults)`` with its state shared out among the processes
    (see the module docstring). Call it as that optimizer: ``zero_grad()``, ``step()``,
    ``param_groups`` (the whole groups: an lr scheduler drives them), ``state_dict()`` after
    ``consolidate_state_dict()``, ``load_state_dict()``. ``optim`` is this process's own
    optimizer, over its share of the parameters.

    Every process must make the same calls in the same order (each one's ``step`` waits for
    the others' broadcasts). A global-norm clip (``ClipGradByGlobalNorm``) would see only the
    share's gradients: clip with ``optim.clip_grad_norm_(model.parameters(), ...)`` before
    ``step()`` instead (every process holds every averaged gradient).
    """

    def __init__(self, params: Any, optimizer_class: type[Optimizer], **defaults: Any):
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise TypeError(
                "ZeroRedundancyOptimizer: optimizer_class must be an optimizer class such as "
                f"optim.Adam, got {optimizer_class!r}; pass the class and its settings, "
                "ZeroRedundancyOptimizer(model.parameters(), optim.Adam, lr=1e-3): each process "
                "makes its own optimizer of it")
        if isinstance(defaults.get("grad_clip"), ClipGradByGlobalNorm):
            raise ValueError(
                "ZeroRedundancyOptimizer: grad_clip=ClipGradByGlobalNorm would measure only "
                "this process's share of the gradients. Clip them all before step() instead: "
                "optim.clip_grad_norm_(model.parameters(), max_norm) (after DDP's backward "
                "every process holds every averaged gradient)")
        # An optimizer over ALL the parameters that never steps, so it never holds state: it
        # checks the arguments as the plain optimizer does, keeps the whole groups (their
        # names, the hyperparameters a scheduler changes) and knows the single-process layout
        # of a state dict.
        self._whole = optimizer_class(params, **defaults)
        self.rank, self.world_size = get_rank(), get_world_size()
        self._owner: dict[Tensor, int] = {}
        self._assign_owners()
        self.optim = optimizer_class(
            [self._my_share(group) for group in self._whole.param_groups], **defaults)
        self._consolidated: list[dict[str, Any]] = []

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The groups of all the parameters, as the plain optimizer's (write ``lr`` here)."""
        return self._whole.param_groups

    def rank_of(self, param: Tensor) -> int:
        """The process that updates ``param`` and broadcasts it to the others.

        >>> import dltutor.distributed as dist
        >>> from dltutor import nn, optim
        >>> dist.init_process_group("mpi")
        >>> layer = nn.Linear(3, 2)
        >>> opt = ZeroRedundancyOptimizer(layer.parameters(), optim.SGD, lr=0.1)
        >>> opt.rank_of(layer.weight)                # one process: it owns them all
        0
        >>> dist.destroy_process_group()
        """
        if param not in self._owner:
            raise KeyError(f"ZeroRedundancyOptimizer.rank_of: the tensor of shape "
                           f"{tuple(param.shape)} is not one of this optimizer's parameters")
        return self._owner[param]

    def _assign_owners(self) -> None:
        groups = [group["params"] for group in self._whole.param_groups]
        ranks = assign_ranks([[int(p.data.size) for p in params] for params in groups],
                             self.world_size)
        self._owner = {p: r for params, owners in zip(groups, ranks)
                       for p, r in zip(params, owners)}

    def _my_share(self, group: dict[str, Any]) -> dict[str, Any]:
        """``group`` with only the parameters this process owns (and their names)."""
        mine = [i for i, p in enumerate(group["params"]) if self._owner[p] == self.rank]
        return {**{k: v for k, v in group.items() if k not in _MEMBERS},
                "params": [group["params"][i] for i in mine],
                "param_names": [group["param_names"][i] for i in mine]}

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group (in every process); its parameters are shared out by the same rule,
        the earlier parameters keep their owners."""
        self._whole.add_param_group(group)
        self._assign_owners()
        self.optim.add_param_group(self._my_share(self._whole.param_groups[-1]))

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all the parameters (not only this process's share)."""
        self._whole.zero_grad(set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update this process's share with its optimizer, then copy every parameter from its
        owner into all the processes (one broadcast per parameter, as PyTorch's without
        buckets). A gradient with NaN or Inf anywhere stops (or, with ``nonfinite="skip"``,
        skips) the step in every process before any of them changes a parameter."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._copy_hyperparameters()
        if not self._gradients_finite():
            return loss
        self.optim.step()
        for group in self._whole.param_groups:
            for param in group["params"]:
                broadcast(param, src=self._owner[param])
        return loss

    def _copy_hyperparameters(self) -> None:
        """The whole groups' hyperparameters (a scheduler's lr) into this process's optimizer."""
        for whole, mine in zip(self._whole.param_groups, self.optim.param_groups):
            mine.update({k: v for k, v in whole.items() if k not in _MEMBERS})

    def _gradients_finite(self) -> bool:
        """Whether the step may go on. Each process has every gradient (DDP averaged them), so
        each looks at all of them, not only its share's, and all decide alike: one process
        stopping on its share while the others step would leave the replicas apart."""
        if self._whole.nonfinite == "apply":
            return True
        named = [(name, p.grad.data) for name, p, _ in self._whole.param_entries()
                 if p.grad is not None]
        if not named:
            return True
        squares = B.sums_of_squares([grad for _, grad in named])
        if math.isfinite(sum(squares)):
            return True
        bad = nonfinite_names([name for name, _ in named], [g for _, g in named], squares)
        if not bad:                           # only squares of huge finite values overflowed
            return True
        if self._whole.nonfinite == "skip":
            self.optim.skipped_steps += 1
            return False
        raise NonFiniteGradientError(type(self.optim).__name__, bad, self.optim.step_count)

    # -- checkpoints -----------------------------------------------------------------------------
    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every process's share of the state on process ``to`` (call it in every
        process). The shares travel as Python objects (mpi4py pickles them between the
        processes of this one job, as PyTorch's ``_broadcast_object`` does); a file written
        from the result with ``dt.save`` is safetensors, never a pickle."""
        if not 0 <= to < self.world_size:
            raise ValueError(f"consolidate_state_dict: to={to} is not a rank of this group "
                             f"(0 to {self.world_size - 1})")
        self._copy_hyperparameters()
        key_of = dict(zip(self._all_params(), state_keys(self._whole)))
        share = {"state": {key_of[p]: {k: B.to_numpy(v).copy() if hasattr(v, "shape") else v
                                       for k, v in entry.items()}
                           for p, entry in self.optim.state.items()},
                 "step_count": self.optim.step_count,
                 "skipped_steps": self.optim.skipped_steps}
        shares: list | None = [None] * self.world_size if self.rank == to else None
        gather_object(share, shares, dst=to)
        self._consolidated = shares or []

    def state_dict(self) -> dict[str, Any]:
        """The whole state, as the plain optimizer's ``state_dict()`` would give it, on the
        process that the last ``consolidate_state_dict(to)`` gathered it on."""
        if not self._consolidated:
            raise RuntimeError(
                f"ZeroRedundancyOptimizer.state_dict: process {self.rank} holds only its share "
                f"of the state. Call opt.consolidate_state_dict(to={self.rank}) in every "
                "process first (then save from this one)")
        gathered = {key: entry for share in self._consolidated
                    for key, entry in share["state"].items()}
        whole = self._whole.state_dict()     # the groups and keys, with no state
        whole["state"] = {key: {k: make_tensor(v) if hasattr(v, "shape") else v
                                for k, v in gathered[key].items()}
                          for key in state_keys(self._whole) if key in gathered}
        own = self._consolidated[self.rank]     # the counts: every process has the same
        whole["step_count"], whole["skipped_steps"] = own["step_count"], own["skipped_steps"]
        return whole

    def load_state_dict(self, state_dict: dict[str, Any]) -> OptimizerLoadResult:
        """Load a whole state (a plain optimizer's, or a consolidated one, from any number of
        processes) and keep this process's share. It is checked as the plain optimizer checks
        it; on any problem nothing changes."""
        result = self._whole.load_state_dict(state_dict)
        mine = {p: entry for p, entry in self._whole.state.items()
                if self._owner[p] == self.rank}
        self._whole.state = {}               # the other processes' shares are theirs to keep
        self._copy_hyperparameters()
        self.optim.state = mine
        self.optim.step_count = self._whole.step_count
        self.optim.skipped_steps = self._whole.skipped_steps
        return result

    def _all_params(self) -> list[Tensor]:
        return [p for group in self._whole.param_groups for p in group["params"]]

    def __repr__(self) -> str:
        params = self._all_params()
        mine = [p for p in params if self._owner[p] == self.rank]
        return (f"ZeroRedundancyOptimizer({type(self.optim).__name__}, process {self.rank} of "
                f"{self.world_size}: {len(mine)} of {len(params)} parameters, "
                f"{sum(p.data.size for p in mine)} of {sum(p.data.size for p in params)} values)")


__all__ = ["ZeroRedundancyOptimizer", "assign_ranks", "optimizer_state_bytes"]
