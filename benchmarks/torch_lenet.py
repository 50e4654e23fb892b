"""LeNet's training step in dltutor against the same step in PyTorch (CPU, one thread).

The kit's environment has no PyTorch; run it with the frameworks environment that
``make test`` creates::

    .venv-frameworks/bin/python benchmarks/torch_lenet.py

Both sides start from the same weights and batch (training_bench's LeNet workload: batch 32,
1x28x28, cross-entropy, SGD lr 0.01), and the first step's losses are compared before any
timing. The sides take turns, repeat by repeat, as in the other benchmarks.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import sys

import torch
import torch.nn.functional as TF

from timing import median_seconds
from training_bench import build_workloads

torch.set_num_threads(1)


def torch_side(init: list, x, labels) -> tuple:
    """(step, reset, loss) for the LeNet of training_bench written in PyTorch."""
    params = [torch.tensor(p, requires_grad=True) for p in init]
    x, labels = torch.tensor(x), torch.tensor(labels).long()
    optimizer = torch.optim.SGD(params, lr=0.01)

    def loss() -> torch.Tensor:
        h = TF.max_pool2d(TF.relu(TF.conv2d(x, params[0], params[1])), 2)
        h = TF.max_pool2d(TF.relu(TF.conv2d(h, params[2], params[3])), 2).flatten(1)
        last = len(params) - 2
        for i in range(4, len(params), 2):
            h = TF.linear(h, params[i], params[i + 1])
            h = TF.relu(h) if i < last else h
        return TF.cross_entropy(h, labels)

    def step() -> None:
        optimizer.zero_grad()
        loss().backward()
        optimizer.step()

    def reset() -> None:
        with torch.no_grad():
            for p, p0 in zip(params, init):
                p.copy_(torch.from_numpy(p0))

    return step, reset, loss


def main(repeats: int = 15) -> int:
    lenet = next(w for w in build_workloads() if w.name.startswith("LeNet"))
    ours = lenet.ours
    step, reset, loss = torch_side(ours.init, ours.x.data, ours.target.data)
    ours_loss, _ = ours.loss_and_grads()
    theirs = float(loss().detach())
    if abs(ours_loss - theirs) > 1e-4 * max(1.0, abs(theirs)):
        print(f"LeNet: dltutor's loss {ours_loss} differs from PyTorch's {theirs}")
        return 1
    dltutor_s, torch_s = median_seconds([(ours.step, ours.reset), (step, reset)], repeats)
    print(f"| {lenet.name} | {dltutor_s * 1e3:.2f} ms | {torch_s * 1e3:.2f} ms "
          f"| {dltutor_s / torch_s:.2f} | <= 1.2 |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
