"""The Chinese edition keeps to its terminology table (AUTHORING.md, "### Terms").

The table gives, for each term, the one word this edition writes ("this edition") and the
variants it rejects ("not"). Two checks read it:

* no Chinese page (a chapter's prose in ``notebooks/src/zh/``, the zh FAQ, ``README.zh.md``, the
  glossary, the kit's Chinese strings in ``dltutor/i18n/zh.py`` and the exercises' in
  ``zh_exercises_*.py``) uses a rejected variant;
* in each chapter's prose, the first use of a term outside brackets carries its English in
  full-width brackets, ``自动微分（autograd）`` (headings, tables, code spans and math do not
  count).

Two more keep the glosses from doing damage (issue 48): no full-width bracket opens inside
another, anywhere in the Chinese prose, and a chapter glosses a term once (a second
``（learning rate）`` is noise to the reader; tables, which annotate cells, do not count).
Paddle and MegEngine have one name each: chapter 00 introduces them as 飞桨（PaddlePaddle，下文称
Paddle）and 天元（MegEngine，下文称 MegEngine）, the glossary lists 飞桨 and 天元, and every other
page says Paddle and MegEngine. No Chinese is set in italics.

The table is the only place the words live: change a word there and the test follows.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AUTHORING = ROOT / "notebooks" / "AUTHORING.md"
ZH_SOURCES = ROOT / "notebooks" / "src" / "zh"
CHAPTERS = sorted(ZH_SOURCES.glob("[0-9][0-9]_*.py")) + [ZH_SOURCES / "lab.py"]
PROSE = CHAPTERS + [ZH_SOURCES / "FAQ.md", ROOT / "notebooks" / "zh" / "FAQ.md",
                    ROOT / "README.zh.md"]
GLOSSARY = ROOT / "notebooks" / "GLOSSARY.md"
I18N = ROOT / "dltutor" / "i18n"
PAGES = PROSE + [GLOSSARY, I18N / "zh.py", I18N / "zh_exercises_01_06.py",
                 I18N / "zh_exercises_07_12.py"]
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


def page_prose(page: Path) -> str:
    """The prose of a page: a chapter source's Chinese cells, a Markdown page as it stands."""
    return prose(page) if page.suffix == ".py" else page.read_text(encoding="utf-8")


def text_only(text: str) -> str:
    """``text`` less what the bracket rule does not apply to: fenced code, code spans, math,
    link targets and headings (each replaced by a space, so words do not run together)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    text = re.sub(r"\]\([^)\s]*\)", "] ", text)
    return "\n".join(" " if line.lstrip().startswith("#") else line for line in text.splitlines())


def without_tables(text: str) -> str:
    """``text`` with its table rows blanked: a cell may annotate freely (Xavier（Glorot）,
    ``torch.save``（pickle）), and its first use of a term needs no gloss."""
    return "\n".join(" " if line.lstrip().startswith("|") else line for line in text.splitlines())


def bracket_depths(text: str) -> list[int]:
    """How many full-width brackets are open at each character of ``text``; a blank line closes
    them all, so one unbalanced paragraph does not spoil the rest.

    >>> bracket_depths("a（b）c")
    [0, 0, 1, 0, 0]
    """
    depths, depth = [], 0
    for index, char in enumerate(text):
        if char == "\n" and text.startswith("\n\n", index):
            depth = 0
        depth -= char == "）"
        depths.append(max(depth, 0))
        depth += char == "（"
    return depths


def nested_brackets(text: str) -> list[str]:
    """Where in ``text`` a full-width bracket opens inside another: （动量（momentum）为 0.9）.

    >>> nested_brackets("训练四轮（动量（momentum）为 0.9）")
    ['...训练四轮（动量（momentum）为 0.9）...']
    >>> nested_brackets("动量（momentum）为 0.9（见第 6 章）")
    []
    """
    depths = bracket_depths(text)
    return [f"...{text[max(0, i - 15):i + 25]}...".replace("\n", " ")
            for i, char in enumerate(text) if char == "（" and depths[i] > 0]


def is_longer_term(text: str, start: int, zh: str, longer: list[str]) -> bool:
    """Whether the ``zh`` at ``start`` belongs to a longer term of the table (学习率 in
    学习率倍数)."""
    return any(zh in other and other.index(zh) <= start
               and text.startswith(other, start - other.index(zh)) for other in longer)


def glosses_of(text: str, term: dict[str, str], longer: list[str]) -> list[int]:
    """The positions in ``text`` where ``term`` is followed by full-width brackets holding its
    English: 学习率（learning rate）, **梯度裁剪**（gradient clipping）."""
    zh, names = word(term["this edition"]), english(term["English"])
    found = []
    for match in re.finditer(re.escape(zh), text):
        if is_longer_term(text, match.start(), zh, longer):
            continue
        bracket = re.match(r"[*_]*（([^）]*)）", text[match.end():])
        if bracket and any(name.lower() in bracket.group(1).lower() for name in names):
            found.append(match.start())
    return found


def first_use_problem(text: str, term: dict[str, str], longer: list[str]) -> str | None:
    """None when the first use of ``term`` outside brackets in ``text`` is followed by
    full-width brackets holding its English (or when ``text`` uses it only inside brackets, or
    not at all), else what is wrong. A use inside brackets does not count: its gloss would nest
    one bracket in another. An occurrence inside a longer term of the table (学习率 in
    学习率倍数) is that term's, not this one's."""
    zh, names = word(term["this edition"]), english(term["English"])
    depths = bracket_depths(text)
    glossed = glosses_of(text, term, longer)
    for match in re.finditer(re.escape(zh), text):
        start, end = match.span()
        if depths[start] > 0 or is_longer_term(text, start, zh, longer):
            continue
        if start in glossed:
            return None
        context = text[max(0, start - 15):end + 25].replace("\n", " ")
        return f"{zh}: first use without （{names[0]}）: ...{context}..."
    return None


def repeated_glosses(text: str) -> list[str]:
    """The English glosses that ``text`` gives more than once, outside tables: a bracket that
    holds only English words, or ends in them after a full-width comma (更新比（更新量与参数之比，
    update-to-parameter ratio）).

    >>> repeated_glosses("学习率（learning rate）……学习率（Learning rate）；动量（momentum）")
    ['learning rate (2 times)']
    """
    glosses = re.findall(r"（(?:[^（）]*，)?\s*([A-Za-z][A-Za-z0-9 '/.-]*?)\s*）",
                         without_tables(text))
    counts = Counter(gloss.lower() for gloss in glosses)
    return [f"{gloss} ({count} times)" for gloss, count in counts.items() if count > 1]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_uses_a_rejected_word(page):
    text = page.read_text(encoding="utf-8")
    found = [f"{bad} (write {word(term['this edition'])})" for term in TERMS
             for bad in rejected(term["not"]) if bad in text]
    assert not found, f"{page.relative_to(ROOT)} uses rejected terms: {found}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_term_carries_its_english_at_its_first_use_in_a_chapter(chapter):
    text = without_tables(text_only(prose(chapter)))
    words = [word(term["this edition"]) for term in TERMS]
    glossed = [term for term in TERMS
               if "no gloss" not in term["this edition"] and not word(term["this edition"]).isascii()]
    problems = [problem for term in glossed
                if (problem := first_use_problem(text, term, [w for w in words
                                                              if w != word(term["this edition"])]))]
    assert not problems, f"{chapter.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PROSE + [GLOSSARY], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_bracket_opens_inside_another(page):
    """（动量（momentum）为 0.9） reads as a stutter: give the gloss where the term stands
    outside brackets, or reword so the aside needs no brackets of its own."""
    found = nested_brackets(text_only(page_prose(page)))
    assert not found, f"{page.relative_to(ROOT)}: a bracket inside a bracket:\n" + "\n".join(found)


@pytest.mark.parametrize("page", PROSE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_glosses_each_term_once(page):
    """The English of a term goes with its first use, once: drop the later ones."""
    found = repeated_glosses(text_only(page_prose(page)))
    assert not found, f"{page.relative_to(ROOT)} repeats glosses: {found}"


def italic_chinese(text: str) -> list[str]:
    """The ``*...*`` spans of ``text`` that set Chinese in italics (d2l-zh uses none: slanted
    Hanzi read badly); bold ``**...**`` and italic English are left alone.

    >>> italic_chinese("这是*强调*，这是**粗体**，这是 *weights*")
    ['*强调*']
    """
    spans = re.finditer(r"(?<![*\\])\*(?![*\s])([^*\n]+?)(?<![*\s\\])\*(?!\*)", text)
    return [span.group(0) for span in spans if re.search(r"[\u4e00-\u9fff]", span.group(1))]


@pytest.mark.parametrize("page", PROSE + [GLOSSARY], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_chinese_text_is_in_italics(page):
    found = italic_chinese(text_only(page_prose(page)))
    assert not found, (f"{page.relative_to(ROOT)} sets Chinese in italics (drop the *...*, or "
                       f"make it bold where the emphasis matters): {found}")


#: The two frameworks with a Chinese name: chapter 00 gives it once, then the English name only.
INTRODUCED = {"飞桨": ("Paddle", "飞桨（PaddlePaddle，下文称 Paddle）"),
              "天元": ("MegEngine", "天元（MegEngine，下文称 MegEngine）")}


@pytest.mark.parametrize("chinese_name", INTRODUCED)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_framework_has_one_name(page, chinese_name):
    """Chapter 00 names 飞桨 and 天元 once each, in ``INTRODUCED``'s words; the glossary lists
    the names; everywhere else they are Paddle and MegEngine."""
    if page == GLOSSARY:
        return
    name, introduction = INTRODUCED[chinese_name]
    text = page.read_text(encoding="utf-8")
    allowed = 1 if page.name == "00_welcome.py" else 0
    assert text.count(introduction) == allowed and text.count(chinese_name) == allowed, (
        f"{page.relative_to(ROOT)} says {chinese_name} {text.count(chinese_name)} times; write "
        f"{name}" + (f" after one {introduction}" if allowed else ""))


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


def test_the_checks_catch_a_nested_bracket_and_a_second_gloss():
    momentum = next(t for t in TERMS if word(t["this edition"]) == "动量")
    nested = "我们训练四轮（动量（momentum）为 0.9），动量让损失下降得更快。"
    assert nested_brackets(nested)
    assert first_use_problem(nested, momentum, []), "a gloss inside brackets is not a first use"
    assert first_use_problem("训练四轮（动量为 0.9）。动量（momentum）……", momentum, []) is None
    assert repeated_glosses("动量（momentum）……再说动量（Momentum）")
    assert not repeated_glosses("动量（momentum）\n| 动量（momentum） | `momentum` |")
    assert not nested_brackets("动量（momentum）为 0.9（见第 6 章）")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_code_span_holds_chinese(page):
    """Code is code: a formula with Chinese words (lr × 梯度) is prose, and only its code names
    go in backticks."""
    spans = re.findall(r"`([^`\n]*)`", prose(page))
    assert not [s for s in spans if re.search(r"[\u4e00-\u9fff]", s)], page.name
