"""Every op's backward against central differences (float64, random upstream gradient).

Each case runs under NumPy and under the marked backend; under the latter the conftest also
checks that every array each op produces, forward and backward, stayed on the backend.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor.nn import functional as F
from gradcheck import gradcheck
import marked_backend

rng = np.random.default_rng(1234)


def randn(*shape):
    return rng.standard_normal(shape)


def positive(*shape):
    return rng.uniform(0.5, 2.0, shape)


def away_from_zero(*shape):
    """Values at least 0.1 away from 0, so kinks (relu, abs) are never crossed by eps."""
    x = rng.uniform(0.1, 1.5, shape)
    return x * rng.choice([-1.0, 1.0], shape)


def distinct(*shape):
    """A shuffled range: no ties, so max/min/maxpool have a unique winner."""
    n = int(np.prod(shape))
    return rng.permutation(n).reshape(shape) * 0.37 - n * 0.1


CASES = {
    # elementwise binary, with broadcasting
    "add": (lambda a, b: a + b, [randn(2, 3), randn(3)]),
    "add_both_broadcast": (lambda a, b: a + b, [randn(2, 1), randn(1, 3)]),
    "radd_scalar": (lambda a: 2.5 + a, [randn(3)]),
    "sub": (lambda a, b: a - b, [randn(4, 1, 2), randn(3, 1)]),
    "rsub_scalar": (lambda a: 1.0 - a, [randn(2, 2)]),
    "mul": (lambda a, b: a * b, [randn(2, 3), randn(2, 1)]),
    "mul_same_tensor": (lambda a: a * a, [randn(3)]),
    "div": (lambda a, b: a / b, [randn(2, 3), positive(3)]),
    "rdiv_scalar": (lambda a: 2.0 / a, [positive(3)]),
    "pow_tensor": (lambda a, b: a ** b, [positive(2, 3), randn(3)]),
    "pow_const": (lambda a: a ** 3, [randn(2, 2)]),
    "pow_square": (lambda a: a ** 2, [randn(3)]),
    "pow_fraction": (lambda a: a ** 0.5, [positive(4)]),
    "rpow": (lambda a: 2.0 ** a, [randn(3)]),
    "maximum": (lambda a, b: dt.maximum(a, b), [distinct(2, 3), distinct(3) + 0.05]),
    "minimum": (lambda a, b: dt.minimum(a, b), [distinct(2, 3), distinct(2, 1) + 0.05]),
    "where": (lambda a, b: dt.where(a > 0, a, b), [away_from_zero(2, 3), randn(3)]),
    # elementwise unary
    "neg": (lambda a: -a, [randn(3)]),
    "exp": (lambda a: dt.exp(a), [randn(2, 3)]),
    "log": (lambda a: dt.log(a), [positive(2, 3)]),
    "sqrt": (lambda a: dt.sqrt(a), [positive(5)]),
    "abs": (lambda a: dt.abs(a), [away_from_zero(2, 3)]),
    "tanh": (lambda a: dt.tanh(a), [randn(2, 3)]),
    "sigmoid": (lambda a: dt.sigmoid(a), [randn(2, 3) * 3]),
    "relu": (lambda a: dt.relu(a), [away_from_zero(3, 2)]),
    "leaky_relu": (lambda a: dt.leaky_relu(a, 0.2), [away_from_zero(4)]),
    "erf": (lambda a: dt.erf(a), [randn(2, 3)]),
    "gelu": (lambda a: dt.gelu(a), [randn(2, 3)]),
    "gelu_tanh": (lambda a: dt.gelu(a, approximate="tanh"), [randn(2, 3)]),
    "clip": (lambda a: dt.clip(a, -0.5, 0.5), [np.array([-1.0, -0.2, 0.1, 0.4, 0.9])]),
    "clip_low_only": (lambda a: dt.clip(a, min=0.0), [away_from_zero(4)]),
    # reductions
    "sum_all": (lambda a: a.sum(), [randn(2, 3)]),
    "sum_axis": (lambda a: a.sum(axis=1), [randn(2, 3, 2)]),
    "sum_axes_keepdims": (lambda a: a.sum(axis=(0, 2), keepdims=True), [randn(2, 3, 2)]),
    "sum_dim_keepdim": (lambda a: a.sum(dim=-1, keepdim=True), [randn(2, 3)]),
    "mean_all": (lambda a: a.mean(), [randn(3, 2)]),
    "mean_axis": (lambda a: a.mean(axis=0), [randn(3, 2)]),
    "max_all": (lambda a: a.max(), [distinct(3, 2)]),
    "max_dim_values": (lambda a: a.max(dim=1).values, [distinct(3, 4)]),
    "max_axis_values": (lambda a: a.max(axis=-1)[0], [distinct(2, 3, 4)]),
    "min_dim_keepdim_values": (lambda a: a.min(0, keepdim=True).values, [distinct(3, 4)]),
    "max_two_tensors": (lambda a, b: dt.max(a, b), [distinct(3, 2), distinct(2)]),
    "amax_axes": (lambda a: a.amax(dim=(0, 2)), [distinct(2, 3, 4)]),
    "amin_axis_keepdims": (lambda a: dt.amin(a, axis=0, keepdims=True), [distinct(3, 4)]),
    "norm_all": (lambda a: a.norm(), [randn(3, 2)]),
    "norm_dim_keepdim": (lambda a: dt.norm(a, dim=1, keepdim=True), [randn(3, 4)]),
    "norm_p1": (lambda a: a.norm(p=1, dim=0), [away_from_zero(3, 2)]),
    "norm_p3": (lambda a: a.norm(p=3), [away_from_zero(2, 3)]),
    "norm_inf": (lambda a: a.norm(p=float("inf"), dim=-1), [distinct(2, 3)]),
    "var_unbiased": (lambda a: a.var(axis=1), [randn(3, 4)]),
    "var_population": (lambda a: a.var(correction=0), [randn(5)]),
    "std": (lambda a: a.std(axis=0), [randn(4, 2)]),
    "logsumexp": (lambda a: a.logsumexp(axis=1), [randn(3, 4)]),
    "logsumexp_all": (lambda a: dt.logsumexp(a), [randn(2, 2)]),
    "softmax": (lambda a: dt.softmax(a, axis=1), [randn(3, 4)]),
    "softmax_axis0": (lambda a: dt.softmax(a, axis=0), [randn(3, 4)]),
    "log_softmax": (lambda a: dt.log_softmax(a, axis=-1), [randn(2, 5)]),
    # shapes
    "reshape": (lambda a: a.reshape(3, -1) * dt.arange(2).float(), [randn(2, 3)]),
    "flatten": (lambda a: a.flatten(1), [randn(2, 3, 2)]),
    "permute": (lambda a: a.permute(2, 0, 1), [randn(2, 3, 4)]),
    "transpose": (lambda a: a.transpose(0, 1), [randn(2, 3)]),
    "T": (lambda a: a.T, [randn(2, 3, 4)]),
    "unsqueeze": (lambda a: a.unsqueeze(1), [randn(2, 3)]),
    "squeeze": (lambda a: a.squeeze(), [randn(2, 1, 3, 1)]),
    "expand": (lambda a: a.expand(4, 3, -1), [randn(3, 1)]),
    "broadcast_to": (lambda a: dt.broadcast_to(a, (2, 2, 3)), [randn(1, 3)]),
    "clone": (lambda a: a.clone() * a, [randn(2, 3)]),
    # indexing
    "getitem_slice": (lambda a: a[1:, ::2], [randn(3, 5)]),
    "getitem_negative_step": (lambda a: a[::-1, 1], [randn(3, 4)]),
    "getitem_int_array_repeats": (lambda a: a[[0, 2, 0, 0]], [randn(3, 2)]),
    "getitem_two_arrays": (lambda a: a[[0, 1, 1], [2, 0, 0]], [randn(2, 3)]),
    "getitem_bool_mask": (lambda a: a[a > 0], [away_from_zero(3, 3)]),
    "getitem_ellipsis_none": (lambda a: a[..., None, 1], [randn(2, 3)]),
    "concat": (lambda a, b: dt.concat([a, b], axis=1), [randn(2, 1), randn(2, 3)]),
    "stack": (lambda a, b: dt.stack([a, b], axis=1), [randn(2, 3), randn(2, 3)]),
    # matrix products
    "matmul_2d": (lambda a, b: a @ b, [randn(2, 3), randn(3, 4)]),
    "matmul_batched_broadcast": (lambda a, b: a @ b, [randn(2, 1, 3, 4), randn(5, 4, 2)]),
    "matmul_1d_2d": (lambda a, b: a @ b, [randn(3), randn(2, 3, 4)]),
    "matmul_2d_1d": (lambda a, b: a @ b, [randn(2, 4, 3), randn(3)]),
    "matmul_1d_1d": (lambda a, b: dt.matmul(a, b), [randn(4), randn(4)]),
    "linear": (lambda x, w, b: dt.linear(x, w, b), [randn(4, 3), randn(2, 3), randn(2)]),
    "linear_no_bias_3d": (lambda x, w: dt.linear(x, w), [randn(2, 3, 3), randn(4, 3)]),
    # losses
    "cross_entropy_mean": (lambda x: F.cross_entropy(x, dt.tensor([0, 2, 1, 2])),
                           [randn(4, 3)]),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, dt.tensor([1, 0]), reduction="sum"),
                          [randn(2, 3)]),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, dt.tensor([1, 0]), reduction="none"),
                           [randn(2, 3)]),
    "cross_entropy_ignore": (lambda x: F.cross_entropy(x, dt.tensor([1, -100, 2])),
                             [randn(3, 3)]),
    "bce_with_logits_input_and_target": (
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
        [randn(2, 3) * 4, rng.uniform(0.0, 1.0, (2, 3))]),
    "bce_with_logits_mean": (lambda x: F.binary_cross_entropy_with_logits(x, dt.ones(3) * 0.25),
                             [randn(3)]),
    "cross_entropy_4d": (lambda x: F.cross_entropy(x, dt.tensor([[[0, 1], [2, 0]]])),
                         [randn(1, 3, 2, 2)]),
    "mse_mean": (lambda a, b: F.mse_loss(a, b), [randn(3, 2), randn(3, 2)]),
    "mse_sum": (lambda a, b: F.mse_loss(a, b, reduction="sum"), [randn(4), randn(4)]),
    "mse_none": (lambda a, b: F.mse_loss(a, b, reduction="none"), [randn(4), randn(4)]),
    # layers' arithmetic
    "dropout": (lambda a: (dt.manual_seed(5), F.dropout(a, 0.3))[1], [randn(4, 5)]),
    "embedding": (lambda w: F.embedding(dt.tensor([[0, 2], [2, 2]]), w), [randn(4, 3)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b), [randn(2, 2, 5, 5), randn(3, 2, 3, 3),
                                                   randn(3)]),
    "conv2d_stride_padding": (lambda x, w: F.conv2d(x, w, stride=2, padding=1),
                              [randn(1, 2, 5, 4), randn(2, 2, 3, 2)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [distinct(2, 2, 4, 4)]),
    "max_pool2d_stride_padding": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
                                  [distinct(1, 2, 5, 5)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), [randn(1, 2, 4, 6)]),
    "avg_pool2d_padding": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
                           [randn(1, 1, 5, 5)]),
    "batch_norm_train_2d": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                            [randn(5, 3), positive(3), randn(3)]),
    "batch_norm_train_4d": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                            [randn(3, 2, 2, 3), positive(2), randn(2)]),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(
        x, dt.tensor(np.array([0.1, -0.2])), dt.tensor(np.array([1.5, 0.5])), w, b),
        [randn(4, 2), positive(2), randn(2)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, 4, w, b), [randn(3, 4), positive(4),
                                                              randn(4)]),
    # a small network end to end
    "mlp": (lambda x, w1, w2: F.cross_entropy(dt.tanh(x @ w1) @ w2, dt.tensor([0, 1, 1])),
            [randn(3, 4), randn(4, 5), randn(5, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name, backend):
    fn, inputs = CASES[name]
    gradcheck(fn, *inputs)


def test_checker_catches_a_broken_backward():
    """The checker must be able to fail: a softmax whose backward forgets the Jacobian's
    off-diagonal part passes a gradient-of-ones check but not this one."""
    from dltutor.autograd.ops import Softmax

    class BrokenSoftmax(Softmax):
        def backward(self, g):
            return (g * self.out * (1 - self.out),)

    with pytest.raises(AssertionError):
        gradcheck(lambda a: BrokenSoftmax(1)(a), randn(2, 3))


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_stays_float32_forward_and_backward(name, monkeypatch):
    """No op may quietly promote float32 to float64 (a NumPy int64 scalar in a division
    does): the leaves' final cast would hide it from the gradient check above."""
    offenders, checked = [], []

    def checking_apply(original):
        def apply(self, *inputs):
            out = original(self, *inputs)
            checked.append(self.op_name)
            floats = {t.dtype for t in inputs if t.dtype.kind == "f"}
            if floats == {np.dtype(np.float32)} and out.dtype != np.float32:
                offenders.append(f"{self.op_name} forward gave {out.dtype}")
            if out.grad_fn is self:
                backward = self.backward

                def checked_backward(grad):
                    grads = backward(grad)
                    for g in grads:
                        if g is not None and g.dtype != np.float32:
                            offenders.append(f"{self.op_name} backward gave {g.dtype}")
                    return grads

                self.backward = checked_backward
            return out

        return apply

    marked_backend.wrap_every_op_call(monkeypatch, checking_apply)
    fn, inputs = CASES[name]
    tensors = [dt.tensor(a.astype(np.float32), requires_grad=True) for a in inputs]
    out = fn(*tensors)
    out.backward(dt.ones_like(out))
    assert checked, f"{name}: the check saw no op run"
    assert not offenders, offenders
