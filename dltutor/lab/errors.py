"""The lab's errors: LabError, a control's value refused in the learner's language, and an
error as the status line shows it.

>>> try:
...     check_control(-1.0, "lab.what.lr")
... except LabError as error:
...     print(error_text(error))
LabError: learning rate must be a number >= 0, got -1.0
"""
from __future__ import annotations

from typing import Any

from .. import checks
from ..i18n import text


class LabError(ValueError):
    """A control, a step count or a lab part was refused, or the lab was asked to do two things
    at once (a second run while one is going on); nothing was changed."""


def check_control(value: Any, what: str, *, positive: bool = False, **fields: Any) -> None:
    """Refuse a control's ``value`` unless it is a finite number >= 0 (> 0 with ``positive``):
    the kit's own check (checks.non_negative / checks.positive), with a LabError in the
    learner's language naming the control (``text(what, **fields)``)."""
    check, key = ((checks.positive, "lab.error.positive") if positive
                  else (checks.non_negative, "lab.error.non_negative"))
    try:
        check("", what, value)
    except ValueError:
        raise LabError(text(key, what=text(what, **fields), value=repr(value))) from None


def error_text(exc: BaseException) -> str:
    """An error as the status line shows it: its type, then its message.

    >>> error_text(ValueError("lr must be > 0"))
    'ValueError: lr must be > 0'
    """
    return text("lab.status.error_text", kind=type(exc).__name__, message=exc)
