"""The same training step on the NumPy backend (CPU) and the CuPy backend (GPU).

Run on a machine with an NVIDIA GPU and CuPy installed (``pip install -e ".[gpu]"``)::

    python benchmarks/gpu_bench.py            # prints a Markdown table for RESULTS.md

Each workload is one full step of an MLP (forward, cross-entropy, backward, SGD with momentum)
built by dltutor itself on each backend from the same float32 starting point. Before timing,
the script checks that both backends give the same loss and the same updated parameters
(to float32 noise: cuBLAS and OpenBLAS round differently), so the two columns do the same
arithmetic. Timings on the GPU synchronise the device after each step.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dltutor as dt  # noqa: E402
from dltutor import backend as B  # noqa: E402
from dltutor import nn, optim  # noqa: E402

WORKLOADS = [  # (name, batch, layer sizes)
    ("MLP 784-256-10, batch 64", 64, [784, 256, 10]),
    ("MLP 784-1024-1024-10, batch 512", 512, [784, 1024, 1024, 10]),
    ("MLP 4096-4096-4096-10, batch 1024", 1024, [4096, 4096, 4096, 10]),
]


def make_net(sizes: list[int]) -> nn.Sequential:
    """An MLP with ReLU between Linear layers, seeded so both backends start equal."""
    dt.manual_seed(0)
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def step_function(sizes: list[int], batch: int, device: str):
    """One training step on ``device`` and a way to read its parameters back as NumPy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    net = make_net(sizes).to(device)
    inputs, labels = dt.tensor(x).to(device), dt.tensor(y).to(device)
    opt = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step() -> float:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(inputs), labels)
        loss.backward()
        opt.step()
        return loss

    def params() -> list[np.ndarray]:
        return [B.to_numpy(p.data) for p in net.parameters()]

    return step, params


def synchronize(device: str) -> None:
    if device != "cpu":
        import cupy

        cupy.cuda.Device().synchronize()


def median_ms(step, device: str, repeats: int) -> float:
    for _ in range(3):                      # warm up: CuPy compiles its kernels on first use
        step()
    synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        synchronize(device)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def same_result(sizes: list[int], batch: int) -> float:
    """Three steps on each backend; returns the largest relative parameter difference."""
    results = []
    for device in ("cpu", "cuda"):
        step, params = step_function(sizes, batch, device)
        for _ in range(3):
            step()
        results.append(params())
    worst = 0.0
    for a, b in zip(*results):
        worst = max(worst, float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-12)))
    assert worst < 1e-4, f"CPU and GPU disagree by {worst:.2e} relative after 3 steps"
    return worst


def main() -> int:
    if not B.gpu_available():
        print("No GPU/CuPy here: nothing to measure.")
        return 1
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"GPU: {name}; CuPy {cupy.__version__}; NumPy {np.__version__}\n")
    print("| workload | NumPy (CPU) ms/step | CuPy (GPU) ms/step | GPU speed-up | max rel. diff after 3 steps |")
    print("| --- | --- | --- | --- | --- |")
    for label, batch, sizes in WORKLOADS:
        diff = same_result(sizes, batch)
        cpu = median_ms(step_function(sizes, batch, "cpu")[0], "cpu", 10)
        gpu = median_ms(step_function(sizes, batch, "cuda")[0], "cuda", 30)
        print(f"| {label} | {cpu:.2f} | {gpu:.2f} | {cpu / gpu:.1f}x | {diff:.1e} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
