"""benchmarks/gpu_bench.py, dltutor's training step against PyTorch's, run here on the CPU:
its agreement check passes when both sides compute the same step, stops the run naming the
workload when they do not, and a GPU run on a machine without CuPy says what is missing.
The timings themselves are not checked (no wall-clock assertions)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL_WORKLOADS = ["MLP 2-16-16-2, batch 32", "MLP 784-256-10, batch 64", "LeNet, batch 32"]
LARGE_WORKLOADS = ["MLP 784-1024-1024-10", "MLP 4096-4096-4096-10", "LeNet, batch 256"]
AGREE_RTOL = 3e-4     # the script's


def gpu_bench(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the benchmark as a learner would, from the repository root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "benchmarks/gpu_bench.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The Markdown table's rows by workload name (the header and rule left out)."""
    rows = [line.strip("|").split("|") for line in stdout.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows[2:]}


def test_a_quick_cpu_run_checks_then_times_each_small_workload():
    result = gpu_bench("--device", "cpu", "--quick")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("CPU: ") and "PyTorch " in result.stdout
    rows = table_rows(result.stdout)
    assert [name.split(" (")[0] for name in rows] == SMALL_WORKLOADS
    for name, cells in rows.items():
        assert float(cells[-1]) <= AGREE_RTOL, f"{name}: the sides differ by {cells[-1]}"
        assert cells[3:5] == ["report", "—"], "the issue's targets are for a GPU, not a CPU"
    assert not any(large in result.stdout for large in LARGE_WORKLOADS)


def test_a_side_that_trains_differently_stops_the_run_naming_the_workload():
    # --perturb gives PyTorch a 10% larger learning rate
    result = gpu_bench("--device", "cpu", "--quick", "--perturb")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "MLP 2-16-16-2, batch 32" in result.stderr
    assert "disagree after 3 steps" in result.stderr and "nothing was timed" in result.stderr
    assert table_rows(result.stdout) == {}, "a row was timed although the sides disagreed"


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_a_gpu_run_without_cupy_says_what_is_missing():
    result = gpu_bench("--device", "cuda", "--quick")
    assert result.returncode == 1
    assert "needs CuPy, which is not installed" in result.stderr
    assert result.stdout == ""
