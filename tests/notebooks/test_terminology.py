"""The Chinese edition keeps to its terminology table (AUTHORING.md, "### Terms").

The table gives, for each term, the one word this edition writes ("this edition") and the
variants it rejects ("not"). Two checks read it:

* no Chinese page (a chapter's prose in ``notebooks/src/zh/``, the zh FAQ, ``README.zh.md``, the
  glossary, the kit's Chinese strings in ``dltutor/i18n/zh.py``) uses a rejected variant;
* in each chapter's prose, the first use of a term carries its English in full-width brackets,
  ``自动微分（autograd）`` (headings, code spans and math do not count).

The table is the only place the words live: change a word there and the test follows.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AUTHORING = ROOT / "notebooks" / "AUTHORING.md"
ZH_SOURCES = ROOT / "notebooks" / "src" / "zh"
CHAPTERS = sorted(ZH_SOURCES.glob("[0-9][0-9]_*.py")) + [ZH_SOURCES / "lab.py"]
PAGES = CHAPTERS + [ZH_SOURCES / "FAQ.md", ROOT / "notebooks" / "zh" / "FAQ.md",
                    ROOT / "README.zh.md", ROOT / "notebooks" / "GLOSSARY.md",
                    ROOT / "dltutor" / "i18n" / "zh.py"]
COLUMNS = ["English", "this edition", "d2l-zh", "Paddle docs", "MegEngine docs", "not"]
NONE = {"", "—", "-"}


def terms_table(text: str) -> list[dict[str, str]]:
    """The rows of the first table under the heading ``### Terms`` of ``text``, as dicts keyed
    by the header's titles."""
    section = re.search(r"^### Terms\n(.*?)(?=^#{1,3} |\Z)", text, flags=re.M | re.S)
    assert section, "AUTHORING.md has no '### Terms' section"
    lines = [line.strip() for line in section.group(1).splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not all(set(cell) <= set("-: ") for cell in cells):
            rows.append(cells)
    header, body = rows[0], rows[1:]
    assert header == COLUMNS, f"the Terms table's columns are {header}, expected {COLUMNS}"
    return [dict(zip(header, row)) for row in body]


def word(cell: str) -> str:
    """The word of a "this edition" cell: ``冻结 (also 固定)`` -> ``冻结``."""
    return cell.split("(")[0].strip()


def english(cell: str) -> list[str]:
    """The English names of a row, any of which may stand in the brackets:
    ``lazy initialization / deferred initialization`` -> both."""
    return [name.strip() for name in cell.split(" / ") if name.strip()]


def rejected(cell: str) -> list[str]:
    return [] if cell.strip() in NONE else [w.strip() for w in cell.split(",") if w.strip()]


TERMS = terms_table(AUTHORING.read_text(encoding="utf-8"))


def prose(path: Path) -> str:
    """The Chinese prose of a chapter source: its lines without the ``# `` comment prefix and
    without the cell marker lines."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            lines.append("")
            continue
        lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    return "\n".join(lines)


def text_only(text: str) -> str:
    """``text`` less what the bracket rule does not apply to: fenced code, code spans, math,
    link targets and headings (each replaced by a space, so words do not run together)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    text = re.sub(r"\]\([^)\s]*\)", "] ", text)
    return "\n".join(" " if line.lstrip().startswith("#") else line for line in text.splitlines())


def first_use_problem(text: str, term: dict[str, str], longer: list[str]) -> str | None:
    """None when the first use of ``term`` in ``text`` is followed by full-width brackets holding
    its English (or when ``text`` does not use it), else what is wrong. An occurrence inside a
    longer term of the table (学习率 in 学习率倍数) is that term's, not this one's."""
    zh = word(term["this edition"])
    for match in re.finditer(re.escape(zh), text):
        start, end = match.span()
        if any(text.startswith(other, start - other.index(zh))
               for other in longer if zh in other and other.index(zh) <= start):
            continue
        after = text[end:]
        bracket = re.match(r"[*_]*（([^）]*)）", after)           # **梯度裁剪**（...） counts
        names = english(term["English"])
        if bracket and any(name.lower() in bracket.group(1).lower() for name in names):
            return None
        context = text[max(0, start - 15):end + 25].replace("\n", " ")
        return f"{zh}: first use without （{names[0]}）: ...{context}..."
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_uses_a_rejected_word(page):
    text = page.read_text(encoding="utf-8")
    found = [f"{bad} (write {word(term['this edition'])})" for term in TERMS
             for bad in rejected(term["not"]) if bad in text]
    assert not found, f"{page.relative_to(ROOT)} uses rejected terms: {found}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_term_carries_its_english_at_its_first_use_in_a_chapter(chapter):
    text = text_only(prose(chapter))
    words = [word(term["this edition"]) for term in TERMS]
    problems = [problem for term in TERMS
                if (problem := first_use_problem(text, term, [w for w in words
                                                              if w != word(term["this edition"])]))]
    assert not problems, f"{chapter.name}:\n" + "\n".join(problems)


def test_the_table_is_read():
    """The table has the terms issue 32 asked for, and each row a word and its English."""
    by_english = {term["English"].split(" / ")[0]: word(term["this edition"]) for term in TERMS}
    assert by_english["lazy initialization"] == "延后初始化"
    assert by_english["autograd"] == "自动微分"
    assert all(word(term["this edition"]) and english(term["English"]) for term in TERMS)
    assert "延迟初始化" in [bad for term in TERMS for bad in rejected(term["not"])]


def test_the_checks_catch_a_missing_bracket_and_a_rejected_word():
    lazy = next(t for t in TERMS if word(t["this edition"]) == "延后初始化")
    assert first_use_problem("延后初始化（lazy initialization）让……延后初始化", lazy, []) is None
    assert first_use_problem("先说延后初始化，再说延后初始化（lazy initialization）", lazy, [])
    lr = next(t for t in TERMS if word(t["this edition"]) == "学习率")
    assert first_use_problem("学习率倍数（learning-rate multiplier）和学习率（learning rate）", lr,
                             ["学习率倍数"]) is None
    assert first_use_problem(text_only("## 学习率\n`学习率` 学习率（learning rate）"), lr, []) is None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_code_span_holds_chinese(page):
    """Code is code: a formula with Chinese words (lr × 梯度) is prose, and only its code names
    go in backticks."""
    spans = re.findall(r"`([^`\n]*)`", prose(page))
    assert not [s for s in spans if re.search(r"[\u4e00-\u9fff]", s)], page.name
