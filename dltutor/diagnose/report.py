"""How every diagnose report shows itself: short numbers, aligned text, escaped HTML.

A report keeps its answers as plain data (``rows``: a list of dicts) and says which keys to show
under which headers (``columns``). :class:`Report` turns that into the two views a learner
sees: ``repr()`` (plain text with aligned columns, what ``print`` shows) and
``_repr_html_()`` (the table Jupyter shows). The four reports (``Summary``,
``LRExplanation``, ``UpdateCheck``, ``Ties``) are subclasses that add a title, footer lines
or colours.
"""
from __future__ import annotations

import html
import unicodedata
from numbers import Integral, Real
from typing import Any

from ..i18n import text


def cell_text(value: Any, digits: int = 4) -> str:
    """A cell's text: numbers short (0.1 * 0.1 prints as 0.01), None as '-', lists joined.

    Four significant digits hide float32 rounding in a single pass; a value derived from
    several float32 results (an estimate) gets fewer, so it prints the same on every CPU.
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        shown = f"{float(value):.{digits}g}"
        return shown + ".0" if shown.lstrip("-").isdigit() else shown
    if isinstance(value, (list, tuple)) and not value:
        return "-" if isinstance(value, list) else "()"
    if isinstance(value, list):
        return ", ".join(cell_text(v) for v in value)
    return str(value)


def text_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: a Chinese character takes two.

    >>> text_width("lr"), text_width("学习率")
    (2, 6)
    """
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad_to_width(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (``str.ljust`` counts characters)."""
    return text + " " * (width - text_width(text))


def _text_table(headers: list[str], cells: list[list[str]], indent: str = "  ") -> list[str]:
    """Left-aligned columns separated by two spaces; every column starts at the same place."""
    widths = [max([text_width(h)] + [text_width(row[i]) for row in cells])
              for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return (indent + "  ".join(pad_to_width(v, w) for v, w in zip(values, widths))).rstrip()

    return [line(headers), line(["-" * text_width(h) for h in headers])] + [line(r) for r in cells]


def _html_table(title: str, headers: list[str], cells: list[list[str]], footer: list[str],
                row_styles: list[str] | None = None) -> str:
    """The same table as HTML; every piece of text is escaped (names may hold ``<``)."""
    esc = html.escape
    parts = ['<div class="dltutor-diagnose">']
    if title:
        parts.append(f"<p><b>{esc(title)}</b></p>")
    parts.append("<table>")
    parts.append("<thead><tr>" + "".join(f'<th style="text-align:left">{esc(h)}</th>'
                                         for h in headers) + "</tr></thead>")
    parts.append("<tbody>")
    for i, row in enumerate(cells):
        style = row_styles[i] if row_styles else ""
        attr = f' style="{style}"' if style else ""
        parts.append(f"<tr{attr}>" + "".join(
            f'<td style="text-align:left">{f"<code>{esc(c)}</code>" if c else ""}</td>'
            for c in row) + "</tr>")                # an empty cell draws no empty code box
    parts.append("</tbody></table>")
    for line in footer:
        parts.append(f"<p>{esc(line)}</p>")
    parts.append("</div>")
    return "\n".join(parts)


class Report:
    """Shared printing: a title, a table built from ``rows`` and ``columns``, footer lines."""

    title: str = ""
    columns: list[str] = []  # the keys of each row shown; headers: text("diagnose.col.<key>")
    rows: list[dict[str, Any]]
    empty_text = "(nothing to show)"

    def _headers(self) -> list[str]:
        return [text(f"diagnose.col.{key}") for key in self.columns]

    def _footer(self) -> list[str]:
        return []

    def _cells(self) -> list[list[str]]:
        return [[cell_text(row[key]) for key in self.columns] for row in self.rows]

    def _row_styles(self) -> list[str] | None:
        return None

    def __repr__(self) -> str:
        lines = [self.title] if self.title else []
        if self.rows:
            lines += _text_table(self._headers(), self._cells())
        else:
            lines.append("  " + self.empty_text)
        return "\n".join(lines + self._footer())

    def _repr_html_(self) -> str:
        if not self.rows:
            return _html_table(self.title, [self.empty_text], [], self._footer())
        return _html_table(self.title, self._headers(), self._cells(),
                           self._footer(), self._row_styles())
