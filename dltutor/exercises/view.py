"""How the exercises show themselves: a coloured box in a notebook, plain text elsewhere.

A verdict must be told apart at a glance, and not by colour alone: each status has its colour,
a symbol and its word ("correct", "not yet", ...), and the box says ``role="status"`` so a
screen reader announces it. Outside a notebook (a terminal, a script, a test) the same
sentence is printed as plain text.

>>> print(verdict_html("correct", "Exercise 01.1: correct."))       # doctest: +ELLIPSIS
<div role="status" class="dltutor-verdict dltutor-verdict-correct" ...>✓</span> Exercise 01.1: correct.</div>
"""
from __future__ import annotations

import html
from typing import NamedTuple

from ..i18n import text


class Look(NamedTuple):
    """A status's symbol, and its colours: border, background, text (dark on light: readable
    contrast, WCAG AA)."""

    symbol: str
    border: str
    background: str
    ink: str


LOOKS = {
    "correct": Look("✓", "#1a7f37", "#dafbe1", "#0f3d1c"),
    "not yet": Look("✗", "#bc4c00", "#fff1e5", "#5c2300"),
    "not attempted": Look("…", "#6e7781", "#f6f8fa", "#24292f"),
    "not checked": Look("·", "#6e7781", "#f6f8fa", "#24292f"),
}


def verdict_html(status: str, message: str) -> str:
    """The verdict ``message`` as a box in the colours of ``status``."""
    look = LOOKS[status]
    lines = html.escape(message).replace("\n", "<br>")
    return (f'<div role="status" class="dltutor-verdict dltutor-verdict-{status.replace(" ", "-")}" '
            f'style="border-left:5px solid {look.border};background:{look.background};'
            f'color:{look.ink};padding:6px 10px;margin:2px 0;border-radius:3px;'
            f'font-family:system-ui,sans-serif;font-size:14px;line-height:1.45">'
            f'<span aria-hidden="true" style="font-weight:bold;color:{look.border}">'
            f'{look.symbol}</span> {lines}</div>')


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where rich output is shown), False in a terminal or script."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show(status: str, message: str) -> None:
    """Show a verdict: the coloured box in a notebook (with the plain sentence beside it for
    anything that cannot show HTML), the plain sentence elsewhere.

    >>> show("not yet", "Exercise 99.1: not yet. got 41, not 42")
    Exercise 99.1: not yet. got 41, not 42
    """
    if in_notebook():
        from IPython.display import display
        display({"text/plain": message, "text/html": verdict_html(status, message)}, raw=True)
    else:
        print(message)


class Progress:
    """How every exercise stands (this kernel's checks and those recorded before it); what
    :func:`dltutor.exercises.progress` returns. Jupyter shows it as a table of coloured badges, one row per chapter; ``print``
    and a terminal show plain text. ``rows`` holds ``(exercise id, status)`` pairs.

    >>> report = Progress([("01.1", "correct"), ("01.2", "not yet"), ("02.1", "not checked")])
    >>> report.done, report.total
    (1, 3)
    >>> print(report)
    1 of 3 exercises correct so far.
      01  01.1 correct · 01.2 not yet
      02  02.1 not checked
    """

    def __init__(self, rows: list[tuple[str, str]]):
        self.rows = list(rows)
        self.done = sum(status == "correct" for _, status in self.rows)
        self.total = len(self.rows)

    def chapters(self) -> dict[str, list[tuple[str, str]]]:
        """The rows of each chapter, by the chapter's number."""
        grouped: dict[str, list[tuple[str, str]]] = {}
        for exercise_id, status in self.rows:
            grouped.setdefault(exercise_id.split(".")[0], []).append((exercise_id, status))
        return grouped

    def header(self) -> str:
        return text("exercise.progress_header", done=self.done, total=self.total)

    def __repr__(self) -> str:
        lines = [self.header()]
        for number, rows in self.chapters().items():
            lines.append(f"  {number}  " + " · ".join(
                f"{exercise_id} {text('exercise.status.' + status)}"
                for exercise_id, status in rows))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        def badge(exercise_id: str, status: str) -> str:
            look = LOOKS[status]
            word = html.escape(text("exercise.status." + status))
            return (f'<span class="dltutor-badge dltutor-verdict-{status.replace(" ", "-")}" '
                    f'title="{exercise_id}: {word}" style="display:inline-block;margin:1px 3px;'
                    f'padding:1px 7px;border-radius:10px;border:1px solid {look.border};'
                    f'background:{look.background};color:{look.ink};white-space:nowrap">'
                    f'<span aria-hidden="true">{look.symbol}</span> {exercise_id} {word}</span>')
        rows = "".join(
            f'<tr><th scope="row" style="text-align:right;padding-right:8px">{number}</th>'
            f'<td style="text-align:left">{"".join(badge(*row) for row in rows)}</td></tr>'
            for number, rows in self.chapters().items())
        return (f'<div class="dltutor-progress" style="font-family:system-ui,sans-serif;'
                f'font-size:13px"><p style="margin:0 0 4px"><b>{html.escape(self.header())}</b>'
                f'</p><table style="border-collapse:collapse">{rows}</table></div>')
