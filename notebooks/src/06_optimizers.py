# %% [markdown]
# # Optimizers and parameter groups
#
# **About 30 minutes.** You will be able to:
#
# * give each group of parameters its own learning rate, inspect the groups, and prove a step
#   by hand;
# * drive two optimizers with different update rules as one, and train only part of a network;
# * set a learning-rate multiplier or a regularizer on one parameter, and say which setting wins;
# * spare biases and other 1-D parameters from weight decay;
# * explain what goes wrong when a parameter is handed to an optimizer twice.
#
# An optimizer is the part of training that changes the numbers inside a network. The simplest
# one treats every parameter alike, but real training rarely does: you may want the pretrained
# convolutions to move slowly and the new classifier quickly, no weight decay on biases, Adam
# for one part and SGD for another, or a part that does not train at all. This chapter does each
# on one small convolutional network and **proves** what happened by comparing parameter values
# before and after a step, often against a step computed by hand.

# %%
import inspect

import numpy as np
from tqdm.auto import trange      # a progress bar for the longer training runs

import dltutor as dt
from dltutor import diagnose, nn, optim
from dltutor.examples import (LeNet, accuracy, all_changed, digits, make_loader, make_net,
                              snapshot, train_epoch, unchanged)
from dltutor.nn import functional as F

np.set_printoptions(precision=4, suppress=True)
EPOCHS = 3 if dt.quick_mode() else 10      # the longer training runs; short under the tests
print("quick mode:", dt.quick_mode(), "| epochs for the longer runs:", EPOCHS)

# %% tags=["twin-torch", "twin-same-numbers"]
import os
import warnings

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
QUICK = os.environ.get("DLTUTOR_QUICK") == "1"      # the kit's quick mode, read directly
EPOCHS = 3 if QUICK else 10
print("quick mode:", QUICK, "| epochs for the longer runs:", EPOCHS)

# %% [markdown]
# ## The network and the data
#
# The data are the 1,797 handwritten digits that ship with scikit-learn: 8x8 grey images, ten
# classes; the first 1,500 train, the rest measure accuracy. The network is a small LeNet for
# 8x8 images: two convolutions, then two fully connected ("fc") layers. Chapter 07 uses it too,
# so it lives in the kit, in `dltutor.examples`:

# %%
print(inspect.getsource(LeNet))


# %% tags=["twin-torch"]
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


print(LeNet())

# %% tags=["twin-paddle"]
import logging
import warnings

import numpy as np
import paddle
from paddle import nn
from paddle.nn import functional as F
from paddle.regularizer import L1Decay, L2Decay

np.set_printoptions(precision=4, suppress=True)
logging.getLogger().setLevel(logging.WARNING)   # Paddle's INFO notes carry a timestamp


class LeNet(nn.Layer):
    """The same layers in Paddle (Conv2D, MaxPool2D; a Linear weight is stored (in, out))."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(1, 6, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2D(2)
        self.conv2 = nn.Conv2D(6, 16, kernel_size=3)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x)).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


print(LeNet())

# %% [markdown]
# Its layers are attributes named `conv1`, `conv2`, `fc1` and `fc2`, so every parameter name
# says which kind of layer it belongs to; we will pick parameters by name.

# %%
train_set, X_test, y_test = digits()
print("train", len(train_set), "| test images", X_test.shape, X_test.dtype, "| labels", y_test.dtype)

net = make_net(seed=0)        # dt.manual_seed(0), then LeNet()
for name, param in net.named_parameters():
    print(f"{name:13s} {tuple(param.shape)}")

# %% tags=["twin-torch", "twin-same-numbers"]
from dltutor.examples import digits, make_net as kit_net    # the kit's digits and start values

train_set, X_test, y_test = digits()                         # NumPy arrays, as in the kit
X_train, y_train = train_set.arrays
train_data = torch.utils.data.TensorDataset(torch.from_numpy(X_train), torch.from_numpy(y_train))
X_test, y_test = torch.from_numpy(X_test), torch.from_numpy(y_test)
print("train", len(train_data), "| test images", tuple(X_test.shape), X_test.dtype,
      "| labels", y_test.dtype)


def make_net(seed=0):
    """A LeNet holding the kit's start values for ``seed``, so that the numbers compare
    (PyTorch's own start, torch.manual_seed(seed); LeNet(), draws other random numbers)."""
    net = LeNet()
    net.load_state_dict({n: torch.from_numpy(p.numpy().copy())
                         for n, p in kit_net(seed).named_parameters()})
    return net


net = make_net(seed=0)
for name, param in net.named_parameters():
    print(f"{name:13s} {tuple(param.shape)}")

# %% [markdown]
# Eight parameter tensors: a weight and a bias per layer. `dltutor.examples` also holds the few
# helpers every experiment below repeats. The training loop is the one to know:

# %%
print(inspect.getsource(train_epoch))


# %% tags=["twin-torch"]
def train_epoch(net, opt, loader):
    """One pass over ``loader`` (zero_grad, backward, step for each batch); the mean loss."""
    total = 0.0
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


def accuracy(net):
    """The fraction of the 297 test digits that ``net`` classifies right."""
    with torch.no_grad():
        return (net(X_test).argmax(dim=1) == y_test).float().mean().item()


def snapshot(params):
    """Copies of the parameters' values as NumPy arrays."""
    return [p.detach().numpy().copy() for p in params]


print(f"the untrained net gets {accuracy(net):.3f} of the test digits right")

# %% [markdown]
# The others: `make_net(seed)` builds a fresh network from a fixed seed, `make_loader()` the
# training digits in shuffled batches of 64 (the same order every time), `accuracy(net)` the
# fraction of test digits it gets right, and `snapshot(params)` copies parameter values
# (`p.numpy()` shares memory with the parameter).

# %%
print("batches per epoch:", len(make_loader()))
assert len(make_loader()) == int(np.ceil(1500 / 64)) == 24
assert np.array_equal(make_net(0).fc2.weight.numpy(), net.fc2.weight.numpy())   # same seed


# %% tags=["twin-torch", "twin-same-numbers"]
class KitOrder(torch.utils.data.Sampler):
    """The kit's shuffle (epoch e's order from NumPy's generator seeded with (seed, e)), so that
    both see the same batches; PyTorch's own is shuffle=True, generator=torch.Generator()."""

    def __init__(self, n, seed=0):
        self.n, self.seed, self.epoch = n, seed, 0

    def __len__(self):
        return self.n

    def __iter__(self):
        order = np.random.default_rng([self.seed, self.epoch]).permutation(self.n)
        self.epoch += 1
        return iter(order.tolist())


def make_loader(seed=0):
    return torch.utils.data.DataLoader(train_data, batch_size=64,
                                       sampler=KitOrder(len(train_data), seed))


print("batches per epoch:", len(make_loader()))

# %% [markdown] tags=["claim-torch-crossentropyloss-reduction-modes"]
# ### Going deeper: the loss as a module
#
# `nn.CrossEntropyLoss`, the form PyTorch code writes, and its `reduction` setting.

# %% [markdown] tags=["claim-torch-crossentropyloss-reduction-modes"]
# The loss is the cross-entropy of chapter 01. `nn.CrossEntropyLoss()` is its module form, as
# PyTorch code writes it: a module holding one setting, `reduction`. `"mean"` (the default)
# averages the per-example losses, `"sum"` adds them, `"none"` returns them all. It computes
# exactly what `F.cross_entropy` does (the chapters use both):

# %%
loss_fn = nn.CrossEntropyLoss()
with dt.no_grad():
    logits, labels = net(dt.tensor(X_test[:8])), dt.tensor(y_test[:8])
    per_example = nn.CrossEntropyLoss(reduction="none")(logits, labels)
    print("per example:", np.round(per_example.numpy(), 3))
    print(f"mean {loss_fn(logits, labels):.4f} = F.cross_entropy {F.cross_entropy(logits, labels):.4f}")
assert np.allclose(loss_fn(logits, labels).item(), F.cross_entropy(logits, labels).item())
assert np.allclose(per_example.numpy().mean(), loss_fn(logits, labels).item(), rtol=1e-6)
assert np.allclose(nn.CrossEntropyLoss(reduction="sum")(logits, labels).item(),
                   per_example.numpy().sum(), rtol=1e-5)

# %% tags=["twin-torch", "twin-same-numbers"]
loss_fn = nn.CrossEntropyLoss()
with torch.no_grad():
    logits, labels = net(X_test[:8]), y_test[:8]
    per_example = nn.CrossEntropyLoss(reduction="none")(logits, labels)
    print("per example:", np.round(per_example.numpy(), 3))
    mean, functional = loss_fn(logits, labels), F.cross_entropy(logits, labels)
    print(f"mean {mean:.4f} = F.cross_entropy {functional:.4f}")

# %% [markdown]
# ## Different learning rates with parameter groups
#
# An optimizer can take a **list of dicts** instead of one flat list of parameters: each dict is
# a *parameter group*, with a `"params"` entry and, optionally, its own hyperparameters; what a
# group does not set comes from the optimizer's arguments.
#
# Here the convolution parameters (`"conv" in name`) form one group at the default learning
# rate 0.05, all others a second group at 0.01. `diagnose.summary` lists every parameter with
# its group and the learning rate the optimizer will really use for it.

# %%
net = make_net()
conv_params = [(name, p) for name, p in net.named_parameters() if "conv" in name]
other_params = [(name, p) for name, p in net.named_parameters() if "conv" not in name]

opt = optim.SGD([{"params": conv_params},                 # no "lr": uses the default below
                 {"params": other_params, "lr": 0.01}],   # its own lr
                lr=0.05)
diagnose.summary(net, opt)

# %% tags=["twin-torch"]
# PyTorch has no diagnose.summary: print each group's parameter names and lr yourself.
net = make_net()
conv_params = [(name, p) for name, p in net.named_parameters() if "conv" in name]
other_params = [(name, p) for name, p in net.named_parameters() if "conv" not in name]

opt = torch.optim.SGD([{"params": conv_params},                 # (name, parameter) pairs:
                       {"params": other_params, "lr": 0.01}],   # PyTorch 2.6+ keeps the names
                      lr=0.05)
for i, group in enumerate(opt.param_groups):
    for name in group["param_names"]:
        print(f"{name:13s} group {i}  lr {group['lr']}")

# %% [markdown] tags=["claim-torch-optim-groups-from-plain-lists"]
# We passed `(name, parameter)` pairs, so the optimizer knows each parameter's name (it uses
# them in messages, checkpoints and the diagnostics below). Plain lists of parameters, as in
# PyTorch, build exactly the same groups:

# %%
plain = optim.SGD([{"params": [p for _, p in conv_params]},
                   {"params": [p for _, p in other_params], "lr": 0.01}], lr=0.05)
for g_named, g_plain in zip(opt.param_groups, plain.param_groups):
    assert g_named["lr"] == g_plain["lr"]
    assert all(a is b for a, b in zip(g_named["params"], g_plain["params"]))

# %% tags=["twin-torch"]
plain = torch.optim.SGD([{"params": [p for _, p in conv_params]},
                         {"params": [p for _, p in other_params], "lr": 0.01}], lr=0.05)
for g_named, g_plain in zip(opt.param_groups, plain.param_groups):
    assert g_named["lr"] == g_plain["lr"]
    assert all(a is b for a, b in zip(g_named["params"], g_plain["params"]))
print("lrs:", [g["lr"] for g in plain.param_groups],
      "| names kept:", "param_names" in plain.param_groups[0])

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

# %% tags=["twin-torch", "twin-same-numbers"]
loader = make_loader()
xb, yb = next(iter(loader))
before = snapshot(net.parameters())
opt.zero_grad()
F.cross_entropy(net(xb), yb).backward()
opt.step()

for (name, p), old in zip(net.named_parameters(), before):
    lr_used = opt.param_groups[0 if "conv" in name else 1]["lr"]
    assert np.allclose(old - p.detach().numpy(), lr_used * p.grad.numpy(), atol=1e-7), name
    print(f"{name:13s} moved by lr x grad with lr = {lr_used}")

# %% [markdown]
# ## Inspecting param groups
#
# The groups live in `opt.param_groups`, a plain list of dicts. Each dict holds the group's
# parameters under `"params"` and **every** hyperparameter, including the ones it inherited from
# the optimizer's defaults (here `momentum`, `weight_decay`...): every group has the same keys,
# only their values differ. `print(opt)` shows them group by group, and the names we gave
# travel along in `"param_names"`.

# %%
for i, group in enumerate(opt.param_groups):
    print(f"group {i}: {len(group['params'])} parameters, lr {group['lr']}")
assert [len(g["params"]) for g in opt.param_groups] == [4, 4]
assert [g["lr"] for g in opt.param_groups] == [0.05, 0.01]
print(sorted(k for k in opt.param_groups[1] if k not in ("params", "param_names")))
print(opt)
print(opt.param_groups[0]["param_names"])
assert opt.param_groups[0]["param_names"] == ["conv1.weight", "conv1.bias",
                                              "conv2.weight", "conv2.bias"]
assert opt.param_groups[0]["momentum"] == 0.0    # inherited from SGD's default

# %% tags=["twin-torch"]
for i, group in enumerate(opt.param_groups):
    print(f"group {i}: {len(group['params'])} parameters, lr {group['lr']}")
print(sorted(k for k in opt.param_groups[1] if k not in ("params", "param_names")))
print(opt)
print(opt.param_groups[0]["param_names"])

# %% [markdown]
# ## Different optimizers for different parameters
#
# The groups of one optimizer share its update rule. To use a different *rule* per part, say SGD for the
# convolutions and Adam for the fc layers, make two optimizers. `optim.MultiOptimizer` wraps
# them so the training loop still calls one `zero_grad()` and one `step()` (it simply calls
# each optimizer in turn, and refuses a parameter that two of them hold).

# %%
net = make_net()
sgd = optim.SGD([(n, p) for n, p in net.named_parameters() if "conv" in n], lr=0.05)
adam = optim.Adam([(n, p) for n, p in net.named_parameters() if "conv" not in n], lr=0.01)
both = optim.MultiOptimizer(sgd, adam)
diagnose.summary(net, both)

# %% tags=["twin-torch"]
# PyTorch has no MultiOptimizer: make the two optimizers and call each one in the loop.
net = make_net()
sgd = torch.optim.SGD([(n, p) for n, p in net.named_parameters() if "conv" in n], lr=0.05)
adam = torch.optim.Adam([(n, p) for n, p in net.named_parameters() if "conv" not in n], lr=0.01)
optimizers = [sgd, adam]
for one in optimizers:
    for group in one.param_groups:
        print(type(one).__name__, "lr", group["lr"], group["param_names"])

# %% [markdown]
# **What Adam does.** Adam keeps two running averages for every element, of the gradient (its
# direction, like momentum's `buf`) and of its square (its size), and steps by the one over the
# square root of the other (in NumPy at the end of this section). One step shows both rules:
# SGD moves a conv parameter by `lr * gradient`, while Adam's first step moves every element by
# almost exactly its lr, 0.01, whatever the size of the gradient.

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

# %% tags=["twin-torch", "twin-same-numbers"]
loader = make_loader()
xb, yb = next(iter(loader))
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
for one in optimizers:
    one.zero_grad()
F.cross_entropy(net(xb), yb).backward()
for one in optimizers:
    one.step()

for name, p in net.named_parameters():
    delta, grad = before[name] - p.detach().numpy(), p.grad.numpy()
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

# %% tags=["twin-torch"]
# PyTorch has no MultiOptimizer: clear each one; nothing stops two sharing a parameter.
for one in optimizers:
    one.zero_grad()                           # PyTorch sets .grad to None
assert all(p.grad is None for p in net.parameters())
print("all gradients cleared:", all(p.grad is None for p in net.parameters()))
shared = torch.optim.Adam([net.fc2.bias, net.conv1.bias])      # conv1.bias is in sgd too
print("accepted: conv1.bias in two optimizers, and each would step it")

# %% [markdown]
# Training goes on with the same loop as before:

# %%
# tqdm draws a progress bar in your run; the tests' short run (quick mode) draws none, as
# its timings would change this cell's stored output from one run to the next.
for epoch in trange(EPOCHS, desc="epochs", disable=dt.quick_mode()):
    loss = train_epoch(net, both, loader)
    print(f"epoch {epoch}: loss {loss:.4f}  test accuracy {accuracy(net):.3f}")

# %% tags=["twin-torch", "twin-same-numbers"]
for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        for one in optimizers:
            one.zero_grad()
        loss.backward()
        for one in optimizers:
            one.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.4f}  test accuracy {accuracy(net):.3f}")

# %% [markdown]
# If the optimizers do *not* step at the same moments (one every batch, one every 10 batches),
# skip the wrapper and call each optimizer's `step()` and `zero_grad()` where you need them.

# %% [markdown]
# ### Going deeper: Adam's update in NumPy
#
# The formula behind "steps by the one divided by the square root of the other", and its `eps`.

# %% [markdown] tags=["claim-torch-differs-eps-zero"]
# In NumPy, at step `t`:
#
# ```python
# m = beta1 * m + (1 - beta1) * grad            # beta1 = 0.9; m and v start at 0
# v = beta2 * v + (1 - beta2) * grad ** 2       # beta2 = 0.999
# param -= lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps)
# ```
#
# The divisions by `1 - beta ** t` undo the averages' start at 0, so at `t = 1` the step is
# `lr * grad / |grad|`. `eps` keeps the division defined where a gradient has always been 0,
# which is why dltutor refuses `eps=0`: PyTorch takes it, and such an entry becomes 0/0 = NaN.

# %%
try:
    optim.Adam(net.parameters(), lr=0.01, eps=0.0)
except ValueError as err:
    eps_refusal = str(err)
assert "eps must be a number > 0" in eps_refusal    # refused; PyTorch steps to 0/0 = NaN

# %% tags=["twin-torch"]
# PyTorch takes eps=0: an entry whose gradient has always been 0 steps by 0/0 = NaN.
w = nn.Parameter(torch.tensor([1.0, 2.0]))
adam_eps0 = torch.optim.Adam([w], lr=0.01, eps=0.0)
w.grad = torch.tensor([0.5, 0.0])             # the second entry has no gradient yet
adam_eps0.step()
print(w.detach())

# %% [markdown]
# ## Training only some parameters
#
# To train only the convolutions, the first idea is to hand only them to the optimizer. That
# stops the fc layers *moving*, but backward still computes their gradients (wasted work), and
# since `opt.zero_grad()` clears only the optimizer's own parameters, those gradients pile up:

# %%
net = make_net()
opt = optim.SGD([p for n, p in net.named_parameters() if "conv" in n], lr=0.05)
xb, yb = next(iter(make_loader()))
each_pass = []        # what each backward pass alone sends to fc2.bias (a hook sees it)
conv_pass = []        # the same for conv1.bias, which the optimizer holds
handles = [net.fc2.bias.register_hook(lambda grad: each_pass.append(grad.numpy().copy())),
           net.conv1.bias.register_hook(lambda grad: conv_pass.append(grad.numpy().copy()))]
for step in range(2):
    opt.zero_grad()                               # clears the conv gradients only
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
for handle in handles:
    handle.remove()
print("one pass:     ", np.round(each_pass[0][:4], 4), "...")
print("fc2.bias.grad:", np.round(net.fc2.bias.grad.numpy()[:4], 4), "... after 2 steps")

# %% tags=["twin-torch", "twin-same-numbers"]
net = make_net()
opt = torch.optim.SGD([p for n, p in net.named_parameters() if "conv" in n], lr=0.05)
xb, yb = next(iter(make_loader()))
each_pass, conv_pass = [], []
handles = [net.fc2.bias.register_hook(lambda grad: each_pass.append(grad.numpy().copy())),
           net.conv1.bias.register_hook(lambda grad: conv_pass.append(grad.numpy().copy()))]
for step in range(2):
    opt.zero_grad()                               # clears the conv gradients only
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
for handle in handles:
    handle.remove()
print("one pass:     ", np.round(each_pass[0][:4], 4), "...")
print("fc2.bias.grad:", np.round(net.fc2.bias.grad.numpy()[:4], 4), "... after 2 steps")

# %% [markdown]
# The gradient hook (chapter 05 met them) records what each backward pass sends to `fc2.bias`.
# After two steps, `.grad` holds the **sum** of both passes: about twice one pass's gradient
# (the same batch, and the fc layers did not move), while each conv gradient is one pass's.

# %%
fc2_grad = net.fc2.bias.grad.numpy()
assert np.allclose(fc2_grad, each_pass[0] + each_pass[1], atol=1e-7)   # accumulated: the sum
assert np.allclose(fc2_grad, 2 * each_pass[0], rtol=0.05, atol=1e-4)    # about 2x one pass
assert not np.allclose(fc2_grad, each_pass[1], rtol=0.05, atol=1e-4)    # not just the last one
assert np.allclose(net.conv1.bias.grad.numpy(), conv_pass[1], atol=1e-7)   # cleared each step

# %% [markdown]
# The clean way is to switch the gradient off: `requires_grad_(False)` on the layers that must
# not train. Backward then skips them, their `.grad` stays `None`, and the optimizer (which skips
# any parameter without a gradient) leaves them alone. Giving the optimizer only the trainable
# parameters is then tidy rather than necessary. (Chapter 08 compares the ways of freezing:
# `requires_grad`, lr 0, `lr_mult = 0`, `detach`.)

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
for (name, p), old in zip(net.named_parameters(), before):
    if "conv" in name:
        assert p.grad is not None and not np.array_equal(old, p.numpy()), name
    else:
        assert p.grad is None and np.array_equal(old, p.numpy()), name

# %% tags=["twin-torch"]
net = make_net()
net.fc1.requires_grad_(False)
net.fc2.requires_grad_(False)
trainable = [(n, p) for n, p in net.named_parameters() if p.requires_grad]
opt = torch.optim.SGD(trainable, lr=0.05, momentum=0.9)
print("trainable:", [n for n, _ in trainable])

train_epoch(net, opt, make_loader())        # one epoch
for name, p in net.named_parameters():
    print(f"{name:13s}", "grad None" if p.grad is None else "has a gradient")

# %% [markdown] tags=["claim-paddle-paramattr-flat-list-lr-and-regularizer", "claim-paddle-group-overwrites-paramattr"]
# ## Optimizer settings vs parameter settings
#
# Paddle lets you attach settings to a parameter itself (its `ParamAttr`); dltutor keeps them as
# attributes of every `Parameter`. Two decide how the optimizer treats it:
#
# * `p.lr_mult`: a **multiplier**. The learning rate this parameter really gets is
#   the group's lr × `p.lr_mult` (default 1.0; 0 freezes it).
# * `p.regularizer`: an `optim.L2Decay(c)` or `optim.L1Decay(c)`. It **replaces** the optimizer's
#   (or its group's) `weight_decay` for this parameter.
#
# In Paddle these rules hold only for a **flat** parameter list: **a Paddle parameter group
# overwrites both** with the group's settings, while dltutor keeps a parameter's own settings in
# every group (the details close this section, in Going deeper).
#
# Below, the fc group has lr 0.01 and weight decay 0.01; `fc1.weight` doubles its learning rate and
# uses an L1 penalty instead of the group's L2 decay.

# %%
net = make_net()
net.fc1.weight.lr_mult = 2.0
net.fc1.weight.regularizer = optim.L1Decay(0.001)
opt = optim.SGD([{"params": [(n, p) for n, p in net.named_parameters() if "conv" in n]},
                 {"params": [(n, p) for n, p in net.named_parameters() if "conv" not in n],
                  "lr": 0.01}], lr=0.05, weight_decay=0.01)
print(diagnose.explain_lr(opt, "fc1.weight"))
diagnose.explain_lr(opt, "fc1.bias")

# %% tags=["twin-torch"]
# PyTorch has no lr_mult or regularizer: fc1.weight gets its own group, its L1 goes in the loss.
net = make_net()
named = dict(net.named_parameters())
opt = torch.optim.SGD([
    {"params": [(n, p) for n, p in named.items() if "conv" in n]},
    {"params": [("fc1.weight", named["fc1.weight"])], "lr": 0.01 * 2.0, "weight_decay": 0.0},
    {"params": [(n, p) for n, p in named.items() if "fc" in n and n != "fc1.weight"], "lr": 0.01},
], lr=0.05, weight_decay=0.01)
for i, group in enumerate(opt.param_groups):
    print(f"group {i}: lr {group['lr']}, weight_decay {group['weight_decay']},",
          group["param_names"])

# %% tags=["twin-paddle"]
# Paddle: a group overwrites ParamAttr, so fc1.weight gets its own group (0.4 x 0.05 = 0.02).
pnet = LeNet()
pnamed = dict(pnet.named_parameters())
popt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=[
    {"params": [p for n, p in pnamed.items() if "conv" in n]},
    {"params": [pnamed["fc1.weight"]], "learning_rate": 0.4, "weight_decay": L1Decay(0.001)},
    {"params": [p for n, p in pnamed.items() if "fc" in n and n != "fc1.weight"],
     "learning_rate": 0.2},                                  # a scale: 0.2 x 0.05 = 0.01
])
for name in ("conv1.weight", "fc1.weight", "fc1.bias"):
    p = pnamed[name]
    print(f"{name:13s} lr 0.05 x {p.optimize_attr['learning_rate']}, regularizer {p.regularizer}")

# %% [markdown]
# Now the proof, by hand. With SGD the regularizer's gradient is added to the loss gradient,
# then the step is taken with the effective lr:
#
# * `fc1.weight`: `w_new = w - (0.01 * 2) * (g + 0.001 * sign(w))`   (its own L1; no L2)
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
assert np.allclose(net.fc1.weight.numpy(), w_expected, atol=1e-7)
assert np.allclose(net.fc1.bias.numpy(), b_expected, atol=1e-7)
wrong = w_old - 0.02 * (g_w + 0.001 * np.sign(w_old) + 0.01 * w_old)   # if both decays applied
assert not np.allclose(net.fc1.weight.numpy(), wrong, atol=1e-7)

# %% tags=["twin-torch"]
xb, yb = next(iter(make_loader()))
w_old, b_old = (named[n].detach().numpy().copy() for n in ("fc1.weight", "fc1.bias"))
loss = F.cross_entropy(net(xb), yb)
g_w, g_b = (g.numpy() for g in torch.autograd.grad(loss, [named["fc1.weight"], named["fc1.bias"]],
                                                  retain_graph=True))   # the loss's own gradients
opt.zero_grad()
(loss + 0.001 * named["fc1.weight"].abs().sum()).backward()     # fc1.weight's L1, in the loss
opt.step()

w_expected = w_old - (0.01 * 2.0) * (g_w + 0.001 * np.sign(w_old))
b_expected = b_old - 0.01 * (g_b + 0.01 * b_old)
for name, expected in (("fc1.weight", w_expected), ("fc1.bias", b_expected)):
    took = np.allclose(named[name].detach().numpy(), expected, atol=1e-7)
    print(f"{name:10s} takes the hand step: {took}")

# %% tags=["twin-paddle"]
from dltutor.examples import make_loader

xb, yb = (paddle.to_tensor(t.numpy()) for t in next(iter(make_loader())))   # the kit's first batch
w_old, b_old = pnamed["fc1.weight"].numpy().copy(), pnamed["fc1.bias"].numpy().copy()
popt.clear_grad()
F.cross_entropy(pnet(xb), yb).backward()
g_w, g_b = pnamed["fc1.weight"].grad.numpy().copy(), pnamed["fc1.bias"].grad.numpy().copy()
popt.step()

w_expected = w_old - (0.01 * 2.0) * (g_w + 0.001 * np.sign(w_old))
b_expected = b_old - 0.01 * (g_b + 0.01 * b_old)
for name, expected in (("fc1.weight", w_expected), ("fc1.bias", b_expected)):
    took = np.allclose(pnamed[name].numpy(), expected, atol=1e-7)
    print(f"{name:10s} takes the hand step: {took}")

# %% [markdown] tags=["claim-paddle-paramattr-weight-attr", "claim-paddle-group-overwrites-paramattr", "claim-torch-no-lr-mult-own-group"]
# ### Going deeper: the same settings in Paddle and in PyTorch
#
# Paddle's `ParamAttr`, how a Paddle group overwrites it (Paddle 3.3), and PyTorch's group of one.

# %% [markdown] tags=["claim-paddle-paramattr-weight-attr"]
# The same two settings in Paddle's spelling, given when the layer is made:
# `weight_attr=nn.ParamAttr(learning_rate=2.0, regularizer=optim.L1Decay(0.001))`. dltutor's
# `ParamAttr` is only a way to set `p.lr_mult`, `p.regularizer`, `p.need_clip` and
# `requires_grad` (Paddle's `trainable`) at construction; `bias_attr=False` leaves the bias out,
# as in Paddle.

# %%
fc_paddle_style = nn.Linear(4, 2, bias_attr=False, weight_attr=nn.ParamAttr(
    learning_rate=2.0, regularizer=optim.L1Decay(0.001)))
print("lr_mult:", fc_paddle_style.weight.lr_mult, "| regularizer:",
      fc_paddle_style.weight.regularizer, "| bias:", fc_paddle_style.bias)
assert fc_paddle_style.weight.lr_mult == 2.0 and fc_paddle_style.bias is None
assert [name for name, _ in fc_paddle_style.named_parameters()] == ["weight"]

# %% tags=["twin-torch"]
# PyTorch has no ParamAttr: only bias=False; lr and penalty go to the optimizer and the loss.
fc_torch = nn.Linear(4, 2, bias=False)
print("bias:", fc_torch.bias, "| parameters:", [name for name, _ in fc_torch.named_parameters()])

# %% tags=["twin-paddle", "twin-same-numbers"]
fc_paddle_style = nn.Linear(4, 2, bias_attr=False, weight_attr=paddle.ParamAttr(
    learning_rate=2.0, regularizer=L1Decay(0.001)))
print("lr_mult:", fc_paddle_style.weight.optimize_attr["learning_rate"], "| regularizer:",
      fc_paddle_style.weight.regularizer, "| bias:", fc_paddle_style.bias)

# %% [markdown] tags=["claim-paddle-paramattr-flat-list-lr-and-regularizer", "claim-paddle-group-overwrites-paramattr", "claim-paddle-group-of-its-own-keeps-settings"]
# In Paddle these rules hold only for a **flat** parameter list (`parameters=model.parameters()`):
# there a parameter trains at the optimizer's lr x its `ParamAttr` learning rate, and a
# `ParamAttr` regularizer replaces the optimizer's `weight_decay`. **A Paddle parameter group
# overwrites both**: when Paddle 3.3 adds a group, it sets each parameter's rate to the group's
# `learning_rate` (1.0 if the group gives none) and its regularizer to the group's weight decay
# (the optimizer's if the group gives none). AdamW is the exception for the regularizer: its
# `weight_decay` is decoupled, so a `ParamAttr` regularizer neither replaces it nor is
# overwritten by it; both apply.
#
# **Paddle steps `fc1.weight` differently here.** Build the same thing in Paddle 3.3: `fc1.weight`
# created with `ParamAttr(learning_rate=2.0, regularizer=L1Decay(0.001))`, the fc layers in a
# group with `"learning_rate": 0.2` (0.2 x 0.05 = 0.01), `weight_decay=0.01` on the optimizer.
# Adding the group overwrites both of the weight's settings (`optimize_attr` becomes
# `{'learning_rate': 0.2}`, the regularizer `L2Decay(0.01)`), so Paddle moves it exactly like
# `fc1.bias`: `w_new = w - 0.01 * (g + 0.01 * w)`, not the step above. To give one parameter
# settings of its own in Paddle, put it in a group of its own:
# `{"params": [fc1.weight], "learning_rate": 0.4, "weight_decay": L1Decay(0.001)}` (a group's
# `weight_decay` may be a regularizer object, except in AdamW, which takes a number). `tests/frameworks/test_ch06_optimizers.py` checks
# both steps in Paddle.

# %% [markdown] tags=["claim-torch-no-lr-mult-own-group"]
# **PyTorch has no `lr_mult`** (and no per-parameter regularizer). There, a parameter with its
# own learning rate gets a group of its own: `{"params": [fc1.weight], "lr": 0.01 * 2}`. Both
# ways take the same step; two networks from the same seed, one step on the same batch:

# %%
with_mult, with_group = make_net(), make_net()
with_mult.fc1.weight.lr_mult = 2.0
by_mult = optim.SGD([{"params": [p for n, p in with_mult.named_parameters() if "conv" in n]},
                     {"params": [p for n, p in with_mult.named_parameters() if "conv" not in n],
                      "lr": 0.01}], lr=0.05)
by_group = optim.SGD([{"params": [p for n, p in with_group.named_parameters() if "conv" in n]},
                      {"params": [with_group.fc1.weight], "lr": 0.01 * 2.0},     # PyTorch's way
                      {"params": [p for n, p in with_group.named_parameters()
                                  if "conv" not in n and n != "fc1.weight"], "lr": 0.01}], lr=0.05)
for model, opt_ in ((with_mult, by_mult), (with_group, by_group)):
    opt_.zero_grad()
    F.cross_entropy(model(xb), yb).backward()
    opt_.step()
same = all(np.allclose(a.numpy(), b.numpy(), atol=1e-7)
           for a, b in zip(with_mult.parameters(), with_group.parameters()))
print("the same parameters after one step:", same)
assert same and not np.allclose(with_mult.fc1.weight.numpy(), make_net().fc1.weight.numpy())

# %% tags=["twin-torch"]
# PyTorch has no lr_mult: a group of its own is the way; check each step is lr x grad.
with_group = make_net()
by_group = torch.optim.SGD([
    {"params": [p for n, p in with_group.named_parameters() if "conv" in n]},
    {"params": [with_group.fc1.weight], "lr": 0.01 * 2.0},                 # PyTorch's way
    {"params": [p for n, p in with_group.named_parameters()
                if "conv" not in n and n != "fc1.weight"], "lr": 0.01}], lr=0.05)
before = snapshot(with_group.parameters())
by_group.zero_grad()
F.cross_entropy(with_group(xb), yb).backward()
by_group.step()
lr_of = lambda n: 0.05 if "conv" in n else 0.02 if n == "fc1.weight" else 0.01
same = all(np.allclose(old - p.detach().numpy(), lr_of(n) * p.grad.numpy(), atol=1e-7)
           for (n, p), old in zip(with_group.named_parameters(), before))
print("every parameter moved by its lr x grad:", same)

# %% tags=["twin-paddle"]
# Paddle: ParamAttr's settings hold in a flat list; adding the layer in a group overwrites them.
make = lambda: nn.Linear(4, 2, weight_attr=paddle.ParamAttr(learning_rate=2.0,
                                                            regularizer=L1Decay(0.001)))
flat, grouped = make(), make()
paddle.optimizer.SGD(learning_rate=0.01, weight_decay=0.01, parameters=flat.parameters())
paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01,
                     parameters=[{"params": grouped.parameters(), "learning_rate": 0.2}])
for how, layer in (("flat list:", flat), ("in a group:", grouped)):
    print(how, layer.weight.optimize_attr, "|", layer.weight.regularizer)

# %% [markdown] tags=["claim-paddle-zero-l2-regularizer-turns-decay-off"]
# ## Different weight decay for different parameters
#
# A common recipe: weight decay 0.01 for the weights, none for the biases (a bias only shifts a
# unit's output; shrinking it toward zero does not make the model simpler). Three ways to say
# so follow (a fourth, Paddle's, closes the section).
#
# **1. Two groups**, built from the names: biases end in `"bias"`.

# %%
net = make_net()
decay = [(n, p) for n, p in net.named_parameters() if not n.endswith("bias")]
no_decay = [(n, p) for n, p in net.named_parameters() if n.endswith("bias")]
opt = optim.SGD([{"params": decay, "weight_decay": 0.01},
                 {"params": no_decay, "weight_decay": 0.0}], lr=0.05)
print([(len(g["params"]), g["weight_decay"]) for g in opt.param_groups])

# %% tags=["twin-torch", "twin-same-numbers"]
net = make_net()
decay = [(n, p) for n, p in net.named_parameters() if not n.endswith("bias")]
no_decay = [(n, p) for n, p in net.named_parameters() if n.endswith("bias")]
opt = torch.optim.SGD([{"params": decay, "weight_decay": 0.01},
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


# %% tags=["twin-torch", "twin-same-numbers"]
def zero_grad_step(opt, net):
    """One step with all gradients set to zero: only weight decay moves parameters."""
    for p in net.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()


before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)
for name, p in net.named_parameters():
    if name.endswith("bias"):
        assert np.array_equal(p.detach().numpy(), before[name]), name
    else:
        assert np.allclose(p.detach().numpy(), before[name] * (1 - 0.05 * 0.01), atol=1e-8), name
print("weights shrank by the factor", 1 - 0.05 * 0.01, "; biases unchanged")

# %% [markdown] tags=["claim-paddle-adamw-apply-decay-param-fun"]
# **2. AdamW with `apply_decay_param_fun`** (Paddle's idea). AdamW's decay is *decoupled*: before
# its Adam step it shrinks a parameter directly, `p *= 1 - lr * weight_decay`. The function you
# pass is called with each parameter's name and says whether that parameter decays, so one
# group suffices. It needs names: pass `named_parameters()`.

# %%
net = make_net()
opt = optim.AdamW(net.named_parameters(), lr=0.01, weight_decay=0.01,
                  apply_decay_param_fun=lambda name: not name.endswith("bias"))
print({name: opt.decay_of(name).decoupled > 0 for name, _ in net.named_parameters()})
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)            # Adam's own step is 0 for a zero gradient
for name, p in net.named_parameters():
    if name.endswith("bias"):
        assert np.array_equal(p.numpy(), before[name]), name
    else:
        assert np.allclose(p.numpy(), before[name] * (1 - 0.01 * 0.01), atol=1e-8), name
diagnose.explain_lr(opt, "fc2.bias")

# %% tags=["twin-torch"]
# PyTorch's AdamW has no apply_decay_param_fun: two groups, weight_decay 0.0 for the biases.
net = make_net()
decay = [(n, p) for n, p in net.named_parameters() if not n.endswith("bias")]
no_decay = [(n, p) for n, p in net.named_parameters() if n.endswith("bias")]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                         {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
decays = {n: group["weight_decay"] > 0 for group in opt.param_groups for n in group["param_names"]}
print({n: decays[n] for n, _ in net.named_parameters()})
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)            # Adam's own step is 0 for a zero gradient
for name, p in net.named_parameters():
    shrink = 1.0 if name.endswith("bias") else 1 - 0.01 * 0.01
    assert np.allclose(p.detach().numpy(), before[name] * shrink, atol=1e-8), name

# %% tags=["twin-paddle"]
# Paddle calls the function with each parameter's generated name, so no name ends with "bias".
with paddle.utils.unique_name.guard():             # the names a fresh Paddle process gives
    pnet = LeNet()
seen = {}


def by_suffix(name):
    seen[name] = not name.endswith("bias")
    return seen[name]


popt = paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01, parameters=pnet.parameters(),
                              apply_decay_param_fun=by_suffix)
for p in pnet.parameters():
    p.grad = paddle.zeros_like(p)   # a zero gradient: only the decay can move anything
popt.step()
print(seen)

# %% [markdown] tags=["claim-paddle-generated-param-names", "claim-paddle-adamw-apply-decay-param-fun", "claim-paddle-adamw-decay-by-name-set"]
# **In Paddle the function sees other names.** Paddle's AdamW calls
# `apply_decay_param_fun(param.name)`, and a Paddle parameter's `.name` is the name Paddle
# *generated* when it created it: `conv2d_0.w_0`, ..., `linear_1.b_0` (layer type, a counter,
# then `w` or `b`), not `fc2.bias`. So the function above, copied to Paddle, returns True for
# every parameter and **Paddle decays the biases too**, with no error. The portable fix decides
# by the structured name once and hands Paddle the set of names it will see: `decay = {p.name
# for n, p in model.named_parameters() if not n.endswith("bias")}`,
# `apply_decay_param_fun=lambda name: name in decay`. Below, the names a fresh Paddle process
# gives our LeNet, the function's answers, and the fix:

# %%
paddle_generated = {"conv1.weight": "conv2d_0.w_0", "conv1.bias": "conv2d_0.b_0",
                    "conv2.weight": "conv2d_1.w_0", "conv2.bias": "conv2d_1.b_0",
                    "fc1.weight": "linear_0.w_0", "fc1.bias": "linear_0.b_0",
                    "fc2.weight": "linear_1.w_0", "fc2.bias": "linear_1.b_0"}
by_suffix = lambda name: not name.endswith("bias")          # the function above
print({paddle_name: by_suffix(paddle_name) for paddle_name in paddle_generated.values()})
decay_names = {paddle_generated[n] for n, _ in net.named_parameters() if not n.endswith("bias")}
by_set = lambda name: name in decay_names
assert all(by_suffix(paddle_name) for paddle_name in paddle_generated.values())   # decays all
assert [by_set(paddle_generated[n]) for n, _ in net.named_parameters()] == \
       [opt.decay_of(n).decoupled > 0 for n, _ in net.named_parameters()]  # agrees with dltutor
print(sorted(decay_names))

# %% tags=["twin-paddle"]
paddle_generated = {n: p.name for n, p in pnet.named_parameters()}
print({paddle_name: by_suffix(paddle_name) for paddle_name in paddle_generated.values()})
decay_names = {paddle_generated[n] for n in paddle_generated if not n.endswith("bias")}
popt = paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01, parameters=pnet.parameters(),
                              apply_decay_param_fun=lambda name: name in decay_names)
for n, p in pnet.named_parameters():
    if n.endswith("bias"):                         # Paddle starts biases at 0: make decay visible
        p.set_value(np.full(p.shape, 0.5, dtype="float32"))
before = {n: p.numpy().copy() for n, p in pnet.named_parameters()}
for p in pnet.parameters():
    p.grad = paddle.zeros_like(p)
popt.step()
print("decayed:", [n for n, p in pnet.named_parameters()
                   if not np.array_equal(p.numpy(), before[n])])
print(sorted(decay_names))

# %% [markdown] tags=["claim-torch-no-decay-for-1d-params"]
# **3. No decay for any 1-D parameter.** A normalization layer's weight (its learned scale) and
# bias are vectors too, and pulling a scale toward 0 works against the normalization. So the
# training code of transformers and ResNets decides by shape, not by name: a parameter with
# fewer than two dimensions gets no decay (in PyTorch, `p.dim() < 2`; here `p.ndim < 2`). On a
# network with a `LayerNorm`:

# %%
dt.manual_seed(0)
normed = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 4))
no_decay = [(n, p) for n, p in normed.named_parameters() if p.ndim < 2]
decay = [(n, p) for n, p in normed.named_parameters() if p.ndim >= 2]
opt = optim.AdamW([{"params": decay, "weight_decay": 0.05},
                   {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
print("no decay:", [n for n, _ in no_decay])
before = dict(zip([n for n, _ in normed.named_parameters()], snapshot(normed.parameters())))
zero_grad_step(opt, normed)          # only the decay can move anything
for name, p in normed.named_parameters():
    shrink = 1.0 if p.ndim < 2 else 1 - 0.01 * 0.05
    assert np.allclose(p.numpy(), before[name] * shrink, atol=1e-8), name
assert [n for n, _ in no_decay] == ["0.bias", "1.weight", "1.bias", "3.bias"]
assert opt.decay_of("1.weight").decoupled == 0 and opt.decay_of("3.weight").decoupled == 0.05
diagnose.explain_lr(opt, "1.weight")

# %% tags=["twin-torch"]
torch.manual_seed(0)
normed = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 4))
no_decay = [(n, p) for n, p in normed.named_parameters() if p.dim() < 2]
decay = [(n, p) for n, p in normed.named_parameters() if p.dim() >= 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
print("no decay:", [n for n, _ in no_decay])
before = dict(zip([n for n, _ in normed.named_parameters()], snapshot(normed.parameters())))
zero_grad_step(opt, normed)          # only the decay can move anything
for name, p in normed.named_parameters():
    shrink = 1.0 if p.dim() < 2 else 1 - 0.01 * 0.05
    assert np.allclose(p.detach().numpy(), before[name] * shrink, atol=1e-8), name
print("decayed by 0.05:",
      [n for group in opt.param_groups if group["weight_decay"] for n in group["param_names"]])

# %% [markdown] tags=["claim-paddle-zero-l2-regularizer-turns-decay-off"]
# ### Going deeper: a fourth way, a regularizer on each bias
#
# Paddle's other answer: a zero-strength regularizer on the parameters that must not decay.

# %% [markdown] tags=["claim-paddle-zero-l2-regularizer-turns-decay-off", "claim-paddle-group-overwrites-paramattr"]
# A parameter's own regularizer replaces the optimizer's weight decay (in Paddle: in a flat
# parameter list, and not in AdamW, whose decay is decoupled; a Paddle group would overwrite
# it), so a zero-strength `L2Decay(0.0)` on each bias switches the decay off for it while the
# optimizer keeps `weight_decay=0.01` for the rest:

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

# %% tags=["twin-torch"]
# PyTorch has no regularizer on a parameter: a group with weight_decay=0.0 spares the biases.
net = make_net()
biases = [(n, p) for n, p in net.named_parameters() if n.endswith("bias")]
weights = [(n, p) for n, p in net.named_parameters() if not n.endswith("bias")]
opt = torch.optim.SGD([{"params": weights}, {"params": biases, "weight_decay": 0.0}],
                      lr=0.05, weight_decay=0.01)
before = dict(zip([n for n, _ in net.named_parameters()], snapshot(net.parameters())))
zero_grad_step(opt, net)
for name, p in net.named_parameters():
    expected = before[name] if name.endswith("bias") else before[name] * (1 - 0.05 * 0.01)
    assert np.allclose(p.detach().numpy(), expected, atol=1e-8), name
print("weights shrank by the factor", 1 - 0.05 * 0.01, "; biases unchanged")

# %% tags=["twin-paddle"]
# Paddle: the same attribute (ParamAttr sets it when a layer is made); in a flat list only.
pnet = LeNet()
for name, p in pnet.named_parameters():
    if name.endswith("bias"):
        p.regularizer = L2Decay(0.0)      # what ParamAttr(regularizer=L2Decay(0.0)) sets
        p.set_value(np.full(p.shape, 0.5, dtype="float32"))   # Paddle starts biases at 0
popt = paddle.optimizer.SGD(learning_rate=0.05, weight_decay=0.01, parameters=pnet.parameters())
before = {n: p.numpy().copy() for n, p in pnet.named_parameters()}
for p in pnet.parameters():
    p.grad = paddle.zeros_like(p)
popt.step()
for name, p in pnet.named_parameters():
    expected = before[name] if name.endswith("bias") else before[name] * (1 - 0.05 * 0.01)
    assert np.allclose(p.numpy(), expected, atol=1e-8), name
print("weights shrank by the factor", 1 - 0.05 * 0.01,
      "; biases unchanged, regularizer", pnet.conv1.bias.regularizer)

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
assert "'fc2.weight' appears twice" in message

# %% tags=["twin-torch"]
net = make_net()
try:
    torch.optim.SGD([{"params": net.named_parameters()},
                     {"params": net.fc2.named_parameters(prefix="fc2"), "lr": 0.001}], lr=0.05)
except ValueError as err:
    print(err)

# %% tags=["twin-paddle"]
pnet = LeNet()
try:
    paddle.optimizer.SGD(learning_rate=0.05, parameters=[
        {"params": pnet.parameters()}, {"params": pnet.fc2.parameters(), "learning_rate": 0.02}])
except ValueError as err:
    print(err)

# %% [markdown]
# The same holds for one group that lists a parameter twice:

# %% tags=["raises-exception"]
optim.SGD([net.conv1.weight, net.conv1.bias, net.conv1.weight], lr=0.05)

# %% tags=["twin-torch"]
# PyTorch does not refuse a parameter twice in one group: it warns, then updates it twice per step.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.optim.SGD([net.conv1.weight, net.conv1.bias, net.conv1.weight], lr=0.05)
print(f"{caught[0].category.__name__}: {caught[0].message}")

# %% tags=["twin-paddle"]
# Paddle does not check a parameter twice in one group: no error, no warning.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    paddle.optimizer.SGD(learning_rate=0.05,
                         parameters=[pnet.conv1.weight, pnet.conv1.bias, pnet.conv1.weight])
print("accepted, with", len(caught), "warnings")

# %% [markdown]
# A parameter without a name is called by its place in the list, counting from 0: `#2` is the
# second `conv1.weight`. The fix: leave the parameters of the special group out of the general
# one. Compare objects (with `id`), not values:

# %%
special = {id(p) for p in net.fc2.parameters()}
opt = optim.SGD([{"params": [(n, p) for n, p in net.named_parameters() if id(p) not in special]},
                 {"params": net.fc2.named_parameters(prefix="fc2"), "lr": 0.001}], lr=0.05)
print([(len(g["params"]), g["lr"]) for g in opt.param_groups])
assert [len(g["params"]) for g in opt.param_groups] == [6, 2]

# %% tags=["twin-torch", "twin-same-numbers"]
special = {id(p) for p in net.fc2.parameters()}
rest = [(n, p) for n, p in net.named_parameters() if id(p) not in special]
opt = torch.optim.SGD([{"params": rest},
                       {"params": net.fc2.named_parameters(prefix="fc2"), "lr": 0.001}], lr=0.05)
print([(len(g["params"]), g["lr"]) for g in opt.param_groups])

# %% [markdown] tags=["claim-torch-duplicate-in-one-group-warns-updates-twice", "claim-paddle-duplicate-in-one-group-unchecked", "claim-mge-duplicate-in-one-group-momentum-assertionerror", "claim-mge-duplicate-in-one-group-plain-sgd-twice"]
# ### Going deeper: a duplicate in PyTorch, Paddle and MegEngine
#
# What the three frameworks do with a parameter listed twice, measured, with a model of the loop.

# %% [markdown] tags=["claim-torch-duplicate-in-two-groups-valueerror", "claim-torch-duplicate-in-one-group-warns-updates-twice"]
# **PyTorch is more lenient.** PyTorch 2.13 refuses a parameter in two groups (`ValueError`:
# "some parameters appear in more than one parameter group"), but a parameter listed twice
# *within one group* only triggers a `UserWarning` ("optimizer contains a parameter group with
# duplicate parameters; in future, this will cause an error"), and then `step()` walks the list
# and updates that parameter **twice** per step. Measured in PyTorch 2.13
# (`tests/frameworks/test_ch06_optimizers.py`): one weight `w = 1.0` whose gradient is always
# `g = 0.5`, SGD with lr 0.1, two steps. How far `w` moves in each step:
#
# | momentum | `w` listed once | `w` listed twice |
# | --- | --- | --- |
# | 0 | 0.05, 0.05 | 0.1, 0.1 |
# | 0.9 | 0.05, 0.095 | 0.1, 0.2305 |
#
# *Why* those numbers? The function below is a NumPy model of the loop of PyTorch's SGD (its
# plain for-loop version, the default for tensors on the CPU): it first collects each list
# entry's momentum buffer from the state, then walks the list updating each entry in place,
# then stores the buffers back. It is not PyTorch; the cell checks that it gives the measured
# numbers.

# %%
def torch_like_sgd_step(params, grads, state, lr, momentum=0.0):
    """A NumPy model of one step of PyTorch's SGD over a group's list; state keyed by object."""
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


measured_in_torch = {0.0: ([0.05, 0.05], [0.1, 0.1]),        # PyTorch 2.13: (once, twice)
                     0.9: ([0.05, 0.095], [0.1, 0.2305])}
for momentum in (0.0, 0.9):
    w = np.array([1.0])
    once = two_steps([w], momentum)
    w = np.array([1.0])
    twice = two_steps([w, w], momentum)
    print(f"momentum {momentum}: moves per step, listed once {once}, listed twice {twice}")
    assert (once, twice) == measured_in_torch[momentum]      # the model gives PyTorch's numbers

# %% tags=["twin-torch", "twin-same-numbers"]
# The real PyTorch instead of a model of its loop: w = 1.0, gradient 0.5, SGD with lr 0.1.
def two_steps(params_list, momentum):
    w = params_list[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # the duplicate warning, seen above
        opt = torch.optim.SGD(params_list, lr=0.1, momentum=momentum)
    moves = []
    for _ in range(2):
        old = w.item()
        opt.zero_grad()
        (w * 0.5).sum().backward()
        opt.step()
        moves.append(round(old - w.item(), 4))
    return moves


for momentum in (0.0, 0.9):
    once = two_steps([nn.Parameter(torch.tensor([1.0]))], momentum)
    w = nn.Parameter(torch.tensor([1.0]))
    twice = two_steps([w, w], momentum)
    print(f"momentum {momentum}: moves per step, listed once {once}, listed twice {twice}")

# %% tags=["twin-paddle"]
# Paddle, plain SGD only (the chapter measured no momentum there): w listed twice moves twice.
def two_steps(params_list):
    w = params_list[0]
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=params_list)
    moves = []
    for _ in range(2):
        old = float(w.numpy()[0])
        opt.clear_grad()
        (w * 0.5).sum().backward()
        opt.step()
        moves.append(round(old - float(w.numpy()[0]), 4))
    return moves


one = lambda: paddle.create_parameter([1], "float32",
                                      default_initializer=nn.initializer.Constant(1.0))
once = two_steps([one()])
w = one()
twice = two_steps([w, w])                 # no error, no warning
print(f"momentum 0.0: moves per step, listed once {once}, listed twice {twice}")

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

# %% [markdown] tags=["claim-torch-duplicate-in-one-group-warns-updates-twice", "claim-paddle-duplicate-in-two-groups-valueerror", "claim-paddle-duplicate-in-one-group-unchecked", "claim-mge-duplicate-in-two-groups-assertionerror", "claim-mge-duplicate-in-one-group-momentum-assertionerror", "claim-mge-duplicate-in-one-group-plain-sgd-twice"]
# In PyTorch, with plain SGD the duplicate doubles that parameter's learning rate; with
# momentum it is worse and keeps changing (the buffer is pushed twice per step). Nothing
# crashes: training just behaves oddly, which is why dltutor stops you up front. (A *tied*
# parameter, one object used in two layers, is not a duplicate: `parameters()` lists it once.
# See chapter 05.)
#
# Paddle and MegEngine refuse a parameter in **two groups** with the same words, "some
# parameters appear in more than one parameter group" (Paddle 3.3 raises `ValueError`,
# MegEngine an `AssertionError`). Neither checks a group that lists a parameter twice, and
# then they part ways:
#
# * Paddle 3.3 says nothing (no error, no warning) and updates the parameter once per entry:
#   with plain SGD, `w` above moves 0.1 per step, as in PyTorch.
# * MegEngine (source of v1.13.4, `optimizer/sgd.py` and `optimizer/optimizer.py`) creates the
#   optimizer state once per list entry. With momentum, `SGD._create_state` adds the same
#   parameter's momentum buffer twice and `Optimizer._add_state`'s `assert state_name not in
#   state_dict` stops the constructor with a bare `AssertionError` (no message). Plain SGD keeps
#   no state, gets through, and updates the parameter twice per step.

# %% [markdown] tags=["claim-torch-names-06", "claim-paddle-names-06", "claim-mge-names-06", "claim-paddle-group-lr-is-a-scale", "claim-mge-optim-group-own-lr", "claim-torch-no-lr-mult-own-group", "claim-torch-weight-decay-two-groups", "claim-paddle-paramattr-flat-list-lr-and-regularizer", "claim-paddle-group-overwrites-paramattr", "claim-paddle-generated-param-names", "claim-torch-duplicate-in-two-groups-valueerror", "claim-paddle-duplicate-in-two-groups-valueerror", "claim-mge-duplicate-in-two-groups-assertionerror", "claim-torch-duplicate-in-one-group-warns-updates-twice", "claim-paddle-duplicate-in-one-group-unchecked", "claim-mge-duplicate-in-one-group-momentum-assertionerror", "claim-mge-duplicate-in-one-group-plain-sgd-twice"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | parameter groups | `optim.SGD([{"params": a}, {"params": b, "lr": 0.01}], lr=0.05)` | same | `parameters=[{"params": a}, {"params": b, "learning_rate": 0.2}]` (a *scale* of the optimizer's lr; chapter 07) | same as dltutor |
# | list the groups | `opt.param_groups` | `opt.param_groups` | `opt._param_groups` | `opt.param_groups` |
# | add a group later | `opt.add_param_group(group)` | `opt.add_param_group(group)` | `opt._add_param_group(group)` | `opt.add_param_group(group)`, then `opt._create_state(group)` when the optimizer keeps state (momentum, Adam) |
# | clear gradients | `opt.zero_grad()` | `opt.zero_grad()` | `opt.clear_grad()` | `opt.clear_grad()` |
# | several optimizers as one | `optim.MultiOptimizer(sgd, adam)` | — (call each) | — (call each) | — (call each) |
# | train only some parameters | `layer.requires_grad_(False)` | `layer.requires_grad_(False)` | `param.stop_gradient = True` | attach only those to `GradManager` and the optimizer |
# | per-parameter lr multiplier | `p.lr_mult = 2.0` | — | `ParamAttr(learning_rate=2.0)` (flat list only: a group overwrites it with its `learning_rate`) | — |
# | per-parameter regularizer | `p.regularizer = optim.L2Decay(c)` (replaces the optimizer's) | — | `ParamAttr(regularizer=L2Decay(c))` (replaces the optimizer's in a flat list; a group overwrites it with the group's decay) | — |
# | decay chosen by name | `AdamW(..., apply_decay_param_fun=f)`, `f("fc2.bias")` | — (use two groups) | `AdamW(..., apply_decay_param_fun=f)`, `f("linear_1.b_0")`: the generated name | — (use two groups) |
# | a parameter in two groups | `ValueError` naming it | `ValueError` | `ValueError` | `AssertionError` |
# | a parameter twice in one group | `ValueError` naming it | a warning, then updated twice per step | not checked: updated twice per step | not checked: `AssertionError` when the optimizer keeps state (momentum); plain SGD updates it twice |

# %% [markdown] tags=["claim-paddle-group-overwrites-paramattr", "claim-paddle-generated-param-names", "claim-torch-duplicate-in-one-group-warns-updates-twice", "claim-paddle-duplicate-in-one-group-unchecked"]
# ## Summary
#
# **In two lines:** an optimizer's arguments are defaults that a parameter group overrides, and a
# parameter's own `lr_mult` and `regularizer` refine its group's settings. Each parameter belongs to
# exactly one group of one optimizer.
#
# * A **parameter group** is a dict `{"params": ..., "lr": ..., ...}`; whatever a group does not
#   set comes from the optimizer's arguments. `opt.param_groups` is the live list of them.
# * Different update rules for different parts: several optimizers, driven together by
#   `MultiOptimizer`.
# * To train only part of a network, turn the gradient off (`requires_grad_(False)`): the rest
#   keeps `.grad` `None` and is skipped. Leaving parameters out of the optimizer only stops them
#   moving; their gradients pile up.
# * A parameter's **`lr_mult`** multiplies its group's lr; its **`regularizer`** replaces the
#   optimizer's weight decay. Paddle's `ParamAttr` does the same in a flat parameter list only:
#   a Paddle group overwrites both.
# * Sparing the biases: two groups or AdamW's `apply_decay_param_fun` (in Paddle it sees
#   generated names); the usual recipe spares every 1-D parameter (`p.ndim < 2`).
# * A parameter may be in an optimizer only once; dltutor raises, while PyTorch (after a
#   warning) and Paddle update a parameter listed twice in one group twice per step.
#
# Chapter 07 changes learning rates while the network trains.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("06")

# %% [markdown]
# **1.** On a fresh `make_net()`, set `net.conv1.weight.lr_mult = 0` and take one SGD step (lr
# 0.05) on the first batch of `make_loader()`. How far did `conv1.weight` move (`moved`: the
# largest change of any element)? Does it still get a gradient (`grad_norm`: the norm of
# `net.conv1.weight.grad`)? `diagnose.why_not_updating(net, opt, "conv1.weight")` tells why.

# %%
moved = ____
grad_norm = ____
ex.q1.check()

# %% [markdown] tags=["claim-paddle-generated-param-names"]
# **2.** You port the AdamW that spares the biases to Paddle. Using `paddle_generated` (the names Paddle
# gives our LeNet), build `decay_names`: the set of Paddle names that should decay, so that
# `apply_decay_param_fun=lambda name: name in decay_names` decays the weights only.

# %%
decay_names = ____
ex.q2.check()

# %% [markdown]
# **3.** Build `fc2_opt`, an SGD over `net` in which `fc2`'s two parameters train at lr 0.001
# and every other parameter at the default lr 0.05, each parameter in exactly one group.

# %%
fc2_opt = ____
ex.q3.check()

# %% [markdown]
# **4.** Write `decay_groups(model, weight_decay)`, which returns the parameter groups of the
# recipe above for any model: every parameter with two or more dimensions decays by
# `weight_decay`, every 1-D one (biases, normalization weights) not at all, and each parameter is
# in exactly one group. The check hands it networks it makes up.

# %%
decay_groups = ____
ex.q4.check()

# %% [markdown]
# **5.** (Not checked: experiments.) Give the conv group a learning rate of 0.1 and the fc group
# 0.001 and train 10 epochs: test accuracy up or down? Train with SGD for the convolutions and
# Adam for the fc layers against Adam everywhere. Use `two_steps` (in the Going deeper section
# on duplicates) with `w` listed three times and momentum 0.9, working out both moves by hand
# first.
