# %% [markdown] tags=["claim-paddle-scheduler-is-the-optimizer-lr", "claim-torch-steplr-scales-each-group"]
# # Learning rates during training, step counts and your own optimizer
#
# **About 30 minutes.** You will be able to:
#
# * change a group's learning rate in mid-training, and say what an lr of 0 leaves running;
# * decay learning rates by hand and with a scheduler, combined with a parameter's `lr_mult`;
# * translate per-group learning rates into scales of one shared schedule, and back;
# * predict the step counts of the optimizer, each parameter and the scheduler;
# * write a new optimizer as one `update` method, and tell coupled from decoupled weight decay.
#
# Chapter 06 gave each parameter group its own learning rate, fixed for the whole run. Real
# runs change learning rates as they go: a part that has learned enough stops, every rate
# shrinks epoch by epoch, a warmup starts small. This chapter does that on the same LeNet and
# digits, and checks every claim against parameter values and learning rates computed by hand.

# %%
import inspect

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange      # a progress bar for the longer training runs (chapter 06)

import dltutor as dt
from dltutor import diagnose, nn, optim, plot
from dltutor.examples import (accuracy, all_changed, make_loader, make_net, snapshot,
                              train_epoch, unchanged)
from dltutor.nn import functional as F
from dltutor.optim import lr_scheduler

np.set_printoptions(precision=4, suppress=True)
EPOCHS = 3 if dt.quick_mode() else 10      # the longer training runs; short under the tests
print("quick mode:", dt.quick_mode(), "| epochs for the longer runs:", EPOCHS)

# %% tags=["twin-torch", "twin-same-numbers"]
import os
import warnings
from collections import OrderedDict

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
QUICK = os.environ.get("DLTUTOR_QUICK") == "1"      # the kit's quick mode, read directly
EPOCHS = 3 if QUICK else 10
print("quick mode:", QUICK, "| epochs for the longer runs:", EPOCHS)

# %% tags=["twin-torch"]
from dltutor.examples import digits, make_net as kit_net    # the kit's digits and start values

train_set, X_test, y_test = digits()
X_train, y_train = map(torch.from_numpy, train_set.arrays)
X_test, y_test = torch.from_numpy(X_test), torch.from_numpy(y_test)


def make_net(seed=0):
    """Chapter 06's LeNet as a Sequential (same names), holding the kit's start values."""
    net = nn.Sequential(OrderedDict(
        conv1=nn.Conv2d(1, 6, 3, padding=1), relu1=nn.ReLU(), pool=nn.MaxPool2d(2),
        conv2=nn.Conv2d(6, 16, 3), relu2=nn.ReLU(), flatten=nn.Flatten(),
        fc1=nn.Linear(64, 32), relu3=nn.ReLU(), fc2=nn.Linear(32, 10)))
    net.load_state_dict({n: torch.from_numpy(p.numpy().copy())
                         for n, p in kit_net(seed).named_parameters()})
    return net


def make_loader(seed=0):
    """The training digits in shuffled batches of 64 (PyTorch's shuffle, not the kit's order)."""
    return DataLoader(TensorDataset(X_train, y_train), batch_size=64, shuffle=True,
                      generator=torch.Generator().manual_seed(seed))


def train_epoch(net, opt, loader):
    total = 0.0
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


def accuracy(net):
    with torch.no_grad():
        return (net(X_test).argmax(dim=1) == y_test).float().mean().item()


print("batches per epoch:", len(make_loader()),
      "| untrained accuracy:", round(accuracy(make_net()), 3))

# %% [markdown]
# The network, the data and the helpers are chapter 06's, from `dltutor.examples`: `make_net()`
# a fresh LeNet (`conv1`, `conv2`, `fc1`, `fc2`), `make_loader()` the 1,500 training digits in
# 24 shuffled batches of 64, `train_epoch(net, opt, loader)` one epoch, `accuracy(net)` on the
# 297 test digits, and `snapshot` / `unchanged` / `all_changed` to compare parameter values
# before and after. Most experiments below use chapter 06's two groups: the convolutions at lr
# 0.05, the fc layers at 0.01.

# %%
def two_groups(net, momentum=0.0):
    """SGD with the conv parameters at lr 0.05 and the fc parameters at lr 0.01."""
    conv = [(n, p) for n, p in net.named_parameters() if "conv" in n]
    fc = [(n, p) for n, p in net.named_parameters() if "conv" not in n]
    return optim.SGD([{"params": conv}, {"params": fc, "lr": 0.01}], lr=0.05, momentum=momentum)


print(two_groups(make_net()))
assert [g["lr"] for g in two_groups(make_net()).param_groups] == [0.05, 0.01]

# %% tags=["twin-torch"]
def two_groups(net, momentum=0.0):
    """SGD with the conv parameters at lr 0.05 and the fc parameters at lr 0.01."""
    conv = [p for n, p in net.named_parameters() if "conv" in n]
    fc = [p for n, p in net.named_parameters() if "conv" not in n]
    return torch.optim.SGD([{"params": conv}, {"params": fc, "lr": 0.01}], lr=0.05,
                           momentum=momentum)


print(two_groups(make_net()))

# %% [markdown]
# ## Changing a group learning rate during training
#
# The optimizer reads `group["lr"]` afresh on every `step()`, so you may change it whenever you
# like. A common use: one part of the network has learned enough, so set its group's learning
# rate to 0 and let the rest go on.
#
# We train four epochs with momentum 0.9, set the fc group's learning rate to 0 after the
# second, and print a few values of `fc2.bias` and keep snapshots of both groups each epoch.

# %%
net = make_net()
opt = two_groups(net, momentum=0.9)
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

# %% tags=["twin-torch"]
net = make_net()
opt = two_groups(net, momentum=0.9)
loader = make_loader()
print("start   fc2.bias[:5] =", net.fc2.bias.detach().numpy()[:5])
for epoch in range(4):
    loss = train_epoch(net, opt, loader)
    print(f"epoch {epoch} fc2.bias[:5] = {net.fc2.bias.detach().numpy()[:5]}  loss {loss:.4f}")
    if epoch == 1:
        opt.param_groups[1]["lr"] = 0.0
        print("        -> lr of the fc group set to 0")

# %% [markdown]
# After the change the printed values stay put. The asserts check every element: the fc
# parameters after epochs 2 and 3 equal those after epoch 1; every conv parameter keeps changing.

# %%
_, conv_after_1, fc_after_1 = history[1]
_, conv_after_0, fc_after_0 = history[0]
assert unchanged(fc_after_1, fc_group), "lr 0: the fc parameters did not move"
assert all(not np.array_equal(a, b) for a, b in zip(fc_after_0, fc_after_1)), "they moved before"
assert all_changed(conv_after_1, conv_group), "the conv parameters kept training"

# %% [markdown]
# Their gradients were still computed every step (an lr of 0 does not stop backward), and the
# momentum buffer still holds values; only the update is multiplied by 0. (Chapter 08's
# `why_not_updating` names this cause in words, among the other reasons a parameter stays put.)

# %%
buffer = opt.state[net.fc1.weight]["momentum_buffer"]
print("fc1.weight has a gradient:", net.fc1.weight.grad is not None,
      "| its momentum buffer is not all zero:", bool(np.abs(buffer).max() > 0))
assert net.fc1.weight.grad is not None
assert np.abs(buffer).max() > 0

# %% tags=["twin-torch"]
buffer = opt.state[net.fc1.weight]["momentum_buffer"]
print("fc1.weight has a gradient:", net.fc1.weight.grad is not None,
      "| its momentum buffer is not all zero:", bool(buffer.abs().max() > 0))

# %% [markdown]
# A picture of the same run: the size of each layer's update per step. We rerun the four
# epochs with a `Recorder` attached (it reads every step through the optimizer's hooks); the fc
# layers' lines drop to nothing at the change and the steps where they were frozen are shaded.

# %%
net = make_net()
opt = two_groups(net, momentum=0.9)
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
plot.show()

# %% tags=["twin-torch"]
# PyTorch has no Recorder: optimizer step hooks measure each layer's update (printed, not drawn).
net, loader = make_net(), make_loader()
opt = two_groups(net, momentum=0.9)
layers, before, update = ["conv1", "conv2", "fc1", "fc2"], {}, []    # update: steps x layers


def keep(opt, args, kwargs):
    before.update({n: p.detach().clone() for n, p in net.named_parameters()})


def step_length(layer):
    """How far the parameters of `layer` (weight and bias together) moved in this step."""
    return sum(((p.detach() - before[n]) ** 2).sum().item()
               for n, p in net.named_parameters() if n.startswith(layer + ".")) ** 0.5


def measure(opt, args, kwargs):
    update.append([step_length(layer) for layer in layers])


hooks = [opt.register_step_pre_hook(keep), opt.register_step_post_hook(measure)]
for epoch in range(4):
    train_epoch(net, opt, loader)
    if epoch == 1:
        opt.param_groups[1]["lr"] = 0.0
for hook in hooks:
    hook.remove()
update, after = np.array(update), 2 * len(loader)
print("steps:", len(update),
      "| fc1, fc2 updates after the change all 0:", bool((update[after:, 2:] == 0).all()),
      "| conv1's all > 0:", bool((update[after:, 0] > 0).all()))

# %%
update = rec.series("update_norm")                   # steps x layers
fc_columns = [rec.names.index("fc1"), rec.names.index("fc2")]
after = slice(2 * len(loader), None)
frozen = update[after][:, fc_columns]
assert np.array_equal(frozen, np.zeros_like(frozen))    # exactly 0; a NaN entry fails (NaN != 0)
assert np.all(update[after][:, rec.names.index("conv1")] > 0)

# %% [markdown]
# ### Going deeper: NaN and infinite learning rates
#
# Where dltutor checks a learning rate, and which slips other frameworks let through.

# %% [markdown] tags=["claim-torch-nan-lr-checked-only-in-constructors"]
# Any number `>= 0` is a learning rate here, but NaN and infinity are not: **dltutor refuses
# them where PyTorch does not.** PyTorch's SGD checks only `lr < 0`, which is False for NaN;
# Adam, AdamW, Adagrad and RMSprop refuse a NaN in their constructors, but all of them accept
# infinity, and none checks a NaN set in `param_groups`, added with `add_param_group` or loaded
# from a state dict. Such an lr (from a typo in a formula, a scheduler, or a checkpoint) turns
# every weight into NaN at the next step. dltutor checks the lr in the constructor, in
# `add_param_group`, in a loaded state dict, and when you write it into `param_groups` by hand:
# the write itself is refused, and nothing changes:

# %%
kept = snapshot(net.parameters())
try:
    opt.param_groups[1]["lr"] = float("nan")
except ValueError as err:
    print(err)
    nan_lr_error = err
assert "param_groups[1]['lr']" in str(nan_lr_error)
assert opt.param_groups[1]["lr"] == 0.0 and unchanged(kept, net.parameters()), "nothing changed"

# %% tags=["twin-torch"]
# PyTorch accepts a NaN written into param_groups; the next step turns the weights into NaN.
opt.param_groups[1]["lr"] = float("nan")
xb, yb = next(iter(loader))
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()
print("accepted: lr =", opt.param_groups[1]["lr"],
      "| fc1.weight all NaN after one step:", bool(net.fc1.weight.isnan().all()))

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
opt = two_groups(net)
base_lrs = [group["lr"] for group in opt.param_groups]     # 0.05 and 0.01

by_hand = []
for epoch in range(total_epochs):
    for group, base in zip(opt.param_groups, base_lrs):
        group["lr"] = base * (1 - epoch / total_epochs)
    by_hand.append([group["lr"] for group in opt.param_groups])
    # ... here: one epoch of training with these lrs
for epoch in (0, 5, 9):
    print(f"epoch {epoch}: lrs", np.round(by_hand[epoch], 4))
assert np.allclose(by_hand[0], [0.05, 0.01])
assert np.allclose(by_hand[5], [0.025, 0.005])       # half way: half the lr
assert np.allclose(by_hand[9], [0.005, 0.001])       # last epoch: a tenth

# %% tags=["twin-torch", "twin-same-numbers"]
total_epochs = 10
net = make_net()
opt = two_groups(net)
base_lrs = [group["lr"] for group in opt.param_groups]     # 0.05 and 0.01

by_hand = []
for epoch in range(total_epochs):
    for group, base in zip(opt.param_groups, base_lrs):
        group["lr"] = base * (1 - epoch / total_epochs)
    by_hand.append([group["lr"] for group in opt.param_groups])
    # ... here: one epoch of training with these lrs
for epoch in (0, 5, 9):
    print(f"epoch {epoch}: lrs", np.round(by_hand[epoch], 4))

# %% [markdown]
# A tempting shortcut writes *one* starting lr into every group
# (`group["lr"] = 0.05 * (1 - epoch / E)`). It silently throws away the per-group rates:
# after it, the fc group trains at 0.05 too.

# %%
for group in opt.param_groups:                 # the shortcut, at epoch 0
    group["lr"] = 0.05 * (1 - 0 / total_epochs)
print([group["lr"] for group in opt.param_groups])
assert opt.param_groups[1]["lr"] == 0.05       # the 0.01 of the fc group is gone

# %% tags=["twin-torch", "twin-same-numbers"]
for group in opt.param_groups:                 # the shortcut, at epoch 0
    group["lr"] = 0.05 * (1 - 0 / total_epochs)
print([group["lr"] for group in opt.param_groups])

# %% [markdown]
# ### With a scheduler
#
# A *scheduler* does this bookkeeping for you. It remembers each group's starting lr (as
# `group["initial_lr"]`) and sets every group's `lr` each time you call `scheduler.step()`,
# **after** the optimizer's steps of that epoch. `LinearLR` with `start_factor=1.0` and
# `end_factor=0.0` over 10 steps is exactly the linear decay above:

# %%
net = make_net()
opt = two_groups(net)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=total_epochs)

with_scheduler = []
for epoch in range(total_epochs):
    with_scheduler.append([group["lr"] for group in opt.param_groups])
    # ... here: one epoch of training (opt.step() for every batch) ...
    sched.step()                               # once per epoch, after the optimizer steps
print("epoch 5: lrs", np.round(with_scheduler[5], 4), "| initial lrs:", sched.base_lrs)
assert np.allclose(with_scheduler, by_hand)
assert sched.base_lrs == [0.05, 0.01]
assert np.isclose(opt.param_groups[0]["lr"], 0.0)     # after 10 steps: the end factor, 0

# %% tags=["twin-torch", "twin-same-numbers"]
from torch.optim import lr_scheduler

net = make_net()
opt = two_groups(net)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=total_epochs)

with_scheduler = []
for epoch in range(total_epochs):
    with_scheduler.append([group["lr"] for group in opt.param_groups])
    opt.step()                  # one epoch of training here (no gradients yet: nothing moves)
    sched.step()                # once per epoch, after the optimizer steps
print("epoch 5: lrs", np.round(with_scheduler[5], 4), "| initial lrs:", sched.base_lrs)

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
plot.show()

# %% tags=["twin-torch"]
# PyTorch has no preview and no LinearWarmup: a throwaway optimizer records the lrs, and the
# warmup is a LambdaLR (lr x e / 5) followed by the cosine in a SequentialLR.
def preview(make_scheduler, steps, lr):
    """The lr of each of `steps` epochs under the scheduler that `make_scheduler(opt)` builds."""
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    sched, lrs = make_scheduler(opt), []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return np.array(lrs)


steps = 30
schedules = {
    "LinearLR": lambda o: lr_scheduler.LinearLR(o, 1.0, 0.0, total_iters=steps),
    "StepLR": lambda o: lr_scheduler.StepLR(o, step_size=10, gamma=0.5),
    "CosineAnnealingLR": lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=steps),
    "LinearWarmup + cosine": lambda o: lr_scheduler.SequentialLR(o, [
        lr_scheduler.LambdaLR(o, lambda e: e / 5),
        lr_scheduler.CosineAnnealingLR(o, T_max=steps - 5)], milestones=[5]),
}
curves = {label: preview(make, steps, lr=0.05) for label, make in schedules.items()}
for label, curve in curves.items():              # the figure's lines, as numbers
    print(f"{label:22s} epochs 0, 5, 10, 15, 29:", curve[[0, 5, 10, 15, 29]].round(4))

# %%
linear, stair = curves["LinearLR"], curves["StepLR"]
cosine, warm = curves["CosineAnnealingLR"], curves["LinearWarmup + cosine"]
assert np.allclose(linear[[0, 15, 24]], [0.05, 0.025, 0.01])      # 0.05 * (1 - e / 30)
assert np.allclose(stair[[0, 9, 10, 20]], [0.05, 0.05, 0.025, 0.0125])
assert np.isclose(cosine[15], 0.025)                               # half way: half the lr
assert np.allclose(warm[:6], [0.0, 0.01, 0.02, 0.03, 0.04, 0.05])  # ramp, then the cosine
print("LinearLR at epochs 0, 15, 24:", linear[[0, 15, 24]].round(4))

# %% tags=["twin-torch", "twin-same-numbers"]
print("LinearLR at epochs 0, 15, 24:", curves["LinearLR"][[0, 15, 24]].round(4))

# %% [markdown] tags=["claim-torch-sequentiallr-warmup-cosine", "claim-torch-plateau-reduces-after-patience"]
# ### Warmup with SequentialLR, and lowering the lr when the loss stalls
#
# PyTorch writes warmup + cosine with `SequentialLR`: one schedule until a milestone, then the
# next, started afresh; its warmup is usually a `LinearLR` from a small `start_factor` (0.01
# here: the first epoch uses 1% of the lr, where `LinearWarmup` starts at 0). dltutor has the
# same classes, with PyTorch's numbers.
#
# `ReduceLROnPlateau` follows no calendar: give it the validation loss after each epoch
# (`sched.step(val_loss)`), and after more than `patience` epochs without an improvement it
# multiplies the lr by `factor`, then counts again. It suits a run whose length you do not
# know. Below, the two warmups differ only in where they start, and the plateau's lr halves
# three epochs after the best loss (0.69).

# %%
warmup_cosine = lr_scheduler.preview(lambda o: lr_scheduler.SequentialLR(
    o, [lr_scheduler.LinearLR(o, start_factor=0.01, total_iters=5),
        lr_scheduler.CosineAnnealingLR(o, T_max=steps - 5)], milestones=[5]), steps, lr=0.05)
print("SequentialLR, epochs 0-7:", warmup_cosine[:8].round(4))

w = nn.Parameter([0.0])
stalling = optim.SGD([w], lr=0.1)
plateau = lr_scheduler.ReduceLROnPlateau(stalling, factor=0.5, patience=2)
val_losses = [1.0, 0.8, 0.7, 0.7, 0.71, 0.69, 0.7, 0.7, 0.7, 0.65]
plateau_lrs = []
for val_loss in val_losses:
    plateau.step(val_loss)
    plateau_lrs.append(stalling.param_groups[0]["lr"])
print("ReduceLROnPlateau:", plateau_lrs)

fig, (left, right) = plt.subplots(1, 2, figsize=(8.8, 3.4), layout="constrained")
plot.lr_schedule(warm, ax=left, label="LinearWarmup + cosine")
[sequential] = plot.lr_schedule(warmup_cosine, ax=left,
                                label="SequentialLR: LinearLR(0.01),\nthen cosine")
sequential.set_linestyle("--")                  # dashed: it lies on the other one from epoch 5
left.set_title("Two warmups into the same cosine")
left.set_xlabel("epoch")
left.legend(loc="upper right", fontsize="small")
plot.lr_schedule(plateau_lrs, ax=right, label="lr after sched.step(val_loss)")
right.set_xlabel("epoch")
right.set_title("ReduceLROnPlateau: the lr follows the loss")
losses_axis = right.twinx()                     # the validation losses it was given
losses_axis.plot(np.arange(len(val_losses)) + 0.5, val_losses, "o:", color="gray")
losses_axis.set_ylabel("validation loss (dots)")
plot.show()

# %% tags=["twin-torch", "twin-same-numbers"]
warmup_cosine = preview(lambda o: lr_scheduler.SequentialLR(
    o, [lr_scheduler.LinearLR(o, start_factor=0.01, total_iters=5),
        lr_scheduler.CosineAnnealingLR(o, T_max=steps - 5)], milestones=[5]), steps, lr=0.05)
print("SequentialLR, epochs 0-7:", warmup_cosine[:8].round(4))

w = torch.zeros(1, requires_grad=True)
stalling = torch.optim.SGD([w], lr=0.1)
plateau = lr_scheduler.ReduceLROnPlateau(stalling, factor=0.5, patience=2)
val_losses = [1.0, 0.8, 0.7, 0.7, 0.71, 0.69, 0.7, 0.7, 0.7, 0.65]
plateau_lrs = []
for val_loss in val_losses:
    plateau.step(val_loss)
    plateau_lrs.append(stalling.param_groups[0]["lr"])
print("ReduceLROnPlateau:", plateau_lrs)

# %%
assert np.allclose(warmup_cosine[:6], [0.0005, 0.0104, 0.0203, 0.0302, 0.0401, 0.05])
assert np.isclose(warmup_cosine[5:].max(), 0.05)                   # the cosine starts afresh
assert plateau_lrs == [0.1] * 8 + [0.05] * 2     # three epochs at 0.7 after the best 0.69

# %% [markdown] tags=["claim-torch-sequentiallr-refuses-plateau", "claim-torch-warmup-then-plateau-by-hand"]
# ### Warmup then plateau
#
# The two combine: warm up for a few epochs, then let the validation loss decide. Pass the
# plateau as `after` and give the warmup the loss once per epoch, `warm.step(val_loss)`. The
# plateau starts watching at the hand-over, the first epoch at the full lr; the warmup's
# losses were measured at smaller lrs and do not count (here its last one, 0.5, would make
# the first full-lr epochs look bad and halve the lr too soon). After the hand-over, a
# `warm.step()` without the loss is refused. PyTorch's `SequentialLR` refuses a
# `ReduceLROnPlateau`, so PyTorch users write this by hand, and get the same lrs:
# `warmup = LambdaLR(opt, lambda e: e / 3)`, and after each epoch
# `warmup.step() if epoch < 3 else plateau.step(val_loss)`.
#
# By hand, from lr 0.1 with 3 warmup epochs: 0, 0.0333, 0.0667, then 0.1 from epoch 3. The
# best loss, 0.55, comes after epoch 5; after epoch 8, the third epoch in a row without a
# better one (more than `patience=2`), the lr halves to 0.05, and after epoch 12 again.

# %%
epoch_losses = [1.0, 0.8, 0.5, 0.65, 0.62, 0.55, 0.56, 0.55, 0.57, 0.5, 0.52, 0.51, 0.53, 0.45]
warm_opt = optim.SGD([nn.Parameter([0.0])], lr=0.1)
warm_plateau = lr_scheduler.LinearWarmup(
    warm_opt, warmup_steps=3,
    after=lr_scheduler.ReduceLROnPlateau(warm_opt, factor=0.5, patience=2))
warm_lrs = []
for val_loss in epoch_losses:
    warm_lrs.append(warm_opt.param_groups[0]["lr"])    # the lr this epoch trains with
    # ... train one epoch, validate: val_loss ...
    warm_plateau.step(val_loss)
print("lr per epoch:", np.round(warm_lrs, 4))

fig, ax = plt.subplots(figsize=(8, 3.2))
plot.lr_schedule(warm_lrs, ax=ax)
ax.axvline(3, color="0.3", ls=":")              # the hand-over
ax.set_xlabel("epoch")
ax.set_title("Warmup for 3 epochs, then the lr follows the loss")
losses_axis = ax.twinx()
losses_axis.plot(np.arange(len(epoch_losses)) + 0.5, epoch_losses, "o:", color="gray")
losses_axis.set_ylabel("validation loss (dots)")
plot.show()

# %% tags=["twin-torch", "twin-same-numbers"]
# SequentialLR refuses a ReduceLROnPlateau: warm up with a LambdaLR, then step the plateau by hand.
epoch_losses = [1.0, 0.8, 0.5, 0.65, 0.62, 0.55, 0.56, 0.55, 0.57, 0.5, 0.52, 0.51, 0.53, 0.45]
warm_opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
warmup = lr_scheduler.LambdaLR(warm_opt, lambda e: e / 3)
plateau = lr_scheduler.ReduceLROnPlateau(warm_opt, factor=0.5, patience=2)
warm_lrs = []
for epoch, val_loss in enumerate(epoch_losses):
    warm_lrs.append(warm_opt.param_groups[0]["lr"])    # the lr this epoch trains with
    warm_opt.step()                                     # ... train one epoch, validate ...
    if epoch < 3:
        warmup.step()
    else:
        plateau.step(val_loss)
print("lr per epoch:", np.round(warm_lrs, 4))

# %%
by_hand = [0.1 * e / 3 for e in range(3)] + [0.1] * 6 + [0.05] * 4 + [0.025]
assert np.allclose(warm_lrs, by_hand)       # ramp; full lr; halved after epochs 8 and 12
try:
    warm_plateau.step()                          # the loss forgotten after the hand-over
except TypeError as error:
    print(error)
else:
    raise AssertionError("a step without the loss was accepted")

# %% tags=["twin-torch"]
# In the loop by hand there is no warmup object to refuse: the plateau's own step() needs the
# loss, and Python says so.
print("lrs as computed by hand:", np.allclose(warm_lrs, [0.1 * e / 3 for e in range(3)]
                                               + [0.1] * 6 + [0.05] * 4 + [0.025]))
try:
    plateau.step()                               # the loss forgotten after the hand-over
except TypeError as error:
    print(error)

# %% [markdown]
# ### Going deeper: the linear decay in a real training run
#
# The `LinearLR` decay of "With a scheduler", stepped once per epoch while the LeNet trains.

# %% [markdown]
# The same plan in a real training run: a few epochs on the digits, the scheduler stepped once
# per epoch. The lr each epoch used is recorded before the epoch starts.

# %%
net = make_net()
opt = two_groups(net, momentum=0.9)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=EPOCHS)
loader = make_loader()
used = []
for epoch in trange(EPOCHS, desc="epochs", disable=dt.quick_mode()):   # no bar in quick mode
    used.append(opt.param_groups[0]["lr"])
    loss = train_epoch(net, opt, loader)
    sched.step()
    print(f"epoch {epoch}: conv lr {used[-1]:.4f}  loss {loss:.4f}  test accuracy {accuracy(net):.3f}")
assert np.allclose(used, [0.05 * (1 - e / EPOCHS) for e in range(EPOCHS)])

# %% tags=["twin-torch"]
net = make_net()
opt = two_groups(net, momentum=0.9)
sched = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=EPOCHS)
loader = make_loader()
used = []
for epoch in range(EPOCHS):
    used.append(opt.param_groups[0]["lr"])
    loss = train_epoch(net, opt, loader)
    sched.step()
    print(f"epoch {epoch}: conv lr {used[-1]:.4f}  loss {loss:.4f}  test accuracy {accuracy(net):.3f}")

# %% [markdown]
# ## Schedulers and per-parameter multipliers
#
# A scheduler changes the *group's* lr; a parameter's `lr_mult` (chapter 06) multiplies whatever
# the group has at each step. So a parameter with `lr_mult = 2` in the fc group trains at
# `0.01 x 2` at first and `0.005 x 2` after a `StepLR` halves the group. `explain_lr` shows both
# parts, and one plain SGD step proves them: `fc1.weight` must move by `(0.01 x 0.5 x 2) x
# gradient`.

# %%
net = make_net()
net.fc1.weight.lr_mult = 2.0
opt = two_groups(net)
sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
sched.step()
report = diagnose.explain_lr(opt, "fc1.weight")
print(report)

before = net.fc1.weight.numpy().copy()
xb, yb = next(iter(make_loader()))
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()
assert np.isclose(report.effective_lr, 0.01 * 0.5 * 2.0)
assert np.allclose(before - net.fc1.weight.numpy(), 0.01 * 0.5 * 2.0 * net.fc1.weight.grad.numpy(),
                   atol=1e-7)

# %% tags=["twin-torch"]
# PyTorch has no lr_mult and no explain_lr: fc1.weight gets a group of its own at 2 x 0.01,
# which StepLR halves like every group's own lr.
net = make_net()
fc_rest = [p for n, p in net.named_parameters() if n.startswith("fc") and n != "fc1.weight"]
opt = torch.optim.SGD([{"params": [p for n, p in net.named_parameters() if "conv" in n]},
                       {"params": fc_rest, "lr": 0.01},
                       {"params": [net.fc1.weight], "lr": 0.01 * 2.0}], lr=0.05)
sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
opt.step()
sched.step()
print("fc1.weight trains at", opt.param_groups[2]["lr"], "=", 0.01, "x 0.5 x", 2.0)

before = net.fc1.weight.detach().clone()
xb, yb = next(iter(make_loader()))
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()
moved = before - net.fc1.weight.detach()
print("moved by 0.01 x gradient:", torch.allclose(moved, 0.01 * net.fc1.weight.grad, atol=1e-7))

# %% [markdown] tags=["claim-paddle-scheduler-is-the-optimizer-lr", "claim-paddle-schedule-times-paramattr-flat-group-overwrites"]
# ### Going deeper: in Paddle the scheduler is the learning rate
#
# How Paddle passes a schedule, what a group's and a `ParamAttr`'s learning rate do to it (exercise 3).

# %% [markdown] tags=["claim-paddle-scheduler-is-the-optimizer-lr", "claim-torch-steplr-scales-each-group"]
# Paddle builds the same thing the other way round. You create the scheduler **first**, from the
# base learning rate, and pass it to the optimizer **as** its `learning_rate`; a group's
# `"learning_rate"` is then a **scale** of that one schedule, not a learning rate of its own:
#
# ```python
# sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=2, gamma=0.5)
# opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[
#     {"params": conv_params},                           # 1.0 x the schedule
#     {"params": fc_params, "learning_rate": 0.2}])      # 0.2 x the schedule = 0.01 at first
# ...
# sched.step()                                           # once per epoch, as here
# ```
#
# In PyTorch and dltutor each group keeps its own lr and the scheduler, built on the optimizer,
# scales every group's starting lr. For the schedules that multiply (StepLR, LinearLR, a cosine
# down to 0, ...) the two give the same numbers when you translate a Paddle scale `s` into a
# group lr `base x s`. The cell computes the numbers Paddle 3.3 gives (one schedule times each
# group's scale; `tests/frameworks/test_ch07_learning_rates.py` measures them in Paddle, and
# PyTorch's `StepLR` on the same two groups) and compares them with dltutor's groups step by
# step:

# %%
make_step_lr = lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
paddle_schedule = lr_scheduler.preview(make_step_lr, 6, lr=0.05)     # Paddle's one schedule
paddle_scales = [1.0, 0.2]                                           # the groups' "learning_rate"
paddle_lrs = np.outer(paddle_schedule, paddle_scales)                # step x group

opt = two_groups(make_net())                                         # groups at 0.05 and 0.01
sched = make_step_lr(opt)
ours = []
for step in range(6):
    ours.append([group["lr"] for group in opt.param_groups])
    sched.step()
print(np.round(np.array(ours), 5))
assert np.allclose(ours, paddle_lrs)

# %% tags=["twin-torch", "twin-same-numbers"]
opt = two_groups(make_net())                                 # groups at 0.05 and 0.01
sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)     # scales each group's own lr
ours = []
for step in range(6):
    ours.append([group["lr"] for group in opt.param_groups])
    opt.step()
    sched.step()
print(np.round(np.array(ours), 5))

# %% tags=["twin-paddle", "twin-same-numbers"]
import numpy as np
import paddle

np.set_printoptions(precision=4, suppress=True)
conv_w = paddle.create_parameter([1], "float32")             # stand-ins for the two groups
fc_w = paddle.create_parameter([1], "float32")
sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=2, gamma=0.5)
opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[
    {"params": [conv_w]},                                   # 1.0 x the schedule
    {"params": [fc_w], "learning_rate": 0.2}])              # 0.2 x the schedule
lrs = []
for step in range(6):                                       # the schedule x each group's scale
    lrs.append([opt.get_lr() * p.optimize_attr["learning_rate"] for p in (conv_w, fc_w)])
    sched.step()
print(np.round(np.array(lrs), 5))

# %% [markdown] tags=["claim-paddle-schedule-times-paramattr-flat-group-overwrites"]
# A Paddle `ParamAttr(learning_rate=m)` multiplies once more, like `lr_mult` here, **but only in
# a flat parameter list**: there a parameter trains at schedule x `ParamAttr` learning rate. In
# a parameter group it does not count: when Paddle 3.3 adds a group it overwrites each
# parameter's `ParamAttr` rate with the group's `learning_rate`, so the parameter trains at
# schedule x group scale, whatever its `ParamAttr` said (chapter 06 shows the same for the
# regularizer). dltutor's `lr_mult` multiplies in every group. Exercise 3 works one out.

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
assert len(loader) == int(np.ceil(1500 / 64)) == 24
assert counts == [len(loader), 2 * len(loader)]
assert all(opt.state[p]["step"] == 2 * len(loader) for p in net.parameters())

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no step_count: a step post-hook counts the calls; Adam keeps state[p]["step"].
net = make_net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
calls = []
opt.register_step_post_hook(lambda opt, args, kwargs: calls.append(1))
loader = make_loader()
counts = []
for epoch in range(2):
    train_epoch(net, opt, loader)
    counts.append(len(calls))
print("batches per epoch:", len(loader), "| step_count after each epoch:", counts)
print("conv1.weight state['step']:", int(opt.state[net.conv1.weight]["step"]))

# %% [markdown]
# A scheduler keeps its own count (`scheduler.last_epoch`): one per `scheduler.step()`. Whether
# that is one per epoch or one per batch is up to you; just give `total_iters`, `step_size`,
# `T_max`... in the same unit as you step it.


# %% [markdown]
# What changes the count is calling `step()` less often than once per batch. With **gradient
# accumulation** (the loop below adds the gradients of 4 batches, then steps once, a way to
# train with a batch too large for memory), an epoch of 24 batches is 6 steps:

# %%
acc_net = make_net()
acc_opt = optim.Adam(acc_net.named_parameters(), lr=0.01)
accumulate = 4
for i, (xb, yb) in enumerate(make_loader()):
    (F.cross_entropy(acc_net(xb), yb) / accumulate).backward()  # gradients add up over 4 batches
    if (i + 1) % accumulate == 0:
        acc_opt.step()
        acc_opt.zero_grad()
print("batches:", len(make_loader()), "| steps:", acc_opt.step_count)
assert acc_opt.step_count == len(make_loader()) // accumulate == 6
assert all(acc_opt.state[p]["step"] == 6 for p in acc_net.parameters())

# %% tags=["twin-torch", "twin-same-numbers"]
acc_net = make_net()
acc_opt = torch.optim.Adam(acc_net.parameters(), lr=0.01)
accumulate = 4
for i, (xb, yb) in enumerate(make_loader()):
    (F.cross_entropy(acc_net(xb), yb) / accumulate).backward()  # gradients add up over 4 batches
    if (i + 1) % accumulate == 0:
        acc_opt.step()
        acc_opt.zero_grad()
print("batches:", len(make_loader()), "| steps:", int(acc_opt.state[acc_net.fc2.bias]["step"]))

# %% [markdown] tags=["claim-paddle-static-graph-one-step-per-run"]
# ### Going deeper: skipped parameters and Paddle's static graph
#
# Two corner cases of the count: a parameter without a gradient, and a step in a static graph.

# %% [markdown]
# A parameter without a gradient is skipped, and a skipped parameter is **not** counted. Freeze
# `fc1` for a third epoch: `step()` is called 24 more times, but `fc1`'s own count stays behind.

# %%
net.fc1.requires_grad_(False)          # train_epoch's zero_grad() drops its old gradients
train_epoch(net, opt, loader)
print("step_count:", opt.step_count,
      "| conv1.weight:", opt.state[net.conv1.weight]["step"],
      "| fc1.weight:", opt.state[net.fc1.weight]["step"])
assert opt.step_count == 3 * len(loader)
assert opt.state[net.conv1.weight]["step"] == 3 * len(loader)
assert opt.state[net.fc1.weight]["step"] == 2 * len(loader)

# %% tags=["twin-torch", "twin-same-numbers"]
net.fc1.requires_grad_(False)          # zero_grad() sets its old gradients to None
train_epoch(net, opt, loader)
print("step_count:", len(calls),
      "| conv1.weight:", int(opt.state[net.conv1.weight]["step"]),
      "| fc1.weight:", int(opt.state[net.fc1.weight]["step"]))

# %% [markdown] tags=["claim-paddle-static-graph-one-step-per-run"]
# **In a static graph the count is the same.** In Paddle's static-graph mode one training step
# is one `exe.run(program, feed=batch)`: the program holds the forward pass, the backward pass
# and the optimizer's update, and every run advances the optimizer by one step (in Paddle 3.3,
# Adam's `beta1_pow` accumulator is multiplied by `beta1` once per run). So after `E` epochs of
# `N` batches the count is `N x E`, as here: one `exe.run` plays the part of one pass through
# `train_epoch`'s loop body.


# %% [markdown]
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

# %% tags=["twin-torch"]
class LionLite(torch.optim.Optimizer):
    """PyTorch's base class does nothing for you: step() loops, skips and decays by hand."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.add(p, alpha=group["weight_decay"])   # coupled L2, as the kit's
                m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                p.add_(torch.sign(beta1 * m + (1 - beta1) * grad), alpha=-group["lr"])
                m.mul_(beta2).add_(grad, alpha=1 - beta2)


print(LionLite([torch.zeros(1, requires_grad=True)]))

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
for epoch in trange(EPOCHS, desc="epochs", disable=dt.quick_mode()):
    losses.append(train_epoch(net, opt, loader))
    print(f"epoch {epoch}: loss {losses[-1]:.4f}  test accuracy {accuracy(net):.3f}")
assert losses[-1] < losses[0]
print("fc group lr:", opt.param_groups[1]["lr"], "| state of fc1.weight:", sorted(opt.state[net.fc1.weight]))

# %% tags=["twin-torch"]
def lion_for(net):
    """LionLite with two groups: the conv layers at lr 0.003, the rest at 0.001."""
    return LionLite([{"params": [p for n, p in net.named_parameters() if "conv" in n]},
                     {"params": [p for n, p in net.named_parameters() if "conv" not in n],
                      "lr": 0.001}], lr=0.003)


net = make_net()
opt = lion_for(net)
loader = make_loader()
for epoch in range(EPOCHS):
    loss = train_epoch(net, opt, loader)
    print(f"epoch {epoch}: loss {loss:.4f}  test accuracy {accuracy(net):.3f}")
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
assert np.allclose(a.numpy(), 1 - 0.1 * np.array([1, -1, 1]))
assert np.allclose(b.numpy(), 1 - 0.05 * np.array([1, -1, 1]))
saved = lion.state_dict()
print(sorted(saved["state"]), sorted(saved["state"]["b"]))
assert sorted(saved["state"]) == ["a", "b"] and "exp_avg" in saved["state"]["b"]

# %% tags=["twin-torch"]
# PyTorch has no lr_mult: b goes into a group of its own at half the lr. Its state_dict keys
# the state by position (0, 1), not by name.
a = torch.ones(3, requires_grad=True)
b = torch.ones(3, requires_grad=True)
lion = LionLite([{"params": [a]}, {"params": [b], "lr": 0.1 * 0.5}], lr=0.1)
((a + b) * torch.tensor([1.0, -2.0, 3.0])).sum().backward()   # both get the gradient [1, -2, 3]
lion.step()
print("a:", a.detach().numpy(), " b:", b.detach().numpy())
saved = lion.state_dict()
print(sorted(saved["state"]), sorted(saved["state"][1]))

# %% [markdown]
# **LionLite's `weight_decay` is not Lion's.** LionLite accepts `weight_decay` and hands it to
# the base class, which treats it as it does for SGD: it adds `weight_decay * p` to the
# gradient *before* `update` sees it (coupled L2). In Lion that term lands **inside the sign**:
# where the gradient is small, the decay alone decides the sign, and the parameter moves by the
# whole lr towards zero. The Lion paper decouples the decay, as AdamW does: `p -= lr * wd * p`,
# outside the sign. With a zero gradient the difference is plain:

# %%
p = nn.Parameter(np.array([2.0, -3.0], dtype=np.float32))
coupled = LionLite([("p", p)], lr=0.1, weight_decay=0.01)
p.grad = dt.zeros_like(p)
coupled.step()
lion_paper = np.array([2.0, -3.0]) * (1 - 0.1 * 0.01)    # decoupled: shrink by lr * wd only
print("LionLite:", p.numpy(), "| Lion (decoupled):", lion_paper)
assert np.allclose(p.numpy(), [1.9, -2.9])                # a full lr step towards zero
assert not np.allclose(p.numpy(), lion_paper, atol=1e-2)  # not the tiny decoupled shrink

# %% tags=["twin-torch", "twin-same-numbers"]
p = torch.tensor([2.0, -3.0], requires_grad=True)
coupled = LionLite([p], lr=0.1, weight_decay=0.01)
p.grad = torch.zeros_like(p)
coupled.step()
lion_paper = np.array([2.0, -3.0]) * (1 - 0.1 * 0.01)    # decoupled: shrink by lr * wd only
print("LionLite:", p.detach().numpy(), "| Lion (decoupled):", lion_paper)

# %% [markdown]
# To make it Lion's, keep the decay out of the base class (a key of your own, say
# `decoupled_wd`, that the base does not read) and shrink `param.data` in `update` before the
# sign step: exercise 6 below.

# %% [markdown]
# ### Going deeper: LionLite learns from other starts too
#
# The check that LionLite's falling loss above was not the luck of one seed.

# %%
def lion_learns(seed):
    """LionLite lowers the loss of a LeNet started from `seed` over the epochs."""
    other = make_net(seed)
    other_opt, other_loader = lion_for(other), make_loader()
    epoch_losses = [train_epoch(other, other_opt, other_loader) for _ in range(EPOCHS)]
    return epoch_losses[-1] < epoch_losses[0]


assert all(lion_learns(seed) for seed in range(1, 5))             # not luck: other seeds too

# %% tags=["twin-torch"]
def lion_learns(seed):
    """LionLite lowers the loss of a LeNet started from `seed` over the epochs."""
    other = make_net(seed)
    other_opt, other_loader = lion_for(other), make_loader()
    epoch_losses = [train_epoch(other, other_opt, other_loader) for _ in range(EPOCHS)]
    return epoch_losses[-1] < epoch_losses[0]


print("the loss falls from seeds 1-4:", [lion_learns(seed) for seed in range(1, 5)])

# %% [markdown] tags=["claim-torch-custom-optimizer-writes-step", "claim-paddle-custom-optimizer-append-optimize-op"]
# ### Going deeper: the same optimizer in PyTorch and in Paddle
#
# How the two frameworks spell a new optimizer, and what their base classes do for you. It is
# folded when the chapter opens: the "cell hidden" button under it (on the website, the box)
# shows it. Nothing later in the chapter needs it.

# %% [markdown] tags=["claim-torch-custom-optimizer-writes-step", "claim-paddle-custom-optimizer-append-optimize-op", "claim-paddle-own-optimizers-call-c-ops", "claim-torch-names-07-b", "claim-paddle-names-07-b"]
# **PyTorch**: subclass `torch.optim.Optimizer` and write the whole `step()`. Nothing is done
# for you: you loop over the groups and their parameters, skip those without a gradient, and
# add weight decay or clipping yourself. LionLite there:
#
# ```python
# class LionLite(torch.optim.Optimizer):
#     def __init__(self, params, lr=1e-3, betas=(0.9, 0.99)):
#         super().__init__(params, dict(lr=lr, betas=betas))
#
#     @torch.no_grad()
#     def step(self):
#         for group in self.param_groups:
#             beta1, beta2 = group["betas"]
#             for p in group["params"]:
#                 if p.grad is None:
#                     continue
#                 m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
#                 p.add_(torch.sign(beta1 * m + (1 - beta1) * p.grad), alpha=-group["lr"])
#                 m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
# ```
#
# **Paddle**: subclass `paddle.optimizer.Optimizer` and override
# `_append_optimize_op(block, param_and_grad)`. Like `update` here it receives one parameter
# and its gradient; the base class has already applied the regularizer and the `grad_clip`.
# Per-parameter buffers are *accumulators*: create them in `_create_accumulators(block,
# parameters)` with `self._add_accumulator(name, param)`, fetch one with
# `self._get_accumulator(name, param)`. The learning rate for this parameter (the schedule
# times the parameter's `ParamAttr` learning rate, which a group overwrites with its own)
# comes from `self._create_param_lr(param_and_grad)`. In dynamic-graph mode the update is
# ordinary tensor code. Paddle's own optimizers but LBFGS (which writes its own `step()`) call
# a fused kernel instead (SGD calls
# `paddle._C_ops.sgd_`, in Paddle 3.3 for dynamic graphs and the new PIR static graphs alike)
# and keep a branch that appends an operator to `block` for the older static graph, which is
# why their `_append_optimize_op` first checks which mode it runs in.
#
# | piece | dltutor | PyTorch | Paddle |
# | --- | --- | --- | --- |
# | the rule for one parameter | `update(param, grad, state, group, lr)` | the body of your loop in `step()` | `_append_optimize_op(block, (param, grad))` |
# | per-parameter buffers | `state` (a dict per parameter) | `self.state[p]` | `_add_accumulator` / `_get_accumulator` |
# | the lr for this parameter | the `lr` argument (group lr x `lr_mult`) | `group["lr"]` | `self._create_param_lr(param_and_grad)` |
# | skip, decay, clip | the base class (it counts the steps too) | you | the base class (`regularization`, `grad_clip`) |

# %% [markdown] tags=["claim-torch-names-07", "claim-paddle-names-07", "claim-mge-names-07", "claim-paddle-scheduler-is-the-optimizer-lr", "claim-torch-steplr-scales-each-group", "claim-mge-scheduler-built-on-optimizer", "claim-mge-group-lr-read-each-step", "claim-paddle-set-lr-refused-with-scheduler", "claim-paddle-group-scale-copied-when-added", "claim-paddle-schedule-times-paramattr-flat-group-overwrites", "claim-torch-adam-state-step", "claim-paddle-static-graph-one-step-per-run", "claim-mge-adam-state-step", "claim-torch-custom-optimizer-writes-step", "claim-paddle-custom-optimizer-append-optimize-op", "claim-mge-custom-optimizer-create-state-updates"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | change the lr by hand | `group["lr"] = x` | `group["lr"] = x` | `opt.set_lr(x)` (a `RuntimeError` when the lr is a scheduler); a group's scale is copied onto its parameters when the group is added, so changing it later does nothing | `group["lr"] = x` |
# | schedulers | `optim.lr_scheduler.LinearLR`, `StepLR`, `CosineAnnealingLR`, `LinearWarmup` | `torch.optim.lr_scheduler.LinearLR`, `StepLR`, `CosineAnnealingLR`, `SequentialLR` | `paddle.optimizer.lr.LinearLR`, `StepDecay`, `CosineAnnealingDecay`, `LinearWarmup` | `megengine.optimizer.MultiStepLR` |
# | where the scheduler goes | built on the optimizer: `StepLR(opt, ...)` | built on the optimizer | passed **as** the optimizer's `learning_rate` | built on the optimizer |
# | a group's lr under a scheduler | its own lr, scaled by the schedule | same | the group's `learning_rate` is a scale of the one schedule | same as dltutor |
# | per-parameter lr multiplier | `p.lr_mult = 2.0` | — | `ParamAttr(learning_rate=2.0)` (flat list only: a group overwrites it) | — |
# | steps taken | `opt.step_count`, `opt.state[p]["step"]` | `opt.state[p]["step"]` (Adam, AdamW) | one per `step()` (one per `exe.run` in a static graph) | `opt._state[p]["step"]` (Adam, AdamW) |
# | write an optimizer | subclass `optim.Optimizer`, override `update` | subclass `torch.optim.Optimizer`, write `step` | subclass `paddle.optimizer.Optimizer`, override `_append_optimize_op` | subclass `megengine.optimizer.Optimizer`, write `_create_state` and `_updates` |

# %% [markdown] tags=["claim-paddle-scheduler-is-the-optimizer-lr", "claim-paddle-schedule-times-paramattr-flat-group-overwrites"]
# ## Summary
#
# **In two lines:** the optimizer reads each group's lr afresh at every step, so a scheduler only
# writes a number, which each parameter's `lr_mult` then multiplies. Steps are counted per `step()`
# and per parameter, and a new optimizer is one `update` method.
#
# * The optimizer reads `group["lr"]` on every step: change it by hand (remember each group's
#   own starting value) or let a **scheduler** do it, stepped after the optimizer. An lr of 0
#   stops the updates, not the gradients.
# * A parameter's `lr_mult` multiplies whatever its group's lr is at that step.
# * Paddle passes the scheduler as the optimizer's `learning_rate`, and a group's
#   `learning_rate` scales it (and replaces the `ParamAttr` rate of the group's parameters);
#   translate a scale `s` into a group lr `base x s`.
# * The step count advances once per `step()` call (per batch, or per accumulated batch);
#   parameters that are skipped are not counted. A scheduler counts its own steps.
# * A new optimizer is one `update` method; groups, `lr_mult`, decay, clipping and checkpoints
#   come with the base class. A `weight_decay` handed to the base class is coupled L2.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("07")

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

# %% [markdown] tags=["claim-paddle-schedule-times-paramattr-flat-group-overwrites"]
# **3.** Paddle passes the scheduler itself as the optimizer's `learning_rate`, and a group's
# `"learning_rate"` is a scale of that one schedule (the Going deeper section on Paddle's
# scheduler, above, says what becomes of a `ParamAttr` rate). Say
# `sched = StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)` is the optimizer's `learning_rate`, the fc group is `{"params": fc_params, "learning_rate": 0.2}`,
# and `fc1.weight` (one of `fc_params`) was created with `ParamAttr(learning_rate=3.0)`. After
# one `sched.step()`, at what lr (`paddle_fc_lr`) does `fc1.weight` train?

# %%
paddle_fc_lr = ____
ex.q3.check()

# %% [markdown]
# **4.** The `Recorder` of the first section (`rec`) recorded every step of the run in which the
# fc group's lr was set to 0 after the second epoch. At which step (`first_frozen_step`, a row
# of `rec.series("update_norm")`) is fc1's update zero for the first time?

# %%
first_frozen_step = ____
ex.q4.check()

# %% [markdown]
# **5.** Write `warmup_then_cosine(opt, warmup, total)`, which returns a scheduler for any run:
# the first step uses 1% of the optimizer's lr, the lr rises in a straight line to the full lr
# over `warmup` steps, then follows a cosine down to 0 at step `total`. The check steps it
# through runs of other lengths and learning rates.

# %%
warmup_then_cosine = ____
ex.q5.check()

# %% [markdown]
# **6.** (Not checked: experiments.) In the real training run (a Going deeper section of the
# decay), replace `LinearLR` by `CosineAnnealingLR(opt, T_max=EPOCHS)` and print the lr of each
# epoch. Accumulate gradients over 8 batches instead of
# 4: how many steps per epoch, and does the loss still fall? Add decoupled weight decay to
# `LionLite` (shrink `param.data` by `1 - lr * wd` before the sign step) and rerun the zero-gradient
# cell: the parameter should shrink by a factor, not move by a whole lr.
