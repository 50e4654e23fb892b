"""dltutor.plot speaks the kit's language: every text a helper draws comes from the i18n tables,
Chinese is drawn with a font that has its characters (never boxes), a machine without such a
font keeps the English labels and says so once, and English figures stay as they were.

The checks read the figures' Text objects (and, for the glyphs, matplotlib's own warnings
while it renders), never pixels.
"""
from __future__ import annotations

import io
import logging
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import dltutor as dt
from dltutor import i18n, nn, optim, plot
from dltutor.data import make_moons
from dltutor.plot import language

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def rec():
    return plot.example_recorder(steps=12, freeze_at=6, histograms_every=4,
                                 grad_clip=optim.ClipGradByGlobalNorm(0.5))


def _draw_traces(rec):
    plot.traces(rec, "grad_norm")


def _draw_step_series(rec):
    plot.traces(rec, "clip_scale")


def _draw_update_ratio(rec):
    plot.update_ratio(rec)


def _draw_clipping(rec):
    plot.grad_norm_clipping(rec)


def _draw_clipping_of_one_name(rec):
    plot.grad_norm_clipping(rec, name="2.weight")


def _draw_loss(rec):
    plot.loss(rec, smooth=0.9)


def _draw_lr_schedule(rec):
    plot.lr_schedule(np.linspace(0.1, 0.01, 10), label="余弦")    # the learner's own label


def _draw_layer_statistics(rec):
    _ = dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
    plot.layer_statistics(net, dt.randn(16, 8), label="默认初始化")


def _draw_gradient_statistics(rec):
    _ = dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
    plot.layer_statistics(net, dt.randn(16, 8), kind="gradient", label="默认初始化")


def _draw_histograms(rec):
    plot.histograms(rec, "2.weight", kind="grads")


def _draw_one_histogram(rec):
    fig, ax = plt.subplots()
    plot.histograms(plot.example_recorder(steps=3, histograms_every=5), "0.weight", ax=ax)


def _draw_decision_boundary(rec):
    _ = dt.manual_seed(0)
    X, y = make_moons(n=60, seed=0)
    plot.decision_boundary(nn.Sequential(nn.Linear(2, 2)), X, y, resolution=20)


#: Every public drawing function of dltutor.plot, and the variants that draw other words.
DRAWINGS = [_draw_traces, _draw_step_series, _draw_update_ratio, _draw_clipping,
            _draw_clipping_of_one_name, _draw_loss, _draw_lr_schedule, _draw_layer_statistics,
            _draw_gradient_statistics, _draw_histograms, _draw_one_histogram,
            _draw_decision_boundary]
NAMES = [d.__name__.removeprefix("_draw_") for d in DRAWINGS]


def test_every_public_drawing_function_is_drawn_here():
    drawn = {"traces", "update_ratio", "grad_norm_clipping", "loss", "lr_schedule",
             "layer_statistics", "histograms", "decision_boundary"}
    assert set(plot.__all__) - {"example_recorder", "show"} == drawn


def _words_of(fig) -> list[matplotlib.text.Text]:
    """The texts of ``fig`` that are words: titles, axis labels, legend entries and titles,
    colorbar labels, annotations; not the tick labels (numbers, layer names)."""
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks.add(axis.offsetText)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks.update((tick.label1, tick.label2))
    return [t for t in fig.findobj(matplotlib.text.Text)
            if t not in ticks and t.get_text().strip()]


def _drawn_texts(drawing, rec, lang: str) -> list[str]:
    with i18n.use_language(lang):
        drawing(rec)
    fig = plt.figure(plt.get_fignums()[-1])
    return [t.get_text() for t in _words_of(fig)]


def _is_a_name(text: str) -> bool:
    """A parameter or layer name ("0.weight", "2"), which no language translates."""
    return re.fullmatch(r"[\w.]+", text) is not None and not text.isalpha()


@pytest.fixture
def a_cjk_font(monkeypatch):
    """Pretend a CJK font is installed (this machine's fonts do not matter to the words)."""
    monkeypatch.setattr(language, "find_cjk_font", lambda: "DejaVu Sans")


@pytest.fixture
def no_cjk_font(monkeypatch):
    monkeypatch.setattr(language, "find_cjk_font", lambda: None)
    monkeypatch.setattr(language, "_warned_no_font", False)


@pytest.mark.parametrize("drawing", DRAWINGS, ids=NAMES)
def test_every_word_a_plot_draws_is_chinese_in_zh(drawing, rec, a_cjk_font):
    texts = _drawn_texts(drawing, rec, "zh")
    assert texts, "the figure drew no words"
    untranslated = [t for t in texts if not CJK.search(t) and not _is_a_name(t)]
    assert not untranslated, f"English words in a Chinese figure: {untranslated}"
    mathtext = [t for t in texts if "$" in t]
    assert not mathtext, f"mathtext cannot draw Chinese beside it: {mathtext}"


@pytest.mark.parametrize("drawing", DRAWINGS, ids=NAMES)
def test_without_a_cjk_font_the_words_stay_english(drawing, rec, no_cjk_font):
    english = _drawn_texts(drawing, rec, "en")
    with pytest.warns(UserWarning, match="Noto Sans CJK SC"):
        chinese_kit = _drawn_texts(drawing, rec, "zh")
    assert chinese_kit == english
    fig = plt.figure(plt.get_fignums()[-1])
    assert all("DejaVu Sans" not in t.get_fontfamily() for t in fig.findobj(matplotlib.text.Text))


def test_without_a_cjk_font_one_warning_in_chinese_names_the_font(rec, no_cjk_font):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with i18n.use_language("zh"):
            plot.traces(rec, "grad_norm")
            plot.loss(rec)
            plot.update_ratio(rec)
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert "Noto Sans CJK SC" in message and CJK.search(message)
    assert caught[0].filename == __file__        # it points at the line that drew the figure


def test_english_figures_are_unchanged(rec):
    X, y = make_moons(n=60, seed=0)
    fig, axes = plt.subplots(2, 2)
    plot.traces(rec, "grad_norm", names=["0.weight"], ax=axes[0, 0])
    plot.update_ratio(rec, names="2.weight", ax=axes[0, 1])
    plot.loss(rec, smooth=0.9, ax=axes[1, 0])
    plot.decision_boundary(nn.Sequential(nn.Linear(2, 2)), X, y, resolution=10, ax=axes[1, 1])
    texts = [t.get_text() for t in _words_of(fig)]
    assert texts == [
        "optimizer step", r"gradient norm $\|\nabla w\|_2$", "Gradient norm per parameter",
        "0.weight", "frozen (0.weight)",
        "optimizer step", r"update ratio $\|\Delta w\|_2 \,/\, \|w\|_2$",
        "Update / parameter ratio per parameter", "2.weight",
        "typical range $10^{-4}$ – $10^{-2}$\n(far above: unstable? far below: slow)",
        "rule of thumb $10^{-3}$",
        "optimizer step", "loss (of the mini-batch)", "Training loss", "loss",
        "moving average (smooth=0.9)",
        "feature 0", "feature 1", texts[-3], "class 0", "class 1"]
    assert texts[-3].startswith("Decision boundary (accuracy on these points: ")
    families = {tuple(t.get_fontfamily()) for t in fig.findobj(matplotlib.text.Text)}
    assert families == {tuple(matplotlib.rcParams["font.family"])}


def test_chinese_texts_get_the_cjk_font_after_the_learners_own(rec, a_cjk_font):
    fig, ax = plt.subplots()
    ax.set_xlabel("mine", fontfamily="serif")
    with i18n.use_language("zh"):
        plot.loss(rec, smooth=0.9, ax=ax)
    title, legend_entry = ax.title, ax.get_legend().get_texts()[0]
    assert title.get_fontfamily() == [*matplotlib.rcParams["font.family"], "DejaVu Sans"]
    assert legend_entry.get_fontfamily()[-1] == "DejaVu Sans"
    tick = ax.get_xticklabels()[0]
    assert tick.get_fontfamily() == matplotlib.rcParams["font.family"]   # no Chinese: untouched


def test_chinese_figures_change_no_global_style(rec, a_cjk_font):
    before = dict(matplotlib.rcParams)
    with i18n.use_language("zh"):
        for drawing in DRAWINGS:
            drawing(rec)
    assert dict(matplotlib.rcParams) == before


def _system_has_a_cjk_font() -> bool:
    """Whether a font file of the system draws Chinese, read from the files themselves (not
    from matplotlib's cache of them)."""
    names = []
    for path in matplotlib.font_manager.findSystemFonts():
        try:
            names.append(matplotlib.font_manager.get_font(path).family_name)
        except Exception:
            continue
    return language.preferred_cjk_family(names) is not None


def test_a_real_cjk_font_draws_every_character(rec, caplog):
    """On this machine's fonts: no glyph missing and no mathtext dummy symbol, for every
    helper. Skipped where no CJK font is installed (the figures are English there)."""
    if not _system_has_a_cjk_font():
        pytest.skip("no CJK font installed (install fonts-noto-cjk to run this check)")
    with i18n.use_language("zh"):
        for drawing in DRAWINGS:
            drawing(rec)
    caplog.set_level(logging.WARNING, logger="matplotlib")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for number in plt.get_fignums():
            plt.figure(number).savefig(io.BytesIO(), format="png")
    missing = [str(w.message) for w in caught if "missing from" in str(w.message)]
    missing += [r.getMessage() for r in caplog.records if "glyph" in r.getMessage()]
    assert not missing, missing[:5]


def test_the_preferred_cjk_font_is_a_simplified_chinese_sans():
    assert language.preferred_cjk_family(["Noto Serif CJK SC", "SimHei", "Noto Sans CJK JP"]) \
        == "SimHei"
    assert language.preferred_cjk_family(["DejaVu Sans", "Liberation Sans"]) is None


def test_a_font_installed_after_matplotlibs_cache_is_found(monkeypatch):
    """matplotlib's font list is a cache from its first run; a CJK font installed later is
    not in it. The finder registers the system's unknown fonts and looks again."""
    if not _system_has_a_cjk_font():
        pytest.skip("no CJK font installed")
    manager = matplotlib.font_manager.fontManager
    without_cjk = [e for e in manager.ttflist if language.preferred_cjk_family([e.name]) is None]
    monkeypatch.setattr(manager, "ttflist", without_cjk)
    found = language.find_cjk_font.__wrapped__()        # not the answer cached for the session
    assert found is not None and found in {e.name for e in manager.ttflist}


def test_every_recorded_series_has_a_title_and_an_axis_label_in_every_language():
    from dltutor.trace import PARAM_SERIES, STEP_SERIES
    for table in i18n.TABLES.values():
        missing = [f"plot.{what}.{kind}" for kind in (*PARAM_SERIES, *STEP_SERIES)
                   for what in ("title", "ylabel") if f"plot.{what}.{kind}" not in table]
        missing += [f"plot.series.{kind}" for kind in STEP_SERIES
                    if f"plot.series.{kind}" not in table]
        assert not missing


@pytest.mark.parametrize("drawing", DRAWINGS, ids=NAMES)
def test_chinese_words_stay_inside_their_figure(drawing, rec):
    """Chinese characters are wider than Latin letters: no title, label or legend entry of a
    helper's own figure may run past its edge."""
    if not _system_has_a_cjk_font():
        pytest.skip("no CJK font installed")
    with i18n.use_language("zh"):
        drawing(rec)
    fig = plt.figure(plt.get_fignums()[-1])
    fig.canvas.draw()
    edge = fig.bbox
    outside = [t.get_text() for t in _words_of(fig)
               if not (edge.x0 - 1 <= t.get_window_extent().x0
                       and t.get_window_extent().x1 <= edge.x1 + 1)]
    assert not outside
