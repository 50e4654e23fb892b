"""The order of the backward pass: an op runs only once every op that used its output has
passed its gradient back.

The engine (dltutor/autograd/engine.py) keeps pending ops in a heap, newest first, and lets the
op that just became pending skip the heap when it is the newest. The hard case is an op that
becomes pending while an older op it feeds is already waiting, or while a newer op that feeds it
is still waiting: run too early, the op would see part of its gradient only (a hook would fire
with it, and without ``retain_graph`` its freed graph would be reached a second time).
"""
from __future__ import annotations

import numpy as np
from gradcheck import gradcheck
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dltutor as dt

X = np.array([0.3, -0.7, 1.1])


def diamond_with_a_late_consumer(x):
    """``h*((h+t)+t)`` with ``t = tanh(h)``, ``h = x*x``: ``t`` is used by two adds, the newer
    of which becomes pending before the older; ``h`` is used by ``tanh``, an add and the mul."""
    h = x * x
    t = dt.tanh(h)
    return h, t, h * ((h + t) + t)


def analytic_gradients(x):
    """For L = sum(h * (h + 2t)): dL/dt = 2h, dL/dh = 2h + 2t + dL/dt * (1 - t^2), dL/dx =
    dL/dh * 2x."""
    h = x * x
    t = np.tanh(h)
    grad_t = 2 * h
    grad_h = 2 * h + 2 * t + grad_t * (1 - t**2)
    return grad_h, grad_t, grad_h * 2 * x


def test_an_op_waits_for_every_consumer_in_the_diamond_with_a_late_consumer():
    """The concrete graph from the mutation study: tanh becomes pending from the newer add
    while the older add that also uses it is still waiting, so running it at once (or in
    plain depth-first order) gives it half its gradient."""
    x = dt.tensor(X.copy(), requires_grad=True)
    _, _, out = diamond_with_a_late_consumer(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), analytic_gradients(X)[2], rtol=1e-12)


def test_a_hook_on_an_intermediate_fires_once_with_its_whole_gradient():
    """register_hook promises one call with the sum for a tensor used in several places; with
    retain_graph=True an op run too early would run twice with partial gradients and still
    sum to the right x.grad, so only the hooks can tell."""
    x = dt.tensor(X.copy(), requires_grad=True)
    h, t, out = diamond_with_a_late_consumer(x)
    seen = {"h": [], "t": []}
    h.register_hook(lambda g: seen["h"].append(g.numpy().copy()))
    t.register_hook(lambda g: seen["t"].append(g.numpy().copy()))
    out.sum().backward(retain_graph=True)
    grad_h, grad_t, grad_x = analytic_gradients(X)
    assert (len(seen["h"]), len(seen["t"])) == (1, 1), "each hook must fire exactly once"
    np.testing.assert_allclose(seen["t"][0], grad_t, rtol=1e-12)
    np.testing.assert_allclose(seen["h"][0], grad_h, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), grad_x, rtol=1e-12)


# -- random small graphs ---------------------------------------------------------------------------
ARITY = {"add": 2, "sub": 2, "mul": 2, "tanh": 1, "exp": 1}
APPLY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "tanh": dt.tanh,
    "exp": dt.exp,
}


@st.composite
def graphs(draw):
    """2 to 8 nodes; node i applies an op to x (index 0) or to earlier nodes (index k is node
    k - 1), so any node may be used by several later ones."""
    nodes = []
    for i in range(draw(st.integers(2, 8))):
        op = draw(st.sampled_from(sorted(ARITY)))
        nodes.append((op, tuple(draw(st.integers(0, i)) for _ in range(ARITY[op]))))
    return nodes


def run_graph(nodes, x):
    """Every node's value; the output sums them all, so every node feeds the loss."""
    values = [x]
    for op, args in nodes:
        values.append(APPLY[op](*(values[k] for k in args)))
    total = values[1]
    for v in values[2:]:
        total = total + v
    return values[1:], total


@settings(max_examples=50, deadline=None)
@given(nodes=graphs(), seed=st.integers(0, 2**16))
def test_backward_through_any_small_graph_matches_finite_differences(nodes, seed):
    """Whatever the order in which ops become pending, x.grad equals central differences in
    float64 (gradcheck multiplies the output by a random upstream gradient)."""
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, 3)
    values, _ = run_graph(nodes, dt.tensor(x))
    assume(all(np.abs(v.numpy()).max() < 1e3 for v in values))   # exp(exp(...)) overflows FD
    gradcheck(lambda t: run_graph(nodes, t)[1], x, rtol=1e-5, atol=1e-6, seed=seed)


@settings(max_examples=50, deadline=None)
@given(nodes=graphs(), seed=st.integers(0, 2**16))
def test_every_intermediate_hook_fires_once_in_any_small_graph(nodes, seed):
    """Under retain_graph=True an op run before all its consumers would run again later, and
    its hook would fire twice: each hook fires once, whatever the graph."""
    x = dt.tensor(np.random.default_rng(seed).uniform(-1.0, 1.0, 3), requires_grad=True)
    values, total = run_graph(nodes, x)
    calls = [0] * len(values)
    for i, v in enumerate(values):
        v.register_hook(lambda g, i=i: calls.__setitem__(i, calls[i] + 1))
    total.sum().backward(retain_graph=True)
    assert calls == [1] * len(values), f"hooks fired {calls} times in the graph {nodes}"
