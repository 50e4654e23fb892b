"""What dltutor costs besides the step itself: the Recorder's overhead, checkpoints
(state_dict, load_state_dict, a safetensors round trip), the DataLoader (bench_data.py),
memory over 1000 steps (nothing may outlive a step) and, for --profile, where the time goes.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import cProfile
import gc
import os
import pstats
import random
import statistics
import sys
import tempfile
import tracemalloc
from pathlib import Path

import dltutor as dt

from data_setup import SEED
from timing import batch_size_for, median_ms, timed_batch
from training_bench import CHAIN_LENGTH, DltutorTrainer, build_workloads, make_chain_steps


# =============================================================================================
# Recorder overhead: per-parameter traces every step (target <= 15% of the step)
# =============================================================================================
class _Named:
    """Gives the trainer's raw tensors names, as a model would, for the Recorder."""

    def __init__(self, params: list):
        self.params = params

    def named_parameters(self) -> list:
        return [(f"p{i}", p) for i, p in enumerate(self.params)]


def recorder_lines(repeats: int) -> list[str]:
    """Step time of the 64-128-128-10 MLP with and without a Recorder, in pairs.

    The overhead is a ratio of two close numbers on a machine whose speed drifts, so each
    repeat times a batch of steps with and a batch without a Recorder, in random order, and
    the overhead is the median of the per-pair ratios (a drift hits both halves of a pair).
    """
    from dltutor.trace import Recorder

    trainer = build_workloads()[1].ours
    for _ in range(200):
        trainer.step()
    n = max(1, batch_size_for(trainer.step, lambda: None, 0.01))
    order = random.Random(SEED)
    plain, recorded = [], []
    for _ in range(6 * repeats):        # short batches, many pairs
        pair = {}
        for side in order.sample(["plain", "recorded"], 2):
            recorder = (Recorder(_Named(trainer.params), trainer.optimizer, capacity=500)
                        if side == "recorded" else None)
            pair[side] = timed_batch(trainer.step, lambda: None, n) / n
            if recorder is not None:
                recorder.detach()
        plain.append(pair["plain"])
        recorded.append(pair["recorded"])
    base, traced = statistics.median(plain) * 1e6, statistics.median(recorded) * 1e6
    overhead = statistics.median(r / p for r, p in zip(recorded, plain)) - 1

    # Memory after the ring buffer is full must not grow.
    recorder = Recorder(_Named(trainer.params), trainer.optimizer, capacity=200)
    tracemalloc.start()
    for _ in range(300):
        trainer.step()
    full = tracemalloc.get_traced_memory()[0]
    for _ in range(600):
        trainer.step()
    later = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    recorder.detach()
    met = "yes" if overhead <= 0.15 else "**NO**"
    return ["Recorder on the 64-128-128-10 MLP step (per-parameter traces every step):", "",
            "| step without | step with Recorder | overhead (median of pair ratios) | target "
            "| met? |",
            "|---:|---:|---:|---|---|",
            f"| {base:.1f} µs | {traced:.1f} µs | {100 * overhead:.1f}% | <= 15% | {met} |", "",
            f"- memory after the ring buffer filled (capacity 200): {full / 1024:.1f} KiB at "
            f"step 300, {later / 1024:.1f} KiB at step 900 "
            f"(growth {(later - full) / 1024:+.1f} KiB)"]


# =============================================================================================
# Checkpoints: state_dict, load_state_dict and a safetensors round trip (reported)
# =============================================================================================
def checkpoint_lines(repeats: int) -> list[str]:
    """Time saving and restoring the 784-256-256-10 MLP (about 270,000 parameters)."""
    from dltutor import nn

    dt.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    state = model.state_dict()
    size_mb = sum(t.data.nbytes for t in state.values()) / 1e6
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mlp.safetensors")

        def round_trip() -> None:
            dt.save(model.state_dict(), path)
            model.load_state_dict(dt.load(path))

        rows = [
            ("state_dict()", median_ms(model.state_dict, repeats)),
            ("load_state_dict(state)", median_ms(lambda: model.load_state_dict(state), repeats)),
            ("dt.save + dt.load + load_state_dict", median_ms(round_trip, repeats)),
        ]
    lines = [f"Checkpoint of the 784-256-256-10 MLP ({size_mb:.2f} MB of float32), median ms:",
             "", "| operation | ms |", "|---|---:|"]
    lines += [f"| {name} | {ms:.3f} |" for name, ms in rows]
    return lines


def dataloader_lines(quick: bool) -> list[str]:
    """The DataLoader rows: one epoch over 60,000 x 784 float32 rows (see bench_data.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_data

    return [f"DataLoader epoch over {bench_data.ROWS:,} x {bench_data.FEATURES} float32 rows, "
            f"batch {bench_data.BATCH}, shuffled; the consumer spends about 1 ms per batch:",
            "", bench_data.markdown(bench_data.run(quick=quick))]


# =============================================================================================
# Memory: nothing may outlive a training step
# =============================================================================================
def live_count(cls: type) -> int:
    """How many instances of ``cls`` are alive (after a collection, so only real references)."""
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, cls))


def _memory_reading(steps_done: int) -> dict:
    """tracemalloc's current size and live graph objects, after a collection."""
    unreachable = gc.collect()  # > 0 would mean the graph relies on the cycle collector
    current, _ = tracemalloc.get_traced_memory()
    return {"step": steps_done, "current": current, "unreachable": unreachable,
            "tensors": live_count(dt.Tensor), "functions": live_count(dt.Function)}


def _window_peak(trainer: DltutorTrainer, steps: int) -> int:
    """Peak traced memory over the next ``steps`` steps (one step's graph at its largest)."""
    tracemalloc.reset_peak()
    for _ in range(steps):
        trainer.step()
    return tracemalloc.get_traced_memory()[1]


def memory_check(steps: int = 1000, settle: int = 100, window: int = 100) -> list[str]:
    """Train the 64-128-128-10 MLP for ``steps`` steps under tracemalloc.

    Compares step ``settle`` (optimizer state allocated, caches warm) with the last step, and
    the peak of the ``window`` steps after ``settle`` with the peak of the last ``window``.
    A graph kept alive between steps would show up as growth in all of them.
    """
    trainer = build_workloads()[1].ours
    trainer.reset()
    tracemalloc.start()
    for _ in range(settle):
        trainer.step()
    early = _memory_reading(settle)
    peak_early = _window_peak(trainer, window)
    for _ in range(steps - settle - 2 * window):
        trainer.step()
    peak_late = _window_peak(trainer, window)
    late = _memory_reading(steps)
    tracemalloc.stop()

    grew = late["current"] - early["current"]
    flat = (grew <= 16 * 1024 and peak_late - peak_early <= 16 * 1024
            and late["tensors"] <= early["tensors"] and late["functions"] <= early["functions"])
    kib = 1 / 1024
    return [
        f"Memory over {steps} steps of the 64-128-128-10 MLP (step {settle} -> step {steps}):",
        f"- tracemalloc current: {early['current'] * kib:.1f} KiB -> {late['current'] * kib:.1f} "
        f"KiB (growth {grew * kib:+.1f} KiB)",
        f"- tracemalloc peak: steps {settle + 1}-{settle + window} {peak_early * kib:.1f} KiB, "
        f"steps {steps - window + 1}-{steps} {peak_late * kib:.1f} KiB "
        f"(growth {(peak_late - peak_early) * kib:+.1f} KiB)",
        f"- live dltutor Tensors: {early['tensors']} -> {late['tensors']}; live Functions (graph "
        f"nodes): {early['functions']} -> {late['functions']}; objects freed only by the cycle "
        f"collector: {late['unreachable']}",
        f"- memory flat: {'yes' if flat else 'NO (something outlives the training step)'}",
    ]


# =============================================================================================
# Profile (--profile): where dltutor's time goes on the overhead-bound workloads
# =============================================================================================
def profile_lines(top: int = 10) -> list[str]:
    small_mlp = build_workloads()[0].ours
    dltutor_chain, _ = make_chain_steps()
    lines = []
    for title, step, calls in (("MLP 4-8-1 training step", small_mlp.step, 3000),
                               (f"chain of {CHAIN_LENGTH} adds", dltutor_chain, 300)):
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            step()
        profiler.disable()
        stats = pstats.Stats(profiler)
        rows = []
        # pstats: (file, line, function) -> (primitive calls, calls, tottime, cumtime, callers)
        for (filename, line, func), (_, nc, tottime, cumtime, _) in stats.stats.items():
            if f"dltutor{os.sep}" in filename:
                short = filename[filename.rindex(f"dltutor{os.sep}"):]
                rows.append((tottime, nc, cumtime, f"{short}:{line}({func})"))
        rows.sort(reverse=True)
        lines.append(f"Top {top} dltutor functions by tottime, {title} x{calls} "
                     "(µs per step; calls per step):")
        for tottime, nc, cumtime, where in rows[:top]:
            lines.append(f"  {tottime / calls * 1e6:8.2f} tottime {cumtime / calls * 1e6:8.2f} "
                         f"cumtime {nc / calls:6.1f} calls  {where}")
    return lines
