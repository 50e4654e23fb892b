"""FrameworkSteps: a PyTorch or Paddle optimizer's steps, measured for the Recorder.

dltutor's optimizers report each step themselves (``optimizer.last_step``). PyTorch's and
Paddle's do not, so this measures around their ``step()``: just before it, each parameter's
squared gradient norm and a copy of its values; just after, its squared update and parameter
norms, and the effective lr the optimizer gave it. The gradient is read as the loop left it,
so a PyTorch loop that calls ``clip_grad_norm_`` before ``step()`` records the clipped one; a
Paddle optimizer's own ``grad_clip`` acts inside ``step()``, after the measurement, so its
gradient norms are before clipping (the "after clipping" series repeats them).

How each framework is hooked is its adapter's :meth:`~.base.Adapter.watch_steps`: PyTorch's
``register_step_pre_hook`` / ``register_step_post_hook``; Paddle, which has no step hooks,
gets its ``step`` wrapped on the instance until :meth:`FrameworkSteps.remove`.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ... import backend as B
from ..lookup import entries_by_param


class FrameworkSteps:
    """Measure every ``every``-th step of a framework ``optimizer`` on ``params`` and hand
    ``record(step, per_param)`` one ``((grad², update², param², clipped grad²), lr)`` per
    parameter, in ``params``' order. ``remove()`` unhooks it."""

    def __init__(self, adapter: Any, params: list, optimizer: Any, every: int,
                 record: Callable[[int, list], None]):
        self.adapter, self.params, self.optimizer = adapter, params, optimizer
        self.every, self.record = every, record
        self.steps = 0
        self._before: list | None = None
        self._unhook = adapter.watch_steps(optimizer, self._before_step, self._after_step)

    def _before_step(self) -> None:
        if self.steps % self.every:
            self._before = None
            return
        grads = [self.adapter.grad(p) for p in self.params]
        self._before = [(0.0 if grad is None else B.sums_of_squares([grad])[0],
                         self.adapter.values(p).copy()) for p, grad in zip(self.params, grads)]

    def _after_step(self) -> None:
        if self._before is not None:
            entries = entries_by_param(self.adapter.entries(self.optimizer))
            per_param = []
            for param, (grad_sq, old) in zip(self.params, self._before):
                new = self.adapter.values(param)
                entry = entries.get(id(param))
                lr = self.adapter.effective_lr(entry) if entry is not None else math.nan
                update_sq, param_sq = B.sums_of_squares([new - old, new])
                squares = (grad_sq, update_sq, param_sq, grad_sq)
                per_param.append((squares, lr))
            self.record(self.steps, per_param)
        self.steps += 1

    def remove(self) -> None:
        """Stop measuring (what was recorded stays)."""
        self._unhook()
