"""The chapters' own figures speak the notebook's language: ``plot.show()`` puts each title,
label, legend entry and text through ``dltutor/i18n/zh_figures.py``; a Chinese figure text that
reads as English and has no entry stops the notebook under the tests; every chapter shows its
figures with ``plot.show()``, and every entry of the table is a text a chapter draws.

The Chinese notebooks' nbval run (with ``DLTUTOR_CHECK_FIGURE_WORDS=1`` from the root
conftest) is the proof for the real figures; these tests hold the mechanism and the table.
"""
from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from dltutor import i18n, plot
from dltutor.i18n import zh_figures
from dltutor.plot import language

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _fonts_and_figures(monkeypatch):
    monkeypatch.setattr(language, "find_cjk_font", lambda: "DejaVu Sans")   # any font will do
    yield
    plt.close("all")


def _a_chapter_like_figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0], label="uninterrupted")
    ax.plot([0, 1], [0, 1], label="clipped at 0.25")
    ax.set(xlabel="epoch", ylabel="loss of the mini-batch", title="fc2.bias")
    ax.text(0.5, 0.5, " checkpoint")
    ax.legend()
    return fig, ax


def _texts(fig):
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def test_show_translates_titles_labels_legends_and_texts_in_chinese():
    fig, ax = _a_chapter_like_figure()
    ticks_before = [t.get_text() for t in ax.get_xticklabels()]
    with i18n.use_language("zh"):
        plot.show()
    assert ax.get_xlabel() == "轮" and ax.get_ylabel() == "小批量的损失"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["不中断", "裁剪阈值 0.25"]
    assert " 检查点" in _texts(fig)
    assert ax.get_title() == "fc2.bias"                              # code stays code
    assert [t.get_text() for t in ax.get_xticklabels()] == ticks_before
    assert "DejaVu Sans" in ax.xaxis.label.get_fontfamily()          # Chinese gets its font


def test_in_english_show_changes_nothing():
    fig, _ = _a_chapter_like_figure()
    before = _texts(fig)
    plot.show()
    assert _texts(fig) == before


def test_without_a_cjk_font_the_chapter_figures_stay_english(monkeypatch):
    monkeypatch.setattr(language, "find_cjk_font", lambda: None)
    monkeypatch.setattr(language, "_warned_no_font", True)            # its warning: tested elsewhere
    fig, _ = _a_chapter_like_figure()
    before = _texts(fig)
    with i18n.use_language("zh"):
        plot.show()
    assert _texts(fig) == before


def test_an_untranslated_english_label_stops_the_chinese_figure_under_the_check(monkeypatch):
    monkeypatch.setenv(language.CHECK_WORDS_VARIABLE, "1")
    fig, ax = plt.subplots()
    ax.set_title("a label no table knows")
    with i18n.use_language("zh"), pytest.raises(LookupError, match="zh_figures.py"):
        plot.show()
    monkeypatch.setenv(language.CHECK_WORDS_VARIABLE, "0")             # a learner's own label
    with i18n.use_language("zh"):
        plot.show()
    assert ax.get_title() == "a label no table knows"


@pytest.mark.parametrize("text, english", [
    ("frozen with lr_mult = 0", True), ("Xavier, gain 1", True), ("no cut", True),
    ("ClipGradByGlobalNorm(1.0)", False), ("net[0].weight.grad", False), ("log2 S", False),
    ("‖Δw‖ / ‖w‖", False), ("StepLR", False), ("MLP", False), ("weight", False), ("by norm", True), ("层 0，学习率 × 1", False)])
def test_what_reads_as_english(text, english):
    assert language.reads_as_english(text) is english


def test_templates_carry_the_number_the_learner_chose():
    with i18n.use_language("zh"):
        assert language.translated("Global gradient norm, clipped at 2.5") == "全局梯度范数，裁剪阈值 2.5"
        assert language.translated("ReLU network: std of each block's output") == \
            "ReLU 网络：每个块输出的标准差"
        assert language.translated("clipped at") == "clipped at"      # no number: no match


def _fields(template: str) -> list[str]:
    return sorted(field for _, field, _, _ in string.Formatter().parse(template) if field)


@pytest.mark.parametrize("english", list(zh_figures.WORDS))
def test_every_entry_is_chinese_with_the_same_fields(english):
    chinese = zh_figures.WORDS[english]
    assert CJK.search(chinese) and not language.reads_as_english(chinese), chinese
    assert _fields(chinese) == _fields(english)


def _chapter_strings() -> set[str]:
    """Every string literal of the chapters' code, f-strings as templates (``{}`` fields)."""
    found = set()
    for chapter in CHAPTERS:
        for node in ast.walk(ast.parse(chapter.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
            elif isinstance(node, ast.JoinedStr):
                found.add("".join(v.value if isinstance(v, ast.Constant) else "{}"
                                  for v in node.values))
    return found


def test_every_entry_is_a_text_a_chapter_draws():
    """An entry no chapter draws any more is dead: its chapter's label changed (then the
    Chinese notebook's check fails too) or the figure went."""
    drawn = _chapter_strings()
    as_drawn = {english: re.sub(r"\{\w+\}", "{}", english) for english in zh_figures.WORDS}
    dead = [english for english, shape in as_drawn.items() if shape not in drawn]
    assert not dead, f"entries of zh_figures.py no chapter draws: {dead}"


def _cells(chapter: Path) -> list[str]:
    return re.split(r"^# %%.*$", chapter.read_text(encoding="utf-8"), flags=re.MULTILINE)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_a_chapter_draws_is_shown_with_plot_show(chapter):
    assert "plt.show()" not in chapter.read_text(encoding="utf-8"), \
        f"{chapter.name}: end the cell with plot.show(), which speaks the notebook's language"
    for cell in _cells(chapter):
        makes_a_figure = re.search(r"plt\.(subplots|figure)\(", cell)
        if makes_a_figure and "plt.close(" not in cell:
            assert "plot.show()" in cell, f"{chapter.name}: a figure cell without plot.show():\n{cell}"
