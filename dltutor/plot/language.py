"""The words a figure shows, in the kit's language, and a font that can draw them.

Every text the plot helpers draw (titles, axis labels, legend entries) comes from the kit's
i18n tables (the ``plot.`` keys), in the language ``dt.set_language`` chose. Matplotlib's
default font (DejaVu Sans) has no Chinese characters: it would draw each one as an empty box.
So in Chinese the helpers look for an installed font that has them (:func:`find_cjk_font`)
and add it to the texts they drew as a fallback family: Latin letters and digits keep the
learner's font, Chinese characters come from the CJK font, and the learner's own rcParams are
never changed. With no such font installed the figures stay English, and one warning names
the font to install: English is better than a row of boxes.

>>> import matplotlib; matplotlib.use("Agg")
>>> from dltutor import i18n
>>> from dltutor.plot.language import words
>>> words("step_axis")
'optimizer step'
>>> with i18n.use_language("zh"):                  # Chinese where a CJK font is installed
...     words("step_axis") in ("优化器步数", "optimizer step")
True
"""
from __future__ import annotations

import functools
import os
import re
import string
import sys
import warnings
from types import FrameType
from typing import Iterable

from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.text import Text

from .. import i18n

#: Fonts that draw Simplified Chinese, best first: the common ones of Linux (Noto / Source Han,
#: WenQuanYi), Windows (Microsoft YaHei, SimHei) and macOS (PingFang, Hiragino, Heiti); a
#: serif or another region's CJK font last (every one of them draws the characters).
CJK_FAMILIES = (
    "Noto Sans CJK SC", "Source Han Sans SC", "Source Han Sans CN", "Noto Sans SC",
    "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC", "STHeiti", "SimHei",
    "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Sarasa Gothic SC", "Droid Sans Fallback",
    "Noto Sans CJK TC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Sans CJK HK",
    "Noto Serif CJK SC", "Source Han Serif SC", "SimSun", "Songti SC",
)
#: The languages whose figures need such a font.
NEEDS_CJK_FONT = ("zh",)
#: Chinese (CJK) characters and full-width punctuation: what DejaVu Sans cannot draw.
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")

_warned_no_font = False


def preferred_cjk_family(installed: Iterable[str]) -> str | None:
    """The best of :data:`CJK_FAMILIES` among the ``installed`` family names, else any
    installed family named "CJK", else None.

    >>> preferred_cjk_family(["DejaVu Sans", "SimHei", "Noto Sans CJK SC"])
    'Noto Sans CJK SC'
    >>> preferred_cjk_family(["DejaVu Sans", "Noto Sans Mono CJK SC"])
    'Noto Sans Mono CJK SC'
    >>> preferred_cjk_family(["DejaVu Sans"]) is None
    True
    """
    installed = set(installed)
    for family in CJK_FAMILIES:
        if family in installed:
            return family
    return next((family for family in sorted(installed) if "CJK" in family), None)


def _known_families() -> set[str]:
    return {entry.name for entry in font_manager.fontManager.ttflist}


def _register_new_system_fonts() -> None:
    """Tell matplotlib about the system's fonts it does not know yet. Its list of fonts is a
    cache written the first time it ran: a font installed after that (``apt install
    fonts-noto-cjk``) stays unknown to it until the cache is rebuilt. Adding a font to the
    list changes no setting; it only makes the font findable by name."""
    known = {entry.fname for entry in font_manager.fontManager.ttflist}
    for path in font_manager.findSystemFonts():
        if path not in known:
            try:
                font_manager.fontManager.addfont(path)
            except Exception:        # an unreadable or unusual font file: not the one we need
                continue


@functools.cache
def find_cjk_font() -> str | None:
    """The family name of an installed font that draws Chinese, or None (looked up once).

    >>> find_cjk_font() is None or find_cjk_font() in font_manager.get_font_names()
    True
    """
    family = preferred_cjk_family(_known_families())
    if family is None:
        _register_new_system_fonts()
        family = preferred_cjk_family(_known_families())
    return family


def figure_language() -> str:
    """The language figures speak now: the kit's, or English when it is Chinese and no font
    can draw Chinese (then a warning, once, says which font to install).

    >>> figure_language()
    'en'
    """
    language = i18n.get_language()
    if language in NEEDS_CJK_FONT and find_cjk_font() is None:
        _warn_no_font(language)
        return "en"
    return language


def _warn_no_font(language: str) -> None:
    global _warned_no_font
    if not _warned_no_font:
        _warned_no_font = True
        with i18n.use_language(language):
            warnings.warn(i18n.text("plot.no_cjk_font"), stacklevel=_learners_level())


def _learners_level() -> int:
    """The ``stacklevel`` of the first caller outside the kit (the learner's cell), so the
    warning shows the line that drew the figure."""
    frame: FrameType | None = sys._getframe(1)  # the function that calls warn(): level 1
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dltutor."):
        frame, level = frame.f_back, level + 1
    return level


def words(key: str, /, **fields: object) -> str:
    """The figure text ``plot.<key>`` in the figure's language (:func:`figure_language`).

    >>> words("title.per", title="Update norm", by=words("by.layer"))
    'Update norm per layer'
    """
    with i18n.use_language(figure_language()):
        return i18n.text(f"plot.{key}", **fields)


def give_chinese_text_a_font(figure: Figure | SubFigure) -> None:
    """Add the CJK font as a fallback family to each text of ``figure`` that holds Chinese
    characters (its own family stays first, so Latin letters and digits keep their look).
    Texts without Chinese, and every text while the figures speak English, stay as they are.
    Call it after the helper has drawn everything, the legend included.

    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure()
    >>> title = fig.suptitle("loss")
    >>> give_chinese_text_a_font(fig); title.get_fontfamily()
    ['sans-serif']
    >>> plt.close(fig)
    """
    if figure_language() not in NEEDS_CJK_FONT:
        return
    family = find_cjk_font()
    assert family is not None    # figure_language() speaks Chinese only with a font for it
    for text in figure.findobj(Text):
        current = list(text.get_fontfamily())
        if _CJK.search(text.get_text()) and family not in current:
            text.set_fontfamily([*current, family])


#: Set to ``1`` by the tests (the root ``conftest.py``) and by ``tools/build_notebooks.py``: then
#: a figure text that reads as English and has no translation in the figure's language raises,
#: so a chapter cannot add an English label that the Chinese edition would show untranslated.
CHECK_WORDS_VARIABLE = "DLTUTOR_CHECK_FIGURE_WORDS"
#: A token that is code or a name, not an English word: it has a dot, bracket, digit, operator
#: or underscore (``fc2.bias``, ``U(±0.1)``, ``log2``), is CamelCase (``StepLR``) or an acronym.
_CODE_TOKEN = re.compile(r"\S*[._()\[\]=+*/0-9±√‖Δ∇-]\S*|[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}\w*")
_ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


def translated(text: str) -> str:
    """``text`` (a title, axis label, legend entry) in the figure's language: its entry in the
    i18n figure words (``i18n.FIGURE_WORDS``), whole or as a template whose fields are filled
    in from ``text``; else ``text`` unchanged.

    >>> translated("epoch")
    'epoch'
    >>> with i18n.use_language("zh"):                  # Chinese where a CJK font is installed
    ...     translated("clipped at 0.5") in ("裁剪阈值 0.5", "clipped at 0.5")
    True
    """
    language = figure_language()
    table = i18n.FIGURE_WORDS.get(language, {})
    if text in table:
        return table[text]
    for pattern, template in _templates(language):
        match = pattern.fullmatch(text)
        if match:
            return template.format(**match.groupdict())
    return text


@functools.cache
def _templates(language: str) -> list[tuple[re.Pattern[str], str]]:
    """The figure words of ``language`` whose English has ``{name}`` fields, as a pattern that
    captures each field (built once per language: the table is fixed)."""
    templates = []
    for english, chinese in i18n.FIGURE_WORDS.get(language, {}).items():
        pieces = list(string.Formatter().parse(english))
        if any(field for _, field, _, _ in pieces):
            pattern = "".join(re.escape(literal) + (f"(?P<{field}>.+?)" if field else "")
                              for literal, field, _, _ in pieces)
            templates.append((re.compile(pattern, re.DOTALL), chinese))
    return templates


def reads_as_english(text: str) -> bool:
    """True when ``text`` holds English words once its code and names are set aside (and no
    Chinese): what a Chinese figure must not show untranslated. One word alone may be a
    parameter's name (a legend entry ``weight``), so it takes two.

    >>> reads_as_english("frozen with lr_mult = 0"), reads_as_english("ClipGradByGlobalNorm(1.0)")
    (True, False)
    >>> reads_as_english("net[0].weight.grad"), reads_as_english("用 lr_mult = 0 冻结")
    (False, False)
    >>> reads_as_english("weight")
    False
    """
    if _CJK.search(text):
        return False
    return len(_ENGLISH_WORD.findall(_CODE_TOKEN.sub(" ", text))) >= 2


def speak_the_figures_language(figure: Figure | SubFigure | Axes) -> None:
    """Put every title, axis label, legend entry and free text of ``figure`` (or of an Axes'
    figure) through :func:`translated`, then give Chinese text its font
    (:func:`give_chinese_text_a_font`). Tick labels are numbers or names: they stay.
    In English nothing changes. ``plot.show()`` calls it for every open figure.

    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> title = ax.set_title("epoch")
    >>> with i18n.use_language("zh"):                  # Chinese where a CJK font is installed
    ...     speak_the_figures_language(fig)
    >>> ax.get_title() in ("轮", "epoch")
    True
    >>> plt.close(fig)
    """
    figure = figure.figure if isinstance(figure, Axes) else figure
    if figure_language() == "en":
        return
    check = os.environ.get(CHECK_WORDS_VARIABLE) == "1"
    ticks = {id(label) for ax in figure.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks()
             for label in (tick.label1, tick.label2)}
    for text in figure.findobj(Text):
        if id(text) not in ticks and text.get_visible() and text.get_text():
            text.set_text(translated(text.get_text()))
            if check and reads_as_english(text.get_text()):
                raise LookupError(_untranslated(text.get_text()))
    give_chinese_text_a_font(figure)


def _untranslated(text: str) -> str:
    return (f"the figure text {text!r} has no {figure_language()!r} translation: add it to "
            f"dltutor/i18n/zh_figures.py (WORDS), with {{name}} fields where a number varies "
            f"({CHECK_WORDS_VARIABLE}=1 checks every figure a chapter shows)")
