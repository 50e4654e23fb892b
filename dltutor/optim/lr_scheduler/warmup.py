"""LinearWarmup: ramp the lr up from (nearly) zero, then hand over to another schedule."""
from __future__ import annotations

from typing import Any, Mapping

from ... import checks
from . import state_checks as check
from .composite import schedulers_restored_on_error
from .plateau import ReduceLROnPlateau
from .scheduler import (LRScheduler, check_optimizer, check_scheduler_on, checked_child,
                        copy_value)


def warmup_length(owner: str, name: str, value: Any) -> int:
    """The number of warmup steps: an integer >= 0 (0: no warmup, ``after`` from the start).

    >>> warmup_length("LinearWarmup", "warmup_steps", -1)
    Traceback (most recent call last):
    ...
    ValueError: LinearWarmup: warmup_steps must be an integer >= 0, got -1
    """
    return checks.integer(owner, name, value, minimum=0)


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

    ``after`` may be a :class:`ReduceLROnPlateau`: warmup then plateau. Then call
    ``warm.step(val_loss)`` once per epoch, after validating. The hand-over sets the initial lr
    and the plateau starts watching afresh there: the losses given during the warmup are not
    watched (they were measured at smaller lrs), and from the first step after the hand-over
    on each one goes to ``after.step(val_loss)``. A ``step()`` without the loss after the
    hand-over is refused and changes nothing.

    Equivalents elsewhere: Paddle's ``LinearWarmup(learning_rate, warmup_steps, start_lr, end_lr)``
    (with ``start_lr = start_factor * lr`` and ``end_lr = lr``); in PyTorch,
    ``SequentialLR(opt, [LinearLR(opt, start_factor, 1.0, total_iters=warmup_steps), after],
    milestones=[warmup_steps])``, whose values this class reproduces exactly from the hand-over
    on (PyTorch's LinearLR computes the ramp recursively, so its warmup values may differ in the
    last bits, and it cannot start from 0: for ``start_factor=0`` use
    ``LambdaLR(opt, lambda step: step / warmup_steps)`` as the first schedule). PyTorch's
    ``SequentialLR`` cannot hold a ``ReduceLROnPlateau``; there, warmup then plateau is written
    by hand, with the same numbers: ``warmup = LambdaLR(opt, lambda step: step / k)`` and, after
    each epoch, ``warmup.step() if epoch < k else plateau.step(val_loss)``.

    >>> from dltutor.optim.lr_scheduler import CosineAnnealingLR, preview
    >>> def make(opt):
    ...     return LinearWarmup(opt, warmup_steps=4, after=CosineAnnealingLR(opt, T_max=4))
    >>> preview(make, 9, lr=1.0).round(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    warmup_steps = check.Setting(warmup_length)
    start_factor = check.Setting(check.fraction)

    def __init__(self, optimizer: Any, warmup_steps: int, start_factor: float = 0.0,
                 after: LRScheduler | None = None, last_epoch: int = -1) -> None:
        check_optimizer("LinearWarmup", optimizer)
        warmup_steps = warmup_length("LinearWarmup", "warmup_steps", warmup_steps)
        start_factor = check.fraction("LinearWarmup", "start_factor", start_factor)
        if after is not None:
            check_scheduler_on(
                "LinearWarmup", after, optimizer,
                wrong_kind="after must be a scheduler such as CosineAnnealingLR(optimizer, "
                           "T_max=...)",
                wrong_optimizer="after must be built on the same optimizer as the warmup, got a "
                                "scheduler of another optimizer")
        self.warmup_steps = warmup_steps
        self.start_factor = start_factor
        # Any: a ReduceLROnPlateau (whose step takes a metric) is no LRScheduler subclass
        self.after: Any = after
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

    def step(self, metrics: Any = None) -> None:
        """One step: the next warmup value, the hand-over, or one step of ``after``.

        Step only the warmup: it steps ``after`` for you once the warmup is over. When ``after``
        is a :class:`ReduceLROnPlateau`, give the metric it watches, ``warm.step(val_loss)``
        (it is needed from the first step after the hand-over; before, it is not watched).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import StepLR
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
        metric = self._checked_metric(metrics)
        # A step that fails half-way (a refused lr, a plateau whose min_lr no longer fits the
        # groups) leaves the warmup, `after` and the lrs as they were.
        with schedulers_restored_on_error(self.optimizer, [self]):
            self._step_count += 1
            self.last_epoch += 1
            if self.last_epoch <= self.warmup_steps:
                self._set_lrs(self.get_lr())       # a warmup value, or the initial lr at the end
                if self.last_epoch == self.warmup_steps and self.after is not None:
                    self.after._restart()          # the hand-over: `after` is at its step 0
            elif self.after is not None and not self._is_initial:
                self._step_after(metric)
            # After the warmup without `after` (or when resuming past it), the lrs are left alone.
        self._record_lrs()

    @property
    def _needs_metric(self) -> bool:
        """True when ``after`` is a ReduceLROnPlateau, which is stepped with a metric."""
        return isinstance(self.after, ReduceLROnPlateau)

    def _checked_metric(self, metrics: Any) -> float | None:
        """The metric as a float (None when none is given or needed), checked before any step.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ReduceLROnPlateau
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> warm = LinearWarmup(opt, 0, after=ReduceLROnPlateau(opt))
        >>> warm.step()
        Traceback (most recent call last):
        ...
        TypeError: LinearWarmup.step: the warmup is over (warmup_steps=0) and its `after`, a
        ReduceLROnPlateau, watches a metric: call warm.step(val_loss) once per epoch, after
        validating
        """
        if not self._needs_metric:
            if metrics is not None:
                after = ("has no `after` to give it to" if self.after is None
                         else f"hands over to a {type(self.after).__name__}, which watches none")
                raise TypeError(
                    f"LinearWarmup.step: got metrics={metrics!r}, but this warmup {after}; call "
                    "warm.step() (a metric is taken only when `after` is a ReduceLROnPlateau)")
            return None
        if metrics is not None:
            return self.after._metric(metrics)
        if self.last_epoch >= self.warmup_steps and not self._is_initial:
            raise TypeError(
                f"LinearWarmup.step: the warmup is over (warmup_steps={self.warmup_steps}) and "
                "its `after`, a ReduceLROnPlateau, watches a metric: call warm.step(val_loss) "
                "once per epoch, after validating")
        return None

    def _step_after(self, metric: float | None) -> None:
        if self._needs_metric:
            self.after.step(metric)
        else:
            self.after.step()

    def _restart(self) -> None:
        self.last_epoch = -1
        self.step()

    def state_dict(self) -> dict[str, Any]:
        """Like :meth:`LRScheduler.state_dict`, with ``after``'s state dict (or None) under
        ``"after"``; :meth:`load_state_dict` restores both.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> from dltutor.optim.lr_scheduler import ExponentialLR
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(1))], lr=0.1)
        >>> warm = LinearWarmup(opt, 3, after=ExponentialLR(opt, gamma=0.9))
        >>> state = warm.state_dict()
        >>> state["last_epoch"], state["after"]["gamma"]
        (0, 0.9)
        """
        state = {key: copy_value(value) for key, value in self.__dict__.items()
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
        self._apply_state(self._checked_state(state_dict))

    def _checked_value(self, owner: str, key: str, value: Any) -> Any:
        if key != "after":
            return super()._checked_value(owner, key, value)
        if (value is None) != (self.after is None):
            raise ValueError(
                f"{owner}: the saved warmup {'had no' if value is None else 'had an'} `after` "
                f"schedule but this one {'has one' if self.after is not None else 'has none'}; "
                "build it like the saved one")
        # ``after``'s whole state is checked now, before the warmup's own keys are stored.
        return None if value is None else checked_child(owner, "after", self.after, value)

    def _apply_state(self, checked: dict[str, Any]) -> None:
        after_state = checked.pop("after", None)
        super()._apply_state(checked)
        if after_state is not None:
            self.after._apply_state(after_state)
