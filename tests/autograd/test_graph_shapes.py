"""Inputs and graph shapes no other test reaches: the softmax family along every axis of a 3-D
input, diamonds and attention, a leaf used many times on both sides of the engine's
small-leaf threshold, and the release of what the ops saved once backward is done.

These pin the engine's observable behaviour down before it is refactored; every test here was
seen to fail against a planted bug (see the commit that added this file).
"""
from __future__ import annotations

import gc
import math
import tracemalloc

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from gradcheck import gradcheck

from dltutor.autograd import engine


def randn(*shape):
    """Standard normal draws; conftest reseeds NumPy before every test, so each test sees the
    same inputs whatever ran before it (or on which xdist worker)."""
    return np.random.standard_normal(shape)


def on_backend(array, requires_grad=False):
    """A float64 tensor on the current backend (NumPy or the marked stand-in)."""
    return dt.tensor(B.current().asarray(np.asarray(array, dtype=np.float64)),
                     requires_grad=requires_grad)


# --- 1. the softmax family along every axis -----------------------------------------------------
AXES = [0, 1, 2, -1, -2, -3]
SOFTMAX_FAMILY = {
    "softmax": lambda a, axis: dt.softmax(a, axis=axis),
    "log_softmax": lambda a, axis: dt.log_softmax(a, axis=axis),
    "logsumexp": lambda a, axis: dt.logsumexp(a, axis=axis),
    "logsumexp_keepdims": lambda a, axis: dt.logsumexp(a, axis=axis, keepdims=True),
}


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("op", sorted(SOFTMAX_FAMILY))
def test_softmax_family_gradient_along_every_axis_of_a_3d_input(op, axis, backend):
    """softmax, log_softmax and logsumexp differentiate correctly along ANY axis, not only the
    last (shape (2, 3, 4): every axis has its own length, so a wrong axis cannot hide)."""
    fn = SOFTMAX_FAMILY[op]
    gradcheck(lambda a: fn(a, axis), randn(2, 3, 4))


def test_softmax_family_dim_keyword_is_the_same_axis(backend):
    """PyTorch's ``dim=`` spelling picks the same axis as ``axis=`` (middle axis of a 3-D input)."""
    gradcheck(lambda a: dt.log_softmax(a, dim=1) * dt.softmax(a, dim=-2), randn(2, 3, 4))


def test_logsumexp_over_two_axes_of_a_3d_input(backend):
    """logsumexp over a pair of non-adjacent axes reduces both, forward and backward."""
    gradcheck(lambda a: dt.logsumexp(a, axis=(0, 2)), randn(2, 3, 4))


# --- 2. diamonds and attention ------------------------------------------------------------------
def diamond(x):
    """The brief's diamond: x feeds two branches, and ``a`` is used twice at the join."""
    a = x * 2
    b = x.exp()
    return a * b + a


def lopsided_diamond(x):
    """A shared intermediate ``h`` with three consumers on branches of different lengths: it
    may only run after the five-op branch has passed its gradient back."""
    h = dt.tanh(x)
    long = h
    for _ in range(5):
        long = dt.sigmoid(long * 1.5)
    short = h * 3
    return long * short + h


def two_leaf_diamond(x, w):
    """Both leaves feed both branches, which meet in a product."""
    return (x @ w) * (dt.tanh(x) @ w)


@pytest.mark.parametrize("graph,shapes", [
    (diamond, [(3, 4)]),
    (lopsided_diamond, [(3, 4)]),
    (two_leaf_diamond, [(3, 4), (4, 2)]),
], ids=["diamond", "lopsided_diamond", "two_leaf_diamond"])
def test_diamond_graphs_match_finite_differences(graph, shapes, backend):
    """Gradients that meet again at a join after leaving a shared ancestor are summed, and the
    ancestor runs once, after all of its consumers."""
    gradcheck(graph, *[randn(*s) for s in shapes])


def test_diamond_sum_has_the_analytic_gradient(backend):
    """``y = sum(a*b + a)`` with ``a = 2x, b = exp(x)``: dy/dx = 2 exp(x) (1 + x) + 2."""
    x0 = randn(3, 4)
    x = on_backend(x0, requires_grad=True)
    a = x * 2
    b = x.exp()
    (a * b + a).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x0) * (1 + x0) + 2, rtol=1e-12)


def attention(q, k, v):
    return dt.softmax(q @ k.T / math.sqrt(q.shape[-1]), axis=-1) @ v


def test_attention_gradient_for_q_k_and_v(backend):
    """softmax(q @ k.T / sqrt(d)) @ v: q, k and v all get the right gradient."""
    gradcheck(attention, randn(4, 3), randn(5, 3), randn(5, 2))


def test_batched_self_attention_gradient(backend):
    """Self-attention: one input projected three times (a three-way diamond) and batched, with
    transpose(-2, -1) instead of .T."""
    def self_attention(x, wq, wk, wv):
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = q @ k.transpose(-2, -1) / math.sqrt(wq.shape[-1])
        return dt.softmax(scores, axis=-1) @ v

    gradcheck(self_attention, randn(2, 4, 3), randn(3, 2), randn(3, 2), randn(3, 3))


# --- 3. a leaf used many times, either side of the small-leaf threshold -------------------------
def test_the_threshold_is_where_these_tests_assume_it_is():
    """The sizes below straddle ``engine.COLLECT_MAX_SIZE``; if it moves, move them too."""
    assert engine.COLLECT_MAX_SIZE == 4096


# Each use of x, with its analytic gradient (w: a random array of x's shape, c: a constant).
USES = [
    (lambda x, w, c: (x * w).sum(), lambda x0, w, c: w),
    (lambda x, w, c: x.sum() * c, lambda x0, w, c: np.full_like(x0, c)),   # a broadcast view
    (lambda x, w, c: (x * x * c).sum(), lambda x0, w, c: 2 * c * x0),      # one op, both inputs
    (lambda x, w, c: dt.exp(x * c).sum(), lambda x0, w, c: c * np.exp(c * x0)),
]
SIZES = {"4095_below": (63, 65), "4096_at": (64, 64), "4097_above": (17, 241),
         "8192_above": (64, 128)}


@pytest.mark.parametrize("uses", [2, 3, 5, 7])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_leaf_used_several_times_gets_the_sum_of_every_use(size, uses, backend):
    """A leaf's gradient is the sum over all its uses whether the engine collects the pieces
    and sums them at the end (up to 4096 elements; five or more take the concatenate path) or
    adds them as they arrive (larger leaves)."""
    shape = SIZES[size]
    local = np.random.default_rng(uses)
    x0 = local.standard_normal(shape)
    x = on_backend(x0, requires_grad=True)
    loss, expected = None, np.zeros(shape)
    for k in range(uses):
        use, grad_of = USES[k % len(USES)]
        w, c = local.standard_normal(shape), 0.1 * (k + 1)
        term = use(x, on_backend(w), c)
        loss = term if loss is None else loss + term
        expected += grad_of(x0, w, c)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("size", ["4096_at", "4097_above"])
def test_a_hook_on_a_leaf_used_five_times_fires_once_with_the_sum(size, backend):
    """Either path, the leaf's hook sees the summed gradient once, and what it returns is what
    lands in ``.grad``."""
    shape = SIZES[size]
    x = on_backend(np.ones(shape), requires_grad=True)
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g * 10

    x.register_hook(hook)
    loss = x.sum()
    for k in range(1, 5):
        loss = loss + (x * (k + 1)).sum()
    loss.backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], np.full(shape, 15.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, 150.0))


def test_a_large_leaf_used_twice_matches_finite_differences_where_probed():
    """Independent of analytic formulas: probe a few entries of a 4097-element leaf used in two
    nonlinear branches against central differences."""
    x0 = randn(17, 241) * 0.5
    w = randn(17, 241)

    def f(x):
        return (dt.tanh(x) * w).sum() + (dt.exp(x * 0.3) * x).sum()

    x = dt.tensor(x0, requires_grad=True)
    f(x).backward()
    eps = 1e-6
    for index in [(0, 0), (8, 120), (16, 240), (3, 77)]:
        plus, minus = x0.copy(), x0.copy()
        plus[index] += eps
        minus[index] -= eps
        with dt.no_grad():
            numeric = (f(dt.tensor(plus)).item() - f(dt.tensor(minus)).item()) / (2 * eps)
        assert x.grad.numpy()[index] == pytest.approx(numeric, rel=1e-6, abs=1e-8)


# --- 4. what the ops saved is released after backward -------------------------------------------
N = 1_000_000              # float64 elements: 8 MB per saved array
ARRAY_BYTES = N * 8


def _chain(x):
    """Four ops that save arrays of x's size; logsumexp (the loss's own op) saves its input."""
    h = dt.tanh(dt.exp(x) * 0.5)
    return dt.logsumexp(h * h)


def _graph_functions(root):
    fns, stack = [], [root.grad_fn]
    while stack:
        fn = stack.pop()
        if all(fn is not seen for seen in fns):
            fns.append(fn)
            stack.extend(t.grad_fn for t in fn.inputs if t.grad_fn is not None)
    return fns


def _traced():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.fixture
def traced_memory():
    """tracemalloc on for one test (NumPy reports its array buffers to it); left running if
    it already was (python -X tracemalloc)."""
    already = tracemalloc.is_tracing()
    tracemalloc.start()
    yield _traced
    if not already:
        tracemalloc.stop()


def test_saved_arrays_are_freed_after_backward_while_the_loss_lives(traced_memory):
    """After backward, with the loss still referenced, memory is back to where it was before
    the forward pass plus the one gradient array: nothing the ops saved survives."""
    x = dt.tensor(np.random.default_rng(0).standard_normal(N), requires_grad=True)
    before = traced_memory()
    loss = _chain(x)
    during = traced_memory()
    assert during - before > 2 * ARRAY_BYTES, "the forward pass should hold saved arrays"
    loss.backward()
    after = traced_memory()
    assert loss.grad_fn is not None and loss.grad_fn.released
    assert after - before - x.grad.data.nbytes < 0.1 * ARRAY_BYTES, (
        f"{(after - before) / ARRAY_BYTES:.2f} arrays still held after backward (1 is x.grad)")


def test_saved_arrays_are_freed_even_while_the_grad_fns_are_referenced(traced_memory):
    """Holding on to every grad_fn (a graph printer might) keeps nothing big alive once
    backward has released them, and each one reports ``released``."""
    x = dt.tensor(np.random.default_rng(0).standard_normal(N), requires_grad=True)
    before = traced_memory()
    loss = _chain(x)
    fns = _graph_functions(loss)
    assert len(fns) == 5 and not any(fn.released for fn in fns)
    loss.backward()
    after = traced_memory()
    assert all(fn.released for fn in fns), [fn for fn in fns if not fn.released]
    assert after - before - x.grad.data.nbytes < 0.1 * ARRAY_BYTES, (
        f"{(after - before) / ARRAY_BYTES:.2f} arrays still held after backward (1 is x.grad)")


def test_retain_graph_keeps_the_saved_arrays_until_the_last_backward(traced_memory):
    """The measurement above can see saved arrays: with retain_graph=True they stay (and the
    ops are not released); the next plain backward frees them."""
    x = dt.tensor(np.random.default_rng(0).standard_normal(N), requires_grad=True)
    before = traced_memory()
    loss = _chain(x)
    loss.backward(retain_graph=True)
    kept = traced_memory() - before - x.grad.data.nbytes
    assert kept > 2 * ARRAY_BYTES and not loss.grad_fn.released
    loss.backward()
    assert traced_memory() - before - x.grad.data.nbytes < 0.1 * ARRAY_BYTES
    assert loss.grad_fn.released
