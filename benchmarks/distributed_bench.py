"""What does data parallelism cost? A DistributedDataParallel training step, and its all-reduce
alone, for 1, 2 and 4 processes (issue 53).

For each model (an MLP 784-256-256-10 and LeNet, 64 samples per process, float32, SGD with
momentum) and each number of processes N, ``mpiexec -n N`` runs this file as a worker. Each
worker times

* ``step``: one whole DDP step (zero_grad, forward, cross-entropy, backward, whose last
  gradient starts the all-reduce of every gradient, and ``opt.step()``);
* ``all-reduce``: the same all-reduce alone: every gradient concatenated into one array, summed
  over the processes (MPI ``Allreduce``) and divided by N, as DistributedDataParallel does.

A repeat starts at a barrier and times a batch of calls; the repeat's time is that of the
slowest process (an all-reduce of the max: a step is as slow as its slowest process), and the
table shows the median over repeats. With N processes each step trains N x 64 samples, so the
"samples/s" column shows what N processes gain; the "all-reduce share" column what they pay.

Run from the repository root (``mpiexec`` is the one beside the environment's python)::

    python benchmarks/distributed_bench.py                       # 1, 2, 4 processes
    python benchmarks/distributed_bench.py --processes 1 2 --repeats 3 --tiny   # a smoke run

It prints a Markdown table. No number here is asserted anywhere: a shared machine's timings
vary, and 4 processes on 2 cores take turns on them.
"""
# One BLAS thread per process, set before NumPy is imported: N processes share the cores.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

BATCH = 64                   # samples per process and step
TINY_BATCH = 4


# =============================================================================================
# The worker: one process of the group
# =============================================================================================
def mlp(tiny: bool) -> Any:
    from dltutor import nn
    sizes = (16, 8, 8, 4) if tiny else (784, 256, 256, 10)
    layers: list = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1]), (sizes[0],), sizes[-1]


def lenet(tiny: bool) -> Any:
    from dltutor import nn
    side = 12 if tiny else 28
    flat = 16 * ((side // 2 - 4) // 2) ** 2
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(flat, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10)), (1, side, side), 10


MODELS: dict[str, Callable] = {"MLP 784-256-256-10": mlp, "LeNet 1x28x28": lenet}


def slowest(seconds: float) -> float:
    """The largest of every process's ``seconds`` (every process calls this)."""
    import dltutor.distributed as dist
    value = np.array([seconds])
    dist.all_reduce(value, dist.ReduceOp.MAX)
    return float(value[0])


def timed(call: Callable, calls: int, repeats: int) -> float:
    """Median seconds per call over ``repeats`` batches of ``calls`` calls, each batch timed
    from a barrier and counted at the slowest process."""
    import dltutor.distributed as dist
    call()                                          # warm up (and make the gradients)
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append(slowest(time.perf_counter() - start) / calls)
    return statistics.median(times)


def measure(name: str, tiny: bool, repeats: int, calls: int) -> dict[str, Any]:
    """Time one model's DDP step and its all-reduce alone in this process."""
    import dltutor as dt
    import dltutor.distributed as dist
    from dltutor import nn, optim
    dt.manual_seed(0)
    module, shape, classes = MODELS[name](tiny)
    ddp = dist.DistributedDataParallel(module)
    opt = optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    batch = TINY_BATCH if tiny else BATCH
    rng = np.random.default_rng(dist.get_rank())
    x = dt.tensor(rng.standard_normal((batch, *shape)).astype(np.float32))
    y = dt.tensor(rng.integers(0, classes, size=batch))

    def step() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()

    def all_reduce_alone() -> None:                 # what DDP does after the last gradient
        flat = np.concatenate([p.grad.data.ravel() for p in ddp.parameters()])
        dist.all_reduce(flat)
        flat /= dist.get_world_size()

    step_s = timed(step, calls, repeats)
    reduce_s = timed(all_reduce_alone, calls, repeats)
    floats = sum(p.data.size for p in ddp.parameters())
    return {"model": name + (" (tiny)" if tiny else ""), "processes": dist.get_world_size(), "step_ms": step_s * 1e3,
            "all_reduce_ms": reduce_s * 1e3, "gradient_mb": floats * 4 / 2**20,
            "samples_per_s": dist.get_world_size() * batch / step_s}


def worker(args: argparse.Namespace) -> None:
    import dltutor.distributed as dist
    dist.init_process_group("mpi")
    rows = [measure(name, args.tiny, args.repeats, args.calls) for name in MODELS]
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(rows), flush=True)
    dist.destroy_process_group()


# =============================================================================================
# The launcher: one mpiexec run per number of processes, then the table
# =============================================================================================
def run_processes(n: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Start ``n`` workers with mpiexec and read rank 0's results."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    command = [str(mpiexec), "-n", str(n), sys.executable, str(Path(__file__).resolve()),
               "--worker", "--repeats", str(args.repeats), "--calls", str(args.calls)]
    if args.tiny:
        command.append("--tiny")
    run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if run.returncode != 0:
        raise SystemExit(f"mpiexec -n {n} failed:\n{run.stdout}{run.stderr}")
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table, one row per model and number of processes."""
    lines = ["| model | processes | step ms | all-reduce ms | all-reduce share | gradients MB "
             "| samples/s |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(rows, key=lambda r: (r["model"], r["processes"])):
        share = r["all_reduce_ms"] / r["step_ms"]
        lines.append(f"| {r['model']} | {r['processes']} | {r['step_ms']:.2f} | "
                     f"{r['all_reduce_ms']:.3f} | {share:.0%} | {r['gradient_mb']:.2f} | "
                     f"{r['samples_per_s']:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeats", type=int, default=15, help="timed batches (the median)")
    parser.add_argument("--calls", type=int, default=10, help="calls in each timed batch")
    parser.add_argument("--tiny", action="store_true", help="tiny models: a smoke run")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mpiexec run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    rows = [row for n in args.processes for row in run_processes(n, args)]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
