"""Checks a GPU step defers: answered on the device, read by the host when it reads anyway.

On the CPU every value is already on the host, so a check (is this gradient finite? is this
label a class?) reads it and answers at once. On a GPU, reading one number (``float(x)``,
``bool(x)``, a copy to NumPy) makes the host wait until the GPU has finished everything queued
before it: while it waits it cannot queue the next kernels, so the GPU then waits for the host.
A training step on a GPU therefore reads nothing. A check computes its answer on the device,
starts copying that answer to the host without waiting (``Backend.start_read``), and leaves
it here with what to do about it (:func:`defer`). The pending checks are settled in the order
they were made (:func:`settle`) at the next point where the host reads anyway: a tensor's
values read (``loss.item()``, ``print(loss)``), the optimizer's next ``step()``, or a call of
:func:`settle`. By then the answer has usually arrived, and nothing waits for it.

>>> import numpy as np
>>> from dltutor import backend as B
>>> def refuse_negatives(values):
...     if (values < 0).any():
...         raise ValueError("a negative value")
>>> check = defer(B.NUMPY.start_read(np.array([-1.0])), refuse_negatives)
>>> pending()
1
>>> settle()
Traceback (most recent call last):
...
ValueError: a negative value
>>> pending()
0
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import backend as B

#: A check waiting for its answer: (the answer's arrival, what to do with it).
PendingCheck = tuple[Callable[[], np.ndarray], Callable[[np.ndarray], None]]

_pending: list[PendingCheck] = []
#: A loop that never reads (evaluation without a print) would pile checks up: past this many,
#: the oldest is settled, whose answer has long arrived.
MAX_PENDING = 64


def defer(answer: Callable[[], np.ndarray], check: Callable[[np.ndarray], None]) -> PendingCheck:
    """Leave ``check`` to be called with ``answer()`` at the next :func:`settle`; returns the
    pending check (``settle(through=...)`` settles up to it).

    >>> defer(lambda: np.zeros(1), print) and pending()
    1
    >>> settle()
    [0.]
    """
    entry = (answer, check)
    _pending.append(entry)
    if len(_pending) > MAX_PENDING:
        settle(through=_pending[0])
    return entry


def start_read(array: Any) -> Callable[[], np.ndarray]:
    """``Backend.start_read`` of the backend that owns ``array``.

    >>> start_read(np.array([3]))()
    array([3])
    """
    return (B.backend_of(array) or B.NUMPY).start_read(array)


def pending() -> int:
    """How many checks wait to be settled.

    >>> pending()
    0
    """
    return len(_pending)


def settle(through: PendingCheck | None = None) -> None:
    """Settle the pending checks, oldest first: all of them, or those up to ``through`` (one
    step's own check, and the ones made before it). A check that raises is settled already:
    the error is reported once.

    >>> settle()
    """
    if through is not None and not any(entry is through for entry in _pending):
        return                               # settled already (by a read in between)
    while _pending:
        entry = _pending.pop(0)
        answer, check = entry
        check(answer())
        if entry is through:
            return
