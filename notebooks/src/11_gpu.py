# %% [markdown]
# # Running on a GPU
#
# **About 30 minutes.** You will be able to:
#
# * write one training loop that runs on a GPU where there is one, and on the CPU otherwise;
# * tell from the error whether CuPy or the GPU is missing, and what to do about it;
# * estimate a training step's memory from its parameters, gradients, optimizer state and
#   activations, and cut the padding of variable-length ids with masks and buckets;
# * make a step fit with smaller or accumulated batches, `no_grad`, and numbers kept instead of
#   tensors;
# * say what mixed precision, activation checkpointing and the allocator's settings buy and cost.
#
# A GPU computes the large matrix products of a network many times faster than a CPU, but it
# brings two new questions: how do I get my code and my model onto it (without writing the code
# twice), and what do I do when its memory, smaller than the computer's, runs out?
#
# dltutor computes with NumPy on the CPU and with [CuPy](https://cupy.dev), NumPy's twin for
# NVIDIA GPUs, on the GPU; everything else is the same code. This notebook runs on any machine:
# without a GPU (as on the machine that tested it) it shows what you see then, and it proves
# everything about memory on the CPU, where the arithmetic is the same.

# %%
import weakref

import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.data import DataLoader, TensorDataset, make_spirals
from dltutor.nn import functional as F

dt.manual_seed(0)
print("backend at start:", dt.backend.current())

# %% [markdown]
# ## The same code on a GPU
#
# ### The backend: who computes
#
# Every tensor holds an array of a *backend*: a NumPy array (`device == "cpu"`) or a CuPy array
# (`device == "gpu"`). `dt.backend.current()` is the backend new tensors are made on, and
# `dt.backend.use(name)` switches it, either for good (a plain call) or for one block (`with`).
# `"cpu"` and `"numpy"` name the same backend, as do `"gpu"`, `"cuda"` and `"cupy"`.

# %%
print("current:", dt.backend.current())
with dt.backend.use("cpu") as backend:
    t = dt.ones(2, 3)
    print("inside the with block:", backend, "| t.device:", t.device)
print("after it:", dt.backend.current())
assert dt.backend.current() == "numpy" and dt.backend.current() == "cpu"
assert t.device == "cpu"

# %% tags=["twin-torch"]
# PyTorch has no backend switch: torch.set_default_device for good, `with torch.device(...)`
# for one block.
import weakref

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import dltutor as dt                               # for the same data, and its quick mode
from dltutor.data import make_spirals

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
print("current:", torch.get_default_device())
with torch.device("cpu"):
    t = torch.ones(2, 3)
    print("inside the with block: t.device:", t.device)
print("after it:", torch.get_default_device())

# %% [markdown] tags=["claim-torch-gpu-device-line"]
# Three calls move things:
#
# * `dt.backend.use("gpu")`: tensors made from now on (`dt.randn`, `dt.tensor`, batches from a
#   `DataLoader`, `dt.load`) are made on the GPU;
# * `tensor.to("gpu")`: a copy of one tensor on the GPU (gradients flow back through the move);
#   `tensor.to("cpu")` or `tensor.numpy()` bring values back;
# * `model.to("gpu")`: moves every parameter and buffer of a model **in place**: the Parameter
#   objects stay the same, only their arrays move.
#
# A GPU computes only on arrays in its own memory: put the model and each batch on the same
# device.
#
# ### Is there a GPU here?
#
# `dt.backend.gpu_available()` answers without raising: True when CuPy imports and sees a GPU.
# Device-agnostic code asks once and uses the answer everywhere. The first line of most PyTorch
# tutorials does exactly that, and runs here with `dt` in place of `torch`:
# `dt.cuda.is_available()` is the same question, and `dt.device("cuda")` names the GPU
# (`"cuda:0"` and the kit's own `"gpu"` too; dltutor uses one GPU). Every place that takes a
# device takes it: `model.to(device)`, `x.to(device)`, `dt.zeros(3, device=device)`,
# `dt.load(path, map_location=device)`. One difference: a tensor's `.device` here is the name
# (`"cpu"` or `"gpu"`), and a `dt.device` equals its name, where PyTorch's `t.device` is a
# `torch.device`, which never equals a string. (The next cell's output depends on your machine,
# so the tests do not compare it.)

# %% tags=["nbval-ignore-output"]
device = dt.device("cuda" if dt.cuda.is_available() else "cpu")
print("GPU available:", dt.cuda.is_available(), "-> this notebook computes on:", device)

# %% tags=["twin-torch"]
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("GPU available:", torch.cuda.is_available(), "-> this notebook computes on:", device)
print("torch.ones(1).device == 'cpu':", torch.ones(1).device == "cpu")   # a torch.device, not a str

# %% [markdown] tags=["claim-torch-gpu-move-model-before-optimizer"]
# The whole training loop is then written once. The model moves *before* the optimizer is made
# (PyTorch recommends the same order): the optimizer's momentum and Adam moments are created
# later, next to the parameters, on the same device. Each batch moves with `.to(device)`, which
# does nothing when it is already there.

# %%
X, y = make_spirals(n=300, seed=0)
epochs = 5 if dt.quick_mode() else 60


def train_on(device, seed=0):
    """Train a small MLP on the spirals on `device`; the model and each epoch's mean loss."""
    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True, seed=seed)
    dt.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 3))
    model.to(device)                               # in place; returns the model as well
    opt = optim.Adam(model.parameters(), lr=0.02)
    epoch_losses = []
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
        epoch_losses.append(total / len(X))
    return model, epoch_losses


model, epoch_losses = train_on(device)
print(f"mean loss of an epoch: epoch 1 {epoch_losses[0]:.2f} -> epoch {epochs} "
      f"{epoch_losses[-1]:.2f}")

# %% tags=["twin-torch"]
X, y = make_spirals(n=300, seed=0)
epochs = 5 if dt.quick_mode() else 60


def train_on(device, seed=0):
    """Train a small MLP on the spirals on `device`; the model and each epoch's mean loss."""
    loader = DataLoader(TensorDataset(torch.from_numpy(X), torch.from_numpy(y)), batch_size=64,
                        shuffle=True, generator=torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 3)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)   # made after the move
    epoch_losses = []
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
        epoch_losses.append(total / len(X))
    return model, epoch_losses


model, epoch_losses = train_on(device)
print(f"mean loss of an epoch: epoch 1 {epoch_losses[0]:.2f} -> epoch {epochs} "
      f"{epoch_losses[-1]:.2f}")

# %%
xb = dt.tensor(X[:8]).to(device)
layer = nn.Linear(2, 3)
params_before = list(layer.parameters())
assert all(p.device == device for p in model.parameters())
assert xb.to(device) is xb, "a tensor already on the device is not copied"
assert all(a is b for a, b in zip(layer.to(device).parameters(), params_before)), \
    "model.to keeps the Parameters"
assert epoch_losses[-1] < 0.9 * epoch_losses[0]                      # it learns...
assert all(losses[-1] < 0.9 * losses[0]                               # ...for other seeds too
           for _, losses in (train_on(device, seed) for seed in range(1, 5)))

# %% tags=["twin-torch"]
xb = torch.from_numpy(X[:8]).to(device)
layer = nn.Linear(2, 3)
params_before = list(layer.parameters())
print("a tensor already on the device is not copied:", xb.to(device) is xb)
print("model.to keeps the Parameters:",
      all(a is b for a, b in zip(layer.to(device).parameters(), params_before)))

# %% [markdown]
# ### When CuPy or the GPU is missing
#
# Asking for the GPU where it cannot be had raises `dt.backend.GPUUnavailableError`, whose
# message says what is missing and what to do. There are three cases:
#
# | what is missing | the message says | the fix |
# | --- | --- | --- |
# | CuPy is not installed | "The GPU backend needs CuPy, which is not installed ..." | `pip install cupy-cuda12x` (CuPy for CUDA 12; `cupy-cuda13x` for CUDA 13) |
# | CuPy is installed, the CUDA driver is not working | "CuPy is installed but no usable GPU was found ..." | check `nvidia-smi`; install or update the NVIDIA driver |
# | CuPy is installed, the machine has no GPU | "CuPy is installed but the machine has no GPU ..." | use a machine with an NVIDIA GPU |
#
# Every one ends by suggesting to keep using the CPU with `dt.backend.use('numpy')`. The same
# error comes from all three ways of asking for the GPU, and a failed request changes nothing:
# the backend stays the CPU, and a model whose move fails stays where it was, whole.
#
# The next cell asks in the three ways. On a machine with a GPU they succeed and it prints
# other lines, so the tests do not compare its output; the cell after it checks the claims on
# either kind of machine.

# %% tags=["nbval-ignore-output"]
def gpu_error(attempt):
    """The GPUUnavailableError message `attempt()` raises, or None if it worked."""
    try:
        attempt()
    except dt.backend.GPUUnavailableError as err:
        return str(err)                             # nothing was switched or moved
    dt.backend.use("cpu")                           # it worked (a GPU): back to the CPU for now
    return None


layer = nn.Linear(3, 2)
attempts = {"dt.backend.use('gpu')": lambda: dt.backend.use("gpu"),
            "tensor.to('gpu')": lambda: dt.ones(2).to("gpu"),
            "model.to('gpu')": lambda: layer.to("gpu")}
messages = {what: gpu_error(attempt) for what, attempt in attempts.items()}
message = messages["dt.backend.use('gpu')"]
print(message if message is not None else "the GPU backend is available")
for what, error in messages.items():
    print(f"{what:22s} -> {'GPUUnavailableError' if error else 'worked'}")
print("backend afterwards:", dt.backend.current(), "| layer on:", layer.weight.device)

# %% tags=["twin-torch"]
# PyTorch has no GPUUnavailableError: a CPU-only build says so with an AssertionError.
def gpu_error(attempt):
    """The error `attempt()` raises (its name and first line), or None if it worked."""
    try:
        attempt()
    except (AssertionError, RuntimeError) as err:
        return f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return None


layer = nn.Linear(3, 2)
attempts = {"torch.ones(2).to('cuda')": lambda: torch.ones(2).to("cuda"),
            "torch.zeros(2, device='cuda')": lambda: torch.zeros(2, device="cuda"),
            "layer.to('cuda')": lambda: layer.to("cuda")}
for what, attempt in attempts.items():
    print(f"{what:30s} -> {gpu_error(attempt) or 'worked'}")
print("layer on:", layer.weight.device)

# %%
if dt.backend.gpu_available():                   # a GPU machine: every request worked
    assert all(error is None for error in messages.values())
else:                                             # no CuPy, or no GPU: every request says so
    assert all(error is not None for error in messages.values())
    assert "dt.backend.use('numpy')" in message    # every variant of the message ends so
    assert 'cupy-cuda12x' in message or "GPU" in message
    assert layer.weight.device == "cpu"
assert dt.backend.current() == "cpu", "a failed dt.backend.use('gpu') switched nothing"

# %% [markdown]
# ### How busy is the GPU
#
# Watch it from a second terminal while your program trains: `nvidia-smi` shows each GPU's
# memory in use and its `GPU-Util`. A small model keeps that low, for two reasons. Every
# operation is one kernel that Python, on the *host* (the CPU), launches after the last; for
# 64 x 64 matrices a kernel ends before the next launch, and the GPU waits for Python. And while
# the loop prepares the next batch on the CPU the GPU has nothing to do: load batches in the
# background (chapter 10's `num_workers`). Larger batches give each launch more work. Exercise 4
# lets you see it.

# %% [markdown]
# ### Going deeper: what GPU-Util measures
#
# What the utilisation number counts, and what it does not.

# %% [markdown]
# `nvidia-smi dmon` prints a line a second, whose `sm` column is the same utilisation. NVIDIA's
# manual (`man nvidia-smi`) defines it as the percent of the last sample period during which at
# least one kernel ran: it tells you the GPU was never idle, not that it computed much.

# %% [markdown]
# ### Going deeper: a training step reads nothing on the host
#
# Reading a value on the host (`float(x)`, `print(loss)`, `if x.any():`) makes Python wait
# until the GPU has finished everything queued before it, and while Python waits it queues
# nothing, so next the GPU waits for Python. So dltutor's training step reads nothing on a GPU:
# forward, loss, backward and `opt.step()` with clipping, lr multipliers and the non-finite check
# only queue kernels. Two checks need a value, and both are decided on the GPU instead:
#
# * **a gradient with NaN or Inf**: the step works out on the GPU whether every gradient is
#   finite, runs the update, and puts back every value it changed (parameters, momentum buffers,
#   Adam's moments) if not. The answer travels to the host while the GPU works on, and is read at
#   the next point where the host reads anyway: the loss printed, the next `step()`. Then the
#   `NonFiniteGradientError` comes, naming the parameter, "found on the device, read after the
#   step" (or, with `nonfinite="skip"`, `skipped_steps` counts it). The parameters are the same
#   as on the CPU, where the check comes first; only the error comes one read later.
# * **a label out of range** in `cross_entropy`: its row makes the loss and every gradient NaN,
#   so the step above is refused, and the `ValueError` naming the label comes at the next read.
#
# The cell below runs that GPU path here, on the CPU: it tells the NumPy backend that its reads
# are not free (what CuPy's backend says), and poisons one gradient.

# %%
numpy_backend = dt.backend.get("numpy")
numpy_backend.reads_are_free = False             # take the GPU's path, on the CPU
try:
    dt.manual_seed(0)
    gpu_net = nn.Linear(2, 1)
    gpu_opt = optim.SGD(gpu_net.named_parameters(), lr=0.1, momentum=0.9)
    gpu_loss = F.mse_loss(gpu_net(dt.ones(4, 2)), dt.zeros(4, 1))
    gpu_loss.backward()
    gpu_net.weight.grad.data[0, 0] = np.nan       # one NaN, as an overflow would make
    weight_before = gpu_net.weight.data.copy()
    gpu_opt.step()                                # no error yet: nothing was read
    print("weight unchanged:", bool((gpu_net.weight.data == weight_before).all()))
    try:
        print(gpu_loss.item())                    # the host reads: the check is settled
    except optim.NonFiniteGradientError as error:
        refusal = error                           # (Python forgets `error` after the block)
        print(type(error).__name__, "names", error.names)
finally:
    numpy_backend.reads_are_free = True
print("steps counted:", gpu_opt.step_count)

# %%
assert (gpu_net.weight.data == weight_before).all() and gpu_opt.step_count == 0
assert refusal.names == ["weight"] and "found on the device" in str(refusal)

# %% [markdown] tags=["claim-torch-fused-optimizers"]
# ### Going deeper: one kernel per parameter
#
# On a GPU each line of an update rule is a kernel launch of its own, which reads whole arrays
# from the GPU's memory and writes a whole temporary array back: SGD with momentum and weight
# decay is several launches per parameter, Adam more. So on a GPU, SGD, Adam and AdamW take each
# parameter's step as **one fused kernel**: the same formula, written as one function of arrays
# (`sgd_kernel` in `dltutor/optim/sgd.py`, `adam_kernel` in `adam.py`, beside the rule), which
# CuPy compiles with `cupy.fuse` so every value is read once, updated in registers and written
# once. The non-finite check above is inside the kernel too: a refused step writes the old values
# back, so nothing is copied before the step or put back after it. PyTorch offers the same for
# its SGD, Adam and AdamW with `fused=True`.
#
# A kernel is a plain Python function, so on the CPU NumPy runs it line by line. The cell below
# runs SGD's kernel on a parameter's arrays and takes SGD's step from the optimizer, and the two
# agree to the bit (the same operations in the same order).

# %%
from dltutor.optim.sgd import sgd_kernel

dt.manual_seed(0)
w = nn.Parameter(dt.randn(4))
(w * dt.randn(4)).sum().backward()
param, buf = w.data.copy(), np.zeros_like(w.data)      # the kernel's own copies
sgd_kernel(np, param, w.grad.data, buf, refused=None, lr=0.1, weight_decay=0.01,
           momentum=0.9, undamped=1.0, nesterov=None)  # undamped: 1 - dampening
optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01).step()
print("kernel:   ", param)
print("optimizer:", w.data)
assert (param == w.data).all()

# %% [markdown]
# ## When the GPU runs out of memory
#
# On a GPU, "out of memory" means the arrays of one training step do not fit in the GPU's memory
# (CuPy raises `cupy.cuda.memory.OutOfMemoryError`). Where does that memory go? To four things:
#
# 1. the **parameters**;
# 2. their **gradients** (one more array per parameter, the same size);
# 3. the **optimizer's state**: nothing for plain SGD, one copy for momentum, two for Adam (the
#    running averages of the gradient and of its square);
# 4. the **activations**: every intermediate result the forward pass keeps for backward. These
#    grow with the batch size, and for large inputs they are the biggest part.
#
# ### Estimate it first
#
# Each parameter's array knows its size in bytes: `p.data.nbytes`, which is the number of values
# times the bytes per value (4 for float32). Add them up for a model of a realistic size, an MLP
# for 28x28 images:

# %%
dt.manual_seed(0)
mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                    nn.Linear(512, 10))
n_values = sum(p.numel() for p in mlp.parameters())
param_bytes = sum(p.data.nbytes for p in mlp.parameters())
MB = 1024 ** 2
print(f"{n_values:,} parameter values x 4 bytes = {param_bytes / MB:.2f} MB")
assert param_bytes == 4 * n_values == 4 * ((784 * 512 + 512) + (512 * 512 + 512) + (512 * 10 + 10))
assert all(p.dtype == np.float32 for p in mlp.parameters())

# %% tags=["twin-torch", "twin-same-numbers"]
torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                    nn.Linear(512, 10))
n_values = sum(p.numel() for p in mlp.parameters())
param_bytes = sum(p.nbytes for p in mlp.parameters())    # numel() * element_size()
MB = 1024 ** 2
print(f"{n_values:,} parameter values x 4 bytes = {param_bytes / MB:.2f} MB")

# %% [markdown]
# Now measure the other three parts on a real step with Adam. The gradients take as much room as
# the parameters; Adam's state, twice as much. For the activations, a forward hook on each layer
# adds up the bytes of the outputs, for two batch sizes.

# %%
def layer_output_bytes(model, x):
    """Bytes of each layer's output in one forward pass of x (about what backward keeps)."""
    sizes = []
    handles = [m.register_forward_hook(lambda m, inputs, out: sizes.append(out.data.nbytes))
               for m in model]
    model(x)
    for h in handles:
        h.remove()
    return sizes


def activation_bytes(model, batch_size):
    """All of them, for a batch of random 28x28 images."""
    return sum(layer_output_bytes(model, dt.randn(batch_size, 784)))


adam = optim.Adam(mlp.parameters(), lr=1e-3)
loss = F.cross_entropy(mlp(dt.randn(32, 784)), dt.randint(0, 10, (32,)))
loss.backward()
adam.step()
grad_bytes = sum(p.grad.data.nbytes for p in mlp.parameters())
state_bytes = sum(v.nbytes for s in adam.state.values() for v in s.values() if hasattr(v, "nbytes"))
act = {b: activation_bytes(mlp, b) for b in (32, 128)}
print(f"parameters  {param_bytes / MB:6.2f} MB")
print(f"gradients   {grad_bytes / MB:6.2f} MB")
print(f"Adam state  {state_bytes / MB:6.2f} MB")
for b, nbytes in act.items():
    print(f"activations {nbytes / MB:6.2f} MB at batch size {b}")

# %% tags=["twin-torch", "twin-same-numbers"]
def layer_output_bytes(model, x):
    """Bytes of each layer's output in one forward pass of x (about what backward keeps)."""
    sizes = []
    handles = [m.register_forward_hook(lambda m, inputs, out: sizes.append(out.nbytes))
               for m in model]
    model(x)
    for h in handles:
        h.remove()
    return sizes


adam = torch.optim.Adam(mlp.parameters(), lr=1e-3)
F.cross_entropy(mlp(torch.randn(32, 784)), torch.randint(0, 10, (32,))).backward()
adam.step()
grad_bytes = sum(p.grad.nbytes for p in mlp.parameters())
state_bytes = sum(s[k].nbytes for s in adam.state.values() for k in ("exp_avg", "exp_avg_sq"))
act = {b: sum(layer_output_bytes(mlp, torch.randn(b, 784))) for b in (32, 128)}
for part, nbytes in [("parameters", param_bytes), ("gradients", grad_bytes), ("Adam state", state_bytes)]:
    print(f"{part:11s} {nbytes / MB:6.2f} MB")
for b, nbytes in act.items():
    print(f"activations {nbytes / MB:6.2f} MB at batch size {b}")

# %%
assert grad_bytes == param_bytes, "one gradient per parameter, the same size"
assert state_bytes == 2 * param_bytes, "Adam keeps two arrays per parameter"
# every module's output is batch x width float32 values: 512 + 512 + 512 + 512 + 10 per sample
assert all(act[b] == 4 * b * (4 * 512 + 10) for b in act), "activations: 4 bytes per value"

# %% [markdown]
# For a small MLP the fixed part (parameters, gradients, Adam state: 4 x the parameters) wins at
# small batches, and the activations take over as the batch grows. The picture shows both,
# from the formula we just checked (activations per sample x batch size).

# %%
batch_sizes = [32, 256, 1024, 4096]
per_sample = act[32] / 32
parts = {"parameters": param_bytes, "gradients": grad_bytes, "Adam state": state_bytes}
fig, ax = plt.subplots(figsize=(7, 3.5))
labels = [str(b) for b in batch_sizes]
bottom = np.zeros(len(batch_sizes))
for name, nbytes in parts.items():
    ax.bar(labels, [nbytes / MB] * len(batch_sizes), bottom=bottom, label=name)
    bottom += nbytes / MB
ax.bar(labels, [per_sample * b / MB for b in batch_sizes], bottom=bottom, label="activations")
ax.set_xlabel("batch size")
ax.set_ylabel("memory of one training step (MB)")
ax.set_title("Where the memory goes: the 784-512-512-10 MLP with Adam")
ax.legend()
plot.show()

# %% tags=["twin-torch"]
# The stacked bars are left out; their heights are printed.
fixed = (param_bytes + grad_bytes + state_bytes) / MB
for b in [32, 256, 1024, 4096]:
    print(f"batch size {b:4d}: parameters, gradients, Adam state {fixed:.2f} MB "
          f"+ activations {act[32] / 32 * b / MB:6.2f} MB")

# %% [markdown]
# ### Variable-length ids with masks and buckets
#
# The words of a sentence, the items a user clicked: many inputs are sequences of ids, each of
# its own length. A batch is one array, so the shorter sequences are *padded* with a reserved id
# (here 0) up to the longest, and a *mask* says which places hold a real id (1) and which hold
# padding (0).

# %%
PAD = 0                                            # the id reserved for padding


def pad_batch(sequences, length=None):
    """Pad lists of ids with PAD to `length` (default: the longest): the ids and the 0/1 mask."""
    length = length or max(len(seq) for seq in sequences)
    ids = np.full((len(sequences), length), PAD, dtype=np.int64)
    for row, seq in enumerate(sequences):
        ids[row, :len(seq)] = seq
    return ids, (ids != PAD).astype(np.float32)


ids, mask = pad_batch([[5, 3, 8], [7], [2, 9, 4, 6, 1]])
print(f"ids:\n{ids}\nmask:\n{mask}")

# %% tags=["twin-torch", "twin-same-numbers"]
PAD = 0                                            # the id reserved for padding


def pad_batch(sequences, length=None):
    """Pad lists of ids with PAD to `length` (default: the longest): the ids and the 0/1 mask."""
    ids = nn.utils.rnn.pad_sequence([torch.tensor(seq) for seq in sequences],
                                    batch_first=True, padding_value=PAD)
    if length is not None:
        ids = F.pad(ids, (0, length - ids.shape[1]), value=PAD)
    return ids, (ids != PAD).float()


ids, mask = pad_batch([[5, 3, 8], [7], [2, 9, 4, 6, 1]])
print(f"ids:\n{ids.numpy()}\nmask:\n{mask.numpy()}")

# %% [markdown]
# A small model labels every id: an `Embedding` (a table with one row per id) and a `Linear`
# layer; the label to learn is the id modulo 5. The loss must count the real ids only: multiply
# each place's loss by the mask, add up, and divide by the number of real ids. A plain mean over
# the padded array averages the padding in, and backward then trains the padding's row of the
# table. We compare three losses on the same start: masked, the plain mean, and the real ids
# alone with no padding at all.

# %%
VOCAB, CLASSES = 20, 5


def per_id_loss(model, ids):
    """The cross-entropy of every place of `ids` (padding included), as one flat tensor."""
    logits = model(dt.tensor(ids)).reshape(-1, CLASSES)
    return F.cross_entropy(logits, dt.tensor((ids % CLASSES).reshape(-1)), reduction="none")


def loss_and_table_grad(loss_of):
    """Backward through a fresh model: the loss and the gradient of the embedding table."""
    dt.manual_seed(0)
    model = nn.Sequential(nn.Embedding(VOCAB, 8), nn.Linear(8, CLASSES))
    loss = loss_of(model)
    loss.backward()
    return loss.item(), model[0].weight.grad.numpy().copy()


real_ids = ids[mask == 1][None, :]                 # every real id, one row, no padding
masked = loss_and_table_grad(lambda m: (per_id_loss(m, ids) * dt.tensor(mask.ravel())).sum()
                             / mask.sum())
plain = loss_and_table_grad(lambda m: per_id_loss(m, ids).mean())
unpadded = loss_and_table_grad(lambda m: per_id_loss(m, real_ids).mean())
print(f"loss: masked {masked[0]:.4f} | no padding {unpadded[0]:.4f} | plain mean {plain[0]:.4f}")
print(f"largest gradient in the padding row: masked {np.abs(masked[1][PAD]).max():.4f} | "
      f"plain mean {np.abs(plain[1][PAD]).max():.4f}")

# %% tags=["twin-torch"]
VOCAB, CLASSES = 20, 5


def per_id_loss(model, ids):
    """The cross-entropy of every place of `ids` (padding included), as one flat tensor."""
    logits = model(ids).reshape(-1, CLASSES)
    return F.cross_entropy(logits, (ids % CLASSES).reshape(-1), reduction="none")


def loss_and_table_grad(loss_of):
    """Backward through a fresh model: the loss and the gradient of the embedding table."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(VOCAB, 8), nn.Linear(8, CLASSES))
    loss = loss_of(model)
    loss.backward()
    return loss.item(), model[0].weight.grad.clone()


real_ids = ids[mask == 1][None, :]                 # every real id, one row, no padding
masked = loss_and_table_grad(lambda m: (per_id_loss(m, ids) * mask.flatten()).sum() / mask.sum())
plain = loss_and_table_grad(lambda m: per_id_loss(m, ids).mean())
unpadded = loss_and_table_grad(lambda m: per_id_loss(m, real_ids).mean())
print(f"loss: masked {masked[0]:.4f} | no padding {unpadded[0]:.4f} | plain mean {plain[0]:.4f}")
print(f"largest gradient in the padding row: masked {masked[1][PAD].abs().max():.4f} | "
      f"plain mean {plain[1][PAD].abs().max():.4f}")

# %%
assert np.all(masked[1][PAD] == 0), "masked: the padding row gets exactly zero gradient"
assert np.abs(plain[1][PAD]).max() > 0.01, "a plain mean trains the padding row"
assert abs(masked[0] - unpadded[0]) < 1e-5, "masked = the loss of the real ids alone"
assert np.allclose(masked[1], unpadded[1], atol=1e-6), "...with the same gradients"

# %% [markdown] tags=["claim-torch-gpu-padding-idx-ignore-index", "claim-paddle-gpu-padding-idx-ignore-index"]
# Both halves are built in. `nn.Embedding(vocab, dim, padding_idx=0)` starts the padding row at
# zero and never gives it a gradient, in dltutor, PyTorch and Paddle.
# `F.cross_entropy(logits, labels, ignore_index=-100)` leaves out every place whose label is
# -100 (the default); dltutor and PyTorch then average over the other places, as the mask does
# (Paddle differs: see Going deeper at the end of this part). In dltutor, as in PyTorch, label
# the padding places -100 and the mask is done for you:

# %%
ignored = np.where(mask == 1, ids % CLASSES, -100).ravel()    # -100 where the padding is
builtin = loss_and_table_grad(lambda m: F.cross_entropy(
    m(dt.tensor(ids)).reshape(-1, CLASSES), dt.tensor(ignored), ignore_index=-100))
print(f"ignore_index=-100: loss {builtin[0]:.4f}, the masked gradients: "
      f"{np.allclose(builtin[1], masked[1], atol=1e-6)}")
assert abs(builtin[0] - masked[0]) < 1e-5 and np.allclose(builtin[1], masked[1], atol=1e-6)

# %% tags=["twin-torch"]
ignored = torch.where(mask == 1, ids % CLASSES, -100).flatten()    # -100 where the padding is
builtin = loss_and_table_grad(lambda m: F.cross_entropy(
    m(ids).reshape(-1, CLASSES), ignored, ignore_index=-100))
print(f"ignore_index=-100: loss {builtin[0]:.4f}, the masked gradients: "
      f"{torch.allclose(builtin[1], masked[1], atol=1e-6)}")

# %% tags=["twin-paddle"]
# Paddle 3.3 averages over the kept places only for an ignore_index >= 0 (Going deeper below).
import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

np.set_printoptions(precision=4, suppress=True)
CLASSES = 5
ids = paddle.to_tensor([[5, 3, 8, 0, 0], [7, 0, 0, 0, 0], [2, 9, 4, 6, 1]])   # 0 pads
real = (ids != 0).flatten()
paddle.seed(0)
model = nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, CLASSES))
logits, labels = model(ids).reshape([-1, CLASSES]), (ids % CLASSES).flatten()
wanted = F.cross_entropy(logits[real], labels[real])          # the real ids alone
for pad_label in (-100, CLASSES):                             # the default, and a label >= 0
    padded = paddle.where(real, labels, paddle.full_like(labels, pad_label))
    loss = F.cross_entropy(logits, padded, ignore_index=pad_label)
    print(f"ignore_index={pad_label}: loss / loss of the real ids = {float(loss / wanted):.4f}")

# %% [markdown]
# Now the memory. The embedding's output, batch x longest x width floats, is the activation
# that grows with the padding (and so does every layer after it). Real lengths are skewed:
# here 120 short sequences of 5 to 20 ids and 8 long ones of 100 to 191, in a fixed arrival
# order, in batches of 16. Four ways to batch them, each measured from the bytes of the
# embedding's outputs:
#
# * pad every sequence to the longest of all (one shape for every step);
# * pad each batch to its own longest, in arrival order;
# * sort by length first, so each batch holds neighbours in length (*buckets*);
# * buckets under a **budget** of 320 padded ids a step (16 x 20, one batch of short ones): many
#   short sequences share a step, a long one goes alone.

# %%
lengths = [5 + (7 * i) % 16 for i in range(120)] + [100 + 13 * i for i in range(8)]
sequences = [[1 + (i + j) % (VOCAB - 1) for j in range(n)] for i, n in enumerate(lengths)]
sequences = [sequences[(37 * i) % len(sequences)] for i in range(len(sequences))]  # arrival
table = nn.Embedding(VOCAB, 64)


def in_batches(seqs, size=16):
    """Cut `seqs` into batches of `size`, in their order."""
    return [seqs[i:i + size] for i in range(0, len(seqs), size)]


def budget_batches(seqs, budget):
    """Sorted by length; a new batch whenever one more sequence would pass `budget` ids."""
    batches = [[]]
    for seq in sorted(seqs, key=len):
        if batches[-1] and (len(batches[-1]) + 1) * len(seq) > budget:
            batches.append([])
        batches[-1].append(seq)
    return batches


def step_bytes(batches, pad_to=None):
    """Bytes of the embedding's output at each step (padded to `pad_to` when given)."""
    return [table(dt.tensor(pad_batch(batch, pad_to)[0])).data.nbytes for batch in batches]


KB, useful = 1024, sum(lengths) * 64 * 4            # the real ids' bytes
plans = {"padded to the longest of all": step_bytes(in_batches(sequences), max(lengths)),
         "each batch to its longest": step_bytes(in_batches(sequences)),
         "sorted into buckets": step_bytes(in_batches(sorted(sequences, key=len))),
         "buckets, 320 ids a step": step_bytes(budget_batches(sequences, 320))}
for plan, steps in plans.items():
    print(f"{plan:29s} {len(steps):3d} steps, {sum(steps) / KB:5.0f} KB in all, "
          f"{1 - useful / sum(steps):4.0%} padding, largest step {max(steps) / KB:4.0f} KB")

# %% tags=["twin-torch"]
# PyTorch batches by length with a batch_sampler (lists of indices); collate_fn pads.
lengths = [5 + (7 * i) % 16 for i in range(120)] + [100 + 13 * i for i in range(8)]
sequences = [[1 + (i + j) % (VOCAB - 1) for j in range(n)] for i, n in enumerate(lengths)]
sequences = [sequences[(37 * i) % len(sequences)] for i in range(len(sequences))]  # arrival


def budget_batches(lengths, budget):
    """Indices sorted by length; a new batch whenever one more would pass `budget` ids."""
    batches = [[]]
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batches[-1] and (len(batches[-1]) + 1) * lengths[i] > budget:
            batches.append([])
        batches[-1].append(i)
    return batches


loader = DataLoader(sequences, batch_sampler=budget_batches([len(s) for s in sequences], 320),
                    collate_fn=lambda batch: pad_batch(batch)[0])
shapes = [tuple(batch.shape) for batch in loader]
print(len(shapes), "steps, shapes from", shapes[0], "to", shapes[-1])

# %% tags=["twin-torch", "twin-same-numbers"]
table = nn.Embedding(VOCAB, 64)
in_batches = lambda seqs, size=16: [seqs[i:i + size] for i in range(0, len(seqs), size)]


def step_bytes(batches, pad_to=None):
    """Bytes of the embedding's output at each step (padded to `pad_to` when given)."""
    with torch.no_grad():
        return [table(pad_batch(batch, pad_to)[0]).nbytes for batch in batches]


KB, useful = 1024, sum(lengths) * 64 * 4            # the real ids' bytes
plans = {"padded to the longest of all": step_bytes(in_batches(sequences), max(lengths)),
         "each batch to its longest": step_bytes(in_batches(sequences)),
         "sorted into buckets": step_bytes(in_batches(sorted(sequences, key=len))),
         "buckets, 320 ids a step": step_bytes([[sequences[i] for i in batch]
                                                for batch in loader.batch_sampler])}
for plan, steps in plans.items():
    print(f"{plan:29s} {len(steps):3d} steps, {sum(steps) / KB:5.0f} KB in all, "
          f"{1 - useful / sum(steps):4.0%} padding, largest step {max(steps) / KB:4.0f} KB")

# %%
every, per_batch, buckets, budget = plans.values()
assert sum(every) == 128 * 191 * 64 * 4 and sum(budget) >= useful
assert sum(buckets) < sum(per_batch) / 3 < sum(every) / 3, "sorting removes most padding"
assert max(buckets) == max(per_batch) == 16 * 191 * 64 * 4, "...but not the largest step"
assert max(budget) <= 320 * 64 * 4, "a budget of ids caps the largest step"

# %% [markdown]
# Sorting into buckets removes most of the padding, so an epoch stores and computes a third of
# what it did. It does not lower the **largest** step: the batch of the longest sequences still
# pads 16 rows to 191, and the largest step is what must fit. A budget of ids a step caps it.
# That is the usual answer to "variable-length ids take too much memory": a smaller batch where
# the sequences are long, and sorted ids so little is padding. Two cautions: shuffle the order of
# the batches (not their contents) each epoch, so training does not see short ones first, and
# keep the mask, since the last sequences of a bucket are still padded.

# %% [markdown]
# So, when memory runs out, in order:
#
# ### 1. Use smaller batches
#
# The activations shrink in proportion, as the assert above proved. This is the first thing to
# try; the price is noisier gradients, which the next trick removes.
#
# ### 2. Accumulate gradients over micro-batches
#
# Gradients *add up* across `backward()` calls until `zero_grad()`. So instead of one batch of 32,
# run four micro-batches of 8, call `backward()` on each, and step once. Only one micro-batch's
# activations are alive at a time. Scale each loss by 1/4: the loss is a *mean* over its batch,
# and the mean over 32 samples is the average of the four means over 8.

# %%
dt.manual_seed(1)
net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
xb, yb = dt.randn(32, 10), dt.randint(0, 3, (32,))

net.zero_grad()
F.cross_entropy(net(xb), yb).backward()            # one batch of 32
whole = {name: p.grad.numpy().copy() for name, p in net.named_parameters()}

net.zero_grad()
micro, steps = 8, 4
for k in range(steps):                             # four micro-batches of 8
    part = slice(k * micro, (k + 1) * micro)
    loss = F.cross_entropy(net(xb[part]), yb[part]) / steps
    loss.backward()                                # adds into p.grad
accumulated = {name: p.grad.numpy().copy() for name, p in net.named_parameters()}
for name in whole:
    print(f"{name:9s} the same up to rounding: {np.allclose(whole[name], accumulated[name], atol=1e-6)}")
for name in whole:
    assert np.allclose(whole[name], accumulated[name], atol=1e-6), name

# %% tags=["twin-torch"]
torch.manual_seed(1)
net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
xb, yb = torch.randn(32, 10), torch.randint(0, 3, (32,))

net.zero_grad()
F.cross_entropy(net(xb), yb).backward()            # one batch of 32
whole = {name: p.grad.clone() for name, p in net.named_parameters()}

net.zero_grad()
micro, steps = 8, 4
for k in range(steps):                             # four micro-batches of 8
    part = slice(k * micro, (k + 1) * micro)
    loss = F.cross_entropy(net(xb[part]), yb[part]) / steps
    loss.backward()                                # adds into p.grad
accumulated = {name: p.grad.clone() for name, p in net.named_parameters()}
for name in whole:
    print(f"{name:9s} the same up to rounding: {torch.allclose(whole[name], accumulated[name], atol=1e-6)}")

# %% [markdown]
# One caution: this is exact for layers that treat samples independently. BatchNorm computes its
# statistics over the batch it sees, so with micro-batches it sees batches of 8, not 32.
#
# ### 3. Evaluate under `dt.no_grad()`
#
# Outside training you need no gradients, so there is no reason to record a graph, and
# recording one keeps every activation alive as long as the result is. Under `dt.no_grad()` the
# results are plain values: no `grad_fn`, nothing kept.

# %%
with dt.no_grad():
    evaluated = net(xb)
recorded = net(xb)
print("under no_grad:", evaluated.grad_fn, evaluated.requires_grad)
print("without it:   ", recorded.grad_fn, recorded.requires_grad)
assert evaluated.grad_fn is None and not evaluated.requires_grad
assert recorded.grad_fn is not None
assert np.allclose(evaluated.numpy(), recorded.numpy()), "the same values, without the graph"

# %% tags=["twin-torch"]
with torch.no_grad():
    evaluated = net(xb)
recorded = net(xb)
print("under no_grad:", evaluated.grad_fn, evaluated.requires_grad)
print("without it:   ", type(recorded.grad_fn).__name__, recorded.requires_grad)

# %% [markdown]
# ### 4. Keep numbers, not tensors
#
# A loss tensor that still has its graph keeps the graph's activations alive, however small the
# loss itself is. Collect `loss.item()` (a Python float) instead. To see the difference, a
# forward hook keeps a *weak* reference to every hidden activation (one that does not keep it
# alive), and after a loop over 10 batches we count how many are still alive.

# %%
def activations_alive(keep):
    """Run 10 batches (no backward, as in evaluation) and count the hidden outputs still alive."""
    refs = []
    handle = net[1].register_forward_hook(lambda m, inputs, out: refs.append(weakref.ref(out)))
    kept = []
    for _ in range(10):
        loss = F.cross_entropy(net(dt.randn(32, 10)), dt.randint(0, 3, (32,)))
        kept.append(keep(loss))
    del loss
    handle.remove()
    return sum(r() is not None for r in refs)


print("losses kept as tensors:", activations_alive(lambda loss: loss), "activations alive")
print("losses kept as floats: ", activations_alive(lambda loss: loss.item()), "activations alive")
assert activations_alive(lambda loss: loss) == 10
assert activations_alive(lambda loss: loss.item()) == 0

# %% tags=["twin-torch", "twin-same-numbers"]
def activations_alive(keep):
    """Run 10 batches (no backward, as in evaluation) and count the hidden outputs still alive."""
    refs = []
    handle = net[1].register_forward_hook(lambda m, inputs, out: refs.append(weakref.ref(out)))
    kept = []
    for _ in range(10):
        loss = F.cross_entropy(net(torch.randn(32, 10)), torch.randint(0, 3, (32,)))
        kept.append(keep(loss))
    del loss
    handle.remove()
    return sum(r() is not None for r in refs)


print("losses kept as tensors:", activations_alive(lambda loss: loss), "activations alive")
print("losses kept as floats: ", activations_alive(lambda loss: loss.item()), "activations alive")

# %% [markdown]
# The same goes for `total = total + loss` in a loop (the total drags every step's graph along)
# and for lists of model outputs kept "for later": keep `.item()`, `.numpy()` or `.detach()`.
#
# ### 5. `del` what you no longer need
#
# An array is freed when the last reference to it goes. A large tensor held by a variable stays
# until the variable is reassigned or deleted; in a notebook that can be a long time.

# %%
big = dt.zeros(1024, 1024)                         # 4 MB
ref = weakref.ref(big)
print(f"{big.data.nbytes / MB:.0f} MB alive:", ref() is not None)
del big
print("after del, alive:", ref() is not None)
assert ref() is None

# %% tags=["twin-torch", "twin-same-numbers"]
big = torch.zeros(1024, 1024)                      # 4 MB
ref = weakref.ref(big)
print(f"{big.nbytes / MB:.0f} MB alive:", ref() is not None)
del big
print("after del, alive:", ref() is not None)

# %% [markdown]
# ### 6. Half precision, recomputation and the allocator
#
# Three more savings come from the framework, each at a price. **Mixed precision** computes in
# 16-bit floats, halving the activations; small gradients then need the loss scaled.
# **Activation checkpointing** keeps only some layers' outputs and recomputes the rest during
# backward: far less memory for about a third more compute. The **allocator**'s settings help
# when "out of memory" comes from a cache of freed memory cut into pieces. Going deeper, below,
# shows each.

# %% [markdown]
# ### In short
#
# When a step does not fit: a smaller batch, with gradients accumulated to keep the batch you
# wanted; evaluation under `no_grad`, numbers instead of tensors, `del`; mixed precision; then
# activation checkpointing; the allocator's settings when the message shows much reserved but
# unallocated memory; and last, a smaller model or a GPU with more memory.

# %% [markdown]
# ### Going deeper: the same step, not only the same gradients
#
# The accumulated gradients above give the optimizer's step of the whole batch, momentum included.

# %% [markdown]
# The gradients agree up to float32 rounding (the sums are added in another order), so the step
# the optimizer takes from them is the same step too:

# %%
def one_step(accumulate):
    dt.manual_seed(1)
    net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
    opt = optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
    opt.zero_grad()
    if accumulate:
        for k in range(steps):
            part = slice(k * micro, (k + 1) * micro)
            (F.cross_entropy(net(xb[part]), yb[part]) / steps).backward()
    else:
        F.cross_entropy(net(xb), yb).backward()
    opt.step()                                     # one step, after all micro-batches
    return [p.numpy().copy() for p in net.parameters()]


assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(one_step(False), one_step(True)))

# %% tags=["twin-torch"]
def one_step(accumulate):
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
    opt.zero_grad()
    if accumulate:
        for k in range(steps):
            part = slice(k * micro, (k + 1) * micro)
            (F.cross_entropy(net(xb[part]), yb[part]) / steps).backward()
    else:
        F.cross_entropy(net(xb), yb).backward()
    opt.step()                                     # one step, after all micro-batches
    return [p.detach().clone() for p in net.parameters()]


print("the same step:", all(torch.allclose(a, b, atol=1e-6)
                            for a, b in zip(one_step(False), one_step(True))))

# %% [markdown] tags=["claim-paddle-gpu-padding-idx-ignore-index"]
# ### Going deeper: Paddle's ignore_index
#
# Where Paddle 3.3's cross-entropy counts the places it ignores, and the label to use there.

# %% [markdown] tags=["claim-paddle-gpu-padding-idx-ignore-index"]
# Paddle 3.3 averages over the places it keeps only for an `ignore_index` of 0 or more: with
# its default -100 the ignored places add 0 to the sum but still count in the mean, which
# shrinks the loss and every gradient by real ids / places (9/15 in the padded batch above).
# There, label the padding with the number of classes and pass that as `ignore_index`.

# %% [markdown]
# ### Going deeper: mixed precision, activation checkpointing and the allocator
#
# How each of the three works, what the big frameworks call it, and the arithmetic measured here.

# %% [markdown] tags=["claim-torch-amp-autocast", "claim-torch-amp-float16-limits", "claim-torch-amp-gradscaler", "claim-torch-amp-bfloat16-range", "claim-paddle-amp-auto-cast-gradscaler"]
# **Half-precision activations: mixed precision.** A float16 (or bfloat16) value takes 2 bytes
# instead of 4, so computing the forward and
# backward passes in half precision halves the activations. The big frameworks do it for you:
# `with torch.autocast("cuda", dtype=torch.float16):` around the forward pass in PyTorch,
# `with paddle.amp.auto_cast():` in Paddle (on a GPU: on the CPU, Paddle 3.3 warns that it has
# no effect). Two details make it work. The weights keep a float32 **master copy** for the
# update (a small update added to a large weight vanishes in float16: 1024 + 0.1 is 1024
# there); under PyTorch's autocast the parameters simply stay float32 and each op casts what it
# needs. And float16 cannot hold very small numbers: its smallest positive value is 2^-24,
# about `6e-8`, and anything below half of that becomes 0, so small gradients would be lost.
# **Loss scaling** multiplies the loss (and so every gradient) by a large factor before
# backward and divides it out, in float32, before the step: `torch.amp.GradScaler`,
# `paddle.amp.GradScaler`. PyTorch 2.13's starts at 2^16 = 65536; when a scaled gradient
# overflows (inf or nan) it skips that step and halves the scale, and after 2000 steps without
# one it doubles it (Paddle 3.3's `GradScaler` has the same defaults). (bfloat16 has float32's
# range and needs no scaling.) dltutor has no autocast, but the two facts are easy to see:

# %%
x32 = dt.randn(128, 512)
x16 = x32.to(dt.half)
print(f"a batch of activations: {x32.data.nbytes // 1024} KB in float32, "
      f"{x16.data.nbytes // 1024} KB in float16")

small_grad = np.float32(1e-8)                 # a real, small gradient
scale = np.float32(2 ** 16)                   # the loss scale (GradScaler's starting value)
survives = np.float16(small_grad * scale)     # the scaled gradient fits in float16
print("float16 of the gradient:", np.float16(small_grad),
      "| scaled, stored in float16, unscaled in float32:", np.float32(survives) / scale)
assert x16.data.nbytes * 2 == x32.data.nbytes
assert np.float16(small_grad) == 0                                 # lost without scaling
assert np.isclose(np.float32(survives) / scale, small_grad, rtol=1e-2)   # kept with it

# %% tags=["twin-torch", "twin-same-numbers"]
x32 = torch.randn(128, 512)
x16 = x32.half()
print(f"a batch of activations: {x32.nbytes // 1024} KB in float32, "
      f"{x16.nbytes // 1024} KB in float16")

small_grad = torch.tensor(1e-8)                    # a real, small gradient (float32)
scale = torch.amp.GradScaler("cpu").get_scale()   # the loss scale it starts with: 2 ** 16
survives = (small_grad * scale).half()             # the scaled gradient fits in float16
print("float16 of the gradient:", small_grad.half().item(),
      f"| scaled, stored in float16, unscaled in float32: {(survives.float() / scale).item():.6e}")

# %% [markdown] tags=["claim-torch-gpu-activation-checkpoint", "claim-paddle-gpu-recompute"]
# **Recompute instead of store: activation checkpointing.** Backward needs the forward pass's outputs.
# Instead of keeping all of them, keep only one in
# every few layers (the *checkpoints*) and, during backward, run the forward pass of one
# segment again to get its outputs back. Memory falls from every layer's output to the
# checkpoints plus one segment; the price is one more forward pass (roughly a third more
# compute). PyTorch: `torch.utils.checkpoint.checkpoint(segment, x, use_reentrant=False)`
# (PyTorch 2.13 warns when `use_reentrant` is left out); Paddle:
# `paddle.distributed.fleet.utils.recompute(segment, x)`. Both give the same gradients as
# keeping everything. The arithmetic, on the measured outputs of a deeper MLP (eight Linear +
# ReLU pairs, a batch of 128):

# %%
deep = nn.Sequential(*[module for _ in range(8) for module in (nn.Linear(512, 512), nn.ReLU())])
per_module = layer_output_bytes(deep, dt.randn(128, 512))
segment = 4                                         # a checkpoint after every 4 modules
checkpoints = sum(per_module[segment - 1::segment])
one_segment = max(sum(per_module[i:i + segment]) for i in range(0, len(per_module), segment))
print(f"keep everything: {sum(per_module) / MB:.2f} MB | checkpoints + one segment: "
      f"{(checkpoints + one_segment) / MB:.2f} MB")
assert len(per_module) == 16 and all(b == 128 * 512 * 4 for b in per_module)
assert checkpoints + one_segment == sum(per_module) // 2        # 4 + 4 outputs instead of 16

# %% tags=["twin-torch", "twin-same-numbers"]
from torch.utils.checkpoint import checkpoint_sequential

deep = nn.Sequential(*[module for _ in range(8) for module in (nn.Linear(512, 512), nn.ReLU())])
per_module = layer_output_bytes(deep, torch.randn(128, 512))
segment = 4                                         # a checkpoint after every 4 modules
checkpoints = sum(per_module[segment - 1::segment])
one_segment = max(sum(per_module[i:i + segment]) for i in range(0, len(per_module), segment))
print(f"keep everything: {sum(per_module) / MB:.2f} MB | checkpoints + one segment: "
      f"{(checkpoints + one_segment) / MB:.2f} MB")

x = torch.randn(128, 512, requires_grad=True)       # and the real thing gives the same gradients:
deep(x).sum().backward()
kept_all, x.grad = x.grad, None
checkpoint_sequential(deep, len(deep) // segment, x, use_reentrant=False).sum().backward()
print("checkpointed gradients equal:", torch.allclose(x.grad, kept_all))

# %% [markdown] tags=["claim-torch-gpu-oom-reserved-unallocated", "claim-torch-gpu-alloc-conf-expandable-segments", "claim-torch-gpu-memory-summary", "claim-paddle-gpu-allocator-flags", "claim-torch-gpu-empty-cache-other-programs"]
# **The allocator.** When you free an array on a GPU, one more layer sits in between: CuPy
# keeps freed blocks in a *memory pool* to reuse
# them quickly, so `nvidia-smi` still counts them as used. They are reused by your own program;
# to hand them back to the driver (for another program), call
# `cupy.get_default_memory_pool().free_all_blocks()`.
#
# Frameworks keep freed GPU memory in a cache for reuse (as CuPy's pool does). "Out of
# memory" can then come from a cache cut into pieces too small for the next array
# (*fragmentation*); PyTorch's out-of-memory message says how much memory is "reserved by
# PyTorch but unallocated" and, if that is large, suggests the setting that follows. PyTorch:
# set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` before the program starts, so cached
# blocks can grow instead of splitting; `torch.cuda.memory_summary()` shows the cache. Paddle: `FLAGS_allocator_strategy=auto_growth` (its default) takes memory as
# it is needed, and `FLAGS_fraction_of_gpu_memory_to_use` sets how much the older strategy
# takes up front. CuPy: `cupy.get_default_memory_pool().set_limit(fraction=0.5)` caps the pool.
# Emptying a cache (`torch.cuda.empty_cache()`, `free_all_blocks()`) hands the memory back for
# *other* programs; it gives your own program no more memory than it had (PyTorch's
# documentation of `empty_cache` says so).
#

# %% [markdown] tags=["claim-torch-names-11", "claim-paddle-names-11", "claim-mge-names-11", "claim-torch-gpu-device-context", "claim-paddle-gpu-device-guard", "claim-mge-gpu-no-device-block", "claim-torch-gpu-set-default-device", "claim-mge-gpu-no-module-to", "claim-torch-gpu-missing-error", "claim-paddle-gpu-missing-error", "claim-mge-gpu-missing-error", "claim-mge-gpu-no-graph-outside-gm", "claim-torch-gpu-grad-accumulation", "claim-paddle-gpu-grad-accumulation", "claim-mge-gpu-grad-accumulation", "claim-mge-gpu-coalesce-free-memory"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | is a GPU there? | `dt.backend.gpu_available()` | `torch.cuda.is_available()` | `paddle.device.cuda.device_count() > 0` | `megengine.is_cuda_available()` |
# | compute on the GPU from now on | `dt.backend.use("gpu")` | `torch.set_default_device("cuda")` | `paddle.set_device("gpu")` | `megengine.set_default_device("gpu0")` |
# | only inside a block | `with dt.backend.use("gpu"):` | `with torch.device("cuda"):` | `with paddle.device.device_guard("gpu"):` | — |
# | move a model | `model.to("gpu")` | `model.to("cuda")` | `model.to("gpu")` | — (build it after `set_default_device`) |
# | move a tensor | `t.to("gpu")` | `t.to("cuda")` | `t.cuda()` | `t.to("gpu0")` |
# | which device | `t.device` | `t.device` | `t.place` | `t.device` |
# | what you get without a GPU | `GPUUnavailableError` naming what is missing | `AssertionError` ("Torch not compiled with CUDA enabled") or a `RuntimeError` | `ValueError` from `paddle.set_device` | a runtime error |
# | evaluate without a graph | `with dt.no_grad():` | `with torch.no_grad():` | `with paddle.no_grad():` | — (nothing is recorded outside `GradManager`) |
# | accumulate gradients | `backward()` per micro-batch, one `step()` | the same | the same | `gm.backward()` per micro-batch, one `step()` |
# | free the memory cache | `cupy.get_default_memory_pool().free_all_blocks()` | `torch.cuda.empty_cache()` | `paddle.device.cuda.empty_cache()` | `megengine.coalesce_free_memory()` |
#
# ## Summary
#
# **In two lines:** the same code runs on either device as long as the model and every batch sit on
# the one it chose. A step's memory is parameters, gradients, optimizer state and activations, and
# the activations are what you shrink first.
#
# * The backend decides who computes: NumPy on the CPU, CuPy on the GPU. `dt.backend.use("gpu")`
#   (a call or a `with` block), `tensor.to("gpu")` and `model.to("gpu")` move work there; write
#   `device = "gpu" if dt.backend.gpu_available() else "cpu"` once and the same code runs
#   everywhere.
# * Without CuPy or a GPU you get a `GPUUnavailableError` saying which is missing and how to fix
#   it (`pip install cupy-cuda12x`), and nothing has changed.
# * Memory of a training step = parameters + gradients (the same again) + optimizer state (Adam:
#   twice again) + activations (in proportion to the batch size). Estimate it from
#   `p.data.nbytes`.
# * Out of memory: smaller batches; gradient accumulation (loss / k, `backward()` per
#   micro-batch, one `step()`: the same gradients); `dt.no_grad()` for evaluation; keep
#   `loss.item()`, not the loss; `del` large tensors.
# * Variable-length ids: keep the padding out of the loss with a mask (or `ignore_index=-100`),
#   sort the sequences into buckets to pad less, and cap the ids a step to cap the largest step.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("11")

# %% [markdown]
# **1.** Write `step_memory_mb(model, batch_size, optimizer="adam")`, the memory of one training
# step in MB from the four parts (`optimizer` is `"sgd"`, `"momentum"` or `"adam"`). The check
# calls it on the 784-512-512-10 MLP for several batch sizes and optimizers. How large a batch
# fits in 1 GB?

# %%
step_memory_mb = ____
ex.q1.check()

# %% [markdown]
# **2.** Accumulate over micro-batches of *unequal* sizes, 20 + 12 samples, so that the gradient
# equals the one of the whole batch of 32. By which factors must the two mean losses be scaled?
# Put them in `factors` (a pair) and check with the accumulation code above.

# %%
factors = ____
ex.q2.check()

# %% [markdown]
# **3.** Run the `activations_alive` experiment keeping `loss.detach()`. How many activations
# stay alive (`alive_detached`)? Then measure what keeping the whole `loss` costs: how many bytes
# do the activations it leaves alive hold (`kept_bytes`)? Each is one batch's output of
# `net[1]`, and its `.data.nbytes` is its size.

# %%
alive_detached = ____
kept_bytes = ____
ex.q3.check()

# %% [markdown]
# **4.** (Not checked: it needs a GPU.) If you have an NVIDIA GPU, `pip install cupy-cuda12x`,
# rerun the chapter and check that the parameters report `device == "gpu"`. Then time an epoch
# of the spirals model on both devices. Why is the GPU hardly faster for such a small model?
# *Hint: every op starts a GPU kernel, and for 64 x 64 matrices starting it costs more than the
# arithmetic.*
