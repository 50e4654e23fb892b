"""ReduceLROnPlateau: lower the lr when a watched number (the validation loss) stops improving."""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

from ... import checks
from . import state_checks as check
from .scheduler import LRScheduler, check_optimizer


def per_group(owner: str, name: str, value: Any, groups: list, check: Any) -> list:
    """``value`` as one checked number per param group: a list of that length, or one number
    for every group (PyTorch's rule for ``min_lr``, ``max_lr``, ``base_momentum``...).

    >>> per_group("OneCycleLR", "max_lr", 0.1, [{}, {}], checks.positive)
    [0.1, 0.1]
    >>> per_group("OneCycleLR", "max_lr", [0.1], [{}, {}], checks.positive)
    Traceback (most recent call last):
    ...
    ValueError: OneCycleLR: max_lr is a list of 1 values but the optimizer has 2 param groups;
    pass one value per group, or a single number for all of them
    """
    if not isinstance(value, (list, tuple)):
        return [check(owner, name, value)] * len(groups)
    if len(value) != len(groups):
        raise ValueError(f"{owner}: {name} is a list of {len(value)} values but the optimizer "
                         f"has {len(groups)} param groups; pass one value per group, or a "
                         "single number for all of them")
    return [check(owner, f"{name}[{i}]", v) for i, v in enumerate(value)]


check_choice = check.choice      # (kept for its old callers) see state_checks.choice
MODE = check.choice("min", "max")
THRESHOLD_MODE = check.choice("rel", "abs")


def reduction_factor(owner: str, name: str, value: Any) -> Any:
    """The factor each reduction multiplies the lr by, in [0, 1).

    >>> reduction_factor("ReduceLROnPlateau", "factor", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: ReduceLROnPlateau: factor must be a number in [0, 1), got 1.0 (each reduction
    multiplies the lr by it: 0.1 divides it by 10)
    """
    return checks.between(owner, name, value, 0, 1, high_open=True,
                          hint="each reduction multiplies the lr by it: 0.1 divides it by 10")


def optional_rate(owner: str, name: str, value: Any) -> Any:
    """None, or a number >= 0 (``default_min_lr``: None when min_lr was given per group).

    >>> optional_rate("ReduceLROnPlateau", "default_min_lr", None) is None
    True
    """
    return None if value is None else check.rate(owner, name, value)


class ReduceLROnPlateau(LRScheduler):
    """Multiply every group's lr by ``factor`` when a metric has not improved for ``patience``
    steps in a row: ``scheduler.step(val_loss)`` once per epoch, after validating.

    The schedule follows the training instead of a plan made in advance: while the validation
    loss keeps falling the lr stays; when it stalls (``mode='min'``; ``'max'`` for an accuracy),
    the lr drops, which often lets it fall further. A value counts as better than the best so
    far only by more than ``threshold`` (relative to the best with ``threshold_mode='rel'``,
    absolute with ``'abs'``), so noise does not reset the count. After a reduction it waits
    ``cooldown`` steps before counting bad ones again. No lr goes below ``min_lr`` (one number,
    or one per group), and a change smaller than ``eps`` is skipped. The rules and numbers are
    PyTorch's.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    >>> sched = ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> for val_loss in [1.0, 0.8, 0.9, 0.85, 0.7]:
    ...     sched.step(val_loss)
    ...     print(val_loss, sched.num_bad_epochs, opt.param_groups[0]["lr"])
    1.0 0 0.1
    0.8 0 0.1
    0.9 1 0.1
    0.85 0 0.05
    0.7 0 0.05
    """

    # The settings are checked at every assignment; mode goes with mode_worse (load only).
    factor, eps = check.Setting(reduction_factor), check.Setting(check.rate)
    patience, cooldown = check.Setting(check.count), check.Setting(check.count)
    threshold, threshold_mode = check.Setting(check.rate), check.Setting(THRESHOLD_MODE)
    min_lrs, default_min_lr = check.Setting(check.lr_list), check.Setting(optional_rate)
    STATE_CHECKS = {"mode": MODE, "best": check.best, "mode_worse": check.best,
                    "cooldown_counter": check.count, "num_bad_epochs": check.count}

    def _check_state_together(self, owner: str, checked: dict[str, Any]) -> None:
        # No base_lrs here; the worst value must be the mode's (inf for 'min', -inf for 'max').
        mode = checked.get("mode", self.mode)
        worse = checked.get("mode_worse", self.mode_worse)
        if worse != (math.inf if mode == "min" else -math.inf):
            raise ValueError(f"{owner}: mode_worse={worse!r} does not go with mode={mode!r} "
                             "(inf for 'min', -inf for 'max')")

    def __init__(self, optimizer: Any, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        owner = "ReduceLROnPlateau"
        check_optimizer(owner, optimizer)
        # Everything is checked before anything is stored: a refused call changes nothing.
        MODE(owner, "mode", mode)
        reduction_factor(owner, "factor", factor)
        patience = check.count(owner, "patience", patience)
        check.rate(owner, "threshold", threshold)
        THRESHOLD_MODE(owner, "threshold_mode", threshold_mode)
        cooldown = check.count(owner, "cooldown", cooldown)
        min_lrs = per_group(owner, "min_lr", min_lr, optimizer.param_groups, check.rate)
        check.rate(owner, "eps", eps)
        self.optimizer = optimizer
        self.factor = factor
        # Kept like PyTorch: a group added later gets the single min_lr, if one was given.
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.min_lrs = min_lrs
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self._record_lrs()

    @property
    def in_cooldown(self) -> bool:
        """True while the scheduler waits after a reduction (bad steps are not counted).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ReduceLROnPlateau(opt, patience=0, cooldown=2)
        >>> sched.step(1.0); sched.step(2.0); sched.in_cooldown
        True
        """
        return self.cooldown_counter > 0

    def is_better(self, value: float, best: float) -> bool:
        """Whether ``value`` beats ``best`` by more than the threshold (PyTorch's rule).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ReduceLROnPlateau(opt, threshold=0.1)     # 10% better, relative
        >>> sched.is_better(0.95, 1.0), sched.is_better(0.85, 1.0)
        (False, True)
        """
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                            else best - self.threshold)
        return value > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                        else best + self.threshold)

    def step(self, metrics: float) -> None:  # type: ignore[override]
        """Count one step with the metric's new value; reduce the lrs after ``patience`` bad
        steps in a row. Call it once per epoch with the validation loss (or accuracy).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ReduceLROnPlateau(opt, factor=0.5, patience=0)
        >>> sched.step(1.0); sched.step(1.0); sched.get_last_lr()
        [0.05]
        """
        current = self._metric(metrics)
        # Work on copies; the lrs and the counters change together at the end.
        best, bad, cooldown = self.best, self.num_bad_epochs, self.cooldown_counter
        if self.is_better(current, best):
            best, bad = current, 0
        else:
            bad += 1
        if cooldown > 0:
            cooldown, bad = cooldown - 1, 0          # bad steps in the cooldown do not count
        reduce = bad > self.patience
        new_lrs = self._reduced_lrs() if reduce else None
        if reduce:
            cooldown, bad = self.cooldown, 0
        if new_lrs is not None:
            for group, lr in zip(self.optimizer.param_groups, new_lrs):
                group["lr"] = lr
        self.last_epoch += 1
        self.best, self.num_bad_epochs, self.cooldown_counter = best, bad, cooldown
        self._record_lrs()

    def _restart(self) -> None:
        """Start watching afresh, at the lrs the optimizer has now (the hand-over of a
        :class:`LinearWarmup`, which has just set the initial lrs): no best value yet, no bad
        steps, no cooldown. Unlike the other schedules it sets no lr: it has no step-0 value.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ReduceLROnPlateau(opt, patience=3)
        >>> sched.step(1.0); sched.step(2.0)
        >>> sched._restart()
        >>> sched.best, sched.num_bad_epochs, sched.last_epoch
        (inf, 0, 0)
        """
        self.last_epoch = 0
        self.best = self.mode_worse
        self.num_bad_epochs = self.cooldown_counter = 0
        self._record_lrs()

    def _metric(self, metrics: Any) -> float:
        if isinstance(metrics, (str, bool)) or not (isinstance(metrics, Real)
                                                    or hasattr(metrics, "item")):
            raise TypeError(f"ReduceLROnPlateau.step: metrics must be the number to watch "
                            f"(e.g. the epoch's validation loss, a float or a 0-d tensor), got "
                            f"{metrics!r}; call scheduler.step(val_loss)")
        return float(metrics)

    def _reduced_lrs(self) -> list[float]:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise ValueError(
                    f"ReduceLROnPlateau: min_lr was given per group for {len(self.min_lrs)} "
                    f"param groups, but the optimizer now has {len(groups)}; set "
                    "scheduler.min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        new_lrs = []
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            # Like PyTorch, a change smaller than eps is not made (the lr is at its floor).
            new_lrs.append(new if old - new > self.eps else group["lr"])
        return new_lrs
