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
:class:`OneCycleLR`         up to ``max_lr`` and down far below the start, once (momentum opposite)
:class:`SequentialLR`       several schedules one after another, switching at ``milestones``
:class:`ChainedScheduler`   several schedules at once, their factors multiplied
:class:`ReduceLROnPlateau`  divide the lr when a metric stops improving: ``step(val_loss)``
==========================  ======================================================================

The training loop: build the optimizer, then the scheduler, and call ``scheduler.step()`` *after*
``optimizer.step()``. Once per epoch or once per batch is your choice: a "step" of a scheduler is
whatever you decide it is, so give ``step_size``, ``T_max``, ``milestones``... in the same unit.
(Calling it before ``optimizer.step()`` skips the first value of the schedule; PyTorch warns
about that, dltutor does not.)

Warmup then plateau: ``LinearWarmup(opt, warmup_steps=3, after=ReduceLROnPlateau(opt))``,
stepped once per epoch with ``warm.step(val_loss)``; the plateau watches the losses from the
hand-over on (PyTorch users write it by hand: a ``LambdaLR`` ramp, then ``plateau.step``).

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
lrs, the schedule's settings); save it next to ``optimizer.state_dict()``. ``load_state_dict``
checks every entry with the check of the constructor's argument of that name (so does
assigning a setting, ``sched.gamma = 0.5``): a refused state names the key and the value, and
changes nothing, in a SequentialLR's schedulers too. To resume, build the
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
from .preview import preview
from .scheduler import LRScheduler
from .schedules import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, MultiStepLR,
                        StepLR)
from .composite import ChainedScheduler, SequentialLR
from .onecycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .warmup import LinearWarmup

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
           "CosineAnnealingLR", "LinearWarmup", "SequentialLR", "ChainedScheduler",
           "ReduceLROnPlateau", "OneCycleLR", "preview"]
