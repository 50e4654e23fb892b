# %% [markdown]
# # Freezing parameters
#
# **About 30 minutes.** You will be able to:
#
# * stop a layer training in three ways, and say what each one leaves running;
# * freeze BatchNorm's running statistics, some rows of one tensor, and pruned weights at zero;
# * find out why a parameter does, or does not, move.
#
# Fine-tuning a pretrained network, training a new head on a fixed feature extractor, warming up
# one part of a model before the rest: all of them need some parameters to **stop changing**
# while the others train. The ways to ask for that are not the same: some still compute a
# gradient you then throw away, some keep the optimizer's momentum running in the background, and
# one leaves gradients piling up forever.
#
# (Stopping the gradient at an intermediate output with `detach()` is answered in
# [01 § Stopping the gradient at an intermediate output](01_tensors_autograd.ipynb#Stopping-the-gradient-at-an-intermediate-output);
# here it is only one of the planted bugs.)

# %%
import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.nn import functional as F
from dltutor.trace import Recorder

np.set_printoptions(precision=4, suppress=True)
print("quick mode:", dt.quick_mode())

# %% tags=["twin-torch"]
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import dltutor as dt      # only for the lesson's data and start weights, so the numbers compare

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
print("quick mode:", dt.quick_mode())

# %% [markdown]
# ## Three ways to stop a layer training
#
# We use one small network and one batch of data throughout: a hidden layer `net[0]` (the part
# we want to freeze), a `Tanh`, and an output layer `net[2]`. `make_net()` always builds the same
# network, so we can compare the three ways on identical starting points.

# %%
def make_net():
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


dt.manual_seed(1)
x, y = dt.randn(32, 3), dt.randn(32, 1)


def train_step(net, opt):
    """One ordinary training step; returns the loss."""
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()

# %% tags=["twin-torch"]
def from_kit(kit_module, module):
    """Copy a kit module's start weights into the same PyTorch module (same numbers)."""
    with torch.no_grad():
        for p, q in zip(module.parameters(), kit_module.parameters()):
            p.copy_(torch.from_numpy(q.numpy()))
    return module


def make_net():
    dt.manual_seed(0)
    kit = dt.nn.Sequential(dt.nn.Linear(3, 8), dt.nn.Tanh(), dt.nn.Linear(8, 1))
    return from_kit(kit, nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)))


dt.manual_seed(1)
x, y = (torch.from_numpy(t.numpy()) for t in (dt.randn(32, 3), dt.randn(32, 1)))


def train_step(net, opt):
    """One ordinary training step; returns the loss."""
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()


print(make_net())

# %% tags=["twin-paddle"]
import numpy as np
import paddle
from paddle import nn
from paddle.nn import functional as F

import dltutor as dt      # only for the lesson's data and start weights

np.set_printoptions(precision=4, suppress=True)


def make_net(**first_layer):
    """The lesson's network; a Paddle Linear stores its weight (in, out): the kit's, transposed."""
    dt.manual_seed(0)
    kit = dt.nn.Sequential(dt.nn.Linear(3, 8), dt.nn.Tanh(), dt.nn.Linear(8, 1))
    net = nn.Sequential(nn.Linear(3, 8, **first_layer), nn.Tanh(), nn.Linear(8, 1))
    for i in (0, 2):
        net[i].weight.set_value(kit[i].weight.numpy().T)
        net[i].bias.set_value(kit[i].bias.numpy())
    return net


dt.manual_seed(1)
x, y = (paddle.to_tensor(t.numpy()) for t in (dt.randn(32, 3), dt.randn(32, 1)))


def train_step(net, opt):
    opt.clear_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()


print(make_net())

# %% [markdown]
# ### Way 1: no gradient at all with requires_grad_(False)
#
# `module.requires_grad_(False)` switches off gradient tracking for every parameter of the
# module (for one parameter: `p.requires_grad_(False)`). We give the optimizer momentum *and*
# weight decay, the two things that could move a parameter without a fresh gradient, and train.

# %%
net1 = make_net()
net1[0].requires_grad_(False)
opt1 = optim.SGD(net1.named_parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
w0_before = net1[0].weight.numpy().copy()

for _ in range(5):
    train_step(net1, opt1)

print("net1[0].weight.grad:", net1[0].weight.grad)
print("optimizer state for net1[0].weight:", opt1.state.get(net1[0].weight))
print("step count of the trained layer:", opt1.state[net1[2].weight]["step"])
assert net1[0].weight.grad is None and net1[0].bias.grad is None
assert net1[0].weight not in opt1.state and net1[0].bias not in opt1.state   # no momentum, no step count
assert np.array_equal(net1[0].weight.numpy(), w0_before)                      # decay did not touch it
assert opt1.state[net1[2].weight]["step"] == 5                                  # the rest trained

# %% tags=["twin-torch"]
net1 = make_net()
net1[0].requires_grad_(False)
opt1 = torch.optim.SGD(net1.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
w0_before = net1[0].weight.detach().clone()

for _ in range(5):
    train_step(net1, opt1)

print("net1[0].weight.grad:", net1[0].weight.grad)
print("optimizer state for net1[0].weight:", opt1.state.get(net1[0].weight))
print("state of the trained layer:", list(opt1.state[net1[2].weight]), "(SGD counts no steps)")
print("frozen weight unchanged:", torch.equal(net1[0].weight, w0_before))

# %% tags=["twin-paddle"]
net1 = make_net()
for p in net1[0].parameters():
    p.stop_gradient = True            # Paddle's requires_grad_(False)
opt1 = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9,
                                 parameters=net1.parameters(), weight_decay=0.01)
w0_before = net1[0].weight.numpy().copy()

for _ in range(5):
    train_step(net1, opt1)

accumulators = list(opt1.state_dict())
print("net1[0].weight.grad:", net1[0].weight.grad)
with_velocity = [n for n, p in net1.named_parameters()
                 if any(k.startswith(p.name + "_velocity") for k in accumulators)]
print("parameters with a velocity:", with_velocity)
print("frozen weight unchanged:", np.array_equal(net1[0].weight.numpy(), w0_before))
built_frozen = nn.Linear(3, 8, weight_attr=paddle.ParamAttr(trainable=False))   # when built
print("ParamAttr(trainable=False) gives stop_gradient:", built_frozen.weight.stop_gradient)

# %% [markdown]
# The frozen weight never got a gradient (`.grad` is still None), so `step()` skipped it
# entirely: the optimizer made no state for it (no momentum buffer, no step count) and applied no
# weight decay. The other layer trained normally.

# %% [markdown] tags=["claim-paddle-freezing-paramattr-learning-rate-zero"]
# ### Way 2: a learning rate of 0
#
# The second way keeps `requires_grad=True` and makes the step size zero: the layer's group `lr`,
# or its parameters' `lr_mult` (Paddle's `ParamAttr(learning_rate=0)`), set to 0, so that the
# effective lr `group lr x lr_mult` is 0. The weights do not move, but backward still computes
# the gradient, and the optimizer counts the steps and accumulates the gradients into a growing
# momentum buffer (weight decay is added too, times the zero lr). That stored momentum makes the
# layer jump when you unfreeze it, unless you reset its state with `opt.state.pop(p)`: the Going
# deeper part at the end of this section measures the jump.

# %%
net2 = make_net()
for p in net2[0].parameters():
    p.lr_mult = 0.0
opt2 = optim.SGD(net2.named_parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
w0_before = net2[0].weight.numpy().copy()
buffer_norms = []
for _ in range(5):
    train_step(net2, opt2)
    state = opt2.state[net2[0].weight]
    buffer_norms.append(float(np.linalg.norm(state["momentum_buffer"])))
print("gradient of the 'frozen' weight:", net2[0].weight.grad is not None)
print("its step count:", state["step"])
print("norm of its momentum buffer after each step:", np.round(buffer_norms, 4))
assert np.array_equal(net2[0].weight.numpy(), w0_before)          # it did not move
assert net2[0].weight.grad is not None                            # but it got a gradient
assert opt2.state[net2[0].weight]["step"] == 5                    # and the optimizer counted it
assert buffer_norms[-1] > 1.5 * buffer_norms[0]                   # momentum keeps accumulating

# %% tags=["twin-torch"]
# PyTorch has no lr_mult: the layer to freeze gets a parameter group of its own with lr=0.
net2 = make_net()
opt2 = torch.optim.SGD([{"params": net2[0].parameters(), "lr": 0.0},
                        {"params": net2[2].parameters()}],
                       lr=0.05, momentum=0.9, weight_decay=0.01)
w0_before = net2[0].weight.detach().clone()
buffer_norms = []
for _ in range(5):
    train_step(net2, opt2)
    state = opt2.state[net2[0].weight]
    buffer_norms.append(state["momentum_buffer"].norm().item())
print("gradient of the 'frozen' weight:", net2[0].weight.grad is not None)
print("its optimizer state:", list(state), "(SGD counts no steps)")
print("norm of its momentum buffer after each step:", np.round(buffer_norms, 4))
print("it did not move:", torch.equal(net2[0].weight, w0_before))

# %% tags=["twin-paddle"]
# Paddle's lr_mult = 0 is ParamAttr(learning_rate=0.0), given when the layer is built.
net2 = make_net(weight_attr=paddle.ParamAttr(learning_rate=0.0),
                bias_attr=paddle.ParamAttr(learning_rate=0.0))
opt2 = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9,
                                 parameters=net2.parameters(), weight_decay=0.01)
w0_before = net2[0].weight.numpy().copy()
buffer_norms = []
for _ in range(5):
    train_step(net2, opt2)
    velocity = opt2.state_dict()[net2[0].weight.name + "_velocity_0"]
    buffer_norms.append(float(np.linalg.norm(velocity.numpy())))
print("gradient of the 'frozen' weight:", net2[0].weight.grad is not None)
print("norm of its velocity after each step:", np.round(buffer_norms, 4))
print("it did not move:", np.array_equal(net2[0].weight.numpy(), w0_before))

# %% [markdown]
# ### Way 3: leaving the layer out of the optimizer
#
# The third way gives the optimizer only the parameters it should train. The layer keeps
# `requires_grad=True`, so backward still computes its gradient; `opt.step()` never looks at it.
# The trap is `opt.zero_grad()`: it clears only the optimizer's own parameters. We watch every
# gradient that reaches the left-out weight with a hook.

# %%
net3 = make_net()
opt3 = optim.SGD(net3[2].named_parameters(prefix="2"), lr=0.05, momentum=0.9)
w0_before = net3[0].weight.numpy().copy()
arrived = []
net3[0].weight.register_hook(lambda grad: arrived.append(grad.numpy().copy()))

grad_norms = []
for _ in range(5):
    train_step(net3, opt3)          # its zero_grad() clears net3[2] only
    grad_norms.append(float(np.linalg.norm(net3[0].weight.grad.numpy())))
print("norm of net3[0].weight.grad after each step:", np.round(grad_norms, 4))

# %% tags=["twin-torch", "twin-same-numbers"]
net3 = make_net()
opt3 = torch.optim.SGD(net3[2].parameters(), lr=0.05, momentum=0.9)
w0_before = net3[0].weight.detach().clone()
arrived = []
net3[0].weight.register_hook(lambda grad: arrived.append(grad.clone()))

grad_norms = []
for _ in range(5):
    train_step(net3, opt3)          # its zero_grad() clears net3[2] only
    grad_norms.append(net3[0].weight.grad.norm().item())
print("norm of net3[0].weight.grad after each step:", np.round(grad_norms, 4))

# %% [markdown]
# The weight never moves, yet its `.grad` holds the **sum** of every gradient since training
# began: after five steps it is several times the first gradient. Backward does the work for
# nothing, and if you later add the layer to an optimizer (or use a `grad_clip` that counts it),
# that stale sum is what it sees first. `net3.zero_grad()` (the module's, which clears every
# parameter) avoids it. To unfreeze a left-out layer, clear its gradient and add it to the
# optimizer as a new group:

# %%
assert np.array_equal(net3[0].weight.numpy(), w0_before)                 # never updated
assert len(arrived) == 5                                                 # but a gradient every step
assert np.allclose(net3[0].weight.grad.numpy(), np.sum(arrived, axis=0), atol=1e-6)  # summed
assert grad_norms[-1] > 2 * grad_norms[0]                                 # and growing
net3.zero_grad()
assert net3[0].weight.grad is None
opt3.add_param_group({"params": net3[0].named_parameters(prefix="0")})
train_step(net3, opt3)
assert not np.array_equal(net3[0].weight.numpy(), w0_before)             # now it trains
assert opt3.state[net3[0].weight]["step"] == 1

# %% tags=["twin-torch"]
print("the sum of every gradient:", torch.allclose(net3[0].weight.grad, sum(arrived), atol=1e-6))
net3.zero_grad()                     # the module's zero_grad clears every parameter
print("after net3.zero_grad():", net3[0].weight.grad)
opt3.add_param_group({"params": net3[0].parameters()})
train_step(net3, opt3)
print("now it trains:", not torch.equal(net3[0].weight, w0_before))

# %% [markdown]
# ### The three ways side by side
#
# | | `requires_grad_(False)` | lr 0 (`lr_mult = 0` or group `lr = 0`) | left out of the optimizer |
# | --- | --- | --- | --- |
# | gradient computed by backward | no (`.grad` stays None; less work) | yes | yes |
# | `.grad` between steps | None | fresh each step (`opt.zero_grad()` clears it) | **accumulates** (only `model.zero_grad()` clears it) |
# | optimizer state (`step`, momentum) | none | **keeps advancing** | none |
# | weight decay | not applied | applied, but times lr 0: no effect | not applied |
# | moves while frozen | no | no | no |
# | when unfrozen | momentum starts afresh | stored momentum makes it **jump** | must be added with `opt.add_param_group` |
#
# `requires_grad_(False)` is the one to reach for: the cheapest, and it leaves nothing behind.
# A zero lr is handy for switching a layer off and on *during* training ([07 § Changing a group learning rate during training](07_learning_rates.ipynb#Changing-a-group-learning-rate-during-training),
# and the live lab), but mind the momentum.

# %% [markdown]
# ### Going deeper: unfreezing after a zero lr, and the three ways in the frameworks
#
# The jump a zero lr leaves for the moment you unfreeze, what the frameworks do in each way, and the graph a frozen layer does not record.

# %% [markdown]
# **Unfreezing: the stored momentum makes the layer jump.** Below, two copies of the network are
# trained for the same number of steps with the first layer frozen, one by `requires_grad_(False)`
# (way 1) and one by `lr_mult = 0` (way 2), and then unfrozen. While frozen, the two copies are
# identical: the first layer does not move in either, so the rest sees the same inputs and trains
# the same way. A `Recorder` (chapter 09 uses it more) records the size of every update.

# %%
frozen_steps = 20
after_steps = 10

def run(way):
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.05, momentum=0.9)
    rec = Recorder(net, opt)
    if way == "requires_grad":
        net[0].requires_grad_(False)
    else:
        for p in net[0].parameters():
            p.lr_mult = 0.0
    for _ in range(frozen_steps):
        train_step(net, opt)
    snapshot = {n: p.numpy().copy() for n, p in net.named_parameters()}
    net[0].requires_grad_(True)                 # unfreeze, both ways
    for p in net[0].parameters():
        p.lr_mult = 1.0
    for _ in range(after_steps):
        train_step(net, opt)
    return net, opt, rec, snapshot


net_a, opt_a, rec_a, snap_a = run("requires_grad")
net_b, opt_b, rec_b, snap_b = run("lr_mult")
first_a = rec_a.series("update_norm", "0.weight")[frozen_steps]
first_b = rec_b.series("update_norm", "0.weight")[frozen_steps]
print(f"first update of 0.weight after unfreezing: requires_grad way {first_a:.4f}, "
      f"lr_mult way {first_b:.4f} ({first_b / first_a:.1f}x larger)")

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no lr_mult (a group with lr 0 instead) and no Recorder: we measure each update.
frozen_steps = 20
after_steps = 10


def run(way):
    """Freeze net[0] `way`, unfreeze it after frozen_steps; the size of each update of 0.weight."""
    net = make_net()
    opt = torch.optim.SGD([{"params": net[0].parameters()}, {"params": net[2].parameters()}],
                          lr=0.05, momentum=0.9)
    if way == "requires_grad":
        net[0].requires_grad_(False)
    else:
        opt.param_groups[0]["lr"] = 0.0
    norms = []
    for step in range(frozen_steps + after_steps):
        if step == frozen_steps:                  # unfreeze, both ways
            net[0].requires_grad_(True)
            opt.param_groups[0]["lr"] = 0.05
        before = net[0].weight.detach().clone()
        train_step(net, opt)
        norms.append((net[0].weight - before).norm().item())
    return norms


norms_a, norms_b = run("requires_grad"), run("zero lr")
first_a, first_b = norms_a[frozen_steps], norms_b[frozen_steps]
print(f"first update of 0.weight after unfreezing: requires_grad way {first_a:.4f}, "
      f"zero-lr way {first_b:.4f} ({first_b / first_a:.1f}x larger)")

# %% [markdown]
# The `requires_grad` copy starts its momentum afresh when unfrozen: its first update is a plain
# first SGD step, `lr x gradient`. The `lr_mult` copy applies, on top of that gradient, the
# momentum it stored over twenty frozen steps, and jumps several times as far.

# %%
assert all(np.array_equal(snap_a[n], snap_b[n]) for n in snap_a)   # identical while frozen
check = make_net()     # the gradient at the unfreezing step, recomputed on the snapshot
for n, p in check.named_parameters():
    p.set_value(snap_a[n])
F.mse_loss(check(x), y).backward()
plain_first_step = 0.05 * np.linalg.norm(check[0].weight.grad.numpy())
assert np.isclose(first_a, plain_first_step, rtol=1e-4)           # way 1: a plain first step
assert first_b > 3 * first_a                                        # way 2: a jump
fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.3), sharey=True, layout="constrained")
plot.traces(rec_a, "update_norm", names="0.weight", ax=axes[0], log=False)
axes[0].set_title("frozen with requires_grad_(False)")
plot.traces(rec_b, "update_norm", names="0.weight", ax=axes[1], log=False)
axes[1].set_title("frozen with lr_mult = 0")
for ax in axes:
    ax.axvline(frozen_steps - 0.5, color="0.3", ls=":", lw=1)
plot.show()

# %% tags=["twin-torch"]
# No figure: the numbers it draws, the update size of 0.weight at steps 18 to 25 (unfrozen at 20).
print("requires_grad way:", np.round(norms_a[18:26], 4))
print("zero-lr way:      ", np.round(norms_b[18:26], 4))

# %% [markdown] tags=["claim-torch-freezing-requires-grad-false-skipped", "claim-paddle-freezing-stop-gradient-skipped", "claim-paddle-freezing-trainable-false-stop-gradient", "claim-torch-freezing-lr-zero-momentum-accumulates", "claim-paddle-freezing-lr-zero-momentum-accumulates", "claim-torch-freezing-left-out-grad-accumulates", "claim-torch-freezing-frozen-layer-output-no-graph", "claim-paddle-freezing-frozen-layer-output-stop-gradient"]
# The shaded steps are the frozen ones. On the left, the unfrozen layer starts gently and its
# momentum builds up over a few steps. On the right it starts at full speed on the very first
# step, pushed by momentum gathered from gradients of the frozen period — gradients of a network
# that has changed since. If you must freeze with a zero lr, reset the state when you unfreeze
# (`opt.state.pop(p)` for each parameter of the layer).
#
# **In PyTorch and Paddle.** PyTorch 2.13's `SGD` skips a parameter whose `.grad` is None as
# `step()` did above: no state, no decay, no move. Paddle 3.3 spells the switch
# `p.stop_gradient = True` (or `ParamAttr(trainable=False)` when the layer is built): the
# parameter gets no gradient, and `paddle.optimizer.Momentum` makes no velocity for it and does
# not move it, weight decay included. A zero lr behaves the same in PyTorch 2.13 (a group with
# `lr=0`) and Paddle 3.3 (`ParamAttr(learning_rate=0)` with `Momentum`): the weight stays put
# while its momentum buffer grows. And PyTorch 2.13's `opt.zero_grad()` also clears only the
# optimizer's parameters, while `model.zero_grad()` sets every `.grad` to None.
#
# **A frozen layer records no graph.** Backward also does less work in way 1. Our input `x` does
# not need a gradient either, so once the first layer's parameters are frozen **nothing** in that
# layer needs one: its output is computed without recording a graph (`grad_fn` is None), and
# backward stops at the `Tanh` instead of computing gradients for its 32 numbers and throwing them
# away. PyTorch 2.13 records no graph there either (`requires_grad` False, `grad_fn` None); in
# Paddle 3.3 the frozen layer's output has `stop_gradient=True`.

# %%
hidden = net1[0](x)
print("frozen layer's output:  requires_grad =", hidden.requires_grad, "| grad_fn =", hidden.grad_fn)
print("trainable layer's output: grad_fn =", net1[2](net1[1](hidden)).grad_fn)
assert hidden.grad_fn is None and not hidden.requires_grad     # no graph is recorded for it
assert make_net()[0](x).grad_fn is not None                   # unfrozen, the same layer records one

# %% tags=["twin-torch"]
hidden = net1[0](x)
print("frozen layer's output:  requires_grad =", hidden.requires_grad,
      "| grad_fn =", hidden.grad_fn)
print("trainable layer's output: grad_fn =", net1[2](net1[1](hidden)).grad_fn.name())

# %% tags=["twin-paddle"]
hidden = net1[0](x)
print("frozen layer's output:   stop_gradient =", hidden.stop_gradient)
print("trainable layer's output: stop_gradient =", net1[2](net1[1](hidden)).stop_gradient)

# %% [markdown]
# ## Freezing BatchNorm statistics
#
# A BatchNorm layer holds two kinds of numbers. `weight` and `bias` are parameters, learned by
# the optimizer like any other. `running_mean` and `running_var` are **buffers**: not learned,
# but updated by every forward pass in training mode from the batch's own statistics, so that at
# evaluation time the layer can normalize with them. The optimizer never sees them.

# %%
bn = nn.BatchNorm1d(3)
print(bn)
print("parameters:", [n for n, _ in bn.named_parameters()])
print("buffers:   ", [n for n, _ in bn.named_buffers()])
print("state dict:", list(bn.state_dict()))
assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
assert {"running_mean", "running_var"} <= {n for n, _ in bn.named_buffers()}
assert {"running_mean", "running_var"} <= set(bn.state_dict())     # saved with the model

# %% tags=["twin-torch", "twin-same-numbers"]
bn = nn.BatchNorm1d(3)
print(bn)
print("parameters:", [n for n, _ in bn.named_parameters()])
print("buffers:   ", [n for n, _ in bn.named_buffers()])
print("state dict:", list(bn.state_dict()))

# %% [markdown] tags=["claim-torch-freezing-bn-momentum-weight-of-batch", "claim-paddle-freezing-bn-momentum-weight-of-old"]
# ### What momentum 0.1 means
#
# In training mode every forward pass moves the running statistics a fraction `momentum` of the
# way towards the batch's: `running = 0.9 * running + 0.1 * batch` with PyTorch's default
# `momentum=0.1` (the variance is the unbiased batch variance). Paddle writes the *same* rule with
# `momentum=0.9`, the weight of the old value: `running = 0.9 * running + 0.1 * batch`. Same
# number, opposite meaning — translate it when you port a model. (One more difference: Paddle
# 3.3's running variance follows the *biased* batch variance, divided by n rather than n - 1.)

# %%
dt.manual_seed(2)
xb = dt.randn(16, 3) * 2.0 + 1.0               # a batch with mean about 1 and std about 2
old_mean, old_var = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
out = bn(xb)
batch_mean, batch_var = xb.numpy().mean(axis=0), xb.numpy().var(axis=0, ddof=1)
print("running_mean:", bn.running_mean.numpy(), " batch mean:", batch_mean)
momentum = 0.1            # PyTorch's (and dltutor's) convention
assert np.allclose(bn.running_mean.numpy(), (1 - momentum) * old_mean + momentum * batch_mean, atol=1e-6)
assert np.allclose(bn.running_var.numpy(), (1 - momentum) * old_var + momentum * batch_var, atol=1e-5)


def paddle_running_update(old, batch, momentum):
    """Paddle's rule for the running mean: its momentum is the weight of the OLD value
    (tests/frameworks/test_ch08_freezing.py checks it in Paddle 3.3)."""
    return momentum * old + (1 - momentum) * batch


# Paddle's 0.9 gives what PyTorch's 0.1 gave; copying the number 0.1 over does not
assert np.allclose(bn.running_mean.numpy(), paddle_running_update(old_mean, batch_mean, 0.9),
                   atol=1e-6)
assert not np.allclose(bn.running_mean.numpy(), paddle_running_update(old_mean, batch_mean, 0.1),
                       atol=1e-2)
# in training mode the output is normalized with the BATCH statistics, not the running ones
assert np.allclose(out.numpy().mean(axis=0), 0, atol=1e-5)

# %% tags=["twin-torch", "twin-same-numbers"]
dt.manual_seed(2)
xb = torch.from_numpy((dt.randn(16, 3) * 2.0 + 1.0).numpy())   # the lesson's batch
out = bn(xb)
print("running_mean:", bn.running_mean.numpy(), " batch mean:", xb.mean(dim=0).numpy())

# %% tags=["twin-paddle", "twin-same-numbers"]
# Paddle's momentum is the weight of the OLD value: its default 0.9 is PyTorch's 0.1.
import warnings

# Paddle 3.3 warns at every BatchNorm forward in training mode that it tracks the statistics.
warnings.filterwarnings("ignore", message="When training, we now always track")
bn = nn.BatchNorm1D(3)
dt.manual_seed(2)
xb = paddle.to_tensor((dt.randn(16, 3) * 2.0 + 1.0).numpy())   # the lesson's batch
out = bn(xb)
print("running_mean:", bn._mean.numpy(), " batch mean:", xb.numpy().mean(axis=0))

# %% [markdown] tags=["claim-torch-freezing-bn-eval-uses-running-stats", "claim-paddle-freezing-bn-eval-uses-running-stats"]
# ### train() and eval()
#
# Every module has a `training` flag. `model.train()` sets it (on the module and all its
# submodules), `model.eval()` clears it. It changes what a layer *computes*, not whether its
# parameters learn: Dropout stops dropping, and BatchNorm normalizes with its running statistics
# and stops updating them. PyTorch 2.13 and Paddle 3.3 switch their BatchNorm layers the same
# way. First we give our BatchNorm statistics worth keeping, as if it had been pretrained.

# %%
dt.manual_seed(3)
net = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
data = [dt.randn(16, 4) * 3.0 + 2.0 for _ in range(20)]
for batch in data:
    net(batch)                                   # "pretraining": the statistics settle
pretrained_mean = net[1].running_mean.numpy().copy()
pretrained_var = net[1].running_var.numpy().copy()
print("pretrained running_mean:", pretrained_mean, " running_var:", pretrained_var)

net.eval()
print("training flags after eval():", [m.training for m in net.modules()])
y_eval = net(data[0])

# %% tags=["twin-torch", "twin-same-numbers"]
dt.manual_seed(3)                     # the lesson's start weights and batches
kit_linear = dt.nn.Linear(4, 3)
data = [torch.from_numpy((dt.randn(16, 4) * 3.0 + 2.0).numpy()) for _ in range(20)]
net = nn.Sequential(from_kit(kit_linear, nn.Linear(4, 3)), nn.BatchNorm1d(3))
for batch in data:
    net(batch)                                   # "pretraining": the statistics settle
pretrained_mean = net[1].running_mean.clone()
pretrained_var = net[1].running_var.clone()
print("pretrained running_mean:", pretrained_mean.numpy(), " running_var:", pretrained_var.numpy())

net.eval()
print("training flags after eval():", [m.training for m in net.modules()])
y_eval = net(data[0])

# %% tags=["twin-paddle"]
dt.manual_seed(3)                     # the lesson's start weights and batches
kit_linear = dt.nn.Linear(4, 3)
data = [paddle.to_tensor((dt.randn(16, 4) * 3.0 + 2.0).numpy()) for _ in range(20)]
net = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1D(3))
net[0].weight.set_value(kit_linear.weight.numpy().T)
net[0].bias.set_value(kit_linear.bias.numpy())
for batch in data:
    net(batch)                                   # "pretraining": the statistics settle
pretrained_mean = net[1]._mean.numpy().copy()
pretrained_var = net[1]._variance.numpy().copy()  # Paddle's follows the biased batch variance
print("pretrained running_mean:", pretrained_mean, " running_var:", pretrained_var)

net.eval()
print("training flags after eval():", [m.training for m in net.sublayers(include_self=True)])
y_eval = net(data[0])

# %% [markdown]
# In eval mode the statistics stay put, and the output is exactly
# `(h - running_mean) / sqrt(running_var + eps) * weight + bias`, with `h` the Linear layer's
# output. The catch: most training loops call `model.train()` at the start of each epoch, which
# switches the BatchNorm back to training mode, and the statistics you wanted to keep drift
# away (the last lines below). Call `bn.eval()` again after every `model.train()`, or build the
# layer with `use_global_stats=True` (Going deeper, below).

# %%
assert np.array_equal(net[1].running_mean.numpy(), pretrained_mean)
assert np.array_equal(net[1].running_var.numpy(), pretrained_var)
h = net[0](data[0]).numpy()
bn_layer = net[1]
expected = ((h - pretrained_mean) / np.sqrt(pretrained_var + bn_layer.eps)
            * bn_layer.weight.numpy() + bn_layer.bias.numpy())
assert np.allclose(y_eval.numpy(), expected, atol=1e-5)
assert np.array_equal(nn.Dropout(0.5).eval()(dt.ones(8)).numpy(), np.ones(8))   # Dropout: off

net.train()
net(data[0])
print("after net.train() and one forward:", net[1].running_mean.numpy())
assert not np.array_equal(net[1].running_mean.numpy(), pretrained_mean)

# %% tags=["twin-torch", "twin-same-numbers"]
h = net[0](data[0])
expected = ((h - pretrained_mean) / torch.sqrt(pretrained_var + net[1].eps)
            * net[1].weight + net[1].bias)
print("eval output uses the running statistics:", torch.allclose(y_eval, expected, atol=1e-5))

net.train()
net(data[0])
print("after net.train() and one forward:", net[1].running_mean.numpy())

# %% tags=["twin-paddle", "twin-same-numbers"]
h = net[0](data[0]).numpy()
expected = ((h - pretrained_mean) / np.sqrt(pretrained_var + net[1]._epsilon)
            * net[1].weight.numpy() + net[1].bias.numpy())
print("eval output uses the running statistics:", np.allclose(y_eval.numpy(), expected, atol=1e-5))

net.train()
net(data[0])
print("after net.train() and one forward:", net[1]._mean.numpy())

# %% [markdown]
# ### Going deeper: statistics fixed in training mode, and what else freezes a BatchNorm
#
# `use_global_stats=True`, which keeps the statistics fixed whatever `train()` says, the parameters it leaves learning, and a BatchNorm with `eps = 0`.

# %% [markdown] tags=["claim-paddle-freezing-bn-use-global-stats", "claim-torch-freezing-bn-no-use-global-stats"]
# **`use_global_stats=True` keeps the statistics fixed in training mode too.** Paddle's
# `use_global_stats=True` (dltutor has the same argument) makes a BatchNorm always normalize with
# its running ("global") statistics and never update them, whatever `train()`/`eval()` say.
# `None`, the default, follows the mode. (PyTorch 2.13's BatchNorm has no such argument: there you
# call `bn.eval()` again after every `model.train()`.) We train a network with a pretrained
# BatchNorm set this way, with `model.train()` called as a training loop would.

# %%
net[1].running_mean.data[...] = pretrained_mean          # put the pretrained statistics back
net[1].running_var.data[...] = pretrained_var
net[1].use_global_stats = True                            # or nn.BatchNorm1d(3, use_global_stats=True)
print(net[1])

opt = optim.SGD(net.parameters(), lr=0.01)
net.train()
for batch in data[:5]:
    opt.zero_grad()
    net(batch).pow(2).mean().backward()
    opt.step()
print("running_mean after 5 training steps:", net[1].running_mean.numpy())
assert net[1].training                                                     # in training mode...
assert np.array_equal(net[1].running_mean.numpy(), pretrained_mean)       # ...yet unchanged
assert np.array_equal(net[1].running_var.numpy(), pretrained_var)
h = net[0](data[1])
expected = ((h.numpy() - pretrained_mean) / np.sqrt(pretrained_var + net[1].eps)
            * net[1].weight.numpy() + net[1].bias.numpy())
assert np.allclose(net[1](h).numpy(), expected, atol=1e-5)                 # and they are used

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch's BatchNorm has no use_global_stats: call bn.eval() again after every model.train().
with torch.no_grad():
    net[1].running_mean.copy_(pretrained_mean)     # put the pretrained statistics back
    net[1].running_var.copy_(pretrained_var)
print(net[1])

opt = torch.optim.SGD(net.parameters(), lr=0.01)
for batch in data[:5]:
    net.train()                                    # as a training loop does, each epoch ...
    net[1].eval()                                  # ... and the BatchNorm back to eval
    opt.zero_grad()
    net(batch).pow(2).mean().backward()
    opt.step()
print("running_mean after 5 training steps:", net[1].running_mean.numpy())

# %% tags=["twin-paddle"]
bn = nn.BatchNorm1D(3, use_global_stats=True)     # fixed statistics, in training mode too
bn.set_state_dict(net[1].state_dict())             # its weight and bias, and ...
bn._mean.set_value(pretrained_mean)                # ... the pretrained statistics put back
bn._variance.set_value(pretrained_var)
net = nn.Sequential(net[0], bn)
print(bn)

opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=net.parameters())
net.train()
for batch in data[:5]:
    opt.clear_grad()
    net(batch).pow(2).mean().backward()
    opt.step()
print("in training mode:", bn.training, "| running_mean after 5 steps:", bn._mean.numpy())
print("unchanged:", np.array_equal(bn._mean.numpy(), pretrained_mean))

# %% [markdown] tags=["claim-torch-freezing-bn-requires-grad-false-stats-move", "claim-paddle-freezing-bn-stop-gradient-stats-move"]
# The statistics are frozen, but BatchNorm's `weight` and `bias` still learn. Freezing the layer
# completely takes both: `use_global_stats=True` for the buffers and `requires_grad_(False)` for
# the parameters. The other way round does not work: `requires_grad_(False)` alone leaves the
# running statistics updating in training mode, because they are not parameters (in PyTorch 2.13
# too, and in Paddle 3.3 with `stop_gradient = True`). `dt.diagnose.why_not_updating` also
# answers for a BatchNorm buffer (last lines below): it checks the mode and `use_global_stats`
# instead of the optimizer.

# %%
only_params = nn.BatchNorm1d(3).requires_grad_(False)
only_params(dt.randn(16, 3) + 5.0)
print("requires_grad_(False) only:", only_params.running_mean.numpy())
assert not np.allclose(only_params.running_mean.numpy(), 0)   # the statistics still moved

fully = nn.BatchNorm1d(3, use_global_stats=True).requires_grad_(False)
fully(dt.randn(16, 3) + 5.0)
assert np.allclose(fully.running_mean.numpy(), 0) and fully.weight.grad is None

check_bn = dt.diagnose.why_not_updating(net, opt, "1.running_mean")
check_bn
assert check_bn.cause == "bn_stats_frozen" and "use_global_stats=True" in check_bn.verdict

# %% tags=["twin-torch"]
torch.manual_seed(0)
only_params = nn.BatchNorm1d(3).requires_grad_(False)
only_params(torch.randn(16, 3) + 5.0)
print("requires_grad_(False) only:", only_params.running_mean.numpy())

# No use_global_stats in PyTorch: eval() keeps the statistics, requires_grad_(False) the rest.
fully = nn.BatchNorm1d(3).requires_grad_(False).eval()
fully(torch.randn(16, 3) + 5.0)
print("eval() and requires_grad_(False):", fully.running_mean.numpy())

# %% tags=["twin-paddle"]
paddle.seed(0)
only_params = nn.BatchNorm1D(3)
for p in only_params.parameters():
    p.stop_gradient = True
only_params(paddle.randn([16, 3]) + 5.0)
print("stop_gradient only:", only_params._mean.numpy())

fully = nn.BatchNorm1D(3, use_global_stats=True)
for p in fully.parameters():
    p.stop_gradient = True
fully(paddle.randn([16, 3]) + 5.0)
print("use_global_stats=True and stop_gradient:", fully._mean.numpy())

# %% [markdown] tags=["claim-torch-freezing-bn-eps-zero-refused-in-training"]
# `eps`, the small number added to the variance before the square root, must be above 0 here:
# dltutor refuses `eps=0` when the layer is made. PyTorch 2.13 builds `BatchNorm1d(3, eps=0.0)`
# without complaint but refuses it at the first forward pass in training mode:
# `ValueError: batch_norm eps must be positive during training, but got 0.0`.

# %%
try:
    nn.BatchNorm1d(3, eps=0.0)
except ValueError as err:
    print(err)
    eps_error = err
assert "eps" in str(eps_error)

# %% tags=["twin-torch"]
strict = nn.BatchNorm1d(3, eps=0.0)           # PyTorch builds it ...
try:
    strict(torch.randn(16, 3))                 # ... and refuses it at a forward in training mode
except ValueError as err:
    print(err)

# %% [markdown] tags=["claim-torch-freezing-zero-grad-momentum-coasts", "claim-torch-freezing-zero-grad-adam-moves", "claim-torch-freezing-zero-grad-weight-decay-shrinks"]
# ## Why a frozen parameter can still move
#
# "I froze it, but it still changes" usually means the parameter got a gradient of **zeros**
# instead of **no** gradient. `step()` does not skip a zero gradient: it adds weight decay and
# applies the momentum stored from earlier steps. Only `grad is None` makes the optimizer leave
# a parameter alone. PyTorch 2.13's `SGD` and `Adam` behave the same in each of the three cases
# below.
#
# ### Stale momentum
#
# We train a layer with momentum for a few steps, then "freeze" it by zeroing its gradient with a
# hook (a gradient mask).

# %%
net = make_net()
opt = optim.SGD(net.named_parameters(), lr=0.05, momentum=0.9)
for _ in range(3):
    train_step(net, opt)

handle = net[0].weight.register_hook(lambda grad: grad * 0)     # "freeze" with a zero gradient
before = net[0].weight.numpy().copy()
buf = opt.state[net[0].weight]["momentum_buffer"].copy()
train_step(net, opt)
moved = net[0].weight.numpy() - before
print("gradient is all zeros:", not net[0].weight.grad.numpy().any())
print("yet the weight moved by", f"{np.linalg.norm(moved):.4f}")
assert not net[0].weight.grad.numpy().any()
assert np.allclose(moved, -0.05 * 0.9 * buf, atol=1e-7)

# %% tags=["twin-torch", "twin-same-numbers"]
net = make_net()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for _ in range(3):
    train_step(net, opt)

handle = net[0].weight.register_hook(lambda grad: grad * 0)     # "freeze" with a zero gradient
before = net[0].weight.detach().clone()
train_step(net, opt)
moved = net[0].weight.detach() - before
print("gradient is all zeros:", not net[0].weight.grad.any().item())
print("yet the weight moved by", f"{moved.norm().item():.4f}")

# %% [markdown]
# With a zero gradient the momentum rule gives `buf = 0.9 * buf + 0`, and the step is
# `-lr * buf`: the layer coasts on its old momentum, a little less each step. Adam coasts the
# same way on its first moment `exp_avg` (Going deeper, at the end of this section).

# %% [markdown]
# ### Weight decay with a zero gradient
#
# Coupled weight decay adds `weight_decay * p` to the gradient, so a zero gradient still becomes
# `weight_decay * p`, and every step shrinks the parameter by the factor `1 - lr * weight_decay`.

# %%
w = nn.Parameter([1.0, -2.0, 3.0])
sgd = optim.SGD([w], lr=0.1, weight_decay=0.5)
for _ in range(3):
    w.grad = dt.zeros(3)
    sgd.step()
print("after 3 steps with zero gradients:", w.numpy())
assert np.allclose(w.numpy(), np.array([1.0, -2.0, 3.0]) * (1 - 0.1 * 0.5) ** 3)

# %% tags=["twin-torch", "twin-same-numbers"]
w = nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
sgd = torch.optim.SGD([w], lr=0.1, weight_decay=0.5)
for _ in range(3):
    w.grad = torch.zeros(3)
    sgd.step()
print("after 3 steps with zero gradients:", w.detach().numpy())

# %% [markdown]
# ### The fix: no gradient rather than a zero one
#
# Freeze with `requires_grad_(False)` (and clear the old gradient with `zero_grad()`, as every
# training loop does): the gradient is None, so neither momentum nor decay is applied.

# %%
handle.remove()
net[0].requires_grad_(False)
before = net[0].weight.numpy().copy()
for _ in range(3):
    train_step(net, opt)                 # opt.zero_grad() sets the old gradient to None
assert net[0].weight.grad is None
assert np.array_equal(net[0].weight.numpy(), before)

# %% tags=["twin-torch"]
handle.remove()
net[0].requires_grad_(False)
before = net[0].weight.detach().clone()
for _ in range(3):
    train_step(net, opt)                 # opt.zero_grad() sets the old gradient to None
print("gradient:", net[0].weight.grad, "| moved:", not torch.equal(net[0].weight, before))

# %% [markdown]
# ### Asking why a parameter is or is not updating
#
# When a parameter does not behave, walk through a checklist: is it in the optimizer? does it
# require grad? does backward reach it? what is its effective lr? does clipping crush its
# gradient (chapter 09)? will momentum or weight decay move it anyway?
# `dt.diagnose.why_not_updating(model, opt, name, loss=...)` answers each question from the live
# objects. Here is a model with one mistake planted in each of six branches, which read the same
# input in parallel and are added before a head.

# %%
class Planted(nn.Module):
    def __init__(self):
        super().__init__()
        self.healthy = nn.Linear(4, 4)
        self.left_out = nn.Linear(4, 4)       # not given to the optimizer
        self.frozen = nn.Linear(4, 4)         # requires_grad_(False)
        self.detached = nn.Linear(4, 4)       # its output is detach()-ed
        self.lr_zero = nn.Linear(4, 4)        # in a group with lr 0
        self.mult_zero = nn.Linear(4, 4)      # lr_mult = 0
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = (self.healthy(x) + self.left_out(x) + self.frozen(x)
             + self.detached(x).detach()
             + self.lr_zero(x) + self.mult_zero(x))
        return self.head(h.tanh())


dt.manual_seed(4)
model = Planted()
model.frozen.requires_grad_(False)
for p in model.mult_zero.parameters():
    p.lr_mult = 0.0

named = dict(model.named_parameters())
main = [(n, p) for n, p in named.items() if n.split(".")[0] not in ("left_out", "lr_zero")]
zero = [(n, p) for n, p in named.items() if n.startswith("lr_zero")]
opt = optim.SGD([{"params": main}, {"params": zero, "lr": 0.0}], lr=0.1)

xs, ys = dt.randn(16, 4), dt.randn(16, 1)
loss = F.mse_loss(model(xs), ys)
loss.backward(retain_graph=True)     # keep the graph so the check can walk it from the loss

# %% tags=["twin-torch"]
# PyTorch has no lr_mult: the mult_zero branch becomes a group of its own with lr=0.
class Planted(nn.Module):
    def __init__(self):
        super().__init__()
        for branch in ("healthy", "left_out", "frozen", "detached", "lr_zero", "mult_zero"):
            setattr(self, branch, nn.Linear(4, 4))    # the lesson's six branches
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = (self.healthy(x) + self.left_out(x) + self.frozen(x) + self.detached(x).detach()
             + self.lr_zero(x) + self.mult_zero(x))
        return self.head(h.tanh())


torch.manual_seed(4)
model = Planted()
model.frozen.requires_grad_(False)


def params_of(*branches):
    """The parameters of the named branches."""
    return [p for n, p in model.named_parameters() if n.split(".")[0] in branches]


opt = torch.optim.SGD([{"params": params_of("healthy", "frozen", "detached", "head")},
                       {"params": params_of("lr_zero"), "lr": 0.0},
                       {"params": params_of("mult_zero"), "lr": 0.0}], lr=0.1)
loss = F.mse_loss(model(torch.randn(16, 4)), torch.randn(16, 1))
loss.backward()
print("the groups' learning rates:", [group["lr"] for group in opt.param_groups])

# %% [markdown]
# The verdict for the weight of every branch, checked by taking a step, and under it the full
# checklist for one of them (rows in red are problems; the verdict names the first):

# %%
checks = {branch: dt.diagnose.why_not_updating(model, opt, f"{branch}.weight", loss=loss)
          for branch in ["healthy", "left_out", "frozen", "detached", "lr_zero", "mult_zero"]}
for branch, c in checks.items():
    print(f"{branch:10s} cause={c.cause}\n           {c.verdict}")
assert {b: c.cause for b, c in checks.items()} == {
    "healthy": None, "left_out": "not_in_optimizer", "frozen": "requires_grad_false",
    "detached": "not_reached", "lr_zero": "lr_zero", "mult_zero": "lr_mult_zero"}
# and the diagnosis is right: after one step only the healthy branch (and the head) moved
before = {n: p.numpy().copy() for n, p in model.named_parameters()}
opt.step()
moved = {n.split(".")[0] for n, p in model.named_parameters()
         if np.abs(p.numpy() - before[n]).max() > 1e-5}
print("moved:", sorted(moved))
assert moved == {"healthy", "head"}
checks["mult_zero"]           # the full checklist, as it stood before the step

# %% tags=["twin-torch"]
# PyTorch has no why_not_updating: a step shows what moves (a checklist by hand comes below).
branches = ["healthy", "left_out", "frozen", "detached", "lr_zero", "mult_zero"]
before = {n: p.detach().clone() for n, p in model.named_parameters()}
opt.step()
moved = {n.split(".")[0] for n, p in model.named_parameters()
         if (p - before[n]).abs().max().item() > 1e-5}
print("moved:", sorted(moved))

# %% [markdown]
# ### Going deeper: Adam, None or zeros, a checklist by hand, and the parameter table
#
# Adam with a zero gradient, what clearing a gradient leaves, the checklist written by hand from names every framework has, the verdict on a zero gradient, and `dt.diagnose.summary`.

# %% [markdown]
# **Adam with a zero gradient** coasts on its first moment `exp_avg`, as SGD did on its momentum:

# %%
w = nn.Parameter([1.0, -2.0])
adam = optim.Adam([w], lr=0.1)
(w * w).sum().backward()
adam.step()
w.grad = dt.zeros(2)                      # a zero gradient, not None
before = w.numpy().copy()
adam.step()
print("Adam with a zero gradient moved w by", w.numpy() - before)
assert not np.allclose(w.numpy(), before)

# %% tags=["twin-torch", "twin-same-numbers"]
w = nn.Parameter(torch.tensor([1.0, -2.0]))
adam = torch.optim.Adam([w], lr=0.1)
(w * w).sum().backward()
adam.step()
w.grad = torch.zeros(2)                   # a zero gradient, not None
before = w.detach().clone()
adam.step()
print("Adam with a zero gradient moved w by", (w.detach() - before).numpy())

# %% [markdown] tags=["claim-torch-freezing-zero-grad-set-to-none", "claim-paddle-freezing-clear-grad-zeros"]
# **None or zeros: what clearing a gradient leaves.** `zero_grad()` leaves None, PyTorch's
# default since 2.0 (`set_to_none=True`). With `zero_grad(set_to_none=False)` the gradient tensor
# stays and holds zeros, as PyTorch did before 2.0. Paddle's `opt.clear_grad()` leaves zeros by
# default (`set_to_zero=True`; `set_to_zero=False` leaves None). dltutor has both spellings, each
# with its framework's default. The difference is the one above: a zero gradient still takes
# momentum and decay, None does not, so a frozen parameter stays still only when its gradient is
# None.

# %%
w = nn.Parameter([1.0, 2.0])
clearing = optim.SGD([w], lr=0.1)
(w * w).sum().backward()
kept = w.grad
clearing.zero_grad(set_to_none=False)
print("zero_grad(set_to_none=False):", w.grad, "(same tensor:", w.grad is kept, ")")
clearing.zero_grad()
print("zero_grad():                  ", w.grad)
(w * w).sum().backward()
clearing.clear_grad()
print("clear_grad(), Paddle's default:", w.grad)

# %% tags=["twin-torch"]
w = nn.Parameter(torch.tensor([1.0, 2.0]))
clearing = torch.optim.SGD([w], lr=0.1)
(w * w).sum().backward()
kept = w.grad
clearing.zero_grad(set_to_none=False)
print("zero_grad(set_to_none=False):", w.grad, "(same tensor:", w.grad is kept, ")")
clearing.zero_grad()
print("zero_grad():                  ", w.grad)

# %% tags=["twin-paddle"]
w = paddle.create_parameter([2], "float32")
w.set_value(paddle.to_tensor([1.0, 2.0]))
clearing = paddle.optimizer.SGD(learning_rate=0.1, parameters=[w])
(w * w).sum().backward()
clearing.clear_grad()
print("clear_grad():                  ", w.grad.numpy())
(w * w).sum().backward()
clearing.clear_grad(set_to_zero=False)
print("clear_grad(set_to_zero=False):", w.grad)

# %% [markdown] tags=["claim-torch-freezing-why-not-moving-runs-in-torch", "claim-torch-freezing-no-lr-mult-need-clip"]
# **In PyTorch** there is no `why_not_updating`, and no `lr_mult` or `need_clip` to ask about.
# The questions PyTorch does have take a dozen lines that carry over unchanged (`named_parameters`,
# `param_groups`, `requires_grad` and `.grad` mean the same there). They find the four mistakes
# PyTorch can make. The `mult_zero` branch passes its checks: in PyTorch that cause does not
# exist (there, a multiplier is a group of its own).

# %%
def why_not_moving(model, opt, name):
    """The first reason, among those PyTorch has, why parameter `name` will not move."""
    param = dict(model.named_parameters())[name]
    groups = [g for g in opt.param_groups if any(p is param for p in g["params"])]
    if not groups:
        return "not in the optimizer"
    if not param.requires_grad:
        return "requires_grad is False"
    if param.grad is None:
        return "no gradient: the loss does not reach it"
    if groups[0]["lr"] == 0:
        return "its group's lr is 0"
    if param.grad.abs().max().item() == 0:
        return "its gradient is all zero"
    return None


for branch in checks:
    print(f"{branch:10s} {why_not_moving(model, opt, branch + '.weight')}")
assert {b: why_not_moving(model, opt, f"{b}.weight") for b in checks} == {
    "healthy": None, "left_out": "not in the optimizer", "frozen": "requires_grad is False",
    "detached": "no gradient: the loss does not reach it", "lr_zero": "its group's lr is 0",
    "mult_zero": None}

# %% tags=["twin-torch"]
def why_not_moving(model, opt, name):
    """The first reason, among those PyTorch has, why parameter `name` will not move."""
    param = dict(model.named_parameters())[name]
    groups = [g for g in opt.param_groups if any(p is param for p in g["params"])]
    if not groups:
        return "not in the optimizer"
    if not param.requires_grad:
        return "requires_grad is False"
    if param.grad is None:
        return "no gradient: the loss does not reach it"
    if groups[0]["lr"] == 0:
        return "its group's lr is 0"
    if param.grad.abs().max().item() == 0:
        return "its gradient is all zero"
    return None


for branch in branches:                  # mult_zero is a group with lr 0 here
    print(f"{branch:10s} {why_not_moving(model, opt, branch + '.weight')}")

# %% [markdown]
# The zero-gradient cases from above are recognised too: the verdict says the parameter *will*
# move although its gradient is zero, and why.

# %%
net = make_net()
opt_m = optim.SGD(net.named_parameters(), lr=0.05, momentum=0.9)
train_step(net, opt_m)
opt_m.zero_grad()
(net(x) * 0).sum().backward()                    # an all-zero gradient
stale = dt.diagnose.why_not_updating(net, opt_m, "0.weight")
print(stale.verdict)
assert stale.cause == "moves_by_momentum" and stale.will_move

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no why_not_updating: we read the momentum buffer that will move the parameter.
net = make_net()
opt_m = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
train_step(net, opt_m)
opt_m.zero_grad()
(net(x) * 0).sum().backward()                    # an all-zero gradient
buffer = opt_m.state[net[0].weight]["momentum_buffer"]
print("will still move although its gradient is zero: momentum buffer non-zero "
      f"(largest |momentum_buffer| {buffer.abs().max().item():.4g})")

# %% [markdown]
# **The whole picture at once.** `dt.diagnose.summary(model, opt)` lists every parameter with
# what decides its fate: whether it requires grad, its `lr_mult` and `need_clip`, its optimizer
# group and effective lr (`-` when the optimizer does not hold it), and the totals of trainable,
# frozen and left-out numbers.

# %%
report = dt.diagnose.summary(model, opt)
report
rows = {r["name"]: r for r in report.rows}
assert rows["left_out.weight"]["group"] is None                # not in the optimizer
assert rows["frozen.weight"]["requires_grad"] is False
assert rows["lr_zero.weight"]["effective_lr"] == 0.0 and rows["lr_zero.weight"]["group"] == 1
assert rows["mult_zero.weight"]["effective_lr"] == 0.0 and rows["mult_zero.weight"]["lr_mult"] == 0.0
assert report.totals["frozen"] == 4 * 4 + 4
assert report.totals["not_in_optimizer"] == 4 * 4 + 4

# %% tags=["twin-torch"]
# PyTorch has no parameter table (torchinfo is third party): a few lines read the live objects.
group_of = {id(p): i for i, g in enumerate(opt.param_groups) for p in g["params"]}
for name, p in model.named_parameters():
    group = group_of.get(id(p))
    lr = "-" if group is None else opt.param_groups[group]["lr"]
    print(f"{name:17s} requires_grad={p.requires_grad!s:5s}  group={group!s:4s}  lr={lr}")

# %% [markdown]
# The table cannot show everything: the `detached` branch looks perfectly ordinary in it, because
# the `detach()` lives in the forward code, not in the parameter's settings. Only
# `why_not_updating(..., loss=loss)`, which walks the graph back from the loss, finds that one.

# %%
assert rows["detached.weight"]["requires_grad"] and rows["detached.weight"]["effective_lr"] == 0.1
assert checks["detached"].cause == "not_reached"

# %% [markdown] tags=["claim-torch-partial-freeze-mask-hook"]
# ## Freezing part of a tensor
#
# `requires_grad` belongs to a whole tensor, so it cannot keep *some rows* of an embedding fixed
# (say the pretrained vectors of words you trust) while the others learn. A **gradient mask**
# can: a hook on the parameter that multiplies its gradient by 0 in the frozen rows and 1
# elsewhere, so that everything after backward (the clip, the optimizer) sees the masked
# gradient. Zeroing those rows of `.grad` after each backward does the same, where the loop
# remembers to do it.
#
# Both still give a zero gradient, not "no gradient": whatever `step()` adds to it moves the row.
# `rows_moved` trains a 6 x 3 embedding for six steps with rows 0-2 masked (by the hook, or by
# zeroing `.grad`) from `mask_from_step` on, and reports how far the frozen rows moved since.

# %%
FROZEN = [0, 1, 2]                       # the rows to keep
mask = dt.ones(6, 1)
with dt.no_grad():
    mask[FROZEN] = 0.0                   # 0 for a frozen row, 1 for a free one


def rows_moved(make_optimizer, mask_from_step=0, how="hook", clear_momentum=False, seed=0):
    """Train a 6 x 3 embedding for six steps, masking the FROZEN rows from `mask_from_step` on
    (how="hook": a gradient hook; how="zero .grad": zero those rows of .grad after backward).
    With clear_momentum, also zero those rows of the optimizer's momentum when masking starts.
    Returns the largest move of a frozen row since then, and the smallest of a free row."""
    dt.manual_seed(seed)
    emb = nn.Embedding(6, 3)
    opt = make_optimizer(emb.parameters())
    ids = dt.tensor([0, 1, 2, 3, 4, 5, 3])
    for step in range(6):
        if step == mask_from_step:
            start = emb.weight.numpy().copy()
            if how == "hook":
                emb.weight.register_hook(lambda grad: grad * mask)
            if clear_momentum:                   # forget the push the rows got so far
                for key in opt.momentum_state:   # SGD: momentum_buffer; Adam: exp_avg
                    opt.state[emb.weight][key][FROZEN] = 0.0
        opt.zero_grad()
        (emb(ids) ** 2).sum().backward()
        if how == "zero .grad" and step >= mask_from_step:
            with dt.no_grad():
                emb.weight.grad[FROZEN] = 0.0
        opt.step()
    moved = np.abs(emb.weight.numpy() - start).max(axis=1)
    return moved[FROZEN].max(), moved[3:].min()

# %% tags=["twin-torch"]
FROZEN = [0, 1, 2]                       # the rows to keep
mask = torch.ones(6, 1)
mask[FROZEN] = 0.0                       # 0 for a frozen row, 1 for a free one


def rows_moved(make_optimizer, mask_from_step=0, how="hook", clear_momentum=False, seed=0):
    """The lesson's experiment, from the kit's seeded table (so the numbers compare)."""
    dt.manual_seed(seed)
    emb = nn.Embedding(6, 3)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(dt.nn.Embedding(6, 3).weight.numpy()))
    opt = make_optimizer(emb.parameters())
    ids = torch.tensor([0, 1, 2, 3, 4, 5, 3])
    for step in range(6):
        if step == mask_from_step:
            start = emb.weight.detach().clone()
            if how == "hook":
                emb.weight.register_hook(lambda grad: grad * mask)
            for key in ("momentum_buffer", "exp_avg") if clear_momentum else ():
                if key in opt.state[emb.weight]:           # SGD's momentum, Adam's first moment
                    opt.state[emb.weight][key][FROZEN] = 0.0
        opt.zero_grad()
        (emb(ids) ** 2).sum().backward()
        if how == "zero .grad" and step >= mask_from_step:
            emb.weight.grad[FROZEN] = 0.0
        opt.step()
    moved = (emb.weight.detach() - start).abs().amax(dim=1)
    return moved[FROZEN].max().item(), moved[3:].min().item()


print("mask:", mask.flatten())

# %% [markdown]
# Six setups, each masked both ways (the largest move of a frozen row; 0 means it stayed put):

# %%
setups = {
    "SGD, momentum 0.9":          (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 0),
    "Adam":                       (lambda ps: optim.Adam(ps, lr=0.1), 0),
    "SGD, weight_decay 0.1":      (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9,
                                                        weight_decay=0.1), 0),
    "AdamW, weight_decay 0.01":   (lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.01), 0),
    "SGD momentum, masked late":  (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 3),
    "Adam, masked late":          (lambda ps: optim.Adam(ps, lr=0.1), 3),
}
print(f"{'':27s} {'hook':>7s} {'zero .grad':>11s}")
for label, (make, start) in setups.items():
    hook, zeroed = (rows_moved(make, start, how)[0] for how in ("hook", "zero .grad"))
    print(f"{label:27s} {hook:7.4f} {zeroed:11.4f}")

# %% tags=["twin-torch", "twin-same-numbers"]
setups = {
    "SGD, momentum 0.9":          (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 0),
    "Adam":                       (lambda ps: torch.optim.Adam(ps, lr=0.1), 0),
    "SGD, weight_decay 0.1":      (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                              weight_decay=0.1), 0),
    "AdamW, weight_decay 0.01":   (lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.01), 0),
    "SGD momentum, masked late":  (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 3),
    "Adam, masked late":          (lambda ps: torch.optim.Adam(ps, lr=0.1), 3),
}
print(f"{'':27s} {'hook':>7s} {'zero .grad':>11s}")
for label, (make, start) in setups.items():
    hook, zeroed = (rows_moved(make, start, how)[0] for how in ("hook", "zero .grad"))
    print(f"{label:27s} {hook:7.4f} {zeroed:11.4f}")

# %% [markdown]
# From the first step, with momentum or Adam, the frozen rows stay exactly where they were: their
# momentum (and Adam's averages) start at zero and only ever receive zeros. Two things break that,
# in both spellings alike (they give identical numbers):
#
# * **weight decay**: it is added after the mask (`g = 0 + weight_decay * p`) or, in AdamW,
#   shrinks the parameter directly, so the frozen rows decay towards zero;
# * **masking late**: rows that trained before the mask carry momentum, and `step()` keeps
#   applying it, as in "Stale momentum" above.
#
# So the recipe for a gradient mask: **mask from the first step**, put the masked tensor in a
# parameter group **without weight decay**, and when you start masking a tensor that has already
# trained, **zero its frozen rows in the optimizer's momentum** (`opt.momentum_state` names the
# entries: `momentum_buffer` for SGD, `exp_avg` for Adam and AdamW). Or split the tensor, so that
# the optimizer never holds the frozen rows (Going deeper, below).

# %% [markdown]
# ### Going deeper: the table for five seeds, each fix checked, and splitting the tensor
#
# The table checked for five seeds (the free rows train in every setup), each fix of the recipe in the setup it repairs, and the way that never leaks: a module that keeps the frozen rows as a buffer.

# %%
for seed in range(5):
    for label, (make, start) in setups.items():
        (hook, free), (zeroed, _) = (rows_moved(make, start, how, seed=seed)
                                     for how in ("hook", "zero .grad"))
        assert hook == zeroed and free > 0, (seed, label)
        stays = label in ("SGD, momentum 0.9", "Adam")
        assert (hook == 0) == stays, (seed, label, hook)

# %% [markdown]
# Each fix, in the setup it repairs:

# %%
fixed = {
    "SGD, no decay for the table":  (lambda ps: optim.SGD([{"params": ps, "weight_decay": 0.0}],
                                                         lr=0.1, momentum=0.9,
                                                         weight_decay=0.1), 0, False),
    "AdamW, no decay for the table": (lambda ps: optim.AdamW([{"params": ps, "weight_decay": 0.0}],
                                                            lr=0.1), 0, False),
    "SGD late, momentum cleared":   (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 3, True),
    "Adam late, momentum cleared":  (lambda ps: optim.Adam(ps, lr=0.1), 3, True),
}
for label, (make, start, clear) in fixed.items():
    frozen, free = rows_moved(make, start, clear_momentum=clear)
    print(f"{label:30s} frozen rows moved {frozen:.4f}, every free row at least {free:.4f}")
    assert frozen == 0 and free > 0

# %% tags=["twin-torch", "twin-same-numbers"]
def no_decay(params):
    """One parameter group without weight decay."""
    return [{"params": params, "weight_decay": 0.0}]


fixed = {
    "SGD, no decay for the table":  (lambda ps: torch.optim.SGD(no_decay(ps), lr=0.1, momentum=0.9,
                                                               weight_decay=0.1), 0, False),
    "AdamW, no decay for the table": (lambda ps: torch.optim.AdamW(no_decay(ps), lr=0.1), 0, False),
    "SGD late, momentum cleared":   (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 3, True),
    "Adam late, momentum cleared":  (lambda ps: torch.optim.Adam(ps, lr=0.1), 3, True),
}
for label, (make, start, clear) in fixed.items():
    frozen, free = rows_moved(make, start, clear_momentum=clear)
    print(f"{label:30s} frozen rows moved {frozen:.4f}, every free row at least {free:.4f}")

# %% [markdown] tags=["claim-torch-partial-freeze-split"]
# **The way that never leaks: split the tensor.** Keep the frozen rows as a buffer and only the
# free rows as a parameter, and join them in `forward`. The optimizer never holds the frozen
# rows, so no momentum, decay or late start can reach them (PyTorch: `register_buffer`,
# `torch.cat` and `F.embedding`, the same three calls).

# %%
class PartlyFrozenEmbedding(nn.Module):
    """An embedding whose first rows are fixed (a buffer) and whose other rows train."""

    def __init__(self, frozen_rows, num_free, dim):
        super().__init__()
        self.register_buffer("frozen", frozen_rows)
        self.free = nn.Parameter(dt.randn(num_free, dim))

    def forward(self, ids):
        return F.embedding(ids, dt.cat([self.frozen, self.free]))


dt.manual_seed(0)
split = PartlyFrozenEmbedding(dt.randn(3, 3), num_free=3, dim=3)
kept, free_before = split.frozen.numpy().copy(), split.free.numpy().copy()
adamw = optim.AdamW(split.parameters(), lr=0.1, weight_decay=0.1)
for _ in range(6):
    adamw.zero_grad()
    (split(dt.tensor([0, 1, 2, 3, 4, 5, 3])) ** 2).sum().backward()
    adamw.step()
print("parameters the optimizer holds:", [name for name, _ in split.named_parameters()])
assert np.array_equal(split.frozen.numpy(), kept)
assert np.abs(split.free.numpy() - free_before).max(axis=1).min() > 0   # every free row moved

# %% tags=["twin-torch"]
class PartlyFrozenEmbedding(nn.Module):
    """An embedding whose first rows are fixed (a buffer) and whose other rows train."""

    def __init__(self, frozen_rows, num_free, dim):
        super().__init__()
        self.register_buffer("frozen", frozen_rows)
        self.free = nn.Parameter(torch.randn(num_free, dim))

    def forward(self, ids):
        return F.embedding(ids, torch.cat([self.frozen, self.free]))


torch.manual_seed(0)
split = PartlyFrozenEmbedding(torch.randn(3, 3), num_free=3, dim=3)
kept = split.frozen.clone()
adamw = torch.optim.AdamW(split.parameters(), lr=0.1, weight_decay=0.1)
for _ in range(6):
    adamw.zero_grad()
    (split(torch.tensor([0, 1, 2, 3, 4, 5, 3])) ** 2).sum().backward()
    adamw.step()
print("parameters the optimizer holds:", [name for name, _ in split.named_parameters()])
print("frozen rows kept:", torch.equal(split.frozen, kept))

# %% [markdown]
# ## Pruning freezes single entries at zero
#
# Model compression starts with **magnitude pruning**: set the weights smallest in size to 0
# (half of them, say), keep training the rest, and store the model sparse. It is one more partial
# freeze: single entries, frozen at zero, must stay there through the optimizer's steps. A
# **mask** of the weight's shape marks them, 0 where pruned and 1 where kept; `magnitude_mask`
# below makes one, and `get_submodule` picks the layer to prune by the name `named_parameters()`
# shows for it (`"0"` here, `"encoder.0"` in a nested model).
#
# `pruned_entries` trains a network for three steps, prunes half of its first layer's weight,
# and trains three steps more, keeping the zeros one of four ways:
#
# * **zeros once**: write the zeros into the weight, and nothing else;
# * **mask the gradient**: the zeros, and a gradient hook as in the section above;
# * **mask after each step**: the zeros, written again after every `opt.step()`;
# * **weight_orig * mask**: the layer (`PrunedLinear` below) keeps the unpruned weight as a
#   parameter `weight_orig` and the mask as a buffer `weight_mask`, and multiplies them in every
#   forward pass.

# %%
def magnitude_mask(weight, amount=0.5):
    """A 0/1 tensor of weight's shape: 0 at the `amount` fraction of entries smallest in |w|."""
    order = np.argsort(np.abs(weight.numpy()), axis=None, kind="stable")
    mask = np.ones(weight.shape)
    mask.flat[order[:round(amount * mask.size)]] = 0.0
    return dt.tensor(mask, dtype=weight.dtype)


class PrunedLinear(nn.Module):
    """A Linear layer whose weight is weight_orig * weight_mask, made anew by every forward."""

    def __init__(self, linear, mask):
        super().__init__()
        self.weight_orig = linear.weight      # the same Parameter: the optimizer keeps its state
        self.bias = linear.bias
        self.register_buffer("weight_mask", mask)

    def forward(self, inputs):
        return F.linear(inputs, self.weight_orig * self.weight_mask, self.bias)


def pruned_entries(make_optimizer, way, seed=0, steps=3):
    """Train a seeded copy of the chapter's network, prune half of its first layer's weight
    after `steps` steps and keep the zeros `way` for `steps` more. Returns, at the pruned
    entries: the largest |entry| of the weight the forward pass uses (0.0: the zeros held),
    the largest move of the parameter itself since pruning, and its largest |gradient|."""
    dt.manual_seed(seed)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = make_optimizer(net.parameters())
    for _ in range(steps):
        train_step(net, opt)
    layer = net.get_submodule("0")
    param, mask = layer.weight, magnitude_mask(layer.weight)
    if way == "weight_orig * mask":
        net[0] = PrunedLinear(layer, mask)        # weight_orig keeps its values, as in PyTorch
    else:
        with dt.no_grad():
            param.copy_(param * mask)             # write the zeros
    if way == "mask the gradient":
        param.register_hook(lambda grad: grad * mask)
    at_pruning = param.numpy().copy()
    for _ in range(steps):
        train_step(net, opt)
        if way == "mask after each step":
            with dt.no_grad():
                param.copy_(param * mask)
    pruned = mask.numpy() == 0
    used = param.numpy() * mask.numpy() if way == "weight_orig * mask" else param.numpy()
    return (np.abs(used[pruned]).max(), np.abs(param.numpy() - at_pruning)[pruned].max(),
            np.abs(param.grad.numpy()[pruned]).max())


optimizers = {
    "SGD":                   lambda ps: optim.SGD(ps, lr=0.1),
    "SGD, momentum 0.9":     lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "SGD, weight_decay 0.1": lambda ps: optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "Adam":                  lambda ps: optim.Adam(ps, lr=0.1),
}
ways = ("zeros once", "mask the gradient", "mask after each step", "weight_orig * mask")
print("largest |pruned entry| after three more steps")
print(f"{'':22s}" + "".join(f"{way:>22s}" for way in ways))
for label, make in optimizers.items():
    print(f"{label:22s}" + "".join(f"{pruned_entries(make, way)[0]:22.4f}" for way in ways))

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch's weight_orig * mask is torch.nn.utils.prune (a forward pre-hook makes layer.weight);
# prune.remove writes the zeros into the weight for good and ends the pruning.
from torch.nn.utils import prune


def pruned_entries(make_optimizer, way, seed=0, steps=3):
    """The lesson's experiment, from the kit's seeded weights: the largest |pruned entry| used."""
    dt.manual_seed(seed)
    kit = dt.nn.Sequential(dt.nn.Linear(3, 8), dt.nn.Tanh(), dt.nn.Linear(8, 1))
    net = from_kit(kit, nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)))
    opt = make_optimizer(net.parameters())
    for _ in range(steps):
        train_step(net, opt)
    layer = net.get_submodule("0")
    prune.l1_unstructured(layer, "weight", amount=0.5)   # weight_orig, weight_mask, the hook
    mask = layer.weight_mask
    if way != "weight_orig * mask":
        prune.remove(layer, "weight")                    # the zeros in the same tensor, no hook
    param = layer.weight_orig if way == "weight_orig * mask" else layer.weight
    if way == "mask the gradient":
        param.register_hook(lambda grad: grad * mask)
    for _ in range(steps):
        train_step(net, opt)
        if way == "mask after each step":
            with torch.no_grad():
                param.mul_(mask)
    used = param.detach() * mask if way == "weight_orig * mask" else param.detach()
    return used[mask == 0].abs().max().item()


optimizers = {
    "SGD":                   lambda ps: torch.optim.SGD(ps, lr=0.1),
    "SGD, momentum 0.9":     lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "SGD, weight_decay 0.1": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "Adam":                  lambda ps: torch.optim.Adam(ps, lr=0.1),
}
ways = ("zeros once", "mask the gradient", "mask after each step", "weight_orig * mask")
print("largest |pruned entry| after three more steps")
print(f"{'':22s}" + "".join(f"{way:>22s}" for way in ways))
for label, make in optimizers.items():
    print(f"{label:22s}" + "".join(f"{pruned_entries(make, way):22.4f}" for way in ways))

# %% [markdown]
# Read it by column. **Zeros written once do not survive:** the next step gives every pruned
# entry a gradient again, and `step()` moves it, whatever the optimizer. **Writing the zeros again
# after every step** holds under every optimizer, momentum, weight decay and Adam included: it
# undoes whatever the step did. So does `weight_orig * mask`, 0 at a pruned entry whatever
# `weight_orig` holds. **Masking the gradient** leaks under momentum and Adam: the network trained
# before it was pruned, so the momentum buffer holds a push for every entry (as in "Stale
# momentum" above). To prune during training, make the mask once and keep the zeros one of the two
# ways that hold.

# %% [markdown]
# ### Going deeper: why a gradient mask leaks, and pruning in the frameworks
#
# When a gradient mask is enough, what `weight_orig * mask` keeps exactly, a framework's own pruning tool, and the table checked for five seeds.

# %% [markdown] tags=["claim-torch-pruning-weight-orig-times-mask", "claim-torch-pruning-leaks", "claim-torch-pruning-remove-unprotects", "claim-torch-pruning-is-pruned"]
# **When a gradient mask is enough.** It keeps the zeros only where nothing but the gradient moves
# a weight: plain SGD, and weight decay, which adds `weight_decay * p`, nothing for an entry that
# is exactly 0. Under momentum or Adam the buffer (Adam's `exp_avg`) holds a push for every entry
# from the steps before pruning, and `step()` applies it to the masked ones too. A gradient mask
# alone is enough only where the optimizer has gathered nothing for the pruned entries: from the
# very first step, or after clearing their momentum (the recipe of the section above).
#
# **What `weight_orig * mask` keeps, exactly:** the weight the forward pass uses, and the gradient
# of `weight_orig` at the pruned entries (backward multiplies it by the mask: 0). The pruned
# entries of `weight_orig` itself still move, pushed by the stored momentum, by weight decay (they
# still hold their old values) and by Adam's averages; no forward pass sees them.
#
# **In PyTorch** it is the way of `torch.nn.utils.prune`: in PyTorch 2.13, after
# `from torch.nn.utils import prune`, `prune.l1_unstructured(layer, "weight", amount=0.5)`
# renames the parameter `weight` to `weight_orig` (the same tensor, so an optimizer made before
# keeps it and its state), adds the buffer `weight_mask`, and registers a forward pre-hook that
# recomputes `layer.weight` as their product before every forward. PyTorch 2.13's `SGD` and
# `Adam` give the same pattern of zeros as the table above. `prune.is_pruned(model)` says whether
# any layer of `model` carries such a mask, and `prune.remove(layer, "weight")` ends the pruning:
# the parameter is called `weight` again (the same tensor, now holding `weight_orig * weight_mask`,
# so the optimizer keeps its state), and the mask and the hook are gone. From then on nothing
# protects the zeros: the next step moves them, as in the first column. Remove the pruning only to
# save or ship the model, after the last step.
#
# The whole table, checked for five seeds:

# %%
leaks = {("zeros once", label) for label in optimizers} | {
    ("mask the gradient", "SGD, momentum 0.9"), ("mask the gradient", "Adam")}
for seed in range(5):
    for label, make in optimizers.items():
        for way in ways:
            used, param_moved, grad = pruned_entries(make, way, seed=seed)
            assert (used > 0) == ((way, label) in leaks), (seed, label, way, used)
            if way == "weight_orig * mask":
                assert grad == 0                                   # masked by backward itself
                assert (param_moved > 0) == (label != "SGD"), (seed, label, param_moved)

# %% [markdown] tags=["claim-torch-names-08", "claim-paddle-names-08", "claim-mge-names-08", "claim-torch-freezing-requires-grad-false-skipped", "claim-paddle-freezing-stop-gradient-skipped", "claim-paddle-freezing-trainable-false-stop-gradient", "claim-mge-freezing-not-attached-skipped", "claim-paddle-freezing-paramattr-learning-rate-zero", "claim-paddle-freezing-set-lr-whole-optimizer", "claim-torch-freezing-bn-no-use-global-stats", "claim-paddle-freezing-bn-use-global-stats", "claim-mge-freezing-bn-freeze", "claim-torch-freezing-bn-momentum-weight-of-batch", "claim-paddle-freezing-bn-momentum-weight-of-old", "claim-mge-freezing-bn-momentum-weight-of-old", "claim-torch-freezing-no-summary"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | no gradient for a parameter | `p.requires_grad_(False)`, `module.requires_grad_(False)` | `p.requires_grad_(False)`, `module.requires_grad_(False)` | `p.stop_gradient = True`, `ParamAttr(trainable=False)` | leave it out of `gm.attach(...)` |
# | per-parameter lr multiplier | `p.lr_mult = 0.0` | — (a param group with `lr=0`) | `ParamAttr(learning_rate=0.0)` | — (a param group with `lr=0`) |
# | a group's learning rate | `opt.param_groups[i]["lr"]` | `opt.param_groups[i]["lr"]` | `opt.set_lr(...)` (whole optimizer) | `opt.param_groups[i]["lr"]` |
# | optimizer state of a parameter | `opt.state[p]` | `opt.state[p]` | `opt.state_dict()` (accumulators) | `opt._state[p]` (private) |
# | clear gradients | `opt.zero_grad()`, `model.zero_grad()` | `opt.zero_grad()`, `model.zero_grad()` | `opt.clear_grad()`, `model.clear_gradients()` | `opt.clear_grad()` |
# | training / evaluation mode | `model.train()`, `model.eval()` | `model.train()`, `model.eval()` | `model.train()`, `model.eval()` | `model.train()`, `model.eval()` |
# | fixed BatchNorm statistics | `BatchNorm1d(c, use_global_stats=True)` | — (`bn.eval()` again after every `model.train()`) | `BatchNorm1D(c, use_global_stats=True)` | `BatchNorm2d(c, freeze=True)` (freezes `weight` and `bias` too) |
# | running-stat momentum | `momentum=0.1` (weight of the batch) | `momentum=0.1` (weight of the batch) | `momentum=0.9` (weight of the old value) | `momentum=0.9` (weight of the old value) |
# | freeze some rows of a tensor | `p.register_hook(fn)` (a 0/1 mask) | `p.register_hook(fn)` | `p.register_hook(fn)` | `gm.attach(p, callbacks=[fn])` (`fn(param, grad)` returns the gradient) |
# | why is it not updating? | `dt.diagnose.why_not_updating(model, opt, name)` | — | — | — |
# | parameter table | `dt.diagnose.summary(model, opt)` | — (`torchinfo`, third party) | `paddle.summary(model, input_size)` | `megengine.utils.module_stats.module_stats(model, input_shapes=...)` |
#
# ## Summary
#
# **In two lines:** only a gradient of None keeps a parameter still, since a zero gradient, a
# zero lr or leaving it out of the optimizer each leave something running. The diagnostics name
# what, from the live objects.
#
# * `requires_grad_(False)` is the clean freeze: no gradient, so `step()` skips the parameter
#   entirely (no momentum, no weight decay, no step count). A learning rate of 0 keeps the
#   gradient and the momentum running, so the layer jumps when unfrozen; a layer left out of the
#   optimizer piles up its gradient unless `model.zero_grad()` clears it.
# * BatchNorm's running statistics are buffers, updated by the forward pass in training mode:
#   `eval()` stops that until the next `train()`; `use_global_stats=True` stops it for good.
#   Momentum 0.1 here (and in PyTorch) is the weight of the batch; Paddle's 0.9 is the weight of
#   the old value.
# * A zero gradient is not "no gradient": momentum and weight decay still move the parameter.
#   `dt.diagnose.why_not_updating` finds the reason from the live objects.
# * Some rows of one tensor: a gradient mask (`p.register_hook`) keeps them only from the first
#   step and without weight decay on that tensor (clear their momentum when masking late).
# * Pruned weights do not stay at zero by themselves: zeros written once are undone by the next
#   step. Write the zeros again after every step, or compute the weight as `weight_orig * mask`
#   in forward.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("08")

# %% [markdown]
# **1.** `nn.BatchNorm1d(3, momentum=0.5)` sees the batch `[[1, 2, 3], [3, 4, 5]]` twice in
# training mode. Predict `running_mean` afterwards (`predicted_running_mean`), then check by
# running it.

# %%
predicted_running_mean = ____
ex.q1.check()

# %% [markdown]
# **2.** Plant one more bug: a branch `zeroed` whose output is multiplied by 0 before the sum.
# What `cause` does `dt.diagnose.why_not_updating` give for `"zeroed.weight"` with SGD and
# momentum 0.9 (`zero_branch_cause`)? Does a step change that?

# %%
zero_branch_cause = ____
ex.q2.check()

# %% [markdown]
# **3.** Which of the two ways, `requires_grad_(False)` and `lr_mult = 0`, still gets a gradient
# computed in backward, and which one? Freeze `net[0]` of a fresh `make_net()` with
# `lr_mult = 0`, take one `train_step` with `optim.SGD(net.named_parameters(), lr=0.05)`, and
# keep what backward left in `net[0].weight.grad` (`grad_lr_mult`); do the same with
# `requires_grad_(False)` on another fresh `make_net()` (`grad_requires_grad`).

# %%
grad_lr_mult = ____
grad_requires_grad = ____
ex.q3.check()

# %% [markdown]
# **4.** Write `freeze_block(model, name)`, which stops every parameter of the block called
# `name` (`"1"`, `"encoder"`, any name `named_modules()` lists) from training, with no gradient
# computed for them, while the rest of the model trains on. The check freezes blocks of networks
# it makes up and takes a step with an optimizer made before the freeze. (`model.get_submodule(name)`
# returns the block, however deep it sits, as the pruning section used it.)

# %%
freeze_block = ____
ex.q4.check()

# %% [markdown]
# **5.** Write `masked_step(opt, weight, mask)`: one step of the optimizer `opt`, after which
# the entries of `weight` where the 0/1 tensor `mask` is 0 are exactly 0, while every other entry
# takes the step `opt.step()` gives it. The check prunes weights that have trained with SGD
# (momentum and weight decay) and with Adam, and calls your function for several steps in a row.

# %%
masked_step = ____
ex.q5.check()

# %% [markdown]
# **6.** (Not checked: an experiment.) Freeze `net[0]` with a group of `lr=0` instead of
# `lr_mult = 0` in the unfreezing experiment (Going deeper, first section) and check that the
# jump is the same; then reset the momentum when unfreezing (`opt.state.pop(p, None)` for each
# parameter of `net[0]`) and show that the first update is a plain first step.
