"""OneCycleLR: up to a peak lr and down far below the start, once, over the whole run."""
from __future__ import annotations

import math
from typing import Any

from ... import checks
from . import state_checks as check
from .plateau import per_group
from .scheduler import LRScheduler, check_optimizer, groups_restored_on_error


def anneal(strategy: str, start: float, end: float, pct: float) -> float:
    """The value ``pct`` of the way from ``start`` to ``end``: along half a cosine (``'cos'``)
    or a straight line (``'linear'``). PyTorch's formulas, for its numbers.

    >>> anneal("cos", 1.0, 0.0, 0.5), anneal("linear", 1.0, 0.0, 0.25)
    (0.5, 0.75)
    """
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    # Past its end a straight line would go below min_lr (below 0 in most runs); hold it there.
    return (end - start) * min(pct, 1.0) + start


def one_cycle_phases(total_steps: int, pct_start: float, three_phase: bool) -> list[dict]:
    """The phases of a one-cycle schedule: the step each ends at, the group keys of the lr and
    momentum it goes from and to (PyTorch's ``_schedule_phases``, kept in its state dict).

    >>> [phase["end_step"] for phase in one_cycle_phases(10, 0.3, False)]
    [2.0, 9]
    """
    up = {"end_step": float(pct_start * total_steps) - 1, "start_lr": "initial_lr",
          "end_lr": "max_lr", "start_momentum": "max_momentum", "end_momentum": "base_momentum"}
    if not three_phase:
        return [up, {"end_step": total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                     "start_momentum": "base_momentum", "end_momentum": "max_momentum"}]
    return [up,
            {"end_step": float(2 * pct_start * total_steps) - 2, "start_lr": "max_lr",
             "end_lr": "initial_lr", "start_momentum": "base_momentum",
             "end_momentum": "max_momentum"},
            {"end_step": total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
             "start_momentum": "max_momentum", "end_momentum": "max_momentum"}]


def total_steps_check(owner: str, name: str, value: Any) -> int:
    """The length of the cycle: an integer >= 1.

    >>> total_steps_check("OneCycleLR", "total_steps", 0)
    Traceback (most recent call last):
    ...
    ValueError: OneCycleLR: total_steps must be an integer >= 1, got 0 (the number of
    scheduler.step() calls in the run)
    """
    return checks.integer(owner, name, value, minimum=1,
                          hint="the number of scheduler.step() calls in the run")


def total_steps_of(total_steps: Any, epochs: Any, steps_per_epoch: Any) -> int:
    """``total_steps``, or ``epochs * steps_per_epoch`` when it is not given.

    >>> total_steps_of(None, 3, 100)
    300
    >>> total_steps_of(None, 3, None)
    Traceback (most recent call last):
    ...
    ValueError: OneCycleLR: give total_steps (the number of scheduler.step() calls in the run),
    or epochs and steps_per_epoch; got total_steps=None, epochs=3, steps_per_epoch=None
    """
    hint = "the number of scheduler.step() calls in the run"
    if total_steps is not None:
        return total_steps_check("OneCycleLR", "total_steps", total_steps)
    if epochs is None or steps_per_epoch is None:
        raise ValueError(f"OneCycleLR: give total_steps ({hint}), or epochs and steps_per_epoch;"
                         f" got total_steps=None, epochs={epochs!r}, "
                         f"steps_per_epoch={steps_per_epoch!r}")
    return (checks.integer("OneCycleLR", "epochs", epochs, minimum=1)
            * checks.integer("OneCycleLR", "steps_per_epoch", steps_per_epoch, minimum=1,
                             hint="batches per epoch, len(loader)"))


ANNEAL = check.choice("cos", "linear")


class OneCycleLR(LRScheduler):
    """The "1cycle" policy (Smith & Topin, 2018): the lr climbs from ``max_lr / div_factor`` to
    ``max_lr`` over the first ``pct_start`` of the run, then falls to
    ``max_lr / div_factor / final_div_factor``, far below where it started. Step it once per
    batch, ``total_steps`` (or ``epochs * steps_per_epoch``) times in all.

    The high lr in the middle explores and regularises; the long fall at the end settles into a
    minimum. With ``cycle_momentum`` the momentum moves the other way, from ``max_momentum`` down
    to ``base_momentum`` while the lr rises and back up while it falls: SGD's ``momentum``, or
    ``betas[0]`` for Adam-like optimizers. ``three_phase=True`` comes back down to the starting lr
    symmetrically before the final fall. ``anneal_strategy`` is ``'cos'`` or ``'linear'``.
    The lr given at construction is replaced: every group's starting lr comes from ``max_lr``.

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=0.4,
    ...                                anneal_strategy="linear"), 5).round(4).tolist()
    [0.04, 1.0, 0.6667, 0.3333, 0.0]
    """

    STATE_CHECKS = {"total_steps": total_steps_check, "_anneal_func_type": ANNEAL,
                    "cycle_momentum": check.flag, "use_beta1": check.flag,
                    "max_lrs": check.list_of(checks.positive),
                    "min_lrs": check.list_of(checks.positive),
                    "base_momentums": check.list_of(check.fraction),
                    "max_momentums": check.list_of(check.fraction)}

    def __init__(self, optimizer: Any, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        owner = "OneCycleLR"
        check_optimizer(owner, optimizer)
        groups = optimizer.param_groups
        total = total_steps_of(total_steps, epochs, steps_per_epoch)
        three_phase = check.flag(owner, "three_phase", three_phase)
        checks.between(owner, "pct_start", pct_start, 0, 0.5 if three_phase else 1,
                       low_open=True, high_open=True,
                       hint="the fraction of the run spent climbing to max_lr"
                       + (", below 0.5 with three_phase (up and down again)" if three_phase else ""))
        phases = one_cycle_phases(total, pct_start, three_phase)
        self._check_phase_lengths(phases, total, pct_start)
        ANNEAL(owner, "anneal_strategy", anneal_strategy)
        max_lrs = per_group(owner, "max_lr", max_lr, groups, checks.positive)
        checks.positive(owner, "div_factor", div_factor, hint="the first lr is max_lr / div_factor")
        checks.positive(owner, "final_div_factor", final_div_factor)
        momenta = (self._momentum_settings(optimizer, base_momentum, max_momentum)
                   if cycle_momentum else None)
        self.optimizer = optimizer
        self.total_steps, self._schedule_phases = total, phases
        self._anneal_func_type = anneal_strategy
        self.cycle_momentum = check.flag(owner, "cycle_momentum", cycle_momentum)
        # The ends of the cycle, per group. PyTorch keeps them in the param groups; here they
        # stay in the scheduler (and its state dict), so the optimizer's state dict keeps only
        # the keys its load_state_dict accepts.
        self.max_lrs = max_lrs
        self.min_lrs = [top / div_factor / final_div_factor for top in max_lrs]
        if momenta is not None:
            self.use_beta1, self.base_momentums, self.max_momentums = momenta
        with groups_restored_on_error(groups):
            if last_epoch == -1:
                self._start_groups(div_factor)
            super().__init__(optimizer, last_epoch)

    @staticmethod
    def _zero_length_phase(phases: list[dict]) -> int | None:
        """The number of the first phase 0 steps long (it would divide by zero), or None."""
        start = 0.0
        for number, phase in enumerate(phases, 1):
            if phase["end_step"] - start == 0:
                return number
            start = phase["end_step"]
        return None

    @classmethod
    def _check_phase_lengths(cls, phases: list[dict], total: int, pct_start: float) -> None:
        number = cls._zero_length_phase(phases)
        if number is not None:              # PyTorch: ZeroDivisionError at a step
            raise ValueError(
                f"OneCycleLR: pct_start={pct_start} with total_steps={total} makes phase "
                f"{number} of the cycle 0 steps long; choose pct_start so that "
                "pct_start * total_steps is not 1 (more steps, or another pct_start)")

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        if key != "_schedule_phases":
            return super()._checked_value(owner, key, value)
        # The phases' names must be this scheduler's (three_phase or not); their ends numbers.
        mine = self._schedule_phases
        if not isinstance(value, list) or len(value) != len(mine) or not all(
                isinstance(phase, dict) and phase.keys() == ours.keys()
                and all(phase[k] == ours[k] for k in ours if k != "end_step")
                for phase, ours in zip(value, mine)):
            raise ValueError(f"{owner}: _schedule_phases must be the {len(mine)} phases of a "
                             f"cycle built like this one (three_phase={len(mine) == 3}), got "
                             f"{value!r:.120}")
        return [dict(phase, end_step=checks.number(owner, f"_schedule_phases[{i}]['end_step']",
                                                  phase["end_step"]))
                for i, phase in enumerate(value)]

    def _check_state_together(self, owner: str, checked: dict[str, Any]) -> None:
        super()._check_state_together(owner, checked)
        for key in ("cycle_momentum", "use_beta1"):
            if key in checked and checked[key] != getattr(self, key, None):
                raise ValueError(f"{owner}: the saved cycle had {key}={checked[key]!r}, this "
                                 f"one {getattr(self, key, None)!r} (it depends on the optimizer"
                                 " and the arguments); build the OneCycleLR like the saved one")
        for key in ("max_lrs", "min_lrs", "base_momentums", "max_momentums"):
            if key in checked:
                check.same_length(owner, key, checked[key], self.max_lrs)
        total = checked.get("total_steps", self.total_steps)
        phases = checked.get("_schedule_phases", self._schedule_phases)
        ends = [phase["end_step"] for phase in phases]
        if self._zero_length_phase(phases) is not None or ends[-1] != total - 1:
            raise ValueError(f"{owner}: the phases' end steps {ends} must make no phase 0 steps "
                             f"long and end at total_steps - 1 = {total - 1}")
        if checked.get("last_epoch", self.last_epoch) > total:
            raise ValueError(f"{owner}: last_epoch={checked.get('last_epoch')!r} is past the "
                             f"end of the cycle (total_steps={total})")

    @staticmethod
    def _momentum_settings(optimizer: Any, base_momentum: Any, max_momentum: Any) -> tuple:
        defaults = getattr(optimizer, "defaults", None) or optimizer.param_groups[0]
        if "momentum" not in defaults and "betas" not in defaults:
            raise ValueError(
                f"OneCycleLR: cycle_momentum=True cycles the optimizer's momentum (SGD) or "
                f"betas[0] (Adam), but {type(optimizer).__name__} has neither; pass "
                "cycle_momentum=False")
        groups = optimizer.param_groups
        return ("betas" in defaults, per_group("OneCycleLR", "base_momentum", base_momentum,
                                              groups, check.fraction),
                per_group("OneCycleLR", "max_momentum", max_momentum, groups, check.fraction))

    def _start_groups(self, div_factor: float) -> None:
        """Set every group at the start of the cycle: lr max_lr / div_factor, top momentum."""
        for i, group in enumerate(self.optimizer.param_groups):
            group["initial_lr"] = self.max_lrs[i] / div_factor
            if self.cycle_momentum:
                self._write_momentum(group, self.max_momentums[i], self.use_beta1)

    def _ends(self, name: str) -> list[float]:
        """The per-group values a phase names (PyTorch's group keys, kept in its phases)."""
        ends: dict[str, Any] = {
            "initial_lr": self.base_lrs, "max_lr": self.max_lrs, "min_lr": self.min_lrs,
            "max_momentum": getattr(self, "max_momentums", None),
            "base_momentum": getattr(self, "base_momentums", None)}
        return ends[name]

    @staticmethod
    def _write_momentum(group: dict, value: float, use_beta1: bool) -> None:
        if use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _phase(self) -> tuple[dict, float]:
        """The phase of step ``last_epoch`` and how far into it the step is (0 to 1)."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: stepped {step} times but total_steps={self.total_steps}; the "
                "cycle is over. Build it with total_steps (or epochs * steps_per_epoch) equal to "
                "the number of scheduler.step() calls of the whole run, once per batch")
        start = 0.0
        for i, phase in enumerate(self._schedule_phases):
            if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                return phase, (step - start) / (phase["end_step"] - start)
            start = phase["end_step"]
        raise AssertionError("unreachable: the last phase always matches")

    def get_lr(self) -> list[float]:
        phase, pct = self._phase()
        return [anneal(self._anneal_func_type, start, end, pct)
                for start, end in zip(self._ends(phase["start_lr"]), self._ends(phase["end_lr"]))]

    def _set_lrs(self, values: Any) -> None:
        # The momentum moves with the lr: computed first, written once the lrs passed the checks.
        momenta = self._momenta() if self.cycle_momentum else None
        super()._set_lrs(values)
        for group, value in zip(self.optimizer.param_groups, momenta or []):
            self._write_momentum(group, value, self.use_beta1)

    def _momenta(self) -> list[float]:
        phase, pct = self._phase()
        return [anneal(self._anneal_func_type, start, end, pct)
                for start, end in zip(self._ends(phase["start_momentum"]),
                                      self._ends(phase["end_momentum"]))]
