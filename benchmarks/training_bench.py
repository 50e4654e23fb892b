"""Full training steps, dltutor against the hand-written NumPy baseline: the MLP and LeNet
workloads (gradients checked first), the chain of adds (engine overhead per op), and
``run_benchmarks``, which times them together with the optimizer rows.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

import dltutor as dt
from dltutor.nn import functional as F
from dltutor import optim

from data_setup import DTYPE, SEED, classification_batch, lenet_params, mlp_params
from numpy_side import (NumpyTrainer, adam_step, momentum_step, numpy_cross_entropy,
                        numpy_lenet_loss_and_grads, numpy_mlp_loss_and_grads, numpy_mse,
                        sgd_step)
from optimizer_bench import optimizer_results
from timing import Result, median_seconds


# =============================================================================================
# The dltutor side: the network written with the engine, gradients by backward()
# =============================================================================================
def dltutor_mlp(params: list, x: dt.Tensor) -> dt.Tensor:
    """Linear layers with ReLU between them; returns the last layer's raw output."""
    h = x
    last = len(params) - 2
    for i in range(0, len(params), 2):
        h = dt.linear(h, params[i], params[i + 1])
        if i < last:
            h = dt.relu(h)
    return h


def dltutor_lenet(params: list, x: dt.Tensor) -> dt.Tensor:
    """conv-relu-pool twice, flatten, then the MLP 256-120-84-10."""
    h = F.max_pool2d(dt.relu(F.conv2d(x, params[0], params[1])), 2)
    h = F.max_pool2d(dt.relu(F.conv2d(h, params[2], params[3])), 2)
    return dltutor_mlp(params[4:], h.flatten(1))


class DltutorTrainer:
    """Parameters as dltutor tensors; one training step = forward, backward(), optimizer step.

    The update is ``dltutor.optim``; the NumPy side uses the hand-written functions of numpy_side.py.
    """

    def __init__(self, init: list, net: Callable, loss: Callable, x: np.ndarray,
                 target: np.ndarray, make_optimizer: Callable[[list], optim.Optimizer]):
        self.init = init
        self.params = [dt.tensor(p, requires_grad=True) for p in init]  # copies p
        self.net, self.loss, self.make_optimizer = net, loss, make_optimizer
        self.x, self.target = dt.tensor(x), dt.tensor(target)
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights and a fresh optimizer (outside the timed region)."""
        for p, p0 in zip(self.params, self.init):
            np.copyto(p.data, p0)
            p.grad = None
        self.optimizer = self.make_optimizer(self.params)

    def forward_backward(self) -> dt.Tensor:
        """Clear the gradients (they accumulate), compute the loss and run backward."""
        self.optimizer.zero_grad()
        loss = self.loss(self.net(self.params, self.x), self.target)
        loss.backward()
        return loss

    def loss_and_grads(self) -> tuple[float, list]:
        """The loss and each parameter's gradient array, for the gradient check."""
        loss = self.forward_backward()
        return float(loss.item()), [p.grad.data for p in self.params]

    def update(self) -> None:
        self.optimizer.step()

    def step(self) -> None:
        self.forward_backward()
        self.update()


# =============================================================================================
# Checking that both sides compute the same thing
# =============================================================================================
def check_same_gradients(name: str, ours: DltutorTrainer, baseline: NumpyTrainer) -> None:
    """Loss and every parameter gradient of one step from the same weights must agree.

    Raises AssertionError naming the workload and parameter if they do not.
    """
    ours.reset()
    baseline.reset()
    loss_dt, grads_dt = ours.loss_and_grads()
    loss_np, grads_np = baseline.loss_and_grads()
    np.testing.assert_allclose(loss_dt, loss_np, rtol=1e-5, err_msg=f"{name}: loss differs")
    for i, (g_dt, g_np) in enumerate(zip(grads_dt, grads_np)):
        assert g_dt.shape == g_np.shape, f"{name}: parameter {i} gradient shapes differ"
        assert g_dt.dtype == np.float32, f"{name}: parameter {i} gradient is {g_dt.dtype}"
        np.testing.assert_allclose(g_dt, g_np, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name}: gradient of parameter {i} differs")
    # The updated weights are not compared: both sides run the same optimizer function, and
    # Adam's first step, lr * g / (|g| + eps), magnifies float32 rounding in tiny gradients.
    ours.reset()
    baseline.reset()


def dtype_warning(name: str, ours: DltutorTrainer) -> str | None:
    """float32 in should give a float32 loss: a float64 loss silently makes the whole backward
    pass run in float64 (about twice the time), which the gradient check cannot see because
    the engine casts the gradients back to float32 at the leaves."""
    with dt.no_grad():
        loss = ours.loss(ours.net(ours.params, ours.x), ours.target)
    if loss.dtype == np.float32:
        return None
    return (f"WARNING: {name}: dltutor's loss is {loss.dtype} for float32 inputs, so its "
            f"backward pass runs in {loss.dtype}.")


# =============================================================================================
# The workloads
# =============================================================================================
@dataclass
class TrainingWorkload:
    name: str
    max_ratio: float | None   # None: just report it
    ours: DltutorTrainer
    baseline: NumpyTrainer


def build_workloads() -> list[TrainingWorkload]:
    """The four training workloads of the issue, with identical weights and data per side."""
    rng = np.random.default_rng(SEED)
    workloads = []

    sizes = [4, 8, 1]
    init = mlp_params(rng, sizes)
    x = rng.standard_normal((2, 4)).astype(DTYPE)
    y = rng.standard_normal((2, 1)).astype(DTYPE)
    workloads.append(TrainingWorkload(
        "MLP 4-8-1, batch 2, MSE, SGD", 3.0,
        DltutorTrainer(init, dltutor_mlp, F.mse_loss, x, y, lambda ps: optim.SGD(ps, lr=0.01)),
        NumpyTrainer(init, partial(numpy_mlp_loss_and_grads, x=x, target=y, loss_fn=numpy_mse),
                     partial(sgd_step, lr=0.01))))

    for sizes, batch, ours, theirs, label, limit in (
            ([64, 128, 128, 10], 32, lambda ps: optim.SGD(ps, lr=0.01, momentum=0.9),
             partial(momentum_step, lr=0.01, momentum=0.9), "SGD momentum 0.9", 1.5),
            ([784, 256, 256, 10], 128, lambda ps: optim.Adam(ps, lr=1e-3),
             partial(adam_step, lr=1e-3), "Adam", 1.15)):
        init = mlp_params(rng, sizes)
        x, labels = classification_batch(rng, (batch, sizes[0]), sizes[-1])
        name = f"MLP {'-'.join(map(str, sizes))}, batch {batch}, cross-entropy, {label}"
        workloads.append(TrainingWorkload(
            name, limit,
            DltutorTrainer(init, dltutor_mlp, F.cross_entropy, x, labels, ours),
            NumpyTrainer(init, partial(numpy_mlp_loss_and_grads, x=x, target=labels,
                                       loss_fn=numpy_cross_entropy), theirs)))

    init = lenet_params(rng)
    x, labels = classification_batch(rng, (32, 1, 28, 28), 10)
    workloads.append(TrainingWorkload(
        "LeNet 1x28x28, batch 32, cross-entropy, SGD", None,
        DltutorTrainer(init, dltutor_lenet, F.cross_entropy, x, labels,
                       lambda ps: optim.SGD(ps, lr=0.01)),
        NumpyTrainer(init, partial(numpy_lenet_loss_and_grads, x=x, labels=labels),
                     partial(sgd_step, lr=0.01))))
    return workloads


CHAIN_LENGTH = 100
CHAIN_TARGET_US = 2.5


def make_chain_steps() -> tuple[Callable, Callable]:
    """A chain of 100 adds on a 1-element tensor, forward + backward (engine overhead per op),
    and the same 100 adds in plain NumPy for context."""
    x = dt.tensor(np.ones(1, DTYPE), requires_grad=True)
    a = np.ones(1, DTYPE)

    def dltutor_chain() -> None:
        x.grad = None
        y = x
        for _ in range(CHAIN_LENGTH):
            y = y + x
        y.backward()

    def numpy_chain() -> None:
        y = a
        for _ in range(CHAIN_LENGTH):
            y = y + a

    dltutor_chain()                 # check it computes what it should: d(101 x)/dx = 101
    assert float(x.grad.data[0]) == CHAIN_LENGTH + 1, "chain of adds: wrong gradient"
    return dltutor_chain, numpy_chain


def run_benchmarks(repeats: int) -> tuple[list[Result], list[str]]:
    """Check and time every workload; returns the results and any warnings."""
    results, warnings = [], []
    for w in build_workloads():
        check_same_gradients(w.name, w.ours, w.baseline)
        warning = dtype_warning(w.name, w.ours)
        if warning:
            warnings.append(warning)
        ours, base = (seconds * 1e6 for seconds in median_seconds(
            [(w.ours.step, w.ours.reset), (w.baseline.step, w.baseline.reset)], repeats))
        if w.max_ratio is None:
            results.append(Result(w.name, ours, base, "step", "report", None))
        else:
            results.append(Result(w.name, ours, base, "step", f"<= {w.max_ratio:g}",
                                  ours / base <= w.max_ratio))
    results += optimizer_results(repeats)
    dltutor_chain, numpy_chain = make_chain_steps()
    ours, base = (seconds * 1e6 / CHAIN_LENGTH for seconds in median_seconds(
        [(dltutor_chain, lambda: None), (numpy_chain, lambda: None)], repeats))
    results.append(Result(f"chain of {CHAIN_LENGTH} adds, 1 element, forward + backward",
                          ours, base, "op", f"<= {CHAIN_TARGET_US:g} µs/op",
                          ours <= CHAIN_TARGET_US))
    return results, warnings
