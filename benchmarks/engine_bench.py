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
do the same arithmetic. The optimizer is the SAME function on both sides, so the ratio
dltutor / NumPy measures the engine alone: building the graph, walking it backward and the
Python work around each op.

Everything runs on one thread: with several BLAS threads the timings of small matrices are
noisy and say more about thread start-up than about the engine.
"""
# Pin BLAS to one thread. This has to happen before NumPy is imported (anywhere), because
# the BLAS library reads these variables once, when it is loaded.
import math
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import random  # noqa: E402
import cProfile  # noqa: E402
import gc  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

# Let "python benchmarks/engine_bench.py" find the package without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dltutor as dt  # noqa: E402
from dltutor.nn import functional as F  # noqa: E402
from dltutor import optim  # noqa: E402

SEED = 0
DTYPE = np.float32


# =============================================================================================
# Optimizers (shared by both sides)
#
# Each updates a list of NumPy arrays IN PLACE from a list of gradient arrays, and keeps what it
# needs between steps (momentum buffers, scratch space) in the dict ``state``. They are called
# with ``p.data`` for dltutor and with plain arrays for the baseline, so both sides pay exactly
# the same for the update. When dltutor gets its own ``dltutor.optim``, only
# ``DltutorTrainer.update`` below needs to change.
# =============================================================================================
def _scratch(params: list, state: dict) -> list:
    """One reusable buffer per parameter, so updates allocate nothing after the first step."""
    if "scratch" not in state:
        state["scratch"] = [np.empty_like(p) for p in params]
    return state["scratch"]


def sgd_step(params: list, grads: list, state: dict, lr: float) -> None:
    """Plain SGD: ``p -= lr * g``."""
    for p, g, s in zip(params, grads, _scratch(params, state)):
        np.multiply(g, lr, out=s)
        p -= s


def momentum_step(params: list, grads: list, state: dict, lr: float, momentum: float = 0.9) -> None:
    """SGD with momentum, PyTorch's rule: ``buf = g`` on the first step, then
    ``buf = momentum * buf + g``; ``p -= lr * buf``."""
    bufs = state.get("momentum")
    if bufs is None:
        state["momentum"] = bufs = [g.copy() for g in grads]
    else:
        for buf, g in zip(bufs, grads):
            buf *= momentum
            buf += g
    for p, buf, s in zip(params, bufs, _scratch(params, state)):
        np.multiply(buf, lr, out=s)
        p -= s


def adam_step(params: list, grads: list, state: dict, lr: float = 1e-3, beta1: float = 0.9,
              beta2: float = 0.999, eps: float = 1e-8) -> None:
    """Adam, PyTorch's rule: bias-corrected moments, ``eps`` added after the square root:
    ``p -= lr * m_hat / (sqrt(v_hat) + eps)``."""
    if "m" not in state:
        state["m"] = [np.zeros_like(p) for p in params]
        state["v"] = [np.zeros_like(p) for p in params]
        state["t"] = 0
    state["t"] += 1
    t = state["t"]
    correction1 = 1 - beta1 ** t
    root_correction2 = (1 - beta2 ** t) ** 0.5
    for p, g, m, v, s in zip(params, grads, state["m"], state["v"], _scratch(params, state)):
        m *= beta1                              # m = beta1 * m + (1 - beta1) * g
        np.multiply(g, 1 - beta1, out=s)
        m += s
        v *= beta2                              # v = beta2 * v + (1 - beta2) * g * g
        np.multiply(g, g, out=s)
        s *= 1 - beta2
        v += s
        np.sqrt(v, out=s)                       # s = sqrt(v_hat) + eps
        s *= 1 / root_correction2
        s += eps
        np.divide(m, s, out=s)                  # s = m / (sqrt(v_hat) + eps)
        s *= lr / correction1                   # ... times lr / (1 - beta1^t) turns m into m_hat
        p -= s


# =============================================================================================
# Initial weights and data (identical for both sides)
# =============================================================================================
def uniform_init(rng: np.random.Generator, shape: tuple, fan_in: int) -> np.ndarray:
    """PyTorch's default layer init: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(DTYPE)


def mlp_params(rng: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] for the layer sizes ``sizes``; W is (out, in) as in PyTorch."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(uniform_init(rng, (fan_out, fan_in), fan_in))
        params.append(uniform_init(rng, (fan_out,), fan_in))
    return params


def lenet_params(rng: np.random.Generator) -> list[np.ndarray]:
    """conv 1->6 5x5, conv 6->16 5x5, then fully connected 256 -> 120 -> 84 -> 10."""
    params = []
    for out_ch, in_ch in ((6, 1), (16, 6)):
        fan_in = in_ch * 5 * 5
        params.append(uniform_init(rng, (out_ch, in_ch, 5, 5), fan_in))
        params.append(uniform_init(rng, (out_ch,), fan_in))
    return params + mlp_params(rng, [16 * 4 * 4, 120, 84, 10])


def classification_batch(rng: np.random.Generator, shape: tuple, classes: int) -> tuple:
    """Random float32 inputs and random int64 labels."""
    x = rng.standard_normal(shape).astype(DTYPE)
    labels = rng.integers(0, classes, size=shape[0], dtype=np.int64)
    return x, labels


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

    The update is ``dltutor.optim``; the NumPy side uses the hand-written functions above.
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
# The NumPy side: the same network with its backward pass written out by hand
# =============================================================================================
def numpy_mse(pred: np.ndarray, target: np.ndarray) -> tuple:
    """Mean squared error and its gradient ``2 * (pred - target) / n``."""
    diff = pred - target
    loss = np.vdot(diff, diff) / diff.size
    return loss, diff * (2 / diff.size)


def numpy_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple:
    """Softmax cross-entropy (mean over the batch) and its gradient ``(softmax - onehot) / n``.

    Subtracting each row's maximum before ``exp`` (the log-sum-exp trick) keeps it from
    overflowing; the result is the same.
    """
    n = logits.shape[0]
    rows = np.arange(n)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exps = np.exp(shifted)
    sums = exps.sum(axis=1, keepdims=True)
    loss = (np.log(sums).sum() - shifted[rows, labels].sum()) / n
    exps /= sums                      # exps is now the softmax
    exps[rows, labels] -= 1
    exps *= 1 / n
    return loss, exps


def numpy_mlp_forward(params: list, x: np.ndarray) -> tuple:
    """Forward pass; also returns each layer's input, which the backward pass needs."""
    inputs = []
    h = x
    last = len(params) - 2
    for i in range(0, len(params), 2):
        inputs.append(h)
        h = h @ params[i].T
        h += params[i + 1]
        if i < last:
            np.maximum(h, 0, out=h)   # ReLU in place: nothing else needs the pre-activation
    return h, inputs


def numpy_mlp_backward(params: list, inputs: list, g: np.ndarray, need_input_grad: bool) -> tuple:
    """Backward pass from the gradient ``g`` of the output; returns ([gW1, gb1, ...], dx)."""
    grads = [None] * len(params)
    for i in range(len(params) - 2, -1, -2):
        h = inputs[i // 2]
        grads[i] = g.T @ h
        grads[i + 1] = g.sum(axis=0)
        if i > 0 or need_input_grad:
            g = g @ params[i]
            if i > 0:
                g *= h > 0            # ReLU: the gradient passes only where the unit was active
    # The first layer's input gradient is only computed when something before it needs it.
    return grads, (g if need_input_grad else None)


def numpy_mlp_loss_and_grads(params: list, x: np.ndarray, target: np.ndarray,
                             loss_fn: Callable) -> tuple:
    out, inputs = numpy_mlp_forward(params, x)
    loss, g = loss_fn(out, target)
    grads, _ = numpy_mlp_backward(params, inputs, g, need_input_grad=False)
    return loss, grads


# -- convolution and pooling in (channels, batch, height, width) layout -----------------------
# Keeping the channels first lets each convolution be ONE matrix product over the whole batch
# (weights (O, C*K*K) @ columns (C*K*K, N*OH*OW)), which is the fastest plain-NumPy layout.
def im2col(x: np.ndarray, k: int) -> np.ndarray:
    """Unfold x (C, N, H, W) into columns (C*k*k, N*OH*OW), looping over kernel offsets only."""
    c, n, h, w = x.shape
    oh, ow = h - k + 1, w - k + 1
    cols = np.empty((c, k, k, n, oh, ow), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, i, j] = x[:, :, i:i + oh, j:j + ow]
    return cols.reshape(c * k * k, n * oh * ow)


def conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple:
    """Valid, stride-1 convolution of x (C, N, H, W) with w (O, C, k, k); returns (out, cols)."""
    c, n, h, wd = x.shape
    o, _, k, _ = w.shape
    cols = im2col(x, k)
    out = w.reshape(o, -1) @ cols
    out += b[:, None]
    return out.reshape(o, n, h - k + 1, wd - k + 1), cols


def conv_backward(g: np.ndarray, x_shape: tuple, w: np.ndarray, cols: np.ndarray,
                  need_input_grad: bool) -> tuple:
    """Gradients (gx or None, gw, gb) of a convolution from the output gradient g (O, N, OH, OW)."""
    c, n, h, wd = x_shape
    o, _, k, _ = w.shape
    oh, ow = h - k + 1, wd - k + 1
    g2 = g.reshape(o, -1)
    gw = (g2 @ cols.T).reshape(w.shape)
    gb = g2.sum(axis=1)
    gx = None
    if need_input_grad:
        gcols = (w.reshape(o, -1).T @ g2).reshape(c, k, k, n, oh, ow)
        gx = np.zeros(x_shape, dtype=g.dtype)
        for i in range(k):             # fold the columns back: the reverse of im2col
            for j in range(k):
                gx[:, :, i:i + oh, j:j + ow] += gcols[:, i, j]
    return gx, gw, gb


POOL_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))  # row-major order inside each 2x2 window


def maxpool2_forward(x: np.ndarray) -> np.ndarray:
    """2x2 max-pool (stride 2) of x (C, N, H, W): the elementwise maximum of the four strided
    views, one per window position (much faster than reducing over a window axis)."""
    views = [x[:, :, i::2, j::2] for i, j in POOL_OFFSETS]
    return np.maximum(np.maximum(views[0], views[1]), np.maximum(views[2], views[3]))


def maxpool2_backward(g: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Send each output gradient to the input pixel that won its window.

    On a tie the first maximum in row-major order wins, as in PyTorch (after a ReLU, ties
    at 0 are common): ``unclaimed`` marks the windows no earlier position has won yet.
    """
    gx = np.zeros_like(x)
    unclaimed = np.ones(out.shape, dtype=bool)
    for i, j in POOL_OFFSETS:
        wins = x[:, :, i::2, j::2] == out
        wins &= unclaimed
        unclaimed ^= wins
        np.multiply(g, wins, out=gx[:, :, i::2, j::2])
    return gx


def numpy_lenet_loss_and_grads(params: list, x: np.ndarray, labels: np.ndarray) -> tuple:
    """LeNet forward, softmax cross-entropy and the whole backward pass by hand."""
    x_cn = x.transpose(1, 0, 2, 3)                               # (N, C, H, W) -> (C, N, H, W)
    a1, cols1 = conv_forward(x_cn, params[0], params[1])
    np.maximum(a1, 0, out=a1)
    p1 = maxpool2_forward(a1)
    a2, cols2 = conv_forward(p1, params[2], params[3])
    np.maximum(a2, 0, out=a2)
    p2 = maxpool2_forward(a2)
    flat = p2.transpose(1, 0, 2, 3).reshape(x.shape[0], -1)      # the order of NCHW flatten(1)
    logits, inputs = numpy_mlp_forward(params[4:], flat)
    loss, g = numpy_cross_entropy(logits, labels)

    fc_grads, g = numpy_mlp_backward(params[4:], inputs, g, need_input_grad=True)
    g = g.reshape(p2.shape[1], p2.shape[0], *p2.shape[2:]).transpose(1, 0, 2, 3)
    g = maxpool2_backward(g, a2, p2)
    g *= a2 > 0
    g, gw2, gb2 = conv_backward(g, p1.shape, params[2], cols2, need_input_grad=True)
    g = maxpool2_backward(g, a1, p1)
    g *= a1 > 0
    _, gw1, gb1 = conv_backward(g, x_cn.shape, params[0], cols1, need_input_grad=False)
    return loss, [gw1, gb1, gw2, gb2] + fc_grads


class NumpyTrainer:
    """Parameters as plain arrays; one training step = hand-written forward/backward, update."""

    def __init__(self, init: list, loss_and_grads: Callable, optimizer: Callable):
        self.init = init
        self.params = [p.copy() for p in init]
        self._loss_and_grads, self.optimizer = loss_and_grads, optimizer
        self.reset()

    def reset(self) -> None:
        for p, p0 in zip(self.params, self.init):
            np.copyto(p, p0)
        self.state: dict = {}

    def loss_and_grads(self) -> tuple[float, list]:
        loss, grads = self._loss_and_grads(self.params)
        return float(loss), grads

    def step(self) -> None:
        _, grads = self._loss_and_grads(self.params)
        self.optimizer(self.params, grads, self.state)


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
# Timing
# =============================================================================================
def _timed_batch(step: Callable, reset: Callable, n: int) -> float:
    """Seconds for ``n`` calls of ``step()`` after an untimed ``reset()``."""
    reset()
    start = time.perf_counter()
    for _ in range(n):
        step()
    return time.perf_counter() - start


def _batch_size(step: Callable, reset: Callable, repeat_seconds: float) -> int:
    """How many calls make a batch of about ``repeat_seconds`` (after a short warm-up)."""
    warm_until = time.perf_counter() + 0.05      # warm caches and NumPy's code paths
    reset()
    while time.perf_counter() < warm_until:
        step()
    n = 1
    while True:
        elapsed = _timed_batch(step, reset, n)
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
    sizes = [_batch_size(step, reset, repeat_seconds) for step, reset in sides]
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(repeats):
        for (step, reset), n, per_side in zip(sides, sizes, times):
            per_side.append(_timed_batch(step, reset, n) / n)
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


# =============================================================================================
# Optimizer steps with every per-parameter feature on, against the same arithmetic in NumPy
# =============================================================================================
OPT_SIZES = [784, 256, 256, 10]
OPT_GROUP_LRS = [1e-3, 5e-4, 2e-3]           # one group per layer
OPT_LR_MULTS = [1.0, 0.5, 1.0, 1.0, 2.0, 1.0]  # per parameter: w0 b0 w1 b1 w2 b2
OPT_L2 = 1e-4                                  # a parameter L2Decay on every weight
OPT_CLIP = 1.0                                 # global-norm clipping


def numpy_optimizer_step(params: list, grads: list, state: dict, kind: str) -> None:
    """The same arithmetic as the dltutor optimizer below, written out: copy the gradients,
    clip them by their global norm, add L2 on the weights, per-parameter lr, then update."""
    if "work" not in state:
        state["work"] = [np.empty_like(p) for p in params]
        state["tmp"] = [np.empty_like(p) for p in params]
        state["t"] = 0
        state["m"] = [np.zeros_like(p) for p in params]
        state["v"] = [np.zeros_like(p) for p in params]
        state["buf"] = [None] * len(params)
    state["t"] += 1
    t = state["t"]
    work, tmp = state["work"], state["tmp"]
    for w, g in zip(work, grads):
        np.copyto(w, g)
    total = math.sqrt(sum(float(np.dot(w.ravel(), w.ravel())) for w in work))
    scale = OPT_CLIP / max(total, OPT_CLIP)
    for i, (p, g, s) in enumerate(zip(params, work, tmp)):
        if scale != 1.0:
            g *= scale
        if p.ndim == 2:                                   # L2 on weights
            np.multiply(p, OPT_L2, out=s)
            g += s
        lr = OPT_GROUP_LRS[i // 2] * OPT_LR_MULTS[i]
        if kind == "adam":
            m, v = state["m"][i], state["v"][i]
            m *= 0.9
            np.multiply(g, 0.1, out=s)
            m += s
            v *= 0.999
            np.multiply(g, g, out=s)
            s *= 0.001
            v += s
            np.sqrt(v, out=s)
            s /= math.sqrt(1 - 0.999 ** t)
            s += 1e-8
            np.divide(m, s, out=s)
            s *= lr / (1 - 0.9 ** t)
            p -= s
        else:
            buf = state["buf"][i]
            if buf is None:
                buf = state["buf"][i] = g.copy()
            else:
                buf *= 0.9
                buf += g
            np.multiply(buf, lr, out=s)
            p -= s


def dltutor_optimizer(params: list, kind: str) -> optim.Optimizer:
    """Three groups (one per layer), lr multipliers, L2Decay on the weights, global-norm clip."""
    for p, mult in zip(params, OPT_LR_MULTS):
        p.lr_mult = mult
        p.regularizer = optim.L2Decay(OPT_L2) if p.ndim == 2 else None
    groups = [{"params": params[2 * i:2 * i + 2], "lr": lr} for i, lr in enumerate(OPT_GROUP_LRS)]
    clip = optim.ClipGradByGlobalNorm(OPT_CLIP)
    if kind == "adam":
        return optim.Adam(groups, grad_clip=clip)
    return optim.SGD(groups, lr=OPT_GROUP_LRS[0], momentum=0.9, grad_clip=clip)


def optimizer_results(repeats: int) -> list[Result]:
    """Time optimizer.step() alone; the gradients are fixed arrays, identical for both sides."""
    from dltutor import nn

    rng = np.random.default_rng(SEED)
    init = mlp_params(rng, OPT_SIZES)
    grads = [rng.standard_normal(p.shape).astype(DTYPE) * 0.1 for p in init]
    results = []
    for kind, label in (("adam", "Adam"), ("sgd", "SGD momentum 0.9")):
        params = [nn.Parameter(p.copy()) for p in init]
        for p, g in zip(params, grads):
            p.grad = dt.tensor(g)
        ours = {"opt": dltutor_optimizer(params, kind)}
        theirs = {"params": [p.copy() for p in init], "state": {}}

        def reset_ours() -> None:
            for p, p0 in zip(params, init):
                np.copyto(p.data, p0)
            ours["opt"] = dltutor_optimizer(params, kind)

        def reset_theirs() -> None:
            for p, p0 in zip(theirs["params"], init):
                np.copyto(p, p0)
            theirs["state"] = {}

        def step_theirs() -> None:
            numpy_optimizer_step(theirs["params"], grads, theirs["state"], kind)

        for _ in range(5):           # same arithmetic: the two sides must agree
            ours["opt"].step()
            step_theirs()
        for p, q in zip(params, theirs["params"]):
            np.testing.assert_allclose(p.data, q, rtol=1e-5, atol=1e-7,
                                       err_msg=f"optimizer row {label}: the sides disagree")
        t_ours, t_theirs = (seconds * 1e6 for seconds in median_seconds(
            [(lambda: ours["opt"].step(), reset_ours), (step_theirs, reset_theirs)], repeats))
        results.append(Result(
            f"optimizer step, 784-256-256-10 MLP, {label}: 3 groups, lr_mult, L2Decay, "
            "global-norm clip", t_ours, t_theirs, "step", "<= 1.3", t_ours / t_theirs <= 1.3))
    return results


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
    n = max(1, _batch_size(trainer.step, lambda: None, 0.01))
    order = random.Random(SEED)
    plain, recorded = [], []
    for _ in range(6 * repeats):        # short batches, many pairs
        pair = {}
        for side in order.sample(["plain", "recorded"], 2):
            recorder = (Recorder(_Named(trainer.params), trainer.optimizer, capacity=500)
                        if side == "recorded" else None)
            pair[side] = _timed_batch(trainer.step, lambda: None, n) / n
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
def _median_ms(action: Callable[[], object], repeats: int) -> float:
    action()  # warm up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


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
            ("state_dict()", _median_ms(model.state_dict, repeats)),
            ("load_state_dict(state)", _median_ms(lambda: model.load_state_dict(state), repeats)),
            ("dt.save + dt.load + load_state_dict", _median_ms(round_trip, repeats)),
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
        for (filename, line, func), (cc, nc, tottime, cumtime, _) in stats.stats.items():
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
