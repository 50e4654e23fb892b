"""benchmarks/distributed_bench.py runs (tiny models, one repeat) and prints its table.

A smoke test only: no timing is asserted (the numbers are in benchmarks/RESULTS.md).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "distributed_bench.py"


def test_the_bench_prints_a_row_per_model_and_number_of_processes():
    run = subprocess.run([sys.executable, str(BENCH), "--processes", "1", "2", "--repeats", "1",
                          "--calls", "1", "--tiny", "--timeout", "60"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("| model | processes | step ms | all-reduce ms |")
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [(r[0], r[1]) for r in rows] == [
        ("LeNet 1x28x28 (tiny)", "1"), ("LeNet 1x28x28 (tiny)", "2"),
        ("MLP 784-256-256-10 (tiny)", "1"), ("MLP 784-256-256-10 (tiny)", "2")]
    for row in rows:
        assert float(row[2]) > 0 and float(row[3]) > 0 and row[4].endswith("%")
