"""Settings for the whole test run (unit tests, doctests and the nbval notebook runs)."""
import importlib.util
import os

import pytest

# Notebooks run their short versions of long loops under the tests (see dt.quick_mode());
# kernels that nbval starts inherit this environment.
os.environ["DLTUTOR_QUICK"] = "1"
# Running the chapters under the tests must not write learners' progress files into the
# repository (dltutor/exercises/record.py); the tests of that file choose their own.
os.environ["DLTUTOR_PROGRESS"] = "off"
# A Chinese notebook's figure text that reads as English and has no translation stops the cell
# (dltutor/plot/language.py), so a chapter's new English label cannot reach the Chinese edition.
os.environ["DLTUTOR_CHECK_FIGURE_WORDS"] = "1"

# The chapters' sources are scripts for jupytext, not modules: nbval runs the built notebooks.
collect_ignore = ["notebooks/src"]
# The diagnostics' Paddle adapter imports Paddle, which the kit's own environment does not
# have: it is tested in tests/frameworks instead.
if importlib.util.find_spec("paddle") is None:
    collect_ignore.append("dltutor/diagnose/adapters/paddle_adapter.py")


# The Chinese notebooks' figures speak Chinese; without a font that draws it they fall back to
# English with a warning, which their stored outputs (built where the font is) do not have.
NO_CHINESE_FONT = ("no installed font draws Chinese, so the Chinese notebooks' figures would "
                   "fall back to English with a warning: install one (Debian: apt-get install "
                   "fonts-noto-cjk; .ci/run does)")


# nbval runs a notebook's cells in order in one kernel, so under pytest-xdist (-n) they must stay
# on one worker. pyproject.toml's addopts choose ``--dist loadscope`` for every run: it sends each
# scope (a node id up to its last ``::``) to one worker, and every cell of a notebook is
# ``path.ipynb::Cell N``, so a notebook is one scope (and so is each test module).


def pytest_collection_modifyitems(config, items):
    """Skip the Chinese notebooks where no installed font draws Chinese (``NO_CHINESE_FONT``)."""
    without_chinese_font = None
    for item in items:
        if str(item.fspath).endswith(".zh.ipynb"):
            if without_chinese_font is None:
                from dltutor.plot.language import find_cjk_font
                without_chinese_font = find_cjk_font() is None
            if without_chinese_font:
                item.add_marker(pytest.mark.skip(reason=NO_CHINESE_FONT))
