"""The names tables of chapters 06 and 07, cell by cell: the Paddle cells, run in Paddle 3.3
(the PyTorch cells are in test_rows_06_07.py; cells proved in test_ch06_optimizers.py and
test_ch07_learning_rates.py carry their @row markers there).
"""
from __future__ import annotations

import inspect
import math
import re
import warnings

import numpy as np
import pytest

from claims import claim, row


# ---------------------------------------------------------------- Paddle, chapter 06


def _paddle_linear(paddle, weight_attr=None):
    layer = paddle.nn.Linear(2, 1, weight_attr=weight_attr)
    layer.weight.set_value(np.array([[1.0], [-2.0]], dtype="float32"))
    layer.bias.set_value(np.array([0.5], dtype="float32"))
    return layer


def _paddle_backward(paddle, *layers):
    for layer in layers:
        layer(paddle.to_tensor([[3.0, 4.0]])).sum().backward()


@row("paddle-names-06", "list the groups", "`opt._param_groups`")
def test_paddle_param_groups_lists_the_group_dicts(paddle):
    a, b = _paddle_linear(paddle), _paddle_linear(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=[
        {"params": a.parameters()}, {"params": b.parameters(), "learning_rate": 0.2}])
    groups = opt._param_groups
    assert isinstance(groups, list) and len(groups) == 2
    assert groups[0]["params"][0] is a.weight and groups[1]["params"][1] is b.bias
    assert "learning_rate" not in groups[0] and groups[1]["learning_rate"] == 0.2
    assert all(math.isclose(g["weight_decay"]._coeff, 0.01) for g in groups)   # filled in
    assert not hasattr(opt, "param_groups")                # no public name


@row("paddle-names-06", "add a group later", "`opt._add_param_group(group)`")
def test_paddle_add_param_group_appends_a_group_that_steps(paddle):
    a, b = _paddle_linear(paddle), _paddle_linear(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=[{"params": a.parameters()}])
    opt._add_param_group({"params": b.parameters(), "learning_rate": 0.5})
    assert len(opt._param_groups) == 2 and b.weight.optimize_attr == {"learning_rate": 0.5}
    w0 = b.weight.numpy().copy()
    _paddle_backward(paddle, b)
    grad = b.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(w0 - b.weight.numpy(), 0.05 * 0.5 * grad, rtol=1e-5)


@row("paddle-names-06", "clear gradients", "`opt.clear_grad()`")
def test_paddle_clear_grad_zeroes_so_the_next_backward_does_not_add(paddle):
    a = _paddle_linear(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=a.parameters())
    _paddle_backward(paddle, a)
    _paddle_backward(paddle, a)
    np.testing.assert_allclose(a.weight.grad.numpy(), [[6.0], [8.0]])   # accumulated
    opt.clear_grad()
    np.testing.assert_array_equal(a.weight.grad.numpy(), [[0.0], [0.0]])  # set_to_zero=True
    _paddle_backward(paddle, a)
    np.testing.assert_allclose(a.weight.grad.numpy(), [[3.0], [4.0]])
    opt.clear_grad(set_to_zero=False)
    assert a.weight.grad is None


@row("paddle-names-06", "train only some parameters", "`param.stop_gradient = True`")
def test_paddle_stop_gradient_no_grad_no_move(paddle):
    layer = _paddle_linear(paddle)
    layer.weight.stop_gradient = True
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9,
                                    parameters=layer.parameters())
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    _paddle_backward(paddle, layer)
    opt.step()
    assert layer.weight.grad is None
    np.testing.assert_array_equal(layer.weight.numpy(), w0)
    np.testing.assert_allclose(b0 - layer.bias.numpy(), [0.1], rtol=1e-5)   # the bias trains


@row("paddle-names-06", "per-parameter regularizer",
     "`ParamAttr(regularizer=L2Decay(c))` (replaces the optimizer's in a flat list; a group "
     "overwrites it with the group's decay)")
def test_paddle_paramattr_l2decay_flat_list_replaces_group_overwrites(paddle):
    from paddle.regularizer import L2Decay

    def attr():                           # a fresh ParamAttr for each layer built
        return paddle.ParamAttr(regularizer=L2Decay(0.5))

    layer = _paddle_linear(paddle, attr())
    opt = paddle.optimizer.SGD(learning_rate=0.1, weight_decay=0.01, parameters=layer.parameters())
    w0 = layer.weight.numpy().copy()
    _paddle_backward(paddle, layer)
    g = layer.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(w0 - layer.weight.numpy(), 0.1 * (g + 0.5 * w0), rtol=1e-5)

    layer = _paddle_linear(paddle, attr())
    opt = paddle.optimizer.SGD(learning_rate=0.1, weight_decay=0.01,
                               parameters=[{"params": layer.parameters()}])
    assert math.isclose(layer.weight.regularizer._coeff, 0.01)      # the group's decay now
    w0 = layer.weight.numpy().copy()
    _paddle_backward(paddle, layer)
    g = layer.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(w0 - layer.weight.numpy(), 0.1 * (g + 0.01 * w0), rtol=1e-5)


# ---------------------------------------------------------------- Paddle, chapter 07


def _paddle_lrs(paddle, sched, steps=30):
    lrs = []
    for _ in range(steps):
        lrs.append(sched())
        sched.step()
    return np.array(lrs)


@row("paddle-names-07", "schedulers",
     "`paddle.optimizer.lr.LinearLR`, `StepDecay`, `CosineAnnealingDecay`, `LinearWarmup`")
def test_paddle_the_four_schedulers_give_their_shapes(paddle):
    L = paddle.optimizer.lr
    linear = _paddle_lrs(paddle, L.LinearLR(0.05, total_steps=30, start_factor=1.0,
                                            end_factor=0.0))
    np.testing.assert_allclose(linear, 0.05 * (1 - np.arange(30) / 30), atol=1e-9)
    stair = _paddle_lrs(paddle, L.StepDecay(0.05, step_size=10, gamma=0.5))
    np.testing.assert_allclose(stair, 0.05 * 0.5 ** (np.arange(30) // 10), atol=1e-12)
    cosine = _paddle_lrs(paddle, L.CosineAnnealingDecay(0.05, T_max=30))
    np.testing.assert_allclose(cosine, 0.025 * (1 + np.cos(np.pi * np.arange(30) / 30)),
                               atol=1e-9)
    warm = _paddle_lrs(paddle, L.LinearWarmup(L.CosineAnnealingDecay(0.05, T_max=25),
                                              warmup_steps=5, start_lr=0.0, end_lr=0.05))
    np.testing.assert_allclose(warm[:6], [0.0, 0.01, 0.02, 0.03, 0.04, 0.05], atol=1e-9)
    then = 0.025 * (1 + np.cos(np.pi * np.arange(25) / 25))      # then the cosine, afresh
    np.testing.assert_allclose(warm[5:], then, atol=1e-9)


@row("paddle-names-07", "steps taken", "one per `step()` (one per `exe.run` in a static graph)")
def test_paddle_dynamic_adam_advances_one_step_per_step_call(paddle):
    p = paddle.create_parameter([2], "float32")
    opt = paddle.optimizer.Adam(learning_rate=0.01, beta1=0.9, parameters=[p])
    for steps in range(1, 4):
        opt.clear_grad()
        (p * 1.0).sum().backward()
        opt.step()
        [beta1_pow] = opt._accumulators["beta1_pow_acc"].values()
        assert math.isclose(float(beta1_pow.numpy()[0]), 0.9 ** (steps + 1), rel_tol=1e-5)


@row("paddle-names-07-b", "skip, decay, clip", "the base class (`regularization`, `grad_clip`)")
def test_paddle_base_class_skips_decays_and_clips_before_the_rule(paddle):
    class Recorder(paddle.optimizer.Optimizer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.type, self.seen = "recorder", []

        def _append_optimize_op(self, block, param_and_grad):
            p, g = param_and_grad
            self.seen.append((p.name, g.numpy().copy()))
            with paddle.no_grad():
                paddle.assign(p - self._create_param_lr(param_and_grad) * g, p)

    from paddle.regularizer import L2Decay
    w = paddle.create_parameter([2], "float32", default_initializer=paddle.nn.initializer.Assign(
        np.array([1.0, -2.0], dtype="float32")))
    idle = paddle.create_parameter([1], "float32")
    opt = Recorder(learning_rate=0.1, parameters=[w, idle], weight_decay=L2Decay(0.5),
                   grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    assert isinstance(opt.regularization, L2Decay) and opt._grad_clip is not None
    (w * paddle.to_tensor([3.0, 4.0])).sum().backward()
    opt.step()
    assert [name for name, _ in opt.seen] == [w.name]                  # idle skipped
    seen = opt.seen[0][1]
    np.testing.assert_allclose(seen, [0.6 + 0.5, 0.8 - 1.0], rtol=1e-5)   # clipped, then decay
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.11, -2.0 + 0.02], rtol=1e-5)


# ---------------------------------------------------------- general claims: every optimizer

PADDLE_OPTIMIZERS = ["SGD", "Momentum", "Adam", "AdamW", "Adagrad", "RMSProp", "Lamb"]
NO_DECAY = {"AdamW": {"weight_decay": 0.0}, "Lamb": {"lamb_weight_decay": 0.0}}


def _vector(paddle, attr=None):
    return paddle.create_parameter([2], "float32", attr=attr,
                                   default_initializer=paddle.nn.initializer.Assign(
                                       np.array([1.0, -2.0], dtype="float32")))


@claim("paddle-duplicate-in-two-groups-valueerror")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_every_optimizer_refuses_a_parameter_in_two_groups(name, paddle):
    w = _vector(paddle)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        getattr(paddle.optimizer, name)(learning_rate=0.1,
                                        parameters=[{"params": [w]}, {"params": [w]}])


@claim("paddle-duplicate-in-one-group-unchecked")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_every_optimizer_updates_a_duplicate_once_per_entry(name, paddle):
    def first_move(listed):
        w = _vector(paddle)
        with warnings.catch_warnings():
            warnings.simplefilter("error")                # a warning would fail the test
            opt = getattr(paddle.optimizer, name)(learning_rate=0.1, parameters=[w] * listed)
        (w * paddle.to_tensor([0.5, 0.5])).sum().backward()
        opt.step()
        return 1.0 - float(w.numpy()[0])

    assert first_move(2) > 1.5 * first_move(1) > 0


@claim("paddle-group-lr-is-a-scale")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_every_optimizer_scales_its_lr_by_the_groups_learning_rate(name, paddle):
    a, b = _vector(paddle), _vector(paddle)
    opt = getattr(paddle.optimizer, name)(
        learning_rate=0.1, parameters=[{"params": [a]}, {"params": [b], "learning_rate": 0.2}],
        **NO_DECAY.get(name, {}))
    for p in (a, b):
        (p * paddle.to_tensor([1.0, -3.0])).sum().backward()
    opt.step()
    start = np.array([1.0, -2.0])
    np.testing.assert_allclose(start - b.numpy(), 0.2 * (start - a.numpy()), rtol=1e-5)


# The regularizer rules below hold for every optimizer but AdamW, whose weight_decay is a
# decoupled coefficient, not a regularizer: a ParamAttr regularizer adds to it (flat list or
# group alike) instead of replacing it or being overwritten.
WITH_DECAY = ["SGD", "Momentum", "Adam", "AdamW", "Adagrad", "RMSProp"]


@claim("paddle-paramattr-flat-list-lr-and-regularizer",
       "paddle-zero-l2-regularizer-turns-decay-off")
@pytest.mark.parametrize("name", WITH_DECAY)
def test_paddle_flat_list_paramattr_rate_multiplies_and_regularizer_replaces(name, paddle):
    kind = getattr(paddle.optimizer, name)
    a, half = _vector(paddle), _vector(paddle, paddle.ParamAttr(learning_rate=0.5))
    opt = kind(learning_rate=0.1, parameters=[a, half], weight_decay=0.0)
    for p in (a, half):
        (p * paddle.to_tensor([1.0, -3.0])).sum().backward()
    opt.step()
    start = np.array([1.0, -2.0])
    np.testing.assert_allclose(start - half.numpy(), 0.5 * (start - a.numpy()), rtol=1e-5)

    from paddle.regularizer import L2Decay
    off = _vector(paddle, paddle.ParamAttr(regularizer=L2Decay(0.0)))
    opt = kind(learning_rate=0.1, parameters=[off], weight_decay=0.01)
    off.grad = paddle.zeros_like(off)                   # only decay can move it
    opt.step()
    if name == "AdamW":                                 # the decoupled decay still applies
        np.testing.assert_allclose(start - off.numpy(), 0.1 * 0.01 * start, rtol=1e-4)
    else:                                               # the zero regularizer replaced it
        np.testing.assert_array_equal(off.numpy(), start)


@claim("paddle-group-overwrites-paramattr")
@pytest.mark.parametrize("name", WITH_DECAY)
def test_paddle_group_overwrites_paramattr_rate_and_regularizer(name, paddle):
    from paddle.regularizer import L2Decay
    p = _vector(paddle, paddle.ParamAttr(learning_rate=0.5, regularizer=L2Decay(0.0)))
    opt = getattr(paddle.optimizer, name)(
        learning_rate=0.1, weight_decay=0.01,
        parameters=[{"params": [p], "learning_rate": 2.0}])
    assert p.optimize_attr == {"learning_rate": 2.0}
    p.grad = paddle.zeros_like(p)                       # only decay can move it
    opt.step()
    start = np.array([1.0, -2.0])
    assert np.all(np.abs(start - p.numpy()) > 1e-4)     # the group's decay moved it
    if name == "AdamW":                                 # regularizer kept, decoupled decay on top
        assert math.isclose(p.regularizer._coeff, 0.0)
        np.testing.assert_allclose(start - p.numpy(), 0.1 * 2.0 * 0.01 * start, rtol=1e-4)


@claim("paddle-scheduler-is-the-optimizer-lr", "paddle-set-lr-refused-with-scheduler")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_every_optimizer_takes_the_scheduler_as_its_lr_and_refuses_set_lr(name, paddle):
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)
    opt = getattr(paddle.optimizer, name)(learning_rate=sched, parameters=[_vector(paddle)])
    assert opt._learning_rate is sched and math.isclose(opt.get_lr(), 0.05)
    sched.step()
    assert math.isclose(opt.get_lr(), 0.025)                 # the optimizer follows it
    with pytest.raises(RuntimeError, match="can't be LRScheduler"):
        opt.set_lr(0.1)


@claim("paddle-group-of-its-own-keeps-settings")
@pytest.mark.parametrize("name", WITH_DECAY)
def test_paddle_a_group_of_its_own_with_a_regularizer_object(name, paddle):
    """A group's weight_decay may be a regularizer object: it becomes the parameter's
    regularizer. Not in AdamW, whose kernel takes a float coefficient only."""
    from paddle.regularizer import L1Decay
    w = _vector(paddle, paddle.ParamAttr(learning_rate=2.0, regularizer=L1Decay(0.5)))
    opt = getattr(paddle.optimizer, name)(learning_rate=0.05, weight_decay=0.01, parameters=[
        {"params": [w], "learning_rate": 0.4, "weight_decay": L1Decay(0.001)}])
    assert w.optimize_attr == {"learning_rate": 0.4}
    w.grad = paddle.zeros_like(w)
    if name == "AdamW":
        with pytest.raises(TypeError, match="must be double"):
            opt.step()
        return
    assert isinstance(w.regularizer, L1Decay) and math.isclose(w.regularizer._coeff, 0.001)
    opt.step()
    assert np.all(np.abs(np.array([1.0, -2.0]) - w.numpy()) > 1e-6)   # the L1 term moved it


FUSED = ["SGD", "Momentum", "Adam", "AdamW", "Adagrad", "RMSProp", "Lamb", "Adadelta",
         "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]


@claim("paddle-own-optimizers-call-c-ops")
def test_paddle_fused_list_is_every_optimizer_but_lbfgs(paddle):
    exported = {n for n in dir(paddle.optimizer) if isinstance(getattr(paddle.optimizer, n), type)
                and issubclass(getattr(paddle.optimizer, n), paddle.optimizer.Optimizer)}
    assert exported - {"Optimizer"} == set(FUSED) | {"LBFGS"}
    lbfgs = paddle.optimizer.LBFGS       # writes its own step(): no per-parameter rule at all
    assert lbfgs._append_optimize_op is paddle.optimizer.Optimizer._append_optimize_op


@claim("paddle-own-optimizers-call-c-ops")
@pytest.mark.parametrize("name", FUSED)
def test_paddle_own_optimizers_call_a_fused_kernel_and_keep_a_static_branch(name, paddle):
    source = inspect.getsource(getattr(paddle.optimizer, name)._append_optimize_op)
    assert re.search(r"_C_ops\.\w+_\(", source)                  # the fused in-place kernel
    assert "block.append_op(" in source                           # the legacy static branch
    assert re.search(r"in_(dynamic_or_pir|dygraph|pir)_mode\(\)", source)   # which mode?
