"""The shape a learner meets in every chapter, in both editions.

Each chapter opens with how long it takes and what the learner will be able to do afterwards,
and its summary starts with a recap of two sentences. The stated time is checked against an
estimate from the chapter itself (its prose at 180 words a minute, and half a minute for each
code cell to read and run), so it stays true when the chapter grows. And a chapter should be
short enough to finish in one sitting: at most ``MAX_CELLS`` cells.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import deeper  # noqa: E402 - tools/deeper.py
import twins  # noqa: E402 - tools/twins.py
ENGLISH = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
CHINESE = sorted((ROOT / "notebooks" / "src" / "zh").glob("[0-9][0-9]_*.py"))

BOTH_EDITIONS = [("en", p) for p in ENGLISH] + [("zh", p) for p in CHINESE]

WORDS_PER_MINUTE = 180
MINUTES_PER_CODE_CELL = 0.5
MAX_CELLS = 90
#: No chapter's core path (what is left when its "Going deeper" sections are folded) is longer
#: than one sitting of half an hour (issue 49): what does not fit is not core.
MAX_CORE_MINUTES = 30

# The opener, right under the title: "**About 45 minutes.** You will be able to:" and 2-5 bullets.
OPENER = {
    "en": re.compile(r"^\*\*About (\d+) minutes\.\*\* You will be able to:\n\n"
                     r"((?:\* .+\n(?:  .+\n)*){2,5})", re.M),
    "zh": re.compile(r"^\*\*约 (\d+) 分钟\*\*。学完本章，你将能够：\n\n((?:\* .+\n){2,5})", re.M),
}
# The recap: the first paragraph under the summary heading.
RECAP = {
    "en": re.compile(r"^## Summary\n\n\*\*In two lines:\*\* (.+?)\n\n", re.M | re.S),
    "zh": re.compile(r"^## 小结\n\n\*\*两句话\*\*：(.+?)\n\n", re.M | re.S),
}

# Two lines, read at a glance: at most 50 English words, 120 Chinese characters.
RECAP_LIMIT = {"en": 50, "zh": 120}

# Chapters still longer than MAX_CELLS (issue 29 splits or trims them). The list may only
# shrink: a chapter on it that fits fails the test until it is taken off.
OVER_BUDGET: set[str] = set()


def estimated_minutes(source: Path, part: str = "core") -> float:
    """The reading-and-running time of the chapter's core path (``part="core"``), or of its
    "Going deeper" sections (``part="deeper"``, folded when the notebook opens: see
    tools/deeper.py), from its English source. PyTorch and Paddle twins are folded for a
    learner who opens them (tools/twins.py): they count in neither."""
    cells = lesson_cells(source)
    folded = deeper.in_deeper_section((c.cell_type, c.source) for c in cells)
    cells = [c for c, inside in zip(cells, folded) if inside == (part == "deeper")]
    words = sum(len(re.findall(r"\w+", c.source)) for c in cells if c.cell_type == "markdown")
    code_cells = sum(c.cell_type == "code" for c in cells)
    return words / WORDS_PER_MINUTE + code_cells * MINUTES_PER_CODE_CELL


def lesson_cells(source: Path) -> list:
    """The chapter's cells without its PyTorch and Paddle twins."""
    return [c for c in jupytext.read(source).cells if twins.twin_framework(c) is None]


def prose(source: Path) -> list[str]:
    return [c.source for c in jupytext.read(source).cells if c.cell_type == "markdown"]


def test_the_estimate_counts_prose_and_code(tmp_path):
    # 180 words and four code cells: one minute of reading, two of running.
    text = "# %% [markdown]\n# " + "word " * 180 + "\n" + "\n# %%\nx = 1\n" * 4
    path = tmp_path / "shape_probe.py"
    path.write_text(text, encoding="utf-8")
    assert estimated_minutes(path) == pytest.approx(3.0, abs=0.05)


def test_a_going_deeper_section_is_left_out_of_the_core_estimate(tmp_path):
    # The core: 180 words and one code cell (1.5 min); folded: 360 words and two cells (3 min).
    text = ("# %% [markdown]\n# ## Core\n# " + "word " * 178 + "\n\n# %%\nx = 1\n\n"
            "# %% [markdown]\n# ### Going deeper: internals\n# " + "word " * 357 + "\n"
            + "\n# %%\ny = 2\n" * 2 + "\n# %% [markdown]\n# ## Summary\n")
    path = tmp_path / "deeper_probe.py"
    path.write_text(text, encoding="utf-8")
    assert estimated_minutes(path) == pytest.approx(1.5, abs=0.01)
    assert estimated_minutes(path, "deeper") == pytest.approx(3.0, abs=0.01)


@pytest.mark.parametrize("language, source", BOTH_EDITIONS,
                         ids=lambda v: v if isinstance(v, str) else v.stem)
def test_a_chapter_opens_with_its_time_and_what_the_learner_will_be_able_to_do(language, source):
    opening = prose(source)[0]
    match = OPENER[language].search(opening + "\n")
    assert match, (f"{source.name}: under the title, write the opener (see this test's OPENER), "
                   "e.g. '**About 45 minutes.** You will be able to:' and two to five bullets")
    minutes = int(match.group(1))
    estimate = estimated_minutes(ROOT / "notebooks" / "src" / source.name)
    assert minutes % 5 == 0, f"{source.name}: round the time to 5 minutes, got {minutes}"
    assert abs(minutes - estimate) <= max(5.0, 0.2 * estimate), (
        f"{source.name}: says {minutes} minutes, the chapter measures about {estimate:.0f} "
        f"({WORDS_PER_MINUTE} words a minute, {MINUTES_PER_CODE_CELL} min per code cell)")


@pytest.mark.parametrize("language, source", BOTH_EDITIONS,
                         ids=lambda v: v if isinstance(v, str) else v.stem)
def test_a_chapter_summary_starts_with_a_two_sentence_recap(language, source):
    text = "\n\n".join(prose(source)) + "\n\n"
    match = RECAP[language].search(text)
    assert match, f"{source.name}: start the summary with '**In two lines:**' (zh '**两句话**：')"
    recap = re.sub(r"`[^`]*`", "CODE", match.group(1))        # code spans may hold dots
    sentences = re.findall(r"\.(?=\s|$)|。", recap.strip())   # an English stop ends in a space
    assert len(sentences) == 2, f"{source.name}: the recap has {len(sentences)} sentences, not 2"
    size = len(recap.split()) if language == "en" else len(recap.strip())
    assert size <= RECAP_LIMIT[language], (
        f"{source.name}: the recap is {size} {'words' if language == 'en' else 'characters'}; "
        f"two lines are at most {RECAP_LIMIT[language]}")


@pytest.mark.parametrize("source", ENGLISH, ids=lambda p: p.stem)
def test_a_chapter_core_path_fits_half_an_hour(source):
    core, folded = estimated_minutes(source), estimated_minutes(source, "deeper")
    assert core <= MAX_CORE_MINUTES, (
        f"{source.stem}: its core path measures {core:.1f} minutes ({folded:.1f} more are in "
        f"Going deeper sections); at most {MAX_CORE_MINUTES}: move framework internals, version "
        "notes, long proofs and second demonstrations of a point into a Going deeper section "
        "(notebooks/AUTHORING.md), or tighten the prose")


@pytest.mark.parametrize("source", ENGLISH, ids=lambda p: p.stem)
def test_a_chapter_fits_one_sitting(source):
    count = len(lesson_cells(source))
    if source.stem in OVER_BUDGET:
        assert count > MAX_CELLS, f"{source.stem} has {count} cells now: take it off OVER_BUDGET"
        pytest.skip(f"{source.stem}: {count} cells, over the budget of {MAX_CELLS} (issue 29)")
    assert count <= MAX_CELLS, f"{source.stem}: {count} cells; split or trim it to {MAX_CELLS}"
