"""tests/frameworks: what the chapters say PyTorch and Paddle do, run in PyTorch and Paddle.

These tests run in their own environment with the real frameworks (CPU builds), created by
``make test`` (or ``make test-frameworks``). Each test carries the id of the claim it proves::

    @claim("torch-drop-last-bool")
    def test_...():

and the chapter cell that makes the claim carries the tag ``claim-torch-drop-last-bool``.
``tests/notebooks/test_claims.py`` (in the main suite) checks that every claim id in the chapters has a
test here and every test here proves a claim some chapter makes.
"""
from __future__ import annotations

import os

import pytest

# Paddle prints its start-up banners and warnings through glog; keep the test output readable.
os.environ.setdefault("GLOG_minloglevel", "2")


def pytest_configure(config):
    config.addinivalue_line("markers", "claim(*ids): the claim ids (tags claim-ID in a chapter) this test proves")
    config.addinivalue_line("markers", "row(table, label, cell): the names-table cell whose "
                            "meaning this test proves (claims.row)")


@pytest.fixture
def paddle():
    """Paddle in dynamic-graph mode. Imported, not skipped: this environment has Paddle, and a
    missing Paddle must fail its claims, not pass them silently."""
    from chapters import paddle_dynamic

    return paddle_dynamic()


@pytest.fixture(autouse=True)
def _seeded():
    """Every framework test starts from the same random state in both frameworks (and in
    dltutor, whose generator is its own)."""
    import numpy as np
    import torch

    import dltutor as dt

    torch.manual_seed(0)
    np.random.seed(0)
    dt.manual_seed(0)
    yield
