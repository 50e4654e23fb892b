"""The language of what the kit says to a learner: English (the default) or Chinese.

Exercise verdicts and hints, the lab's labels and status line, and the diagnostics' reports come
from one table per language (``en.py``, ``zh.py`` in this package), looked up by key. Error
messages from the engine stay English: they name code, and a search for them should find the
same answers everywhere.

Choose the language with ``dt.set_language("zh")`` in a notebook, or for a whole session with
the environment variable ``DLTUTOR_LANG=zh`` (the Chinese chapters set it in their first cell).
Both take a locale's spelling too (``zh_CN.UTF-8``, ``zh-CN``); an unknown DLTUTOR_LANG warns
and leaves the kit in English.

>>> from dltutor import i18n
>>> i18n.text("exercise.correct", id="01.1")
'Exercise 01.1: correct.'
>>> with i18n.use_language("zh"):
...     i18n.text("exercise.correct", id="01.1")
'练习 01.1：正确。'
>>> i18n.get_language()
'en'
"""
from __future__ import annotations

import contextlib
import os
import warnings
from typing import Iterator

from . import en, zh, zh_figures

#: The languages the kit speaks, and their tables (key -> ``str.format`` template).
TABLES = {"en": en.TEXT, "zh": zh.TEXT}
LANGUAGES = tuple(TABLES)
#: Sentences of the exercises' own checks and hints, English -> Chinese (see ``zh.py``).
SENTENCES = {"zh": zh.SENTENCES}
#: The texts the chapters' own figures draw, English -> Chinese (see ``zh_figures.py``); read by
#: ``dltutor.plot.show``, which also matches the templates among them backwards.
FIGURE_WORDS = {"zh": zh_figures.WORDS}

__all__ = ["LANGUAGES", "get_language", "language_code", "set_language", "text", "sentence",
           "use_language"]


def language_code(spelling: object) -> str | None:
    """The kit's language for a language or locale name as systems spell it ("zh", "zh_CN",
    "zh-CN", "zh_CN.UTF-8", "en_US.UTF-8", "C"), or None when the kit does not speak it.

    >>> [language_code(s) for s in ("zh_CN.UTF-8", "zh-Hans", "ZH", "en_GB", "C", "fr_FR")]
    ['zh', 'zh', 'zh', 'en', 'en', None]
    """
    if not isinstance(spelling, str):
        return None
    base = spelling.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    if base in ("c", "posix"):                   # the system's default locale: English
        return "en"
    return base if base in TABLES else None


def _checked(language: object, where: str) -> str:
    code = language_code(language)
    if code is None:
        raise ValueError(f"{where}: the kit speaks {' and '.join(repr(x) for x in LANGUAGES)}, "
                         f"not {language!r}")
    return code


def _from_environment() -> str:
    """DLTUTOR_LANG's language; a value the kit does not speak warns and gives English (the
    import must never fail on a variable set for another program)."""
    spelling = os.environ.get("DLTUTOR_LANG", "").strip()
    if not spelling:
        return "en"
    code = language_code(spelling)
    if code is None:
        warnings.warn(f"DLTUTOR_LANG={spelling!r}: the kit speaks "
                      f"{' and '.join(repr(x) for x in LANGUAGES)}; using 'en'", stacklevel=2)
        return "en"
    return code


_language = _from_environment()


def set_language(language: str) -> None:
    """Speak ``language`` ("en" or "zh") from now on: exercise verdicts and hints, the lab,
    the diagnostics. Engine errors stay English.

    >>> import dltutor as dt
    >>> dt.set_language("zh"); dt.get_language()
    'zh'
    >>> dt.set_language("en")
    """
    global _language
    _language = _checked(language, "set_language")


def get_language() -> str:
    """The language the kit speaks now ("en" unless ``set_language`` or DLTUTOR_LANG said
    otherwise).

    >>> get_language() in LANGUAGES
    True
    """
    return _language


@contextlib.contextmanager
def use_language(language: str) -> Iterator[None]:
    """Speak ``language`` inside a ``with`` block, then the previous one again.

    >>> with use_language("zh"):
    ...     get_language()
    'zh'
    """
    global _language
    previous, _language = _language, _checked(language, "use_language")
    try:
        yield
    finally:
        _language = previous


def text(key: str, /, **fields: object) -> str:
    """The template ``key`` in the current language, filled in with ``fields``.

    >>> text("exercise.hint", n=1, total=2, id="01.1", text="It is a number.")
    'Hint 1 of 2 for exercise 01.1: It is a number.'
    """
    return TABLES[_language][key].format(**fields)


def sentence(english: str, **fields: object) -> str:
    """An exercise's own sentence (a hint, a "not yet" reason) in the current language: its
    translation when the table has one, else the English sentence; then ``fields`` filled in
    (a sentence that shows the learner's values is a template, ``"{got!r}: ..."``).

    >>> sentence("It is a number.")
    'It is a number.'
    >>> sentence("{got!r} is not 42.", got=41)
    '41 is not 42.'
    """
    template = SENTENCES.get(_language, {}).get(english, english)
    return template.format(**fields) if fields else template
