"""Learning-rate schedules: change each parameter group's ``lr`` as training goes on.

A single learning rate is rarely best for a whole run. Early on, large steps make fast progress
(or, right at the start, are dangerous: see :class:`LinearWarmup`); late in training, smaller
steps let the parameters settle into a minimum instead of bouncing around it. A *scheduler*
owns that plan. It changes ``optimizer.param_groups[i]["lr"]``, the number the optimizer reads on
every ``step()``, and nothing else.

The classes and their arguments are PyTorch's (``torch.optim.lr_scheduler``), and they compute
the same numbers, bit for bit, so code written here runs unchanged on PyTorch:

==========================  ======================================================================
:class:`StepLR`             multiply by ``gamma`` every ``step_size`` steps (step decay)
:class:`MultiStepLR`        multiply by ``gamma`` at each of the ``milestones``
:class:`ExponentialLR`      multiply by ``gamma`` every step
:class:`LinearLR`           a factor going linearly from ``start_factor`` to ``end_factor``
:class:`CosineAnnealingLR`  follow half a cosine from the initial lr down to ``eta_min``
:class:`LambdaLR`           the initial lr times any function of the step number you write
:class:`LinearWarmup`       a linear ramp up to the initial lr, then hand over to another schedule
==========================  ======================================================================

The training loop: build the optimizer, then the scheduler, and call ``scheduler.step()`` *after*
``optimizer.step()``. Once per epoch or once per batch is your choice: a "step" of a scheduler is
whatever you decide it is, so give ``step_size``, ``T_max``, ``milestones``... in the same unit.
(Calling it before ``optimizer.step()`` skips the first value of the schedule; PyTorch warns
about that, dltutor does not.)

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> from dltutor.optim import lr_scheduler
>>> w = nn.Parameter(dt.zeros(1))
>>> opt = optim.SGD([w], lr=0.1)
>>> sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> for epoch in range(5):
...     used = opt.param_groups[0]["lr"]       # the lr this epoch's updates use
...     # for xb, yb in loader: loss = ...; opt.zero_grad(); loss.backward(); opt.step()
...     sched.step()                           # after the optimizer steps
...     print(epoch, used)
0 0.1
1 0.1
2 0.05
3 0.05
4 0.025

Every group has its own schedule, scaled from its own starting lr: the scheduler stores each
group's lr at construction as ``group["initial_lr"]`` (and in ``scheduler.base_lrs``).

>>> opt = optim.SGD([{"params": [nn.Parameter(dt.zeros(1))]},
...                  {"params": [nn.Parameter(dt.zeros(1))], "lr": 0.01}], lr=0.1)
>>> sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
>>> sched.step()
>>> sched.get_last_lr(), sched.base_lrs
([0.05, 0.005], [0.1, 0.01])

To *see* a schedule before training with it, :func:`preview` runs it on a throwaway optimizer
and returns the lr of every step, ready for ``plt.plot``.

Checkpoints. ``scheduler.state_dict()`` holds everything but the optimizer (step count, base
lrs, the schedule's settings); save it next to ``optimizer.state_dict()``. To resume, build the
optimizer, build the scheduler (its constructor sets the lrs to the step-0 values), *then* load
the optimizer's state dict (which brings back the lrs of the saved step) and the scheduler's:

>>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
>>> sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> for _ in range(3):
...     sched.step()
>>> saved_opt, saved = opt.state_dict(), sched.state_dict()
>>> opt2 = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
>>> sched2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
>>> _ = opt2.load_state_dict(saved_opt)        # brings back lr 0.05 (and initial_lr)
>>> sched2.load_state_dict(saved)
>>> sched2.step(); sched2.get_last_lr(), sched2.last_epoch
([0.025], 4)
"""
from __future__ import annotations

import math
import operator
import types
from bisect import bisect_right
from collections import Counter
from numbers import Real
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
           "CosineAnnealingLR", "LinearWarmup", "preview"]

# Keys that PyTorch's schedulers keep in their state dicts for their own warnings; a state dict
# saved by PyTorch loads here with them ignored.
_TORCH_BOOKKEEPING_KEYS = frozenset({"_get_lr_called_within_step", "_is_initial"})


class _MissingInitialLR(KeyError):
    """A KeyError whose message reads as text (KeyError would show it quoted, on one line)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _check_optimizer(owner: str, optimizer: Any) -> None:
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list) or not all(isinstance(g, dict) and "lr" in g for g in groups):
        raise TypeError(
            f"{owner} needs an optimizer (an object whose param_groups is a list of dicts with an "
            f"'lr'), such as optim.SGD(model.parameters(), lr=0.1); got "
            f"{type(optimizer).__name__}. "
            "Build the optimizer first, then pass it to the scheduler.")


def _as_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{owner}: {name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{owner}: {name} must be an integer (a number of steps), "
                        f"got {value!r} of type {type(value).__name__}") from None


def _copy_value(value: Any) -> Any:
    """Copy containers so a state dict and the scheduler never share a list that one mutates."""
    if isinstance(value, Counter):
        return Counter(value)
    if isinstance(value, dict):
        return {k: _copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_value(v) for v in value]
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

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        owner = type(self).__name__
        _check_optimizer(owner, optimizer)
        last_epoch = _as_int(owner, "last_epoch", last_epoch)
        if last_epoch < -1:
            raise ValueError(f"{owner}: last_epoch must be -1 (a new schedule) or the number of "
                             f"steps already done (>= 0), got last_epoch={last_epoch}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise _MissingInitialLR(
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
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = ExponentialLR(opt, gamma=0.5)
        >>> sched.step()
        >>> sched.last_epoch, opt.param_groups[0]["lr"]
        (1, 0.05)
        """
        self._step_count += 1
        self.last_epoch += 1
        self._set_lrs(self.get_lr())

    def _set_lrs(self, values: Sequence[float]) -> None:
        groups = self.optimizer.param_groups
        values = list(values)
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__} computed {len(values)} learning rates for an optimizer "
                f"with {len(groups)} param groups; build the scheduler after the last "
                "add_param_group()")
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
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> StepLR(opt, step_size=3, gamma=0.5).state_dict()
        {'step_size': 3, 'gamma': 0.5, 'base_lrs': [0.1], 'last_epoch': 0, '_step_count': 1,
         '_last_lr': [0.1]}
        """
        return {key: _copy_value(value) for key, value in self.__dict__.items()
                if key != "optimizer"}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore the state saved by :meth:`state_dict`; the next ``step()`` continues from it.

        It does not change the optimizer's lrs: load the optimizer's own state dict for those
        (after building the scheduler, whose constructor resets them to the step-0 values).
        Unknown keys (a state dict saved from another kind of scheduler) raise ValueError.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = StepLR(opt, step_size=3)
        >>> sched.load_state_dict({"last_epoch": 7, "gamma": 0.5})
        >>> sched.last_epoch, sched.gamma
        (7, 0.5)
        """
        known = self._check_state_keys(state_dict)
        for key, value in state_dict.items():
            if key in known:
                setattr(self, key, self._loaded_value(key, value))

    def _check_state_keys(self, state_dict: Any) -> set[str]:
        owner = type(self).__name__
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{owner}.load_state_dict expects the dict returned by state_dict(), "
                            f"got {type(state_dict).__name__}")
        known = set(self.state_dict())
        unknown = [key for key in state_dict if key not in known
                   and key not in _TORCH_BOOKKEEPING_KEYS]
        if unknown:
            raise ValueError(
                f"{owner}.load_state_dict: state_dict has unknown key(s) {unknown}; a {owner} "
                f"state dict has the keys {sorted(known)}. Was it saved from a different kind "
                "of scheduler?")
        return known

    def _loaded_value(self, key: str, value: Any) -> Any:
        return _copy_value(value)


class LambdaLR(LRScheduler):
    """Each group's lr is its initial lr times ``lr_lambda(step)``: any schedule you can write.

    ``lr_lambda`` is one function (used for every group) or a list with one function per group;
    each takes the step number (``last_epoch``, 0 first) and returns a factor. It is the tool
    for schedules that have no class of their own, e.g. inverse square root decay or a
    hand-written warmup.

    ``state_dict()`` saves no functions (like PyTorch): a plain function or lambda is stored as
    ``None``, and a callable object as its ``__dict__``. Pass the same functions again when you
    build the scheduler to resume.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
    >>> sched = LambdaLR(opt, lr_lambda=lambda step: 1 / (step + 1))
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(opt.param_groups[0]["lr"])
    ...     sched.step()
    >>> [round(lr, 4) for lr in lrs]
    [0.1, 0.05, 0.0333, 0.025]
    """

    def __init__(self, optimizer: Any, lr_lambda: Callable[[int], float] |
                 Sequence[Callable[[int], float]], last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        n_groups = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            lambdas = [lr_lambda] * n_groups
        else:
            if len(lr_lambda) != n_groups:
                raise ValueError(
                    f"LambdaLR: lr_lambda is a list of {len(lr_lambda)} functions but the "
                    f"optimizer has {n_groups} param groups; pass one function per group, or a "
                    "single function for all of them")
            lambdas = list(lr_lambda)
        for i, fn in enumerate(lambdas):
            if not callable(fn):
                where = f"lr_lambda[{i}]" if isinstance(lr_lambda, (list, tuple)) else "lr_lambda"
                raise TypeError(f"LambdaLR: {where} must be a function of the step number "
                                f"(e.g. lambda step: 0.95 ** step), got {fn!r}")
        self.lr_lambdas: list[Callable[[int], float]] = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base_lr * fn(self.last_epoch)
                for fn, (_, base_lr) in zip(self.lr_lambdas, self._groups_and_bases())]

    def state_dict(self) -> dict[str, Any]:
        """Like :meth:`LRScheduler.state_dict`, with ``lr_lambdas``: ``None`` for a function or
        lambda (code is not saved), the ``__dict__`` of a callable object.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> LambdaLR(opt, lambda step: 0.9 ** step).state_dict()["lr_lambdas"]
        [None]
        """
        state = {key: _copy_value(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Like :meth:`LRScheduler.load_state_dict`; a saved callable object's ``__dict__`` is
        copied into the matching object of this scheduler (functions keep the ones you passed).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> sched = LambdaLR(opt, lambda step: 0.5 ** step)
        >>> sched.load_state_dict({"last_epoch": 2, "lr_lambdas": [None]})
        >>> sched.step(); sched.get_last_lr()
        [0.0125]
        """
        known = self._check_state_keys(state_dict)
        saved = state_dict.get("lr_lambdas")
        if saved is not None and len(saved) != len(self.lr_lambdas):
            raise ValueError(f"LambdaLR.load_state_dict: state_dict['lr_lambdas'] has "
                             f"{len(saved)} entries but this scheduler has "
                             f"{len(self.lr_lambdas)} lr_lambdas")
        for key, value in state_dict.items():
            if key in known and key != "lr_lambdas":
                setattr(self, key, _copy_value(value))
        for fn, fn_state in zip(self.lr_lambdas, saved or []):
            if fn_state is not None:
                fn.__dict__.update(fn_state)


class StepLR(LRScheduler):
    """Step decay: multiply every group's lr by ``gamma`` every ``step_size`` steps.

    The classic schedule of image classifiers (e.g. lr 0.1, divided by 10 every 30 epochs): a
    large lr makes fast progress, and each drop lets the loss settle lower. The lr at step ``t``
    is ``initial_lr * gamma ** (t // step_size)``. Like PyTorch, the decay multiplies the
    *current* lr, so if you change a group's lr by hand, the schedule carries on from your value.

    >>> preview(lambda opt: StepLR(opt, step_size=2, gamma=0.5), 6).tolist()
    [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]
    """

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        step_size = _as_int("StepLR", "step_size", step_size)
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive number of steps between "
                             f"decays, got step_size={step_size}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` when the step number reaches each milestone.

    Step decay at chosen steps, e.g. ``milestones=[30, 80]``: lr, then lr * gamma from step 30,
    then lr * gamma**2 from step 80. ``milestones`` must be in increasing order; a milestone
    listed twice decays twice (as in PyTorch). The decay multiplies the *current* lr.

    >>> preview(lambda opt: MultiStepLR(opt, milestones=[2, 3], gamma=0.5), 5).tolist()
    [0.1, 0.1, 0.05, 0.025, 0.025]
    """

    def __init__(self, optimizer: Any, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        try:
            given = list(milestones)
        except TypeError:
            raise TypeError(f"MultiStepLR: milestones must be a list of step numbers such as "
                            f"[30, 80], got {milestones!r}") from None
        values = [_as_int("MultiStepLR", "each milestone", m) for m in given]
        if any(m < 0 for m in values):
            raise ValueError(f"MultiStepLR: milestones are step numbers and must be >= 0, "
                             f"got milestones={given}")
        if any(b < a for a, b in zip(values, values[1:])):
            raise ValueError(f"MultiStepLR: milestones must be increasing, got "
                             f"milestones={given}; did you mean {sorted(values)}?")
        self.milestones = Counter(values)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]

    def _loaded_value(self, key: str, value: Any) -> Any:
        # dt.save/dt.load bring a Counter back as a plain dict.
        return Counter(value) if key == "milestones" else _copy_value(value)


class ExponentialLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` every step: ``lr_t = initial_lr * gamma ** t``.

    A smooth version of step decay; with one step per batch, ``gamma`` is close to 1
    (0.999...). The decay multiplies the *current* lr, as in PyTorch.

    >>> preview(lambda opt: ExponentialLR(opt, gamma=0.5), 4, lr=1.0).tolist()
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Any, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        # When resuming, the constructor's step must not decay the lr a second time.
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """A factor going linearly from ``start_factor`` (step 0) to ``end_factor`` (step
    ``total_iters``) times each group's initial lr, then kept at ``end_factor``.

    With the defaults it is PyTorch's usual warmup (1/3 of the lr, up to the full lr in 5
    steps); with ``start_factor=1.0, end_factor=0.0`` a linear decay to zero. ``start_factor``
    must be in (0, 1] and ``end_factor`` in [0, 1], as in PyTorch (for a warmup from exactly 0,
    use :class:`LinearWarmup`). Like PyTorch, each step multiplies the *current* lr by the
    ratio of consecutive factors, which equals the closed form up to rounding.

    >>> preview(lambda opt: LinearLR(opt, start_factor=0.25, total_iters=3), 5, lr=1.0).tolist()
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Any, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be greater than 0 and at most 1, got "
                             f"start_factor={start_factor!r} (for a warmup from 0 use "
                             "LinearWarmup)")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be between 0 and 1, got "
                             f"end_factor={end_factor!r}")
        total_iters = _as_int("LinearLR", "total_iters", total_iters)
        if total_iters <= 0:
            raise ValueError(f"LinearLR: total_iters must be a positive number of steps, got "
                             f"total_iters={total_iters}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        return [group["lr"] * (1.0 + (self.end_factor - self.start_factor)
                               / (self.total_iters * self.start_factor
                                  + (self.last_epoch - 1) * (self.end_factor - self.start_factor)))
                for group in self.optimizer.param_groups]

    def _closed_form_lr(self) -> list[float]:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Follow half a cosine from each group's initial lr down to ``eta_min`` over ``T_max`` steps.

    ``lr_t = eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``: the lr stays high
    for a while, falls fastest in the middle, and flattens out near ``eta_min``: a smooth decay
    with only one setting (``T_max``, usually the total number of steps), popular since
    "SGDR" (Loshchilov & Hutter, 2017) and in transformer training after a warmup
    (see :class:`LinearWarmup`). Past ``T_max`` the lr climbs back up along the cosine, as in
    PyTorch; set ``T_max`` to the length of the run.

    Like PyTorch, each step computes the new lr from the *current* one (a recursive form equal
    to the formula above up to rounding), so a change you make by hand carries through.

    >>> preview(lambda opt: CosineAnnealingLR(opt, T_max=4), 5, lr=1.0).round(4).tolist()
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, Real):
            raise TypeError(f"CosineAnnealingLR: T_max must be a number of steps, got {T_max!r}")
        if T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max (the number of steps from the initial lr "
                             f"down to eta_min) must be positive, got T_max={T_max}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # The bottom of the cosine, where the ratio below would divide by 1 + cos(pi) = 0.
            return [group["lr"]
                    + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for group, base_lr in self._groups_and_bases()]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class LinearWarmup(LRScheduler):
    """Ramp every group's lr linearly up to its initial lr over ``warmup_steps`` steps, then hand
    over to the schedule ``after`` (or keep the initial lr when ``after`` is None).

    Why warm up? At the start of training the weights are random and the gradients large and
    erratic; with Adam, the moment estimates are averages of only a few noisy gradients, so the
    first updates can be far too large and throw the model into a bad region (or make the loss
    blow up). Starting with a small lr and raising it over the first few hundred steps avoids
    that; transformers are almost always trained this way, usually followed by a cosine decay.

    For step ``t < warmup_steps`` the lr is
    ``initial_lr * (start_factor + (1 - start_factor) * t / warmup_steps)``. At step
    ``warmup_steps`` the schedule ``after`` (built on the same optimizer, before the warmup) takes
    over, counting its own steps from 0 there: it is stepped once per ``step()`` from then on.
    Without ``after``, the lr is set back to the initial lr at step ``warmup_steps`` and then left
    alone. ``state_dict()`` includes ``after``'s state.

    Equivalents elsewhere: Paddle's ``LinearWarmup(learning_rate, warmup_steps, start_lr, end_lr)``
    (with ``start_lr = start_factor * lr`` and ``end_lr = lr``); in PyTorch,
    ``SequentialLR(opt, [LinearLR(opt, start_factor, 1.0, total_iters=warmup_steps), after],
    milestones=[warmup_steps])``, whose values this class reproduces exactly from the hand-over
    on (PyTorch's LinearLR computes the ramp recursively, so its warmup values may differ in the
    last bits, and it cannot start from 0: for ``start_factor=0`` use
    ``LambdaLR(opt, lambda step: step / warmup_steps)`` as the first schedule).

    >>> def make(opt):
    ...     return LinearWarmup(opt, warmup_steps=4, after=CosineAnnealingLR(opt, T_max=4))
    >>> preview(make, 9, lr=1.0).round(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Any, warmup_steps: int, start_factor: float = 0.0,
                 after: LRScheduler | None = None, last_epoch: int = -1) -> None:
        _check_optimizer("LinearWarmup", optimizer)
        warmup_steps = _as_int("LinearWarmup", "warmup_steps", warmup_steps)
        if warmup_steps < 0:
            raise ValueError(f"LinearWarmup: warmup_steps must be >= 0, got "
                             f"warmup_steps={warmup_steps}")
        if isinstance(start_factor, bool) or not isinstance(start_factor, Real) \
                or not 0 <= start_factor <= 1:
            raise ValueError(f"LinearWarmup: start_factor (the fraction of the initial lr used at "
                             f"step 0) must be between 0 and 1, got start_factor={start_factor!r}")
        if after is not None:
            if not isinstance(after, LRScheduler):
                raise TypeError(f"LinearWarmup: after must be a scheduler such as "
                                f"CosineAnnealingLR(optimizer, T_max=...), got {after!r}")
            if after.optimizer is not optimizer:
                raise ValueError("LinearWarmup: after must be built on the same optimizer as the "
                                 "warmup, got a scheduler of another optimizer")
        self.warmup_steps = warmup_steps
        self.start_factor = start_factor
        self.after = after
        # `after` already set the lrs in its own constructor; the initial step below sets this
        # schedule's step-0 values over them (from group["initial_lr"], which `after` did not
        # change), and `after` is restarted from its step 0 at the hand-over.
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch < self.warmup_steps:
            factor = (self.start_factor
                      + (1 - self.start_factor) * self.last_epoch / self.warmup_steps)
            return [base_lr * factor for base_lr in self.base_lrs]
        return list(self.base_lrs)

    def step(self) -> None:
        """One step: the next warmup value, the hand-over, or one step of ``after``.

        Step only the warmup: it steps ``after`` for you once the warmup is over.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> after = StepLR(opt, step_size=1, gamma=0.5)
        >>> warm = LinearWarmup(opt, warmup_steps=2, after=after)
        >>> for _ in range(3):
        ...     warm.step()
        ...     print(warm.last_epoch, after.last_epoch, warm.get_last_lr())
        1 0 [0.05]
        2 0 [0.1]
        3 1 [0.05]
        """
        self._step_count += 1
        self.last_epoch += 1
        if self.last_epoch < self.warmup_steps or (self.last_epoch == self.warmup_steps
                                                   and self.after is None):
            self._set_lrs(self.get_lr())
            return
        if self.last_epoch == self.warmup_steps:
            self.after._restart()                 # the hand-over: `after` is at its step 0
        elif self.after is not None and not self._is_initial:
            self.after.step()
        # After the warmup without `after` (or when resuming past it), the lrs are left alone.
        self._record_lrs()

    def _restart(self) -> None:
        self.last_epoch = -1
        self.step()

    def state_dict(self) -> dict[str, Any]:
        """Like :meth:`LRScheduler.state_dict`, with ``after``'s state dict (or None) under
        ``"after"``; :meth:`load_state_dict` restores both.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> warm = LinearWarmup(opt, 3, after=ExponentialLR(opt, gamma=0.9))
        >>> state = warm.state_dict()
        >>> state["last_epoch"], state["after"]["gamma"]
        (0, 0.9)
        """
        state = {key: _copy_value(value) for key, value in self.__dict__.items()
                 if key not in ("optimizer", "after")}
        state["after"] = None if self.after is None else self.after.state_dict()
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore the warmup's state and ``after``'s (build both like the saved ones first).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> warm = LinearWarmup(opt, 4)
        >>> warm.load_state_dict({"last_epoch": 3})
        >>> warm.step(); warm.get_last_lr()           # step 4: the warmup is over
        [0.1]
        """
        known = self._check_state_keys(state_dict)
        after_state = state_dict.get("after")
        if (after_state is None) != (self.after is None) and "after" in state_dict:
            raise ValueError(
                "LinearWarmup.load_state_dict: the saved warmup "
                f"{'had no' if after_state is None else 'had an'} `after` schedule but this one "
                f"{'has one' if self.after is not None else 'has none'}; "
                "build it like the saved one")
        for key, value in state_dict.items():
            if key in known and key != "after":
                setattr(self, key, _copy_value(value))
        if after_state is not None:
            self.after.load_state_dict(after_state)


def preview(make_scheduler: Callable[[Any], LRScheduler], steps: int,
            lr: float = 0.1) -> np.ndarray:
    """The lr a schedule gives at each of ``steps`` steps, computed on a throwaway optimizer.

    ``make_scheduler(optimizer)`` must build the scheduler on the optimizer it is given (an SGD
    over one dummy parameter, with one group of lr ``lr``). Returns a NumPy array of length
    ``steps``: entry ``t`` is the lr that step ``t`` uses (entry 0 is set by the constructor).
    Plot it to see a schedule before training with it:
    ``plt.plot(preview(lambda opt: CosineAnnealingLR(opt, T_max=100), 100))``.

    >>> preview(lambda opt: StepLR(opt, step_size=2, gamma=0.5), 5).tolist()
    [0.1, 0.1, 0.05, 0.05, 0.025]
    """
    steps = _as_int("preview", "steps", steps)
    if steps < 0:
        raise ValueError(f"preview: steps must be >= 0, got steps={steps}")
    from ..nn import Parameter            # imported here: dltutor.optim imports this module
    from .sgd import SGD

    optimizer = SGD([Parameter(np.zeros(1))], lr=lr)
    scheduler = make_scheduler(optimizer)
    if not isinstance(scheduler, LRScheduler):
        raise TypeError(f"preview: make_scheduler must return a scheduler, e.g. "
                        f"lambda opt: StepLR(opt, step_size=10); it returned {scheduler!r}")
    if scheduler.optimizer is not optimizer:
        raise ValueError("preview: make_scheduler must build the scheduler on the optimizer it is "
                         "given (lambda opt: StepLR(opt, ...)), not on an optimizer of your own")
    lrs = np.empty(steps)
    for t in range(steps):
        lrs[t] = optimizer.param_groups[0]["lr"]
        scheduler.step()
    return lrs
