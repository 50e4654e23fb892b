"""Recorder: values against hand computations, ring buffer, detach, layers, frozen, clipping."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.nn import functional as F
from dltutor.trace import PARAM_SERIES, Recorder


def setup(clip=None, lr=0.1, momentum=0.9, **kwargs):
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = optim.SGD(net.named_parameters(), lr=lr, momentum=momentum, grad_clip=clip)
    return net, opt, Recorder(net, opt, **kwargs)


def train_step(net, opt, rec=None, seed=0):
    rng = np.random.default_rng(seed)
    x = dt.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    y = dt.tensor(rng.integers(0, 2, 5))
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    if rec is not None:
        rec.log_loss(loss)
    opt.step()
    return loss.item()


def norm(a):
    return float(np.sqrt((np.asarray(a, dtype=np.float64) ** 2).sum()))


def test_values_match_a_hand_computation_from_before_and_after():
    net, opt, rec = setup()
    train_step(net, opt, rec, seed=1)                  # one step so momentum is non-trivial
    before = {n: p.numpy().copy() for n, p in net.named_parameters()}
    rng = np.random.default_rng(2)
    x = dt.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    y = dt.tensor(rng.integers(0, 2, 5))
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    grads = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
    rec.log_loss(loss)
    opt.step()
    for name, p in net.named_parameters():
        after = p.numpy()
        assert rec.series("param_norm", name)[-1] == pytest.approx(norm(after), rel=1e-5)
        assert rec.series("grad_norm", name)[-1] == pytest.approx(norm(grads[name]), rel=1e-5)
        assert rec.series("clipped_grad_norm", name)[-1] == pytest.approx(norm(grads[name]),
                                                                          rel=1e-5)
        update = norm(after - before[name])
        assert rec.series("update_norm", name)[-1] == pytest.approx(update, rel=1e-4)
        assert rec.series("update_ratio", name)[-1] == pytest.approx(update / norm(after),
                                                                     rel=1e-4)
        assert rec.series("lr", name)[-1] == pytest.approx(0.1)
        assert rec.series("frozen", name)[-1] == 0.0
    assert rec.series("loss")[-1] == pytest.approx(loss.item())
    assert rec.series("global_grad_norm")[-1] == pytest.approx(
        math.sqrt(sum(norm(g) ** 2 for g in grads.values())), rel=1e-5)
    assert rec.series("clip_scale")[-1] == 1.0
    assert rec.steps.tolist() == [0, 1]


def test_clipped_norms_and_clip_scale():
    clip = optim.ClipGradByGlobalNorm(1e-3)
    net, opt, rec = setup(clip=clip)
    train_step(net, opt, rec)
    total = rec.series("global_grad_norm")[-1]
    assert rec.series("clip_scale")[-1] == pytest.approx(1e-3 / total, rel=1e-5)
    clipped = rec.series("clipped_grad_norm")[-1]
    assert math.sqrt((clipped ** 2).sum()) == pytest.approx(1e-3, rel=1e-4)


def test_the_ring_buffer_keeps_the_last_capacity_records_in_order():
    net, opt, rec = setup(capacity=4)
    for step in range(7):
        train_step(net, opt, rec, seed=step)
    assert rec.count == 7
    assert rec.steps.tolist() == [3, 4, 5, 6]
    assert rec.series("loss").shape == (4,)
    assert rec.series("param_norm").shape == (4, 4)
    memory = rec._table.nbytes
    for step in range(20):
        train_step(net, opt, rec, seed=step)
    assert rec._table.nbytes == memory and rec.steps.tolist() == [23, 24, 25, 26]


def test_every_records_one_step_in_n():
    net, opt, rec = setup(every=3)
    for step in range(7):
        train_step(net, opt, rec, seed=step)
    assert rec.steps.tolist() == [0, 3, 6]
    assert not opt.record_steps  # the optimizer only records on the steps kept


def test_detach_removes_the_hooks():
    net, opt, rec = setup()
    train_step(net, opt, rec)
    rec.detach()
    train_step(net, opt)
    assert rec.count == 1 and not opt._pre_hooks and not opt._post_hooks


def test_frozen_layer_is_flagged_and_keeps_its_norm():
    net, opt, rec = setup()
    train_step(net, opt, rec)
    net[0].requires_grad_(False)
    for step in range(3):
        train_step(net, opt, rec, seed=step)
    frozen = rec.series("frozen", "0.weight")
    assert frozen.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert rec.series("frozen", "2.weight").tolist() == [0.0] * 4
    norms = rec.series("param_norm", "0.weight")
    assert norms[1] == norms[2] == norms[3]
    assert rec.series("grad_norm", "0.weight")[1:].tolist() == [0.0] * 3


def test_lr_mult_zero_counts_as_frozen_and_lr_is_effective():
    net, opt, rec = setup(momentum=0.0)
    net[2].weight.lr_mult = 0.0
    net[2].bias.lr_mult = 2.0
    train_step(net, opt, rec)
    latest = rec.latest("frozen")
    assert latest["2.weight"] == 1.0 and latest["2.bias"] == 0.0
    assert rec.latest("lr") == {"0.weight": 0.1, "0.bias": 0.1, "2.weight": 0.0,
                                "2.bias": pytest.approx(0.2)}


def test_per_layer_mode_adds_norms_in_squares():
    net, opt, rec = setup(by="layer")
    train_step(net, opt, rec)
    assert rec.names == ["0", "2"]
    w, b = net[0].weight.numpy(), net[0].bias.numpy()
    expected = math.sqrt(norm(w) ** 2 + norm(b) ** 2)
    assert rec.series("param_norm", "0")[-1] == pytest.approx(expected, rel=1e-5)
    net[0].requires_grad_(False)
    train_step(net, opt, rec)
    assert rec.series("frozen", "0").tolist() == [0.0, 1.0]


def test_histograms_every_n_records_are_bounded():
    net, opt, rec = setup(histograms_every=2, bins=5, histogram_capacity=2)
    for step in range(7):
        train_step(net, opt, rec, seed=step)
    assert [h["step"] for h in rec.histograms] == [4, 6]
    counts, edges = rec.histograms[-1]["params"]["0.weight"]
    assert counts.sum() == 12 and len(edges) == 6
    assert "0.weight" in rec.histograms[-1]["grads"]


def test_unknown_series_and_names_explain():
    net, opt, rec = setup()
    with pytest.raises(KeyError, match="no series 'grad'.*param_norm"):
        rec.series("grad")
    with pytest.raises(KeyError, match="no parameter 'x'.*0.weight"):
        rec.series("grad_norm", "x")
    with pytest.raises(ValueError, match="by must be"):
        Recorder(net, opt, by="module")


def test_recorder_works_with_multi_optimizer():
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    both = optim.MultiOptimizer(optim.SGD(net[0].parameters(), lr=0.1),
                                optim.Adam(net[2].parameters(), lr=0.01))
    rec = Recorder(net, both)
    train_step(net, both, rec)
    assert rec.count == 1
    assert rec.latest("lr") == {"0.weight": 0.1, "0.bias": 0.1, "2.weight": 0.01,
                                "2.bias": 0.01}


def test_to_dataframe_or_a_clear_error():
    net, opt, rec = setup()
    train_step(net, opt, rec)
    try:
        import pandas  # noqa: F401 - only whether it imports matters
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            rec.to_dataframe()
        return
    frame = rec.to_dataframe()
    assert set(PARAM_SERIES) <= set(frame.columns) and len(frame) == 4


def test_two_recorders_with_different_every_both_get_their_steps():
    net, opt, every_step = setup()
    every_third = Recorder(net, opt, every=3)
    for seed in range(7):
        train_step(net, opt, every_step, seed=seed)
    assert every_step.steps.tolist() == list(range(7))
    assert every_third.steps.tolist() == [0, 3, 6]
    assert (every_step.series("grad_norm") > 0).all()   # every step really was measured
    np.testing.assert_array_equal(every_third.series("grad_norm"),
                                  every_step.series("grad_norm")[[0, 3, 6]])


def test_an_optimizer_in_another_order_records_the_same_values():
    """The fast path (optimizer order = model order) and the general one agree."""
    net, opt, rec = setup()
    dt.manual_seed(0)
    twin = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    twin.load_state_dict(net.state_dict())
    named = list(twin.named_parameters())
    shuffled = optim.SGD([named[3], named[0], named[2], named[1]], lr=0.1, momentum=0.9)
    twin_rec = Recorder(twin, shuffled)
    for seed in range(3):
        train_step(net, opt, rec, seed=seed)
        train_step(twin, shuffled, twin_rec, seed=seed)
    for kind in PARAM_SERIES:
        np.testing.assert_allclose(twin_rec.series(kind), rec.series(kind), rtol=1e-6,
                                   err_msg=kind)
    np.testing.assert_allclose(twin_rec.series("global_grad_norm"),
                               rec.series("global_grad_norm"), rtol=1e-6)


def test_derived_series_follow_the_stored_ones():
    net, opt, rec = setup()
    net[0].weight.requires_grad = False        # no gradient: a frozen, unchanged parameter
    for seed in range(3):
        train_step(net, opt, rec, seed=seed)
    update, param = rec.series("update_norm"), rec.series("param_norm")
    np.testing.assert_allclose(rec.series("update_ratio"), update / param)
    np.testing.assert_array_equal(rec.series("frozen"), (update == 0).astype(float))
    assert rec.series("frozen", "0.weight").tolist() == [1.0, 1.0, 1.0]
    grad = rec.series("grad_norm")
    np.testing.assert_allclose(rec.series("global_grad_norm"), np.sqrt((grad ** 2).sum(axis=1)))


def test_a_step_report_reads_as_columns_and_as_records():
    w, b = nn.Parameter([3.0, 4.0]), nn.Parameter([0.0])
    opt = optim.SGD([("w", w), ("b", b)], lr=0.5)
    assert len(opt.last_step) == 0 and list(opt.last_step) == []
    opt.record_steps = True
    w.grad, b.grad = dt.tensor([3.0, 4.0]), dt.tensor([0.0])
    opt.step()
    report = opt.last_step
    assert report.names == ["w", "b"] and report.params[0] is w
    assert report.grad_norms == [5.0, 0.0] and report.clipped_grad_norms == [5.0, 0.0]
    assert report.update_norms == pytest.approx([2.5, 0.0])
    assert report.param_norms == pytest.approx([2.5, 0.0]) and report.lrs == [0.5, 0.5]
    first = report[0]
    assert (first.name, first.grad_norm, first.lr) == ("w", 5.0, 0.5)
    assert first.update.tolist() == [-1.5, -2.0]
    assert [r.name for r in report] == ["w", "b"] and "StepRecord('w'" in repr(report)


def test_a_step_report_keeps_squared_norms_in_named_fields():
    # grad_sq, clipped_sq, update_sq and param_sq: one squared norm per parameter each; the
    # norm columns are their square roots.
    w, b = nn.Parameter([3.0, 4.0]), nn.Parameter([0.0, 1.0])
    opt = optim.SGD([("w", w), ("b", b)], lr=1.0, grad_clip=optim.ClipGradByGlobalNorm(1.0))
    opt.record_steps = True
    w.grad, b.grad = dt.tensor([3.0, 4.0]), dt.tensor([0.0, 0.0])
    opt.step()
    report = opt.last_step
    assert report.grad_sq == [25.0, 0.0]                         # gradients as backward left them
    scale = 1.0 / 5.0                                            # the global norm 5 clipped to 1
    assert report.clipped_sq == pytest.approx([25.0 * scale ** 2, 0.0])
    assert report.update_sq == pytest.approx([1.0, 0.0])         # the update is the clipped grad
    assert report.param_sq == pytest.approx([(3 - 0.6) ** 2 + (4 - 0.8) ** 2, 1.0])
    assert report.clipped_grad_norms == pytest.approx([1.0, 0.0])
    last = report[-1]                                            # counts from the end
    assert last.name == "b" and last.param_norm == 1.0 and last.grad_norm == 0.0
    with pytest.raises(IndexError):
        report[2]
