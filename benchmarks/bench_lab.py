"""How fast does the live lab train, headless and with its widget view?

Run from the repository root::

    python benchmarks/bench_lab.py             # about 15 s
    python benchmarks/bench_lab.py --quick     # fewer repeats
    python benchmarks/bench_lab.py --markdown lab.md

It measures, on the moons demo (``demos.moons_mlp()``: a 2-16-16-2 MLP, mini-batches of 32,
SGD with momentum, the per-layer Recorder on):

1. ``lab.step`` in a loop: training steps per second with the Recorder recording every step
   (target: at least 300 per second);
2. the same with ``lab.freeze``, an lr multiplier and global-norm clipping switched on (the
   controls must not slow training down);
3. the widget view's asyncio training loop without a browser (``LabView.train`` at full
   speed): steps per second including the status line and the plot frames it makes between
   slices (12 a second);
4. one frame of the plots (``chart_frame``: the numbers the browser draws, 12 times a
   second), in milliseconds and kilobytes, after 1000 steps with a layer frozen.

The browser numbers (steps and redraws per second with the plots live in JupyterLab and
Voilà) come from ``pytest -m browser tests/browser/test_browser.py``, which writes them to
``test-artifacts/browser_speed.txt``.

Like ``engine_bench.py``, everything runs on one BLAS thread: with several threads the
timings of these small matrices measure thread start-up, not the lab.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dltutor.lab import demos

TARGET_STEPS_PER_SECOND = 300


def steps_per_second(lab, steps: int, repeats: int) -> float:
    """Median over ``repeats`` runs of ``steps`` calls of ``lab.step(1)`` (after a warm-up)."""
    lab.step(20)
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(steps):
            lab.step(1)
        rates.append(steps / (time.perf_counter() - started))
    return statistics.median(rates)


def steered_lab():
    lab = demos.moons_mlp()
    lab.freeze("2")
    lab.set_lr_mult("0", 3.0)
    lab.set_clip("global_norm", 1.0)
    return lab


def view_loop(seconds: float, repeats: int) -> float:
    """Steps per second of LabView's training loop at full speed (no browser)."""
    from dltutor.lab.widgets import LabView

    rates = []
    for _ in range(repeats):
        view = LabView(demos.moons_mlp(), pace=None)
        started = time.perf_counter()
        asyncio.run(view.train(seconds=seconds))
        rates.append(view.lab.steps_done / (time.perf_counter() - started))
        view.close()
    return statistics.median(rates)


def frame_cost(repeats: int) -> tuple[float, float]:
    """Median time to build one frame of the plots (with the decision boundary) after 1000
    steps, in ms, and its size as JSON in KB."""
    import json

    from dltutor.lab.chart import chart_frame
    from dltutor.lab.widgets import LabView

    view = LabView(demos.moons_mlp(), pace=None)
    view.lab.step(500)
    view.lab.freeze("2")
    view.lab.step(500)
    times = []
    for _ in range(repeats):
        view.lab.step(10)
        started = time.perf_counter()
        frame = chart_frame(view.lab, view._colors, view._predict)
        times.append((time.perf_counter() - started) * 1000)
    size = len(json.dumps(frame)) / 1000
    view.close()
    return statistics.median(times), size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the report to PATH")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    warnings.simplefilter("ignore", DeprecationWarning)

    started = time.perf_counter()
    plain = steps_per_second(demos.moons_mlp(), 300, repeats)
    steered = steps_per_second(steered_lab(), 300, repeats)
    loop = view_loop(1.0 if args.quick else 2.0, 1 if args.quick else 3)
    frame_ms, frame_kb = frame_cost(5 if args.quick else 21)
    met = "yes" if plain >= TARGET_STEPS_PER_SECOND else "**NO**"
    lines = [
        f"Live lab benchmark: moons demo (2-16-16-2 MLP, batch 32, SGD momentum 0.9, "
        f"per-layer Recorder on), median of {repeats} runs, single-threaded BLAS, "
        f"NumPy {np.__version__}, Python {platform.python_version()}, {os.cpu_count()} cores.",
        "",
        "| measurement | result | target | met? |",
        "|---|---:|---|---|",
        f"| `lab.step` headless, Recorder on | {plain:.0f} steps/s | >= "
        f"{TARGET_STEPS_PER_SECOND} | {met} |",
        f"| `lab.step` with a layer frozen, lr x3 on another, global-norm clipping | "
        f"{steered:.0f} steps/s | report | — |",
        f"| `LabView` training loop, no browser (status 10/s, plot frames 12/s) | "
        f"{loop:.0f} steps/s | report | — |",
        f"| one frame of the plots, decision boundary included (built in the kernel) | "
        f"{frame_ms:.1f} ms, {frame_kb:.0f} KB | report | — |",
        "",
        f"(total {time.perf_counter() - started:.1f} s)",
    ]
    report = "\n".join(lines)
    print(report)
    if args.markdown:
        Path(args.markdown).write_text(report + "\n", encoding="utf-8")
    return 0 if plain >= TARGET_STEPS_PER_SECOND else 1


if __name__ == "__main__":
    sys.exit(main())
