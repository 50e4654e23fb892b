"""The Chinese FAQ keeps the English FAQ's two kinds of section: tables of questions, and prose.

``tools/translations.py faq`` writes the table's header under each section heading of
notebooks/src/zh/FAQ.md. The section of Paddle error messages is prose, answered in the FAQ
itself: it must get no header, or Markdown renders an empty table and reads its first paragraph
as a row.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| 编号 | 问题 | 回答在 |"


def sections(text: str) -> dict[str, str]:
    """``{heading: body}`` for each ``## `` section of a Markdown page."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def test_a_section_of_questions_has_the_header_and_a_section_of_prose_has_none():
    found = sections((ROOT / "notebooks" / "zh" / "FAQ.md").read_text(encoding="utf-8"))
    prose = [h for h, body in found.items() if not re.search(r"^\| [A-Z]\d+ \|", body, re.M)]
    assert prose == ["学习者引用的 Paddle 报错"], prose
    for heading, body in found.items():
        first_line = body.strip().splitlines()[0]
        if heading in prose:
            assert HEADER not in body, f"{heading}: prose got a table header"
        else:
            assert first_line == HEADER, f"{heading}: the questions' table has no header"
