"""Code a Chinese learner copies must be code: no full-width punctuation inside it.

A Chinese sentence uses full-width marks (``；`` ``，`` ``：``) and the code inside it ASCII
ones. A full-width mark that joins two pieces of code (``t = dt.tensor(x)；f(t).backward()``)
reads fine but cannot be pasted into Python. Two places can hold such code: the code spans of
every Chinese page (each chapter's prose, README.zh.md, the FAQ and the glossary), and the
hints and messages of the Chinese tables (``dltutor/i18n/zh*.py``), which are plain text, so a
piece of code there is told from prose by its look (see :func:`code_joined_by_full_width`).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from dltutor.i18n import TABLES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402 - tools/translations.py

COMMONMARK = MarkdownIt("commonmark").enable("table")
PAGES = translations.CHINESE_PAGES
CHAPTERS = translations.chinese_chapters()

# CJK punctuation, the full-width forms and the curly quotes and dash a Chinese text uses
FULL_WIDTH = "\u3000-\u303f\uff00-\uffef\u2018\u2019\u201c\u201d\u2014\u2026"
CJK = "\u3400-\u9fff" + FULL_WIDTH
# a name called, assigned, indexed or reached into: `f(`, `x =`, `a[`, `opt.step`
LOOKS_LIKE_CODE = re.compile(r"[A-Za-z_][\w.]*\s*[(=\[]|[A-Za-z_]\w*\.[A-Za-z_]")


def full_width_in_code_spans(markdown: str) -> list[str]:
    """The code spans of ``markdown`` (rendered by CommonMark, tables included) that hold a
    full-width mark.

    >>> full_width_in_code_spans("先运行 `opt.step()`，再看 `p.grad`。")
    []
    >>> full_width_in_code_spans("| 写法 |\\n| --- |\\n| `a = 1；b = 2` |")
    ['a = 1；b = 2']
    """
    return [piece.content for block in COMMONMARK.parse(markdown)
            for piece in block.children or []
            if piece.type == "code_inline" and re.search(f"[{FULL_WIDTH}]", piece.content)]


def code_joined_by_full_width(text: str) -> list[str]:
    """The places in a plain ``text`` where a full-width mark stands between two pieces of
    code. A piece is what lies between the mark and the nearest Chinese character on that
    side; it is code when it calls, assigns, indexes or reaches into a name. A mark with
    Chinese on either side ends a sentence or a clause, which is right.

    >>> code_joined_by_full_width("t = dt.tensor(x)；f(t).backward()")
    ['t = dt.tensor(x)；f(t).backward()']
    >>> code_joined_by_full_width("t = dt.tensor(x); f(t).backward()，然后读 t.grad。")
    []
    """
    found = []
    for mark in re.finditer(f"[{FULL_WIDTH}]", text):
        before = re.search(f"[^{CJK}]*$", text[:mark.start()]).group()
        after = re.match(f"[^{CJK}]*", text[mark.end():]).group()
        if LOOKS_LIKE_CODE.search(before) and LOOKS_LIKE_CODE.search(after):
            found.append(before.strip() + mark.group() + after.strip())
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_code_span_of_a_chinese_chapter_holds_full_width_punctuation(chapter):
    bad = [(index, span) for index, (_, prose) in enumerate(translations.chinese_prose(chapter))
           for span in full_width_in_code_spans(prose)]
    assert not bad, (f"notebooks/src/zh/{chapter}.py: code spans with full-width punctuation "
                     f"(cell index, span); code keeps ASCII marks: {bad}")


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_no_code_span_of_a_chinese_page_holds_full_width_punctuation(page):
    bad = full_width_in_code_spans(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.relative_to(ROOT)}: code spans with full-width punctuation: {bad}"


def test_no_hint_or_message_of_the_chinese_tables_joins_code_with_full_width_punctuation():
    bad = {key: joined for key, value in TABLES["zh"].items()
           if (joined := code_joined_by_full_width(value))}
    assert not bad, (f"dltutor/i18n's Chinese tables: code joined by a full-width mark (a "
                     f"learner cannot paste it; use ASCII ';' or put Chinese between the "
                     f"pieces): {bad}")
