"""Initializer objects (``dltutor.nn.init``'s classes) that a layer takes or a parameter is
given, and per-parameter learning rates: the Paddle FAQs' answers, translated line by line
(issue #15; their ``clear_grad`` is in tests/optim/test_optim.py).

Each test quotes the Paddle line it translates. The formulas are written out here; the objects
must give exactly what the functions of ``dltutor.nn.init`` give after the same seed (one
implementation). Statistical checks allow 5 standard errors of the sample, so they pass by
chance essentially always and still fail when the spread or the centre is wrong.
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


def _rng_state():
    return rng.generator().bit_generator.state


def _sample_mean_and_std_ok(values, mean, std):
    """Sample mean and std of ``values`` (i.i.d. normal) within 5 standard errors."""
    values = np.asarray(values, dtype=np.float64).ravel()
    n = values.size
    return (abs(values.mean() - mean) < 5 * std / math.sqrt(n)
            and abs(values.std() - std) < 5 * std / math.sqrt(2 * n))


# ---------------------------------------------------------------------------------------------
# FAQ (000/001): "how do I load my word vectors into paddle.nn.Embedding?"
#   Read them into NumPy, then initialize the embedding's weight with initializer.Assign.
# ---------------------------------------------------------------------------------------------
def test_load_my_word_vectors_with_assign():
    vectors = np.random.default_rng(0).standard_normal((10, 4)).astype("float32")
    emb = nn.Embedding(10, 4, weight_init=init.Assign(vectors))
    np.testing.assert_array_equal(emb.weight.numpy(), vectors)
    assert emb(dt.tensor([3])).numpy().tolist() == [vectors[3].tolist()]


def test_assign_keeps_the_values_it_was_given():
    vectors = np.ones((3, 2), dtype=np.float32)
    assign = init.Assign(vectors)
    vectors[:] = 7.0                       # changing the array afterwards changes nothing
    emb = nn.Embedding(3, 2, weight_init=assign)
    assert (emb.weight.numpy() == 1.0).all()
    with dt.no_grad():
        emb.weight.fill_(0.0)
    emb.reset_parameters()                 # the initializer is applied again
    assert (emb.weight.numpy() == 1.0).all()


def test_embedding_takes_the_table_one_way_only():
    table = nn.Parameter(dt.zeros(2, 2))
    refused(lambda: nn.Embedding(2, 2, _weight=table, weight_init=init.Constant(1.0)),
            ValueError, "Embedding", "_weight", "weight_init")


# ---------------------------------------------------------------------------------------------
# FAQ (000/001): "how do I change a fully connected layer's weight and bias?"
#   ParamAttr(initializer=Normal(0.0, 0.02), learning_rate=2.0); learning_rate 0 means the
#   layer does not train; or build a NumPy array and set it with Assign.
# ---------------------------------------------------------------------------------------------
def test_a_layer_with_its_own_initializer_and_learning_rate():
    dt.manual_seed(0)
    fc = nn.Linear(50, 80, weight_init=init.Normal(0.0, 0.02))
    fc.weight.lr_mult = 2.0
    assert _sample_mean_and_std_ok(fc.weight.numpy(), 0.0, 0.02)
    opt = optim.SGD(fc.parameters(), lr=0.1)
    x = dt.ones(1, 50)
    fc(x).sum().backward()
    before_w, before_b = fc.weight.numpy().copy(), fc.bias.numpy().copy()
    opt.step()
    # d sum(x W^T + b) / dW = x = 1 for every entry; lr 0.1 times lr_mult 2 for the weight only
    np.testing.assert_allclose(fc.weight.numpy(), before_w - 0.1 * 2.0 * 1.0, rtol=1e-6)
    np.testing.assert_allclose(fc.bias.numpy(), before_b - 0.1 * 1.0, rtol=1e-6)


def test_learning_rate_zero_keeps_the_layer_as_it_was():
    fc = nn.Linear(3, 2)
    fc.weight.lr_mult = fc.bias.lr_mult = 0.0
    before = fc.state_dict()
    before = {k: v.numpy().copy() for k, v in before.items()}
    opt = optim.SGD(fc.parameters(), lr=0.5)
    fc(dt.ones(4, 3)).sum().backward()
    opt.step()
    for name, value in fc.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[name])


def test_set_the_weights_from_a_numpy_array():
    values = np.arange(8, dtype=np.float32).reshape(2, 4)       # (out, in), as in PyTorch
    fc = nn.Linear(4, 2, weight_init=init.Assign(values), bias_init=init.Assign([0.5, -0.5]))
    np.testing.assert_array_equal(fc.weight.numpy(), values)
    assert fc(dt.ones(1, 4)).numpy().tolist() == [[0 + 1 + 2 + 3 + 0.5, 4 + 5 + 6 + 7 - 0.5]]


def test_a_paddle_layout_weight_is_refused_with_the_transpose_named():
    paddle_weight = np.zeros((4, 2), dtype=np.float32)          # Paddle's Linear(4, 2): (in, out)
    refused(lambda: nn.Linear(4, 2, weight_init=init.Assign(paddle_weight)), ValueError,
            "Assign", "(2, 4)", "(4, 2)", "transpose", "values.T")
    fc = nn.Linear(4, 2, weight_init=init.Assign(paddle_weight.T))
    assert fc.weight.shape == (2, 4)


# ---------------------------------------------------------------------------------------------
# Dive into Deep Learning 5.2 (003), Paddle edition: built-in, Xavier, constant 42, custom
# init, direct set. Its code makes objects without calling them (which changes nothing);
# the translation calls each object on the parameter.
# ---------------------------------------------------------------------------------------------
def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def test_d2l_init_normal_and_zero_bias():
    def init_normal(m):                       # Paddle: initializer.Normal(mean=0.0, std=0.01)
        if type(m) == nn.Linear:                                       # noqa: E721 - as d2l writes it
            init.Normal(mean=0.0, std=0.01)(m.weight)
            init.Constant(0.0)(m.bias)

    def init_normal_pytorch(m):               # what the chapters write
        if type(m) == nn.Linear:                                       # noqa: E721 - as d2l writes it
            init.normal_(m.weight, mean=0.0, std=0.01)
            init.zeros_(m.bias)

    dt.manual_seed(0)
    net = _net().apply(init_normal)
    dt.manual_seed(0)
    expected = _net().apply(init_normal_pytorch)
    for i in (0, 2):
        np.testing.assert_array_equal(net[i].weight.numpy(), expected[i].weight.numpy())
        assert (net[i].bias.numpy() == 0).all()
    assert 0 < np.abs(net[0].weight.numpy()).max() < 6 * 0.01


def test_d2l_init_constant():
    net = _net()
    net.apply(lambda m: init.Constant(value=1)(m.weight) if type(m) == nn.Linear else None)  # noqa: E721 - as d2l writes it
    assert (net[0].weight.numpy() == 1).all() and (net[2].weight.numpy() == 1).all()


def test_d2l_xavier_for_one_block_and_42_for_another():
    def xavier(m):
        if type(m) == nn.Linear:                                       # noqa: E721 - as d2l writes it
            init.XavierUniform()(m.weight)

    def init_42(m):
        if type(m) == nn.Linear:                                       # noqa: E721 - as d2l writes it
            init.Constant(42)(m.weight)

    net = _net()
    net[0].apply(xavier)
    net[2].apply(init_42)
    assert np.abs(net[0].weight.numpy()).max() <= math.sqrt(6 / (4 + 8))
    assert (net[2].weight.numpy() == 42).all() and not (net[0].weight.numpy() == 42).any()


def test_d2l_the_parameter_goes_in_the_call_not_in_the_constructor():
    # d2l's Paddle edition writes XavierUniform(m.weight): in Paddle that passes the weight as
    # fan_in. Here it is refused, with the call that was meant.
    net = _net()
    refused(lambda: init.XavierUniform(net[0].weight), TypeError,
            "XavierUniform", "fan_in", "init.XavierUniform()(layer.weight)", state=[net])
    refused(lambda: init.Normal(net[0].weight), TypeError, "Normal", "mean", state=[net])


def test_d2l_custom_init_uniform_then_zero_the_small_ones():
    def my_init(m):
        if type(m) == nn.Linear:                                       # noqa: E721 - as d2l writes it
            init.Uniform(-10, 10)(m.weight)
            with dt.no_grad():
                m.weight *= m.weight.abs() >= 5

    dt.manual_seed(0)
    net = _net()
    net.apply(my_init)
    w = np.abs(net[0].weight.numpy())
    assert ((w == 0) | ((w >= 5) & (w <= 10))).all() and (w > 0).any() and (w == 0).any()


def test_d2l_set_the_value_directly():
    net = _net()
    before = net[0].weight.numpy().copy()
    net[0].weight.set_value(net[0].weight.numpy() + 1)
    np.testing.assert_allclose(net[0].weight.numpy(), before + 1)


# ---------------------------------------------------------------------------------------------
# Each object is its function (one implementation), and the numbers follow the formulas.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, apply", [
    (lambda: init.Normal(0.5, 0.1), lambda p: init.normal_(p, 0.5, 0.1)),
    (lambda: init.Uniform(-0.3, 0.2), lambda p: init.uniform_(p, -0.3, 0.2)),
    (lambda: init.TruncatedNormal(0.0, 0.5, -0.6, 0.4),
     lambda p: init.trunc_normal_(p, 0.0, 0.5, -0.6, 0.4)),
    (lambda: init.Constant(-2.5), lambda p: init.constant_(p, -2.5)),
    (lambda: init.XavierUniform(), lambda p: init.xavier_uniform_(p)),
    (lambda: init.XavierNormal(gain=2.0), lambda p: init.xavier_normal_(p, gain=2.0)),
    (lambda: init.KaimingUniform(), lambda p: init.kaiming_uniform_(p, 0.0, "fan_in", "relu")),
    (lambda: init.KaimingNormal(negative_slope=0.1, nonlinearity="leaky_relu"),
     lambda p: init.kaiming_normal_(p, 0.1, "fan_in", "leaky_relu")),
    (lambda: init.KaimingNormal(mode="fan_out"),
     lambda p: init.kaiming_normal_(p, 0.0, "fan_out", "relu")),
])
def test_each_object_gives_what_its_function_gives(make, apply):
    dt.manual_seed(7)
    a = make()(nn.Parameter(dt.zeros(30, 20)))
    dt.manual_seed(7)
    b = apply(nn.Parameter(dt.zeros(30, 20)))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_paddle_positional_order_means_what_it_means_in_paddle():
    # XavierUniform(fan_in, fan_out, gain) and KaimingNormal(fan_in, negative_slope, ...):
    # the third argument is the gain, the second the slope, as in Paddle.
    assert init.XavierUniform(None, None, 2.0).gain == 2.0
    kaiming = init.KaimingNormal(None, 0.2, "leaky_relu")
    assert (kaiming.negative_slope, kaiming.nonlinearity, kaiming.mode) == (0.2, "leaky_relu",
                                                                           "fan_in")


def test_normal_sample_mean_and_std():
    dt.manual_seed(0)
    w = init.Normal(0.5, 0.1)(nn.Parameter(dt.zeros(200, 200))).numpy()
    assert _sample_mean_and_std_ok(w, 0.5, 0.1)
    # The check can fail: one standard error is 0.1/sqrt(2 * 40000) = 0.00035 for the std and
    # 0.1/200 = 0.0005 for the mean, so 3 % off in the std or 0.01 off in the mean is refused.
    assert not _sample_mean_and_std_ok(w, 0.5, 0.103)
    assert not _sample_mean_and_std_ok(w, 0.51, 0.1)


def test_xavier_uniform_bound_and_spread_follow_the_formula():
    dt.manual_seed(0)
    w = init.XavierUniform()(nn.Parameter(dt.zeros(200, 300))).numpy().astype(np.float64)
    bound = math.sqrt(6 / (300 + 200))                 # fan_in 300, fan_out 200
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.999 * bound
    # U(-b, b) has std b/sqrt(3); the sample std's standard error is about 0.2 % here
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound / math.sqrt(3)


def test_kaiming_normal_spread_uses_the_fan_in_or_the_fan_out():
    dt.manual_seed(0)
    w = init.KaimingNormal()(nn.Parameter(dt.zeros(200, 128))).numpy()
    assert _sample_mean_and_std_ok(w, 0.0, math.sqrt(2 / 128))       # ReLU gain, fan_in 128
    w = init.KaimingNormal(mode="fan_out")(nn.Parameter(dt.zeros(200, 128))).numpy()
    assert _sample_mean_and_std_ok(w, 0.0, math.sqrt(2 / 200))


def test_kaiming_of_a_conv_kernel_uses_channels_times_kernel_size():
    dt.manual_seed(0)
    conv = nn.Conv2d(16, 64, 3, weight_init=init.KaimingNormal())
    assert _sample_mean_and_std_ok(conv.weight.numpy(), 0.0, math.sqrt(2 / (16 * 3 * 3)))


def test_truncated_normal_stays_inside_its_bounds():
    dt.manual_seed(0)
    w = init.TruncatedNormal(0.0, 0.02, a=-0.04, b=0.04)(nn.Parameter(dt.zeros(100, 100)))
    w = w.numpy()
    assert w.min() >= -0.04 and w.max() <= 0.04 and w.max() > 0.039
    # a normal cut at ±2 std has std 0.02 * 0.8796 (its variance shrinks by the cut)
    assert abs(w.astype(np.float64).std() / (0.02 * 0.8796) - 1) < 0.02


def test_repr_shows_the_arguments():
    assert repr(init.Normal(0.0, 0.02)) == "Normal(mean=0.0, std=0.02)"
    assert repr(init.Constant(42)) == "Constant(value=42)"
    assert repr(init.TruncatedNormal(std=0.02)) == \
        "TruncatedNormal(mean=0.0, std=0.02, a=-2.0, b=2.0)"
    assert repr(init.KaimingUniform()) == \
        "KaimingUniform(negative_slope=0.0, nonlinearity='relu', mode='fan_in')"
    assert repr(init.Assign(np.zeros((3, 2)))) == "Assign(shape=(3, 2))"


# ---------------------------------------------------------------------------------------------
# Refusals: when the object is made, naming the class and the argument; nothing drawn, nothing
# changed.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error, words", [
    (lambda: init.Normal(std=-1.0), ValueError, ["Normal", "std"]),
    (lambda: init.Normal(mean="0"), ValueError, ["Normal", "mean"]),
    (lambda: init.Normal(std=math.nan), ValueError, ["Normal", "std"]),
    (lambda: init.Uniform(1.0, -1.0), ValueError, ["Uniform", "low <= high"]),
    (lambda: init.Uniform(high=math.inf), ValueError, ["Uniform", "high", "finite"]),
    (lambda: init.TruncatedNormal(std=0.0), ValueError, ["TruncatedNormal", "std"]),
    (lambda: init.TruncatedNormal(a=1.0, b=-1.0), ValueError, ["TruncatedNormal", "a < b"]),
    (lambda: init.TruncatedNormal(0.0, 0.01, a=5.0, b=6.0), ValueError,
     ["TruncatedNormal", "absolute"]),
    (lambda: init.Constant(None), ValueError, ["Constant", "value"]),
    (lambda: init.XavierUniform(gain=math.nan), ValueError, ["XavierUniform", "gain"]),
    (lambda: init.XavierNormal(gain=-1.0), ValueError, ["XavierNormal", "gain"]),
    (lambda: init.XavierUniform(fan_in=10), ValueError, ["XavierUniform", "fan_in", "None"]),
    (lambda: init.XavierNormal(fan_out=10), ValueError, ["XavierNormal", "fan_out", "None"]),
    (lambda: init.KaimingUniform(64), ValueError, ["KaimingUniform", "fan_in", "None"]),
    (lambda: init.KaimingNormal(negative_slope="0.1"), ValueError,
     ["KaimingNormal", "negative_slope"]),
    (lambda: init.KaimingNormal(nonlinearity="relux"), ValueError, ["relux", "relu"]),
    (lambda: init.KaimingNormal(mode="fan_avg"), ValueError, ["KaimingNormal", "mode", "fan_out"]),
    (lambda: init.Assign("glove.txt"), TypeError, ["Assign"]),
    (lambda: init.Assign([[1.0, 2.0], [3.0]]), (TypeError, ValueError), ["Assign"]),
])
def test_bad_arguments_are_refused_when_the_object_is_made(make, error, words):
    state = _rng_state()
    refused(make, error, *words)
    assert _rng_state() == state                                    # nothing was drawn


@pytest.mark.parametrize("make, shape, words", [
    (lambda: init.Assign(np.ones((2, 3))), (3, 2), ["Assign", "(3, 2)", "(2, 3)"]),
    (lambda: init.Assign(np.ones(5)), (4,), ["Assign", "(4,)", "(5,)", "reshape"]),
    (lambda: init.XavierUniform(), (4,), ["xavier_uniform_", "(4,)"]),
    (lambda: init.KaimingNormal(), (4,), ["kaiming_normal_", "(4,)"]),
])
def test_a_refused_initialization_changes_nothing(make, shape, words):
    p = nn.Parameter(dt.full(shape, 3.0))
    state = _rng_state()
    refused(lambda: make()(p), ValueError, *words, state=[p])
    assert _rng_state() == state


# ---------------------------------------------------------------------------------------------
# The layers' keywords
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error, words", [
    (lambda: nn.Linear(2, 3, weight_init=0.02), TypeError, ["Linear", "weight_init"]),
    (lambda: nn.Conv2d(1, 2, 3, bias_init="zeros"), TypeError, ["Conv2d", "bias_init"]),
    (lambda: nn.Linear(2, 3, bias=False, bias_init=init.Constant(0.0)), ValueError,
     ["Linear", "bias=False"]),
    (lambda: nn.Conv2d(1, 2, 3, bias=False, bias_init=init.Constant(0.0)), ValueError,
     ["Conv2d", "bias=False"]),
    (lambda: nn.Embedding(4, 2, weight_init=[1.0]), TypeError, ["Embedding", "weight_init"]),
    (lambda: nn.Linear(2, 3, weight_init=init.Normal), TypeError,
     ["Linear", "weight_init", "class Normal", "parentheses"]),
    (lambda: nn.LazyLinear(3, weight_init="normal"), TypeError, ["LazyLinear", "weight_init"]),
])
def test_layer_keywords_are_checked_before_anything_is_drawn(make, error, words):
    state = _rng_state()
    refused(make, error, *words)
    assert _rng_state() == state


def test_without_initializers_a_layer_starts_as_pytorch_does():
    dt.manual_seed(3)
    plain = nn.Linear(6, 4)
    dt.manual_seed(3)
    w, b = nn.Parameter(dt.zeros(4, 6)), nn.Parameter(dt.zeros(4))
    init.reset_linear_(w, b)                              # PyTorch's default, written out
    np.testing.assert_array_equal(plain.weight.numpy(), w.numpy())
    np.testing.assert_array_equal(plain.bias.numpy(), b.numpy())


def test_an_initializer_keyword_is_the_chapters_make_then_initialize():
    # Paddle: Linear(6, 4, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)),
    #                bias_attr=ParamAttr(initializer=Constant(0.1)))
    dt.manual_seed(5)
    paddle_way = nn.Linear(6, 4, weight_init=init.Normal(0.0, 0.02),
                           bias_init=init.Constant(0.1))
    dt.manual_seed(5)
    chapters_way = nn.Linear(6, 4)                 # PyTorch: make the layer, then initialize
    init.normal_(chapters_way.weight, 0.0, 0.02)
    init.constant_(chapters_way.bias, 0.1)
    np.testing.assert_array_equal(paddle_way.weight.numpy(), chapters_way.weight.numpy())
    np.testing.assert_array_equal(paddle_way.bias.numpy(), chapters_way.bias.numpy())


def test_the_default_bias_does_not_depend_on_the_weights_initializer():
    dt.manual_seed(3)
    plain = nn.Linear(6, 4)
    dt.manual_seed(3)
    custom = nn.Linear(6, 4, weight_init=init.Constant(0.0))
    np.testing.assert_array_equal(custom.bias.numpy(), plain.bias.numpy())
    assert (custom.weight.numpy() == 0).all()


def test_the_printout_does_not_change():
    assert repr(nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02))) == repr(nn.Linear(4, 8))
    assert repr(nn.Conv2d(1, 2, 3, bias_init=init.Constant(0.0))) == repr(nn.Conv2d(1, 2, 3))
    assert repr(nn.Embedding(3, 2, weight_init=init.Constant(1.0))) == repr(nn.Embedding(3, 2))


def test_reset_parameters_applies_the_initializers_again():
    conv = nn.Conv2d(2, 3, 3, weight_init=init.Constant(0.25), bias_init=init.Constant(-1.0))
    with dt.no_grad():
        conv.weight.fill_(9.0)
        conv.bias.fill_(9.0)
    conv.reset_parameters()
    assert (conv.weight.numpy() == 0.25).all() and (conv.bias.numpy() == -1.0).all()


def test_a_function_works_as_an_initializer_too():
    layer = nn.Linear(2, 2, weight_init=lambda p: init.constant_(p, 3.0))
    assert (layer.weight.numpy() == 3.0).all()


def test_visiting_every_layer_with_apply():
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(30, 20), nn.ReLU(), nn.Linear(20, 10))
    net.apply(lambda m: init.XavierUniform()(m.weight) if isinstance(m, nn.Linear) else None)
    dt.manual_seed(0)
    expected = nn.Sequential(nn.Linear(30, 20), nn.ReLU(), nn.Linear(20, 10))
    init.xavier_uniform_(expected[0].weight)
    init.xavier_uniform_(expected[2].weight)
    for i in (0, 2):
        np.testing.assert_array_equal(net[i].weight.numpy(), expected[i].weight.numpy())

