"""Chapter 03 (initialization): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import torch
from torch import nn

from chapters import chapter_definition, paddle_dynamic
from claims import claim


# ---------------------------------------------------------------------------------- PyTorch
@claim("torch-init-linear-default-uniform-weight-bias")
def test_torch_linear_default_is_uniform_one_over_sqrt_fan_in_for_weight_and_bias():
    torch.manual_seed(0)
    wide = nn.Linear(1000, 500)
    bound = 1 / math.sqrt(1000)
    w, b = wide.weight.detach().numpy(), wide.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.999 * bound and np.abs(b).max() > 0.9 * bound
    assert abs(w.std() / (bound / math.sqrt(3)) - 1) < 0.01        # uniform, not normal
    assert abs(b.std() / (bound / math.sqrt(3)) - 1) < 0.15        # the bias too, not zeros


@claim("torch-init-linear-kaiming-a-sqrt5")
def test_torch_linear_reset_parameters_is_kaiming_uniform_a_sqrt5_weight_then_bias():
    source = inspect.getsource(nn.Linear.reset_parameters)
    assert "kaiming_uniform_(self.weight, a=math.sqrt(5))" in source
    gain = nn.init.calculate_gain("leaky_relu", math.sqrt(5))
    assert math.isclose(gain, 1 / math.sqrt(3))
    assert math.isclose(gain, math.sqrt(2 / (1 + 5)))
    assert math.isclose(math.sqrt(3) * gain / math.sqrt(1000), 1 / math.sqrt(1000))
    torch.manual_seed(0)
    layer = nn.Linear(1000, 500)
    torch.manual_seed(0)
    by_hand = nn.init.kaiming_uniform_(torch.empty(500, 1000), a=math.sqrt(5))
    bias = nn.init.uniform_(torch.empty(500), -1 / math.sqrt(1000), 1 / math.sqrt(1000))
    assert torch.equal(by_hand, layer.weight.detach())            # bit for bit: weight first ...
    assert torch.equal(bias, layer.bias.detach())                 # ... then the bias


@claim("torch-init-calculate-gain-table")
def test_torch_calculate_gain_table():
    g = nn.init.calculate_gain
    assert g("linear") == 1 and g("sigmoid") == 1
    assert math.isclose(g("tanh"), 5 / 3)
    assert math.isclose(g("relu"), math.sqrt(2))
    assert math.isclose(g("leaky_relu"), math.sqrt(2 / (1 + 0.01 ** 2)))   # default slope 0.01
    assert math.isclose(g("leaky_relu", 0.2), math.sqrt(2 / (1 + 0.2 ** 2)))
    assert math.isclose(g("selu"), 3 / 4)


@claim("torch-init-data-is-a-tensor")
def test_torch_data_is_a_tensor_with_in_place_methods():
    torch.manual_seed(0)
    m = nn.Linear(4, 8)
    assert isinstance(m.weight.data, torch.Tensor)
    m.weight.data.normal_(0, 0.01)                   # the D2L / tutorial lines run ...
    m.bias.data.fill_(0)
    assert torch.all(m.bias == 0)                     # ... and change the parameter itself
    assert 0.002 < float(m.weight.detach().std()) < 0.02
    assert isinstance(m.weight.data.abs(), torch.Tensor)


@claim("torch-init-tensor-methods-need-no-grad")
def test_torch_in_place_methods_on_a_parameter_need_no_grad():
    m = nn.Linear(4, 8)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        m.weight.normal_(0, 0.01)
    with torch.no_grad():
        m.weight.normal_(0, 0.01)
        m.bias.fill_(0)
    assert torch.all(m.bias == 0) and float(m.weight.detach().abs().max()) < 0.05


@claim("torch-init-functions-in-place")
def test_torch_init_functions_change_an_existing_tensor_in_place():
    layer = nn.Linear(400, 300)
    weight = layer.weight
    returned = nn.init.normal_(layer.weight, 0.0, 0.02)
    assert returned is weight and layer.weight is weight             # the same object
    assert abs(float(layer.weight.detach().std()) - 0.02) < 0.001    # with new values


@claim("torch-init-copy-array-in-no-grad")
def test_torch_copy_an_array_in_and_change_entries_under_no_grad():
    p = nn.Linear(4, 8).weight
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    before = p
    with torch.no_grad():
        p.copy_(torch.from_numpy(a))
    assert np.array_equal(p.detach().numpy(), a)
    with torch.no_grad():
        p[0, 0] = 42
    assert float(p[0, 0]) == 42 and p is before and p.requires_grad
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p[0, 0] = 1                                                  # outside no_grad: refused


@claim("torch-embedding-from-pretrained-frozen")
def test_torch_embedding_from_pretrained_is_frozen_by_default():
    vectors = torch.arange(20, dtype=torch.float32).reshape(5, 4)
    emb = nn.Embedding.from_pretrained(vectors)
    assert emb.weight.requires_grad is False
    assert nn.Embedding.from_pretrained(vectors, freeze=False).weight.requires_grad is True
    head = nn.Linear(4, 2)
    head(emb(torch.tensor([0, 1, 3]))).sum().backward()
    assert emb.weight.grad is None and head.weight.grad is not None
    assert torch.equal(emb(torch.tensor([3])), vectors[3:4])


@claim("torch-linear-weight-layout-out-in")
def test_torch_linear_weight_is_out_by_in():
    fc = nn.Linear(16, 4)
    assert tuple(fc.weight.shape) == (4, 16)
    h = torch.randn(5, 16)
    expected = h @ fc.weight.T + fc.bias
    assert torch.allclose(fc(h), expected, atol=1e-6)


@claim("torch-lazy-linear-becomes-linear")
def test_torch_lazy_linear_starts_uninitialized_and_becomes_linear():
    torch.manual_seed(0)
    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    assert isinstance(net[0].weight, nn.parameter.UninitializedParameter)
    with pytest.raises(ValueError, match="uninitialized parameter"):
        sum(p.numel() for p in net.parameters())
    assert tuple(net(torch.rand(2, 20)).shape) == (2, 10)
    assert type(net[0]) is nn.Linear and net[0].in_features == 20
    assert not isinstance(net[0].weight, nn.parameter.UninitializedParameter)
    assert [tuple(p.shape) for p in net.parameters()] == [(256, 20), (256,), (10, 256), (10,)]
    assert float(net[0].weight.detach().abs().max()) <= 1 / math.sqrt(20)     # the default, fan_in 20


@claim("torch-lazy-optimizer-before-first-batch")
def test_torch_optimizer_made_before_the_first_batch():
    x = torch.randn(4, 5)
    for make in (lambda ps: torch.optim.SGD(ps, lr=0.1), lambda ps: torch.optim.Adam(ps, lr=0.1)):
        torch.manual_seed(0)
        lazy = nn.LazyLinear(3)
        opt = make(lazy.parameters())                    # built before the first forward
        lazy(x).pow(2).sum().backward()
        before = lazy.weight.detach().clone()
        opt.step()
        assert opt.param_groups[0]["params"][0] is lazy.weight        # the same object ...
        assert not torch.equal(before, lazy.weight.detach())         # ... which it updates
    lazy = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        torch.optim.Adagrad(lazy.parameters(), lr=0.1)   # its constructor reads the parameter
    # the documentation's recipe: dry run first, then the optimizer
    doc = inspect.getdoc(nn.modules.lazy.LazyModuleMixin)
    assert 'The lazy modules should then perform "dry runs" to initialize all' in doc
    assert doc.index("performs a dry run") < doc.index("attaches an optimizer, since parameters "
                                                       "can now be used as usual")


@claim("torch-lazy-load-state-dict-and-init-order")
def test_torch_lazy_load_state_dict_and_the_order_of_random_draws():
    full = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
    fresh = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    fresh.load_state_dict(full.state_dict())
    assert [tuple(p.shape) for p in fresh.parameters()] == [(256, 20), (256,), (10, 256), (10,)]
    x = torch.rand(2, 20)
    assert torch.equal(fresh(x), full(x))
    # same seed, one lazy layer first: the plain layer draws first, the lazy one at the first batch
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Linear(20, 8), nn.ReLU(), nn.Linear(8, 2))
    torch.manual_seed(0)
    mixed = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.Linear(8, 2))
    mixed(x)
    torch.manual_seed(0)
    first_draw = nn.Linear(8, 2)
    assert torch.equal(mixed[2].weight, first_draw.weight)        # the plain layer drew first
    assert not torch.equal(mixed[0].weight, plain[0].weight)      # other starting values


@claim("torch-module-double-float64")
def test_torch_module_double_makes_parameters_float64():
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).double()
    assert all(p.dtype == torch.float64 for p in net.parameters())
    assert net(torch.randn(2, 4, dtype=torch.float64)).dtype == torch.float64


@claim("torch-forward-hook-output-stds")
def test_torch_the_chapters_hook_code_runs_with_torch_for_dt():
    output_stds = chapter_definition("03_initialization", "def output_stds(model, x):",
                                     {"dt": torch})["output_stds"]     # torch for dt
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(3)]).double()
    x = torch.randn(16, 8, dtype=torch.float64)
    stds = output_stds(model, x)
    expected, h = [], x
    with torch.no_grad():
        for block in model:
            h = block(h)
            expected.append(h.numpy().std())                          # NumPy: divides by n
    assert len(stds) == 3 and np.allclose(stds, expected, rtol=1e-12)
    assert all(len(b._forward_hooks) == 0 for b in model)             # the handles removed them


@claim("torch-param-group-own-lr")
def test_torch_a_param_group_with_its_own_lr():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    opt = torch.optim.SGD([{"params": net[0].parameters()},
                           {"params": net[1].parameters(), "lr": 0.2}], lr=0.1)
    net(torch.randn(5, 4)).sum().backward()
    w0, w1 = net[0].weight.detach().clone(), net[1].weight.detach().clone()
    g0, g1 = net[0].weight.grad.clone(), net[1].weight.grad.clone()
    opt.step()
    assert torch.allclose(w0 - net[0].weight.detach(), 0.1 * g0, atol=1e-7)
    assert torch.allclose(w1 - net[1].weight.detach(), 0.2 * g1, atol=1e-7)


# ---------------------------------------------------------------------------------- Paddle
def _d2l_init_normal(paddle, nn):
    def init_normal(m):                                  # D2L's Paddle code, verbatim
        if type(m) == nn.Linear:
            paddle.nn.initializer.Normal(mean=0.0, std=0.01)
            paddle.zeros(m.bias)
    return init_normal


def _d2l_my_init(paddle, nn):
    def my_init(m):                                      # D2L's Paddle code, verbatim
        if type(m) == nn.Linear:
            paddle.nn.initializer.XavierUniform(m.weight, -10, 10)
            h = paddle.abs(m.weight) >= 5
            h = paddle.to_tensor(h)
            m = paddle.to_tensor(m.weight)
            m *= h
    return my_init


@claim("paddle-init-d2l-code-typeerror")
def test_paddle_d2l_init_code_stops_with_a_type_error_in_paddle_3():
    paddle = paddle_dynamic()
    nn = paddle.nn
    paddle.seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    before = [p.numpy().copy() for p in net.parameters()]
    with pytest.raises(TypeError, match=r"full\(\): argument \(position 1\) must be list, "
                                        r"tuple, int, or Tensor, but got EagerParamBase"):
        net.apply(_d2l_init_normal(paddle, nn))          # paddle.zeros(m.bias)
    with pytest.raises(TypeError, match="Type promotion only support calculations between "
                                        "floating-point numbers"):
        net.apply(_d2l_my_init(paddle, nn))              # m *= h: float32 times bool
    assert all(np.array_equal(a, p.numpy()) for a, p in zip(before, net.parameters()))
    zeros = paddle.zeros(net[0].bias.shape)              # given a shape: only a new tensor
    assert zeros is not net[0].bias and np.array_equal(net[0].bias.numpy(), before[1])


@claim("paddle-init-object-acts-only-when-called")
def test_paddle_initializer_object_acts_only_when_called_or_given_to_a_layer():
    paddle = paddle_dynamic()
    nn = paddle.nn
    paddle.seed(0)
    layer = nn.Linear(200, 100)
    original = layer.weight.numpy().copy()
    nn.initializer.Normal(mean=0.0, std=0.01)            # made and thrown away
    assert np.array_equal(layer.weight.numpy(), original)
    weight = layer.weight
    nn.initializer.Normal(0.0, 0.01)(layer.weight)       # called on the parameter
    assert layer.weight is weight and abs(layer.weight.numpy().std() - 0.01) < 0.001
    given = nn.Linear(200, 100, weight_attr=paddle.ParamAttr(
        initializer=nn.initializer.Normal(0.0, 0.02)))   # handed to the layer
    assert abs(given.weight.numpy().std() - 0.02) < 0.002


@claim("paddle-init-xavier-weight-as-fan-in")
def test_paddle_xavier_uniform_accepts_the_weight_as_fan_in():
    paddle = paddle_dynamic()
    w = paddle.nn.Linear(4, 8).weight
    original = w.numpy().copy()
    init = paddle.nn.initializer.XavierUniform(w, -10, 10)     # not refused
    assert list(inspect.signature(paddle.nn.initializer.XavierUniform).parameters)[:3] == [
        "fan_in", "fan_out", "gain"]
    assert init._fan_in is w and init._fan_out == -10 and init._gain == 10
    assert np.array_equal(w.numpy(), original)                 # and it changed nothing


@claim("paddle-init-to-tensor-copy-set-value")
def test_paddle_to_tensor_makes_a_copy_and_set_value_changes_the_parameter():
    paddle = paddle_dynamic()
    paddle.seed(0)
    layer = paddle.nn.Linear(4, 8)
    w = layer.weight
    original = w.numpy().copy()
    h = (paddle.abs(w) >= 0.25).astype("float32")
    m = paddle.to_tensor(w)
    m *= h
    assert m is not w and not np.array_equal(m.numpy(), original)    # the copy changed ...
    assert np.array_equal(w.numpy(), original)                        # ... the weight did not
    w.set_value(w * h)
    assert layer.weight is w
    assert np.array_equal(w.numpy(), original * (np.abs(original) >= 0.25))


@claim("paddle-init-assign-initializer")
def test_paddle_assign_initializer_copies_an_array_in():
    paddle = paddle_dynamic()
    w = paddle.nn.Linear(4, 8).weight
    values = np.arange(32, dtype=np.float32).reshape(4, 8)
    paddle.nn.initializer.Assign(values)(w)
    assert np.array_equal(w.numpy(), values)
    emb = paddle.nn.Embedding(6, 2, weight_attr=paddle.ParamAttr(
        initializer=paddle.nn.initializer.Assign(values.reshape(16, 2)[:6])))
    assert np.array_equal(emb.weight.numpy(), values.reshape(16, 2)[:6])


@claim("paddle-set-value-shape-checked")
def test_paddle_set_value_copies_in_place_and_checks_the_shape():
    paddle = paddle_dynamic()
    layer = paddle.nn.Linear(4, 8)
    w = layer.weight
    value = np.full((4, 8), 3.0, dtype=np.float32)
    w.set_value(value)
    assert layer.weight is w and np.array_equal(w.numpy(), value)
    with pytest.raises(AssertionError, match=r"Shape not match.*\[4, 8\].*\(3, 3\)"):
        w.set_value(np.zeros((3, 3), dtype=np.float32))


@claim("paddle-paramattr-fields")
def test_paddle_paramattr_has_the_settings_the_table_lists():
    paddle = paddle_dynamic()
    params = inspect.signature(paddle.ParamAttr).parameters
    for name in ("initializer", "learning_rate", "regularizer", "need_clip", "trainable"):
        assert name in params
    assert params["learning_rate"].default == 1.0 and params["trainable"].default is True


def _sgd_step(paddle, fc, parameters, lr=0.1):
    opt = paddle.optimizer.SGD(lr, parameters=parameters)
    fc(paddle.ones([2, 4])).sum().backward()
    w0, g = fc.weight.numpy().copy(), fc.weight.grad.numpy().copy()
    opt.step()
    return w0, g, fc.weight.numpy()


@claim("paddle-paramattr-lr-flat-list")
def test_paddle_paramattr_learning_rate_with_a_flat_parameter_list():
    paddle = paddle_dynamic()
    for rate, factor in ((2.0, 0.2), (0.0, 0.0)):
        paddle.seed(0)
        fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(learning_rate=rate))
        w0, g, w1 = _sgd_step(paddle, fc, fc.parameters())
        assert np.allclose(w0 - w1, factor * g, atol=1e-7), rate
        if rate == 0.0:
            assert np.array_equal(w0, w1)                          # never moves


@claim("paddle-paramattr-group-overrides")
def test_paddle_a_parameter_group_replaces_paramattr_lr_and_regularizer():
    paddle = paddle_dynamic()
    attr = dict(learning_rate=2.0, regularizer=paddle.regularizer.L2Decay(0.5))
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(**attr))
    w0, g, w1 = _sgd_step(paddle, fc, [{"params": fc.parameters()}])
    assert np.allclose(w0 - w1, 0.1 * g, atol=1e-7)               # 1 x lr, no decay
    assert fc.weight.optimize_attr["learning_rate"] == 1.0 and fc.weight.regularizer is None
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(**attr))
    w0, g, w1 = _sgd_step(paddle, fc, [{"params": fc.parameters(), "learning_rate": 3.0,
                                        "weight_decay": 0.01}])
    assert fc.weight.optimize_attr["learning_rate"] == 3.0        # the group's multiplier
    assert math.isclose(fc.weight.regularizer._coeff, 0.01)       # the group's weight decay
    assert np.allclose(w0 - w1, 0.3 * (g + 0.01 * w0), atol=1e-6)


@claim("paddle-paramattr-regularizer-l2")
def test_paddle_paramattr_regularizer_with_a_flat_list():
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(
        regularizer=paddle.regularizer.L2Decay(0.5)))
    w0, g, w1 = _sgd_step(paddle, fc, fc.parameters())
    assert np.allclose(w0 - w1, 0.1 * (g + 0.5 * w0), atol=1e-6)
    assert not np.allclose(w0 - w1, 0.1 * g, atol=1e-4)


@claim("paddle-paramattr-need-clip")
def test_paddle_paramattr_need_clip_false_is_not_clipped():
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(need_clip=False))
    assert fc.weight.need_clip is False and fc.bias.need_clip is True
    opt = paddle.optimizer.SGD(1.0, parameters=fc.parameters(),
                               grad_clip=paddle.nn.ClipGradByGlobalNorm(1e-3))
    (fc(paddle.ones([2, 4])) * 100).sum().backward()
    w0, g = fc.weight.numpy().copy(), fc.weight.grad.numpy().copy()
    b0, gb = fc.bias.numpy().copy(), fc.bias.grad.numpy().copy()
    opt.step()
    assert np.allclose(w0 - fc.weight.numpy(), g, rtol=1e-5)          # the full gradient
    assert np.linalg.norm(b0 - fc.bias.numpy()) < 1.01e-3 < np.linalg.norm(gb)   # clipped


@claim("paddle-paramattr-trainable")
def test_paddle_paramattr_trainable_false_gets_no_gradient():
    paddle = paddle_dynamic()
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(trainable=False))
    assert fc.weight.trainable is False and fc.weight.stop_gradient is True
    fc(paddle.ones([2, 4])).sum().backward()
    assert fc.weight.grad is None and fc.bias.grad is not None


@claim("paddle-linear-weight-layout-in-out")
def test_paddle_linear_weight_is_in_by_out():
    paddle = paddle_dynamic()
    fc = paddle.nn.Linear(16, 4)
    assert list(fc.weight.shape) == [16, 4]
    h = paddle.randn([5, 16])
    expected = h.numpy() @ fc.weight.numpy() + fc.bias.numpy()
    assert np.allclose(fc(h).numpy(), expected, atol=1e-6)


@claim("paddle-linear-default-xavier-zero-bias")
def test_paddle_linear_default_is_xavier_uniform_weight_zero_bias():
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(400, 800)
    a = math.sqrt(6 / (400 + 800))
    w = fc.weight.numpy()
    assert np.abs(w).max() <= a and np.abs(w).max() > 0.999 * a
    assert abs(w.std() / (a / math.sqrt(3)) - 1) < 0.01
    assert (fc.bias.numpy() == 0).all()


@claim("paddle-no-lazy-layers")
def test_paddle_has_no_lazy_layers():
    paddle = paddle_dynamic()
    assert [name for name in dir(paddle.nn) if "lazy" in name.lower()] == []
    with pytest.raises(TypeError):
        paddle.nn.Linear(out_features=8)                 # in_features must be given
