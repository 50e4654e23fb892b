# %% [markdown] tags=["claim-torch-data-loader-shape"]
# # Data, checkpoints and resuming
#
# **About 30 minutes.** You will be able to:
#
# * batch and shuffle a data set reproducibly, without a Python loop per sample, even one larger
#   than memory;
# * load the next batches in background threads, and say when that speeds training up;
# * save everything a run needs in one checkpoint and resume it bit for bit;
# * explain why a pickled checkpoint can run code and a safetensors file cannot;
# * load a pretrained backbone under a new head, and check that the load filled what it should.
#
# Two chores surround every training run. **Feeding the model**: a large data set must reach it
# in shuffled mini-batches, fast enough that it never waits. **Stopping and starting again**: a
# long run gets interrupted (the laptop sleeps, the class ends) and must resume as if it had
# never stopped, bit for bit.
#
# This chapter answers both with `dltutor.data` (a `Dataset` and a `DataLoader` shaped like
# PyTorch's) and `dt.save` / `dt.load` (checkpoints as safetensors files).

# %%
import json
import os
import pickle
import tempfile
import threading
import time

import matplotlib.pyplot as plt
import numpy as np
from safetensors.numpy import load_file

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.data import DataLoader, Dataset, TensorDataset, make_spirals
from dltutor.nn import functional as F
from dltutor.optim import lr_scheduler

dt.manual_seed(0)
workdir = tempfile.TemporaryDirectory()   # every file of this chapter goes here, and is removed at the end
folder = workdir.name
print("quick mode:", dt.quick_mode())

# %% tags=["twin-torch"]
import multiprocessing
import os
import pickle
import tempfile
import threading
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, TensorDataset

from dltutor.data import make_spirals          # the kit's data, as NumPy arrays

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
QUICK = os.environ.get("DLTUTOR_QUICK") == "1"      # the kit's quick mode, read directly
workdir = tempfile.TemporaryDirectory()
folder = workdir.name
print("quick mode:", QUICK)

# %% [markdown]
# ## Reading a large data set efficiently
#
# ### Batches without a Python loop
#
# Keep the data as NumPy arrays with one row per sample and wrap them in a `TensorDataset`.
# A `DataLoader` then cuts an epoch into mini-batches. Because it can see the whole arrays, it
# gathers a batch with **one fancy index per array** (`X[indices]`), which NumPy does in C, instead
# of calling `dataset[i]` once per sample in Python.

# %%
X, y = make_spirals(n=200, seed=0)
dataset = TensorDataset(X, y)
loader = DataLoader(dataset, batch_size=64, shuffle=True, seed=42)
print(dataset)
print(loader)

xb, yb = next(iter(loader))
print("first batch:", xb.shape, xb.dtype, "|", yb.shape, yb.dtype)

# %% tags=["twin-torch"]
X, y = make_spirals(n=200, seed=0)
dataset = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
loader = DataLoader(dataset, batch_size=64, shuffle=True,
                    generator=torch.Generator().manual_seed(42))
print(len(dataset), "samples |", len(loader), "batches")    # their reprs show only an address

xb, yb = next(iter(loader))
print("first batch:", tuple(xb.shape), xb.dtype, "|", tuple(yb.shape), yb.dtype)

# %% [markdown]
# ### Shuffling that you can reproduce
#
# With `shuffle=True` every epoch visits the samples in a new order. The order of epoch `e` comes
# from a generator seeded with `(seed, e)`, so the same seed gives the same run every time, each
# epoch differs from the one before, and every sample is visited exactly once per epoch.
# `loader.epoch` says which epoch the next `for` loop will run.

# %%
ids = TensorDataset(np.arange(10))                 # the sample ids themselves as the data


def one_epoch(loader):
    """The sample ids of one epoch, batch by batch."""
    return [batch.numpy().tolist() for (batch,) in loader]


a = DataLoader(ids, batch_size=4, shuffle=True, seed=7)
b = DataLoader(ids, batch_size=4, shuffle=True, seed=7)
epochs_a = [one_epoch(a) for _ in range(3)]
epochs_b = [one_epoch(b) for _ in range(3)]
for e, epoch_batches in enumerate(epochs_a):
    print(f"epoch {e}: {epoch_batches}")
print("next epoch of loader a:", a.epoch)

# %% tags=["twin-torch"]
# PyTorch's loader keeps no epoch number: each epoch draws its order from `generator`, so the
# same seed gives the same sequence of orders (other orders than the kit's).
ids = TensorDataset(torch.arange(10))


def one_epoch(loader):
    """The sample ids of one epoch, batch by batch."""
    return [batch.tolist() for (batch,) in loader]


a = DataLoader(ids, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(7))
b = DataLoader(ids, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(7))
epochs_a = [one_epoch(a) for _ in range(3)]
epochs_b = [one_epoch(b) for _ in range(3)]
for e, epoch_batches in enumerate(epochs_a):
    print(f"epoch {e}: {epoch_batches}")
print("the same orders from the same seed:", epochs_a == epochs_b)

# %%
assert epochs_a == epochs_b, "the same seed gives the same order, epoch after epoch"
assert epochs_a[0] != epochs_a[1] != epochs_a[2], "each epoch has its own order"
for epoch_batches in epochs_a:
    visited = sorted(i for batch in epoch_batches for i in batch)
    assert visited == list(range(10)), "every sample once per epoch"
assert a.epoch == 3

# %% [markdown]
# The last batch of an epoch is smaller when the batch size does not divide the data set
# (10 = 4 + 4 + 2). `drop_last=True` leaves that partial batch out, for models that need equal
# batches (BatchNorm on a batch of 1 sample, for instance). The dropped samples are the ones
# the epoch's shuffled order puts last, so they change from epoch to epoch with the order.

# %%
dropping = DataLoader(ids, batch_size=4, shuffle=True, seed=7, drop_last=True)
print("len without drop_last:", len(a), "| with drop_last:", len(dropping))
dropped = []
for e in range(2):
    epoch_batches = one_epoch(dropping)
    dropped.append(sorted(set(range(10)) - {i for batch in epoch_batches for i in batch}))
    print(f"epoch {e} with drop_last: {epoch_batches}, left out: {dropped[-1]}")
assert len(a) == 3 and len(dropping) == 2
assert [len(batch) for batch in epoch_batches] == [4, 4]
for e in range(2):   # what is left out is that epoch's partial batch (same seed, same order)
    assert dropped[e] == sorted(epochs_a[e][-1])
later = [sorted(set(range(10)) - {i for batch in one_epoch(dropping) for i in batch})
         for _ in range(8)]
assert len({tuple(d) for d in dropped + later}) > 1, "other samples are left out in other epochs"

# %% tags=["twin-torch"]
dropping = DataLoader(ids, batch_size=4, shuffle=True, drop_last=True,
                      generator=torch.Generator().manual_seed(7))
print("len without drop_last:", len(a), "| with drop_last:", len(dropping))
for e in range(2):
    epoch_batches = one_epoch(dropping)
    left_out = sorted(set(range(10)) - {i for batch in epoch_batches for i in batch})
    print(f"epoch {e} with drop_last: {epoch_batches}, left out: {left_out}")

# %% [markdown]
# ### A data set larger than memory
#
# A `TensorDataset` only needs arrays that can be indexed. Save a large array once with
# `np.save`, open it with `np.load(..., mmap_mode="r")`, and the operating system reads from
# disk only the rows each batch asks for. The batches are the same as from the array in memory.

# %%
np.save(os.path.join(folder, "features.npy"), X)
X_on_disk = np.load(os.path.join(folder, "features.npy"), mmap_mode="r")
from_disk = [xb.numpy() for xb, _ in DataLoader(TensorDataset(X_on_disk, y), batch_size=64,
                                                shuffle=True, seed=3)]
from_memory = [xb.numpy() for xb, _ in DataLoader(dataset, batch_size=64, shuffle=True, seed=3)]
print("memory-mapped:", type(X_on_disk).__name__, "| batches:", len(from_disk))
assert all(np.array_equal(d, m) for d, m in zip(from_disk, from_memory))
del X_on_disk, from_disk                       # close the file before the folder is removed

# %% tags=["twin-torch", "twin-same-numbers"]
# A TensorDataset holds tensors in memory: a memory-mapped array goes into a Dataset of your
# own, whose __getitem__ reads one row from disk.
class MemmapDataset(Dataset):
    def __init__(self, path, labels):
        self.X, self.y = np.load(path, mmap_mode="r"), labels

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.X[i])), self.y[i]    # np.array: read, copy


np.save(os.path.join(folder, "features.npy"), X)
on_disk = MemmapDataset(os.path.join(folder, "features.npy"), torch.from_numpy(y))
seeded = lambda: dict(batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(3))
from_disk = [xb for xb, _ in DataLoader(on_disk, **seeded())]
from_memory = [xb for xb, _ in DataLoader(dataset, **seeded())]
print("memory-mapped:", type(on_disk.X).__name__, "| batches:", len(from_disk))
print("the same batches:", all(torch.equal(d, m) for d, m in zip(from_disk, from_memory)))

# %% [markdown]
# ### Loading in the background: `num_workers`
#
# When reading a sample is slow (a file to open, an image to decode, augmentation to compute),
# a plain loop alternates: load a batch, train on it, load the next... With `num_workers=2`, two
# background threads prepare the *next* batches while the model trains on the current one.
#
# Here is a deliberately slow data set: each sample takes a millisecond, as if read from disk.
# It notes *which thread* loaded each sample, and raises a flag once sample 16, the first of the
# second batch, is loaded.

# %%
class SlowDataset(Dataset):
    """Sample i is ([i, i, i], i % 2); reading each one takes 1 ms, like a small file."""

    def __init__(self, n, watch=None):
        self.n = n
        self.watch = watch                     # raise `seen` when this sample has been read
        self.seen = threading.Event()
        self.threads = set()                   # names of the threads that read samples

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(0.001)                      # waiting for the disk: the thread lets others run
        self.threads.add(threading.current_thread().name)
        if i == self.watch:
            self.seen.set()
        return np.full(3, i, dtype=np.float32), i % 2


slow = SlowDataset(64)
plain = [(xb.numpy(), yb.numpy()) for xb, yb in DataLoader(slow, batch_size=16, shuffle=True, seed=5)]
print("read by:", sorted(slow.threads))

slow = SlowDataset(64)
threaded = [(xb.numpy(), yb.numpy())
            for xb, yb in DataLoader(slow, batch_size=16, shuffle=True, seed=5, num_workers=2)]
print("read by:", sorted(slow.threads))

# %% tags=["twin-torch"]
# PyTorch's workers are processes, each with its own copy of the data set: what a worker writes
# into it (the thread names) never reaches this process. A multiprocessing.Event is shared.
class SlowDataset(Dataset):
    """Sample i is ([i, i, i], i % 2); reading each one takes 1 ms, like a small file."""

    def __init__(self, n, watch=None):
        self.n, self.watch = n, watch
        self.seen = multiprocessing.Event()    # shared with the worker processes
        self.threads = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(0.001)
        self.threads.add(threading.current_thread().name)
        if i == self.watch:
            self.seen.set()
        return np.full(3, i, dtype=np.float32), i % 2


def batches_of(slow, **options):
    return list(DataLoader(slow, batch_size=16, shuffle=True,
                           generator=torch.Generator().manual_seed(5), **options))


slow = SlowDataset(64)
plain = batches_of(slow)
print("read by:", sorted(slow.threads))
slow = SlowDataset(64)
workers = batches_of(slow, num_workers=2)
print("read by (as this process sees it):", sorted(slow.threads))
print("the same batches:", all(torch.equal(p[0], w[0]) and torch.equal(p[1], w[1])
                               for p, w in zip(plain, workers)))

# %%
assert len(plain) == len(threaded) == 4
assert all(np.array_equal(p[0], t[0]) and np.array_equal(p[1], t[1])
           for p, t in zip(plain, threaded)), "workers give exactly the same batches, in order"
assert slow.threads == {"dltutor-loader-0", "dltutor-loader-1"}, "read in background threads"

# %% [markdown]
# The workers change *who* reads the samples, never *what* the batches hold. Now the point of
# them: take the first batch and, while "training" on it, wait (at most a second) for the flag of
# sample 16. Without workers nothing reads ahead, so the flag never comes; with workers it is
# already there.

# %%
def read_ahead(num_workers):
    """True when batch 1 was being prepared while the loop still held batch 0."""
    slow = SlowDataset(64, watch=16)
    batches = iter(DataLoader(slow, batch_size=16, num_workers=num_workers))
    first = next(batches)                      # ... a training step on `first` would run here
    prepared = slow.seen.wait(timeout=1.0)
    batches.close()                            # stop the workers: we leave the epoch early
    return prepared


ahead = {workers: read_ahead(workers) for workers in (0, 2)}
for workers, prepared in ahead.items():
    print(f"num_workers={workers}: next batch read during the step? {prepared}")
assert ahead == {0: False, 2: True}

# %% tags=["twin-torch"]
def read_ahead(num_workers):
    """True when batch 1 was being prepared while the loop still held batch 0."""
    slow = SlowDataset(64, watch=16)
    batches = iter(DataLoader(slow, batch_size=16, num_workers=num_workers))
    first = next(batches)                      # ... a training step on `first` would run here
    prepared = slow.seen.wait(timeout=1.0)
    del batches                                # stops the worker processes
    return prepared


for workers in (0, 2):
    print(f"num_workers={workers}: next batch read during the step? {read_ahead(workers)}")

# %% [markdown]
# **When do threads help?** Python runs one thread's Python code at a time (the GIL, the global
# interpreter lock). A thread that waits for a file, sleeps, or computes inside NumPy, BLAS or a
# GPU kernel *lets go of* the GIL, so loading and training overlap. A `__getitem__` that is a
# long **pure-Python** loop holds the GIL, and the workers gain little: move that work into NumPy
# (vectorize it), or precompute it once.
#
# The next cell times one epoch with and without workers. Timings vary between runs and
# machines, so **the tests do not check its output** (tag `nbval-ignore-output`) and the stored
# notebook keeps none (tag `timing`): run it to see yours.

# %% tags=["nbval-ignore-output", "timing"]
def epoch_seconds(dataset, num_workers, step_seconds=0.016):
    """Time one epoch whose training step is a 16 ms wait (standing in for a real step)."""
    started = time.perf_counter()
    for xb, yb in DataLoader(dataset, batch_size=16, num_workers=num_workers):
        time.sleep(step_seconds)               # the "training step": releases the GIL
    return time.perf_counter() - started


print(f"slow reads, num_workers=0: {epoch_seconds(SlowDataset(128), 0):.3f} s")
print(f"slow reads, num_workers=2: {epoch_seconds(SlowDataset(128), 2):.3f} s")

# %% [markdown]
# ### Using every core of a CPU
#
# Three things make training on a multi-core CPU faster, in order of effect:
#
# 1. **Let BLAS use the cores.** The matrix products that dominate a step run in the BLAS library
#    NumPy ships with (OpenBLAS or MKL), which already splits each product over several threads.
#    `OMP_NUM_THREADS` (or `OPENBLAS_NUM_THREADS`, `MKL_NUM_THREADS`) sets how many; NumPy reads
#    it when imported, so set it *before* `import numpy`.
# 2. **Use larger batches.** A step costs the same Python work whatever the batch size; a larger
#    batch hands more work to BLAS, which scales with the cores (you may have to adjust the
#    learning rate).
# 3. **Load in the background** (`num_workers`) when reading is slow. Keep workers plus BLAS
#    threads at about the number of cores: more threads than cores just take turns.

# %% [markdown]
# ### Going deeper: inside the loader
#
# The loader's lookups counted, its strict flags, other frameworks' worker processes, and BLAS
# threads from a running notebook.

# %% [markdown]
# **One index per batch, counted.** To *see* how the loader reads the data, give it an array
# that counts how often it is indexed (a NumPy subclass with a counting `__getitem__`). One epoch
# of 200 samples in batches of 64 is 4 batches, and the array is indexed 4 times: once per batch,
# not once per sample.

# %%
class CountingArray(np.ndarray):
    """A NumPy array that counts how often it is indexed."""
    lookups = 0

    def __getitem__(self, index):
        CountingArray.lookups += 1
        return super().__getitem__(index)


spy = TensorDataset(X.view(CountingArray), y)
batches = list(DataLoader(spy, batch_size=64, shuffle=True, seed=42))
print("batches:", len(batches), "| times the feature array was indexed:", CountingArray.lookups)

# %% tags=["twin-torch"]
# PyTorch's DataLoader asks the data set for one sample at a time and stacks them; a
# BatchSampler as the sampler (batch_size=None) hands it a whole batch of indices at once.
class CountingDataset(TensorDataset):
    lookups = 0

    def __getitem__(self, index):
        CountingDataset.lookups += 1
        return super().__getitem__(index)


spy = CountingDataset(torch.from_numpy(X), torch.from_numpy(y))
batches = list(DataLoader(spy, batch_size=64, shuffle=True))
print("per sample: batches:", len(batches), "| lookups:", CountingDataset.lookups)
CountingDataset.lookups = 0
by_batch = BatchSampler(RandomSampler(spy), batch_size=64, drop_last=False)
batches = list(DataLoader(spy, batch_size=None, sampler=by_batch))
print("by batch:   batches:", len(batches), "| lookups:", CountingDataset.lookups)

# %%
assert len(batches) == 4 and CountingArray.lookups == 4, "one fancy index per batch"
first_indices = DataLoader(dataset, batch_size=64, shuffle=True, seed=42).order(0)[:64]
assert np.array_equal(batches[0][0].numpy(), X[first_indices]), "a batch is X[indices]"

# %% [markdown] tags=["claim-torch-dataloader-drop-last-not-bool", "claim-torch-dataloader-shuffle-truth-value", "claim-paddle-dataloader-bool-flags"]
# **Stricter than PyTorch.** `shuffle` and `drop_last` must be `True` or `False`; the usual
# offender is the string `"False"` read from a config file. PyTorch 2.13's `DataLoader` refuses
# `drop_last="False"` (a `ValueError`: "drop_last should be a boolean value") but takes the truth
# value of `shuffle`, and a non-empty string is true: `shuffle="False"` quietly *shuffles*.
# Paddle 3.3 refuses both (an `AssertionError`). dltutor refuses both and says why.

# %%
strict_errors = {}
for flag in ("shuffle", "drop_last"):
    try:
        DataLoader(ids, batch_size=4, **{flag: "False"})
    except TypeError as err:
        print(err)
        strict_errors[flag] = str(err)

# %% tags=["twin-torch"]
# PyTorch checks drop_last, but takes the truth value of shuffle: "False" is a non-empty
# string, so it shuffles.
try:
    DataLoader(ids, batch_size=4, drop_last="False")
except ValueError as err:
    print(err)
quietly = DataLoader(ids, batch_size=4, shuffle="False",
                     generator=torch.Generator().manual_seed(0))
print("shuffle='False' accepted; first epoch:", one_epoch(quietly))

# %%
assert all(flag in strict_errors[flag] and "'False'" in strict_errors[flag]
           for flag in ("shuffle", "drop_last"))

# %% [markdown] tags=["claim-torch-dataloader-workers-processes", "claim-paddle-dataloader-workers-processes"]
# **Processes in PyTorch and Paddle.** dltutor uses threads because they start instantly, work in
# Jupyter and share everything with the training loop, the data set object included. PyTorch and
# Paddle start *processes* instead (`num_workers` in both), which sidesteps the GIL. The batches
# do not go through a pipe byte by byte: a worker builds each batch in shared memory, which the
# main process maps (in PyTorch 2.13 a batch from a worker says `is_shared()`; in Paddle 3.3
# `use_shared_memory=True` is the `DataLoader`'s default). The price is elsewhere: processes take
# a while to start, and each worker reads from its own copy of the data set object, so whatever
# a worker's `__getitem__` writes into it (as `SlowDataset` notes its threads) never reaches the
# main process.
#
# **BLAS threads from inside a notebook.** `OMP_NUM_THREADS` is read when NumPy is imported;
# inside a running notebook, `threadpoolctl` (it comes with scikit-learn) shows the libraries and
# their threads (`threadpool_info()`) and limits them (`threadpool_limits`).

# %%
from threadpoolctl import threadpool_info, threadpool_limits

A = np.random.default_rng(0).normal(size=(256, 256))
blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]   # your BLAS and its threads
with threadpool_limits(limits=1, user_api="blas"):
    threads_inside = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    single = A @ A
print("inside threadpool_limits(limits=1) every BLAS uses 1 thread:",
      all(n == 1 for n in threads_inside))
print("steps per epoch of 200 samples:",
      {bs: len(DataLoader(dataset, batch_size=bs)) for bs in (8, 32, 128)})

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch sets its own threads: torch.set_num_threads(n) (OMP_NUM_THREADS gives the start value).
threads_before = torch.get_num_threads()
torch.set_num_threads(1)
A = torch.from_numpy(np.random.default_rng(0).normal(size=(256, 256)))
single = A @ A
print("inside set_num_threads(1) every op uses 1 thread:", torch.get_num_threads() == 1)
torch.set_num_threads(threads_before)
print("steps per epoch of 200 samples:",
      {bs: len(DataLoader(dataset, batch_size=bs)) for bs in (8, 32, 128)})

# %%
assert threads_inside == [1] * len(blas)
assert np.allclose(single, A @ A), "fewer threads change the speed, not the result"
assert [len(DataLoader(dataset, batch_size=bs)) for bs in (8, 32, 128)] == [25, 7, 2]

# %% [markdown]
# ## Saving a checkpoint and resuming exactly
#
# What does a training run consist of at step *t*? Not just the weights:
#
# | part | where it lives | what goes wrong if you forget it |
# | --- | --- | --- |
# | the weights | `model.state_dict()` | you start from scratch |
# | the optimizer's state: momentum buffers, Adam's two moments and step count, the groups' current `lr` | `opt.state_dict()` | the steps after resuming are different steps, with the lr set in the code |
# | the schedule's position | `sched.state_dict()` | the schedule starts over: the lrs that follow are the wrong ones |
# | where the data stream is: which epoch, hence which shuffle order | `loader.epoch` | the model sees the samples in other orders |
#
# Put all of it in one dict and `dt.save` it. To resume, build brand-new objects exactly as at
# the start and load each part into them. The experiment: train some epochs in one go; then
# train half of them, save, throw everything away, rebuild, load, train the other half, and
# compare the final weights.

# %%
epochs = 4 if dt.quick_mode() else 12
X, y = make_spirals(n=256, seed=1)
spirals = TensorDataset(X, y)


def build():
    """A fresh model, optimizer, scheduler and loader, the same way every time."""
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 3))
    opt = optim.Adam(model.named_parameters(), lr=0.05)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)   # lr: half a cosine, per epoch
    loader = DataLoader(spirals, batch_size=32, shuffle=True, seed=0)
    return model, opt, sched, loader


def train(model, opt, sched, loader, n_epochs):
    """Train for n_epochs; returns the loss of every step (as Python floats)."""
    losses = []
    for _ in range(n_epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    return losses


def weights(model):
    return {name: p.numpy().copy() for name, p in model.named_parameters()}


model, opt, sched, loader = build()
straight_losses = train(model, opt, sched, loader, epochs)
straight = weights(model)
print(f"{epochs} epochs in one go: final loss {straight_losses[-1]:.4f}")

# %% tags=["twin-torch"]
# PyTorch's loader counts no epochs: its shuffle draws from `generator`, whose state is the
# position in the data stream (checkpoint it with generator.get_state()).
epochs = 4 if QUICK else 12
X, y = make_spirals(n=256, seed=1)
spirals = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))


def build():
    """A fresh model, optimizer, scheduler and loader, the same way every time."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loader = DataLoader(spirals, batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    return model, opt, sched, loader


def train(model, opt, sched, loader, n_epochs):
    """Train for n_epochs; returns the loss of every step (as Python floats)."""
    losses = []
    for _ in range(n_epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    return losses


def weights(model):
    return {name: p.detach().clone() for name, p in model.named_parameters()}


model, opt, sched, loader = build()
straight_losses = train(model, opt, sched, loader, epochs)
straight = weights(model)
print(f"{epochs} epochs in one go: final loss {straight_losses[-1]:.4f}")

# %% tags=["twin-paddle"]
import os
import tempfile

import numpy as np
import paddle
from paddle import nn
from paddle.nn import functional as F

from dltutor.data import make_spirals

np.set_printoptions(precision=4, suppress=True)
epochs = 4 if os.environ.get("DLTUTOR_QUICK") == "1" else 12
workdir = tempfile.TemporaryDirectory()
folder = workdir.name
X, y = make_spirals(n=256, seed=1)


def build():
    """A fresh model, optimizer and scheduler (passed as the optimizer's learning rate)."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 3))
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=0.05, T_max=epochs)
    return model, paddle.optimizer.Adam(learning_rate=sched, parameters=model.parameters()), sched


def train(model, opt, sched, first_epoch, n_epochs):
    """Epoch e's order comes from (0, e), so the data position is the epoch number."""
    losses = []
    for epoch in range(first_epoch, first_epoch + n_epochs):
        order = np.random.default_rng([0, epoch]).permutation(len(X))
        for batch in np.array_split(order, np.arange(32, len(X), 32)):
            loss = F.cross_entropy(model(paddle.to_tensor(X[batch])), paddle.to_tensor(y[batch]))
            opt.clear_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    return losses


# Paddle keys the optimizer's state by generated names (linear_0.w_0_moment1_0): each run goes
# in a unique_name.guard(), which starts the names afresh, so a rebuilt run finds its state.
with paddle.utils.unique_name.guard():
    model, opt, sched = build()
    straight_losses = train(model, opt, sched, 0, epochs)
straight = {name: p.numpy().copy() for name, p in model.named_parameters()}
print(f"{epochs} epochs in one go: final loss {straight_losses[-1]:.4f}")

# %% [markdown]
# Now the interrupted run. The first half, then the checkpoint:

# %%
model, opt, sched, loader = build()
first_half = train(model, opt, sched, loader, epochs // 2)

checkpoint_path = os.path.join(folder, "checkpoint.safetensors")
dt.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
         "scheduler": sched.state_dict(), "epoch": epochs // 2,
         "loader_epoch": loader.epoch}, checkpoint_path)
del model, opt, sched, loader                  # the session ends: everything is gone

# %% tags=["twin-torch"]
model, opt, sched, loader = build()
first_half = train(model, opt, sched, loader, epochs // 2)

checkpoint_path = os.path.join(folder, "checkpoint.pt")
torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(), "epoch": epochs // 2,
            "loader_rng": loader.generator.get_state()}, checkpoint_path)
del model, opt, sched, loader                  # the session ends: everything is gone
print("saved:", os.path.basename(checkpoint_path))

# %% tags=["twin-paddle"]
# Paddle's habit: the weights in a .pdparams file, the optimizer's state in a .pdopt file (the
# scheduler's position travels in it, under "LR_Scheduler").
with paddle.utils.unique_name.guard():
    model, opt, sched = build()
    first_half = train(model, opt, sched, 0, epochs // 2)
paddle.save(model.state_dict(), os.path.join(folder, "checkpoint.pdparams"))
paddle.save(opt.state_dict(), os.path.join(folder, "checkpoint.pdopt"))
print("saved:", sorted(os.listdir(folder)), "| scheduler:", opt.state_dict()["LR_Scheduler"])
del model, opt, sched

# %% [markdown]
# A new session: build everything as at the start, then load. The order matters for the
# scheduler: build the optimizer and the scheduler first (the scheduler's constructor sets the lr
# to its starting value), *then* load the optimizer's state (which brings back the saved lr) and
# the scheduler's.
#
# `opt.load_state_dict` returns a report of the hyperparameters the loaded values replaced: here
# the lr, which the schedule had lowered. If you *meant* to change a hyperparameter on resuming,
# set it after loading, or the checkpoint wins.

# %%
model, opt, sched, loader = build()
checkpoint = dt.load(checkpoint_path)
print("checkpoint holds:", list(checkpoint))

print(model.load_state_dict(checkpoint["model"]))
report = opt.load_state_dict(checkpoint["optimizer"])
print(report)
sched.load_state_dict(checkpoint["scheduler"])
loader.set_epoch(checkpoint["loader_epoch"])
print(f"resuming at epoch {checkpoint['epoch']} | lr {opt.param_groups[0]['lr']:.4f} | "
      f"scheduler steps taken: {sched.last_epoch}")

second_half = train(model, opt, sched, loader, epochs - checkpoint["epoch"])
resumed = weights(model)

# %% tags=["twin-torch"]
model, opt, sched, loader = build()
checkpoint = torch.load(checkpoint_path)        # weights_only=True: the default since 2.6
print("checkpoint holds:", list(checkpoint))

print(model.load_state_dict(checkpoint["model"]))
opt.load_state_dict(checkpoint["optimizer"])    # returns None: it replaces the lr silently
sched.load_state_dict(checkpoint["scheduler"])
loader.generator.set_state(checkpoint["loader_rng"])
print(f"resuming at epoch {checkpoint['epoch']} | lr {opt.param_groups[0]['lr']:.4f} | "
      f"scheduler steps taken: {sched.last_epoch}")

second_half = train(model, opt, sched, loader, epochs - checkpoint["epoch"])
resumed = weights(model)
print("resumed run == uninterrupted run, bit for bit:", first_half + second_half == straight_losses
      and all(torch.equal(resumed[name], straight[name]) for name in straight))

# %% tags=["twin-paddle"]
with paddle.utils.unique_name.guard():
    model, opt, sched = build()
    model.set_state_dict(paddle.load(os.path.join(folder, "checkpoint.pdparams")))
    opt.set_state_dict(paddle.load(os.path.join(folder, "checkpoint.pdopt")))  # the scheduler too
    epoch = sched.last_epoch                    # stepped once per epoch: the epochs done
    print(f"resuming at epoch {epoch} | lr {sched():.4f}")
    second_half = train(model, opt, sched, epoch, epochs - epoch)
print("resumed run == uninterrupted run, bit for bit:", first_half + second_half == straight_losses
      and all(np.array_equal(p.numpy(), straight[name]) for name, p in model.named_parameters()))

# %%
assert list(report.changed) == ["group 0 lr"], "loading replaced the lr set in code"
assert first_half + second_half == straight_losses, "every step's loss is the same"
assert all(np.array_equal(resumed[name], straight[name]) for name in straight), \
    "the resumed run ends with exactly the same weights, bit for bit"
print("resumed run == uninterrupted run, bit for bit")

# %% [markdown]
# ### Going deeper: leaving one part out
#
# Resume without the optimizer's, the scheduler's or the loader's state, and see where the run
# goes.

# %% [markdown]
# Adam keeps, for every parameter, two running averages (of the gradient and of its square) and
# a step count; SGD with momentum keeps a velocity. They are as much a part of the run as the
# weights. Resume with the weights alone — a fresh optimizer, fresh averages — and the next
# steps are different steps. The same goes for the other parts of the checkpoint: leave one out
# and the run goes elsewhere.

# %%
def resume(load_optimizer=True, load_scheduler=True, load_loader=True):
    """Resume from the checkpoint, optionally leaving a part out; return the final weights."""
    model, opt, sched, loader = build()
    checkpoint = dt.load(checkpoint_path)
    model.load_state_dict(checkpoint["model"])
    if load_optimizer:
        opt.load_state_dict(checkpoint["optimizer"])
    if load_scheduler:
        sched.load_state_dict(checkpoint["scheduler"])
    if load_loader:
        loader.set_epoch(checkpoint["loader_epoch"])
    losses = train(model, opt, sched, loader, epochs - checkpoint["epoch"])
    return weights(model), losses


def max_difference(w):
    return max(float(np.abs(w[name] - straight[name]).max()) for name in straight)


variants = {"everything": resume(),
            "no optimizer state": resume(load_optimizer=False),
            "no scheduler state": resume(load_scheduler=False),
            "no loader epoch": resume(load_loader=False)}
for label, (w, _) in variants.items():
    print(f"resumed with {label:20s} largest weight difference to the straight run: "
          f"{max_difference(w):.1e}")

# %% tags=["twin-torch"]
def resume(load_optimizer=True, load_scheduler=True, load_loader=True):
    """Resume from the checkpoint, optionally leaving a part out; return the final weights."""
    model, opt, sched, loader = build()
    checkpoint = torch.load(checkpoint_path)
    model.load_state_dict(checkpoint["model"])
    if load_optimizer:
        opt.load_state_dict(checkpoint["optimizer"])
    if load_scheduler:
        sched.load_state_dict(checkpoint["scheduler"])
    if load_loader:
        loader.generator.set_state(checkpoint["loader_rng"])
    losses = train(model, opt, sched, loader, epochs - checkpoint["epoch"])
    return weights(model), losses


variants = {"everything": resume(),
            "no optimizer state": resume(load_optimizer=False),
            "no scheduler state": resume(load_scheduler=False),
            "no loader state": resume(load_loader=False)}
for label, (w, _) in variants.items():
    difference = max((w[name] - straight[name]).abs().max().item() for name in straight)
    print(f"resumed with {label:20s} largest weight difference to the straight run: "
          f"{difference:.1e}")

# %%
assert max_difference(variants["everything"][0]) == 0.0
for label in ("no optimizer state", "no scheduler state", "no loader epoch"):
    assert max_difference(variants[label][0]) > 1e-4, f"{label}: a different run"

# %% [markdown]
# The loss of every step shows where the runs part. A fresh Adam has no memory of the
# gradients so far, so its first step moves every coordinate by the full lr, whatever the
# gradient's size, and that lr is back at its value in the code (the lr the schedule had reached is part of the
# optimizer's state). The loss jumps right after the restart, while the exact resume follows
# the straight run's curve.

# %%
n_first = len(first_half)
steps = np.arange(len(straight_losses))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(steps, straight_losses, lw=3, color="lightgray", label="uninterrupted")
ax.plot(steps[n_first:], variants["everything"][1], color="tab:blue", label="resumed with everything")
ax.plot(steps[n_first:], variants["no optimizer state"][1], color="tab:red", ls="--",
        label="resumed without the optimizer state")
ax.axvline(n_first - 0.5, color="black", lw=0.8)
ax.text(n_first, min(straight_losses), " checkpoint", va="bottom")
ax.set_xlabel("optimizer step")
ax.set_ylabel("loss of the mini-batch")
ax.set_title("Resuming exactly, and with a fresh optimizer")
ax.legend()
plot.show()

# %% tags=["twin-torch"]
n_first = len(first_half)
print("loss of the first three steps after the checkpoint (the figure's start, as numbers):")
for label, losses in [("uninterrupted", straight_losses[n_first:]),
                      ("resumed with everything", variants["everything"][1]),
                      ("without the optimizer state", variants["no optimizer state"][1])]:
    print(f"  {label:28s}", np.round(losses[:3], 3))

# %% [markdown]
# ## What a checkpoint file is
#
# `dt.save` writes a [safetensors](https://huggingface.co/docs/safetensors) file: a JSON header
# saying where each array starts, its dtype and shape, then the raw bytes of the arrays. Nothing
# else. Plain values (the epoch, the lr) and the checkpoint's structure are a JSON document in
# the header's metadata. Any safetensors reader can open the file.

# %% [markdown] tags=["claim-torch-save-tensor-list-dict", "claim-torch-load-weights-only-map-location"]
# ### Saving a tensor, a list, a dict
#
# A checkpoint is a dict, but `dt.save` takes smaller things too, the way D2L's file I/O section
# saves them with `torch.save`: one tensor, a list (or tuple) of tensors, a dict of tensors.
# `dt.load` gives back the same kind of object. It also accepts `torch.load`'s two keywords:
# `weights_only=True` (loading here is *always* weights-only: the file holds arrays and plain
# values, never objects) and `map_location="cpu"` or `"gpu"` (which device the tensors go to).

# %%
x = dt.arange(4)
dt.save(x, os.path.join(folder, "x-file"))
x2 = dt.load(os.path.join(folder, "x-file"))

y = dt.zeros(4)
dt.save([x, y], os.path.join(folder, "x-files"))
x3, y3 = dt.load(os.path.join(folder, "x-files"), weights_only=True, map_location="cpu")

mydict = {"x": x, "y": y}
dt.save(mydict, os.path.join(folder, "mydict"))
mydict2 = dt.load(os.path.join(folder, "mydict"))
print(x2, (x3, y3), mydict2, sep="\n")
assert x2.tolist() == [0, 1, 2, 3] and x2.dtype == dt.int64       # the dtype survives
assert x3.tolist() == x.tolist() and y3.tolist() == [0.0] * 4
assert list(mydict2) == ["x", "y"] and mydict2["y"].dtype == dt.float32

# %% tags=["twin-torch", "twin-same-numbers"]
x = torch.arange(4)
torch.save(x, os.path.join(folder, "x-file"))
x2 = torch.load(os.path.join(folder, "x-file"))

y = torch.zeros(4)
torch.save([x, y], os.path.join(folder, "x-files"))
x3, y3 = torch.load(os.path.join(folder, "x-files"), weights_only=True, map_location="cpu")

mydict = {"x": x, "y": y}
torch.save(mydict, os.path.join(folder, "mydict"))
mydict2 = torch.load(os.path.join(folder, "mydict"))
print(x2, (x3, y3), mydict2, sep="\n")

# %% [markdown] tags=["claim-torch-save-zip-pickle", "claim-torch-load-weights-only-default", "claim-paddle-save-load-pickle", "claim-mge-save-load-pickle"]
# ### Why never pickle
#
# `pickle.dump` (and `torch.save`, `paddle.save`, `megengine.save`, which use it; `torch.save`
# puts the pickle in a zip archive beside the tensors' bytes) writes a *program* that rebuilds
# your objects, and loading runs that program. Anyone who hands you such a checkpoint can make it
# run any code they like on your machine. `paddle.load` and `megengine.load` run whatever the
# file holds; PyTorch 2.6 made `weights_only=True` the default of `torch.load`, which then
# rebuilds only tensors, containers and plain values and refuses the rest with an
# `UnpicklingError` (`weights_only=False` runs it all again). Here is a harmless example: the
# "weights" print a line the moment they are loaded.

# %%
class Surprise:
    def __reduce__(self):                      # tells pickle how to "rebuild" the object
        return (print, ("this line was run by pickle.loads: loading a pickle runs code",))


blob = pickle.dumps({"weight": Surprise()})
restored = pickle.loads(blob)                # the print runs here, during loading

# %% tags=["twin-torch"]
# torch.save pickles too: with weights_only=False, torch.load runs the file's program.
class Surprise:
    def __reduce__(self):                      # tells pickle how to "rebuild" the object
        return (print, ("this line was run by torch.load: loading a pickle runs code",))


surprise_path = os.path.join(folder, "surprise.pt")
torch.save({"weight": Surprise()}, surprise_path)
restored = torch.load(surprise_path, weights_only=False)    # the print runs here

# %% tags=["twin-paddle"]
# paddle.save pickles, and paddle.load has no weights_only: it runs whatever the file holds.
class Surprise:
    def __reduce__(self):                      # tells pickle how to "rebuild" the object
        return (print, ("this line was run by paddle.load: loading a pickle runs code",))


surprise_path = os.path.join(folder, "surprise.pdparams")
paddle.save({"weight": Surprise()}, surprise_path)
restored = paddle.load(surprise_path)          # the print runs here

# %% [markdown]
# A safetensors file can only ever give you arrays, so loading one is safe from any source.
# `dt.load` refuses a pickle outright, with a `dt.CheckpointError` that names the file and says
# what it found (we print its `problem`; the full message starts with the file's path).

# %%
pickle_path = os.path.join(folder, "weights.pkl")
with open(pickle_path, "wb") as f:
    f.write(blob)
try:
    dt.load(pickle_path)
except dt.CheckpointError as err:
    print(err.problem)
    pickle_error = err
assert pickle_error.path == pickle_path and pickle_path in str(pickle_error)
assert "pickle" in pickle_error.problem

# %% tags=["twin-torch"]
# torch.load's default, weights_only=True (PyTorch 2.6 on), rebuilds only tensors, containers
# and plain values, and refuses the rest.
def refusal(err):
    """The line of torch.load's long message that names what it refused."""
    line = next(line for line in str(err).splitlines() if "Unsupported global" in line)
    return line.strip().split(". Please")[0]


try:
    torch.load(surprise_path)
except pickle.UnpicklingError as err:
    print(refusal(err))

# %% [markdown]
# ### Going deeper: inside the file, and what it refuses
#
# The file's bytes, the saves and loads `dt.save` and `dt.load` refuse, damaged files and deep
# nesting.

# %% [markdown]
# **The bytes.** The file starts with an 8-byte number (the length of the header), then the JSON
# header, then the arrays. With `safetensors.numpy.load_file` you get a flat dict of NumPy arrays
# whose names are the paths in the checkpoint dict; the rest of the structure (the epoch, the lr,
# which key is a list...) is in the header's metadata.

# %%
raw = load_file(checkpoint_path)
for name in list(raw)[:6]:
    print(f"{name:40s} {str(raw[name].dtype):8s} {raw[name].shape}")
print("...", len(raw), "arrays in all")

with open(checkpoint_path, "rb") as f:
    header_length = int.from_bytes(f.read(8), "little")
    header = json.loads(f.read(header_length))
print("header entry of model/0.weight:", header["model/0.weight"])
print("plain values:", {k: checkpoint[k] for k in ("epoch", "loader_epoch")})

# %% tags=["twin-torch"]
# torch.save writes a zip archive: data.pkl (the pickled structure) and the tensors' bytes.
# safetensors.torch writes the kit's kind of file from PyTorch tensors.
import zipfile

from safetensors.torch import load_file, save_file

with zipfile.ZipFile(checkpoint_path) as archive:
    names = archive.namelist()
print(len(names), "files in the zip, among them:",
      [name for name in names if name.endswith(("data.pkl", "data/0"))])

save_file(model.state_dict(), os.path.join(folder, "model.safetensors"))
raw = load_file(os.path.join(folder, "model.safetensors"))
for name in list(raw)[:3]:
    print(f"{name:10s} {str(raw[name].dtype):14s} {tuple(raw[name].shape)}")

# %%
assert np.array_equal(raw["model/0.weight"], checkpoint["model"]["0.weight"].numpy())
assert header["model/0.weight"]["shape"] == [16, 2]
assert "dltutor" in header["__metadata__"]    # the structure, as JSON

# %% [markdown]
# Asking for a pickle, `weights_only=False`, is refused with the reason; so is saving a whole
# model, with what to save instead:

# %%
try:
    dt.save(nn.Linear(2, 1), os.path.join(folder, "model-file"))
except TypeError as err:
    print("TypeError:", err, end="\n\n")
    model_error = str(err)
try:
    dt.load(os.path.join(folder, "x-file"), weights_only=False)
except ValueError as err:
    print("ValueError:", err)
    unpickle_error = str(err)

# %% tags=["twin-torch"]
# torch.save takes a whole model (it pickles the object); torch.load's default refuses it.
torch.save(nn.Linear(2, 1), os.path.join(folder, "model-file"))
try:
    torch.load(os.path.join(folder, "model-file"))
except pickle.UnpicklingError as err:
    print(refusal(err))

# %%
assert "model.state_dict()" in model_error and "pickle" in unpickle_error
assert not os.path.exists(os.path.join(folder, "model-file"))      # nothing was written

# %% [markdown]
# **A damaged file.** A checkpoint can be cut short: the disk filled up, the copy was interrupted. `dt.load` checks
# the whole file before it returns anything, so a damaged file never gives you half a model:
# it raises a `dt.CheckpointError` naming the file and the problem.

# %%
with open(checkpoint_path, "rb") as f:
    data = f.read()
broken_path = os.path.join(folder, "broken.safetensors")
with open(broken_path, "wb") as f:
    f.write(data[: len(data) // 2])            # only the first half arrived

try:
    dt.load(broken_path)
except dt.CheckpointError as err:
    print(err.problem)
    broken_error = err

# %% tags=["twin-torch"]
with open(checkpoint_path, "rb") as f:
    data = f.read()
broken_path = os.path.join(folder, "broken.pt")
with open(broken_path, "wb") as f:
    f.write(data[: len(data) // 2])            # only the first half arrived

try:
    torch.load(broken_path)      # the zip reader fails where the bytes stop: no file name given
except (RuntimeError, OSError) as err:
    print(type(err).__name__ + ":", str(err).split(". ")[0])

# %%
assert broken_error.path == broken_path and broken_path in str(broken_error)
assert broken_error.problem.startswith("truncated")

# %% [markdown]
# `dt.save` itself never leaves such a file behind: it writes to a temporary file and renames it
# onto the target only once everything is on disk, so a save that fails (here: the model object
# instead of its state dict) leaves the previous checkpoint whole.

# %%
try:
    dt.save({"model": model, "epoch": 99}, checkpoint_path)
except TypeError as err:
    print(err)

# %% tags=["twin-torch"]
# torch.save writes straight into the target: a save that fails half-way has already destroyed
# the previous checkpoint. Write a temporary file and os.replace it onto the target instead.
def save_atomically(obj, path):
    torch.save(obj, path + ".partial")
    os.replace(path + ".partial", path)        # only once the whole file is written


for label, save in (("torch.save", torch.save), ("save_atomically", save_atomically)):
    try:
        save({"epoch": 99, "hook": lambda: 0}, checkpoint_path)   # a lambda cannot be pickled
    except pickle.PicklingError:
        pass
    try:
        print(f"after a failed {label}: epoch", torch.load(checkpoint_path)["epoch"])
    except (RuntimeError, OSError) as err:
        print(f"after a failed {label}:", type(err).__name__, str(err).split(":")[0])
    torch.save(checkpoint, checkpoint_path)    # the checkpoint back, for the next round

# %%
assert dt.load(checkpoint_path)["epoch"] == epochs // 2, "the old checkpoint is intact"

# %% [markdown] tags=["claim-torch-save-nesting-limit"]
# A checkpoint is a few levels deep (model, optimizer, plain values), so `dt.save` refuses a
# structure nested more than 100 levels; `torch.save` (PyTorch 2.13) pickles dicts nested about
# 490 levels deep before Python's default recursion limit stops it with a `RecursionError`. The
# refusal comes before anything is written.

# %%
nested = {}
leaf = nested
for _ in range(150):                           # {"x": {"x": {"x": ...}}}
    leaf["x"] = {}
    leaf = leaf["x"]
leaf["w"] = dt.zeros(2)
try:
    dt.save(nested, checkpoint_path)
except ValueError as err:
    print(err)
    deep_error = err

# %% tags=["twin-torch"]
# torch.save sets no limit of its own: Python's recursion limit stops it near 490 levels.
nested = {}
leaf = nested
for _ in range(150):                           # {"x": {"x": {"x": ...}}}
    leaf["x"] = {}
    leaf = leaf["x"]
leaf["w"] = torch.zeros(2)
torch.save(nested, os.path.join(folder, "nested.pt"))
depth, node = 0, torch.load(os.path.join(folder, "nested.pt"))
while "x" in node:
    depth, node = depth + 1, node["x"]
print("levels saved and loaded back:", depth)

# %%
assert "100 levels" in str(deep_error)
assert dt.load(checkpoint_path)["epoch"] == epochs // 2, "still the old checkpoint"

# %% [markdown]
# ## Exporting one layer
#
# The same two functions export a single layer: save its `state_dict()` (here the model's last
# layer: its weight and bias), inspect the file with any safetensors reader, and load it into
# another layer of the same shape. Inside the layer's own state dict the names have no prefix
# (`weight`, not `4.weight` as in the whole model's), so the file loads straight into any
# `nn.Linear(16, 3)`.

# %%
last = model[4]                                # the last Linear layer of the resumed model
layer_path = os.path.join(folder, "last_layer.safetensors")
dt.save(last.state_dict(), layer_path)

arrays = load_file(layer_path)
print({name: (str(a.dtype), a.shape) for name, a in sorted(arrays.items())})

other = nn.Linear(16, 3)                       # a new layer, with its own random values
print(other.load_state_dict(dt.load(layer_path)))
assert sorted(arrays) == ["bias", "weight"]
assert np.array_equal(arrays["weight"], model.state_dict()["4.weight"].numpy())
assert np.array_equal(other.weight.numpy(), last.weight.numpy())
assert np.array_equal(other.bias.numpy(), last.bias.numpy())
assert other.weight is not last.weight, "copied values, not a shared parameter"

# %% tags=["twin-torch", "twin-same-numbers"]
last = model[4]                                # the last Linear layer of the resumed model
layer_path = os.path.join(folder, "last_layer.pt")
torch.save(last.state_dict(), layer_path)

arrays = torch.load(layer_path)
print({name: (str(t.dtype).removeprefix("torch."), tuple(t.shape))
       for name, t in sorted(arrays.items())})

other = nn.Linear(16, 3)                       # a new layer, with its own random values
print(other.load_state_dict(arrays))

# %% [markdown]
# ## Loading a pretrained backbone under a new head
#
# The most common load in practice is not "resume exactly" but "reuse": keep the feature layers
# (the *backbone*) of a network trained on another task and put a new last layer (the *head*) on
# top for your own classes. The state dicts then differ where the heads differ, and
# `load_state_dict` has to be told what to skip. Here the pretrained model knows 10 classes and
# ours 3:

# %%
class Classifier(nn.Module):
    """A feature block (the backbone) and a Linear head for ``classes`` classes."""

    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, classes)

    def forward(self, x):
        return self.head(self.features(x))


dt.manual_seed(1)
pretrained = Classifier(10)     # stands for a trained model loaded from a file
model = Classifier(3)
head_before = model.head.weight.numpy().copy()
try:
    model.load_state_dict(pretrained.state_dict())
except nn.StateDictError as error:
    print(error)
assert np.array_equal(model.head.weight.numpy(), head_before)    # a refused load changes nothing

# %% tags=["twin-torch"]
# PyTorch's refused load is not all-or-nothing: the keys that fit are copied before it raises.
class Classifier(nn.Module):
    """A feature block (the backbone) and a Linear head for ``classes`` classes."""

    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, classes)

    def forward(self, x):
        return self.head(self.features(x))


torch.manual_seed(1)
pretrained = Classifier(10)     # stands for a trained model loaded from a file
model = Classifier(3)
try:
    model.load_state_dict(pretrained.state_dict())
except RuntimeError as error:
    print(error)
print("backbone copied all the same:",
      torch.equal(model.features[0].weight, pretrained.features[0].weight))

# %% tags=["twin-paddle"]
# Paddle's set_state_dict skips a key whose shape differs, with a warning, and loads the rest.
import warnings


class Classifier(nn.Layer):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, classes)

    def forward(self, x):
        return self.head(self.features(x))


paddle.seed(1)
pretrained, model = Classifier(10), Classifier(3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(model.set_state_dict(pretrained.state_dict()))     # (missing, unexpected) keys
for warning in caught:
    print(type(warning.message).__name__ + ":", warning.message)

# %% [markdown] tags=["claim-torch-strict-false-still-refuses-shapes", "claim-paddle-set-state-dict-skips-shape-mismatch"]
# `strict=False` would not help: it forgives keys that are *missing* or *unexpected*, never a
# key whose shape differs, in PyTorch as here. (Paddle's `set_state_dict` is the exception: it
# skips a mismatched key with a warning and loads the rest, so a run that ignores warnings goes
# on with a head it believes was loaded.) The recipe is to drop the head's keys yourself, then
# load with `strict=False`, and **read the result**: it lists every key it did not fill.

# %%
backbone = {name: value for name, value in pretrained.state_dict().items()
            if not name.startswith("head.")}
result = model.load_state_dict(backbone, strict=False)
print(result)
assert result.missing_keys == ["head.weight", "head.bias"] and result.unexpected_keys == []
assert np.array_equal(model.features[0].weight.numpy(), pretrained.features[0].weight.numpy())
assert not np.array_equal(model.head.weight.numpy()[:3], pretrained.head.weight.numpy()[:3])

# %% tags=["twin-torch"]
backbone = {name: value for name, value in pretrained.state_dict().items()
            if not name.startswith("head.")}
result = model.load_state_dict(backbone, strict=False)
print(result)

# %% [markdown] tags=["claim-torch-strict-false-loads-nothing-under-other-names"]
# **Names must match, and `strict=False` does not say so loudly.** Suppose the pretrained file
# came from a version of the model whose feature block was called `body`. Loaded as it is, every
# key is unexpected and every parameter missing: *nothing* is loaded, without an error, in
# PyTorch as here. The check is one line: after a `strict=False` load, only the keys you meant to
# skip may be missing, and nothing may be unexpected. Renaming the keys makes the load fit:

# %%
from_old_version = {name.replace("features.", "body.", 1): value
                    for name, value in backbone.items()}
fresh = Classifier(3)
result = fresh.load_state_dict(from_old_version, strict=False)
print(result)
assert result.unexpected_keys == ["body.0.weight", "body.0.bias"]     # nothing was loaded


def load_backbone(model, state, skip=("head.",)):
    """Load ``state`` into ``model`` except the keys starting with ``skip``; refuse a load
    that leaves anything else empty or brings keys the model does not have."""
    kept = {name: value for name, value in state.items() if not name.startswith(skip)}
    result = model.load_state_dict(kept, strict=False)
    not_loaded = [name for name in result.missing_keys if not name.startswith(skip)]
    assert not not_loaded and not result.unexpected_keys, (not_loaded, result.unexpected_keys)
    return result


renamed = {name.replace("body.", "features.", 1): value for name, value in from_old_version.items()}
print(load_backbone(fresh, renamed))
assert np.array_equal(fresh.features[0].bias.numpy(), pretrained.features[0].bias.numpy())

# %% tags=["twin-torch"]
from_old_version = {name.replace("features.", "body.", 1): value
                    for name, value in backbone.items()}
fresh = Classifier(3)
print(fresh.load_state_dict(from_old_version, strict=False))      # nothing was loaded


def load_backbone(model, state, skip=("head.",)):
    """Load ``state`` into ``model`` except the keys starting with ``skip``; refuse a load
    that leaves anything else empty or brings keys the model does not have."""
    kept = {name: value for name, value in state.items() if not name.startswith(skip)}
    result = model.load_state_dict(kept, strict=False)
    not_loaded = [name for name in result.missing_keys if not name.startswith(skip)]
    assert not not_loaded and not result.unexpected_keys, (not_loaded, result.unexpected_keys)
    return result


renamed = {name.replace("body.", "features.", 1): value for name, value in from_old_version.items()}
print(load_backbone(fresh, renamed))

# %% [markdown] tags=["claim-torch-names-10", "claim-paddle-names-10", "claim-mge-names-10", "claim-torch-dataloader-generator-order", "claim-torch-dataloader-workers-processes", "claim-paddle-dataloader-workers-processes", "claim-mge-dataloader-workers-processes", "claim-torch-distributed-sampler-set-epoch", "claim-paddle-distributed-batch-sampler-set-epoch", "claim-mge-data-sampler-no-set-epoch", "claim-torch-set-num-threads", "claim-torch-save-zip-pickle", "claim-paddle-save-load-pickle", "claim-mge-save-load-pickle", "claim-paddle-load-no-map-location", "claim-mge-load-map-location", "claim-torch-load-weights-only-map-location"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | data set of arrays | `TensorDataset(X, y)` | `torch.utils.data.TensorDataset` | `paddle.io.TensorDataset` | `megengine.data.dataset.ArrayDataset` |
# | your own data set | subclass `Dataset` (`__len__`, `__getitem__`) | `torch.utils.data.Dataset` | `paddle.io.Dataset` | `megengine.data.dataset.Dataset` |
# | batches, shuffled | `DataLoader(ds, batch_size, shuffle=True, seed=...)` | `DataLoader(ds, batch_size, shuffle=True, generator=g)` | `paddle.io.DataLoader(ds, batch_size=batch_size, shuffle=True)` | `DataLoader(ds, sampler=RandomSampler(ds, batch_size))` |
# | background loading | `num_workers=2` (threads) | `num_workers=2` (processes) | `num_workers=2` (processes) | `num_workers=2` (processes) |
# | shuffle order of a given epoch | `loader.set_epoch(e)` | `DistributedSampler.set_epoch(e)` | `DistributedBatchSampler.set_epoch(e)` | — |
# | BLAS threads | `OMP_NUM_THREADS`, `threadpoolctl` | `torch.set_num_threads(n)` | `OMP_NUM_THREADS` | — (its MKL is sequential; `set_default_device("multithread4")` for inference) |
# | save a checkpoint | `dt.save({"model": ..., "optimizer": ...}, path)` | `torch.save(...)` (pickle) or `safetensors.torch.save_file` | `paddle.save(state, path)` (pickle) | `megengine.save(obj, path)` (pickle) |
# | load it | `dt.load(path)` (always weights-only) | `torch.load(path, weights_only=True)` | `paddle.load(path)` | `megengine.load(path)` |
# | save one tensor, a list, a dict | `dt.save(x, path)`, `dt.save([x, y], path)` | `torch.save(x, path)` | `paddle.save(x, path)` | `megengine.save(x, path)` |
# | load onto a device | `dt.load(path, map_location="cpu")` | `torch.load(path, map_location="cpu")` | `paddle.load(path)` then `.cuda()` | `megengine.load(path, map_location=...)` |
# | restore weights | `model.load_state_dict(sd)` | `model.load_state_dict(sd)` | `model.set_state_dict(sd)` | `model.load_state_dict(sd)` |
# | load only what fits (a new head) | `model.load_state_dict(sd, strict=False)` | `model.load_state_dict(sd, strict=False)` | `model.set_state_dict(sd)` (skips a mismatched shape with a warning) | `model.load_state_dict(sd, strict=False)` |
# | restore optimizer | `opt.load_state_dict(sd)` | `opt.load_state_dict(sd)` | `opt.set_state_dict(sd)` | `opt.load_state_dict(sd)` |
# | restore schedule | `sched.load_state_dict(sd)` | `sched.load_state_dict(sd)` | `sched.set_state_dict(sd)` | `sched.load_state_dict(sd)` |
#
# ## Summary
#
# **In two lines:** a loader gathers each batch with one index per array, in an order fixed by the
# seed and the epoch. A checkpoint holds the whole run as arrays and plain values, never a
# pickle, so a resumed run goes on bit for bit.
#
# * Wrap arrays in a `TensorDataset`: the `DataLoader` gathers each batch with one fancy index
#   per array. `shuffle=True, seed=...` gives a new, reproducible order every epoch, with every
#   sample once; `drop_last=True` drops the partial batch; a memory-mapped `.npy` serves data
#   larger than memory.
# * `num_workers=2` reads the next batches in background threads while the model trains, with
#   exactly the same batches. Threads help when the work releases the GIL (I/O, NumPy, BLAS, a
#   GPU), not for pure-Python loops. On a multi-core CPU, let BLAS use the cores, use larger
#   batches, and load in the background.
# * A checkpoint is the model, the optimizer (momentum, Adam's moments, the current lr), the
#   scheduler and the data position. Save all of them, rebuild, load all of them, and the run
#   continues bit for bit. Leave one out and it does not.
# * `dt.save` writes safetensors: arrays and a JSON header, readable anywhere, safe to load,
#   never a pickle. It takes a tensor, a list or a dict as well as a whole checkpoint, and
#   `dt.load` accepts `torch.load`'s `weights_only` and `map_location`. A damaged or foreign
#   file raises `dt.CheckpointError` naming the file.
# * To reuse a pretrained backbone under a new head, drop the head's keys, load with
#   `strict=False` and check the result: only the keys you skipped may be missing, nothing may
#   be unexpected (a renamed block loads nothing, silently).
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("10")

# %% [markdown]
# **1.** Replace Adam by `optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)`: what does
# SGD keep for each parameter in `opt.state_dict()["state"]` (`sgd_state_keys`, the names)? Why
# does a resume without it stop being exact?

# %%
sgd_state_keys = ____
ex.q1.check()

# %% [markdown]
# **2.** How many batches does a `DataLoader` give for 100 samples with `batch_size=32`, without
# and with `drop_last=True` (`batches`, a pair)?

# %%
batches = ____
ex.q2.check()

# %% [markdown]
# **3.** A `Dataset` that adds a little noise to each sample (augmentation) must give the same
# batches with `num_workers=2` as with 0. Write `noise(i, epoch)`, returning 3 small random
# numbers, so that the same sample in the same epoch always gets the same noise, whichever
# thread draws it.

# %%
noise = ____
ex.q3.check()

# %% [markdown]
# **4.** Save `{"weights": dt.ones(2), "epoch": 3, "lr": 0.05}` and load it back: of which
# types are the loaded `"epoch"`, `"lr"` and `"weights"`? Give the three, in that order
# (`loaded_types`).

# %%
loaded_types = ____
ex.q4.check()

# %% [markdown]
# **5.** (Not checked: experiments.) Save a checkpoint in the middle of an epoch (after 3
# batches) and resume exactly (`loader.order(e)` gives epoch `e`'s order; skip the batches done
# with `itertools.islice`). Then make the slow data set's `__getitem__` a pure-Python loop
# instead of `time.sleep` and time an epoch with 0 and 2 workers: explain the result.

# %%
workdir.cleanup()
