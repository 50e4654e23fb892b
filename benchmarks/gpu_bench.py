"""dltutor's training step against PyTorch's, side by side, on the GPU or on the CPU.

On a machine with an NVIDIA GPU, CuPy (``pip install -e ".[gpu]"``) and a CUDA build of
PyTorch (``bash benchmarks/gpu_run.sh`` runs it there)::

    python benchmarks/gpu_bench.py                 # every workload: the table for RESULTS.md
    python benchmarks/gpu_bench.py --device cpu    # NumPy against PyTorch, one CPU thread
    python benchmarks/gpu_bench.py --quick         # fewer repeats
    python benchmarks/gpu_bench.py --sizes small   # only the workloads a CPU runs in seconds

Each workload (issue 52's table) is one training step: forward, cross-entropy, backward and
SGD with lr 0.01 and momentum 0.9, in float32. Both networks are built from one list of
layers, PyTorch's parameters are copied from dltutor's starting weights, and both sides read
the same batch. Before anything is timed, three steps on each side must leave the same losses
and parameters (to ``AGREE_RTOL``), so the two columns do the same arithmetic; otherwise the
script stops there, naming the workload and what differs, and exits with status 2. On the GPU
the matrix products are full float32 on both sides: TF32 is switched off in PyTorch, and CuPy
leaves it off unless ``CUPY_TF32=1`` is set.

Timing: warm-up steps first (CuPy compiles its kernels on first use), then each repeat times
one step of each side in turn, waiting after the step until the device has finished it (so the
clock measures the work, not how fast it was queued), and the table gives the median.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import dltutor as dt
from dltutor import backend as B
from dltutor import nn, optim
from dltutor.nn import functional as F

try:
    import torch
except ImportError:           # said by missing_for(), which names what to install
    torch = None

LR, MOMENTUM = 0.01, 0.9
CHECK_STEPS = 3
# The issue saw 7e-5 on the 4096-wide MLP on a GPU (cuBLAS on each side sums in its own order);
# a changed learning rate or a wrong gradient moves some parameter by far more.
AGREE_RTOL = 3e-4
DISAGREE_STATUS = 2


# =============================================================================================
# The workloads: each network written once, as a list of layers
# =============================================================================================
def mlp(*sizes: int) -> list[tuple]:
    """Linear layers with ReLU between them (none after the last: cross-entropy takes scores).

    >>> mlp(2, 16, 2)
    [('linear', 2, 16), ('relu',), ('linear', 16, 2)]
    """
    layers: list[tuple] = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        layers += [("linear", fan_in, fan_out), ("relu",)]
    return layers[:-1]


# training_bench's and torch_lenet's LeNet, on 1x28x28 images
LENET = [("conv", 1, 6, 5), ("relu",), ("pool",), ("conv", 6, 16, 5), ("relu",), ("pool",),
         ("flatten",)] + mlp(16 * 4 * 4, 120, 84, 10)


@dataclass(frozen=True)
class Workload:
    name: str
    layers: list[tuple]
    example_shape: tuple[int, ...]   # one input example's shape
    batch: int
    target: float | None             # issue 52's largest dltutor / PyTorch on a GPU; None: report
    small: bool                      # a CPU runs it in seconds (--sizes small)

    @property
    def classes(self) -> int:
        return self.layers[-1][2]    # the last Linear's fan_out


WORKLOADS = [
    Workload("MLP 2-16-16-2, batch 32 (the lab's size)", mlp(2, 16, 16, 2), (2,), 32, 1.5, True),
    Workload("MLP 784-256-10, batch 64", mlp(784, 256, 10), (784,), 64, 1.5, True),
    Workload("MLP 784-1024-1024-10, batch 512", mlp(784, 1024, 1024, 10), (784,), 512, None, False),
    Workload("MLP 4096-4096-4096-10, batch 1024", mlp(4096, 4096, 4096, 10), (4096,), 1024, 1.2,
             False),
    Workload("LeNet, batch 32", LENET, (1, 28, 28), 32, None, True),
    Workload("LeNet, batch 256", LENET, (1, 28, 28), 256, 2.0, False),
]


def make_batch(workload: Workload) -> tuple[np.ndarray, np.ndarray]:
    """The inputs (float32) and class labels (int64) both sides train on."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((workload.batch, *workload.example_shape)).astype(np.float32)
    return x, rng.integers(0, workload.classes, workload.batch)


# =============================================================================================
# The two sides
# =============================================================================================
@dataclass
class Side:
    """One framework's training step on one workload, with what the check and the clock need."""
    names: list[str]                               # the parameters', in order
    step: Callable[[], Any]                        # one training step; returns the loss, unread
    parameters: Callable[[], list[np.ndarray]]     # their current values, as NumPy copies
    synchronize: Callable[[], None]                # wait until the device finished the step


def dltutor_side(workload: Workload, device: str) -> Side:
    """dltutor's network, seeded, on ``device`` ("cpu" or "cuda"), with SGD and momentum."""
    dt.manual_seed(0)
    make = {"linear": nn.Linear, "conv": nn.Conv2d, "relu": nn.ReLU,
            "pool": lambda: nn.MaxPool2d(2), "flatten": nn.Flatten}
    net = nn.Sequential(*(make[kind](*sizes) for kind, *sizes in workload.layers)).to(device)
    x, labels = (dt.tensor(array).to(device) for array in make_batch(workload))
    opt = optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)

    def step() -> dt.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), labels)
        loss.backward()
        opt.step()
        return loss

    def synchronize() -> None:
        if device != "cpu":
            B.get("cupy").xp.cuda.get_current_stream().synchronize()

    return Side([name for name, _ in net.named_parameters()], step,
                lambda: [B.to_numpy(p.data) for p in net.parameters()], synchronize)


def torch_side(workload: Workload, device: str, start: list[np.ndarray], lr: float) -> Side:
    """The same network in PyTorch on ``device``, its parameters copied from ``start``."""
    make = {"linear": torch.nn.Linear, "conv": torch.nn.Conv2d, "relu": torch.nn.ReLU,
            "pool": lambda: torch.nn.MaxPool2d(2), "flatten": torch.nn.Flatten}
    net = torch.nn.Sequential(*(make[kind](*sizes) for kind, *sizes in workload.layers))
    copy_parameters(net, start)
    net = net.to(device)
    x, labels = (torch.from_numpy(array).to(device) for array in make_batch(workload))
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=MOMENTUM)

    def step() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), labels)
        loss.backward()
        opt.step()
        return loss

    def synchronize() -> None:
        if device != "cpu":
            torch.cuda.synchronize()

    return Side([name for name, _ in net.named_parameters()], step,
                lambda: [p.detach().cpu().numpy() for p in net.parameters()], synchronize)


def copy_parameters(net: "torch.nn.Module", start: list[np.ndarray]) -> None:
    """Overwrite ``net``'s parameters, in order, with ``start`` (shapes must match)."""
    params = list(net.parameters())
    shapes = [tuple(p.shape) for p in params], [a.shape for a in start]
    if shapes[0] != shapes[1]:
        raise ValueError(f"PyTorch's parameter shapes {shapes[0]} are not dltutor's {shapes[1]}")
    with torch.no_grad():
        for param, values in zip(params, start):
            param.copy_(torch.from_numpy(values))


# =============================================================================================
# Checking that both sides compute the same thing
# =============================================================================================
class Disagreement(Exception):
    """The two sides did not compute the same step."""


def relative_difference(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The largest difference, relative to the largest value: float32 noise is about 1e-7.

    >>> round(relative_difference(np.array([1.0, 4.0]), np.array([1.0, 4.004])), 6)
    0.001
    """
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    return float(np.max(np.abs(ours - theirs)) / max(float(np.max(np.abs(ours))), 1e-30))


def check_agreement(workload: Workload, ours: Side, theirs: Side) -> float:
    """Run CHECK_STEPS steps on each side and compare every loss and, after them, every
    parameter; returns the largest relative difference, or raises Disagreement saying which
    workload and which value differ."""
    losses = [[float(side.step().item()) for _ in range(CHECK_STEPS)] for side in (ours, theirs)]
    differences = [(f"the loss of step {i + 1} ({a:.6g} against {b:.6g})",
                    relative_difference(np.array(a), np.array(b)))
                   for i, (a, b) in enumerate(zip(*losses))]
    differences += [(f"parameter {name}", relative_difference(a, b))
                    for name, a, b in zip(ours.names, ours.parameters(), theirs.parameters())]
    what, worst = max(differences, key=lambda item: np.nan_to_num(item[1], nan=np.inf))
    if not worst <= AGREE_RTOL:          # written so that NaN fails too
        raise Disagreement(
            f"{workload.name}: dltutor and PyTorch disagree after {CHECK_STEPS} steps from the "
            f"same weights and batch: {what} differs by {worst:.1e} relative (tolerance "
            f"{AGREE_RTOL:.0e}). The two sides do not compute the same step, so their times "
            "would not compare; nothing was timed.")
    return worst


# =============================================================================================
# Timing
# =============================================================================================
def timed_step_ms(side: Side) -> float:
    """Milliseconds for one step, until the device has finished it."""
    start = time.perf_counter()
    side.step()
    side.synchronize()
    return (time.perf_counter() - start) * 1e3


def median_ms(sides: list[Side], warmup: int, repeats: int) -> list[float]:
    """Median milliseconds per step of each side, the sides taking turns repeat by repeat (so
    a slow moment of the machine hits both, not one)."""
    for side in sides:
        for _ in range(warmup):
            side.step()
        side.synchronize()
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(repeats):
        for side, own in zip(sides, times):
            own.append(timed_step_ms(side))
    return [statistics.median(own) for own in times]


# =============================================================================================
# Running it
# =============================================================================================
def missing_for(device: str) -> str | None:
    """What this machine lacks to run on ``device``, or None when it has everything."""
    if torch is None:
        return ("PyTorch is not installed: the benchmark compares against it. Install it "
                "(pip install torch; a CUDA build for --device cuda).")
    if device == "cpu":
        return None
    try:
        B.get("cupy")
    except B.GPUUnavailableError as exc:
        return str(exc)
    if not torch.cuda.is_available():
        return (f"PyTorch {torch.__version__} sees no CUDA device: install a CUDA build of "
                "PyTorch (https://pytorch.org/get-started/locally/).")
    return None


def prepare(device: str) -> str:
    """Set both frameworks up for a fair float32 comparison; returns the machine line."""
    versions = (f"PyTorch {torch.__version__}; NumPy {np.__version__}; "
                f"Python {platform.python_version()}")
    if device == "cpu":
        torch.set_num_threads(1)             # as one_thread does for NumPy's BLAS
        return f"CPU: {platform.processor() or platform.machine()}, one thread; {versions}"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # CuPy reads CUPY_TF32 (off unless > 0); a run with it on is not a float32 comparison
    tf32 = "TF32 ON in CuPy (CUPY_TF32)" if int(os.environ.get("CUPY_TF32", "0")) > 0 else \
        "TF32 off on both"
    cupy = B.get("cupy").xp
    return (f"GPU: {torch.cuda.get_device_name()}, {tf32}; CuPy {cupy.__version__}; "
            f"{versions}")


def table_row(workload: Workload, device: str, ours_ms: float, theirs_ms: float,
              agreement: float) -> str:
    """One Markdown row; the issue's targets are for a GPU, so a CPU run only reports."""
    ratio = ours_ms / theirs_ms
    if device == "cpu" or workload.target is None:
        target, met = "report", "—"
    else:
        target, met = f"<= {workload.target:g}x", "yes" if ratio <= workload.target else "**NO**"
    return (f"| {workload.name} | {ours_ms:.2f} | {theirs_ms:.2f} | {ratio:.2f}x | {target} "
            f"| {met} | {agreement:.1e} |")


def run(device: str, workloads: list[Workload], warmup: int, repeats: int,
        torch_lr: float = LR) -> None:
    """Check, time and print every workload; raises Disagreement at the first that differs.
    ``torch_lr`` other than LR makes PyTorch train differently (for the check's own test)."""
    print(prepare(device) + "\n")
    print("| workload | dltutor ms/step | PyTorch ms/step | dltutor / PyTorch | target | met? "
          f"| max rel. diff after {CHECK_STEPS} steps |")
    print("| --- | ---: | ---: | ---: | --- | --- | ---: |")
    for workload in workloads:
        ours = dltutor_side(workload, device)
        theirs = torch_side(workload, device, ours.parameters(), torch_lr)
        agreement = check_agreement(workload, ours, theirs)
        ours_ms, theirs_ms = median_ms([ours, theirs], warmup, repeats)
        print(table_row(workload, device, ours_ms, theirs_ms, agreement), flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cuda: dltutor on CuPy against PyTorch CUDA (default); "
                             "cpu: dltutor on NumPy against PyTorch, one thread")
    parser.add_argument("--sizes", choices=["all", "small"], default=None,
                        help="small: only the workloads a CPU runs in seconds "
                             "(default: all on cuda, small on cpu)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, for a check")
    # PyTorch trains with a 10% larger learning rate: the agreement check must stop the run.
    parser.add_argument("--perturb", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = missing_for(args.device)
    if missing:
        print(f"gpu_bench.py --device {args.device} cannot run here: {missing}", file=sys.stderr)
        return 1
    sizes = args.sizes or ("all" if args.device == "cuda" else "small")
    workloads = [w for w in WORKLOADS if w.small or sizes == "all"]
    warmup, repeats = (2, 5) if args.quick else (10, 50)
    try:
        run(args.device, workloads, warmup, repeats, LR * 1.1 if args.perturb else LR)
    except Disagreement as exc:
        print(f"\n{exc}", file=sys.stderr)
        return DISAGREE_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main())
