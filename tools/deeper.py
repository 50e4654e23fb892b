""""Going deeper" sections: what a chapter's core path leaves for the curious.

A chapter keeps framework internals, version notes and long proofs out of its core path in
sections whose heading starts with ``Going deeper:`` (the Chinese edition: ``深入一步：``),
at level 3 or 4 (``### Going deeper: Paddle's optimize_attr``). A section runs from its
heading to the next heading of the same or a higher level; it holds no headings of its own.

* The notebook build (``tools/build_notebooks.py``) marks each such heading cell collapsed
  (JupyterLab's ``jp-MarkdownHeadingCollapsed``): the notebook opens with the section folded
  under its heading, and one click on the heading's caret opens it. Nothing is removed: Run All
  runs its cells as before.
* The website (``tools/build_site.py``) folds the same cells into a ``<details>`` block whose
  visible line is the heading cell.
* The time label counts the core path only (``tests/notebooks/test_chapter_shape.py``).

>>> cells = [("markdown", "## Groups"), ("code", "x = 1"), ("markdown", "### Going deeper: why"),
...          ("code", "y = 2"), ("markdown", "## Next")]
>>> in_deeper_section(cells)
[False, False, True, True, False]
"""
from __future__ import annotations

import re
from typing import Iterable

#: The words that open a going-deeper heading, in each edition.
MARKS = ("Going deeper:", "深入一步：")
#: A Markdown heading line: its level and its text.
MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)


def first_heading(markdown: str) -> tuple[int, str] | None:
    """The level and text of the first heading in a Markdown cell, or None.

    >>> first_heading("Some prose.\\n\\n### Going deeper: internals")
    (3, 'Going deeper: internals')
    """
    match = MARKDOWN_HEADING.search(markdown)
    return (len(match.group(1)), match.group(2).strip()) if match else None


def is_deeper_heading(text: str) -> bool:
    """True when a heading's text opens a going-deeper section.

    >>> is_deeper_heading("Going deeper: PIR"), is_deeper_heading("深入一步：PIR")
    (True, True)
    >>> is_deeper_heading("Going further")
    False
    """
    return text.startswith(MARKS)


def opens_deeper_section(cell_type: str, source: str) -> bool:
    """True when a cell is a going-deeper heading cell (its first heading opens a section).

    >>> opens_deeper_section("markdown", "### Going deeper: PIR"), opens_deeper_section("code", "")
    (True, False)
    """
    heading = first_heading(source) if cell_type == "markdown" else None
    return heading is not None and is_deeper_heading(heading[1])


def in_deeper_section(cells: Iterable[tuple[str, str]]) -> list[bool]:
    """For each cell, given as (cell type, source), whether it lies in a going-deeper section
    (its heading cell included)."""
    inside, open_level = [], None
    for cell_type, source in cells:
        heading = first_heading(source) if cell_type == "markdown" else None
        if heading is not None:
            level, text = heading
            if open_level is not None and level <= open_level:
                open_level = None
            if is_deeper_heading(text):
                open_level = level
        inside.append(open_level is not None)
    return inside
