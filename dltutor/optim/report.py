"""What one ``step()`` did to each parameter: the report a Recorder (or your own hook) reads.

Set ``optimizer.record_steps = True`` and, after each step, ``optimizer.last_step`` is a
:class:`StepReport`: per updated parameter, the squared L2 norms of its gradient (as backward
left it, and after clipping), of the change the step made, and of the parameter after it, with
its name and effective lr. Read it by field, by norm column, or as :class:`StepRecord` objects.

The norms are kept squared because that is what a batch of dot products gives, what a layer's
norm is the sum of, and what a Recorder stores: a traced step takes no square roots and makes
no object per parameter. The norm columns and the records are made when you read them.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import backend as B
from ..autograd import Tensor


class StepRecord:
    """What one ``step()`` did to one parameter: one entry of a :class:`StepReport`.

    Norms are L2 norms, as Python floats: ``grad_norm`` of ``p.grad`` as backward left it,
    ``clipped_grad_norm`` after ``grad_clip`` (equal when nothing clipped it), ``update_norm``
    of the change the step made and ``param_norm`` of the parameter after it; ``lr`` is the
    effective learning rate. ``update`` (new minus old values) is computed when you ask for it,
    in a post-step hook: the array behind it is reused by the next step.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> w = nn.Parameter([3.0, 4.0])
    >>> opt = optim.SGD([("w", w)], lr=0.1)
    >>> opt.record_steps = True
    >>> w.grad = dt.tensor([3.0, 4.0]); opt.step()
    >>> record = opt.last_step[0]
    >>> record.name, record.grad_norm, record.update.tolist()
    ('w', 5.0, [-0.30000001192092896, -0.4000000059604645])
    """

    __slots__ = ("name", "param", "grad_norm", "clipped_grad_norm", "update_norm", "param_norm",
                 "lr", "_subtracted")

    def __init__(self, name: str, param: Tensor, grad_norm: float, clipped_grad_norm: float,
                 update_norm: float, param_norm: float, lr: float, subtracted: Any):
        self.name, self.param, self.lr = name, param, lr
        self.grad_norm, self.clipped_grad_norm = grad_norm, clipped_grad_norm
        self.update_norm, self.param_norm = update_norm, param_norm
        self._subtracted = subtracted  # old minus new: what the update took away

    @property
    def update(self) -> Any:
        """New minus old values of the parameter (a new array)."""
        return -self._subtracted

    def __repr__(self) -> str:
        return (f"StepRecord({self.name!r}, grad_norm={self.grad_norm:.4g}, "
                f"clipped_grad_norm={self.clipped_grad_norm:.4g}, lr={self.lr:.4g}, "
                f"update_norm={self.update_norm:.4g}, param_norm={self.param_norm:.4g})")


class StepReport:
    """What the last ``step()`` did, one entry per updated parameter (``optimizer.last_step``).

    Fields, each a sequence in the same order: ``names``, ``params``, ``lrs`` (effective),
    and the squared L2 norms ``grad_sq`` (of ``p.grad`` as backward left it), ``clipped_sq``
    (after ``grad_clip``: the same list as ``grad_sq`` when no clip ran), ``update_sq`` (of the
    change the step made) and ``param_sq`` (of the parameter after the step). Their square
    roots are the columns ``grad_norms``, ``clipped_grad_norms``, ``update_norms`` and
    ``param_norms``; iterating gives :class:`StepRecord` objects. Empty unless
    ``record_steps`` was True.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> w = nn.Parameter([3.0, 4.0])
    >>> opt = optim.SGD([("w", w)], lr=0.1)
    >>> opt.record_steps = True
    >>> w.grad = dt.tensor([3.0, 4.0]); opt.step()
    >>> report = opt.last_step
    >>> report.names, report.grad_sq, report.grad_norms, [round(n, 6) for n in report.update_norms]
    (['w'], [25.0], [5.0], [0.5])
    >>> report[0].lr
    0.1
    """

    __slots__ = ("names", "params", "lrs", "grad_sq", "clipped_sq", "update_sq", "param_sq",
                 "_subtracted")

    def __init__(self, names: Sequence[str], params: Sequence[Tensor], lrs: Sequence[float],
                 grad_sq: Sequence[float], clipped_sq: Sequence[float],
                 update_sq: Sequence[float], param_sq: Sequence[float], subtracted: Sequence[Any]):
        self.names, self.params, self.lrs = names, params, lrs
        self.grad_sq, self.clipped_sq = grad_sq, clipped_sq
        self.update_sq, self.param_sq = update_sq, param_sq
        self._subtracted = subtracted  # per parameter: old minus new values

    @classmethod
    def measure(cls, names: list[str], params: list[Tensor], lrs: list[float],
                clipped_sq: list[float] | None, subtracted: list[Any],
                grad_sq: list[float] | None = None) -> "StepReport":
        """The report of a step that just ended: ``subtracted`` holds, per parameter, old minus
        new values; ``clipped_sq`` the clipped gradients' squared norms (None: no clip ran);
        ``grad_sq`` the gradients' own, when the step already took them (None: take them).

        Every other norm is taken here, in one batch: for small arrays the cost of a call is
        most of the work of a norm, and ``p.grad`` still holds the gradient backward made.

        >>> import numpy as np
        >>> from dltutor import nn
        >>> w = nn.Parameter([0.0, 1.0]); w.grad = nn.Parameter([3.0, 4.0])
        >>> StepReport.measure(["w"], [w], [0.1], None, [np.array([0.0, -1.0])]).update_sq
        [1.0]
        """
        count = len(params)
        stepped: list[Any] = params        # (each took a step, so each has a gradient)
        taken = [] if grad_sq is not None else [p.grad.data for p in stepped]
        squares = B.sums_of_squares(taken + subtracted + [p.data for p in params])
        if grad_sq is None:
            grad_sq, squares = squares[:count], squares[count:]
        return cls(names, params, lrs, grad_sq, grad_sq if clipped_sq is None else clipped_sq,
                   squares[:count], squares[count:], subtracted)

    @property
    def grad_norms(self) -> list[float]:
        """L2 norm of each ``p.grad`` as backward left it."""
        return [math.sqrt(x) for x in self.grad_sq]

    @property
    def clipped_grad_norms(self) -> list[float]:
        """L2 norm of each gradient after ``grad_clip`` (the gradient's when nothing clipped)."""
        return [math.sqrt(x) for x in self.clipped_sq]

    @property
    def update_norms(self) -> list[float]:
        """L2 norm of the change the step made to each parameter."""
        return [math.sqrt(x) for x in self.update_sq]

    @property
    def param_norms(self) -> list[float]:
        """L2 norm of each parameter after the step."""
        return [math.sqrt(x) for x in self.param_sq]

    def __len__(self) -> int:
        return len(self.params)

    def __getitem__(self, index: int) -> StepRecord:
        index = range(len(self.params))[index]  # a negative index counts from the end
        return StepRecord(self.names[index], self.params[index],
                          math.sqrt(self.grad_sq[index]), math.sqrt(self.clipped_sq[index]),
                          math.sqrt(self.update_sq[index]), math.sqrt(self.param_sq[index]),
                          self.lrs[index], self._subtracted[index])

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return "StepReport([" + ", ".join(repr(record) for record in self) + "])"


#: What ``optimizer.last_step`` is after a step that recorded nothing.
NO_REPORT = StepReport((), (), (), (), (), (), (), ())


class StepMeasurement:
    """What a recorded step keeps while it runs, to make its :class:`StepReport` at the end.

    The optimizer tells it the clipped gradients (:meth:`clipped`) and which parameters are
    about to change other than by a step the base subtracts (:meth:`keep_old_values`: AdamW's
    decoupled decay, a rule that changes ``param.data`` itself); at the end, :meth:`report`
    gets the steps the base subtracted. A parameter's update is its step, or, where old values
    were kept, the old values minus the new ones.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0, 1.0]); w.grad = dt.tensor([2.0, 0.0])
    >>> measure = StepMeasurement()
    >>> measure.keep_old_values(0, w)
    >>> w.data *= 0.5                       # a change no returned step describes
    >>> measure.report(["w"], [w], [0.1], [None]).update_sq
    [0.5]
    """

    def __init__(self) -> None:
        self.clipped_sq: list[float] | None = None
        self._old_values: dict[int, Any] = {}  # parameter index -> a copy made before it changed

    def clipped(self, grads: list[Any]) -> None:
        """Measure the gradients as the clip left them (before decay joins them)."""
        self.clipped_sq = B.sums_of_squares(grads)

    def keep_old_values(self, index: int, param: Tensor) -> None:
        """Copy parameter ``index`` before it changes (once: the first copy is the old one)."""
        if index not in self._old_values:
            self._old_values[index] = param.data.copy()

    def report(self, names: list[str], params: list[Tensor], lrs: list[float],
               steps: list[Any], grad_sq: list[float] | None = None) -> StepReport:
        """The step's report; ``steps`` holds, per parameter, the array the base subtracted
        (None where the rule changed ``param.data`` itself)."""
        subtracted = steps
        if self._old_values:
            subtracted = list(steps)
            for index, old in self._old_values.items():
                old -= params[index].data            # old minus new values
                subtracted[index] = old
        return StepReport.measure(names, params, lrs, self.clipped_sq, subtracted, grad_sq)
