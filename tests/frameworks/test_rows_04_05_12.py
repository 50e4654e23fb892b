"""Names-table cells of chapters 04, 05 and 12 that no chapter test proved yet: each test runs
PyTorch 2.13 or Paddle 3.3 and checks what its row says (issue 45). The cells the chapter tests
already prove carry their @row markers in test_ch04_values.py, test_ch05_tying.py and
test_ch12_lab.py; MegEngine's cells are cited in notebooks/SOURCES.md."""
from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest
import torch

from absence import spellings_found
from claims import claim, row

# --------------------------------------------------------------------------- PyTorch, 04


@row("torch-names-04", "input size from the first batch",
     "`nn.LazyLinear(out)`, `nn.LazyConv2d(out, k)`")
def test_torch_lazy_conv2d_takes_its_in_channels_from_the_first_batch():
    conv = torch.nn.LazyConv2d(6, 3)
    assert isinstance(conv.weight, torch.nn.parameter.UninitializedParameter)
    assert tuple(conv(torch.rand(2, 5, 8, 8)).shape) == (2, 6, 6, 6)
    assert type(conv) is torch.nn.Conv2d and conv.in_channels == 5
    assert tuple(conv.weight.shape) == (6, 5, 3, 3) and tuple(conv.bias.shape) == (6,)


def _torch_optimizers():
    """Every optimizer class of torch.optim."""
    return sorted(name for name, cls in vars(torch.optim).items() if inspect.isclass(cls)
                  and issubclass(cls, torch.optim.Optimizer) and cls is not torch.optim.Optimizer)


def _torch_group_step(name, group_lr):
    """Two layers, the second in a group with lr ``group_lr`` (0.1 for the rest); the first
    step's change of each weight."""
    torch.manual_seed(0)
    sparse = name == "SparseAdam"                          # it takes sparse gradients only
    layers = ([torch.nn.Embedding(5, 3, sparse=True) for _ in range(2)] if sparse
              else [torch.nn.Linear(4, 3, bias=False), torch.nn.Linear(3, 2, bias=False)])
    opt = getattr(torch.optim, name)([{"params": layers[0].parameters()},
                                      {"params": layers[1].parameters(), "lr": group_lr}],
                                     lr=0.1)
    ids = torch.tensor([0, 2, 4])
    out = (layers[0](ids) * layers[1](ids)) if sparse else layers[1](layers[0](torch.randn(5, 4)))
    out.pow(2).sum().backward()
    before = [layer.weight.detach().clone() for layer in layers]
    opt.step()
    return [b - layer.weight.detach() for b, layer in zip(before, layers)]


@row("torch-names-04", "per-parameter lr", "a param group with its own `lr`")
@claim("torch-param-group-own-lr", "torch-lab-param-group-lr")
@pytest.mark.parametrize("name", [n for n in _torch_optimizers() if n != "LBFGS"])
def test_torch_every_optimizer_steps_a_group_with_its_own_lr(name):
    """One step is linear in the lr: a group at twice the lr moves twice as far, the rest not."""
    plain, doubled = _torch_group_step(name, 0.1), _torch_group_step(name, 0.2)
    assert torch.allclose(doubled[0], plain[0], atol=1e-8)
    assert plain[1].abs().max() > 0
    assert torch.allclose(doubled[1], 2 * plain[1], rtol=1e-3, atol=1e-7)


def test_torch_lbfgs_refuses_param_groups():
    """The exception to the row above: LBFGS takes one group only."""
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        torch.optim.LBFGS([{"params": [torch.nn.Parameter(torch.zeros(2))]},
                           {"params": [torch.nn.Parameter(torch.zeros(2))], "lr": 2.0}])


# --------------------------------------------------------------------------- PyTorch, 05


@row("torch-names-05", "check a tie", "`p is q`")
def test_torch_is_tells_a_tie_from_an_equal_copy():
    a, b, c = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    b.weight = a.weight
    c.load_state_dict(a.state_dict())                       # equal values, no tie
    assert b.weight is a.weight and torch.equal(c.weight, a.weight)
    assert c.weight is not a.weight
    with torch.no_grad():
        a.weight[0, 0] = 7.0
    assert b.weight[0, 0].item() == 7.0 and c.weight[0, 0].item() != 7.0


# --------------------------------------------------------------------------- PyTorch, 12


def _torch_loss(net):
    return net(torch.randn(8, 2)).pow(2).mul(100).sum()


def _torch_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


@row("torch-names-12", "clip the global norm",
     "`torch.nn.utils.clip_grad_norm_(params, 1.0)` before `opt.step()`")
def test_torch_clip_grad_norm_before_the_step_caps_the_whole_step():
    net = _torch_net()
    opt = torch.optim.SGD(net.parameters(), lr=1.0)
    _torch_loss(net).backward()
    before = [p.detach().clone() for p in net.parameters()]
    raw = torch.cat([p.grad.flatten() for p in net.parameters()]).norm()
    total = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    step = torch.cat([(b - p.detach()).flatten() for b, p in zip(before, net.parameters())])
    assert raw > 10 and torch.isclose(total, raw)            # returns the norm before clipping
    assert torch.isclose(step.norm(), torch.tensor(1.0), atol=1e-5)   # lr 1: the step is 1 long


@row("torch-names-12", "clip each tensor's norm", "`clip_grad_norm_` on each parameter")
def test_torch_clip_grad_norm_on_each_parameter_caps_each_tensor_alone():
    net = _torch_net()
    _torch_loss(net).backward()
    raw = [p.grad.clone() for p in net.parameters()]
    for p in net.parameters():
        torch.nn.utils.clip_grad_norm_(p, 1.0)
    for p, g in zip(net.parameters(), raw):
        expected = g * min(1.0, 1.0 / (float(g.norm()) + 1e-6))          # its own factor
        assert torch.allclose(p.grad, expected, atol=1e-6)
    assert all(float(g.norm()) > 1 for g in raw)                   # so every tensor ends at 1
    assert torch.cat([p.grad.flatten() for p in net.parameters()]).norm() > 1.5   # not global


@row("torch-names-12", "clip values", "`torch.nn.utils.clip_grad_value_(params, 0.5)`")
def test_torch_clip_grad_value_puts_every_entry_in_minus_half_to_half():
    net = _torch_net()
    _torch_loss(net).backward()
    raw = [p.grad.clone() for p in net.parameters()]
    torch.nn.utils.clip_grad_value_(net.parameters(), 0.5)
    assert any(float(g.abs().max()) > 0.5 for g in raw)
    for p, g in zip(net.parameters(), raw):
        assert torch.equal(p.grad, g.clamp(-0.5, 0.5))


@row("torch-names-12", "watch norms per step", "hooks + TensorBoard")
def test_torch_step_hooks_see_every_steps_norms_and_tensorboard_ships_with_torch(tmp_path):
    net = _torch_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(
        [float(p.grad.norm()) for p in net.parameters()]))
    expected = []
    for _ in range(3):
        opt.zero_grad()
        _torch_loss(net).backward()
        expected.append([float(p.grad.norm()) for p in net.parameters()])
        opt.step()
    assert seen == expected                                 # one record per step, right values
    # TensorBoard: torch's writer is torch.utils.tensorboard.SummaryWriter; it needs the
    # separate `tensorboard` package, which this environment lacks, so prove where it lives
    spec = importlib.util.find_spec("torch.utils.tensorboard")
    assert spec is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    assert "from .writer import FileWriter, SummaryWriter" in source
    writer = Path(spec.origin).with_name("writer.py").read_text(encoding="utf-8")
    assert "class SummaryWriter" in writer and "def add_scalar(" in writer
    if importlib.util.find_spec("tensorboard") is not None:      # where it is installed: use it
        from torch.utils.tensorboard import SummaryWriter
        with SummaryWriter(str(tmp_path)) as log:
            log.add_scalar("grad_norm", seen[0][0], 0)
        assert list(tmp_path.glob("events.out.tfevents.*"))


# --------------------------------------------------------------------------- Paddle, 04


@row("paddle-names-04", "change entries", "`p.set_value(...)`")
def test_paddle_set_value_with_one_entry_changed(paddle):
    layer = paddle.nn.Linear(2, 3)
    p = layer.weight
    value = p.numpy().copy()
    value[0, 0] = 42
    p.set_value(value)
    assert layer.weight is p and p.numpy()[0, 0] == 42
    assert np.array_equal(p.numpy(), value) and p.stop_gradient is False


def test_paddle_index_assignment_under_no_grad_changes_entries_too(paddle):
    """Paddle 3.3 takes torch's spelling too (the row's cell names only set_value)."""
    layer = paddle.nn.Linear(2, 3)
    p = layer.weight
    with pytest.raises(ValueError, match="can't use inplace strategy"):
        p[0, 0] = 1.0                                       # outside no_grad: refused
    with paddle.no_grad():
        p[0, 0] = 42.0
    assert layer.weight is p and p.numpy()[0, 0] == 42 and p.stop_gradient is False


@row("paddle-names-04", "copy an array in", "`p.set_value(a)`, `nn.initializer.Assign(a)`")
def test_paddle_set_value_and_the_assign_initializer_copy_an_array_in(paddle):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    layer = paddle.nn.Linear(2, 3)
    p = layer.weight
    p.set_value(a)
    assert layer.weight is p and np.array_equal(p.numpy(), a)
    p.set_value(np.zeros((2, 3), np.float32))
    paddle.nn.initializer.Assign(a)(p)                      # on an existing parameter
    assert layer.weight is p and np.array_equal(p.numpy(), a)
    made = paddle.nn.Linear(2, 3, weight_attr=paddle.ParamAttr(
        initializer=paddle.nn.initializer.Assign(a)))       # when the layer is made
    assert np.array_equal(made.weight.numpy(), a)


@row("paddle-names-04", "pretrained embedding",
     "`nn.Embedding(..., weight_attr=ParamAttr(initializer=Assign(a)))`")
def test_paddle_embedding_made_from_an_assign_paramattr(paddle):
    a = np.arange(12, dtype=np.float32).reshape(6, 2)
    emb = paddle.nn.Embedding(6, 2, weight_attr=paddle.ParamAttr(
        initializer=paddle.nn.initializer.Assign(a)))
    assert np.array_equal(emb.weight.numpy(), a)
    assert np.array_equal(emb(paddle.to_tensor([5, 1])).numpy(), a[[5, 1]])
    assert emb.weight.stop_gradient is False                # trainable: the cell says no "frozen"


@row("paddle-names-04", "input size from the first batch", "— (give `in_features`)")
def test_paddle_has_no_layer_that_reads_its_input_size_from_a_batch(paddle):
    owners = [paddle, paddle.nn, paddle.nn.layer, paddle.nn.Layer, paddle.nn.initializer]
    assert spellings_found(owners, ["lazylinear", "lazyconv", "uninitialized", "deferred"]) == []
    # Paddle's only "lazy" names delay the initialization, not the shape
    assert spellings_found(owners, ["lazy"]) == ["paddle.LazyGuard",
                                                 "paddle.nn.initializer.lazy_init"]
    with paddle.LazyGuard():
        assert list(paddle.nn.Linear(20, 8).weight.shape) == [20, 8]
        with pytest.raises(TypeError, match="in_features"):
            paddle.nn.Linear(out_features=8)
    assert inspect.signature(paddle.nn.Conv2D).parameters["in_channels"].default is \
        inspect.Parameter.empty


def _paddle_optimizers(paddle):
    return sorted(name for name, cls in vars(paddle.optimizer).items() if inspect.isclass(cls)
                  and issubclass(cls, paddle.optimizer.Optimizer)
                  and cls is not paddle.optimizer.Optimizer)


# Paddle 3.3's optimizers that ignore ParamAttr(learning_rate=...): they never call
# Optimizer._create_param_lr, which reads the multiplier from the parameter's optimize_attr,
# so even learning_rate=0.0 does not stop them. (LBFGS ignores a ParamAttr regularizer too.)
IGNORE_PARAMATTR_LR = {"LBFGS", "Rprop"}
PADDLE_OPTIMIZERS = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Lamb",
                     "Momentum", "NAdam", "RAdam", "RMSProp", "Rprop", "SGD"]


def _paddle_first_step(paddle, name, attr=None, group=None, scale=1.0):
    """The first step's change of a Linear weight made with ``ParamAttr(**attr)``, given to
    optimizer ``name`` (lr 0.01) as a flat list, or as one group with the settings ``group``;
    the loss is ``scale`` times a sum of squares (0.0: no gradient from the loss)."""
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3, weight_attr=paddle.ParamAttr(**attr) if attr else None)
    params = fc.parameters() if group is None else [dict(params=fc.parameters(), **group)]
    opt = getattr(paddle.optimizer, name)(learning_rate=0.01, parameters=params)
    x = paddle.ones([2, 4])

    def closure():
        opt.clear_grad()
        loss = (fc(x).pow(2) * scale).sum()
        loss.backward()
        return loss

    w0 = fc.weight.numpy().copy()
    if name == "LBFGS":
        opt.step(closure)
    else:
        closure()
        opt.step()
    return w0 - fc.weight.numpy()


def test_paddle_optimizer_list_is_the_one_checked(paddle):
    assert _paddle_optimizers(paddle) == PADDLE_OPTIMIZERS


@row("paddle-names-04", "per-parameter lr", "`ParamAttr(learning_rate=2.0)` (flat parameter list)")
@claim("paddle-paramattr-lr-flat-list", "paddle-lab-paramattr-learning-rate")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_paramattr_learning_rate_in_every_optimizer(paddle, name):
    """learning_rate=2.0 doubles the first step and 0.0 freezes, except where ignored."""
    plain, doubled, zero = (_paddle_first_step(paddle, name, {"learning_rate": rate})
                            for rate in (1.0, 2.0, 0.0))
    assert np.abs(plain).max() > 0
    if name in IGNORE_PARAMATTR_LR:
        assert np.allclose(doubled, plain) and np.allclose(zero, plain)
    else:
        assert np.allclose(doubled, 2 * plain, rtol=1e-3, atol=1e-7)
        assert not zero.any()


@claim("paddle-paramattr-group-overrides")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_a_group_drops_the_paramattr_lr_and_regularizer_in_every_optimizer(paddle, name):
    """In a group that sets neither, the weight steps as if it had no ParamAttr at all."""
    attr = dict(learning_rate=2.0, regularizer=paddle.regularizer.L2Decay(0.5))
    plain = _paddle_first_step(paddle, name)
    assert np.allclose(_paddle_first_step(paddle, name, attr, group={}), plain,
                       rtol=1e-4, atol=1e-8)
    flat = _paddle_first_step(paddle, name, attr)
    if name in IGNORE_PARAMATTR_LR:  # LBFGS ignores the whole ParamAttr; Rprop its lr, and
        assert np.allclose(flat, plain)          # it steps by the sign, so L2 changes nothing
    else:
        assert not np.allclose(flat, plain)      # given a flat list, the ParamAttr acts


@claim("paddle-paramattr-regularizer-l2")
@pytest.mark.parametrize("name", PADDLE_OPTIMIZERS)
def test_paddle_paramattr_regularizer_in_every_optimizer(paddle, name):
    """With no gradient from the loss, ParamAttr(regularizer=L2Decay) alone moves the weight
    towards zero; LBFGS ignores it."""
    attr = dict(regularizer=paddle.regularizer.L2Decay(0.5))
    plain = _paddle_first_step(paddle, name, scale=0.0)
    decayed = _paddle_first_step(paddle, name, attr, scale=0.0)
    if name == "LBFGS":
        assert not decayed.any() and not plain.any()
    else:
        paddle.seed(0)
        w0 = paddle.nn.Linear(4, 3).weight.numpy()          # the weight both steps start from
        assert np.all(np.sign(decayed) == np.sign(w0))     # every entry shrinks towards zero
        assert not np.allclose(decayed, plain)


# --------------------------------------------------------------------------- Paddle, 05


@row("paddle-names-05", "share a layer", "same (dynamic graph)")
def test_paddle_a_layer_used_twice_is_one_object(paddle):
    assert paddle.in_dynamic_mode()
    shared = paddle.nn.Linear(8, 8)
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 8), shared, paddle.nn.ReLU(), shared)
    assert net[1] is net[3] and net[1].weight is net[3].weight
    with paddle.no_grad():
        net[1].weight[0, 0] = 100.0
    assert net[3].weight.numpy()[0, 0] == 100.0
    assert len(net.parameters()) == 4                     # the shared layer's two once
    x = paddle.randn([2, 4])
    expected = shared(paddle.nn.functional.relu(shared(net[0](x))))
    assert np.allclose(net(x).numpy(), expected.numpy())    # applied twice


@row("paddle-names-05", "check a tie", "`p is q`")
def test_paddle_is_tells_a_tie_from_an_equal_copy(paddle):
    a, b, c = (paddle.nn.Linear(3, 3) for _ in range(3))
    b.weight = a.weight
    c.set_state_dict(a.state_dict())                        # equal values, no tie
    assert b.weight is a.weight and np.array_equal(c.weight.numpy(), a.weight.numpy())
    assert c.weight is not a.weight
    with paddle.no_grad():
        a.weight[0, 0] = 7.0
    assert b.weight.numpy()[0, 0] == 7.0 and c.weight.numpy()[0, 0] != 7.0


# --------------------------------------------------------------------------- Paddle, 12


@row("paddle-names-12", "watch norms per step", "hooks + VisualDL")
def test_paddle_gradient_hooks_see_every_steps_norms_and_visualdl_is_a_callback(paddle, tmp_path):
    paddle.seed(0)
    layer = paddle.nn.Linear(2, 3)
    opt = paddle.optimizer.SGD(0.01, parameters=layer.parameters())
    seen = []
    layer.weight.register_hook(lambda grad: seen.append(float(paddle.linalg.norm(grad))))
    expected = []
    for _ in range(3):
        opt.clear_grad()
        layer(paddle.randn([4, 2])).pow(2).sum().backward()
        expected.append(float(paddle.linalg.norm(layer.weight.grad)))
        opt.step()
    assert np.allclose(seen, expected) and len(seen) == 3
    # VisualDL: Paddle's training callback that logs to it (the visualdl package, which this
    # environment lacks, does the writing)
    callback = paddle.callbacks.VisualDL(log_dir=str(tmp_path))
    assert isinstance(callback, paddle.callbacks.Callback)
    assert "visualdl.LogWriter(self.log_dir)" in inspect.getsource(type(callback))
