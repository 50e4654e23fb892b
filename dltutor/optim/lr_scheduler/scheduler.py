"""The base of every learning-rate scheduler: :class:`LRScheduler` sets each parameter
group's ``lr`` step by step and saves its state (each state key checked by state_checks.py).
The schedules themselves are in schedules.py and warmup.py; preview.py shows one."""
from __future__ import annotations

import contextlib
import math
from collections import Counter
from typing import Any, Iterator, Mapping, Sequence

from ... import checks
from ...errors import MessageKeyError
from . import state_checks as check

#: Keys that PyTorch's schedulers keep in their state dicts for their own warnings; a state
#: dict saved by PyTorch loads here with them ignored.
TORCH_BOOKKEEPING_KEYS = frozenset({"_get_lr_called_within_step", "_is_initial"})


@contextlib.contextmanager
def groups_restored_on_error(groups: list[dict[str, Any]]) -> Iterator[None]:
    """Undo what a scheduler's constructor wrote into the groups (``initial_lr``, ``lr``) when
    it fails: a scheduler that could not be built leaves the optimizer as it was.

    >>> groups = [{"lr": 0.1}]
    >>> try:
    ...     with groups_restored_on_error(groups):
    ...         groups[0]["initial_lr"] = groups[0]["lr"] = 0.5
    ...         raise ZeroDivisionError("the schedule's function failed")
    ... except ZeroDivisionError:
    ...     pass
    >>> groups
    [{'lr': 0.1}]
    """
    saved = [dict(group) for group in groups]
    try:
        yield
    except BaseException:
        for group, before in zip(groups, saved):
            group.clear()
            group.update(before)
        raise


def check_optimizer(owner: str, optimizer: Any) -> None:
    """Refuse what is not an optimizer (a scheduler sets ``lr`` in its ``param_groups``).

    >>> check_optimizer("StepLR", [])
    Traceback (most recent call last):
    ...
    TypeError: StepLR needs an optimizer (an object whose param_groups is a list of dicts with an
    'lr'), such as optim.SGD(model.parameters(), lr=0.1); got list. Build the optimizer first,
    then pass it to the scheduler.
    """
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list) or not all(isinstance(g, dict) and "lr" in g for g in groups):
        raise TypeError(
            f"{owner} needs an optimizer (an object whose param_groups is a list of dicts with an "
            f"'lr'), such as optim.SGD(model.parameters(), lr=0.1); got "
            f"{type(optimizer).__name__}. "
            "Build the optimizer first, then pass it to the scheduler.")


def copy_value(value: Any) -> Any:
    """Copy containers so a state dict and the scheduler never share a list that one mutates.

    >>> saved = {"milestones": [2, 5]}
    >>> copy_value(saved)["milestones"] is saved["milestones"]
    False
    """
    if isinstance(value, Counter):
        return Counter(value)
    if isinstance(value, dict):
        return {k: copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_value(v) for v in value]
    return value


class LRScheduler:
    """Base class of every scheduler: it sets ``group["lr"]`` of each of the optimizer's groups.

    ``last_epoch`` counts the scheduler's steps: the constructor performs step 0 (``last_epoch``
    goes from -1 to 0 and every group gets its step-0 lr), and each ``step()`` adds one.
    ``base_lrs`` are the groups' starting lrs, stored in each group as ``"initial_lr"`` by the
    first scheduler built on the optimizer. Passing ``last_epoch=k`` (k >= 0) means "resume a
    schedule that already ran k steps" and needs ``"initial_lr"`` in every group (it comes back
    with the optimizer's state dict).

    To write your own schedule, subclass it and override :meth:`get_lr`: return the list of lrs
    (one per group) for step ``self.last_epoch``.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> class Halving(LRScheduler):
    ...     "Halve the lr every step, from each group's initial lr."
    ...     def get_lr(self):
    ...         return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
    >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    >>> sched = Halving(opt)
    >>> sched.last_epoch, sched.get_last_lr()
    (0, [0.1])
    >>> sched.step(); sched.step()
    >>> sched.last_epoch, sched.get_last_lr()
    (2, [0.025])
    """

    #: True only while the constructor performs step 0 (some schedules treat it specially).
    _is_initial: bool = False
    #: The check of each state key (see state_checks.py); subclasses add their settings'.
    STATE_CHECKS: dict[str, check.Check] = {
        "last_epoch": check.last_epoch, "_step_count": check.count,
        "base_lrs": check.lr_list, "_last_lr": check.lr_list}

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        owner = type(self).__name__
        check_optimizer(owner, optimizer)
        last_epoch = check.last_epoch(owner, "last_epoch", last_epoch)
        self.optimizer = optimizer
        if last_epoch >= 0:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise MessageKeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        f"scheduler with last_epoch >= 0 (you passed last_epoch={last_epoch}).\n"
                        f"last_epoch={last_epoch} means 'continue a schedule that already ran "
                        f"{last_epoch} steps', and every schedule is computed from each group's "
                        "starting lr, which the first scheduler built on an optimizer stores as "
                        "group['initial_lr']. This optimizer has none, because:\n"
                        "1. you are resuming from a checkpoint but have not loaded the "
                        "optimizer's state dict (it carries 'initial_lr') before building the "
                        "scheduler, or\n"
                        "2. this is a fresh run: then leave last_epoch at its default, -1.\n"
                        "Simplest way to resume: build the scheduler with last_epoch=-1 and call "
                        "scheduler.load_state_dict(saved_scheduler_state).")
        with groups_restored_on_error(optimizer.param_groups):
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
            self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
            self.last_epoch = last_epoch
            self._initial_step()

    # -- stepping ------------------------------------------------------------------------------

    def _initial_step(self) -> None:
        """Perform step 0 (or, when resuming, step ``last_epoch + 1``) from the constructor."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            del self._is_initial          # back to the class attribute, False

    def step(self) -> None:
        """Advance the schedule by one step and set every group's ``lr`` to the new value.

        Call it after ``optimizer.step()``, once per epoch or once per batch (your choice).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ExponentialLR(opt, gamma=0.5)
        >>> sched.step()
        >>> sched.last_epoch, opt.param_groups[0]["lr"]
        (1, 0.05)
        """
        self._step_count += 1
        self.last_epoch += 1
        try:
            self._set_lrs(self.get_lr())
        except BaseException:         # a failed step is not a step: the counts go back
            self._step_count -= 1
            self.last_epoch -= 1
            raise

    def _set_lrs(self, values: Sequence[float]) -> None:
        """Set every group's lr, after checking them all (a NaN lr would poison the model)."""
        groups = self.optimizer.param_groups
        values = list(values)
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__} computed {len(values)} learning rates for an optimizer "
                f"with {len(groups)} param groups; build the scheduler after the last "
                "add_param_group()")
        values = _rounding_below_zero_as_zero(values, self.base_lrs + self._current_lrs())
        for index, lr in enumerate(values):
            checks.non_negative(type(self).__name__, f"the lr of param group {index}", lr,
                                hint=f"at step {self.last_epoch}; check the schedule's arguments "
                                "or function")
        for group, lr in zip(groups, values):
            group["lr"] = lr
        self._record_lrs()

    def _record_lrs(self) -> None:
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _groups_and_bases(self) -> list[tuple[dict, float]]:
        """Pair each group with its base lr (PyTorch raises from zip(strict=True) here)."""
        groups = self.optimizer.param_groups
        if len(groups) != len(self.base_lrs):
            raise ValueError(
                f"{type(self).__name__} was built for {len(self.base_lrs)} param groups but the "
                f"optimizer now has {len(groups)}; build the scheduler after the last "
                "add_param_group()")
        return list(zip(groups, self.base_lrs))

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def _restart(self) -> None:
        """Jump to step 0 from the base lrs (the hand-over in :class:`LinearWarmup`).

        Like PyTorch's ``SequentialLR`` at a milestone: ``last_epoch = 0`` and the closed-form
        step-0 lrs, so what follows matches ``SequentialLR`` exactly.
        """
        self.last_epoch = 0
        closed_form = getattr(self, "_closed_form_lr", None)
        self._set_lrs(closed_form() if closed_form is not None else self.get_lr())

    def get_lr(self) -> list[float]:
        """The lrs (one per group) for step ``self.last_epoch``; :meth:`step` calls it.

        Override it to write a schedule (see the class docstring). To read the lrs in use, call
        :meth:`get_last_lr` instead: for most schedules, calling ``get_lr`` yourself computes
        the *next* value from the current one.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import LambdaLR
        >>> sched = LambdaLR(optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1), lambda e: 1 / (e + 1))
        >>> sched.last_epoch = 3                  # what step() does before calling get_lr
        >>> sched.get_lr()
        [0.025]
        """
        raise NotImplementedError(f"{type(self).__name__} must override get_lr() in its subclass "
                                  "(return one lr per param group for step self.last_epoch)")

    def get_last_lr(self) -> list[float]:
        """The lrs set by the last step (one per group): the lrs the next updates use.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import LinearLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> LinearLR(opt, start_factor=0.5, total_iters=4).get_last_lr()
        [0.05]
        """
        return list(self._last_lr)

    # -- checkpoints ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything about the scheduler except the optimizer, as a dict (save it with
        ``dt.save`` next to the model's and the optimizer's state dicts).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import StepLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> StepLR(opt, step_size=3, gamma=0.5).state_dict()
        {'step_size': 3, 'gamma': 0.5, 'base_lrs': [0.1], 'last_epoch': 0, '_step_count': 1,
         '_last_lr': [0.1]}
        """
        return {key: copy_value(value) for key, value in self.__dict__.items()
                if key != "optimizer"}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore the state saved by :meth:`state_dict`; the next ``step()`` continues from it.

        It does not change the optimizer's lrs: load the optimizer's own state dict for those
        (after building the scheduler, whose constructor resets them to the step-0 values).
        Every entry is checked first, by the check of the constructor's argument of that name
        (state_checks.py): a refused load names the key and value and changes nothing.
        Unknown keys (a state dict saved from another kind of scheduler) raise ValueError.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import StepLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = StepLR(opt, step_size=3)
        >>> sched.load_state_dict({"last_epoch": 7, "gamma": 0.5})
        >>> sched.last_epoch, sched.gamma
        (7, 0.5)
        >>> sched.load_state_dict({"last_epoch": 8, "step_size": 0})
        Traceback (most recent call last):
        ...
        ValueError: StepLR.load_state_dict: step_size must be an integer >= 1, got 0 (a number
        of steps)
        >>> sched.last_epoch
        7
        """
        self._apply_state(self._checked_state(state_dict))

    def _checked_state(self, state_dict: Any) -> dict[str, Any]:
        """Every known entry of ``state_dict`` checked and converted, changing nothing yet."""
        known = self._check_state_keys(state_dict)
        owner = f"{type(self).__name__}.load_state_dict"
        checked = {key: self._checked_value(owner, key, value)
                   for key, value in state_dict.items() if key in known}
        self._check_state_together(owner, checked)
        return checked

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        """One entry through the check of its key (a key without one is copied as it is)."""
        key_check = check.check_of(type(self), key)
        return copy_value(value) if key_check is None else key_check(owner, key, value)

    def _check_state_together(self, owner: str, checked: dict[str, Any]) -> None:
        """Checks that need several keys or this scheduler's shape (override to add some)."""
        if "base_lrs" in checked:
            check.same_length(owner, "base_lrs", checked["base_lrs"], self.base_lrs)

    def _apply_state(self, checked: dict[str, Any]) -> None:
        """Store entries that :meth:`_checked_state` accepted (nothing here can fail)."""
        for key, value in checked.items():
            setattr(self, key, value)

    def _check_state_keys(self, state_dict: Any) -> set[str]:
        owner = type(self).__name__
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{owner}.load_state_dict expects the dict returned by state_dict(), "
                            f"got {type(state_dict).__name__}")
        known = set(self.state_dict())
        unknown = [key for key in state_dict if key not in known
                   and key not in TORCH_BOOKKEEPING_KEYS]
        if unknown:
            raise ValueError(
                f"{owner}.load_state_dict: state_dict has unknown key(s) {unknown}; a {owner} "
                f"state dict has the keys {sorted(known)}. Was it saved from a different kind "
                "of scheduler?")
        return known


def checked_child(owner: str, where: str, scheduler: LRScheduler, state: Any) -> dict:
    """``scheduler``'s checked ``state``; a refusal also says where the state was.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> from dltutor.optim.lr_scheduler import StepLR
    >>> sched = StepLR(optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1), step_size=2)
    >>> checked_child("SequentialLR.load_state_dict", "_schedulers[1]", sched, {"gamma": -1})
    Traceback (most recent call last):
    ...
    ValueError: SequentialLR.load_state_dict: in _schedulers[1]: StepLR.load_state_dict: gamma
    must be a number >= 0, got -1
    """
    try:
        return scheduler._checked_state(state)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{owner}: in {where}: {error}") from None


def check_scheduler_on(owner: str, scheduler: Any, optimizer: Any, *, wrong_kind: str,
                       wrong_optimizer: str) -> LRScheduler:
    """``scheduler``, if it is a scheduler built on ``optimizer``; else the error ``owner``
    gives: TypeError ``wrong_kind`` (not a scheduler) or ValueError ``wrong_optimizer``
    (a scheduler of another optimizer). The one place this is checked.

    >>> check_scheduler_on("x", "cosine", None, wrong_kind="give a scheduler",
    ...                    wrong_optimizer="")
    Traceback (most recent call last):
    ...
    TypeError: x: give a scheduler; got 'cosine'
    """
    if not isinstance(scheduler, LRScheduler):
        raise TypeError(f"{owner}: {wrong_kind}; got {scheduler!r}")
    if scheduler.optimizer is not optimizer:
        raise ValueError(f"{owner}: {wrong_optimizer}")
    return scheduler


# How far below zero rounding can take a schedule's lr, relative to the lrs it works with: the
# recursive forms (PyTorch's, kept for its numbers) lose a few ulps per step.
ROUNDING = 1e-12


def _rounding_below_zero_as_zero(values: Sequence[float], scale_of: Sequence[float]) -> list:
    """``values`` with any lr that is below zero only by rounding set to 0.0.

    ``CosineAnnealingLR`` from an lr of 0 (a frozen group) up to ``eta_min`` and back reaches
    -3.5e-18 at the bottom by rounding; that is 0, not an error. A clearly negative lr (a
    schedule function returning -0.5) is left for the check to refuse.

    >>> _rounding_below_zero_as_zero([-3.5e-18, 0.01, -0.5], [0.0, 0.01])
    [0.0, 0.01, -0.5]
    """
    scale = max((abs(v) for v in scale_of if isinstance(v, (int, float)) and math.isfinite(v)),
                default=0.0)
    return [0.0 if isinstance(v, float) and -ROUNDING * scale <= v < 0 else v for v in values]
