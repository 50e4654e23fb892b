"""Schedules made of schedules: SequentialLR (one after another) and ChainedScheduler (all at
once, their factors multiplied)."""
from __future__ import annotations

import contextlib
from bisect import bisect_right
from typing import Any, Iterator, Mapping

from ... import checks
from .plateau import ReduceLROnPlateau
from .scheduler import (LRScheduler, check_optimizer, check_scheduler_on, checked_child,
                        copy_value, groups_restored_on_error)


def check_schedulers(owner: str, schedulers: Any, optimizer: Any) -> list[LRScheduler]:
    """``schedulers`` as a list, if it is a non-empty list of schedulers all built on
    ``optimizer`` and stepped without arguments (so not ReduceLROnPlateau, nor a LinearWarmup
    that hands over to one).

    >>> check_schedulers("ChainedScheduler", [], None)
    Traceback (most recent call last):
    ...
    ValueError: ChainedScheduler: schedulers is empty; give at least one scheduler, e.g. [LinearLR(opt, total_iters=5), ExponentialLR(opt, gamma=0.9)]
    """
    if not isinstance(schedulers, (list, tuple)):
        raise TypeError(f"{owner}: schedulers must be a list of schedulers, got {schedulers!r}")
    if not schedulers:
        raise ValueError(f"{owner}: schedulers is empty; give at least one scheduler, e.g. "
                         "[LinearLR(opt, total_iters=5), ExponentialLR(opt, gamma=0.9)]")
    for i, scheduler in enumerate(schedulers):
        check_scheduler_on(
            owner, scheduler, optimizer,
            wrong_kind=f"schedulers[{i}] must be a scheduler such as StepLR(opt, step_size=10)",
            wrong_optimizer=f"schedulers[{i}] ({type(scheduler).__name__}) is built on another "
                            f"optimizer; build every scheduler on the same optimizer")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner}: schedulers[{i}] is a ReduceLROnPlateau, which needs the "
                             f"metric at every step(metric); {owner} steps its schedulers "
                             "without one. Step the ReduceLROnPlateau yourself, next to it")
        if isinstance(getattr(scheduler, "after", None), ReduceLROnPlateau):
            raise ValueError(f"{owner}: schedulers[{i}] is a {type(scheduler).__name__} that "
                             f"hands over to a ReduceLROnPlateau, which needs the metric at "
                             f"every step(metric); {owner} steps its schedulers without one. "
                             "Step the warmup yourself: warm.step(val_loss)")
    return list(schedulers)


@contextlib.contextmanager
def schedulers_restored_on_error(optimizer: Any, schedulers: list) -> Iterator[None]:
    """Put the lrs and every scheduler back as they were if the block fails half-way (the
    second of three schedulers refusing its step must not leave the first one stepped).

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> from dltutor.optim.lr_scheduler import StepLR
    >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    >>> sched = StepLR(opt, step_size=1, gamma=0.5)
    >>> try:
    ...     with schedulers_restored_on_error(opt, [sched]):
    ...         sched.step()
    ...         raise ZeroDivisionError
    ... except ZeroDivisionError:
    ...     pass
    >>> sched.last_epoch, opt.param_groups[0]["lr"]
    (0, 0.1)
    """
    saved = [scheduler.state_dict() for scheduler in schedulers]
    with groups_restored_on_error(optimizer.param_groups):
        try:
            yield
        except BaseException:
            for scheduler, state in zip(schedulers, saved):
                scheduler.load_state_dict(state)
            raise


class SchedulerOfSchedulers(LRScheduler):
    """What SequentialLR and ChainedScheduler share: their schedulers are in ``_schedulers``
    (PyTorch's name), and their state dicts hold each scheduler's state dict.

    >>> issubclass(ChainedScheduler, SchedulerOfSchedulers)
    True
    """

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """Like :meth:`LRScheduler.state_dict`, with every scheduler's state dict, in order,
        under ``"_schedulers"`` (as in PyTorch).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> ChainedScheduler([ExponentialLR(opt, 0.5)]).state_dict()["_schedulers"][0]["gamma"]
        0.5
        """
        state = {key: copy_value(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore this scheduler and each of its schedulers (build them like the saved ones).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> chain = ChainedScheduler([ExponentialLR(opt, 0.5)])
        >>> chain.load_state_dict({"_schedulers": [{"last_epoch": 3}]})
        >>> chain._schedulers[0].last_epoch
        3
        """
        self._apply_state(self._checked_state(state_dict))

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        if key != "_schedulers":
            return super()._checked_value(owner, key, value)
        if not isinstance(value, list) or len(value) != len(self._schedulers):
            raise ValueError(
                f"{owner}: state_dict['_schedulers'] must hold {len(self._schedulers)} state "
                f"dicts, one per scheduler, got {value!r:.80}")
        # Every scheduler's whole state is checked here, before any of them is changed: a
        # state refused for the third leaves the first two as they were.
        return [None if state is None else checked_child(owner, f"_schedulers[{i}]", scheduler,
                                                         state)
                for i, (scheduler, state) in enumerate(zip(self._schedulers, value))]

    def _apply_state(self, checked: dict[str, Any]) -> None:
        children = checked.pop("_schedulers", [None] * len(self._schedulers))
        super()._apply_state(checked)
        for scheduler, state in zip(self._schedulers, children):
            if state is not None:
                scheduler._apply_state(state)


def check_milestones(milestones: Any, n_schedulers: int, owner: str = "SequentialLR",
                     name: str = "milestones") -> list[int]:
    """``milestones`` as a list of ints: one fewer than the schedulers, > 0, increasing.

    >>> check_milestones([5, 3], 3)
    Traceback (most recent call last):
    ...
    ValueError: SequentialLR: milestones must be increasing step numbers > 0 (the steps where the next scheduler takes over), got milestones=[5, 3]
    """
    if not isinstance(milestones, (list, tuple)):
        raise TypeError(f"{owner}: {name} must be a list of step numbers such as [5], "
                        f"got {milestones!r}")
    if len(milestones) != n_schedulers - 1:
        raise ValueError(
            f"{owner}: {n_schedulers} schedulers need {n_schedulers - 1} {name} (the "
            f"step where each one after the first takes over), got {name}={list(milestones)}")
    values = [checks.integer(owner, f"each of {name}", m, whole_floats=True)
              for m in milestones]
    if any(b <= a for a, b in zip([0] + values, values)):
        raise ValueError(f"{owner}: {name} must be increasing step numbers > 0 (the "
                         f"steps where the next scheduler takes over), got "
                         f"{name}={list(milestones)}")
    return values


class SequentialLR(SchedulerOfSchedulers):
    """Run ``schedulers`` one after another: the first until step ``milestones[0]``, where the
    second takes over counting its own steps from 0, and so on.

    The usual use is a warmup then a decay, each written with its own scheduler:
    ``SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5), CosineAnnealingLR(opt, T_max=95)],
    milestones=[5])``. Build every scheduler on the optimizer first; then step only the
    SequentialLR. The numbers are PyTorch's (each hand-over restarts the next schedule from its
    closed-form step 0, as :class:`LinearWarmup`'s hand-over does).

    >>> from dltutor.optim.lr_scheduler import ExponentialLR, LinearLR, preview
    >>> def make(opt):
    ...     warm = LinearLR(opt, start_factor=0.5, total_iters=2)
    ...     return SequentialLR(opt, [warm, ExponentialLR(opt, gamma=0.5)], milestones=[2])
    >>> preview(make, 5, lr=1.0).tolist()
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        if key == "_milestones":
            return check_milestones(value, len(self._schedulers), owner, key)
        return super()._checked_value(owner, key, value)

    def __init__(self, optimizer: Any, schedulers: list[LRScheduler],
                 milestones: list[int]) -> None:
        check_optimizer("SequentialLR", optimizer)
        given = check_schedulers("SequentialLR", schedulers, optimizer)
        for i, scheduler in enumerate(given):
            if isinstance(scheduler, SchedulerOfSchedulers):
                raise ValueError(f"SequentialLR: schedulers[{i}] is a {type(scheduler).__name__}; "
                                 "list its schedulers in this SequentialLR instead of nesting it")
        self._milestones = check_milestones(milestones, len(given))
        self._schedulers = given
        super().__init__(optimizer)

    def step(self) -> None:
        """One step of the scheduler whose turn it is (a hand-over at a milestone).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR, StepLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=1.0)
        >>> first, then = StepLR(opt, 5), ExponentialLR(opt, gamma=0.5)
        >>> seq = SequentialLR(opt, [first, then], milestones=[1])
        >>> seq.step(); seq.step()
        >>> seq.last_epoch, first.last_epoch, then.last_epoch, seq.get_last_lr()
        (2, 0, 1, [0.5])
        """
        self._step_count += 1
        self.last_epoch += 1
        try:
            self._step_current()
        except BaseException:         # a failed step is not a step: the count goes back
            self._step_count -= 1
            self.last_epoch -= 1
            raise
        self._record_lrs()

    def _step_current(self) -> None:
        index = bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[index]
        if self._is_initial:
            # Every scheduler's constructor already set the lrs and took its step 0: undo
            # that, and start only the first one from the initial lrs (as PyTorch does).
            for group in self.optimizer.param_groups:
                group["lr"] = group["initial_lr"]
            for scheduler in self._schedulers:
                scheduler.last_epoch -= 1
            current._initial_step()
        elif index > 0 and self._milestones[index - 1] == self.last_epoch:
            current._restart()
        else:
            current.step()


class ChainedScheduler(SchedulerOfSchedulers):
    """Step all ``schedulers`` at every step, one after the other: as each multiplies the
    current lr by its factor, the factors multiply (e.g. a constant warmup factor times an
    exponential decay).

    Build every scheduler on the same optimizer (``optimizer``, or the first scheduler's), then
    step only the ChainedScheduler. Only schedules that work from the *current* lr (StepLR,
    MultiStepLR, ExponentialLR, LinearLR, CosineAnnealingLR) combine this way; LambdaLR and
    OneCycleLR set the lr from the initial lr and so overwrite what came before them.

    >>> from dltutor.optim.lr_scheduler import ExponentialLR, StepLR, preview
    >>> def make(opt):
    ...     return ChainedScheduler([StepLR(opt, step_size=2, gamma=0.5),
    ...                              ExponentialLR(opt, gamma=0.5)])
    >>> preview(make, 4, lr=1.0).tolist()
    [1.0, 0.5, 0.125, 0.0625]
    """

    def __init__(self, schedulers: list[LRScheduler], optimizer: Any = None) -> None:
        if optimizer is None:
            # The first scheduler's optimizer, once the list is checked to have one.
            check_schedulers("ChainedScheduler", schedulers[:1] if isinstance(
                schedulers, (list, tuple)) else schedulers, getattr(
                schedulers[0] if schedulers else None, "optimizer", None))
            optimizer = schedulers[0].optimizer
        check_optimizer("ChainedScheduler", optimizer)
        self._schedulers = check_schedulers("ChainedScheduler", schedulers, optimizer)
        # Like PyTorch, no step of its own here: each scheduler took its step 0 when built.
        self.optimizer = optimizer
        # Not in PyTorch's ChainedScheduler; kept so that it reads like every other scheduler.
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self._record_lrs()

    def step(self) -> None:
        """Step every scheduler once, in order; if one fails, none has stepped.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=1.0)
        >>> chain = ChainedScheduler([ExponentialLR(opt, 0.5), ExponentialLR(opt, 0.5)])
        >>> chain.step(); chain.get_last_lr()
        [0.25]
        """
        with schedulers_restored_on_error(self.optimizer, self._schedulers):
            for scheduler in self._schedulers:
                scheduler.step()
        self.last_epoch += 1
        self._record_lrs()
