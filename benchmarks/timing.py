"""How the benchmarks measure time: batches of calls timed with ``time.perf_counter``, the
median over repeats with the sides taking turns, and the results table.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import statistics
import time
from dataclasses import dataclass
from typing import Callable


# =============================================================================================
# Timing
# =============================================================================================
def timed_batch(step: Callable, reset: Callable, n: int) -> float:
    """Seconds for ``n`` calls of ``step()`` after an untimed ``reset()``."""
    reset()
    start = time.perf_counter()
    for _ in range(n):
        step()
    return time.perf_counter() - start


def batch_size_for(step: Callable, reset: Callable, repeat_seconds: float) -> int:
    """How many calls make a batch of about ``repeat_seconds`` (after a short warm-up)."""
    warm_until = time.perf_counter() + 0.05      # warm caches and NumPy's code paths
    reset()
    while time.perf_counter() < warm_until:
        step()
    n = 1
    while True:
        elapsed = timed_batch(step, reset, n)
        if elapsed >= 0.5 * repeat_seconds:
            return max(1, round(n * repeat_seconds / elapsed))
        n = max(2 * n, int(n * repeat_seconds / max(elapsed, 1e-7)))


def median_seconds(sides: list[tuple[Callable, Callable]], repeats: int,
                   repeat_seconds: float = 0.03) -> list[float]:
    """Median seconds per ``step()`` call for each (step, reset) pair in ``sides``.

    Each repeat starts from ``reset()`` (untimed, so both sides follow the same trajectory of
    weights) and times a batch of N calls, N chosen so a batch takes about ``repeat_seconds``
    (long enough that the clock's resolution does not matter). The sides take turns, repeat by
    repeat, so a slow moment of the machine hits both and not just one.
    """
    sizes = [batch_size_for(step, reset, repeat_seconds) for step, reset in sides]
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(repeats):
        for (step, reset), n, per_side in zip(sides, sizes, times):
            per_side.append(timed_batch(step, reset, n) / n)
    return [statistics.median(t) for t in times]


@dataclass
class Result:
    workload: str
    dltutor_us: float
    numpy_us: float
    unit: str                 # "step" or "op"
    target: str               # e.g. "<= 1.5" (a ratio) or "<= 2.5 µs/op"
    met: bool | None          # None: reported only

    @property
    def ratio(self) -> float:
        return self.dltutor_us / self.numpy_us


def median_ms(action: Callable[[], object], repeats: int) -> float:
    action()  # warm up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


# =============================================================================================
# Report
# =============================================================================================
def markdown_table(results: list[Result]) -> str:
    rows = ["| workload | dltutor µs/step | NumPy µs/step | ratio | target | met? |",
            "|---|---:|---:|---:|---|---|"]
    for r in results:
        per = " µs/op" if r.unit == "op" else ""
        met = "—" if r.met is None else ("yes" if r.met else "**NO**")
        rows.append(f"| {r.workload} | {r.dltutor_us:.1f}{per} | {r.numpy_us:.2f}{per} | "
                    f"{r.ratio:.2f} | {r.target} | {met} |")
    return "\n".join(rows)
