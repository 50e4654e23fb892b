"""preview: run a schedule on a throwaway optimizer to see its lrs before training with it."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ... import checks
from ...nn import Parameter
from ..sgd import SGD
from .scheduler import LRScheduler, check_scheduler_on


def preview(make_scheduler: Callable[[Any], LRScheduler], steps: int,
            lr: float = 0.1) -> np.ndarray:
    """The lr a schedule gives at each of ``steps`` steps, computed on a throwaway optimizer.

    ``make_scheduler(optimizer)`` must build the scheduler on the optimizer it is given (an SGD
    over one dummy parameter, with one group of lr ``lr``). Returns a NumPy array of length
    ``steps``: entry ``t`` is the lr that step ``t`` uses (entry 0 is set by the constructor).
    Plot it to see a schedule before training with it:
    ``plt.plot(preview(lambda opt: CosineAnnealingLR(opt, T_max=100), 100))``.

    >>> from dltutor.optim.lr_scheduler import StepLR
    >>> preview(lambda opt: StepLR(opt, step_size=2, gamma=0.5), 5).tolist()
    [0.1, 0.1, 0.05, 0.05, 0.025]
    """
    steps = checks.integer("preview", "steps", steps, minimum=0)
    optimizer = SGD([Parameter(np.zeros(1))], lr=lr)
    scheduler = check_scheduler_on(
        "preview", make_scheduler(optimizer), optimizer,
        wrong_kind="make_scheduler must return a scheduler, e.g. "
                   "lambda opt: StepLR(opt, step_size=10)",
        wrong_optimizer="make_scheduler must build the scheduler on the optimizer it is given "
                        "(lambda opt: StepLR(opt, ...)), not on an optimizer of your own")
    lrs = np.empty(steps)
    for t in range(steps):
        lrs[t] = optimizer.param_groups[0]["lr"]
        scheduler.step()
    return lrs
