# %% [markdown] tags=["claim-torch-same-numbers-ops", "claim-torch-same-numbers-layers", "claim-torch-same-numbers-init", "claim-torch-same-numbers-optimizers"]
# # Welcome to dltutor
#
# **About 10 minutes.** You will be able to:
#
# * record the operations on a tensor and get its gradient with `backward()`;
# * write a whole training step: a network, an optimizer, a loss, `backward()` and `step()`;
# * run the same code on the CPU or a GPU from one device line;
# * read a cell that proves a claim with `assert`, and find the chapter that answers a question.
#
# This kit teaches one thing well: **how a neural network's parameters are managed** — how you
# reach them, start them, share them, group them in an optimizer, give them their own learning
# rates, freeze them and clip their gradients. Every number you see is computed by `dltutor`, a
# small deep-learning engine written in plain NumPy that follows PyTorch's formulas and defaults,
# so what you learn here carries straight over to PyTorch (and to Paddle and MegEngine, whose
# names for the same ideas each chapter lists).
#
# You need Python and NumPy; no deep-learning framework. Run the cells from top to bottom
# (Shift+Enter), change them, and run them again.

# %% [markdown]
# ## How the notebooks work
#
# * **Cells that prove.** Whenever a chapter claims something ("the gradients of a shared layer
#   add up"), a cell checks it with `assert`. If you change the code and the claim stops being
#   true, that cell fails — the quickest way to learn why.
# * **Exercises** at the end of each chapter, with hints.
# * **Short loops under the tests.** The test suite re-runs every notebook. It sets the
#   environment variable `DLTUTOR_QUICK=1` so long training loops run a few steps only;
#   `dt.quick_mode()` tells a notebook which case it is in. The outputs stored in the notebooks
#   come from that quick run.

# %%
import numpy as np

import dltutor as dt
from dltutor import nn, optim

print("dltutor", dt.__version__, "| quick mode:", dt.quick_mode())

# %% [markdown]
# ## A first look: a tensor that remembers how it was made
#
# A `Tensor` holds an array. Ask for `requires_grad=True` and every operation on it is recorded,
# so that `backward()` can compute the gradient of a result with respect to it.

# %%
w = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w * w).sum()          # loss = w1² + w2² + w3²
loss.backward()               # d loss / d w = 2 w
print(w.grad)

# %%
assert np.allclose(w.grad.numpy(), 2 * w.numpy())

# %% [markdown]
# ## A tour of the chapters
#
# | notebook | what it answers |
# | --- | --- |
# | 01 tensors and autograd | making tensors, shapes, broadcasting matmul, stopping gradients |
# | 02 parameter access | reaching a layer's parameters, names in nested blocks, exporting one layer |
# | 03 initialization | default and built-in initializers, custom ones, why the scale matters |
# | 04 setting values | your own values in place, pretrained word vectors, lazy layers |
# | 05 tying | sharing one layer in several places, what happens to its gradient |
# | 06 optimizers | parameter groups, several optimizers, per-parameter learning rates and decay |
# | 07 learning rates | changing learning rates while training, schedulers, step counting, your own optimizer |
# | 08 freezing | three ways to stop a layer training and how they differ; BatchNorm |
# | 09 clipping and numerical trouble | clipping by value, norm and global norm; hunting a NaN |
# | 10 data and checkpoints | batching in the background, saving and resuming exactly |
# | 11 GPU | the same code on a GPU with CuPy, and what to do when memory runs out |
# | 12 the live lab | freeze, re-weight and clip a network while it trains, and watch |
#
# [The FAQ](FAQ.md) maps each learner question to the section that answers it, and
# [the glossary](GLOSSARY.md) lists the terms in English and Chinese with each framework's names.
# The Chinese edition (中文版) opens with `make lab-zh` (or `dltutor lab --lang zh`); its files
# are in `notebooks/zh/`.

# %% [markdown] tags=["claim-torch-gpu-device-line"]
# ## CPU or GPU
#
# NumPy computes on the CPU. With an NVIDIA GPU and `pip install cupy-cuda12x`, the same code
# runs on the GPU through CuPy after `dt.backend.use("gpu")`; chapter 11 shows how. PyTorch's
# device line works as it is, with `dt` for `torch`:
# `device = dt.device("cuda" if dt.cuda.is_available() else "cpu")`, then `model.to(device)`.

# %%
print("current backend:", dt.backend.current())
print("GPU available:", dt.backend.gpu_available())
device = dt.device("cuda" if dt.cuda.is_available() else "cpu")
print("device:", device)

# %% [markdown]
# ## A whole training step, in five lines
#
# A network, an optimizer, a loss, `backward()`, `step()`: the chapters take each part apart.

# %%
dt.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt = optim.SGD(net.parameters(), lr=0.1)
x, y = dt.randn(16, 2), dt.randn(16, 1)

losses = []
for step in range(20):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(f"loss: {losses[0]:.4f} -> {losses[-1]:.4f}")

# %%
assert losses[-1] < losses[0], "twenty steps of gradient descent lower the loss"

# %% [markdown]
# The same five lines, run longer on a classic picture: a small network learning to separate
# the two "moons". Each colour is the class the network predicts at that point; the live lab
# (`lab.ipynb`, chapter 12) lets you watch this boundary form and steer the training.

# %%
import matplotlib.pyplot as plt

from dltutor import plot
from dltutor.data import make_moons

dt.manual_seed(0)
X_moons, y_moons = make_moons(n=200, noise=0.15, seed=0)
moons_net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 2))
moons_opt = optim.SGD(moons_net.parameters(), lr=0.1, momentum=0.9)
inputs, labels = dt.tensor(X_moons), dt.tensor(y_moons)
for step in range(300):
    moons_opt.zero_grad()
    nn.functional.cross_entropy(moons_net(inputs), labels).backward()
    moons_opt.step()

fig, ax = plt.subplots(figsize=(5, 4), layout="constrained")
plot.decision_boundary(moons_net, X_moons, y_moons, ax=ax)
plot.show()

# %%
_, predicted = moons_net(inputs).max(dim=1)
assert (predicted.numpy() == y_moons).mean() > 0.95       # the moons are separated

# %% [markdown]
# **What `momentum=0.9` adds.** Plain gradient descent steps along the gradient of this step.
# With momentum the optimizer keeps a running direction, `buf`: the gradients so far, each older
# one weighing 0.9 times less, and steps along that. It rolls over small bumps and speeds up on
# a steady slope. One parameter's update, in NumPy:
#
# ```python
# buf = grad                       # on the first step
# buf = momentum * buf + grad      # on every later step
# param -= lr * buf
# ```
#
# Because `buf` remembers, a parameter whose gradient turns zero keeps moving for a while
# (chapter 08 shows where that matters). Three steps on `w * w`, by hand and by `optim.SGD`:

# %%
w = nn.Parameter([1.0])
sgd = optim.SGD([w], lr=0.1, momentum=0.9)
value, buf = 1.0, None
for _ in range(3):
    sgd.zero_grad()
    (w * w).sum().backward()                 # the gradient is 2w
    sgd.step()
    grad = 2 * value                         # the same step by hand
    buf = grad if buf is None else 0.9 * buf + grad
    value -= 0.1 * buf
print(f"optim.SGD: {w.item():.4f}   by hand: {value:.4f}")
assert abs(w.item() - value) < 1e-6

# %% [markdown] tags=["claim-torch-welcome-module-names", "claim-torch-same-numbers-ops", "claim-torch-same-numbers-layers", "claim-torch-same-numbers-init", "claim-torch-same-numbers-optimizers", "claim-torch-differs-param-data-tensor", "claim-torch-differs-eps-zero", "claim-torch-differs-float64-input-refused", "claim-torch-differs-complex-allowed", "claim-torch-differs-param-twice", "claim-torch-differs-tied-names-last-wins", "claim-torch-differs-load-state-dict-half-applied", "claim-torch-differs-lr-clip-by-hand", "claim-paddle-differs-lr-mult-need-clip", "claim-torch-differs-nonfinite-applied", "claim-torch-differs-clip-threshold-accepted", "claim-torch-differs-load-may-unpickle", "claim-torch-differs-type-string", "claim-torch-differs-shape-dtype-print", "claim-torch-differs-grad-fn-name"]
# ## Where dltutor differs from PyTorch
#
# Code written for PyTorch mostly runs here with `torch` replaced by `dt` (`nn`, `optim`,
# `nn.functional`, `nn.init`, `nn.utils` have the same names), and prints the same numbers.
# Where it does not, it is on purpose, and the chapter named in the table shows both sides
# (the PyTorch column is measured with PyTorch 2.13 in `tests/frameworks/test_ch00_welcome.py`):
#
# | | PyTorch | dltutor | why | chapter |
# | --- | --- | --- | --- | --- |
# | `p.data` | a tensor (`p.data.normal_(0, 0.01)`) | the NumPy/CuPy array | you can always see the raw numbers; use `init.normal_(p, 0, 0.01)` | 03 |
# | a float64 input to a float32 layer | refused | computed in float64 | NumPy's rule; convert your data once | 01 |
# | complex numbers | allowed | refused | no chapter needs them, and they hide mistakes | 01 |
# | one parameter twice in an optimizer | twice in one group: a warning, then two updates per step; in two groups: `ValueError` | refused, naming it | one parameter, one update | 06 |
# | tied names with different values in a state dict | the last one wins | refused | one value would silently be lost | 05 |
# | `load_state_dict` with a key that does not fit | copies every key that fits, then raises | refused as a whole: nothing changes | a half-loaded model looks fine | 02 |
# | a per-parameter lr, a parameter kept out of clipping, "why is it not updating?" | a group per lr; clip only what you pass; look by hand | also `p.lr_mult`, `p.need_clip`, `dt.diagnose` | Paddle's ideas, and a kit that explains itself | 06, 08, 09 |
# | a NaN or Inf gradient at `opt.step()` | applied | refused (`nonfinite="skip"` or `"apply"` to choose) | the weight stays NaN or infinite for good, and through clipping or the next forward pass the NaN reaches every weight | 09 |
# | a clip threshold <= 0 | accepted (norm clipping flips or zeroes the gradients; a negative clip value sets every entry to it) | refused | always a mistake | 09 |
# | Adam, AdamW, RMSprop or Adagrad with `eps=0` | accepted: a zero gradient gives 0/0 = NaN in its weight | refused: `eps` must be > 0 | a setting that turns a weight into NaN | 06 |
# | `torch.load` / `dt.load` | may unpickle (`weights_only=False`) | always weights-only (safetensors) | a pickle can run code | 10 |
# | `t.type()` | `'torch.FloatTensor'` | `'float32'` | NumPy dtypes | — |
# | `print(t.shape, t.dtype)` | `torch.Size([2, 3]) torch.float32` | `(2, 3) float32` | a plain tuple and NumPy's dtype (a tensor itself prints as in PyTorch) | — |
# | a `Linear` layer's output on a batch (2-D input), printed | `grad_fn=<AddmmBackward0>` | `grad_fn=<LinearBackward>` | the function you called, where PyTorch names its kernel (elementwise ops read alike); no memory address, which changes every run | — |
#
# Two of them, proved here (the others are proved in their chapters):

# %%
p = nn.Parameter(dt.zeros(2, 2))
print(type(p.data).__module__, type(p.data).__name__)
try:
    optim.SGD([p, p], lr=0.1)
except ValueError as err:
    refusal = str(err)
    print(refusal.splitlines()[0][:90])

# %%
assert isinstance(p.data, np.ndarray)                   # the array, not a tensor
assert "twice" in refusal              # refused; PyTorch warns (one group) or raises (two groups)

# %% [markdown] tags=["claim-torch-names-00", "claim-paddle-names-00", "claim-mge-names-00"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | array with gradient | `dt.tensor(..., requires_grad=True)` | `torch.tensor(..., requires_grad=True)` | `paddle.to_tensor(..., stop_gradient=False)` | `mge.tensor(...)` + `GradManager` |
# | compute gradients | `loss.backward()` | `loss.backward()` | `loss.backward()` | `gm.backward(loss)` |
# | update parameters | `opt.step()` | `opt.step()` | `opt.step()` | `opt.step()` |
# | forget gradients | `opt.zero_grad()` (Paddle's name works too: `opt.clear_grad()`) | `opt.zero_grad()` | `opt.clear_grad()` | `opt.clear_grad()` |
#
# ## Exercises
#
# 1. Change the learning rate in the training step to `1.0`, then `10.0`. What happens to the
#    loss? *Hint: print every loss, not just the first and last.*
# 2. Compute the gradient of `(w ** 3).sum()` by hand and check it against `w.grad`.
#    *Hint: gradients add up across `backward()` calls — set `w.grad = None` first.*
#
# ## Summary
#
# **In two lines:** every number here comes from a small NumPy engine that follows the usual
# formulas, and every claim is proved by a cell you can change and rerun. A training step is always
# the same few lines, which the next chapters take apart.