"""A training step on a GPU reads nothing on the host, and its checks still hold.

The GPU is the stand-in of device_reads.py: the marked backend with ``reads_are_free`` False,
every host read counted. A steady-state step (forward, loss, backward, ``opt.step()`` with
momentum, weight decay, an lr multiplier, global-norm clipping and the non-finite check) must
read nothing; a step with a NaN gradient must still change nothing, and be reported at the
next read, with the same parameters as on the CPU.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
import marked_backend
from device_reads import counting_reads
from dltutor import host_reads, nn, optim


def mlp():
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 2))


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def batch(kind: str):
    rng = np.random.default_rng(0)
    if kind == "mlp":
        return rng.standard_normal((32, 2)).astype(np.float32), np.arange(32) % 2
    return rng.standard_normal((4, 1, 28, 28)).astype(np.float32), np.arange(4) % 10


def training(kind: str, clip=None, nonfinite="raise", opt_class=optim.SGD, **settings):
    """A seeded network, its optimizer and one training step (on the current backend)."""
    dt.manual_seed(0)
    net = mlp() if kind == "mlp" else lenet()
    net[0].weight.lr_mult = 0.5
    settings = settings or dict(lr=0.05, momentum=0.9, weight_decay=1e-3)
    opt = opt_class(net.named_parameters(), grad_clip=clip, nonfinite=nonfinite, **settings)
    x, y = batch(kind)
    x, y = dt.tensor(x), dt.tensor(y)

    def step(poison: bool = False):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        if poison:                         # one NaN in one gradient
            net[2].weight.grad.data[0, 0] = np.nan
        opt.step()
        return loss
    return net, opt, step


@pytest.fixture
def gpu():
    marked_backend.register()
    with dt.backend.use("marked"), counting_reads() as reads:
        yield reads
    host_reads.settle()


@pytest.mark.parametrize("kind", ["mlp", "lenet"])
def test_a_steady_training_step_reads_nothing_on_a_gpu(gpu, kind):
    _, _, step = training(kind, clip=optim.ClipGradByGlobalNorm(1.0))
    step(), step()                         # the first steps make the momentum buffers
    gpu.clear()
    step()
    assert gpu.total == 0, f"a {kind} step read the device {gpu.total} times: {gpu.where()}"


def weights(net):
    return [p.data.view(np.ndarray).copy() for p in net.parameters()]


def test_a_refused_step_on_a_gpu_changes_nothing_and_is_reported_at_the_next_read(gpu):
    net, opt, step = training("mlp", clip=optim.ClipGradByGlobalNorm(1.0))
    step()
    before = weights(net)
    buffers = [opt.state[p]["momentum_buffer"].view(np.ndarray).copy() for p in net.parameters()]
    gpu.clear()
    loss = step(poison=True)               # refused on the device: nothing read
    assert gpu.total == 0, gpu.where()
    for old, new in zip(before, weights(net)):
        np.testing.assert_array_equal(old, new)
    for p, old in zip(net.parameters(), buffers):
        np.testing.assert_array_equal(opt.state[p]["momentum_buffer"].view(np.ndarray), old)
    with pytest.raises(optim.NonFiniteGradientError, match=r"'2.weight'.*found on the device"):
        loss.item()                        # the host reads: the check is settled
    assert opt.step_count == 1 and all(opt.state[p]["step"] == 1 for p in net.parameters())
    loss.item()                            # reported once


@pytest.mark.parametrize("opt_class, settings", [
    (optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-3)),
    (optim.Adam, dict(lr=0.01, weight_decay=1e-3)),
    (optim.AdamW, dict(lr=0.01, amsgrad=True)),
])
@pytest.mark.parametrize("clip", [None, optim.ClipGradByGlobalNorm(0.5),
                                  optim.ClipGradByNorm(0.2), optim.ClipGradByValue(0.01)])
def test_skipped_steps_on_a_gpu_give_the_cpus_parameters(opt_class, settings, clip):
    """The first step and the fourth are refused; the CPU checks first, the GPU gates."""
    results = []
    for backend in ("numpy", "gpu"):
        if backend == "gpu":
            marked_backend.register()
            context = counting_reads()
        else:
            context = dt.backend.use("numpy")
        with context, dt.backend.use("marked" if backend == "gpu" else "numpy"):
            net, opt, step = training("mlp", clip, "skip", opt_class, **settings)
            for i in range(6):
                step(poison=i in (0, 3))
            host_reads.settle()
            results.append((weights(net), opt.step_count, opt.skipped_steps,
                            sorted((k, v) for k, v in opt.state[net[0].weight].items()
                                   if k == "step")))
    (cpu, cpu_steps, cpu_skipped, cpu_state), (gpu, gpu_steps, gpu_skipped, gpu_state) = results
    assert (gpu_steps, gpu_skipped, gpu_state) == (cpu_steps, cpu_skipped, cpu_state) == (
        4, 2, [("step", 4)])
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_a_clip_on_a_gpu_reports_its_norms_when_asked(gpu):
    clip = optim.ClipGradByGlobalNorm(1e-3)
    _, _, step = training("mlp", clip=clip)
    step()
    assert gpu.total == 0
    assert 0 < clip.last_scale < 1 and clip.last_clipped_norm == pytest.approx(1e-3)
    assert gpu.total > 0                   # asking read the device


def test_a_label_out_of_range_on_a_gpu_is_reported_at_the_next_read(gpu):
    logits = dt.randn(3, 4, requires_grad=True)
    loss = nn.functional.cross_entropy(logits, dt.tensor([0, 7, 1]))
    assert gpu.total == 0
    with pytest.raises(ValueError, match="label 7 is out of range for 4 classes"):
        loss.item()


def test_a_loop_that_never_reads_keeps_a_bounded_number_of_checks(gpu):
    logits = dt.randn(3, 4)
    for _ in range(host_reads.MAX_PENDING + 10):
        nn.functional.cross_entropy(logits, dt.tensor([0, 1, 2]))
    assert host_reads.pending() == host_reads.MAX_PENDING
    assert gpu.total == 0                  # the old answers arrived long ago: no wait


@pytest.mark.parametrize("opt_class, settings", [
    (optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-3, nesterov=True)),
    (optim.Adam, dict(lr=0.01, weight_decay=1e-3)), (optim.AdamW, dict(lr=0.01, amsgrad=True)),
    (optim.RMSprop, dict(lr=0.01)), (optim.Adagrad, dict(lr=0.01))])
@pytest.mark.parametrize("clip", [None, optim.ClipGradByGlobalNorm(0.5),
                                  optim.ClipGradByNorm(0.2), optim.ClipGradByValue(0.01)],
                         ids=["no-clip", "global-norm", "per-tensor-norm", "value"])
def test_every_rule_and_clip_steps_without_reading(gpu, opt_class, settings, clip):
    _, _, step = training("mlp", clip, "raise", opt_class, **settings)
    step(), step()
    gpu.clear()
    step()
    assert gpu.total == 0, gpu.where()


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_pytorchs_clipping_functions_read_nothing_and_clip_as_on_the_cpu(norm_type):
    """The loop written as in PyTorch (``clip_grad_norm_`` and ``clip_grad_value_`` between
    backward and step): no read on the GPU, the CPU's gradients and total norm."""
    results = []
    for backend in ("numpy", "gpu"):
        marked_backend.register()
        with (counting_reads() if backend == "gpu" else dt.backend.use("numpy")) as reads, \
                dt.backend.use("marked" if backend == "gpu" else "numpy"):
            net, opt, _ = training("mlp")
            x, y = (dt.tensor(a) for a in batch("mlp"))
            for i in range(3):
                if i == 2 and backend == "gpu":
                    reads.clear()
                opt.zero_grad()
                nn.functional.cross_entropy(net(x), y).backward()
                total = nn.utils.clip_grad_norm_(net.parameters(), 1e-3, norm_type=norm_type)
                nn.utils.clip_grad_value_(net.parameters(), 1e-4)
                opt.step()
            if backend == "gpu":
                assert reads.total == 0, reads.where()
            results.append((total.item(), [p.grad.numpy().copy() for p in net.parameters()]))
    (cpu_total, cpu_grads), (gpu_total, gpu_grads) = results
    assert gpu_total == pytest.approx(cpu_total, rel=1e-5) and cpu_total > 1e-3   # it clipped
    for a, b in zip(cpu_grads, gpu_grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_clip_grad_norm_of_a_nonfinite_gradient_on_a_gpu_gives_the_cpus_values(bad):
    """PyTorch's rule on both: a NaN total makes every gradient NaN; an infinite one makes
    the factor 0, so inf * 0 is NaN and the finite values 0."""
    outcomes = []
    for backend in ("numpy", "gpu"):
        marked_backend.register()
        with (counting_reads() if backend == "gpu" else dt.backend.use("numpy")), \
                dt.backend.use("marked" if backend == "gpu" else "numpy"):
            w = nn.Parameter([1.0, 2.0])
            w.grad = dt.tensor([bad, 3.0])
            total = nn.utils.clip_grad_norm_([w], 1.0)
            outcomes.append((total.item(), w.grad.numpy().copy()))
    (cpu_total, cpu_grad), (gpu_total, gpu_grad) = outcomes
    np.testing.assert_array_equal([gpu_total], [cpu_total])
    np.testing.assert_array_equal(gpu_grad, cpu_grad)
