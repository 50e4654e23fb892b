"""How much does dltutor's autograd engine cost on top of plain NumPy?

Run from the repository root::

    python benchmarks/engine_bench.py            # full run (about 10 s)
    python benchmarks/engine_bench.py --quick    # fewer repeats
    python benchmarks/engine_bench.py --markdown results.md
    python benchmarks/engine_bench.py --profile  # where dltutor spends its time

Every workload is one full training step: forward pass, loss, backward pass and optimizer
update. It runs twice, once with dltutor and once as a hand-written NumPy forward/backward of
the same network. Before any timing the script checks that both produce the same loss and the
same gradient for every parameter (and stops with an error if not), so the two sides really
do the same arithmetic. The dltutor side updates with ``dltutor.optim``, the NumPy side with
hand-written in-place updates, so the ratio dltutor / NumPy measures the engine and the
optimizer's bookkeeping: building the graph, walking it backward, the Python work around each
op and each parameter's step.

Everything runs on one thread: with several BLAS threads the timings of small matrices are
noisy and say more about thread start-up than about the engine.

This file is the entry point: it runs the parts and writes the report. The parts live beside it:

* ``one_thread.py``: one BLAS thread and the package on ``sys.path`` (imported first everywhere);
* ``data_setup.py``: seed, dtype, the initial weights and data, the optimizer row's settings;
* ``numpy_side.py``: the hand-written NumPy baseline and the optimizers both sides share;
* ``timing.py``: batch timing, medians, the ``Result`` rows and the results table;
* ``training_bench.py``: the training-step workloads and the chain of adds;
* ``optimizer_bench.py``: ``optimizer.step()`` alone, every per-parameter feature on;
* ``overhead_bench.py``: Recorder overhead, checkpoints, the DataLoader, memory, ``--profile``.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from overhead_bench import (checkpoint_lines, dataloader_lines, memory_check, profile_lines,
                            recorder_lines)
from timing import markdown_table
from training_bench import run_benchmarks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the report to PATH")
    parser.add_argument("--profile", action="store_true",
                        help="also profile the small MLP step and the chain of adds")
    args = parser.parse_args(argv)

    repeats = 7 if args.quick else 21
    started = time.perf_counter()
    results, warnings = run_benchmarks(repeats)
    report = [f"dltutor engine benchmark: median of {repeats} repeats, single-threaded BLAS, "
              f"NumPy {np.__version__}, Python {sys.version.split()[0]}. Gradients of every "
              "workload checked against the NumPy baseline.", "", markdown_table(results), ""]
    report += warnings
    missed = [r.workload for r in results if r.met is False]
    report.append("All targets met." if not missed else
                  "MISSED targets: " + "; ".join(missed))
    report += [""] + memory_check()
    report += [""] + recorder_lines(repeats)
    report += [""] + checkpoint_lines(repeats)
    report += [""] + dataloader_lines(args.quick)
    if args.profile:
        report += [""] + profile_lines()
    report.append(f"\n(total {time.perf_counter() - started:.1f} s)")
    text = "\n".join(report)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n", encoding="utf-8")
    return 0  # a report, not a test: missed targets do not fail the run


if __name__ == "__main__":
    sys.exit(main())
