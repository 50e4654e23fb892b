"""Shared fixtures: run op tests under NumPy and under the marked stand-in GPU backend; the
browser of the browser tests."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import dltutor as dt
from dltutor import backend as B

import marked_backend


# On a machine with a GPU, DLTUTOR_TEST_CUPY=1 adds the real CuPy backend to every op test.
BACKENDS = ["numpy", "marked"] + (["cupy"] if os.environ.get("DLTUTOR_TEST_CUPY") == "1" else [])


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """The name of the backend the test runs under; 'marked' checks every array's backend."""
    if request.param == "cupy" and not B.gpu_available():
        pytest.fail("DLTUTOR_TEST_CUPY=1 but CuPy or a GPU is missing")
    if request.param == "marked":
        marked_backend.register()
        marked_backend.wrap_every_op_call(monkeypatch, marked_backend.checking_apply)
    with B.use(request.param):
        yield request.param


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same random state."""
    dt.manual_seed(0)
    np.random.seed(0)
    yield


@pytest.fixture(scope="module")
def browser():
    """Chromium, driven by Playwright, for one test module (the browser tests). Without it the
    test skips and says how to install it; under DLTUTOR_REQUIRE_BROWSER=1 (CI) it fails."""
    import browser_helpers
    chromium = browser_helpers.find_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is in the test extras
        sync_playwright = None
    if sync_playwright is None or chromium is None:
        reason = ("Python Playwright is missing: pip install -e '.[test]'"
                  if sync_playwright is None else browser_helpers.INSTALL_HINT)
        if os.environ.get("DLTUTOR_REQUIRE_BROWSER") == "1":
            pytest.fail(f"DLTUTOR_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=browser_helpers.CHROMIUM_ARGS,
                                     headless=True, timeout=60_000)
        yield launched
        launched.close()
