# %% [markdown]
# # Initializing parameters
#
# **About 30 minutes.** You will be able to:
#
# * say what a Linear layer starts with, and why its range shrinks as its inputs grow in number;
# * initialize every layer, or each block its own way, with `net.apply` and the built-in
#   initializers;
# * write a custom initializer that changes a parameter's values in place;
# * pick the initializer that keeps signal and gradient alive through a deep network.
#
# Before the first training step every weight needs a value, and the value matters: start a
# deep network too small and its signal fades to nothing after a few layers; too large and the
# signal explodes or the activations saturate. Either way, training stalls before it begins.
# The chapter answers the practical questions first and ends by measuring *why* the choice
# matters, layer by layer, in a 15-layer network. Putting in values you already have
# (pretrained word vectors, a weight matrix from NumPy) is chapter 04's subject.
#
# Everything here works **in place**: an initializer changes the numbers inside a parameter and
# leaves the parameter object itself alone. Chapter 04 shows why that detail matters.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm       # progress bars for the loops that take a while

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.nn import init

dt.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown] tags=["claim-torch-init-linear-default-uniform-weight-bias"]
# ## Default initialization of a Linear layer
#
# A freshly made `nn.Linear(in_features, out_features)` draws every weight **and** every bias
# uniformly from
#
# $$\left[-\frac{1}{\sqrt{\text{fan}_\text{in}}},\ \frac{1}{\sqrt{\text{fan}_\text{in}}}\right],$$
#
# where $\text{fan}_\text{in}$ (`fan_in` in code) is `in_features`, the number of inputs that
# feed each output. This is PyTorch's default, and dltutor copies it (how PyTorch's code arrives at
# it is a Going deeper section at the end of "Why initialization matters").
# A wide layer shows the range clearly: with 1000 inputs the bound is $1/\sqrt{1000} \approx
# 0.0316$.

# %%
dt.manual_seed(0)
wide = nn.Linear(1000, 500)
bound = 1 / math.sqrt(1000)
w, b = wide.weight.numpy(), wide.bias.numpy()
print(f"bound 1/sqrt(fan_in) = {bound:.4f}")
print(f"weight: min {w.min():+.4f}  max {w.max():+.4f}  std {w.std():.4f}")
print(f"bias:   min {b.min():+.4f}  max {b.max():+.4f}")
print(f"std of U(-bound, bound) = bound / sqrt(3) = {bound / math.sqrt(3):.4f}")

# %% tags=["twin-torch"]
import math

import numpy as np
import torch
from torch import nn

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
torch.manual_seed(0)
wide = nn.Linear(1000, 500)
bound = 1 / math.sqrt(1000)
w, b = wide.weight.detach().numpy(), wide.bias.detach().numpy()
print(f"bound 1/sqrt(fan_in) = {bound:.4f}")
print(f"weight: min {w.min():+.4f}  max {w.max():+.4f}  std {w.std():.4f}")
print(f"bias:   min {b.min():+.4f}  max {b.max():+.4f}")
print(f"std of U(-bound, bound) = bound / sqrt(3) = {bound / math.sqrt(3):.4f}")

# %%
assert np.abs(w).max() <= bound and np.abs(b).max() <= bound   # nothing outside the range
assert np.abs(w).max() > 0.999 * bound                          # and the range is used up to its edge
assert abs(w.std() / (bound / math.sqrt(3)) - 1) < 0.01         # a flat (uniform) spread

# %% [markdown]
# **Why divide by $\sqrt{\text{fan}_\text{in}}$?** Each output adds up `fan_in` products
# $w_i x_i$. If the inputs have variance 1, the sum has variance
# $\text{fan}_\text{in}\cdot\mathrm{Var}(w)$. With $\mathrm{Var}(w) = \text{bound}^2/3 =
# 1/(3\,\text{fan}_\text{in})$ that is $1/3$ *whatever the width* (plus $1/(3\,\text{fan}_\text{in})$
# from the bias, which matters only for very narrow layers): the output's spread no longer
# depends on how many inputs the layer has. A fixed range such as $U(-0.1, 0.1)$ has no such
# property — its outputs grow like $\sqrt{\text{fan}_\text{in}}$. Measure both:

# %%
widths = [4, 16, 64, 256, 1024, 4096]
default_std, fixed_std = [], []
for n in widths:
    dt.manual_seed(1)
    x = dt.randn(512, n)                      # inputs with std 1
    layer = nn.Linear(n, 64)                  # default init
    default_std.append(float(layer(x).numpy().std()))
    init.uniform_(layer.weight, -0.1, 0.1)    # the same layer with a fixed range
    init.uniform_(layer.bias, -0.1, 0.1)
    fixed_std.append(float(layer(x).numpy().std()))

print(" fan_in   output std (default)   output std (U(-0.1, 0.1))")
for n, d, f in zip(widths, default_std, fixed_std):
    print(f"{n:7d}   {d:20.4f}   {f:24.4f}")

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.plot(widths, default_std, marker="o", label="default: U(±1/sqrt(fan_in))")
ax.plot(widths, fixed_std, marker="s", label="fixed range: U(±0.1)")
ax.axhline(1 / math.sqrt(3), color="gray", ls="--", lw=1, label="1/sqrt(3)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_yticks([0.2, 0.5, 1, 2, 4], labels=["0.2", "0.5", "1", "2", "4"])
ax.minorticks_off()
ax.set_xlabel("fan_in (inputs per output)")
ax.set_ylabel("std of the layer's output")
ax.set_title("One Linear layer, inputs with std 1")
ax.legend(fontsize="small")
ax.grid(True, alpha=0.3)
plot.show()

# %% tags=["twin-torch"]
# The same measurement; the figure is left out, its numbers are printed.
widths = [4, 16, 64, 256, 1024, 4096]
default_std, fixed_std = [], []
for n in widths:
    torch.manual_seed(1)
    x = torch.randn(512, n)                   # inputs with std 1
    layer = nn.Linear(n, 64)                  # default init
    with torch.no_grad():                     # measuring: no graph needed
        default_std.append(layer(x).std(correction=0).item())
        nn.init.uniform_(layer.weight, -0.1, 0.1)    # the same layer with a fixed range
        nn.init.uniform_(layer.bias, -0.1, 0.1)
        fixed_std.append(layer(x).std(correction=0).item())

print(" fan_in   output std (default)   output std (U(-0.1, 0.1))")
for n, d, f in zip(widths, default_std, fixed_std):
    print(f"{n:7d}   {d:20.4f}   {f:24.4f}")

# %%
# variance 1/3 from the weights plus 1/(3 fan_in) from the bias: ~0.58 at every width
assert all(abs(s / math.sqrt((1 + 1 / n) / 3) - 1) < 0.05 for n, s in zip(widths, default_std))
assert fixed_std[-1] / fixed_std[0] > 10                               # the fixed range grows with width

# %% [markdown] tags=["claim-torch-init-linear-default-uniform-weight-bias"]
# One layer keeps the scale steady, but notice the value: about 0.58, not 1. Stack many such
# layers and the signal shrinks a little at each one — the last section shows what that does to
# a deep network. The bias is drawn from the same range (PyTorch's choice; many people set it to
# zero instead, as the next section does).
#
# ## A built-in initializer for every Linear layer
#
# `init` has the usual initializers; each fills one tensor in place. To reach every layer of a
# network, write a function that takes a **module** and initializes it if it is the kind you
# want, then hand it to `net.apply(fn)`, which calls `fn` on every module of the tree.
# Here: weights from a normal distribution with standard deviation 0.01, biases zero.

# %%
dt.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

def init_normal(m):
    if isinstance(m, nn.Linear):
        init.normal_(m.weight, mean=0.0, std=0.01)
        init.zeros_(m.bias)

net.apply(init_normal)
print("first row of the weight:", np.array2string(net[0].weight.numpy()[0], precision=5))
print("bias:", net[0].bias.numpy())

# %% tags=["twin-torch"]
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

def init_normal(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, mean=0.0, std=0.01)
        nn.init.zeros_(m.bias)

net.apply(init_normal)
print("first row of the weight:", np.array2string(net[0].weight.detach().numpy()[0], precision=5))
print("bias:", net[0].bias.detach().numpy())

# %%
weights = np.concatenate([net[0].weight.numpy().ravel(), net[2].weight.numpy().ravel()])
print(f"{weights.size} weights: std {weights.std():.4f}, largest |w| {np.abs(weights).max():.4f}")
assert (net[0].bias.numpy() == 0).all() and (net[2].bias.numpy() == 0).all()
assert 0.005 < weights.std() < 0.015 and np.abs(weights).max() < 0.05   # small, around 0.01

# %% tags=["twin-torch"]
weights = torch.cat([net[0].weight.flatten(), net[2].weight.flatten()]).detach()
print(f"{weights.numel()} weights: std {weights.std(correction=0).item():.4f}, "
      f"largest |w| {weights.abs().max().item():.4f}")

# %% [markdown]
# `apply` visits the children first and the module itself last, so `fn` sees every layer,
# the ReLU and the Sequential too — that is why `init_normal` checks the type:

# %%
visited = []
net.apply(lambda m: visited.append(type(m).__name__))
print(visited)
assert visited == ["Linear", "ReLU", "Linear", "Sequential"]

# %% tags=["twin-torch"]
visited = []
net.apply(lambda m: visited.append(type(m).__name__))   # children first, then the module
print(visited)

# %% [markdown]
# Every weight equal to one constant works the same way:

# %%
def init_constant(m):
    if isinstance(m, nn.Linear):
        init.constant_(m.weight, 1.0)
        init.zeros_(m.bias)

net.apply(init_constant)
print(net[0].weight.numpy()[0], net[0].bias.numpy()[0])

# %% tags=["twin-torch", "twin-same-numbers"]
def init_constant(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 1.0)
        nn.init.zeros_(m.bias)

net.apply(init_constant)
print(net[0].weight.detach().numpy()[0], net[0].bias.detach().numpy()[0])

# %%
assert (net[0].weight.numpy() == 1).all() and (net[2].weight.numpy() == 1).all()
assert (net[0].bias.numpy() == 0).all() and (net[2].bias.numpy() == 0).all()

# %% [markdown]
# A network whose weights are all equal is useless for training: every unit of a layer computes
# the same thing and receives the same gradient, so they stay identical however long you train.
# Fifty steps of SGD on random data show it: the eight hidden units of the first layer end with
# eight equal rows of weights (equal up to the last bits of rounding). Constants are for biases
# and for demonstrations like this one. (`optim.SGD(params, lr)` is plain stochastic gradient
# descent: each `step()` subtracts `lr x gradient` from every parameter it holds, and
# `zero_grad()` clears the gradients before the next backward. Chapter 06 is about optimizers.)

# %%
symmetric = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).apply(init_constant)
sym_opt = optim.SGD(symmetric.parameters(), lr=0.05)
dt.manual_seed(0)
xs_sym, ys_sym = dt.randn(64, 4), dt.randn(64, 1)
for _ in range(50):
    sym_opt.zero_grad()
    nn.functional.mse_loss(symmetric(xs_sym), ys_sym).backward()
    sym_opt.step()
rows = symmetric[0].weight.numpy()
print("the 8 rows moved away from 1:", not np.allclose(rows, 1.0))
print("and are still equal:", np.allclose(rows, rows[0], rtol=1e-5, atol=1e-6))

# %% tags=["twin-torch"]
symmetric = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).apply(init_constant)
sym_opt = torch.optim.SGD(symmetric.parameters(), lr=0.05)
torch.manual_seed(0)
xs_sym, ys_sym = torch.randn(64, 4), torch.randn(64, 1)
for _ in range(50):
    sym_opt.zero_grad()
    nn.functional.mse_loss(symmetric(xs_sym), ys_sym).backward()
    sym_opt.step()
rows = symmetric[0].weight.detach().numpy()
print("the 8 rows moved away from 1:", not np.allclose(rows, 1.0))
print("and are still equal:", np.allclose(rows, rows[0], rtol=1e-5, atol=1e-6))

# %%
assert not np.allclose(rows, 1.0)                                     # training moved them
assert np.allclose(rows, rows[0], rtol=1e-5, atol=1e-6)               # ... all the same way
assert np.allclose(symmetric[2].weight.numpy(), symmetric[2].weight.numpy()[0, 0], rtol=1e-5)

# %% [markdown] tags=["claim-torch-init-data-is-a-tensor"]
# ### Going deeper: coming from PyTorch's `.data`
# Why D2L's `m.weight.data.normal_(0, 0.01)` fails here, and what to write instead.

# %% [markdown] tags=["claim-torch-init-data-is-a-tensor", "claim-torch-init-tensor-methods-need-no-grad"]
# > **Coming from PyTorch: `.data` is the array itself.** D2L and many PyTorch tutorials write
# > `m.weight.data.normal_(0, 0.01)` and `m.bias.data.fill_(0)`. In dltutor `p.data` is the
# > NumPy (or CuPy) array that holds the values, so that you can always look at the raw numbers;
# > a NumPy array has no `normal_`, `fill_` or `abs()` method. Side by side:
# >
# > | PyTorch | dltutor |
# > | --- | --- |
# > | `m.weight.data.normal_(0, 0.01)` | `init.normal_(m.weight, 0, 0.01)` |
# > | `m.bias.data.fill_(0)` | `init.zeros_(m.bias)` (or `init.constant_(m.bias, 0)`) |
# > | `with torch.no_grad(): m.weight.normal_(0, 0.01)` | `with dt.no_grad(): m.weight.normal_(0, 0.01)` |
# > | `m.weight.data.abs()` | `m.weight.abs()` (a tensor) or `np.abs(m.weight.data)` (an array) |
# >
# > The tensor methods `normal_`, `uniform_`, `fill_` and `zero_` exist too, and, as in PyTorch,
# > they refuse a parameter outside `no_grad` (autograd could no longer tell which values it saw).

# %%
try:
    net[0].weight.data.normal_(0, 0.01)      # the PyTorch line: .data is a NumPy array here
    pytorch_line_error = None
except AttributeError as err:
    pytorch_line_error = err
    print("AttributeError:", err)

# %% tags=["twin-torch"]
# In PyTorch .data is a tensor that autograd does not watch, so D2L's line works there;
# PyTorch's documentation recommends the no_grad form of the next cell instead.
net[0].weight.data.normal_(0, 0.01)
print(type(net[0].weight.data).__name__, "| requires_grad:", net[0].weight.data.requires_grad)

# %%
dt.manual_seed(0)
with dt.no_grad():
    net[0].weight.normal_(0, 0.01)           # the tensor method, as in PyTorch
    net[0].bias.fill_(0)
print(type(net[0].weight.data).__name__, "| largest |w|:", np.abs(net[0].weight.data).max().round(4))
assert isinstance(pytorch_line_error, AttributeError)                 # the PyTorch line failed ...
assert "object has no attribute 'normal_'" in str(pytorch_line_error)   # ... for want of normal_
assert isinstance(net[0].weight.data, np.ndarray)
assert (net[0].bias.numpy() == 0).all() and np.abs(net[0].weight.numpy()).max() < 0.05

# %% tags=["twin-torch"]
torch.manual_seed(0)
with torch.no_grad():
    net[0].weight.normal_(0, 0.01)           # the tensor method
    net[0].bias.fill_(0)
print(type(net[0].weight.data).__name__, "| largest |w|:", round(net[0].weight.abs().max().item(), 4))

# %% [markdown]
# ## Different initializers for different blocks
#
# `apply` works on any part of the tree, so each block can get its own rule. Here the first
# layer gets Xavier (Glorot) uniform initialization and the second the constant 42.

# %%
def xavier(m):
    if isinstance(m, nn.Linear):
        init.xavier_uniform_(m.weight)

def init_42(m):
    if isinstance(m, nn.Linear):
        init.constant_(m.weight, 42.0)

dt.manual_seed(0)
net[0].apply(xavier)
net[2].apply(init_42)
print(net[0].weight.numpy()[0])
print(net[2].weight.numpy())

# %% tags=["twin-torch"]
def xavier(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)

def init_42(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 42.0)

torch.manual_seed(0)
net[0].apply(xavier)
net[2].apply(init_42)
print(net[0].weight.detach().numpy()[0])
print(net[2].weight.detach().numpy())

# %% [markdown]
# Xavier uniform draws from $U(-a, a)$ with $a = \text{gain}\cdot\sqrt{6/(\text{fan}_\text{in} +
# \text{fan}_\text{out})}$; for the first layer (4 inputs, 8 outputs) $a = \sqrt{6/12} \approx 0.707$.

# %%
a = math.sqrt(6 / (4 + 8))
assert np.abs(net[0].weight.numpy()).max() <= a
assert (net[2].weight.numpy() == 42).all()

# %% [markdown]
# 32 values only show the bound. On a large weight the whole distribution shows: the values
# fill $(-a, a)$, and their standard deviation is that of a uniform distribution,
# $a/\sqrt{3} = \text{gain}\cdot\sqrt{2/(\text{fan}_\text{in} + \text{fan}_\text{out})}$.

# %%
big = init.xavier_uniform_(nn.Parameter(dt.zeros(400, 800)))
a_big = math.sqrt(6 / (800 + 400))
values = big.numpy().astype(np.float64)
print(f"bound {a_big:.4f}, largest |w| {np.abs(values).max():.4f}, "
      f"std {values.std():.4f} (formula {a_big / math.sqrt(3):.4f})")

# %% tags=["twin-torch"]
big = nn.init.xavier_uniform_(torch.empty(400, 800))   # any tensor, not only a layer's
a_big = math.sqrt(6 / (800 + 400))
values = big.numpy().astype(np.float64)
print(f"bound {a_big:.4f}, largest |w| {np.abs(values).max():.4f}, "
      f"std {values.std():.4f} (formula {a_big / math.sqrt(3):.4f})")

# %%
assert np.abs(values).max() <= a_big and np.abs(values).max() > 0.99 * a_big
assert abs(values.std() / (a_big / math.sqrt(3)) - 1) < 0.01      # 320,000 values: 1 % is 12 standard errors

# %% [markdown]
# Instead of one function per block you can also pick parameters by **name**, which is handy
# when the rule depends on the kind of parameter rather than on the layer:

# %%
for name, p in net.named_parameters():
    if name.endswith("weight"):
        init.xavier_uniform_(p)
    else:                                     # "0.bias", "2.bias"
        init.zeros_(p)
print([f"{name}: {tuple(p.shape)}" for name, p in net.named_parameters()])
assert all((p.numpy() == 0).all() for name, p in net.named_parameters() if name.endswith("bias"))

# %% tags=["twin-torch", "twin-same-numbers"]
for name, p in net.named_parameters():
    if name.endswith("weight"):
        nn.init.xavier_uniform_(p)
    else:                                     # "0.bias", "2.bias"
        nn.init.zeros_(p)
print([f"{name}: {tuple(p.shape)}" for name, p in net.named_parameters()])

# %% [markdown]
# Xavier and Kaiming compute their range from the fans of a **matrix**, so they refuse a 1-D
# bias — with a message that says what to use instead:

# %% tags=["raises-exception"]
init.xavier_uniform_(net[0].bias)

# %% tags=["twin-torch", "raises-exception"]
nn.init.xavier_uniform_(net[0].bias)

# %% [markdown]
# ## A custom initializer
#
# When no built-in rule fits, write your own: draw with a built-in one, then change the values
# in place. A classic exercise: each weight is
#
# * uniform on $[5, 10]$ with probability 1/4,
# * zero with probability 1/2,
# * uniform on $[-10, -5]$ with probability 1/4.
#
# Drawing uniformly on $[-10, 10]$ and then zeroing every weight with $|w| < 5$ gives exactly
# that. The zeroing writes into the parameter, so it happens under `dt.no_grad()` (autograd must
# not record it as part of the model's computation).

# %%
def my_init(m):
    if isinstance(m, nn.Linear):
        print("Init", [(name, tuple(p.shape)) for name, p in m.named_parameters()][0])
        init.uniform_(m.weight, -10, 10)
        with dt.no_grad():
            m.weight[m.weight.abs() < 5] = 0      # a boolean mask picks the small ones

dt.manual_seed(0)
net.apply(my_init)
print(net[0].weight.numpy()[:2])

# %% tags=["twin-torch"]
def my_init(m):
    if isinstance(m, nn.Linear):
        print("Init", [(name, tuple(p.shape)) for name, p in m.named_parameters()][0])
        nn.init.uniform_(m.weight, -10, 10)
        with torch.no_grad():
            m.weight[m.weight.abs() < 5] = 0      # a boolean mask picks the small ones

torch.manual_seed(0)
net.apply(my_init)
print(net[0].weight.detach().numpy()[:2])

# %%
for layer in (net[0], net[2]):
    w = layer.weight.numpy()
    assert np.abs(w).max() <= 10                      # still within [-10, 10]
    assert (np.abs(w[w != 0]) >= 5).all()             # every survivor has |w| >= 5

# %% [markdown]
# On a bigger matrix the histogram shows the shape of the distribution: a spike of zeros holding
# half of the weights and two flat shoulders.

# %%
dt.manual_seed(0)
big = nn.Linear(200, 200)
my_init(big)
w = big.weight.numpy().ravel()
print(f"share of zeros: {(w == 0).mean():.3f}   on [5, 10]: {(w >= 5).mean():.3f}   "
      f"on [-10, -5]: {(w <= -5).mean():.3f}")

fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
ax.hist(w, bins=80, range=(-10, 10), color="tab:blue")
ax.set_yscale("log")
ax.set_xlabel("weight value")
ax.set_ylabel("count (log scale)")
ax.set_title("The custom initializer on a 200 x 200 weight")
plot.show()

# %% tags=["twin-torch"]
# The histogram is left out; its three shares are printed.
torch.manual_seed(0)
big = nn.Linear(200, 200)
my_init(big)
w = big.weight.detach().numpy().ravel()
print(f"share of zeros: {(w == 0).mean():.3f}   on [5, 10]: {(w >= 5).mean():.3f}   "
      f"on [-10, -5]: {(w <= -5).mean():.3f}")

# %%
assert abs((w == 0).mean() - 0.5) < 0.02
assert abs((w >= 5).mean() - 0.25) < 0.02 and abs((w <= -5).mean() - 0.25) < 0.02

# %% [markdown] tags=["claim-paddle-init-assign-initializer"]
# Another way, often simpler for an elaborate rule: compute the values with NumPy and copy them
# in with `init.assign_` (Paddle's `Assign` initializer).

# %%
rng = np.random.default_rng(0)
values = rng.uniform(-10, 10, size=(8, 4))
values[np.abs(values) < 5] = 0
init.assign_(net[0].weight, values)
assert np.allclose(net[0].weight.numpy(), values)

# %% tags=["twin-torch"]
# PyTorch has no assign_ initializer: copy_ the NumPy values into the weight under no_grad.
rng = np.random.default_rng(0)
values = rng.uniform(-10, 10, size=(8, 4))
values[np.abs(values) < 5] = 0
with torch.no_grad():
    net[0].weight.copy_(torch.from_numpy(values))    # float64 in, kept float32
print(net[0].weight.detach().numpy()[:2])

# %% tags=["twin-paddle"]
import math

import numpy as np
import paddle
from paddle import nn

np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)
values = rng.uniform(-10, 10, size=(8, 4))
values[np.abs(values) < 5] = 0
paddle.seed(0)
layer = nn.Linear(4, 8)                               # Paddle's weight is (in, out): (4, 8)
nn.initializer.Assign(values.T)(layer.weight)         # the Assign object, called on it
print(layer.weight.numpy().T[:2])

# %% [markdown] tags=["claim-paddle-init-d2l-code-typeerror"]
# ### Going deeper: the Paddle edition of D2L
# Why its initialization code changes nothing, shown with dltutor's Paddle-style objects.

# %% [markdown] tags=["claim-paddle-init-d2l-code-typeerror", "claim-paddle-init-object-acts-only-when-called", "claim-paddle-init-xavier-weight-as-fan-in", "claim-paddle-init-to-tensor-copy-set-value"]
# **Coming from the Paddle edition of D2L?** Its code for this section does not initialize
# anything. In Paddle 3.3 its two functions even stop with a `TypeError` (`paddle.zeros(m.bias)`:
# a parameter is not a shape; `m *= h`: a float32 tensor times a bool mask), and with those two
# lines mended they would still change nothing, for two reasons worth knowing in any framework:
#
# * `paddle.nn.initializer.Normal(mean=0.0, std=0.01)` on a line of its own *makes* an
#   initializer object and throws it away. An initializer does something only when it is called
#   on a parameter (`Normal(0.0, 0.01)(m.weight)`) or handed to a layer
#   (`weight_attr=ParamAttr(initializer=...)`). A `paddle.zeros(...)` would likewise only
#   make a new tensor. (`XavierUniform(m.weight, -10, 10)` even passes the weight as `fan_in`,
#   -10 as `fan_out` and 10 as `gain`; dltutor refuses that, Paddle 3.3 makes the object.)
# * `m = paddle.to_tensor(m.weight)` followed by `m *= h` multiplies a **copy**: the name `m`
#   now points to a new tensor, and the layer's weight is untouched. Change the parameter
#   itself: `m.weight.set_value(m.weight * h)` in Paddle, in place under `no_grad()` here.
#
# dltutor has the same initializer objects (`init.Normal`, `init.Uniform`, ... with Paddle's
# arguments), so both mistakes can be shown here:

# %%
layer = nn.Linear(4, 8)
original = layer.weight.numpy().copy()
init.Normal(mean=0.0, std=0.01)                       # made and thrown away
copy = layer.weight.numpy().copy()
copy *= np.abs(copy) >= 0.25                          # a copy, masked
print("weight unchanged after both:", np.array_equal(layer.weight.numpy(), original))

init.Uniform(-10.0, 10.0)(layer.weight)               # called on the parameter: applied
with dt.no_grad():
    layer.weight[layer.weight.abs() < 5] = 0          # the parameter itself, in place
w_now = layer.weight.numpy()
print("now every weight is 0 or has |w| >= 5:", bool(np.all((w_now == 0) | (np.abs(w_now) >= 5))))

# %% tags=["twin-torch"]
# PyTorch has no initializer objects: nn.init's functions act at once. The copy trap is the same.
layer = nn.Linear(4, 8)
original = layer.weight.detach().clone()
copy = layer.weight.detach().clone()
copy *= copy.abs() >= 0.25                            # a copy, masked
print("weight unchanged by masking a copy:", torch.equal(layer.weight, original))

nn.init.uniform_(layer.weight, -10.0, 10.0)           # a function: applied to the parameter
with torch.no_grad():
    layer.weight[layer.weight.abs() < 5] = 0          # the parameter itself, in place
w_now = layer.weight.detach().numpy()
print("now every weight is 0 or has |w| >= 5:", bool(np.all((w_now == 0) | (np.abs(w_now) >= 5))))

# %% tags=["twin-paddle"]
paddle.seed(0)
layer = nn.Linear(4, 8)
original = layer.weight.numpy().copy()
nn.initializer.Normal(mean=0.0, std=0.01)             # made and thrown away
copy = layer.weight.clone()                           # a copy, as D2L's paddle.to_tensor(m.weight)
copy *= (copy.abs() >= 0.25).astype("float32")        # a copy, masked
print("weight unchanged after both:", np.array_equal(layer.weight.numpy(), original))

nn.initializer.Uniform(-10.0, 10.0)(layer.weight)     # called on the parameter: applied
w = layer.weight
w.set_value(w * (w.abs() >= 5).astype("float32"))     # the parameter itself, in place
w_now = layer.weight.numpy()
print("now every weight is 0 or has |w| >= 5:", bool(np.all((w_now == 0) | (np.abs(w_now) >= 5))))

# %%
assert not np.array_equal(copy, original)             # the copy did change ...
assert np.abs(w_now).max() > 1                        # the Uniform(-10, 10) was applied
assert bool(np.all((w_now == 0) | (np.abs(w_now) >= 5)))
try:
    init.XavierUniform(layer.weight, -10, 10)         # the weight passed as fan_in
    refused = None
except TypeError as err:
    refused = str(err)
print(refused)
assert refused is not None and "called on the parameter" in refused

# %% tags=["twin-paddle"]
made = nn.initializer.XavierUniform(layer.weight, -10, 10)   # the weight passed as fan_in
print(type(made).__name__, "made without a complaint; the weight unchanged:",
      np.array_equal(layer.weight.numpy(), w_now))

# %% [markdown] tags=["claim-torch-init-calculate-gain-table"]
# ## Why initialization matters
#
# Here is the argument behind every formula above. A Linear layer adds up `fan_in` products,
# so (for independent, zero-mean values)
#
# $$\mathrm{Var}(\text{output}) = \text{fan}_\text{in}\cdot\mathrm{Var}(w)\cdot
# \mathbb{E}[\text{input}^2].$$
#
# To pass the signal on at the same size, $\mathrm{Var}(w)$ must be about $1/\text{fan}_\text{in}$,
# times a correction for what the activation does to it — the **gain**. ReLU zeroes half of its
# inputs, halving $\mathbb{E}[x^2]$, so ReLU layers need twice the variance: gain $\sqrt 2$
# (Kaiming/He). tanh squashes large values; its gain is $5/3$. Xavier (Glorot) uses the average
# of `fan_in` and `fan_out`, a compromise that keeps the backward pass (where the roles of the
# fans swap) in range too. `init.calculate_gain` holds the table (the same numbers as PyTorch's
# `nn.init.calculate_gain`):

# %%
gains = [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)]
print(f"{'nonlinearity':22s} gain")
for name, param in gains:
    label = name if param is None else f"{name} (slope {param})"
    print(f"{label:22s} {init.calculate_gain(name, param):.4f}")

# %% tags=["twin-torch", "twin-same-numbers"]
gains = [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)]
print(f"{'nonlinearity':22s} gain")
for name, param in gains:
    label = name if param is None else f"{name} (slope {param})"
    print(f"{label:22s} {nn.init.calculate_gain(name, param):.4f}")

# %%
assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
assert math.isclose(init.calculate_gain("relu"), math.sqrt(2))
assert math.isclose(init.calculate_gain("tanh"), 5 / 3)
assert math.isclose(init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / (1 + 0.2 ** 2)))
assert math.isclose(init.calculate_gain("selu"), 3 / 4)

# %% [markdown] tags=["claim-torch-module-double-float64"]
# Now the experiment. A network of 15 blocks, each a Linear layer of width 64 followed by an
# activation, receives a batch of 128 inputs with std 1. For each block we measure
#
# * the std of its **output** on the way forward, and
# * the std of the **gradient** with respect to that output on the way back, starting from a
#   gradient of std 1 at the top (the loss is the output times a fixed random tensor).
#
# `plot.layer_statistics` runs the network with hooks on each block and draws one line per
# initializer; a good initializer keeps both lines flat.
#
# We measure in **float64** (`net.double()`, as in PyTorch; the inputs are float64 too), so the
# digits printed are the same on every computer (the Going deeper section below says why).

# %%
class Dense(nn.Module):
    """One block: a Linear layer followed by an activation."""

    def __init__(self, width, activation):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.act = activation()

    def forward(self, x):
        return self.act(self.linear(x))


DEPTH, WIDTH = 15, 64

def deep_net(activation, weight_init=None, seed=1):
    """15 Dense blocks in float64; weight_init(w) replaces the default weights (biases then
    start at 0)."""
    dt.manual_seed(seed)
    net = nn.Sequential(*[Dense(WIDTH, activation) for _ in range(DEPTH)])
    if weight_init is not None:
        def fn(m):
            if isinstance(m, nn.Linear):
                weight_init(m.weight)
                init.zeros_(m.bias)
        net.apply(fn)
    return net.double()

tanh_inits = {
    "normal, std 1": lambda w: init.normal_(w, 0.0, 1.0),
    "normal, std 0.01": lambda w: init.normal_(w, 0.0, 0.01),
    "default (U(±1/sqrt(fan_in)))": None,
    "Xavier, gain 5/3": lambda w: init.xavier_normal_(w, gain=init.calculate_gain("tanh")),
}
relu_inits = {
    "normal, std 1": lambda w: init.normal_(w, 0.0, 1.0),
    "normal, std 0.01": lambda w: init.normal_(w, 0.0, 0.01),
    "Xavier, gain 1": lambda w: init.xavier_normal_(w),
    "Kaiming, gain sqrt(2)": lambda w: init.kaiming_normal_(w, nonlinearity="relu"),
}

def measure(seed, axes):
    """The std of every block's output and gradient for every initializer, drawn on axes.

    Returns three dicts keyed by (network, initializer): activation stds and gradient stds
    per block, and the fraction of saturated outputs (|y| > 0.99) of the last block."""
    dt.manual_seed(seed)
    x = dt.randn(128, WIDTH, dtype=dt.float64)
    direction = dt.randn(128, WIDTH, dtype=dt.float64)
    loss_fn = lambda out: (out * direction).sum()    # its gradient at the output is `direction`
    act_std, grad_std, saturated = {}, {}, {}
    for row, (activation, inits) in enumerate([(nn.Tanh, tanh_inits), (nn.ReLU, relu_inits)]):
        for label, weight_init in inits.items():
            net = deep_net(activation, weight_init, seed=seed + 1)
            key = (activation.__name__, label)
            a = plot.layer_statistics(net, x, ax=axes[row, 0], label=label, log=True)
            g = plot.layer_statistics(net, x, ax=axes[row, 1], kind="gradient",
                                      loss_fn=loss_fn, label=label, log=True)
            act_std[key] = np.array([s for _, s in a])
            grad_std[key] = np.array([s for _, s in g])
            with dt.no_grad():
                saturated[key] = float((np.abs(net(x).numpy()) > 0.99).mean())
        axes[row, 0].set_title(f"{activation.__name__} network: std of each block's output")
        axes[row, 1].set_title(f"{activation.__name__} network: std of the gradient "
                               "(backward runs right to left)")
    return act_std, grad_std, saturated

fig, axes = plt.subplots(4, 1, figsize=(7.2, 13), layout="constrained")
axes = axes.reshape(2, 2)
act_std, grad_std, saturated = measure(0, axes)
plot.show()

# %% tags=["twin-torch"]
class Dense(nn.Module):
    """One block: a Linear layer followed by an activation."""

    def __init__(self, width, activation):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.act = activation()

    def forward(self, x):
        return self.act(self.linear(x))


DEPTH, WIDTH = 15, 64

def deep_net(activation, weight_init=None, seed=1):
    """15 Dense blocks in float64; weight_init(w) replaces the default weights (biases 0)."""
    torch.manual_seed(seed)
    net = nn.Sequential(*[Dense(WIDTH, activation) for _ in range(DEPTH)])
    for m in net.modules() if weight_init else []:
        if isinstance(m, nn.Linear):
            weight_init(m.weight)
            nn.init.zeros_(m.bias)
    return net.double()

print(deep_net(nn.Tanh)[0], next(deep_net(nn.Tanh).parameters()).dtype)

# %% tags=["twin-torch"]
tanh_inits = {"normal, std 1": lambda w: nn.init.normal_(w, 0.0, 1.0),
              "normal, std 0.01": lambda w: nn.init.normal_(w, 0.0, 0.01),
              "default (U(±1/sqrt(fan_in)))": None,
              "Xavier, gain 5/3": lambda w: nn.init.xavier_normal_(w, gain=nn.init.calculate_gain("tanh"))}
relu_inits = {"normal, std 1": lambda w: nn.init.normal_(w, 0.0, 1.0),
              "normal, std 0.01": lambda w: nn.init.normal_(w, 0.0, 0.01),
              "Xavier, gain 1": lambda w: nn.init.xavier_normal_(w),
              "Kaiming, gain sqrt(2)": lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu")}

def keeper(outs):
    """A forward hook that keeps each block's output, and its gradient after backward."""
    def hook(module, inputs, out):
        out.retain_grad()
        outs.append(out)                              # returns None: the output stays as it is
    return hook

print(len(tanh_inits) + len(relu_inits), "initializers to compare")

# %% tags=["twin-torch"]
def measure(seed):
    """Per (network, initializer): std of each block's output and of its gradient (forward
    hooks keep the outputs), and the share of saturated outputs of the last block."""
    torch.manual_seed(seed)
    x, direction = torch.randn(128, WIDTH, dtype=torch.float64), torch.randn(128, WIDTH, dtype=torch.float64)
    act_std, grad_std, saturated = {}, {}, {}
    for activation, inits in [(nn.Tanh, tanh_inits), (nn.ReLU, relu_inits)]:
        for label, weight_init in inits.items():
            net, outs, key = deep_net(activation, weight_init, seed=seed + 1), [], (activation.__name__, label)
            for block in net:
                block.register_forward_hook(keeper(outs))
            y = net(x)
            (y * direction).sum().backward()         # the gradient at the output is `direction`
            act_std[key] = np.array([o.std(correction=0).item() for o in outs])
            grad_std[key] = np.array([o.grad.std(correction=0).item() for o in outs])
            saturated[key] = (y.abs() > 0.99).double().mean().item()
    return act_std, grad_std, saturated

act_std, grad_std, saturated = measure(0)             # the figure is left out
print(len(act_std), "networks measured, block by block")

# %%
print(f"{'network':6s} {'initializer':30s} {'activation std: block 0':>24s} {'block 14':>9s}   "
      f"{'gradient std: block 0':>22s} {'block 14':>9s}")
for key in act_std:
    print(f"{key[0]:6s} {key[1]:30s} {act_std[key][0]:24.3g} {act_std[key][-1]:9.3g}   "
          f"{grad_std[key][0]:22.3g} {grad_std[key][-1]:9.3g}")

# %% tags=["twin-torch"]
# Two digits, not three: in the saturated tanh network the gradient's third digit is rounding
# noise, and PyTorch's kernels round differently on different CPUs.
print(f"{'network':6s} {'initializer':30s} {'activation std: block 0':>24s} {'block 14':>9s}   "
      f"{'gradient std: block 0':>22s} {'block 14':>9s}")
for key in act_std:
    print(f"{key[0]:6s} {key[1]:30s} {act_std[key][0]:24.2g} {act_std[key][-1]:9.2g}   "
          f"{grad_std[key][0]:22.2g} {grad_std[key][-1]:9.2g}")

# %% [markdown]
# What the plots say, each checked below:
#
# * **std 0.01 — vanishing.** Every layer multiplies the signal by about
#   $0.01\sqrt{64} = 0.08$. After 15 layers nothing is left of it, forward or backward:
#   the first layers receive essentially no gradient and cannot learn.
# * **std 1 — exploding or saturating.** Each layer multiplies by about $\sqrt{64} = 8$
#   (by about $\sqrt{32} \approx 5.7$ after a ReLU, which zeroes half of the values). In the ReLU network the activations grow without bound. In the tanh network they cannot
#   (tanh stays within ±1), so the units **saturate**: most outputs sit at ±1. And on the way
#   back, the large weights make the gradient grow by orders of magnitude towards the first layer.
# * **Xavier for tanh, Kaiming for ReLU — steady.** Both lines stay within a small factor from
#   the first block to the last.
# * **The wrong gain is not enough.** Xavier without the ReLU gain loses a factor $\sqrt 2$ per
#   ReLU layer; and the default $U(\pm 1/\sqrt{\text{fan}_\text{in}})$, whose variance is only
#   $1/(3\,\text{fan}_\text{in})$, lets the tanh network's gradient fade by three orders of magnitude.

# %%
def spread(values):
    """How much a std varies across the blocks: largest / smallest."""
    return values.max() / values.min()

def claims_hold(act_std, grad_std, saturated):
    # std 0.01: the signal vanishes, forward and backward
    for net_kind in ("Tanh", "ReLU"):
        key = (net_kind, "normal, std 0.01")
        assert act_std[key][-1] < 1e-3 * act_std[key][0]
        assert grad_std[key][0] < 1e-3 * grad_std[key][-1]

    # std 1: tanh saturates, ReLU explodes, gradients explode towards the input
    assert saturated[("Tanh", "normal, std 1")] > 0.5
    assert act_std[("ReLU", "normal, std 1")][-1] > 1e6 * act_std[("ReLU", "normal, std 1")][0]
    assert grad_std[("Tanh", "normal, std 1")][0] > 1e3 * grad_std[("Tanh", "normal, std 1")][-1]

    # the matching initializer keeps both within a factor of 10 over 15 blocks
    for key in [("Tanh", "Xavier, gain 5/3"), ("ReLU", "Kaiming, gain sqrt(2)")]:
        assert spread(act_std[key]) < 10 and spread(grad_std[key]) < 10, key

    # the wrong gain lets the signal fade
    assert act_std[("ReLU", "Xavier, gain 1")][-1] < 0.1 * act_std[("ReLU", "Xavier, gain 1")][0]
    assert spread(grad_std[("Tanh", "default (U(±1/sqrt(fan_in)))")]) > 100
    return True

assert claims_hold(act_std, grad_std, saturated)

# %% tags=["twin-torch"]
# The kit's claims, checked on PyTorch's networks (the same code: only dicts of NumPy arrays).
def spread(values):
    return values.max() / values.min()

def claims_hold(act_std, grad_std, saturated):
    for net_kind in ("Tanh", "ReLU"):                 # std 0.01: vanishing
        key = (net_kind, "normal, std 0.01")
        assert act_std[key][-1] < 1e-3 * act_std[key][0] and grad_std[key][0] < 1e-3 * grad_std[key][-1]
    tanh1, relu1 = ("Tanh", "normal, std 1"), ("ReLU", "normal, std 1")
    assert saturated[tanh1] > 0.5 and act_std[relu1][-1] > 1e6 * act_std[relu1][0]
    assert grad_std[tanh1][0] > 1e3 * grad_std[tanh1][-1]
    for key in [("Tanh", "Xavier, gain 5/3"), ("ReLU", "Kaiming, gain sqrt(2)")]:
        assert spread(act_std[key]) < 10 and spread(grad_std[key]) < 10, key
    assert act_std[("ReLU", "Xavier, gain 1")][-1] < 0.1 * act_std[("ReLU", "Xavier, gain 1")][0]
    assert spread(grad_std[("Tanh", "default (U(±1/sqrt(fan_in)))")]) > 100
    return True

print("the claims hold in PyTorch:", claims_hold(act_std, grad_std, saturated))

# %% [markdown]
# Two closing remarks. First, these are statements about the **start** of training; normalization
# layers (BatchNorm, LayerNorm) and residual connections make deep networks much less sensitive
# to it — a topic of its own. Second, the default of a Linear layer is fine for the shallow
# networks of these notebooks, but for a deep stack, pick the initializer that matches the
# activation.

# %% [markdown]
# ### Going deeper: why the measurement runs in float64
# What float32 would do to the printed digits of the saturated tanh network.

# %% [markdown]
# Training would use float32, but a measurement should give the same digits on every
# computer, and in float32 one of these numbers does not: `tanh(x)` is exactly ±1 in float32
# once `|x| > 9`, and a little below that its slope `1 - tanh(x)**2` keeps only a few correct
# bits. In the tanh network started with std 1 most units sit there, so the gradient flowing
# back through them is largely rounding noise, and its std comes out about 10% different on a
# CPU whose matrix kernels round differently. float64 pushes that noise far below the three
# digits printed here.

# %% [markdown]
# ### Going deeper: the same claims for other seeds
# The experiment again with four more seeds: the first draw was not luck.

# %% [markdown]
# One draw of weights and inputs could be lucky. The same claims hold for other seeds (other
# weights, other inputs); the plots of these runs are drawn off screen and thrown away:

# %%
# tqdm draws a progress bar in your run; the tests' short run (quick mode) draws none, as
# its timings would change this cell's stored output from one run to the next.
for seed in tqdm(range(1, 5), desc="seeds", disable=dt.quick_mode()):
    fig, axes = plt.subplots(2, 2)
    assert claims_hold(*measure(seed, axes)), seed
    plt.close(fig)
print("the claims hold for seeds 0 to 4")

# %% tags=["twin-torch"]
for seed in range(1, 5):
    assert claims_hold(*measure(seed)), seed
print("the claims hold for seeds 0 to 4")

# %% [markdown] tags=["claim-torch-forward-hook-output-stds"]
# ### Going deeper: the same measurement in PyTorch
# The forward hooks behind `plot.layer_statistics`, in lines that run unchanged in PyTorch.

# %% [markdown] tags=["claim-torch-forward-hook-output-stds"]
# **The same measurement in PyTorch.** `plot.layer_statistics` is the kit's (it calls
# `dltutor.stats.activation_stats` and `gradient_stats`). Its core is a forward hook on each
# block that notes the std of the block's output, a few lines that run unchanged in PyTorch
# with `torch` for `dt` (`correction=0` divides by n, as the kit's statistics do):

# %%
def output_stds(model, x):
    """The std of each block's output in one forward pass, found with forward hooks."""
    stds = []
    handles = [block.register_forward_hook(
                   lambda module, inputs, out: stds.append(out.std(correction=0).item()))
               for block in model]
    with dt.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return stds


net = deep_net(nn.Tanh, tanh_inits["Xavier, gain 5/3"])
x = dt.randn(128, WIDTH, dtype=dt.float64)
by_hooks = output_stds(net, x)
by_kit = [std for _, _, std in dt.stats.activation_stats(net, x)]
print("blocks 0, 7, 14:", np.round([by_hooks[i] for i in (0, 7, 14)], 3))

# %% tags=["twin-torch"]
def output_stds(model, x):
    """The std of each block's output in one forward pass, found with forward hooks."""
    stds = []
    handles = [block.register_forward_hook(
                   lambda module, inputs, out: stds.append(out.std(correction=0).item()))
               for block in model]
    with torch.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return stds


net = deep_net(nn.Tanh, tanh_inits["Xavier, gain 5/3"])
x = torch.randn(128, WIDTH, dtype=torch.float64)
by_hooks = output_stds(net, x)
print("blocks 0, 7, 14:", np.round([by_hooks[i] for i in (0, 7, 14)], 3))

# %%
assert len(by_hooks) == DEPTH
assert np.allclose(by_hooks, by_kit, rtol=1e-9)

# %% [markdown] tags=["claim-torch-init-linear-kaiming-a-sqrt5"]
# ### Going deeper: where PyTorch's default range comes from
# How `kaiming_uniform_` with `a=math.sqrt(5)` gives the first section's bound $1/\sqrt{\text{fan}_\text{in}}$.

# %% [markdown] tags=["claim-torch-init-linear-kaiming-a-sqrt5"]
# **Where the range comes from.** PyTorch does not write the bound $1/\sqrt{\text{fan}_\text{in}}$ down directly. Its
# `Linear.reset_parameters` calls `kaiming_uniform_(weight, a=math.sqrt(5))`, the He
# initializer for a leaky ReLU with negative slope $a=\sqrt 5$. That initializer draws from
# $U(-\text{bound}, \text{bound})$ with
#
# $$\text{bound} = \sqrt 3 \cdot \frac{\text{gain}}{\sqrt{\text{fan}_\text{in}}},\qquad
# \text{gain} = \sqrt{\frac{2}{1 + a^2}} = \sqrt{\frac{2}{6}} = \frac{1}{\sqrt 3},$$
#
# so the two $\sqrt 3$ cancel and $\text{bound} = 1/\sqrt{\text{fan}_\text{in}}$. The odd-looking
# $a=\sqrt 5$ is simply the number that makes this come out. dltutor's layers make the same call,
# so the same seed gives exactly the same weights as calling the initializer yourself (`wide`
# is the 1000-input layer of the first section):

# %%
gain = init.calculate_gain("leaky_relu", math.sqrt(5))
print(f"gain for a = sqrt(5): {gain:.6f}   1/sqrt(3) = {1 / math.sqrt(3):.6f}")
print(f"sqrt(3) * gain / sqrt(1000) = {math.sqrt(3) * gain / math.sqrt(1000):.6f}")

dt.manual_seed(0)
by_hand = nn.Parameter(dt.zeros(500, 1000))
_ = init.kaiming_uniform_(by_hand, a=math.sqrt(5))   # the layer draws its weight first, then its bias

# %% tags=["twin-torch", "twin-same-numbers"]
gain = nn.init.calculate_gain("leaky_relu", math.sqrt(5))
print(f"gain for a = sqrt(5): {gain:.6f}   1/sqrt(3) = {1 / math.sqrt(3):.6f}")
print(f"sqrt(3) * gain / sqrt(1000) = {math.sqrt(3) * gain / math.sqrt(1000):.6f}")

torch.manual_seed(0)
by_hand = nn.init.kaiming_uniform_(torch.empty(500, 1000), a=math.sqrt(5))
print("the same as the weights of the layer wide, bit for bit:", torch.equal(by_hand, wide.weight))

# %%
assert math.isclose(gain, 1 / math.sqrt(3))
assert math.isclose(math.sqrt(3) * gain / math.sqrt(1000), bound)
assert np.array_equal(by_hand.numpy(), wide.weight.numpy())    # bit for bit the layer's weights

# %% [markdown] tags=["claim-torch-names-03", "claim-paddle-names-03", "claim-mge-names-03", "claim-torch-init-linear-default-uniform-weight-bias", "claim-paddle-linear-default-xavier-zero-bias", "claim-mge-init-linear-default-normal", "claim-torch-init-functions-in-place", "claim-paddle-init-object-acts-only-when-called"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | default Linear init | U(±1/sqrt(fan_in)), weight and bias | same | Xavier-uniform weight, zero bias | N(0, 1/fan_in) weight, zero bias |
# | visit every layer | `net.apply(fn)` | `net.apply(fn)` | `net.apply(fn)` | `net.apply(fn)` |
# | normal / uniform / constant | `init.normal_`, `init.uniform_`, `init.constant_` (objects: `init.Normal`, `init.Uniform`, `init.Constant`) | `nn.init.normal_`, `uniform_`, `constant_` | `nn.initializer.Normal`, `Uniform`, `Constant` | `module.init.normal_`, `uniform_`, `fill_` |
# | Xavier (Glorot) | `init.xavier_uniform_`, `init.xavier_normal_` (objects: `init.XavierUniform`, `init.XavierNormal`) | `nn.init.xavier_uniform_`, `xavier_normal_` | `nn.initializer.XavierUniform`, `XavierNormal` | `module.init.xavier_uniform_`, `xavier_normal_` |
# | Kaiming (He) | `init.kaiming_uniform_`, `init.kaiming_normal_` (objects: `init.KaimingUniform`, `init.KaimingNormal`) | `nn.init.kaiming_uniform_`, `kaiming_normal_` | `nn.initializer.KaimingUniform`, `KaimingNormal` | `module.init.msra_uniform_`, `msra_normal_` |
# | gain of an activation | `init.calculate_gain` | `nn.init.calculate_gain` | `nn.initializer.calculate_gain` | `module.init.calculate_gain` |
# | an initializer for one layer | `nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02))` | `init.normal_(layer.weight, 0.0, 0.02)` after making it | `nn.Linear(4, 8, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)))` | `M.init.normal_(layer.weight, 0, 0.02)` after making it |

# %% [markdown] tags=["claim-paddle-init-object-acts-only-when-called"]
# ### Going deeper: Paddle's initializer objects
# How Paddle hands an initializer to a layer, and the same objects in dltutor.

# %% [markdown] tags=["claim-torch-init-functions-in-place", "claim-paddle-init-object-acts-only-when-called"]
# In Paddle an initializer is an object handed to the layer through
# `weight_attr=ParamAttr(initializer=...)` when it is made; calling one on an existing parameter
# also works (`Normal(0.0, 0.01)(layer.weight)`). PyTorch and MegEngine use functions that change
# an existing tensor in place, and so do these chapters. dltutor has Paddle's objects too, so
# Paddle code that gives one layer its own initializer translates line by line; each object
# calls the function of the same name:

# %%
dt.manual_seed(0)
fc = nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02), bias_init=init.Constant(0.0))
print(init.Normal(0.0, 0.02), "| weight std:", round(float(fc.weight.numpy().std()), 4),
      "| bias:", fc.bias.numpy()[:3])

# %% tags=["twin-torch"]
# PyTorch has no weight_init= argument: make the layer, then initialize its tensors in place.
torch.manual_seed(0)
fc = nn.Linear(4, 8)
nn.init.normal_(fc.weight, 0.0, 0.02)
nn.init.constant_(fc.bias, 0.0)
print("nn.init.normal_(fc.weight, 0.0, 0.02) | weight std:",
      round(fc.weight.std(correction=0).item(), 4), "| bias:", fc.bias.detach().numpy()[:3])

# %% tags=["twin-paddle"]
from paddle import ParamAttr
from paddle.nn.initializer import Constant, Normal, XavierUniform

paddle.seed(0)
fc = nn.Linear(4, 8, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)),
               bias_attr=ParamAttr(initializer=Constant(0.0)))
print("ParamAttr(initializer=Normal(0.0, 0.02)) | weight std:",
      round(float(fc.weight.numpy().std()), 4), "| bias:", fc.bias.numpy()[:3])

# %%
dt.manual_seed(1)
by_object = init.XavierUniform()(nn.Parameter(dt.zeros(8, 4)))
dt.manual_seed(1)
by_function = init.xavier_uniform_(nn.Parameter(dt.zeros(8, 4)))
assert np.array_equal(by_object.numpy(), by_function.numpy())      # one implementation
assert (fc.bias.numpy() == 0).all() and 0.01 < fc.weight.numpy().std() < 0.03

# %% tags=["twin-paddle"]
paddle.seed(1)
weight = nn.Linear(4, 8).weight                       # Paddle's layout: (in, out) = (4, 8)
XavierUniform()(weight)                               # the object, called on a parameter
print(f"largest |w| {float(weight.abs().max()):.4f} <= bound sqrt(6 / 12) = {math.sqrt(0.5):.4f}")

# %% [markdown]
# ## Summary
#
# **In two lines:** an initializer changes a parameter's numbers in place, never the object that the
# optimizer and every tie hold. The scale of those numbers decides whether signal and gradient
# survive a deep stack: Xavier for tanh, Kaiming for ReLU.
#
# * A Linear layer starts uniform on $\pm 1/\sqrt{\text{fan}_\text{in}}$ (weight and bias), which keeps
#   one layer's output scale independent of its width.
# * `net.apply(fn)` runs `fn` on every module; check the type inside `fn`. Apply it to a part of
#   the network (`net[0].apply(...)`) or select parameters by name to treat blocks differently.
# * Custom initializers: draw with a built-in one and change the values in place under
#   `dt.no_grad()`, or compute them in NumPy and `init.assign_` them.
# * Initializer objects (`init.Normal(0.0, 0.02)`, given as `weight_init=` when a layer is made)
#   call the same functions.
# * In a deep network the scale of the start decides whether signal and gradient survive:
#   Xavier with gain 5/3 for tanh, Kaiming for ReLU.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("03")

# %% [markdown]
# **1.** Make a `nn.Conv2d(3, 16, kernel_size=5)`. Within which bound $b$ does the default put
# its weights ($\pm b$)? Put $b$ in `conv_bound` and check it against the layer.

# %%
conv_bound = ____
ex.q1.check()

# %% [markdown]
# **2.** Write an initializer `identity_init(m)` that makes a square Linear layer start as the
# identity map: the layer returns its input. `init.eye_(w)` fills a square weight `w` with the
# identity matrix (ones on the diagonal, zeros elsewhere), in place like the other `init`
# functions. The check hands `identity_init` to `net.apply` on networks of other widths, so it
# meets every module of the tree, not only Linear layers.

# %%
identity_init = ____
ex.q2.check()

# %% [markdown]
# **3.** What gain does Xavier need for tanh (`tanh_gain`), and why is it above 1? In the
# deep-network experiment, try `nn.Sigmoid` too: why is sigmoid harder? *(Its outputs are not
# centred on zero, and its slope at 0 is 1/4.)*

# %%
tanh_gain = ____
ex.q3.check()

# %% [markdown]
# **4.** (Not checked: an experiment.) Train the 15-block tanh network on
# `dltutor.data.make_moons` (add a first layer 2 -> 64 and a last layer 64 -> 2) for 100 steps,
# once with std 0.01 and once with Xavier, and compare the loss curves. *Hint: keep a list of
# `loss.item()`.*
