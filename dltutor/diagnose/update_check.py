"""What :func:`dltutor.diagnose.why_not_updating` returns, and the pieces its checks build it
from: one row per check (:func:`checklist_row`) and the sentence a cause gives the verdict
(:func:`cause_sentence`). The checks of a parameter (why_not_updating.py) and of a buffer
(buffer_check.py) share them.

>>> checklist_row("requires_grad", "True", "ok")["status"]
'ok'
"""
from __future__ import annotations

from typing import Any

from ..i18n import text
from .report import Report


def cause_sentence(cause: str) -> str:
    """The sentence the verdict gives for ``cause`` (a code such as "lr_zero")."""
    return text(f"diagnose.why.cause.{cause}")


class UpdateCheck(Report):
    """What :func:`why_not_updating` returns: ``.rows`` (check, answer, status), ``.verdict``,
    ``.cause`` (a short code, None when it should update) and ``.will_move`` (whether the next
    ``optimizer.step()`` changes it, as far as the checks can tell).

    >>> from dltutor import nn, optim
    >>> from dltutor.diagnose import why_not_updating
    >>> net = nn.Linear(2, 1)
    >>> check = why_not_updating(net, optim.SGD(net.named_parameters(), lr=0.1), "bias")
    >>> check.cause, [row["status"] for row in check.problems]     # no backward yet
    ('no_grad', ['problem'])
    """

    columns = ["check", "answer", "status"]

    def __init__(self, name: str, rows: list[dict[str, Any]], cause: str | None, verdict: str,
                 will_move: bool | None):
        self.name, self.rows, self.cause, self.verdict = name, rows, cause, verdict
        self.will_move = will_move
        self.title = text("diagnose.why.title", name=repr(name))

    def _footer(self) -> list[str]:
        return [text("diagnose.why.verdict_line", verdict=self.verdict)]

    def _cells(self) -> list[list[str]]:
        """The rows as shown: the status in the learner's language (``.rows`` keep the codes
        "ok", "problem", ... for code to compare)."""
        return [[r["check"], r["answer"], text(f"diagnose.status.{r['status']}")]
                for r in self.rows]

    def _row_styles(self) -> list[str]:
        colour = {"problem": "color:#b00020", "warning": "color:#a05a00"}
        return [colour.get(r["status"], "") for r in self.rows]

    @property
    def problems(self) -> list[dict[str, Any]]:
        """The rows whose status is "problem"."""
        return [r for r in self.rows if r["status"] == "problem"]

    def to_dict(self) -> dict[str, Any]:
        """The checklist, cause and verdict as plain data."""
        return {"name": self.name, "rows": [dict(r) for r in self.rows], "cause": self.cause,
                "verdict": self.verdict, "will_move": self.will_move}


def checklist_row(check: str, answer: str, status: str, cause: str | None = None) -> dict[str, Any]:
    """One line of the checklist: the check ``check`` (a key: its label is
    ``text("diagnose.why.check.<check>")``); ``cause`` is the code a "problem" row gives the
    verdict."""
    return {"check": text(f"diagnose.why.check.{check}"), "answer": answer, "status": status,
            "cause": cause, "key": check}
