"""The package's lint and types, checked on every run: ``ruff check dltutor`` and
``mypy dltutor`` must both find nothing. What they check, and why each rule is in or out, is in
pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``); both come with ``pip install -e '.[test]'``.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m module args`` in the repository root, or skip when it is not installed."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install -e '.[test]' brings it")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def test_ruff_finds_nothing_in_the_package():
    # --no-cache: a test run writes nothing into the checkout
    result = run_tool("ruff", "check", "--no-cache", "dltutor")
    assert result.returncode == 0, f"ruff check dltutor:\n{result.stdout}{result.stderr}"


def test_mypy_finds_nothing_in_the_package():
    # its cache lives in the system's temporary folder: a second run takes seconds, not a minute
    cache = Path(tempfile.gettempdir()) / "dltutor-mypy-cache"
    result = run_tool("mypy", "--cache-dir", str(cache), "dltutor")
    assert result.returncode == 0, f"mypy dltutor:\n{result.stdout}{result.stderr}"
