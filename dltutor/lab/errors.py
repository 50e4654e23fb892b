"""The lab's errors: LabError, a control's value refused in the learner's language, and an
error as the status line shows it.

>>> from dltutor import checks
>>> try:
...     check_control(checks.non_negative, -1.0, "lab.what.lr")
... except LabError as error:
...     print(error_text(error))
LabError: learning rate must be a number >= 0, got -1.0
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import checks
from ..i18n import text


class LabError(ValueError):
    """A control, a step count or a lab part was refused, or the lab was asked to do two things
    at once (a second run while one is going on); nothing was changed."""


def check_control(check: Callable, value: Any, what: str, **fields: Any) -> None:
    """Run ``check`` (checks.non_negative or checks.positive) on a control's ``value``; refuse
    it with a LabError in the learner's language, naming the control (``text(what)``)."""
    try:
        check("", what, value)
    except ValueError:
        key = "lab.error.positive" if check is checks.positive else "lab.error.non_negative"
        raise LabError(text(key, what=text(what, **fields), value=repr(value))) from None


def error_text(exc: BaseException) -> str:
    """An error as the status line shows it: its type, then its message.

    >>> error_text(ValueError("lr must be > 0"))
    'ValueError: lr must be > 0'
    """
    return text("lab.status.error_text", kind=type(exc).__name__, message=exc)
