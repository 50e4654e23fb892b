"""Chapter 08 (freezing parameters): what it says PyTorch 2.13 and Paddle 3.3 do, run in them."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from chapters import chapter_cell
from claims import claim, row

from dltutor import nn, optim

F = torch.nn.functional


# --- PyTorch: the chapter's small network and batch ----------------------------------------

def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def batch():
    torch.manual_seed(1)
    return torch.randn(32, 3), torch.randn(32, 1)


def train_step(net, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()


@claim("torch-freezing-requires-grad-false-skipped")
def test_torch_requires_grad_false_no_grad_no_state_no_decay():
    x, y = batch()
    net = make_net()
    net[0].requires_grad_(False)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
    before = net[0].weight.detach().clone()
    for _ in range(5):
        train_step(net, opt, x, y)
    assert net[0].weight.grad is None and net[0].bias.grad is None
    assert net[0].weight not in opt.state and net[0].bias not in opt.state   # no momentum
    assert torch.equal(net[0].weight, before)                              # no decay either
    assert "momentum_buffer" in opt.state[net[2].weight]                    # the rest trained


@claim("torch-freezing-frozen-layer-output-no-graph")
def test_torch_frozen_first_layer_records_no_graph():
    x, _ = batch()
    net = make_net()
    net[0].requires_grad_(False)
    hidden = net[0](x)
    assert not hidden.requires_grad and hidden.grad_fn is None
    assert make_net()[0](x).grad_fn is not None


@claim("torch-freezing-lr-zero-momentum-accumulates")
def test_torch_group_lr_zero_keeps_weight_but_momentum_grows():
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD([{"params": net[0].parameters(), "lr": 0.0},
                           {"params": net[2].parameters()}], lr=0.05, momentum=0.9,
                          weight_decay=0.01)
    before = net[0].weight.detach().clone()
    norms = []
    for _ in range(5):
        train_step(net, opt, x, y)
        norms.append(opt.state[net[0].weight]["momentum_buffer"].norm().item())
    assert torch.equal(net[0].weight, before)          # it did not move
    assert net[0].weight.grad is not None              # but it got a gradient
    assert norms[-1] > 1.5 * norms[0]                  # and its momentum keeps growing


@claim("torch-freezing-left-out-grad-accumulates")
def test_torch_left_out_layer_gradient_accumulates_until_module_zero_grad():
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD(net[2].parameters(), lr=0.05, momentum=0.9)
    before = net[0].weight.detach().clone()
    arrived = []
    net[0].weight.register_hook(lambda grad: arrived.append(grad.clone()))
    norms = []
    for _ in range(5):
        train_step(net, opt, x, y)              # opt.zero_grad() clears net[2] only
        norms.append(net[0].weight.grad.norm().item())
    assert torch.equal(net[0].weight, before) and len(arrived) == 5
    assert torch.allclose(net[0].weight.grad, sum(arrived), atol=1e-6)
    assert norms[-1] > 2 * norms[0]
    net.zero_grad()                               # the module's: every parameter
    assert net[0].weight.grad is None


@claim("torch-freezing-zero-grad-set-to-none")
def test_torch_zero_grad_sets_none_by_default():
    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default is True
    assert inspect.signature(torch.nn.Module.zero_grad).parameters["set_to_none"].default is True
    optimizers = [c for c in vars(torch.optim).values()
                  if inspect.isclass(c) and issubclass(c, torch.optim.Optimizer)]
    assert [c for c in optimizers if "zero_grad" in vars(c)] == [torch.optim.Optimizer]  # inherited
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    train_step(net, opt, x, y)
    net[0].requires_grad_(False)            # the chapter's fix: freeze, then train on
    before = net[0].weight.detach().clone()
    for _ in range(3):
        train_step(net, opt, x, y)          # zero_grad() leaves net[0]'s grad None
    assert net[0].weight.grad is None and torch.equal(net[0].weight, before)


@claim("torch-freezing-zero-grad-momentum-coasts")
def test_torch_zero_gradient_still_moves_by_momentum():
    x, y = batch()
    net = make_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for _ in range(3):
        train_step(net, opt, x, y)
    net[0].weight.register_hook(lambda grad: grad * 0)
    before = net[0].weight.detach().clone()
    buf = opt.state[net[0].weight]["momentum_buffer"].clone()
    train_step(net, opt, x, y)
    assert not net[0].weight.grad.any()
    assert torch.allclose(net[0].weight - before, -0.05 * 0.9 * buf, atol=1e-7)


@claim("torch-freezing-zero-grad-adam-moves")
def test_torch_adam_zero_gradient_still_moves():
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    adam = torch.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    adam.step()
    w.grad = torch.zeros(2)
    before = w.detach().clone()
    adam.step()
    assert not torch.allclose(w.detach(), before)
    assert adam.state[w]["exp_avg"].abs().min() > 0           # the first moment it coasts on


@claim("torch-freezing-zero-grad-weight-decay-shrinks")
@pytest.mark.parametrize("opt_class", [torch.optim.SGD, torch.optim.Adam], ids=["SGD", "Adam"])
def test_torch_weight_decay_with_zero_gradient_shrinks(opt_class):
    start = torch.tensor([1.0, -2.0, 3.0])
    w = torch.nn.Parameter(start.clone())
    opt = opt_class([w], lr=0.1, weight_decay=0.5)
    for _ in range(3):
        w.grad = torch.zeros(3)
        opt.step()
    assert (w.detach().abs() < start.abs()).all() and torch.equal(w.detach().sign(), start.sign())
    if opt_class is torch.optim.SGD:
        assert torch.allclose(w.detach(), start * (1 - 0.1 * 0.5) ** 3)
    v = torch.nn.Parameter(start.clone())                       # grad None: left alone
    opt = opt_class([v], lr=0.1, weight_decay=0.5)
    opt.step()
    assert torch.equal(v.detach(), start)


@claim("torch-freezing-bn-eps-zero-refused-in-training")
def test_torch_batchnorm_eps_zero_built_but_refused_in_training():
    bn = torch.nn.BatchNorm1d(3, eps=0.0)                  # accepted when built
    assert bn.eps == 0.0
    with pytest.raises(ValueError, match="batch_norm eps must be positive during training, "
                                         "but got 0.0"):
        bn(torch.randn(16, 3))


@row("torch-names-08", "running-stat momentum", "`momentum=0.1` (weight of the batch)")
@claim("torch-freezing-bn-momentum-weight-of-batch")
def test_torch_batchnorm_momentum_is_the_weight_of_the_batch():
    bn = torch.nn.BatchNorm1d(3)
    assert bn.momentum == 0.1
    xb = torch.randn(16, 3) * 2.0 + 1.0
    old_mean, old_var = bn.running_mean.clone(), bn.running_var.clone()
    out = bn(xb)
    assert torch.allclose(bn.running_mean, 0.9 * old_mean + 0.1 * xb.mean(0), atol=1e-6)
    assert torch.allclose(bn.running_var, 0.9 * old_var + 0.1 * xb.var(0, unbiased=True),
                          atol=1e-5)                                   # the unbiased variance
    assert torch.allclose(out.mean(0), torch.zeros(3), atol=1e-5)      # batch statistics used
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert {"running_mean", "running_var"} <= {n for n, _ in bn.named_buffers()}


@row("torch-names-08", "training / evaluation mode", "`model.train()`, `model.eval()`")
@claim("torch-freezing-bn-eval-uses-running-stats")
def test_torch_batchnorm_eval_and_train():
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    data = [torch.randn(16, 4) * 3.0 + 2.0 for _ in range(5)]
    for b in data:
        net(b)
    mean, var = net[1].running_mean.clone(), net[1].running_var.clone()
    net.eval()
    assert [m.training for m in net.modules()] == [False, False, False]
    with torch.no_grad():
        y = net(data[0])
        h = net[0](data[0])
    assert torch.equal(net[1].running_mean, mean) and torch.equal(net[1].running_var, var)
    expected = (h - mean) / torch.sqrt(var + net[1].eps) * net[1].weight + net[1].bias
    assert torch.allclose(y, expected, atol=1e-5)
    assert torch.equal(torch.nn.Dropout(0.5).eval()(torch.ones(8)), torch.ones(8))
    net.train()                                            # back to training mode...
    net(data[0])
    assert not torch.equal(net[1].running_mean, mean)      # ...and the statistics drift


@claim("torch-freezing-bn-requires-grad-false-stats-move")
def test_torch_batchnorm_requires_grad_false_alone_leaves_stats_updating():
    bn = torch.nn.BatchNorm1d(3).requires_grad_(False)
    bn(torch.randn(16, 3) + 5.0)
    assert not torch.allclose(bn.running_mean, torch.zeros(3))


@row("torch-names-08", "fixed BatchNorm statistics",
     "— (`bn.eval()` again after every `model.train()`)")
@claim("torch-freezing-bn-no-use-global-stats")
def test_torch_batchnorm_has_no_use_global_stats_eval_again_instead():
    assert "use_global_stats" not in inspect.signature(torch.nn.BatchNorm1d).parameters
    with pytest.raises(TypeError):
        torch.nn.BatchNorm1d(3, use_global_stats=True)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    net(torch.randn(16, 4) + 2.0)
    mean = net[1].running_mean.clone()
    net.train()
    net[1].eval()                                          # the PyTorch way, after every train()
    net(torch.randn(16, 4) + 2.0)
    assert torch.equal(net[1].running_mean, mean)


class TorchPlanted(torch.nn.Module):
    """The chapter's Planted model, in PyTorch: it has no lr_mult and no need_clip."""

    def __init__(self):
        super().__init__()
        for name in ("healthy", "left_out", "frozen", "detached", "lr_zero", "mult_zero"):
            setattr(self, name, torch.nn.Linear(4, 4))
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x):
        h = (self.healthy(x) + self.left_out(x) + self.frozen(x) + self.detached(x).detach()
             + self.lr_zero(x) + self.mult_zero(x))
        return self.head(h.tanh())


@claim("torch-freezing-why-not-moving-runs-in-torch", "torch-freezing-no-lr-mult-need-clip")
def test_torch_the_chapters_why_not_moving_finds_the_four_torch_mistakes():
    namespace = {}
    cell = chapter_cell("08_freezing", "def why_not_moving(")
    exec(cell[:cell.index("\nfor branch in checks:")], namespace)     # the function, unchanged
    why_not_moving = namespace["why_not_moving"]
    torch.manual_seed(4)
    model = TorchPlanted()
    model.frozen.requires_grad_(False)
    named = dict(model.named_parameters())
    main = [p for n, p in named.items() if n.split(".")[0] not in ("left_out", "lr_zero")]
    zero = [p for n, p in named.items() if n.startswith("lr_zero")]
    opt = torch.optim.SGD([{"params": main}, {"params": zero, "lr": 0.0}], lr=0.1)
    F.mse_loss(model(torch.randn(16, 4)), torch.randn(16, 1)).backward()
    found = {b: why_not_moving(model, opt, f"{b}.weight")
             for b in ("healthy", "left_out", "frozen", "detached", "lr_zero", "mult_zero")}
    assert found == {
        "healthy": None, "left_out": "not in the optimizer", "frozen": "requires_grad is False",
        "detached": "no gradient: the loss does not reach it", "lr_zero": "its group's lr is 0",
        "mult_zero": None}
    # no per-parameter multiplier or clip flag in PyTorch; clipping is a call you make
    p = model.healthy.weight
    assert not hasattr(p, "lr_mult") and not hasattr(p, "need_clip")
    assert "grad_clip" not in inspect.signature(torch.optim.SGD).parameters
    assert callable(torch.nn.utils.clip_grad_norm_)


@claim("torch-freezing-no-summary")
def test_torch_has_no_parameter_table_of_its_own():
    assert not hasattr(torch, "summary") and not hasattr(torch.nn.Module, "summary")
    assert not hasattr(torch.nn.utils, "summary")


# --- Paddle 3.3 ------------------------------------------------------------------------------

def paddle_net(paddle, **first_layer):
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(3, 8, **first_layer), paddle.nn.Tanh(),
                                paddle.nn.Linear(8, 1))


def paddle_step(paddle, net, opt, x, y):
    opt.clear_grad()
    paddle.nn.functional.mse_loss(net(x), y).backward()
    opt.step()


@claim("paddle-freezing-stop-gradient-skipped", "paddle-freezing-frozen-layer-output-stop-gradient")
def test_paddle_stop_gradient_no_grad_no_accumulator_no_decay(paddle):
    x, y = paddle.to_tensor(batch()[0].numpy()), paddle.to_tensor(batch()[1].numpy())
    net = paddle_net(paddle)
    for p in net[0].parameters():
        p.stop_gradient = True
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9,
                                    parameters=net.parameters(), weight_decay=0.01)
    before = net[0].weight.numpy().copy()
    for _ in range(5):
        paddle_step(paddle, net, opt, x, y)
    assert net[0].weight.grad is None
    assert np.array_equal(net[0].weight.numpy(), before)
    accumulators = list(opt.state_dict())
    assert not any(k.startswith(net[0].weight.name + "_") for k in accumulators)   # no velocity
    assert any(k.startswith(net[2].weight.name + "_velocity") for k in accumulators)
    assert net[0](x).stop_gradient                     # the frozen layer's output: no graph


@claim("paddle-freezing-trainable-false-stop-gradient")
def test_paddle_paramattr_trainable_false(paddle):
    net = paddle_net(paddle, weight_attr=paddle.ParamAttr(trainable=False))
    assert net[0].weight.stop_gradient and not net[0].weight.trainable
    assert not net[0].bias.stop_gradient                  # only what the attribute names


@claim("paddle-freezing-paramattr-learning-rate-zero", "paddle-freezing-lr-zero-momentum-accumulates")
def test_paddle_paramattr_learning_rate_zero(paddle):
    x, y = paddle.to_tensor(batch()[0].numpy()), paddle.to_tensor(batch()[1].numpy())
    net = paddle_net(paddle, weight_attr=paddle.ParamAttr(learning_rate=0.0))
    assert net[0].weight.optimize_attr["learning_rate"] == 0.0
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9,
                                    parameters=net.parameters(), weight_decay=0.01)
    before = net[0].weight.numpy().copy()
    norms = []
    for _ in range(5):
        paddle_step(paddle, net, opt, x, y)
        velocity = opt.state_dict()[net[0].weight.name + "_velocity_0"]
        norms.append(float(np.linalg.norm(velocity.numpy())))
    assert np.array_equal(net[0].weight.numpy(), before)      # it did not move
    assert net[0].weight.grad is not None                      # it got a gradient
    assert norms[-1] > 1.5 * norms[0]                          # its momentum grows


@row("paddle-names-08", "running-stat momentum", "`momentum=0.9` (weight of the old value)")
@claim("paddle-freezing-bn-momentum-weight-of-old")
def test_paddle_batchnorm_momentum_is_the_weight_of_the_old_value(paddle):
    bn = paddle.nn.BatchNorm1D(3)
    assert inspect.signature(paddle.nn.BatchNorm1D).parameters["momentum"].default == 0.9
    xb = paddle.to_tensor((np.random.RandomState(2).randn(16, 3) * 2.0 + 1.0).astype("float32"))
    old_mean, old_var = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    bn(xb)
    batch_mean = xb.numpy().mean(axis=0)
    assert np.allclose(bn._mean.numpy(), 0.9 * old_mean + 0.1 * batch_mean, atol=1e-6)
    # the running variance follows the BIASED batch variance (divided by n, not n - 1)
    assert np.allclose(bn._variance.numpy(), 0.9 * old_var + 0.1 * xb.numpy().var(axis=0),
                       atol=1e-5)
    assert not np.allclose(bn._variance.numpy(),
                           0.9 * old_var + 0.1 * xb.numpy().var(axis=0, ddof=1), atol=1e-3)


@claim("paddle-freezing-bn-eval-uses-running-stats")
def test_paddle_batchnorm_eval_and_train(paddle):
    paddle.seed(3)
    bn = paddle.nn.BatchNorm1D(3)
    for _ in range(5):
        bn(paddle.randn([16, 3]) * 3.0 + 2.0)
    mean, var = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    bn.eval()
    x = paddle.randn([16, 3]) * 3.0 + 2.0
    out = bn(x)
    assert np.array_equal(bn._mean.numpy(), mean) and np.array_equal(bn._variance.numpy(), var)
    expected = (x.numpy() - mean) / np.sqrt(var + 1e-5) * bn.weight.numpy() + bn.bias.numpy()
    assert np.allclose(out.numpy(), expected, atol=1e-5)
    bn.train()
    bn(x)
    assert not np.array_equal(bn._mean.numpy(), mean)


@row("paddle-names-08", "fixed BatchNorm statistics", "`BatchNorm1D(c, use_global_stats=True)`")
@claim("paddle-freezing-bn-use-global-stats")
def test_paddle_use_global_stats(paddle):
    assert inspect.signature(paddle.nn.BatchNorm1D).parameters["use_global_stats"].default is None
    bn = paddle.nn.BatchNorm1D(3, use_global_stats=True)
    bn.train()
    x = paddle.randn([16, 3]) + 5.0
    out = bn(x)
    assert bn.training
    assert np.array_equal(bn._mean.numpy(), np.zeros(3))           # not updated in training
    assert np.allclose(out.numpy(), x.numpy() / np.sqrt(1 + 1e-5), atol=1e-5)  # running stats used
    off = paddle.nn.BatchNorm1D(3, use_global_stats=False)         # False: batch stats, always
    off.eval()
    assert np.allclose(off(x).numpy().mean(axis=0), 0, atol=1e-4)


@claim("paddle-freezing-bn-stop-gradient-stats-move")
def test_paddle_batchnorm_stop_gradient_alone_leaves_stats_updating(paddle):
    bn = paddle.nn.BatchNorm1D(3)
    for p in bn.parameters():
        p.stop_gradient = True
    bn(paddle.randn([16, 3]) + 5.0)
    assert not np.allclose(bn._mean.numpy(), 0)


@row("paddle-names-08", "a group's learning rate", "`opt.set_lr(...)` (whole optimizer)")
@claim("paddle-freezing-set-lr-whole-optimizer")
def test_paddle_set_lr_sets_the_whole_optimizers_rate(paddle):
    a, b = paddle.nn.Linear(2, 2), paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=a.parameters() + b.parameters())
    opt.set_lr(0.01)
    assert opt.get_lr() == 0.01
    wa, wb = a.weight.numpy().copy(), b.weight.numpy().copy()
    x = paddle.ones([1, 2])
    (a(x).sum() + b(x).sum()).backward()
    ga, gb = a.weight.grad.numpy().copy(), b.weight.grad.numpy().copy()
    opt.step()
    assert np.allclose(a.weight.numpy(), wa - 0.01 * ga) and np.allclose(b.weight.numpy(), wb - 0.01 * gb)


@claim("torch-freezing-zero-grad-set-to-none")
def test_torch_zero_grad_leaves_none_and_set_to_none_false_leaves_zeros_in_the_same_tensor():
    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default
    for w, opt_class in ((torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.optim.SGD),
                         (nn.Parameter([1.0, 2.0]), optim.SGD)):         # PyTorch, then dltutor
        opt = opt_class([w], lr=0.1)
        (w * w).sum().backward()
        kept = w.grad
        opt.zero_grad(set_to_none=False)
        assert w.grad is kept and w.grad.tolist() == [0.0, 0.0]
        opt.zero_grad()
        assert w.grad is None


@claim("paddle-freezing-clear-grad-zeros")
def test_paddle_clear_grad_leaves_zeros_and_set_to_zero_false_leaves_none(paddle):
    w = paddle.create_parameter([2], "float32")
    w.set_value(paddle.to_tensor([1.0, 2.0]))
    p = nn.Parameter([1.0, 2.0])
    for param, opt in ((w, paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])),
                       (p, optim.SGD([p], lr=0.1))):                       # Paddle, then dltutor
        (param * param).sum().backward()
        opt.clear_grad()
        assert param.grad is not None and param.grad.numpy().tolist() == [0.0, 0.0]
        (param * param).sum().backward()
        opt.clear_grad(set_to_zero=False)
        assert param.grad is None


# --- PyTorch: freezing some rows of one tensor -----------------------------------------------
FROZEN = [0, 1, 2]


def torch_rows_moved(make_optimizer, mask_from_step=0, how="hook", clear_momentum=False, seed=0):
    """The chapter's `rows_moved` in PyTorch: a 6 x 3 embedding, rows 0-2 masked from
    `mask_from_step` on by a gradient hook or by zeroing those rows of .grad after backward."""
    torch.manual_seed(seed)
    emb = torch.nn.Embedding(6, 3)
    opt = make_optimizer(emb.parameters())
    mask = torch.ones(6, 1)
    mask[FROZEN] = 0.0
    ids = torch.tensor([0, 1, 2, 3, 4, 5, 3])
    for step in range(6):
        if step == mask_from_step:
            start = emb.weight.detach().clone()
            if how == "hook":
                emb.weight.register_hook(lambda grad: grad * mask)
            if clear_momentum:
                for key in ("momentum_buffer", "exp_avg"):
                    if key in opt.state[emb.weight]:
                        opt.state[emb.weight][key][FROZEN] = 0.0
        opt.zero_grad()
        (emb(ids) ** 2).sum().backward()
        if how == "zero .grad" and step >= mask_from_step:
            with torch.no_grad():
                emb.weight.grad[FROZEN] = 0.0
        opt.step()
    moved = (emb.weight.detach() - start).abs().amax(dim=1)
    return moved[FROZEN].max().item(), moved[3:].min().item()


TORCH_SETUPS = {
    "SGD, momentum 0.9": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 0, True),
    "Adam": (lambda ps: torch.optim.Adam(ps, lr=0.1), 0, True),
    "SGD, weight_decay 0.1": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                        weight_decay=0.1), 0, False),
    "AdamW, weight_decay 0.01": (lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.01),
                                 0, False),
    "SGD momentum, masked late": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 3, False),
    "Adam, masked late": (lambda ps: torch.optim.Adam(ps, lr=0.1), 3, False),
}


@row("torch-names-08", "freeze some rows of a tensor", "`p.register_hook(fn)`")
@claim("torch-partial-freeze-mask-hook")
@pytest.mark.parametrize("label", list(TORCH_SETUPS))
def test_torch_a_gradient_mask_keeps_rows_only_without_decay_and_from_the_first_step(label):
    make, start, stays = TORCH_SETUPS[label]
    for seed in range(3):
        (hook, free), (zeroed, _) = (torch_rows_moved(make, start, how, seed=seed)
                                     for how in ("hook", "zero .grad"))
        assert hook == zeroed and free > 0
        assert (hook == 0) == stays, (label, seed, hook)


@claim("torch-partial-freeze-mask-hook")
def test_torch_no_decay_group_and_cleared_momentum_repair_the_mask():
    repaired = [
        (lambda ps: torch.optim.SGD([{"params": ps, "weight_decay": 0.0}], lr=0.1, momentum=0.9,
                                    weight_decay=0.1), 0, False),
        (lambda ps: torch.optim.AdamW([{"params": ps, "weight_decay": 0.0}], lr=0.1), 0, False),
        (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 3, True),
        (lambda ps: torch.optim.Adam(ps, lr=0.1), 3, True),
    ]
    for make, start, clear in repaired:
        frozen, free = torch_rows_moved(make, start, clear_momentum=clear)
        assert frozen == 0 and free > 0


@claim("torch-partial-freeze-split")
def test_torch_frozen_rows_as_a_buffer_joined_by_cat_never_move():
    class PartlyFrozenEmbedding(torch.nn.Module):
        def __init__(self, frozen_rows, num_free, dim):
            super().__init__()
            self.register_buffer("frozen", frozen_rows)
            self.free = torch.nn.Parameter(torch.randn(num_free, dim))

        def forward(self, ids):
            return F.embedding(ids, torch.cat([self.frozen, self.free]))

    torch.manual_seed(0)
    split = PartlyFrozenEmbedding(torch.randn(3, 3), num_free=3, dim=3)
    kept, free_before = split.frozen.clone(), split.free.detach().clone()
    opt = torch.optim.AdamW(split.parameters(), lr=0.1, weight_decay=0.1)
    for _ in range(6):
        opt.zero_grad()
        (split(torch.tensor([0, 1, 2, 3, 4, 5, 3])) ** 2).sum().backward()
        opt.step()
    assert [name for name, _ in split.named_parameters()] == ["free"]
    assert torch.equal(split.frozen, kept)
    assert (split.free.detach() - free_before).abs().amax(dim=1).min() > 0
