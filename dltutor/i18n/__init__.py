"""The language of what the kit says to a learner: English (the default) or Chinese.

Every text a learner reads (exercise titles, hints and verdicts, the lab's labels and status
line, the diagnostics' reports) is looked up one way: ``text(key, **fields)``, in one table per
language. A language's table is ``en.py`` (or ``zh.py``) for the kit, ``en_distributed.py``
for what it says about training on several processes, plus the chapters' exercise tables
``en_exercises_01_06.py`` and ``en_exercises_07_12.py`` (keys ``chNN.``).
Error messages from the engine stay English: they name code, and a search for them should find
the same answers everywhere.

Why a key, and not the English sentence itself, finds a text:

* A key names the place a text is shown, so the same English can read differently where it is
  used ("step" is 单步 on a button and 步骤 in a column), and fixing a typo in the English
  does not lose its Chinese.
* A missing or stray Chinese entry is found by comparing the two tables' keys and fields
  (``tests/i18n``), and fails loudly at run time (KeyError), never showing English silently;
  nothing has to search the code for sentences.
* The whole text of a chapter's exercises reads in one table, in the order of the chapter's file,
  beside its Chinese in the matching table.

The price is that a check's code shows a key (``text("ch07.stepped_once_per_batch")``), not its
sentence; each key is named after the sentence's first words so that the code still reads.

The words the chapters' own figures draw are the one thing found by their English
(``zh_figures.py``, read by ``dltutor.plot``): the chapter's code that draws them is the same in
both editions, so it has no key to give.

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

from . import (en, en_distributed, en_exercises_01_06, en_exercises_07_12, zh, zh_distributed,
               zh_exercises_01_06, zh_exercises_07_12, zh_figures)


def _joined(*tables: dict[str, str]) -> dict[str, str]:
    """One language's tables as one, refusing a key two of them define (the second would hide
    the first).

    >>> _joined({"lab.play": "Play"}, {"ch01.q1.title": "A tensor"})
    {'lab.play': 'Play', 'ch01.q1.title': 'A tensor'}
    >>> _joined({"lab.play": "Play"}, {"lab.play": "Run"})
    Traceback (most recent call last):
    ValueError: dltutor.i18n: keys defined in two tables: ['lab.play']
    """
    joined: dict[str, str] = {}
    for table in tables:
        twice = joined.keys() & table.keys()
        if twice:
            raise ValueError(f"dltutor.i18n: keys defined in two tables: {sorted(twice)}")
        joined.update(table)
    return joined


#: The languages the kit speaks, and their tables (key -> ``str.format`` template).
TABLES = {"en": _joined(en.TEXT, en_distributed.TEXT, en_exercises_01_06.TEXT,
                        en_exercises_07_12.TEXT),
          "zh": _joined(zh.TEXT, zh_distributed.TEXT, zh_exercises_01_06.TEXT,
                        zh_exercises_07_12.TEXT)}
LANGUAGES = tuple(TABLES)
#: The texts the chapters' own figures draw, English -> Chinese (see ``zh_figures.py``); read by
#: ``dltutor.plot.show``, which also matches the templates among them backwards.
FIGURE_WORDS = {"zh": zh_figures.WORDS}

__all__ = ["LANGUAGES", "get_language", "language_code", "set_language", "text", "use_language"]


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

