"""dltutor.stats: layer statistics against hand computations, eval_mode, and no matplotlib."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.stats import activation_stats, as_model_input, eval_mode, gradient_stats


def _deep_net():
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 4))


def _hooks_removed(net) -> bool:
    return all(not m._forward_hooks for m in net.modules())


def test_activation_stats_match_a_hand_computation():
    net = _deep_net()
    x = dt.randn(64, 16)
    stats = activation_stats(net, x)
    h, expected = x, []
    with dt.no_grad():
        for name, layer in net.named_children():
            h = layer(h)
            expected.append((name, float(np.mean(h.numpy())), float(np.std(h.numpy()))))
    assert [s[0] for s in stats] == ["0", "1", "2", "3", "4"]
    for (name, mean, std), (ename, emean, estd) in zip(stats, expected):
        assert name == ename
        assert mean == pytest.approx(emean, rel=1e-6, abs=1e-9)
        assert std == pytest.approx(estd, rel=1e-6)
    assert _hooks_removed(net)


def test_gradient_stats_are_gradients_of_the_layer_outputs():
    net = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3))
    x = dt.randn(10, 5)
    net[2].weight.grad = dt.ones(3, 6)                    # must survive untouched
    stats = gradient_stats(net, x)
    # by hand: d(sum out)/d(out) = 1; back through Linear 2 then tanh
    W2 = net[2].weight.numpy()
    with dt.no_grad():
        h0 = net[0](x).numpy()
    g2 = np.ones((10, 3))
    g1 = g2 @ W2
    g0 = g1 * (1 - np.tanh(h0) ** 2)
    expected = [np.std(g0), np.std(g1), np.std(g2)]
    assert [name for name, _, _ in stats] == ["0", "1", "2"]
    assert [std for _, _, std in stats] == pytest.approx(expected, rel=1e-5, abs=1e-12)
    assert net[0].weight.grad is None
    np.testing.assert_array_equal(net[2].weight.grad.numpy(), np.ones((3, 6)))
    assert _hooks_removed(net)


def test_eval_mode_restores_each_modules_own_flag():
    net = nn.Sequential(nn.Linear(2, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    net[2].eval()                                    # frozen statistics, on purpose
    with eval_mode(net) as same:
        assert same is net and not any(m.training for m in net.modules())
    assert [m.training for m in net.modules()] == [True, True, True, False]


def test_eval_mode_restores_the_flags_after_an_error():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    net[1].eval()
    with pytest.raises(RuntimeError, match="inside"):
        with eval_mode(net):
            raise RuntimeError("inside the block")
    assert [m.training for m in net.modules()] == [True, True, False]


def test_eval_mode_switches_dropout_off():
    net = nn.Sequential(nn.Dropout(0.5))
    x = dt.ones(4, 8)
    with eval_mode(net), dt.no_grad():
        np.testing.assert_array_equal(net(x).numpy(), x.numpy())


def test_as_model_input_takes_the_models_dtype():
    net = nn.Linear(2, 1).double()
    x = as_model_input(net, np.zeros((3, 2), dtype=np.float32), requires_grad=True)
    assert x.dtype == np.float64 and x.requires_grad
    labels = as_model_input(net, np.array([1, 2, 3]))
    assert labels.dtype == np.int64                  # only float data takes the model's dtype


def test_stats_need_no_matplotlib():
    code = ("import sys\n"
            "import dltutor as dt, dltutor.data, dltutor.diagnose, dltutor.stats\n"
            "from dltutor import nn, stats\n"
            "stats.activation_stats(nn.Sequential(nn.Linear(2, 2)), dt.ones(3, 2))\n"
            "stats.gradient_stats(nn.Sequential(nn.Linear(2, 2)), dt.ones(3, 2))\n"
            "assert 'matplotlib' not in sys.modules, 'dltutor.stats imported matplotlib'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
