"""The same lesson on every machine: notebooks, doctests and the lab demos' claims pass under
other CPUs' rounding.

The main test run checks the stored notebook outputs on this machine's kernels. Here each
variant of ``cpu_variants.variants()`` runs the notebooks (nbval, against the same stored
outputs), the doctests and ``tests/lab/test_demos.py`` again in a fresh pytest process,
with other OpenBLAS kernels, with NumPy's baseline SIMD loops, or under the rounding probe. A
stored number or a claim that depends on how one CPU rounds fails here. ``make test-cpus``
runs only these.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .cpu_variants import environment, pytest_command, variants

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.cpu_variant


def _summary(output: str) -> str:
    """The failures and the closing line of a pytest run (its full output is too long)."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [line for line in plain.splitlines()
             if line.startswith(("FAILED", "ERROR")) or re.match(r"=+ .*(passed|failed|error)", line)]
    return "\n".join(lines[-40:]) or plain[-3000:]


@pytest.mark.parametrize("variant", variants(), ids=lambda v: v.name)
def test_notebooks_and_doctests_hold_under(variant, tmp_path):
    if variant.unavailable:
        pytest.skip(variant.unavailable)
    # The Chinese notebooks run the English ones' code: checking them again here would double
    # the time and could find nothing new.
    command = pytest_command(variant, ["dltutor", "notebooks", "--ignore=notebooks/zh",
                                       "tests/lab/test_demos.py"])
    run = subprocess.run(command, cwd=ROOT, env=environment(variant, tmp_path),
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, (
        f"under {variant.name} ({variant.env}) the notebooks, doctests or demos fail:\n"
        f"{_summary(run.stdout + run.stderr)}\n"
        f"Reproduce: .venv/bin/python tests/notebooks/cpu_variants.py run {variant.name} "
        "[PATH...]")
