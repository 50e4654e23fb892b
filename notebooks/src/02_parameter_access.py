# %% [markdown]
# # Parameter access
#
# **About 30 minutes.** You will be able to:
#
# * reach one layer's parameters, read a parameter's value and gradient, and say why the
#   gradient is `None` at first;
# * list every parameter with its name and shape, and pick one out by its dotted name, also
#   inside nested blocks;
# * export one layer's weights to a file, load them into another layer, and read a refused load;
# * write a layer of your own that makes its own parameters, and keep parameters in a list or
#   dict that the optimizer still sees;
# * keep measured state in a buffer, so that it is saved and moved with the model but never
#   trained.
#
# Training finds good values for a network's parameters; afterwards you want to *use* them: look
# at them to debug or visualise, save some of them, or load them into another model. For that you
# must know where the parameters live and what they are called. This chapter follows one small
# network through those questions.

# %%
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from safetensors.numpy import load_file

import dltutor as dt
from dltutor import nn, optim, plot

dt.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# The network of this chapter is a multilayer perceptron with one hidden layer: 4 inputs, 8
# hidden units, 1 output, and a batch of 2 examples to run it on.

# %%
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X = dt.rand(2, 4)
print(net)
print(net(X))

# %% tags=["twin-torch", "twin-same-numbers"]
import os
import tempfile

import numpy as np
import torch
from torch import nn

import dltutor as dt              # here only to hand over the lesson's start weights and X

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
dt.manual_seed(0)                 # the lesson's random start, copied in: the same numbers
lesson = dt.nn.Sequential(dt.nn.Linear(4, 8), dt.nn.ReLU(), dt.nn.Linear(8, 1))
net.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in lesson.state_dict().items()})
X = torch.from_numpy(dt.rand(2, 4).numpy())
print(net)
print(net(X))

# %% tags=["twin-paddle"]
import os
import tempfile

import numpy as np
import paddle
from paddle import nn

np.set_printoptions(precision=4, suppress=True)
paddle.seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X = paddle.rand([2, 4])
print(net)
print(net(X).shape)

# %% [markdown]
# ## Parameters of one layer in a Sequential
#
# A `Sequential` can be indexed like a list: `net[0]` is the first `Linear`, `net[1]` the
# `ReLU`, `net[2]` the output layer. A layer's `state_dict()` is a dictionary from parameter name
# to value; for a `Linear` the names are `weight` and `bias`.

# %%
print(net[2])
print(net[2].state_dict())

# %% tags=["twin-torch", "twin-same-numbers"]
print(net[2])
print(net[2].state_dict())

# %% tags=["twin-paddle"]
# Paddle stores a Linear's weight as (in, out): (8, 1) here, the transpose of PyTorch's (1, 8).
print(net[2])
print({name: value.shape for name, value in net[2].state_dict().items()})

# %% [markdown] tags=["claim-torch-access-linear-weight-out-in", "claim-paddle-access-linear-weight-in-out"]
# The weight of a `Linear(8, 1)` has shape (1, 8), that is (out_features, in_features), as in
# PyTorch (Paddle stores the transpose, (in, out)). The bias has one number per output. The
# `ReLU` has nothing to learn, so its state dict is empty.

# %%
last = net[2].state_dict()
assert list(last) == ["weight", "bias"]
assert last["weight"].shape == (1, 8) and last["bias"].shape == (1,)
assert net[1].state_dict() == {}

# %% [markdown]
# The values in a state dict are plain tensors (no gradient) that **share memory** with the
# parameters: they are a view of the current values, not a snapshot. Copy them
# (`.numpy().copy()`) if you want to keep today's values.

# %%
assert not last["bias"].requires_grad
assert np.shares_memory(last["weight"].data, net[2].weight.data)

# %% [markdown]
# ## What a parameter object is
#
# `net[2].bias` is an `nn.Parameter`: a tensor that a module registers as learnable. It holds a
# value, (after backward) a gradient, and a few settings later chapters use (`lr_mult`,
# `regularizer`, `need_clip`).

# %%
bias = net[2].bias
print(type(bias))
print(bias)
print("requires_grad:", bias.requires_grad, "| lr_mult:", bias.lr_mult,
      "| need_clip:", bias.need_clip)
assert isinstance(bias, nn.Parameter) and isinstance(bias, dt.Tensor)
assert bias.requires_grad

# %% tags=["twin-torch"]
# PyTorch's Parameter has no lr_mult or need_clip: a learning rate per parameter is an
# optimizer's parameter group (chapter 06), clipping a call in the training loop (chapter 09).
bias = net[2].bias
print(type(bias))
print(bias)
print("requires_grad:", bias.requires_grad)

# %% [markdown]
# To work with the numbers themselves, ask for the value explicitly:
#
# * `p.data` is the array inside (a NumPy array on the CPU, a CuPy array on a GPU);
# * `p.numpy()` always gives a NumPy array;
# * `p.item()` gives a Python number when there is only one.

# %%
print(type(bias.data).__name__, bias.data)
print(bias.numpy(), f"{bias.item():.4f}")
assert isinstance(bias.data, np.ndarray)
assert np.array_equal(bias.data, bias.numpy()) and bias.numpy()[0] == np.float32(bias.item())

# %% tags=["twin-torch", "twin-same-numbers"]
# In PyTorch p.data is a tensor (without autograd), and numpy() on a parameter is refused
# ("Can't call numpy() on Tensor that requires grad"): detach() first.
print(type(bias.data).__name__, bias.data)
print(bias.detach().numpy(), f"{bias.item():.4f}")

# %% [markdown]
# Besides its value, a parameter has a gradient, `p.grad`. No `backward()` has run yet, so the
# gradient is `None`: not zero ("the loss does not change with this parameter") but "nobody has
# asked yet".

# %%
print("net[2].weight.grad:", net[2].weight.grad)
assert all(p.grad is None for p in net.parameters())

# %% tags=["twin-torch", "twin-same-numbers"]
print("net[2].weight.grad:", net[2].weight.grad)

# %% [markdown]
# After a backward pass every parameter has a gradient, a tensor of **exactly its own shape**:
# one partial derivative per number.

# %%
loss = net(X).sum()
loss.backward()
for name, p in net.named_parameters():
    print(f"{name:9s} value {str(p.shape):7s} grad {p.grad.shape}")
for name, p in net.named_parameters():
    assert p.grad is not None and p.grad.shape == p.shape, name

# %% tags=["twin-torch", "twin-same-numbers"]
loss = net(X).sum()
loss.backward()
for name, p in net.named_parameters():
    print(f"{name:9s} value {str(tuple(p.shape)):7s} grad {tuple(p.grad.shape)}")

# %% [markdown]
# ### Going deeper: the gradient checked by hand, and pictured
# The output layer's gradient worked out on paper, and the first layer's weight and gradient drawn side by side.

# %% [markdown]
# The numbers are easy to check by hand here. The output is `h @ W2.T + b2`, where `h` is the
# hidden layer's output, and the loss sums the outputs of both examples: so the gradient of `b2`
# is 1 per example (2 in total) and the gradient of `W2` is `h` summed over the batch.

# %%
h = net[1](net[0](X))
print("h summed over the batch:", h.sum(axis=0).numpy())
print("net[2].weight.grad     :", net[2].weight.grad.numpy()[0])
assert np.allclose(net[2].bias.grad.numpy(), [2.0])
assert np.allclose(net[2].weight.grad.numpy()[0], h.sum(axis=0).numpy(), atol=1e-6)

# %% tags=["twin-torch", "twin-same-numbers"]
h = net[1](net[0](X))
print("h summed over the batch:", h.sum(dim=0).detach().numpy())
print("net[2].weight.grad     :", net[2].weight.grad.numpy()[0])

# %% [markdown]
# A picture of the first layer: its weight (8 hidden units x 4 inputs) and its gradient side by
# side, two arrays of the same shape. Rows of zero gradient belong to hidden units that the ReLU
# switched off for both examples.

# %%
weight, grad = net[0].weight.numpy(), net[0].weight.grad.numpy()
fig, axes = plt.subplots(1, 2, figsize=(7, 3.6), layout="constrained")
for ax, values, title in [(axes[0], weight, "net[0].weight"), (axes[1], grad, "net[0].weight.grad")]:
    limit = np.abs(values).max()
    image = ax.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_title(title)
    ax.set_xticks(range(values.shape[1]))
    ax.set_xlabel("input feature")
    ax.set_ylabel("hidden unit")
    fig.colorbar(image, ax=ax, shrink=0.8)
plot.show()

# %% tags=["twin-torch"]
# The figure's two arrays, described instead of drawn (plt.imshow takes them as they are).
weight, grad = net[0].weight.detach().numpy(), net[0].weight.grad.numpy()
for title, values in [("net[0].weight", weight), ("net[0].weight.grad", grad)]:
    print(f"{title:18s} shape {values.shape}, largest |value| {np.abs(values).max():.4f}")

# %%
switched_off = (h.numpy() == 0).all(axis=0)
print("hidden units off for both examples:", np.flatnonzero(switched_off))
assert grad.shape == weight.shape
assert np.all(grad[switched_off] == 0)

# %% tags=["twin-torch", "twin-same-numbers"]
switched_off = (h.detach().numpy() == 0).all(axis=0)
print("hidden units off for both examples:", np.flatnonzero(switched_off))

# %% [markdown]
# ## All parameters with names and shapes
#
# `named_parameters()` walks a module and yields `(name, parameter)` pairs. On the whole network
# each name is prefixed with its layer's position and a dot; there is no `1.`, as the ReLU has
# no parameters.

# %%
print(*[(name, p.shape) for name, p in net[0].named_parameters()])
print(*[(name, p.shape) for name, p in net.named_parameters()])
assert [n for n, _ in net[0].named_parameters()] == ["weight", "bias"]
assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]

# %% tags=["twin-torch", "twin-same-numbers"]
print(*[(name, tuple(p.shape)) for name, p in net[0].named_parameters()])
print(*[(name, tuple(p.shape)) for name, p in net.named_parameters()])

# %% [markdown]
# The network's state dict uses the same names, so `net.state_dict()['2.bias']` is the output
# layer's bias. `net.get_parameter('2.bias')` returns the Parameter object itself.

# %%
print(net.state_dict()["2.bias"])
assert np.array_equal(net.state_dict()["2.bias"].numpy(), net[2].bias.numpy())
assert net.get_parameter("2.bias") is net[2].bias

# %% tags=["twin-torch", "twin-same-numbers"]
print(net.state_dict()["2.bias"])
print(net.get_parameter("2.bias") is net[2].bias)

# %% [markdown]
# `dt.diagnose.summary(net)` puts it all in one table: every name with its shape, number of
# values, dtype, whether it is trained and its settings, then the totals. (Given an optimizer
# too, `summary(net, opt)` adds each parameter's group and learning rate: chapters 06 and 08.)

# %%
report = dt.diagnose.summary(net)
assert [row["name"] for row in report.rows] == [n for n, _ in net.named_parameters()]
assert report.totals["total"] == sum(p.numel() for p in net.parameters()) == 4 * 8 + 8 + 8 + 1
report

# %% tags=["twin-torch"]
# PyTorch has no summary table (the torchinfo package adds one): count from parameters().
count = sum(p.numel() for p in net.parameters())
print(f"total: {count} parameters in {len(list(net.parameters()))} tensor(s)")

# %% tags=["twin-paddle"]
# paddle.summary runs the network on an input of the size given and prints a row per layer.
info = paddle.summary(net=net, input_size=(2, 4))

# %% [markdown] tags=["claim-torch-access-no-summary", "claim-torch-access-parameter-table-runs"]
# ### Going deeper: the same table in PyTorch
# What the other frameworks offer instead of `summary`, and its table in a few lines that run in PyTorch too.

# %% [markdown] tags=["claim-torch-access-no-summary", "claim-paddle-access-summary", "claim-mge-access-module-stats", "claim-torch-access-parameter-table-runs"]
# `summary` is dltutor's own (PyTorch has no such function; Paddle has `paddle.summary`, a table
# per layer, and MegEngine `megengine.utils.module_stats.module_stats`). What it shows takes a few
# lines you can carry to PyTorch unchanged, with `torch` in place of `dt`: the loop below uses
# only `named_parameters()`, `shape`, `numel()` and `requires_grad`.

# %%
def parameter_table(model):
    """Name, shape, number of values and trainability of every parameter, then the total."""
    rows = [(name, tuple(p.shape), p.numel(), p.requires_grad)
            for name, p in model.named_parameters()]
    for name, shape, count, trained in rows:
        print(f"{name:10s} {str(shape):10s} {count:6d}  {'trained' if trained else 'frozen'}")
    print(f"{'total':10s} {'':10s} {sum(row[2] for row in rows):6d}")
    return rows


table = parameter_table(net)
assert [(name, shape) for name, shape, _, _ in table] == \
    [(row["name"], tuple(row["shape"])) for row in report.rows]
assert sum(row[2] for row in table) == report.totals["total"]

# %% tags=["twin-torch", "twin-same-numbers"]
def parameter_table(model):
    """Name, shape, number of values and trainability of every parameter, then the total."""
    rows = [(name, tuple(p.shape), p.numel(), p.requires_grad)
            for name, p in model.named_parameters()]
    for name, shape, count, trained in rows:
        print(f"{name:10s} {str(shape):10s} {count:6d}  {'trained' if trained else 'frozen'}")
    print(f"{'total':10s} {'':10s} {sum(row[2] for row in rows):6d}")
    return rows


table = parameter_table(net)

# %% [markdown]
# ## Parameters of nested blocks
#
# Bigger networks are built from blocks, and blocks from smaller blocks. A *block factory* is a
# function that returns a new block each time it is called. `block2` puts four blocks from
# `block1` into one `Sequential`, naming each with `add_module`; names may contain spaces.
# Printed, the network is an indented tree: each line starts with the child's name inside its
# parent.

# %%
def block1():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())


def block2():
    net = nn.Sequential()
    for i in range(4):
        net.add_module(f"block {i}", block1())       # nest here
    return net


dt.manual_seed(1)
rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
print(rgnet(X))
print(rgnet)

# %% tags=["twin-torch"]
def block1():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())


def block2():
    net = nn.Sequential()
    for i in range(4):
        net.add_module(f"block {i}", block1())       # nest here
    return net


torch.manual_seed(1)              # PyTorch's own random start: other numbers than the lesson's
rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
print(rgnet(X))
print(rgnet)

# %% [markdown]
# A parameter's full name is the path of names from the top, joined with dots: the first
# layer's bias in `block 0` is `0.block 0.0.bias`. Every block the factory made has its own
# parameters.

# %%
names = [name for name, _ in rgnet.named_parameters()]
print(len(names), "parameters; the first six:")
print(*names[:6], sep="\n")
assert names[:2] == ["0.block 0.0.weight", "0.block 0.0.bias"]
assert len(names) == 4 * 4 + 2
assert rgnet[0][0][0].weight is not rgnet[0][1][0].weight, "each call of block1 made new layers"

# %% tags=["twin-torch", "twin-same-numbers"]
names = [name for name, _ in rgnet.named_parameters()]
print(len(names), "parameters; the first six:")
print(*names[:6], sep="\n")

# %% [markdown]
# You can walk down the tree by position, like nested lists: `rgnet[0][1]` is the big block's
# **second** child, named `block 1`, and `rgnet[0][1][0]` its first layer, whose bias the state
# dict of `rgnet[0]` calls `'block 1.0.bias'`. Watch positions against names: `'block 0.0.bias'`
# belongs to position 0, a different layer.

# %%
by_position = rgnet[0][1][0].bias
by_name = rgnet[0].state_dict()["block 1.0.bias"]
print("rgnet[0][1][0].bias                   :", by_position.numpy())
print("rgnet[0].state_dict()['block 1.0.bias']:", by_name.numpy())
print("rgnet[0].state_dict()['block 0.0.bias']:", rgnet[0].state_dict()["block 0.0.bias"].numpy())
assert np.array_equal(by_position.numpy(), by_name.numpy())
assert np.array_equal(rgnet[0][0][0].bias.numpy(), rgnet[0].state_dict()["block 0.0.bias"].numpy())
assert not np.array_equal(by_position.numpy(), rgnet[0].state_dict()["block 0.0.bias"].numpy())
assert rgnet.get_parameter("0.block 1.0.bias") is by_position

# %% tags=["twin-torch"]
by_position = rgnet[0][1][0].bias
by_name = rgnet[0].state_dict()["block 1.0.bias"]
print("rgnet[0][1][0].bias                   :", by_position.detach().numpy())
print("rgnet[0].state_dict()['block 1.0.bias']:", by_name.numpy())
print("rgnet[0].state_dict()['block 0.0.bias']:", rgnet[0].state_dict()["block 0.0.bias"].numpy())
print(rgnet.get_parameter("0.block 1.0.bias") is by_position)

# %% [markdown] tags=["claim-torch-custom-mylinear-runs", "claim-torch-custom-register-none"]
# ## Custom layers
#
# Your own layer is a subclass of `nn.Module`: create its parameters in `__init__`, after
# `super().__init__()`, and compute its output in `forward`.
# Assigning an `nn.Parameter` to an attribute registers it under the attribute's name.
# `MyLinear` below is `nn.Linear` written out. Without a bias it calls
# `register_parameter("bias", None)`: `self.bias` reads `None` (which `forward` tests) and
# nothing is listed or saved under it. PyTorch's `nn.Linear(..., bias=False)` does the same, and
# this class runs unchanged in PyTorch with `torch` in place of `dt`.

# %%
class MyLinear(nn.Module):
    """y = x @ weight.T + bias, with the parameters made here."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(dt.randn(out_features, in_features) / in_features ** 0.5)
        if bias:
            self.bias = nn.Parameter(dt.zeros(out_features))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


dt.manual_seed(2)
mine, no_bias = MyLinear(4, 3), MyLinear(4, 3, bias=False)
print("mine:   ", [(name, p.shape) for name, p in mine.named_parameters()])
print("no_bias:", list(no_bias.state_dict()), "| no_bias.bias:", no_bias.bias)
assert [name for name, _ in mine.named_parameters()] == ["weight", "bias"]
assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]
expected = X.numpy() @ mine.weight.numpy().T + mine.bias.numpy()
assert np.allclose(mine(X).numpy(), expected, atol=1e-6)

# %% tags=["twin-torch", "twin-same-numbers"]
class MyLinear(nn.Module):
    """y = x @ weight.T + bias, with the parameters made here."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        if bias:
            self.bias = nn.Parameter(torch.zeros(out_features))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


torch.manual_seed(2)
mine, no_bias = MyLinear(4, 3), MyLinear(4, 3, bias=False)
print("mine:   ", [(name, tuple(p.shape)) for name, p in mine.named_parameters()])
print("no_bias:", list(no_bias.state_dict()), "| no_bias.bias:", no_bias.bias)

# %% [markdown] tags=["claim-torch-custom-plain-list-invisible"]
# **The plain-list mistake.** A module looks for parameters among its attributes, but not
# inside a Python list. `ScaleShift` keeps its two parameters in a list; with a plain list,
# `parameters()` does not list them, so the optimizer never gets them. Nothing fails: backward
# computes their gradients and the step leaves them where they were, in PyTorch too. The fix is
# one word, `nn.ParameterList`:

# %%
class ScaleShift(nn.Module):
    """x * scale + shift per feature, the two parameters kept in a list."""

    def __init__(self, n, plain_list=False):
        super().__init__()
        params = [nn.Parameter(dt.ones(n)), nn.Parameter(dt.zeros(n))]
        self.params = params if plain_list else nn.ParameterList(params)

    def forward(self, x):
        scale, shift = self.params
        return x * scale + shift


def shift_after_one_step(plain_list):
    """One SGD step of MyLinear + ScaleShift; prints what the optimizer saw, returns shift."""
    dt.manual_seed(3)
    model = nn.Sequential(MyLinear(4, 3), ScaleShift(3, plain_list))
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(X).sum().backward()
    opt.step()
    shift = model[1].params[1]
    print(f"plain_list={plain_list}: {[name for name, _ in model.named_parameters()]}")
    print(f"  shift.grad {shift.grad.numpy()}, shift after the step {shift.numpy()}")
    return shift.numpy()


assert np.array_equal(shift_after_one_step(plain_list=True), [0, 0, 0])   # never moved
assert np.allclose(shift_after_one_step(plain_list=False), [-0.2, -0.2, -0.2])

# %% tags=["twin-torch", "twin-same-numbers"]
class ScaleShift(nn.Module):
    """x * scale + shift per feature, the two parameters kept in a list."""

    def __init__(self, n, plain_list=False):
        super().__init__()
        params = [nn.Parameter(torch.ones(n)), nn.Parameter(torch.zeros(n))]
        self.params = params if plain_list else nn.ParameterList(params)

    def forward(self, x):
        scale, shift = self.params
        return x * scale + shift


def shift_after_one_step(plain_list):
    """One SGD step of MyLinear + ScaleShift; prints what the optimizer saw, returns shift."""
    torch.manual_seed(3)
    model = nn.Sequential(MyLinear(4, 3), ScaleShift(3, plain_list))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(X).sum().backward()
    opt.step()
    shift = model[1].params[1]
    print(f"plain_list={plain_list}: {[name for name, _ in model.named_parameters()]}")
    print(f"  shift.grad {shift.grad.numpy()}, shift after the step {shift.detach().numpy()}")


shift_after_one_step(plain_list=True)
shift_after_one_step(plain_list=False)

# %% [markdown] tags=["claim-torch-custom-parameter-containers"]
# A `ParameterList` is a module that names its parameters by position (`1.params.0` above),
# saves them and moves them with `.to`; `nn.ParameterDict` names them by key. A tensor given to
# either becomes a Parameter, and a plain `dict` goes in sorted by key, as in PyTorch.

# %%
holder = nn.Module()
holder.scales = nn.ParameterList([dt.ones(2), dt.ones(3)])
holder.heads = nn.ParameterDict({"mean": dt.zeros(3), "log_std": dt.zeros(3)})
holder.heads["gain"] = dt.ones(1)
holder.to(dt.float64)
for name, p in holder.named_parameters():
    print(f"{name:13s} {type(p).__name__} {p.dtype}")
assert list(holder.state_dict()) == ["scales.0", "scales.1", "heads.log_std", "heads.mean",
                                     "heads.gain"]
assert all(isinstance(p, nn.Parameter) and p.dtype == np.float64 for p in holder.parameters())

# %% tags=["twin-torch"]
holder = nn.Module()
holder.scales = nn.ParameterList([torch.ones(2), torch.ones(3)])
holder.heads = nn.ParameterDict({"mean": torch.zeros(3), "log_std": torch.zeros(3)})
holder.heads["gain"] = torch.ones(1)
holder.to(torch.float64)
for name, p in holder.named_parameters():
    print(f"{name:13s} {type(p).__name__} {p.dtype}")

# %% [markdown]
# **A layer with nothing to learn.** A `forward` alone makes a layer: `Centered` subtracts each
# example's mean, has no parameters and sits in a `Sequential` beside `MyLinear`. Three ways to
# walk a model:
# `named_children()` yields the direct children with their names, `named_modules()` every module
# of the tree (the model itself first, named `""`), and `parameters(recurse=False)` only the
# parameters a module holds itself, not those of its children.

# %%
class Centered(nn.Module):
    """Subtracts each example's mean: a layer without parameters."""

    def forward(self, x):
        return x - x.mean(axis=1, keepdims=True)


dt.manual_seed(4)
custom = nn.Sequential(MyLinear(4, 8), Centered(), nn.ReLU(), MyLinear(8, 1))
print("output shape:", custom(X).shape)
print("parameters:", [name for name, _ in custom.named_parameters()])
print("children of rgnet[0]:", [name for name, _ in rgnet[0].named_children()])
print("modules of rgnet:", [name for name, _ in rgnet.named_modules()][:4], "...")
print("own parameters: custom", len(list(custom.parameters(recurse=False))),
      "| custom[0]", len(list(custom[0].parameters(recurse=False))))
assert [name for name, _ in custom.named_parameters()] == ["0.weight", "0.bias", "3.weight",
                                                          "3.bias"]
assert np.allclose(custom[1](X).numpy().mean(axis=1), 0, atol=1e-6)
assert list(custom.parameters(recurse=False)) == []
assert len(list(custom[0].parameters(recurse=False))) == 2

# %% tags=["twin-torch", "twin-same-numbers"]
class Centered(nn.Module):
    """Subtracts each example's mean: a layer without parameters."""

    def forward(self, x):
        return x - x.mean(dim=1, keepdim=True)


torch.manual_seed(4)
custom = nn.Sequential(MyLinear(4, 8), Centered(), nn.ReLU(), MyLinear(8, 1))
print("output shape:", tuple(custom(X).shape))
print("parameters:", [name for name, _ in custom.named_parameters()])
print("children of rgnet[0]:", [name for name, _ in rgnet[0].named_children()])
print("modules of rgnet:", [name for name, _ in rgnet.named_modules()][:4], "...")
print("own parameters: custom", len(list(custom.parameters(recurse=False))),
      "| custom[0]", len(list(custom[0].parameters(recurse=False))))

# %% [markdown]
# ## Exporting the weights of one layer
#
# To reuse part of a model, say the last layer, in another model, save that part's state dict:
# `dt.save(net[2].state_dict(), path)`. dltutor writes a **safetensors** file: the arrays plus a
# small header with each one's name, dtype and shape. We write into a temporary folder.

# %%
folder = tempfile.TemporaryDirectory()
path = os.path.join(folder.name, "last_layer.safetensors")
dt.save(net[2].state_dict(), path)

# %% tags=["twin-torch"]
# torch.save writes a pickle (a zip file), not safetensors.
folder = tempfile.TemporaryDirectory()
path = os.path.join(folder.name, "last_layer.pt")
torch.save(net[2].state_dict(), path)
print("saved:", list(net[2].state_dict()))

# %% tags=["twin-paddle"]
# Paddle saves with paddle.save (a pickle) and loads into a layer with set_state_dict.
folder = tempfile.TemporaryDirectory()
path = os.path.join(folder.name, "last_layer.pdparams")
paddle.save(net[2].state_dict(), path)
new_layer = nn.Linear(8, 1)
missing, unexpected = new_layer.set_state_dict(paddle.load(path))
print("missing:", missing, "| unexpected:", unexpected)
print(np.array_equal(new_layer.weight.numpy(), net[2].weight.numpy()))
folder.cleanup()

# %% [markdown]
# To use the weights, make a layer of the same shape and copy them in with
# `load_state_dict(dt.load(path))`. It returns the keys that were missing and unexpected (none
# here); the new layer now computes exactly what `net[2]` computes. The same works for the last
# layer of a new network, `other[2]`: only that layer changes.

# %%
dt.manual_seed(123)
new_layer = nn.Linear(8, 1)
print("before:", new_layer.bias.numpy())
result = new_layer.load_state_dict(dt.load(path))
print(result)
print("after: ", new_layer.bias.numpy())
assert result.missing_keys == [] and result.unexpected_keys == []
assert np.array_equal(new_layer.weight.numpy(), net[2].weight.numpy())
assert np.array_equal(new_layer.bias.numpy(), net[2].bias.numpy())
hidden = net[1](net[0](X))
assert np.array_equal(new_layer(hidden).numpy(), net[2](hidden).numpy())
other = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
first_layer_before = other[0].weight.numpy().copy()
loaded = other[2].load_state_dict(dt.load(path))
assert np.array_equal(other[2].weight.numpy(), net[2].weight.numpy())
assert np.array_equal(other[0].weight.numpy(), first_layer_before)

# %% tags=["twin-torch"]
torch.manual_seed(123)
new_layer = nn.Linear(8, 1)
print("before:", new_layer.bias.detach().numpy())
result = new_layer.load_state_dict(torch.load(path))
print(result)
print("after: ", new_layer.bias.detach().numpy())

# %% [markdown]
# When the shapes do not fit, loading fails with a message that names every mismatched key with
# both shapes. (This cell is meant to fail.)

# %% tags=["raises-exception"]
nn.Linear(8, 2).load_state_dict(dt.load(path))

# %% tags=["twin-torch", "raises-exception"]
nn.Linear(8, 2).load_state_dict(torch.load(path))

# %% [markdown] tags=["claim-torch-access-load-half-applied"]
# ### Going deeper: a refused load changes nothing, and the file inside
# A refused load left whole, why safetensors rather than a pickle, what NumPy's reader finds in the file, and PyTorch's half-applied load.

# %% [markdown]
# A failed load **changes nothing**. In a `Linear(4, 1)` the bias (shape (1,)) would fit but the
# weight would not, and the load is refused as a whole: the bias keeps its old value rather than
# being half loaded.

# %%
small = nn.Linear(4, 1)
bias_before = small.bias.numpy().copy()
try:
    small.load_state_dict(dt.load(path))
except nn.StateDictError as err:
    print(err)
assert np.array_equal(small.bias.numpy(), bias_before)

# %% tags=["twin-torch"]
# PyTorch copies each entry that fits before it raises: small.bias is already the file's.
small = nn.Linear(4, 1)
bias_before = small.bias.detach().numpy().copy()
try:
    small.load_state_dict(torch.load(path))
except RuntimeError as err:
    print(err)

# %% [markdown] tags=["claim-torch-access-save-pickle", "claim-torch-differs-load-may-unpickle"]
# A safetensors file holds arrays and a small JSON header; loading one can only ever produce
# arrays, unlike a pickle (what `torch.save` writes), which can run code when it is loaded
# (PyTorch 2.13's `torch.load` refuses that unless you pass `weights_only=False`). Any
# safetensors reader can open the file. Here is what NumPy's reader finds in it: the two
# arrays, under the names the layer gave them.

# %%
stored = load_file(path)
for key, array in sorted(stored.items()):
    print(f"{key:6s} shape {array.shape}  dtype {array.dtype}")
assert sorted(stored) == ["bias", "weight"]
assert np.array_equal(stored["weight"], net[2].weight.numpy())

# %% tags=["twin-torch", "twin-same-numbers"]
# torch.load (weights_only=True by default since 2.6) unpickles only tensors and plain data.
stored = torch.load(path)
for key, array in sorted(stored.items()):
    print(f"{key:6s} shape {tuple(array.shape)}  dtype {array.dtype}")

# %% [markdown] tags=["claim-torch-access-load-half-applied"]
# **Here dltutor differs from PyTorch.** PyTorch's `load_state_dict` copies each entry that fits
# *as it goes* and raises only at the end, so after the same error PyTorch's bias already holds
# the file's value: half the layer is new, half old, and nothing tells you which. This is not
# computed here (the kit has no PyTorch in it): `tests/frameworks/test_ch02_access.py` runs this
# very case in PyTorch 2.13, a `Linear(4, 1)` loading a `Linear(8, 1)`'s state dict, and checks
# that it raises `RuntimeError` naming `size mismatch for weight`, after which the bias holds the
# file's value and the weight its old one. dltutor's `small`, after its refused load, next to
# the file:

# %%
print("bias in the file:", stored["bias"], "| small.bias:", small.bias.numpy(),
      "| before the load:", bias_before)
assert not np.array_equal(stored["bias"], bias_before)          # the file's bias would fit ...
assert np.array_equal(small.bias.numpy(), bias_before)          # ... but dltutor changed nothing

# %% tags=["twin-torch"]
# Here PyTorch differs: after the refused load, small.bias holds the file's value.
print("bias in the file:", stored["bias"].numpy(), "| small.bias:", small.bias.detach().numpy(),
      "| before the load:", bias_before)

# %%
folder.cleanup()                                                 # remove the temporary folder
assert not os.path.exists(path)

# %% tags=["twin-torch"]
folder.cleanup()                                                 # remove the temporary folder
print(os.path.exists(path))

# %% [markdown] tags=["claim-torch-buffers-saved-moved-never-optimized"]
# ## Buffers: state that is not a parameter
#
# Some numbers a layer keeps are measured, not learned: BatchNorm's running mean and variance,
# the mean and spread of the training data. They must be saved with the model and travel with
# it, but no optimizer may change them. PyTorch and dltutor call such a tensor a *buffer*:
# `self.register_buffer(name, tensor)`; with `persistent=False` it travels but stays out of the
# state dict. A plain tensor attribute, `self.scale = ...`, is neither saved nor moved.
# `Standardize` below, which standardizes its input with a measured mean and spread before a
# `Linear`, keeps one of each kind.

# %%
class Standardize(nn.Module):
    """(x - mean) / std * scale, then a Linear: mean and std are measured, not learned."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.register_buffer("mean", dt.zeros(3))
        self.register_buffer("std", dt.ones(3))
        self.register_buffer("last_input", dt.zeros(3), persistent=False)
        self.scale = dt.ones(3)                      # a plain attribute: not registered

    def forward(self, x):
        self.last_input = x[-1].detach()             # kept for inspection, never saved
        return self.fc((x - self.mean) / self.std * self.scale)


model = Standardize()
data = dt.randn(100, 3) * 5 + 2
model.mean, model.std = data.mean(axis=0), data.std(axis=0)   # measured once, on the data
print("parameters:", [name for name, _ in model.named_parameters()])
print("buffers:   ", [name for name, _ in model.named_buffers()])
print("state dict:", sorted(model.state_dict()))

# %% tags=["twin-torch"]
class Standardize(nn.Module):
    """(x - mean) / std * scale, then a Linear: mean and std are measured, not learned."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("std", torch.ones(3))
        self.register_buffer("last_input", torch.zeros(3), persistent=False)
        self.scale = torch.ones(3)                   # a plain attribute: not registered

    def forward(self, x):
        self.last_input = x[-1].detach()             # kept for inspection, never saved
        return self.fc((x - self.mean) / self.std * self.scale)


model = Standardize()
data = torch.randn(100, 3) * 5 + 2
model.mean, model.std = data.mean(dim=0), data.std(dim=0)   # measured once, on the data
print("parameters:", [name for name, _ in model.named_parameters()])
print("buffers:   ", [name for name, _ in model.named_buffers()])
print("state dict:", sorted(model.state_dict()))

# %% [markdown]
# The state dict holds the parameters and the persistent buffers; `parameters()`, what an
# optimizer is given, only the parameters. After a training step the buffers have no gradient
# and have not moved.

# %%
assert [name for name, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]
assert set(model.state_dict()) == {"mean", "std", "fc.weight", "fc.bias"}
mean_before = model.mean.numpy().copy()
opt = optim.SGD(model.parameters(), lr=0.1)
model(data[:8]).sum().backward()
opt.step()
assert model.mean.grad is None and np.array_equal(model.mean.numpy(), mean_before)

# %% tags=["twin-torch"]
mean_before = model.mean.clone()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(data[:8]).sum().backward()
opt.step()
print("mean.grad:", model.mean.grad, "| mean unchanged:", torch.equal(model.mean, mean_before))

# %% [markdown]
# `model.to(...)` takes every parameter and buffer along, persistent or not; the plain attribute
# stays behind, which is the bug to look for when a loaded model behaves differently from the
# one you saved. Here the move is a cast to float64 (chapter 11 moves a model to the GPU):

# %%
model.to(dt.float64)
print({name: str(t.dtype) for name, t in [("fc.weight", model.fc.weight), ("mean", model.mean),
                                           ("last_input", model.last_input),
                                           ("scale (plain)", model.scale)]})
assert {model.fc.weight.dtype, model.mean.dtype, model.last_input.dtype} == {np.dtype("float64")}
assert model.scale.dtype == np.float32 and "scale" not in model.state_dict()

# %% tags=["twin-torch"]
model.to(torch.float64)
print({name: str(t.dtype) for name, t in [("fc.weight", model.fc.weight), ("mean", model.mean),
                                           ("last_input", model.last_input),
                                           ("scale (plain)", model.scale)]})

# %% [markdown] tags=["claim-torch-names-02", "claim-paddle-names-02", "claim-mge-names-02", "claim-paddle1-names-02", "claim-torch-access-no-summary", "claim-paddle-access-summary", "claim-mge-access-module-stats", "claim-torch-access-save-pickle"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | one layer's parameters | `net[2].state_dict()` | `net[2].state_dict()` | `net[2].state_dict()` | `net[2].state_dict()` |
# | parameter class | `nn.Parameter` | `torch.nn.Parameter` | `paddle.nn.Parameter` (or `paddle.create_parameter(...)`, settings via `ParamAttr`) | `megengine.Parameter` |
# | value as NumPy | `p.numpy()`, `p.data` | `p.detach().numpy()` | `p.numpy()` | `p.numpy()` |
# | gradient | `p.grad` | `p.grad` | `p.grad` | `p.grad` |
# | names and values | `named_parameters()` | `named_parameters()` | `named_parameters()` | `named_parameters()` |
# | one parameter by name | `net.get_parameter("2.bias")` | `net.get_parameter("2.bias")` | `net.state_dict()["2.bias"]` | `dict(net.named_parameters())[name]` |
# | add a named child | `add_module("block 0", m)` | `add_module("block 0", m)` | `add_sublayer("block 0", m)` | assign an attribute |
# | table of parameters | `dt.diagnose.summary(net)` | — | `paddle.summary(net, input_size)` | `megengine.utils.module_stats.module_stats(net, input_shapes=...)` |
# | save one layer | `dt.save(net[2].state_dict(), path)` (safetensors) | `torch.save(net[2].state_dict(), path)` (pickle) | `paddle.save(net[2].state_dict(), path)` (1.x: `fluid.io.save_vars`) | `mge.save(net[2].state_dict(), path)` |
# | load it | `layer.load_state_dict(dt.load(path))` | `layer.load_state_dict(torch.load(path))` | `layer.set_state_dict(paddle.load(path))` (1.x: `fluid.io.load_vars`) | `layer.load_state_dict(mge.load(path))` |
# | state that is not a parameter | `register_buffer("mean", t)` | `register_buffer("mean", t)` | `register_buffer("mean", t)` | a `Tensor` attribute that is not a `Parameter` (`named_buffers()`) |
# | a layer's own parameter | `nn.Parameter(t)`, assigned in `__init__` | `torch.nn.Parameter(t)`, assigned in `__init__` | `layer.create_parameter([3, 4])`, then assigned | `megengine.Parameter(array)`, assigned in `__init__` |
# | a parameter by name, or none | `register_parameter("bias", None)` | `register_parameter("bias", None)` | `add_parameter("bias", None)` | assign the attribute (`None` is not listed) |
# | parameters in a list | `nn.ParameterList(params)` | `torch.nn.ParameterList(params)` | `paddle.nn.ParameterList(params)` (Parameters only) | a plain `list` attribute: MegEngine looks inside (`name.0`) |
# | parameters in a dict | `nn.ParameterDict({"w": p})` | `torch.nn.ParameterDict({"w": p})` | `paddle.nn.ParameterDict({"w": p})` (Parameters only) | a plain `dict` attribute (`name.w`) |
# | children, every module, own parameters | `net.named_children()`, `net.named_modules()`, `net.parameters(recurse=False)` | `net.named_children()`, `net.named_modules()`, `net.parameters(recurse=False)` | `net.named_children()`, `net.named_sublayers(include_self=True)`, `net.parameters(include_sublayers=False)` | `net.named_children()`, `net.named_modules()`, `net.parameters(recursive=False)` |
#
# ## Summary
#
# **In two lines:** a parameter's dotted name reaches its value, its gradient (None until a backward
# pass) and its entry in the state dict. The state dict saves and reloads any part of a model, and a
# buffer keeps the state that is saved but never trained.
#
# * `net[i].state_dict()` holds layer `i`'s parameters under short names, sharing their memory.
# * A parameter's value is `p.data` / `p.numpy()`, its gradient `p.grad`: `None` until a backward
#   pass, then of the parameter's shape.
# * Full names are paths of child names joined with dots (`'0.block 1.0.bias'`); indexing goes by
#   position, names come from `add_module`.
# * `dt.save(layer.state_dict(), path)` exports a layer; `load_state_dict(dt.load(path))` loads it
#   into one of the same shape and refuses one that does not fit, naming each mismatched key.
# * Your own layer assigns `nn.Parameter`s in `__init__` and computes in `forward`; parameters in a
#   plain list are invisible to the optimizer: use `nn.ParameterList` or `nn.ParameterDict`.
# * Measured state is a buffer, `register_buffer(name, t)`: saved and moved, never trained.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("02")

# %% [markdown]
# **1.** List the names of the parameters of `rgnet[0][2]` only, as the block itself names them
# (`block_names`), and count the values they hold (`block_values`).

# %%
block_names = ____
block_values = ____
ex.q1.check()

# %% [markdown]
# **2.** Start from `None` (`net.zero_grad()`), then run `net(X).sum().backward()` twice
# without clearing the gradients in between. Copy `net[2].weight.grad` after the first
# (`grads_after_one`) and after the second (`grads_after_two`), with `.numpy().copy()`. By what
# factor do they differ, and why?

# %%
grads_after_one = ____
grads_after_two = ____
ex.q2.check()

# %% [markdown]
# **3.** Export the **first** layer of `net` and load it into `rgnet[0][0][0]`. Then set
# `loaded = rgnet[0][0][0]`. Which shapes have to match?

# %%
loaded = ____
ex.q3.check()

# %% [markdown]
# **4.** Save the whole `net.state_dict()` with `dt.save` and list the keys in the file
# (`keys_in_file`). Why is there no key starting with `1.`?

# %%
keys_in_file = ____
ex.q4.check()

# %% [markdown]
# **5.** Build the same four blocks with `nn.Sequential(*[block1() for _ in range(4)])` instead
# of `add_module`. What are the names of its children (`child_names`)?

# %%
child_names = ____
ex.q5.check()

# %% [markdown]
# **6.** Write `values_per_module(model)`, which returns a dict from the name of every module
# that holds parameters **itself** (not only through its children; the model itself is named
# `""`) to the number of values in those parameters. The check counts networks it makes up.

# %%
values_per_module = ____
ex.q6.check()

# %% [markdown]
# **7.** Write a layer `Affine(n)` that computes `x * scale + shift` per feature, with two
# parameters of shape `(n,)`: `scale`, starting at ones, and `shift`, starting at zeros.
# `Affine(n, shift=False)` has no shift: register it as `None`. Write the class in the cell, then
# hand in `affine = Affine(4)`: the check builds more layers of its class, of two sizes, gives
# their parameters values of its own, and follows the gradient.

# %%
affine = ____
ex.q7.check()
