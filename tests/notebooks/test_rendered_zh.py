"""The Chinese edition as a reader sees it: every prose cell, README.zh.md, the Chinese FAQ and
the glossary rendered with CommonMark (what JupyterLab, nbconvert and the site follow), with no
emphasis mark left showing.

CommonMark closes ``**`` only when it is "right-flanking": a ``**`` that comes after punctuation
and before a letter does not close. In English the letter after it is rare; in Chinese it is
the rule (``**约 10 分钟。**学完本章`` shows its asterisks), so a bold span ends before its
full-width punctuation: ``**约 10 分钟**。学完本章``. The same holds for ``__`` and ``*``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402 - tools/translations.py

COMMONMARK = MarkdownIt("commonmark").enable("table")
PAGES = translations.CHINESE_PAGES
CHAPTERS = translations.chinese_chapters()


def marks_left_showing(markdown: str) -> list[str]:
    """The pieces of rendered text (code spans and blocks aside) that still hold ``**`` or
    ``__``: emphasis CommonMark did not apply.

    >>> marks_left_showing("**约 10 分钟。**学完本章")
    ['**约 10 分钟。**学完本章']
    >>> marks_left_showing("**约 10 分钟**。学完本章 `x ** 2`")
    []
    """
    found = []
    for block in COMMONMARK.parse(markdown):
        for piece in block.children or []:
            if piece.type == "text" and ("**" in piece.content or "__" in piece.content):
                found.append(piece.content)
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_bold_span_of_a_chinese_chapter_renders(chapter):
    showing = [(index, text) for index, (_, prose) in enumerate(translations.chinese_prose(chapter))
               for text in marks_left_showing(prose)]
    assert not showing, (f"notebooks/src/zh/{chapter}.py: emphasis that renders as literal "
                         f"asterisks (end the span before its full-width punctuation, "
                         f"**词**。 not **词。**): {showing}")


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_every_bold_span_of_a_chinese_page_renders(page):
    assert not marks_left_showing(page.read_text(encoding="utf-8")), page
