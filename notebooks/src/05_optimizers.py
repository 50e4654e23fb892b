# %% [markdown]
# # Optimizers, parameter groups and per-parameter settings
#
# An optimizer is the part of training that actually changes the numbers inside a network. The
# simplest one treats every parameter alike: one learning rate, one weight decay, one update
# rule. Real training rarely stays that simple. You may want the pretrained convolutions to move
# slowly and the new classifier quickly, no weight decay on biases, a learning rate that shrinks
# every epoch, Adam for one part and SGD for another, or a part that does not train at all.
#
# This chapter answers those questions on one small convolutional network. For each one it
# shows the code, then **proves** what happened by comparing parameter values before and after
# a step, often against a step computed by hand. You will learn:
#
# * parameter groups: a learning rate (and any other setting) per group of parameters;
# * changing learning rates during training, by hand and with schedulers;
# * several optimizers at once, and training only part of a network;
# * per-parameter settings (`lr_mult`, `regularizer`) versus the optimizer's, and which wins;
# * how the optimizer counts its steps, how to write your own optimizer, and what goes wrong
#   when a parameter is handed to an optimizer twice.

# %%
import inspect

import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import diagnose, nn, optim, plot
from dltutor.data import DataLoader, TensorDataset, load_digits
from dltutor.nn import functional as F
from dltutor.optim import lr_scheduler

np.set_printoptions(precision=4, suppress=True)
EPOCHS = 3 if dt.quick_mode() else 10      # the longer training runs; short under the tests
print("quick mode:", dt.quick_mode(), "| epochs for the longer runs:", EPOCHS)

# %% [markdown]
# ## The network and the data
#
# The data are the 1,797 handwritten digits that ship with scikit-learn: 8x8 grey images, ten
# classes. We keep the first 1,500 for training and the rest to measure accuracy.
#
# The network is a small LeNet made for 8x8 images: two convolutions, then two fully connected
# ("fc") layers. Its layers are attributes named `conv1`, `conv2`, `fc1` and `fc2`, so every
# parameter name says which kind of layer it belongs to; we will pick parameters by name.

# %%
class LeNet(nn.Module):
    """conv 6@3x3 (pad 1), relu, maxpool 2, conv 16@3x3, relu, fc 64->32, relu, fc 32->10"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3, padding=1)   # 1x8x8 -> 6x8x8
        self.pool = nn.MaxPool2d(2)                              # 6x8x8 -> 6x4x4
        self.conv2 = nn.Conv2d(6, 16, kernel_size=3)             # 6x4x4 -> 16x2x2
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x)).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


X, y = load_digits(images=True)
train_set = TensorDataset(X[:1500], y[:1500])
X_test, y_test = dt.tensor(X[1500:]), y[1500:]
print("images", X.shape, X.dtype, "| labels", y.shape, y.dtype)

dt.manual_seed(0)
net = LeNet()
for name, param in net.named_parameters():
    print(f"{name:13s} {tuple(param.shape)}")

# %% [markdown]
# Eight parameter tensors: a weight and a bias per layer. A few helpers keep the training loops
# below short: a fresh network with a fixed seed, a data loader with a fixed shuffle seed, one
# epoch of training, the test accuracy, and a snapshot (a copy) of parameter values.

# %%
def make_net(seed=0):
    dt.manual_seed(seed)
    return LeNet()


def make_loader():
    return DataLoader(train_set, batch_size=64, shuffle=True, seed=0)


loss_fn = nn.CrossEntropyLoss()     # the module form of F.cross_entropy, as PyTorch writes it


def train_epoch(net, opt, loader):
    """One pass over the data; returns the mean loss."""
    total = 0.0
    for xb, yb in loader:
        loss = loss_fn(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


def accuracy(net):
    with dt.no_grad():
        _, predicted = net(X_test).max(dim=1)          # (values, indices): keep the classes
        return float((predicted.numpy() == y_test).mean())


def snapshot(params):
    """Copies of the values (p.numpy() shares memory with the parameter, so copy it)."""
    return [p.numpy().copy() for p in params]


def unchanged(before, params):
    return all(np.array_equal(b, p.numpy()) for b, p in zip(before, params))


def all_changed(before, params):
    return all(not np.array_equal(b, p.numpy()) for b, p in zip(before, params))


print("batches per epoch:", len(make_loader()))

# %% [markdown]
# `nn.CrossEntropyLoss()` is a module holding one setting, `reduction`: `"mean"` (the default)
# averages the per-example losses, `"sum"` adds them, `"none"` returns them all. It computes
# exactly what `F.cross_entropy` does (the chapters use both):

# %%
with dt.no_grad():
    logits, labels = net(X_test[:8]), dt.tensor(y_test[:8])
    per_example = nn.CrossEntropyLoss(reduction="none")(logits, labels)
    print("per example:", np.round(per_example.numpy(), 3))
    print(f"mean {loss_fn(logits, labels):.4f} = F.cross_entropy {F.cross_entropy(logits, labels):.4f}")

# %%
assert np.allclose(loss_fn(logits, labels).item(), F.cross_entropy(logits, labels).item())
assert np.allclose(per_example.numpy().mean(), loss_fn(logits, labels).item(), rtol=1e-6)
assert np.allclose(nn.CrossEntropyLoss(reduction="sum")(logits, labels).item(),
                   per_example.numpy().sum(), rtol=1e-5)

# %% [markdown]
# ## Different learning rates with parameter groups
#
# An optimizer does not have to see one flat list of parameters. Give it a **list of dicts**
# instead: each dict is a *parameter group* with a `"params"` entry and, optionally, its own
# hyperparameters. A group that does not set a hyperparameter takes the value given to the
# optimizer itself.
#
# Here: all convolution parameters in one group that uses the default learning rate 0.05, all
# other parameters in a second group with learning rate 0.01. We sort the parameters by name
# (`"conv" in name`).

# %%
net = make_net()
conv_params = [(name, p) for name, p in net.named_parameters() if "conv" in name]
other_params = [(name, p) for name, p in net.named_parameters() if "conv" not in name]

opt = optim.SGD([{"params": conv_params},                 # no "lr": uses the default below
                 {"params": other_params, "lr": 0.01}],   # its own lr
                lr=0.05)
print([name for name, _ in conv_params])
print([name for name, _ in other_params])

# %% [markdown]
# We passed `(name, parameter)` pairs, so the optimizer knows each parameter's name (it uses
# them in messages, checkpoints and the diagnostics below). Plain lists of parameters, as in
# PyTorch, build exactly the same groups:

# %%
plain = optim.SGD([{"params": [p for _, p in conv_params]},
                   {"params": [p for _, p in other_params], "lr": 0.01}], lr=0.05)
for g_named, g_plain in zip(opt.param_groups, plain.param_groups):
    assert g_named["lr"] == g_plain["lr"]
    assert all(a is b for a, b in zip(g_named["params"], g_plain["params"]))

# %% [markdown]
# `diagnose.summary` lists every parameter with its group and the learning rate the optimizer
# will really use for it:

# %%
diagnose.summary(net, opt)

# %% [markdown]
# The proof is one training step. With plain SGD a parameter moves by exactly
# `lr * gradient`, so `(old - new) / gradient` must be 0.05 in the first group and 0.01 in the
# second.

# %%
loader = make_loader()
xb, yb = next(iter(loader))
before = snapshot(net.parameters())
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()

for (name, p), old in zip(net.named_parameters(), before):
    lr_used = opt.param_groups[0 if "conv" in name else 1]["lr"]
    assert np.allclose(old - p.numpy(), lr_used * p.grad.numpy(), atol=1e-7), name
    print(f"{name:13s} moved by lr x grad with lr = {lr_used}")

# %% [markdown]
# ## Inspecting param groups
#
# The groups live in `opt.param_groups`, a plain list of dicts. Each dict holds the group's
# parameters under `"params"` and **every** hyperparameter, including the ones it inherited from
# the optimizer's defaults (here `momentum`, `weight_decay`...).

# %%
for i, group in enumerate(opt.param_groups):
    print(f"group {i}: {len(group['params'])} parameters, lr {group['lr']}")

# %%
assert [len(g["params"]) for g in opt.param_groups] == [4, 4]
assert [g["lr"] for g in opt.param_groups] == [0.05, 0.01]

# %%
print(sorted(k for k in opt.param_groups[1] if k not in ("params", "param_names")))
print(opt)

# %% [markdown]
# Every group has the same keys; only their values differ. `print(opt)` shows the same
# information group by group. The names we gave travel along in `"param_names"`:

# %%
print(opt.param_groups[0]["param_names"])
assert opt.param_groups[0]["param_names"] == ["conv1.weight", "conv1.bias",
                                              "conv2.weight", "conv2.bias"]
assert opt.param_groups[0]["momentum"] == 0.0    # inherited from SGD's default

# %% [markdown]
# ## Changing a group learning rate during training
#
# The optimizer reads `group["lr"]` afresh on every `step()`, so you may change it whenever you
# like. A common use: one part of the network has learned enough, so set its group's learning
# rate to 0 and let the rest go on.
#
# We train for four epochs (momentum 0.9 makes the loss fall faster) and set the fc group's
# learning rate to 0 after the second epoch. After each epoch we print a few values of
# `fc2.bias` and keep snapshots of both groups.

# %%
net = make_net()
conv_params = [(n, p) for n, p in net.named_parameters() if "conv" in n]
other_params = [(n, p) for n, p in net.named_parameters() if "conv" not in n]
opt = optim.SGD([{"params": conv_params}, {"params": other_params, "lr": 0.01}],
                lr=0.05, momentum=0.9)
conv_group, fc_group = opt.param_groups[0]["params"], opt.param_groups[1]["params"]

loader = make_loader()
history = []                          # (epoch, conv snapshot, fc snapshot)
print("start   fc2.bias[:5] =", net.fc2.bias.numpy()[:5])
for epoch in range(4):
    loss = train_epoch(net, opt, loader)
    history.append((epoch, snapshot(conv_group), snapshot(fc_group)))
    print(f"epoch {epoch} fc2.bias[:5] = {net.fc2.bias.numpy()[:5]}  loss {loss:.4f}")
    if epoch == 1:
        opt.param_groups[1]["lr"] = 0.0
        print("        -> lr of the fc group set to 0")

# %% [markdown]
# Before the change `fc2.bias` moves every epoch; after it, the printed values stay put. The
# assert cell checks every element of every parameter: the fc parameters after epochs 2 and 3
# equal those after epoch 1, while every convolution parameter keeps changing.

# %%
_, conv_after_1, fc_after_1 = history[1]
_, conv_after_0, fc_after_0 = history[0]
assert unchanged(fc_after_1, fc_group), "lr 0: the fc parameters did not move"
assert all(not np.array_equal(a, b) for a, b in zip(fc_after_0, fc_after_1)), "they moved before"
assert all_changed(conv_after_1, conv_group), "the conv parameters kept training"

# %% [markdown]
# Their gradients were still computed every step (an lr of 0 does not stop backward), and the
# momentum buffer still holds values; only the update is multiplied by 0. The diagnostics say so:

# %%
print(diagnose.why_not_updating(net, opt, "fc1.weight").verdict)
assert net.fc1.weight.grad is not None
assert np.abs(opt.state[net.fc1.weight]["momentum_buffer"]).max() > 0
assert diagnose.why_not_updating(net, opt, "fc1.weight").cause == "lr_zero"

# %% [markdown]
# Any number `>= 0` is a learning rate here, but NaN and infinity are not: **dltutor refuses
# them where PyTorch does not.** PyTorch checks `lr < 0`, which is False for NaN, so a NaN lr
# (from a typo in a formula, a scheduler, or a checkpoint) turns every weight into NaN at the
# next step. dltutor checks the lr in the constructor, in `add_param_group`, in a loaded state
# dict, and again at `step()` for a value you set by hand, before it changes anything:

# %%
kept = snapshot(conv_group + fc_group)
opt.param_groups[1]["lr"] = float("nan")
try:
    opt.step()
except ValueError as err:
    print(err)
    nan_lr_error = err
opt.param_groups[1]["lr"] = 0.0

# %%
assert "param_groups[1]['lr']" in str(nan_lr_error)
assert unchanged(kept, conv_group + fc_group), "the refused step changed nothing"

# %% [markdown]
# A picture of the same run: the size of each layer's update per step. We rerun the four
# epochs with a `Recorder` attached (it reads every step through the optimizer's hooks); the fc
# layers' lines drop to nothing at the change and the steps where they were frozen are shaded.

# %%
net = make_net()
opt = optim.SGD([{"params": [(n, p) for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [(n, p) for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05, momentum=0.9)
rec = dt.trace.Recorder(net, opt, by="layer")
loader = make_loader()
for epoch in range(4):
    train_epoch(net, opt, loader)
    if epoch == 1:
        opt.param_groups[1]["lr"] = 0.0

fig, ax = plt.subplots(figsize=(8, 3.5))
plot.traces(rec, "update_norm", ax=ax)
ax.axvline(2 * len(loader), color="0.3", ls=":")
ax.set_title("Update size per layer: the fc group's lr is set to 0 after epoch 2")
plt.show()

# %%
update = rec.series("update_norm")                   # steps x layers
fc_columns = [rec.names.index("fc1"), rec.names.index("fc2")]
after = slice(2 * len(loader), None)
assert np.all(np.nan_to_num(update[after][:, fc_columns]) == 0)
assert np.all(update[after][:, rec.names.index("conv1")] > 0)

# %% [markdown]
# ## Decaying the learning rate each epoch
#
# Most training runs lower the learning rate as they go: big steps early, small steps to settle
# at the end. The simplest plan is a **linear decay**: in epoch `e` of `E`, use
# `lr = initial_lr * (1 - e / E)`.
#
# ### By hand
#
# Before each epoch, write the new value into every group. Remember each group's *own* starting
# value first, or every group ends up with the same learning rate:

# %%
total_epochs = 10
net = make_net()
opt = optim.SGD([{"params": [p for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [p for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05)
base_lrs = [group["lr"] for group in opt.param_groups]     # 0.05 and 0.01

by_hand = []
for epoch in range(total_epochs):
    for group, base in zip(opt.param_groups, base_lrs):
        group["lr"] = base * (1 - epoch / total_epochs)
    by_hand.append([group["lr"] for group in opt.param_groups])
    # ... here: one epoch of training with these lrs
for epoch in (0, 5, 9):
    print(f"epoch {epoch}: lrs", np.round(by_hand[epoch], 4))

# %%
assert np.allclose(by_hand[0], [0.05, 0.01])
assert np.allclose(by_hand[5], [0.025, 0.005])       # half way: half the lr
assert np.allclose(by_hand[9], [0.005, 0.001])       # last epoch: a tenth

# %% [markdown]
# A tempting shortcut writes *one* starting lr into every group
# (`group["lr"] = 0.05 * (1 - epoch / E)`). It silently throws away the per-group rates:
# after it, the fc group trains at 0.05 too.

# %%
for group in opt.param_groups:                 # the shortcut, at epoch 0
    group["lr"] = 0.05 * (1 - 0 / total_epochs)
print([group["lr"] for group in opt.param_groups])
assert opt.param_groups[1]["lr"] == 0.05       # the 0.01 of the fc group is gone

# %% [markdown]
# ### With a scheduler
#
# A *scheduler* does this bookkeeping for you. It remembers each group's starting lr (as
# `group["initial_lr"]`) and sets every group's `lr` each time you call `scheduler.step()`,
# **after** the optimizer's steps of that epoch. `LinearLR` with `start_factor=1.0` and
# `end_factor=0.0` over 10 steps is exactly the linear decay above:

# %%
net = make_net()
opt = optim.SGD([{"params": [p for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [p for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=total_epochs)

with_scheduler = []
for epoch in range(total_epochs):
    with_scheduler.append([group["lr"] for group in opt.param_groups])
    # ... here: one epoch of training (opt.step() for every batch) ...
    sched.step()                               # once per epoch, after the optimizer steps
print("epoch 5: lrs", np.round(with_scheduler[5], 4), "| initial lrs:", sched.base_lrs)

# %%
assert np.allclose(with_scheduler, by_hand)
assert sched.base_lrs == [0.05, 0.01]
assert np.isclose(opt.param_groups[0]["lr"], 0.0)     # after 10 steps: the end factor, 0

# %% [markdown]
# The same plan in a real training run: a few epochs on the digits, the scheduler stepped once
# per epoch. The lr each epoch used is recorded before the epoch starts.

# %%
net = make_net()
opt = optim.SGD([{"params": [p for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [p for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05, momentum=0.9)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=EPOCHS)
loader = make_loader()
used = []
for epoch in range(EPOCHS):
    used.append(opt.param_groups[0]["lr"])
    loss = train_epoch(net, opt, loader)
    sched.step()
    print(f"epoch {epoch}: conv lr {used[-1]:.4f}  loss {loss:.4f}  test accuracy {accuracy(net):.3f}")

# %%
assert np.allclose(used, [0.05 * (1 - e / EPOCHS) for e in range(EPOCHS)])

# %% [markdown]
# ### What the common schedules look like
#
# `lr_scheduler.preview(make_scheduler, steps)` runs a schedule on a throwaway optimizer and
# returns the lr of every step, and `plot.lr_schedule` draws it. Four common shapes, over 30
# epochs from lr 0.05:
#
# * `LinearLR`: a straight line down (our decay);
# * `StepLR`: multiply by `gamma` every `step_size` epochs (a staircase);
# * `CosineAnnealingLR`: half a cosine from the initial lr down to `eta_min`;
# * `LinearWarmup`: start small and ramp up for a few epochs, then hand over to another
#   schedule (here a cosine). The first updates of a fresh network can be wild; the warmup
#   keeps them small.

# %%
steps = 30
schedules = {
    "LinearLR": lambda o: lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.0,
                                                total_iters=steps),
    "StepLR": lambda o: lr_scheduler.StepLR(o, step_size=10, gamma=0.5),
    "CosineAnnealingLR": lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=steps),
    "LinearWarmup + cosine": lambda o: lr_scheduler.LinearWarmup(
        o, warmup_steps=5, after=lr_scheduler.CosineAnnealingLR(o, T_max=steps - 5)),
}
fig, ax = plt.subplots(figsize=(8, 3.5))
curves = {}
for label, make in schedules.items():
    curves[label] = lr_scheduler.preview(make, steps, lr=0.05)
    plot.lr_schedule(curves[label], ax=ax, label=label, log=False)
ax.set_xlabel("epoch (one scheduler.step() per epoch)")
plt.show()

# %%
linear, stair = curves["LinearLR"], curves["StepLR"]
cosine, warm = curves["CosineAnnealingLR"], curves["LinearWarmup + cosine"]
assert np.allclose(linear[[0, 15, 24]], [0.05, 0.025, 0.01])      # 0.05 * (1 - e / 30)
assert np.allclose(stair[[0, 9, 10, 20]], [0.05, 0.05, 0.025, 0.0125])
assert np.isclose(cosine[15], 0.025)                               # half way: half the lr
assert np.allclose(warm[:6], [0.0, 0.01, 0.02, 0.03, 0.04, 0.05])  # ramp, then the cosine
print("LinearLR at epochs 0, 15, 24:", linear[[0, 15, 24]].round(4))

# %% [markdown]
# ## Different optimizers for different parameters
#
# Groups share one update rule. To use a different *rule* per part, say SGD for the
# convolutions and Adam for the fc layers, make two optimizers. `optim.MultiOptimizer` wraps
# them so the training loop still calls one `zero_grad()` and one `step()` (it simply calls
# each optimizer in turn, and refuses a parameter that two of them hold).

# %%
net = make_net()
sgd = optim.SGD([(n, p) for n, p in net.named_parameters() if "conv" in n], lr=0.05)
adam = optim.Adam([(n, p) for n, p in net.named_parameters() if "conv" not in n], lr=0.01)
both = optim.MultiOptimizer(sgd, adam)
diagnose.summary(net, both)

# %% [markdown]
# One step shows both rules at work. SGD moves a conv parameter by `lr * gradient`. Adam's
# first step moves every element by almost exactly its lr, 0.01, whatever the size of the
# gradient (it divides the gradient by its own running size).

# %%
loader = make_loader()
xb, yb = next(iter(loader))
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
both.zero_grad()
F.cross_entropy(net(xb), yb).backward()
both.step()

for name, p in net.named_parameters():
    delta, grad = before[name] - p.numpy(), p.grad.numpy()
    if "conv" in name:
        assert np.allclose(delta, 0.05 * grad, atol=1e-7), name
    else:
        live = np.abs(grad) > 1e-4           # elements whose gradient is not tiny
        assert np.allclose(np.abs(delta[live]), 0.01, rtol=1e-3), name
    print(f"{name:13s} largest change {np.abs(delta).max():.5f}")

# %%
both.zero_grad()                              # one call clears the parameters of both
assert all(p.grad is None for p in net.parameters())
assert both.param_groups == sgd.param_groups + adam.param_groups
try:                                          # a parameter held by two optimizers is refused
    optim.MultiOptimizer(sgd, optim.Adam([("fc2.bias", net.fc2.bias),
                                          ("conv1.bias", net.conv1.bias)]))
    refused = None
except ValueError as err:
    refused = str(err)
print(refused)
assert refused is not None and "'conv1.bias'" in refused

# %% [markdown]
# Training goes on with the same loop as before:

# %%
for epoch in range(EPOCHS):
    loss = train_epoch(net, both, loader)
    print(f"epoch {epoch}: loss {loss:.4f}  test accuracy {accuracy(net):.3f}")

# %% [markdown]
# If the optimizers do *not* step at the same moments (one every batch, one every 10 batches),
# skip the wrapper and call each optimizer's `step()` and `zero_grad()` where you need them.
#
# ## Training only some parameters
#
# To train only the convolutions, the first idea is to hand only them to the optimizer. That
# stops the fc layers from *moving*, but backward still computes their gradients every step
# (wasted work), and since `opt.zero_grad()` only clears the optimizer's own parameters, those
# gradients pile up from step to step:

# %%
net = make_net()
opt = optim.SGD([p for n, p in net.named_parameters() if "conv" in n], lr=0.05)
xb, yb = next(iter(make_loader()))
for step in range(2):
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    if step == 0:
        first_grad = net.fc2.bias.grad.numpy().copy()
    opt.step()
print("fc2.bias.grad after 2 steps:", net.fc2.bias.grad.numpy()[:4], "...")

# %%
assert net.fc2.bias.grad is not None                      # computed although never used
assert not np.allclose(net.fc2.bias.grad.numpy(), first_grad)   # and never cleared: it grew

# %% [markdown]
# The clean way is to switch the gradient off: `requires_grad_(False)` on the layers that must
# not train. Backward then skips them, their `.grad` stays `None`, and the optimizer (which skips
# any parameter without a gradient) leaves them alone. Giving the optimizer only the trainable
# parameters is then tidy rather than necessary.

# %%
net = make_net()
net.fc1.requires_grad_(False)
net.fc2.requires_grad_(False)
trainable = [(n, p) for n, p in net.named_parameters() if p.requires_grad]
opt = optim.SGD(trainable, lr=0.05, momentum=0.9)
print("trainable:", [n for n, _ in trainable])

before = snapshot(net.parameters())
train_epoch(net, opt, make_loader())        # one epoch

for name, p in net.named_parameters():       # the last batch's gradients are still there
    print(f"{name:13s}", "grad None" if p.grad is None else "has a gradient")

# %%
for (name, p), old in zip(net.named_parameters(), before):
    if "conv" in name:
        assert p.grad is not None and not np.array_equal(old, p.numpy()), name
    else:
        assert p.grad is None and np.array_equal(old, p.numpy()), name

# %% [markdown]
# Chapter 06 compares the ways of freezing (requires_grad, lr 0, `lr_mult = 0`, `detach`) in
# detail.
#
# ## Optimizer settings vs parameter settings
#
# Paddle lets you attach settings to a parameter itself (its `ParamAttr`). dltutor keeps those
# settings as attributes of every `Parameter`; two of them decide how the optimizer treats it:
#
# * `p.lr_mult`: a **multiplier**. The learning rate this parameter really gets is
#   `group lr x p.lr_mult` (default 1.0; 0 freezes it).
# * `p.regularizer`: an `optim.L2Decay(c)` or `optim.L1Decay(c)`. It **replaces** the optimizer's
#   `weight_decay` for this parameter. Parameters without one keep the optimizer's.
#
# So the optimizer (and group) sets the general rule and a parameter may override it. Below:
# the fc group has lr 0.01 and weight decay 0.01; `fc1.weight` doubles its learning rate and
# uses an L1 penalty instead of the group's L2 decay.

# %%
net = make_net()
net.fc1.weight.lr_mult = 2.0
net.fc1.weight.regularizer = optim.L1Decay(0.001)
opt = optim.SGD([{"params": [(n, p) for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [(n, p) for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05, weight_decay=0.01)
diagnose.explain_lr(opt, "fc1.weight")

# %%
diagnose.explain_lr(opt, "fc1.bias")

# %% [markdown]
# Now the proof, by hand. With SGD the regularizer's gradient is added to the loss gradient,
# then the step is taken with the effective lr:
#
# * `fc1.weight`: `w_new = w - (0.01 x 2) * (g + 0.001 * sign(w))`   (its own L1; no L2)
# * `fc1.bias`:   `b_new = b - 0.01 * (g + 0.01 * b)`                 (the group's L2)
#
# (`p.grad` is not changed by the step: the optimizer adds the penalty to its own copy.)

# %%
xb, yb = next(iter(make_loader()))
w_old, b_old = net.fc1.weight.numpy().copy(), net.fc1.bias.numpy().copy()
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()
g_w, g_b = net.fc1.weight.grad.numpy(), net.fc1.bias.grad.numpy()

w_expected = w_old - (0.01 * 2.0) * (g_w + 0.001 * np.sign(w_old))
b_expected = b_old - 0.01 * (g_b + 0.01 * b_old)
print("fc1.weight: largest difference from the hand step", np.abs(net.fc1.weight.numpy() - w_expected).max())
print("fc1.bias:   largest difference from the hand step", np.abs(net.fc1.bias.numpy() - b_expected).max())

# %%
assert np.allclose(net.fc1.weight.numpy(), w_expected, atol=1e-7)
assert np.allclose(net.fc1.bias.numpy(), b_expected, atol=1e-7)
wrong = w_old - 0.02 * (g_w + 0.001 * np.sign(w_old) + 0.01 * w_old)   # if both decays applied
assert not np.allclose(net.fc1.weight.numpy(), wrong, atol=1e-7)

# %% [markdown]
# One more rule of thumb: a scheduler changes the *group's* lr and the multiplier scales
# whatever the group has. `explain_lr` shows both parts when a scheduler is at work:

# %%
sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
sched.step()
report = diagnose.explain_lr(opt, "fc1.weight")
print(report)
assert np.isclose(report.effective_lr, 0.01 * 0.5 * 2.0)

# %% [markdown]
# ## Different weight decay for different parameters
#
# A common recipe: weight decay 0.01 for the weights, none for the biases (a bias only shifts a
# unit's output; shrinking it toward zero does not make the model simpler). There are three ways
# to say so.
#
# **1. Two groups**, built from the names: biases end in `"bias"`.

# %%
net = make_net()
decay = [(n, p) for n, p in net.named_parameters() if not n.endswith("bias")]
no_decay = [(n, p) for n, p in net.named_parameters() if n.endswith("bias")]
opt = optim.SGD([{"params": decay, "weight_decay": 0.01},
                 {"params": no_decay, "weight_decay": 0.0}], lr=0.05)
print([(len(g["params"]), g["weight_decay"]) for g in opt.param_groups])

# %% [markdown]
# To see the decay alone, give every parameter a gradient of exactly zero and take one step.
# Then only the decay can move anything: each weight shrinks by the factor `1 - lr * 0.01`, and
# each bias must stay exactly where it was.

# %%
def zero_grad_step(opt, net):
    """One step with all gradients set to zero: only weight decay moves parameters."""
    for p in net.parameters():
        p.grad = dt.zeros_like(p)
    opt.step()


before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)
for name, p in net.named_parameters():
    if name.endswith("bias"):
        assert np.array_equal(p.numpy(), before[name]), name
    else:
        assert np.allclose(p.numpy(), before[name] * (1 - 0.05 * 0.01), atol=1e-8), name
print("weights shrank by the factor", 1 - 0.05 * 0.01, "; biases unchanged")

# %% [markdown]
# **2. AdamW with `apply_decay_param_fun`** (Paddle's idea). AdamW's decay is *decoupled*: before
# its Adam step it shrinks a parameter directly, `p *= 1 - lr * weight_decay`. The function you
# pass is called with each parameter's name and says whether that parameter decays, so one
# group suffices. It needs names: pass `named_parameters()`.

# %%
net = make_net()
opt = optim.AdamW(net.named_parameters(), lr=0.01, weight_decay=0.01,
                  apply_decay_param_fun=lambda name: not name.endswith("bias"))
print({name: opt.decays(name) for name, _ in net.named_parameters()})
diagnose.explain_lr(opt, "fc2.bias")

# %%
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)            # Adam's own step is 0 for a zero gradient
for name, p in net.named_parameters():
    if name.endswith("bias"):
        assert np.array_equal(p.numpy(), before[name]), name
    else:
        assert np.allclose(p.numpy(), before[name] * (1 - 0.01 * 0.01), atol=1e-8), name

# %% [markdown]
# **3. A regularizer on the parameter** (Paddle's other answer). A parameter's own regularizer
# replaces the optimizer's weight decay, so a zero-strength `L2Decay(0.0)` on each bias switches
# the decay off for it while the optimizer keeps `weight_decay=0.01` for the rest:

# %%
net = make_net()
for name, p in net.named_parameters():
    if name.endswith("bias"):
        p.regularizer = optim.L2Decay(0.0)
opt = optim.SGD(net.named_parameters(), lr=0.05, weight_decay=0.01)
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)
for name, p in net.named_parameters():
    expected = before[name] if name.endswith("bias") else before[name] * (1 - 0.05 * 0.01)
    assert np.allclose(p.numpy(), expected, atol=1e-8), name
print(diagnose.explain_lr(opt, "conv1.bias").decay)

# %% [markdown]
# ## How the step count advances
#
# The optimizer counts one step **per call to `step()`**, that is, per mini-batch, not per
# epoch. It keeps two counters:
#
# * `opt.step_count`: how many times `step()` was called;
# * `opt.state[p]["step"]`: how many times *this parameter* was actually updated. Adam needs it
#   for its bias correction.
#
# An epoch is `len(loader)` batches, so after `E` epochs the count is `E * len(loader)`.
# (1,500 samples in batches of 64 make 24 batches: 23 full ones and a last one of 28.)

# %%
net = make_net()
opt = optim.Adam(net.named_parameters(), lr=0.01)
loader = make_loader()
counts = []
for epoch in range(2):
    train_epoch(net, opt, loader)
    counts.append(opt.step_count)
print("batches per epoch:", len(loader), "| step_count after each epoch:", counts)
print("conv1.weight state['step']:", opt.state[net.conv1.weight]["step"])

# %%
assert len(loader) == int(np.ceil(1500 / 64)) == 24
assert counts == [len(loader), 2 * len(loader)]
assert all(opt.state[p]["step"] == 2 * len(loader) for p in net.parameters())

# %% [markdown]
# A parameter without a gradient is skipped, and a skipped parameter is **not** counted. Freeze
# `fc1` for a third epoch: `step()` is called 24 more times, but `fc1`'s own count stays behind.

# %%
net.fc1.requires_grad_(False)          # train_epoch's zero_grad() drops its old gradients
train_epoch(net, opt, loader)
print("step_count:", opt.step_count,
      "| conv1.weight:", opt.state[net.conv1.weight]["step"],
      "| fc1.weight:", opt.state[net.fc1.weight]["step"])

# %%
assert opt.step_count == 3 * len(loader)
assert opt.state[net.conv1.weight]["step"] == 3 * len(loader)
assert opt.state[net.fc1.weight]["step"] == 2 * len(loader)

# %% [markdown]
# A scheduler keeps its own count (`scheduler.last_epoch`): one per `scheduler.step()`. Whether
# that is one per epoch or one per batch is up to you; just give `total_iters`, `step_size`,
# `T_max`... in the same unit as you step it.
#
# ## Writing your own optimizer
#
# In dltutor an optimizer is the base class `optim.Optimizer` plus **one method**, `update`,
# which changes one parameter given its gradient. Before calling it, the base class has already
# skipped parameters without a gradient, clipped, added weight decay or the parameter's
# regularizer, multiplied the group's lr by `lr_mult`, and counted the step. Here is the whole
# of `SignSGD`, which steps by the sign of the gradient:

# %%
print(inspect.getsource(optim.SignSGD))

# %% [markdown]
# Let us write a new one: a small version of **Lion** (Chen et al., 2023). It keeps a momentum
# `m` per parameter and steps by the *sign* of a blend of `m` and the new gradient, so every
# element moves by exactly `lr` (or not at all, where the blend is exactly 0):
#
# ```
# direction = sign(beta1 * m + (1 - beta1) * g)
# p        -= lr * direction
# m         = beta2 * m + (1 - beta2) * g
# ```
#
# The hyperparameters go into `defaults` (which makes them per-group settings), the momentum
# into `state` (which makes it part of the checkpoint). `xp` is NumPy, or CuPy on a GPU.

# %%
class LionLite(optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0, grad_clip=None):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay),
                         grad_clip)

    def update(self, param, grad, state, group, lr):
        xp = dt.backend.get_array_module(grad)
        beta1, beta2 = group["betas"]
        if "exp_avg" not in state:                    # first step of this parameter
            state["exp_avg"] = xp.zeros_like(param.data)
        m = state["exp_avg"]
        param.data -= lr * xp.sign(beta1 * m + (1 - beta1) * grad)
        m *= beta2
        m += (1 - beta2) * grad

# %% [markdown]
# It trains the LeNet, with parameter groups, straight away:

# %%
def lion_for(net):
    """LionLite with two groups: the conv layers at lr 0.003, the rest at 0.001."""
    return LionLite([{"params": [(n, p) for n, p in net.named_parameters() if "conv" in n]},
                     {"params": [(n, p) for n, p in net.named_parameters() if "conv" not in n],
                      "lr": 0.001}], lr=0.003)


net = make_net()
opt = lion_for(net)
loader = make_loader()
losses = []
for epoch in range(EPOCHS):
    losses.append(train_epoch(net, opt, loader))
    print(f"epoch {epoch}: loss {losses[-1]:.4f}  test accuracy {accuracy(net):.3f}")

# %%
def lion_learns(seed):
    """LionLite lowers the loss of a LeNet started from `seed` over the epochs."""
    other = make_net(seed)
    other_opt, other_loader = lion_for(other), make_loader()
    epoch_losses = [train_epoch(other, other_opt, other_loader) for _ in range(EPOCHS)]
    return epoch_losses[-1] < epoch_losses[0]


assert losses[-1] < losses[0]
assert all(lion_learns(seed) for seed in range(1, 5))             # not luck: other seeds too
print("fc group lr:", opt.param_groups[1]["lr"], "| state of fc1.weight:", sorted(opt.state[net.fc1.weight]))

# %% [markdown]
# What we did not write comes for free. `lr_mult`: two parameters with the same gradient, one
# with `lr_mult = 0.5`, must move by `lr` and `lr / 2` per element (Lion moves every element by
# exactly its lr). And checkpoints: `state_dict()` already holds each parameter's momentum under
# its name.

# %%
a = nn.Parameter(np.ones(3, dtype=np.float32))
b = nn.Parameter(np.ones(3, dtype=np.float32), lr_mult=0.5)
lion = LionLite([("a", a), ("b", b)], lr=0.1)
((a + b) * dt.tensor([1.0, -2.0, 3.0])).sum().backward()     # both get the gradient [1, -2, 3]
lion.step()
print("a:", a.numpy(), " b:", b.numpy())

# %%
assert np.allclose(a.numpy(), 1 - 0.1 * np.array([1, -1, 1]))
assert np.allclose(b.numpy(), 1 - 0.05 * np.array([1, -1, 1]))
saved = lion.state_dict()
print(sorted(saved["state"]), sorted(saved["state"]["b"]))
assert sorted(saved["state"]) == ["a", "b"] and "exp_avg" in saved["state"]["b"]

# %% [markdown]
# ## A parameter in an optimizer twice
#
# An easy mistake: you want `fc2` to get its own learning rate, so you add a group for it, but
# the first group still holds *all* parameters, `fc2`'s included. dltutor refuses, and the
# message names the parameter:

# %%
net = make_net()
try:
    optim.SGD([{"params": net.named_parameters()},
               {"params": net.fc2.named_parameters(prefix="fc2"), "lr": 0.001}], lr=0.05)
except ValueError as err:
    message = str(err)
    print(message)

# %%
assert "'fc2.weight' appears twice" in message

# %% [markdown]
# The same holds for one group that lists a parameter twice:

# %% tags=["raises-exception"]
optim.SGD([net.conv1.weight, net.conv1.bias, net.conv1.weight], lr=0.05)

# %% [markdown]
# The fix: leave the parameters of the special group out of the general one. Compare objects
# (with `id`), not values:

# %%
special = {id(p) for p in net.fc2.parameters()}
opt = optim.SGD([{"params": [(n, p) for n, p in net.named_parameters() if id(p) not in special]},
                 {"params": net.fc2.named_parameters(prefix="fc2"), "lr": 0.001}], lr=0.05)
print([(len(g["params"]), g["lr"]) for g in opt.param_groups])
assert [len(g["params"]) for g in opt.param_groups] == [6, 2]

# %% [markdown]
# **PyTorch is more lenient**: it raises an error for a parameter in two groups, but a
# parameter listed twice *within one group* only triggers a warning, and then `step()` walks the
# list and updates that parameter **twice** per step. What that does to the numbers, by hand
# with NumPy: one weight `w = 1.0` whose gradient is always `g = 0.5`, lr 0.1, two steps.
#
# The function below follows the loop of PyTorch's SGD (its plain for-loop version, the
# default for tensors on the CPU): it first collects each list entry's momentum buffer from the
# state, then walks the list updating each entry in place, then stores the buffers back.

# %%
def torch_like_sgd_step(params, grads, state, lr, momentum=0.0):
    """One step over a group's list, as PyTorch's SGD does it; state keyed by parameter object."""
    bufs = [state.get(id(p)) for p in params]        # read before the loop
    for i, p in enumerate(params):
        g = grads[i]
        if momentum:
            if bufs[i] is None:
                bufs[i] = g.copy()                    # first step: the buffer starts at g
            else:
                bufs[i] *= momentum                   # in place: both entries share this array
                bufs[i] += g
            g = bufs[i]
        p -= lr * g                                   # in place, like param.add_(g, alpha=-lr)
    for p, buf in zip(params, bufs):                  # store back (the last entry wins)
        state[id(p)] = buf


def two_steps(params_list, momentum):
    w = params_list[0]
    state, moves = {}, []
    for _ in range(2):
        old = w[0]
        torch_like_sgd_step(params_list, [np.array([0.5])] * len(params_list), state,
                            lr=0.1, momentum=momentum)
        moves.append(round(float(old - w[0]), 4))
    return moves


for momentum in (0.0, 0.9):
    w = np.array([1.0])
    once = two_steps([w], momentum)
    w = np.array([1.0])
    twice = two_steps([w, w], momentum)
    print(f"momentum {momentum}: moves per step, listed once {once}, listed twice {twice}")

# %% [markdown]
# By hand, with momentum 0.9. Listed once, the buffer is `0.5`, then `0.9 * 0.5 + 0.5 = 0.95`,
# so the moves are `0.05` and `0.095`. Listed twice: in the first step both entries start a
# fresh buffer, so `w` moves `0.05` twice; in the second step both entries share one buffer and
# push it twice: `0.95`, then `0.9 * 0.95 + 0.5 = 1.355`, so `w` moves `0.095 + 0.1355`.

# %%
w = np.array([1.0])
assert two_steps([w], 0.0) == [0.05, 0.05]
w = np.array([1.0])
assert two_steps([w, w], 0.0) == [0.1, 0.1]                    # plain SGD: lr doubled
w = np.array([1.0])
assert two_steps([w], 0.9) == [0.05, 0.095]
w = np.array([1.0])
assert two_steps([w, w], 0.9) == [0.1, round(0.095 + 0.1355, 4)]   # 2x, then about 2.4x

# dltutor's SGD (each parameter once) makes the "listed once" moves:
p = nn.Parameter(np.array([1.0]))
single = optim.SGD([p], lr=0.1, momentum=0.9)
moves = []
for _ in range(2):
    old = p.item()
    single.zero_grad()
    (p * 0.5).sum().backward()
    single.step()
    moves.append(round(old - p.item(), 4))
assert moves == [0.05, 0.095]

# %% [markdown]
# With plain SGD the duplicate doubles that parameter's learning rate; with momentum it is
# worse and keeps changing (the buffer is pushed twice per step). Nothing crashes: training
# just behaves oddly, which is why dltutor stops you up front. (A *tied* parameter, one object
# used in two layers, is not a duplicate: `parameters()` lists it once. See chapter 04.)

# %% [markdown]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | parameter groups | `optim.SGD([{"params": a}, {"params": b, "lr": 0.01}], lr=0.05)` | same | `parameters=[{"params": a}, {"params": b, "learning_rate": 0.2}]` (a *scale* of the base lr) | same as dltutor |
# | list the groups | `opt.param_groups` | `opt.param_groups` | `opt._param_groups` | `opt.param_groups` |
# | add a group later | `opt.add_param_group(group)` | `opt.add_param_group(group)` | `opt._add_param_group(group)` | `opt.add_param_group(group)` |
# | change the lr by hand | `group["lr"] = x` | `group["lr"] = x` | `opt.set_lr(x)` | `group["lr"] = x` |
# | schedulers | `optim.lr_scheduler.LinearLR`, `StepLR`, `CosineAnnealingLR`, `LinearWarmup` | `torch.optim.lr_scheduler.LinearLR`, `StepLR`, `CosineAnnealingLR`, `SequentialLR` | `paddle.optimizer.lr.LinearLR`, `StepDecay`, `CosineAnnealingDecay`, `LinearWarmup` | `megengine.optimizer.MultiStepLR` |
# | clear gradients | `opt.zero_grad()` | `opt.zero_grad()` | `opt.clear_grad()` | `opt.clear_grad()` |
# | several optimizers as one | `optim.MultiOptimizer(sgd, adam)` | — (call each) | — (call each) | — (the guide's `MultipleOptimizer` class) |
# | train only some parameters | `layer.requires_grad_(False)` | `layer.requires_grad_(False)` | `param.stop_gradient = True` | attach only those to `GradManager` and the optimizer |
# | per-parameter lr multiplier | `p.lr_mult = 2.0` | — | `ParamAttr(learning_rate=2.0)` | — |
# | per-parameter regularizer | `p.regularizer = optim.L2Decay(c)` (replaces the optimizer's) | — | `ParamAttr(regularizer=L2Decay(c))` (replaces the optimizer's) | — |
# | decay chosen by name | `AdamW(..., apply_decay_param_fun=f)` | — (use two groups) | `AdamW(..., apply_decay_param_fun=f)` | — (use two groups) |
# | steps taken | `opt.step_count`, `opt.state[p]["step"]` | `opt.state[p]["step"]` (Adam, AdamW) | — | — |
# | write an optimizer | subclass `optim.Optimizer`, override `update` | subclass `torch.optim.Optimizer`, write `step` | subclass `paddle.optimizer.Optimizer`, override `_append_optimize_op` | subclass `megengine.optimizer.Optimizer`, write `_create_state` and `_updates` |
# | a parameter given twice | `ValueError` naming it | error across groups; only a warning within a group (then updated twice) | — | — |

# %% [markdown]
# ## Summary
#
# * A **parameter group** is a dict `{"params": ..., "lr": ..., ...}`; whatever a group does not
#   set comes from the optimizer's arguments. `opt.param_groups` is the live list of them.
# * The optimizer reads `group["lr"]` on every step: change it by hand (remember each group's
#   own starting value) or let a **scheduler** do it, stepped after the optimizer.
# * Different update rules for different parts: several optimizers, driven together by
#   `MultiOptimizer`.
# * To train only part of a network, turn the gradient off (`requires_grad_(False)`): the rest
#   keeps `.grad` None and is skipped.
# * A parameter's **`lr_mult`** multiplies its group's lr; its **`regularizer`** replaces the
#   optimizer's weight decay. Bias-free decay: two groups, AdamW's `apply_decay_param_fun`, or a
#   zero regularizer on the biases.
# * The step count advances once per `step()` call (per batch); parameters that are skipped are
#   not counted.
# * A new optimizer is one `update` method; groups, `lr_mult`, decay, clipping and checkpoints
#   come with the base class.
# * A parameter may be in an optimizer only once; dltutor raises, PyTorch may update it twice.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("05")

# %% [markdown]
# **1.** In a 10-epoch run, step the `LinearLR` scheduler once per **batch** instead of once per
# epoch. What must `total_iters` be so that the lr still reaches its end at the end of training?

# %%
total_iters = ____
ex.q1.check()

# %% [markdown]
# **2.** An SGD with `lr=0.1`, a `StepLR(opt, step_size=1, gamma=0.5)` stepped once, and a
# parameter with `lr_mult = 3`: what is that parameter's effective learning rate
# (`effective_lr`)? Check with `diagnose.explain_lr`.

# %%
effective_lr = ____
ex.q2.check()

# %% [markdown]
# **3.** Set `net.conv1.weight.lr_mult = 0` and train one step. Does `conv1.weight` move
# (`moves`)? Does it still get a gradient (`gets_gradient`)? `diagnose.why_not_updating(net,
# opt, "conv1.weight")` tells why.

# %%
moves = ____
gets_gradient = ____
ex.q3.check()

# %% [markdown]
# **4.** (Not checked: experiments.) Give the conv group a learning rate of 0.1 and the fc group
# 0.001 and train 10 epochs: test accuracy up or down? Replace `LinearLR` by
# `CosineAnnealingLR(opt, T_max=EPOCHS)` and print the lr of each epoch. Add decoupled weight
# decay to `LionLite` (shrink by `1 - lr * wd` before the sign step). Use `two_steps` with `w`
# listed three times and momentum 0.9, working out both moves by hand first.
