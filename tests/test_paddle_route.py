"""The Paddle FAQs' answers, translated line by line (issue #15): initializer objects that a
layer takes or a parameter is given, per-parameter learning rates, ``clear_grad``.

The formulas are written out here; the objects must give exactly what the functions of
``dltutor.nn.init`` give after the same seed (one implementation).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from bad_input import refused
from dltutor import nn, optim
from dltutor.autograd import rng
from dltutor.nn import init


def test_load_my_word_vectors_with_assign():
    # FAQ: read the vectors into NumPy, then initialize the embedding with Assign.
    vectors = np.random.default_rng(0).standard_normal((10, 4)).astype("float32")
    emb = nn.Embedding(10, 4, weight_init=init.Assign(vectors))
    np.testing.assert_array_equal(emb.weight.numpy(), vectors)
    assert emb(dt.tensor([3])).numpy().tolist() == [vectors[3].tolist()]


def test_a_layer_with_its_own_initializer_and_learning_rate():
    # FAQ: ParamAttr(initializer=Normal(0.0, 0.02), learning_rate=2.0)
    dt.manual_seed(0)
    fc = nn.Linear(50, 80, weight_init=init.Normal(0.0, 0.02))
    fc.weight.lr_mult = 2.0
    w = fc.weight.numpy().astype(np.float64)
    assert abs(w.std() - 0.02) < 5 * 0.02 / math.sqrt(2 * w.size)     # 5 standard errors
    opt = optim.SGD(fc.parameters(), lr=0.1)
    x = dt.ones(1, 50)
    fc(x).sum().backward()
    before_w, before_b = fc.weight.numpy().copy(), fc.bias.numpy().copy()
    opt.step()
    # d sum(x W^T + b) / dW = 1 for every entry; lr 0.1 times lr_mult 2 for the weight only
    np.testing.assert_allclose(fc.weight.numpy(), before_w - 0.1 * 2.0 * 1.0, rtol=1e-6)
    np.testing.assert_allclose(fc.bias.numpy(), before_b - 0.1 * 1.0, rtol=1e-6)


@pytest.mark.parametrize("make, apply", [
    (lambda: init.Normal(0.5, 0.1), lambda p: init.normal_(p, 0.5, 0.1)),
    (lambda: init.Uniform(-0.3, 0.2), lambda p: init.uniform_(p, -0.3, 0.2)),
    (lambda: init.XavierUniform(), lambda p: init.xavier_uniform_(p)),
    (lambda: init.XavierNormal(gain=2.0), lambda p: init.xavier_normal_(p, gain=2.0)),
    (lambda: init.KaimingUniform(), lambda p: init.kaiming_uniform_(p, 0.0, "fan_in", "relu")),
    (lambda: init.KaimingNormal(0.1, "leaky_relu"),
     lambda p: init.kaiming_normal_(p, 0.1, "fan_in", "leaky_relu")),
])
def test_each_object_gives_what_its_function_gives(make, apply):
    dt.manual_seed(7)
    a = make()(nn.Parameter(dt.zeros(30, 20)))
    dt.manual_seed(7)
    b = apply(nn.Parameter(dt.zeros(30, 20)))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_xavier_uniform_bound_and_spread_follow_the_formula():
    dt.manual_seed(0)
    w = init.XavierUniform()(nn.Parameter(dt.zeros(200, 300))).numpy().astype(np.float64)
    bound = math.sqrt(6 / (300 + 200))
    assert np.abs(w).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound          # U(-b, b) has std b/sqrt(3)


def test_kaiming_normal_spread_uses_the_fan_in():
    dt.manual_seed(0)
    w = init.KaimingNormal()(nn.Parameter(dt.zeros(200, 128))).numpy().astype(np.float64)
    assert abs(w.std() / math.sqrt(2 / 128) - 1) < 0.02


def test_constant_and_visiting_every_layer():
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    net.apply(lambda m: init.Constant(42)(m.weight) if isinstance(m, nn.Linear) else None)
    assert (net[0].weight.numpy() == 42).all() and (net[2].weight.numpy() == 42).all()
    assert repr(init.Constant(42)) == "Constant(value=42)"


@pytest.mark.parametrize("make, error, words", [
    (lambda: init.Normal(std=-1.0), ValueError, ["Normal", "std"]),
    (lambda: init.Normal(mean="0"), ValueError, ["Normal", "mean"]),
    (lambda: init.Uniform(1.0, -1.0), ValueError, ["Uniform", "low <= high"]),
    (lambda: init.Constant(None), ValueError, ["Constant", "value"]),
    (lambda: init.XavierUniform(gain=math.nan), ValueError, ["XavierUniform", "gain"]),
    (lambda: init.KaimingNormal(nonlinearity="relux"), ValueError, ["relux", "relu"]),
    (lambda: init.Assign("glove.txt"), TypeError, ["Assign"]),
])
def test_bad_arguments_are_refused_when_the_object_is_made(make, error, words):
    state = rng.generator().bit_generator.state
    refused(make, error, *words)
    assert rng.generator().bit_generator.state == state               # nothing was drawn


def test_assign_of_the_wrong_shape_changes_nothing():
    p = nn.Parameter(dt.zeros(3, 2))
    refused(lambda: init.Assign(np.ones((2, 3)))(p), ValueError, "(3, 2)", "(2, 3)", state=[p])


def test_layer_keywords_are_checked_when_the_layer_is_made():
    refused(lambda: nn.Linear(2, 3, weight_init=0.02), TypeError, "Linear", "weight_init")
    refused(lambda: nn.Conv2d(1, 2, 3, bias_init="zeros"), TypeError, "Conv2d", "bias_init")
    refused(lambda: nn.Linear(2, 3, bias=False, bias_init=init.Constant(0.0)), ValueError,
            "bias=False")
    refused(lambda: nn.Embedding(4, 2, weight_init=[1.0]), TypeError, "Embedding")


def test_the_default_bias_does_not_depend_on_the_weights_initializer():
    dt.manual_seed(3)
    plain = nn.Linear(6, 4)
    dt.manual_seed(3)
    custom = nn.Linear(6, 4, weight_init=init.Constant(0.0))
    np.testing.assert_array_equal(custom.bias.numpy(), plain.bias.numpy())
    assert (custom.weight.numpy() == 0).all()


def test_reset_parameters_applies_the_initializers_again():
    conv = nn.Conv2d(2, 3, 3, weight_init=init.Constant(0.25), bias_init=init.Constant(-1.0))
    with dt.no_grad():
        conv.weight.fill_(9.0)
        conv.bias.fill_(9.0)
    conv.reset_parameters()
    assert (conv.weight.numpy() == 0.25).all() and (conv.bias.numpy() == -1.0).all()


def test_a_lazy_layer_applies_its_initializers_when_it_creates_its_parameters():
    lazy = nn.LazyLinear(3, weight_init=init.Constant(0.5), bias_init=init.Constant(0.0))
    lazy(dt.ones(1, 4))
    assert lazy.weight.shape == (3, 4) and (lazy.weight.numpy() == 0.5).all()
    assert (lazy.bias.numpy() == 0).all()


def test_a_function_works_as_an_initializer_too():
    layer = nn.Linear(2, 2, weight_init=lambda p: init.constant_(p, 3.0))
    assert (layer.weight.numpy() == 3.0).all()


def test_clear_grad_is_zero_grad():
    w = nn.Parameter([1.0, 2.0])
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    assert w.grad is not None
    opt.clear_grad()
    assert w.grad is None
