"""On a GPU, SGD's and Adam's step for one parameter is ONE fused kernel (``fused_update``),
and it takes the same step as the rule the CPU runs (``update_param``), to the bit.

The GPU is the stand-in of device_reads.py (the marked backend, its reads not free, so the
optimizer takes its device path); there a fused kernel runs with NumPy's elementwise
functions only and counts as one operation, as one launch on CuPy. Same operations in the
same order give the same float32 bits on NumPy, so the fused formula is held to the CPU's
exactly. (On a real GPU the compiler may contract a*b + c into one rounding: there the two
agree to float rounding, which benchmarks/gpu_bench.py checks against PyTorch.)
"""
from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dltutor as dt
import marked_backend
from device_reads import counting_reads
from dltutor import host_reads, nn, optim


def network(dtype: str):
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    if dtype == "float64":
        net = net.double()
    return net


def run(backend: str, rule: str, settings: dict, steps: int, dtype: str, l1_on_bias: bool,
        clip: bool, fused: bool = True):
    """``steps`` training steps on ``backend`` ("cpu", the stand-in "gpu" or "cupy"; without
    the fused kernel if ``fused`` is False); the final parameters and optimizer state, as
    plain arrays."""
    gpu = backend == "gpu"
    marked_backend.register()
    with (counting_reads() if gpu else contextlib.nullcontext()), \
            dt.backend.use({"gpu": "marked", "cpu": "numpy"}.get(backend, backend)):
        net = network(dtype)
        net[0].weight.lr_mult = 0.5
        if l1_on_bias:                      # a regularizer object: no kernel, the rule runs
            net[2].bias.regularizer = optim.L1Decay(0.01)
        opt = getattr(optim, rule)(net.named_parameters(), **settings,
                                   grad_clip=optim.ClipGradByGlobalNorm(0.5) if clip else None)
        if not fused:                       # the rule between copies, as before kernels
            opt.fused_update = lambda p, state, refused: False
        rng = np.random.default_rng(1)
        x = dt.tensor(rng.standard_normal((16, 3)).astype(dtype))
        y = dt.tensor(rng.standard_normal((16, 2)).astype(dtype))
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            opt.step()
        host_reads.settle()
        params = [np.array(dt.backend.to_numpy(p.data)) for p in net.parameters()]
        state = [{k: np.array(dt.backend.to_numpy(v)) if hasattr(v, "shape") else v
                  for k, v in sorted(opt.state[p].items())} for p in net.parameters()]
    return params, state


RULES = st.sampled_from(["SGD", "Adam", "AdamW"])


@st.composite
def rule_settings(draw):
    rule = draw(RULES)
    settings = dict(lr=draw(st.sampled_from([0.01, 0.1])), maximize=draw(st.booleans()),
                    weight_decay=draw(st.sampled_from([0.0, 1e-2])))
    if rule == "SGD":
        momentum = draw(st.sampled_from([0.0, 0.9]))
        nesterov = momentum > 0 and draw(st.booleans())
        dampening = 0.0 if nesterov else draw(st.sampled_from([0.0, 0.3]))
        settings.update(momentum=momentum, nesterov=nesterov, dampening=dampening)
    else:
        settings.update(amsgrad=draw(st.booleans()), betas=(0.8, 0.99))
    return rule, settings


def assert_same_bits(first, second):
    for a, b in zip(first[0], second[0]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first[1], second[1]):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@settings(max_examples=40, deadline=None)
@given(rule_settings(), st.sampled_from(["float32", "float64"]), st.booleans(), st.booleans())
def test_the_fused_step_is_the_rules_step_to_the_bit(rule_and_settings, dtype, l1, clip):
    """On the GPU, with and without the kernel; and against the CPU where no clip runs (a
    clip's norm is summed on the device in another order than on the CPU: last bits)."""
    rule, settings_ = rule_and_settings
    fused = run("gpu", rule, settings_, 4, dtype, l1, clip)
    assert_same_bits(fused, run("gpu", rule, settings_, 4, dtype, l1, clip, fused=False))
    if not clip:
        assert_same_bits(fused, run("cpu", rule, settings_, 4, dtype, l1, clip))


@pytest.mark.parametrize("rule, settings_", [
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=1e-3, nesterov=True)),
    ("Adam", dict(lr=0.01, weight_decay=1e-3)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
])
def test_a_gpu_step_is_one_kernel_per_parameter_and_copies_nothing(rule, settings_):
    marked_backend.register()
    with counting_reads(), dt.backend.use("marked"):
        net = network("float32")
        opt = getattr(optim, rule)(net.parameters(), **settings_)
        x = dt.randn(16, 3)
        for _ in range(3):                  # the last one steady: its state exists
            opt.zero_grad()
            (net(x) * net(x)).mean().backward()
            with marked_backend.counting() as counts:
                opt.step()
    n = len(list(net.parameters()))
    assert counts[f"fused {rule.lower().rstrip('w')}_kernel"] == n
    assert not {"copy", "copyto"} & set(counts), counts      # the gate is inside the kernel
    # per parameter: the finiteness check (2), a gradient copy for the decay (1), the kernel
    assert sum(counts.values()) <= 4 * n + 3, counts


def test_a_regularizer_object_takes_the_rules_path_between_copies():
    marked_backend.register()
    with counting_reads(), dt.backend.use("marked"):
        net = network("float32")
        net[2].bias.regularizer = optim.L1Decay(0.01)
        opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        net(dt.randn(4, 3)).sum().backward()
        opt.step()                          # the first step makes the buffers
        with marked_backend.counting() as counts:
            opt.step()
    assert counts["fused sgd_kernel"] == 3 and counts["copyto"] == 2   # bias: param and buffer


@pytest.mark.skipif(os.environ.get("DLTUTOR_TEST_CUPY") != "1",
                    reason="a real GPU: DLTUTOR_TEST_CUPY=1 (benchmarks/gpu_run.sh)")
@pytest.mark.parametrize("rule, settings_", [
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=1e-3, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=1e-3, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
])
def test_cupy_compiles_the_fused_step_and_it_agrees_with_the_rule(rule, settings_):
    """On CuPy, cupy.fuse compiles each kernel, and the step agrees with the rule's separate
    kernels to float rounding (the compiler may fuse a*b + c into one rounding)."""
    cupy_backend = dt.backend.get("cupy")
    fused = run("cupy", rule, settings_, 5, "float32", True, True)
    assert {k.__name__ for k in cupy_backend._fused} >= {f"{rule.lower().rstrip('w')}_kernel"}
    separate = run("cupy", rule, settings_, 5, "float32", True, True, fused=False)
    for a, b in zip(fused[0], separate[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
