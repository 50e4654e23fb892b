"""Do background workers hide the cost of preparing batches?

One epoch of a shuffled DataLoader over 60,000 x 784 float32 rows (MNIST-sized, random numbers
made once) in batches of 128, read by a consumer that stands in for a training step of ~1 ms:

* ``sleep``: ``time.sleep(0.001)``; the consumer waits without holding the GIL (like a GPU step);
* ``numpy``: a float32 matmul of the batch sized to take ~1 ms; the consumer computes, as a real
  CPU training step does (NumPy releases the GIL inside BLAS).

Each runs with ``num_workers=0`` (gather, then train, then gather...) and ``num_workers=2``
(the next batches are gathered while the consumer works). Reported: the epoch's wall time, the
consumer's own time (measured around each step), and their ratio. A ratio of 1.0 means data
loading costs nothing visible; the target for 2 workers is at most 1.2. A ``none`` row (no
consumer) shows what gathering the batches costs on its own.

Run from the repository root::

    python benchmarks/bench_data.py           # about 15 s
    python benchmarks/bench_data.py --quick   # one repeat
"""
# One BLAS thread (and the repository root on sys.path), set before NumPy is imported: the
# consumer's matmul should take one core, as it would beside the workers, and timings stay steady.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import argparse
import os
import time
from typing import Callable

import numpy as np

from dltutor.data import DataLoader, TensorDataset

ROWS, FEATURES, BATCH = 60_000, 784, 128
STEP_S = 0.001
TARGET = 1.2


def _make_data() -> TensorDataset:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((ROWS, FEATURES), dtype=np.float32)
    y = rng.integers(0, 10, size=ROWS, dtype=np.int64)
    return TensorDataset(X, y)


def _calibrated_matmul(target_s: float = STEP_S) -> Callable:
    """A consumer step ``batch @ W`` with W's width chosen so that one step takes ~target_s."""
    rng = np.random.default_rng(1)
    batch = rng.standard_normal((BATCH, FEATURES), dtype=np.float32)
    width = 256
    for _ in range(4):
        W = rng.standard_normal((FEATURES, width), dtype=np.float32)
        batch @ W
        times = []
        for _ in range(30):
            t0 = time.perf_counter()
            batch @ W
            times.append(time.perf_counter() - t0)
        took = float(np.median(times))
        width = max(8, int(round(width * target_s / took)))
    W = rng.standard_normal((FEATURES, width), dtype=np.float32)

    def step(xb) -> None:
        xb.data @ W

    step.width = width  # type: ignore[attr-defined]
    return step


def _sleep_step(xb) -> None:
    time.sleep(STEP_S)


def _epoch(loader: DataLoader, step: Callable | None) -> tuple[float, float, int]:
    """(epoch wall time, consumer's own time, number of batches) for one pass."""
    consumer = 0.0
    batches = 0
    t0 = time.perf_counter()
    for xb, _ in loader:
        if step is not None:
            c0 = time.perf_counter()
            step(xb)
            consumer += time.perf_counter() - c0
        batches += 1
    return time.perf_counter() - t0, consumer, batches


def run(quick: bool = False) -> list[dict]:
    """Time one epoch per (consumer, num_workers); the best of a few repeats. Returns table rows."""
    repeats = 1 if quick else 3
    data = _make_data()
    matmul = _calibrated_matmul()
    consumers = [("none", None), ("sleep 1 ms", _sleep_step),
                 (f"numpy matmul 128x784 @ 784x{matmul.width}", matmul)]
    rows = []
    for name, step in consumers:
        for workers in (0, 2):
            loader = DataLoader(data, batch_size=BATCH, shuffle=True, seed=0, num_workers=workers)
            _epoch(loader, step)                      # warm-up: page in the data, start BLAS
            best = min((_epoch(loader, step) for _ in range(repeats)), key=lambda r: r[0])
            epoch_s, consumer_s, batches = best
            ratio = epoch_s / consumer_s if consumer_s > 0 else float("nan")
            rows.append({
                "consumer": name,
                "num_workers": workers,
                "batches": batches,
                "epoch_s": round(epoch_s, 4),
                "consumer_s": round(consumer_s, 4),
                "ratio": round(ratio, 3),
                "target_met": (ratio <= TARGET) if (workers == 2 and step is not None) else None,
            })
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| consumer | num_workers | batches | epoch (s) | consumer (s) | epoch / consumer | "
             f"target <= {TARGET} |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        met = {True: "yes", False: "NO", None: ""}[r["target_met"]]
        ratio = "" if r["ratio"] != r["ratio"] else f"{r['ratio']:.2f}"
        lines.append(f"| {r['consumer']} | {r['num_workers']} | {r['batches']} | "
                     f"{r['epoch_s']:.3f} | {r['consumer_s']:.3f} | {ratio} | {met} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat instead of three")
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows = run(quick=args.quick)
    print(f"DataLoader epoch: {ROWS:,} x {FEATURES} float32, batch {BATCH}, shuffle; "
          f"best of {1 if args.quick else 3}; {os.cpu_count()} CPU cores\n")
    print(markdown(rows))
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
