"""Checks for hyperparameters and other numbers a learner passes in, with messages that teach.

Every check names who asked (``owner``: a class or a function), the argument and the value it
got, and returns the value when it is fine, so a constructor reads
``self.lr = checks.non_negative("SGD", "lr", lr)``. A value of the wrong kind (a string, a
bool, None) and a number out of range raise ``ValueError`` (``error``, if you pass one, must
be a subclass of it: the lab passes its LabError); an integer check raises ``TypeError`` for a
non-integer, as ``range()`` does. NaN and the infinities are refused wherever a number is
asked for: a hyperparameter that is not finite makes every later number NaN.

>>> non_negative("SGD", "lr", 0.1)
0.1
>>> non_negative("SGD", "lr", -1)
Traceback (most recent call last):
...
ValueError: SGD: lr must be a number >= 0, got -1
>>> non_negative("SGD", "lr", float("inf"))
Traceback (most recent call last):
...
ValueError: SGD: lr must be a finite number >= 0, got inf
"""
from __future__ import annotations

import math
import operator
from numbers import Real
from typing import Any

import numpy as np

__all__ = ["number", "non_negative", "positive", "probability", "between", "integer", "flag"]


def _is_number(value: Any) -> bool:
    # bool is an int in Python, but lr=True is a mistake, not the number 1.
    return isinstance(value, Real) and not isinstance(value, bool)


def _fail(owner: str, name: str, requirement: str, value: Any, hint: str,
          error: type[ValueError]) -> ValueError:
    # inf is a number >= 0 and still refused: for an infinity, say that it must be finite.
    # (NaN needs no such word: "not a number" is what it is.)
    if _is_number(value) and math.isinf(value):
        requirement = requirement.replace("a number", "a finite number", 1)
    prefix = f"{owner}: " if owner else ""
    suffix = f" ({hint})" if hint else ""
    return error(f"{prefix}{name} must be {requirement}, got {value!r}{suffix}")


def between(owner: str, name: str, value: Any, low: float, high: float, *,
            low_open: bool = False, high_open: bool = False, hint: str = "",
            error: type[ValueError] = ValueError) -> Any:
    """``value`` if it is a finite number in the interval from ``low`` to ``high`` (closed
    unless ``low_open``/``high_open``), else ``error`` naming owner, argument and value.

    >>> between("RMSprop", "alpha", 0.99, 0, 1)
    0.99
    >>> between("LinearLR", "start_factor", 0, 0, 1, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: LinearLR: start_factor must be a number in (0, 1], got 0
    """
    ok = _is_number(value) and math.isfinite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and \
            (value < high if high_open else value <= high)
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(owner, name, f"a number in {interval}", value, hint, error)
    return value


def number(owner: str, name: str, value: Any, *, hint: str = "",
           error: type[ValueError] = ValueError) -> Any:
    """``value`` if it is a finite number (not a bool), else ``error``.

    >>> number("CosineAnnealingLR", "eta_min", 1e-4)
    0.0001
    >>> number("StepLR", "gamma", "0.5")
    Traceback (most recent call last):
    ...
    ValueError: StepLR: gamma must be a number, got '0.5'
    """
    if not (_is_number(value) and math.isfinite(value)):
        raise _fail(owner, name, "a number", value, hint, error)
    return value


def non_negative(owner: str, name: str, value: Any, *, hint: str = "",
                 error: type[ValueError] = ValueError) -> Any:
    """``value`` if it is a finite number >= 0, else ``error`` (see the module docstring).

    >>> non_negative("Adam", "eps", 1e-8)
    1e-08
    """
    if not (_is_number(value) and math.isfinite(value) and value >= 0):
        raise _fail(owner, name, "a number >= 0", value, hint, error)
    return value


def positive(owner: str, name: str, value: Any, *, hint: str = "",
             error: type[ValueError] = ValueError) -> Any:
    """``value`` if it is a finite number > 0, else ``error``.

    >>> positive("ClipGradByNorm", "clip_norm", 0)
    Traceback (most recent call last):
    ...
    ValueError: ClipGradByNorm: clip_norm must be a number > 0, got 0
    """
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise _fail(owner, name, "a number > 0", value, hint, error)
    return value


def probability(owner: str, name: str, value: Any, *, hint: str = "") -> Any:
    """``value`` if it is in [0, 1): a decay rate such as Adam's betas, where 1 would never
    forget and so never learn.

    >>> probability("Adam", "betas[1]", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: Adam: betas[1] must be a number in [0, 1), got 1.0
    """
    return between(owner, name, value, 0, 1, high_open=True, hint=hint)


def integer(owner: str, name: str, value: Any, *, minimum: int | None = None,
            hint: str = "", whole_floats: bool = False) -> int:
    """``value`` as an int if it is an integer (not a bool) >= ``minimum``: ``TypeError`` for a
    non-integer such as 2.5, ``ValueError`` for one that is too small. With
    ``whole_floats=True`` a float with no fraction (``30.0``, what ``epochs / 4`` gives) counts
    as the integer it equals, as PyTorch's schedulers accept it.

    >>> integer("StepLR", "step_size", 3, minimum=1)
    3
    >>> integer("StepLR", "step_size", 2.5)
    Traceback (most recent call last):
    ...
    TypeError: StepLR: step_size must be an integer, got 2.5 of type float
    >>> integer("StepLR", "step_size", 30.0, whole_floats=True)
    30
    >>> integer("LinearLR", "total_iters", 0, minimum=1, hint="a number of steps")
    Traceback (most recent call last):
    ...
    ValueError: LinearLR: total_iters must be an integer >= 1, got 0 (a number of steps)
    """
    suffix = f" ({hint})" if hint else ""
    if whole_floats and isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)       # int, NumPy integers; not 2.0 or "3"
    except TypeError:
        raise TypeError(f"{owner}: {name} must be an integer, got {value!r} of type "
                        f"{type(value).__name__}{suffix}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{owner}: {name} must be an integer >= {minimum}, got {value!r}"
                         f"{suffix}")
    return value


def flag(owner: str, name: str, value: Any) -> bool:
    """``value`` if it is True or False (a NumPy bool counts), else ``TypeError``: a switch
    such as ``maximize`` or ``need_clip``. Python would take ``"no"`` as true and 0 as false
    without a word; here they are refused, naming the switch.

    >>> flag("SGD", "nesterov", True)
    True
    >>> flag("SGD", "maximize", "no")
    Traceback (most recent call last):
    ...
    TypeError: SGD: maximize must be True or False, got 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        prefix = f"{owner}: " if owner else ""
        raise TypeError(f"{prefix}{name} must be True or False, got {value!r}")
    return bool(value)
