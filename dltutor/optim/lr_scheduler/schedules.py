"""The schedules with PyTorch's names and numbers: LambdaLR, StepLR, MultiStepLR, ExponentialLR,
LinearLR, CosineAnnealingLR (see the package docstring for when to use which)."""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from typing import Any, Callable, Iterable, Mapping, Sequence

from ... import checks
from . import state_checks as check
from .scheduler import LRScheduler, check_optimizer, copy_value


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
        check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        n_groups = len(optimizer.param_groups)
        lambdas: list[Any]
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
        return [base_lr * checks.number("LambdaLR", f"lr_lambda({self.last_epoch})",
                                        fn(self.last_epoch), hint="it returns the lr factor")
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
        state = {key: copy_value(value) for key, value in self.__dict__.items()
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
        self._apply_state(self._checked_state(state_dict))

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        if key != "lr_lambdas":
            return super()._checked_value(owner, key, value)
        # Functions are not saved (None); a callable object's attributes are, as a dict.
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{owner}: lr_lambdas must be a list (None or a dict per function), "
                            f"got {value!r:.80}")
        if len(value) != len(self.lr_lambdas):
            raise ValueError(f"{owner}: state_dict['lr_lambdas'] has {len(value)} entries but "
                             f"this scheduler has {len(self.lr_lambdas)} lr_lambdas")
        for i, fn_state in enumerate(value):
            if fn_state is not None and not (isinstance(fn_state, dict)
                                             and all(isinstance(k, str) for k in fn_state)):
                raise TypeError(f"{owner}: lr_lambdas[{i}] must be None or a dict of a callable "
                                f"object's attributes, got {fn_state!r:.80}")
        return copy_value(list(value))

    def _apply_state(self, checked: dict[str, Any]) -> None:
        saved = checked.pop("lr_lambdas", [])
        super()._apply_state(checked)
        for fn, fn_state in zip(self.lr_lambdas, saved):
            if fn_state is not None:
                fn.__dict__.update(fn_state)


class StepLR(LRScheduler):
    """Step decay: multiply every group's lr by ``gamma`` every ``step_size`` steps.

    The classic schedule of image classifiers (e.g. lr 0.1, divided by 10 every 30 epochs): a
    large lr makes fast progress, and each drop lets the loss settle lower. The lr at step ``t``
    is ``initial_lr * gamma ** (t // step_size)``. Like PyTorch, the decay multiplies the
    *current* lr, so if you change a group's lr by hand, the schedule carries on from your value.

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: StepLR(opt, step_size=2, gamma=0.5), 6).tolist()
    [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]
    """

    step_size = check.Setting(check.steps)      # each checked at every assignment
    gamma = check.Setting(check.rate)

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size               # a whole float (epochs / 4) becomes an int
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

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: MultiStepLR(opt, milestones=[2, 3], gamma=0.5), 5).tolist()
    [0.1, 0.1, 0.05, 0.025, 0.025]
    """

    milestones = check.Setting(check.milestones)
    gamma = check.Setting(check.rate)

    def __init__(self, optimizer: Any, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = milestones             # stored as a Counter of the steps
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


class ExponentialLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` every step: ``lr_t = initial_lr * gamma ** t``.

    A smooth version of step decay; with one step per batch, ``gamma`` is close to 1
    (0.999...). The decay multiplies the *current* lr, as in PyTorch.

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: ExponentialLR(opt, gamma=0.5), 4, lr=1.0).tolist()
    [1.0, 0.5, 0.25, 0.125]
    """

    gamma = check.Setting(check.rate)

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

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: LinearLR(opt, start_factor=0.25, total_iters=3), 5, lr=1.0).tolist()
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    start_factor = check.Setting(check.start_factor)
    end_factor = check.Setting(check.fraction)
    total_iters = check.Setting(check.steps)

    def __init__(self, optimizer: Any, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        self.start_factor, self.end_factor = start_factor, end_factor
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


def t_max(owner: str, name: str, value: Any) -> Any:
    """CosineAnnealingLR's half period: a number > 0 (PyTorch takes a float too).

    >>> t_max("CosineAnnealingLR", "T_max", 0)
    Traceback (most recent call last):
    ...
    ValueError: CosineAnnealingLR: T_max must be a number > 0, got 0 (the number of steps from
    the initial lr down to eta_min)
    """
    return checks.positive(owner, name, value,
                           hint="the number of steps from the initial lr down to eta_min")


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

    >>> from dltutor.optim.lr_scheduler import preview
    >>> preview(lambda opt: CosineAnnealingLR(opt, T_max=4), 5, lr=1.0).round(4).tolist()
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    T_max = check.Setting(t_max)
    eta_min = check.Setting(check.rate)

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
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
