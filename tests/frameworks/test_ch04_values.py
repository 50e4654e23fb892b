"""Chapter 04 (setting parameter values: set_value, pretrained vectors, ParamAttr, lazy
layers): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import torch
from torch import nn

from chapters import paddle_dynamic
from claims import claim, row


# ---------------------------------------------------------------------------------- PyTorch


@row("torch-names-04", "copy an array in", "`with torch.no_grad(): p.copy_(torch.from_numpy(a))`")
@row("torch-names-04", "change entries", "`with torch.no_grad(): p[0, 0] = 42`")
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


@row("torch-names-04", "pretrained embedding", "`nn.Embedding.from_pretrained(t)` (frozen)")
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


@row("torch-names-04", "Linear weight layout", "`(out, in)`")
@claim("torch-linear-weight-layout-out-in")
def test_torch_linear_weight_is_out_by_in():
    fc = nn.Linear(16, 4)
    assert tuple(fc.weight.shape) == (4, 16)
    h = torch.randn(5, 16)
    expected = h @ fc.weight.T + fc.bias
    assert torch.allclose(fc(h), expected, atol=1e-6)


@row("torch-names-04", "input size from the first batch",
     "`nn.LazyLinear(out)`, `nn.LazyConv2d(out, k)`")
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


@row("torch-names-04", "per-parameter lr", "a param group with its own `lr`")
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


@row("paddle-names-04", "per-parameter lr", "`ParamAttr(learning_rate=2.0)` (flat parameter list)")
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
@pytest.mark.parametrize("clip", ["ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue"])
def test_paddle_paramattr_need_clip_false_is_not_clipped(clip):
    """need_clip=False exempts the weight from each of Paddle's three grad_clip kinds."""
    paddle = paddle_dynamic()
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(need_clip=False))
    assert fc.weight.need_clip is False and fc.bias.need_clip is True
    opt = paddle.optimizer.SGD(1.0, parameters=fc.parameters(),
                               grad_clip=getattr(paddle.nn, clip)(1e-3))
    (fc(paddle.ones([2, 4])) * 100).sum().backward()
    w0, g = fc.weight.numpy().copy(), fc.weight.grad.numpy().copy()
    b0, gb = fc.bias.numpy().copy(), fc.bias.grad.numpy().copy()
    opt.step()
    assert np.allclose(w0 - fc.weight.numpy(), g, rtol=1e-5)          # the full gradient
    step = b0 - fc.bias.numpy()                                        # the bias: clipped
    size = np.abs(step).max() if clip == "ClipGradByValue" else np.linalg.norm(step)
    assert size < 1.01e-3 < np.abs(gb).max()


@row("paddle-names-12", "freeze a layer",
     "`p.stop_gradient = True` (or `ParamAttr(trainable=False)`)")
@claim("paddle-paramattr-trainable")
def test_paddle_paramattr_trainable_false_gets_no_gradient():
    paddle = paddle_dynamic()
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(trainable=False))
    assert fc.weight.trainable is False and fc.weight.stop_gradient is True
    fc(paddle.ones([2, 4])).sum().backward()
    assert fc.weight.grad is None and fc.bias.grad is not None


@row("paddle-names-04", "Linear weight layout", "`(in, out)`")
@claim("paddle-linear-weight-layout-in-out")
def test_paddle_linear_weight_is_in_by_out():
    paddle = paddle_dynamic()
    fc = paddle.nn.Linear(16, 4)
    assert list(fc.weight.shape) == [16, 4]
    h = paddle.randn([5, 16])
    expected = h.numpy() @ fc.weight.numpy() + fc.bias.numpy()
    assert np.allclose(fc(h).numpy(), expected, atol=1e-6)


@claim("paddle-no-lazy-layers")
def test_paddle_has_no_lazy_layers():
    paddle = paddle_dynamic()
    assert [name for name in dir(paddle.nn) if "lazy" in name.lower()] == []
    with pytest.raises(TypeError):
        paddle.nn.Linear(out_features=8)                 # in_features must be given
