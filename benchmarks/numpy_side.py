"""The hand-written NumPy baseline: the shared in-place optimizers, the losses, the MLP and
LeNet forward/backward passes written out by hand, ``NumpyTrainer`` and the NumPy version of
the optimizer row's step. It measures nothing itself; the *_bench modules time it.
"""
# Pins BLAS to one thread and puts the repository root on sys.path; it must come before
# NumPy is imported (anywhere), so it is the first import.
import one_thread  # noqa: F401 - imported for what it sets up, not for a name

import math
from typing import Callable

import numpy as np

from data_setup import OPT_CLIP, OPT_GROUP_LRS, OPT_L2, OPT_LR_MULTS


# =============================================================================================
# Optimizers (shared by both sides)
#
# Each updates a list of NumPy arrays IN PLACE from a list of gradient arrays, and keeps what it
# needs between steps (momentum buffers, scratch space) in the dict ``state``. They are called
# with plain arrays on the NumPy side; the dltutor side uses ``dltutor.optim``
# (``DltutorTrainer`` in training_bench.py).
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
# Optimizer steps with every per-parameter feature on, against the same arithmetic in NumPy
# =============================================================================================
def numpy_optimizer_step(params: list, grads: list, state: dict, kind: str) -> None:
    """The same arithmetic as the dltutor optimizer of optimizer_bench.py, written out: copy the gradients,
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
