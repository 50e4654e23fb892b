"""No chapter uses a kit tool or an optimizer idea before the chapter that teaches it.

``TAUGHT_IN`` names, for each idea, the chapter that introduces it and a pattern that finds its
use in code. The test reads the chapters' code cells in order (comments left out: a pointer
such as "chapter 08's why_not_updating does this for you" is allowed) and checks that the first
use is in the teaching chapter or after it. ``STILL_EARLY`` lists the forward uses left to
remove (issue 29); it may only shrink.
"""
from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))

# idea: (chapter that teaches it, a regular expression that finds a use of it in code)
TAUGHT_IN = {
    "SGD with momentum": ("00", r"\bmomentum\s*="),
    "Adam": ("06", r"\bAdamW?\("),
    "a per-parameter lr multiplier, set": ("06", r"\blr_mult\s*=(?!=)"),
    "weight decay": ("06", r"\bweight_decay\s*="),
    "parameter groups": ("06", r"\bparam_groups\b|\{\s*\"params\""),
    "explain_lr": ("06", r"\bexplain_lr\("),
    "summary with an optimizer": ("06", r"\bsummary\(\s*\w+\s*,"),
    "learning-rate schedulers": ("07", r"\blr_scheduler\."),
    "why_not_updating": ("08", r"\bwhy_not_updating\("),
    "gradient clipping": ("09", r"\bclip_grad_(norm|value)_\(|\bClipGradBy\w+\("),
    "detect_anomaly": ("09", r"\bdetect_anomaly\("),
    "a loss scaler": ("09", r"\bGradScaler\("),
}

# (idea, chapter) pairs still used before they are taught. Take a pair off when its chapter
# no longer needs it; the test fails on a pair that no longer happens.
STILL_EARLY: set[tuple[str, str]] = set()


def uses_by_chapter() -> dict[str, dict[str, str]]:
    """For each idea, every chapter whose code uses it (chapter -> its first line that does)."""
    found: dict[str, dict[str, str]] = {idea: {} for idea in TAUGHT_IN}
    for source in CHAPTERS:
        chapter = source.name[:2]
        for cell in jupytext.read(source).cells:
            if cell.cell_type != "code":
                continue
            for line in cell.source.splitlines():
                code = line.split("#", 1)[0]
                for idea, (_, pattern) in TAUGHT_IN.items():
                    if re.search(pattern, code):
                        found[idea].setdefault(chapter, line.strip())
    return found


USES = uses_by_chapter()


@pytest.mark.parametrize("idea", list(TAUGHT_IN))
def test_an_idea_is_used_only_from_the_chapter_that_teaches_it(idea):
    teacher, _ = TAUGHT_IN[idea]
    assert teacher in USES[idea], f"{idea}: chapter {teacher} should teach it, but never uses it"
    early = {chapter: line for chapter, line in USES[idea].items()
             if chapter < teacher and (idea, chapter) not in STILL_EARLY}
    assert not early, (f"{idea} is taught in chapter {teacher} but used before it: {early}. "
                       "Define it where it is first used, or move the use after the chapter.")


@pytest.mark.parametrize("idea, chapter", sorted(STILL_EARLY))
def test_the_list_of_early_uses_only_shrinks(idea, chapter):
    assert chapter in USES[idea], f"{idea} is no longer used in {chapter}: take it off STILL_EARLY"


def test_the_patterns_find_what_they_name():
    samples = {
        "SGD with momentum": "optim.SGD(ps, lr=0.1, momentum=0.9)",
        "a per-parameter lr multiplier, set": "net[0].weight.lr_mult = 2.0",
        "summary with an optimizer": "dt.diagnose.summary(net, opt)",
        "parameter groups": 'optim.SGD([{"params": a}, {"params": b, "lr": 0.1}], lr=0.01)',
        "a loss scaler": "scaler = optim.GradScaler(init_scale=1024.0)",
    }
    for idea, code in samples.items():
        assert re.search(TAUGHT_IN[idea][1], code), idea
    assert not re.search(TAUGHT_IN["a per-parameter lr multiplier, set"][1], "p.lr_mult == 2.0")
    assert not re.search(TAUGHT_IN["summary with an optimizer"][1], "dt.diagnose.summary(net)")
