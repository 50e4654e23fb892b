# %% [markdown]
# # Parameters across processes
#
# **About 30 minutes.** You will be able to:
#
# * start several processes from a notebook and keep their replicas of a model equal;
# * explain why data-parallel training averages gradients, and what that does to the learning
#   rate;
# * get frozen and unused parameters, gradient accumulation and gradient clipping right on
#   several processes;
# * choose between BatchNorm and SyncBatchNorm, and shard the optimizer's state with ZeRO;
# * find out which process failed, and why, from each process's own log.
#
# One process trains on one batch at a time. **Data parallelism** runs N copies of the same
# program: each process holds a full replica of the model, takes its own share of every batch,
# and after each backward pass the processes average their gradients, so every replica takes
# the same step. This chapter runs two such processes on your own machine and asks what each
# parameter must do to stay one model in two places.

# %%
import os
import tempfile

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim
from dltutor.optim import lr_scheduler

dt.manual_seed(0)
workdir = tempfile.TemporaryDirectory()     # the checkpoint of this chapter goes here
folder = workdir.name
print("quick mode:", dt.quick_mode())

# %% [markdown]
# ## How do I run one program on several processes from a notebook
#
# `dist.start_engines(2)` starts two MPI processes, the **engines**, as
# `mpiexec -n 2 python train.py` would. A cell that starts with `%%px` runs in both at once, and
# shows what each printed under `[stdout:0]` and `[stdout:1]`: the **rank** of the process. A
# plain cell still runs here, in the notebook's own single process.

# %%
engines = dist.start_engines(2)
engines.client[:].push({"folder": folder})     # the notebook's values an engine may use
engines

# %%
# %%px
import os

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
print(f"process {rank} of {world}")

# %% [markdown]
# The same code ran twice, and each copy knows who it is. Everything below follows from that:
# a process uses its rank to pick its share of the data, and the collectives (`all_reduce`,
# `broadcast`) to agree with the others.
#
# `all_reduce` replaces a tensor, in every process, by the sum over the processes;
# `broadcast` copies one process's tensor into all the others:

# %%
# %%px
t = dt.tensor([rank + 1.0])
dist.all_reduce(t)                     # 1 + 2 in both
s = dt.tensor([10.0 * rank])
dist.broadcast(s, src=1)               # process 1's value in both
print("all_reduce:", t.item(), "| broadcast from 1:", s.item())
assert t.item() == 3.0 and s.item() == 10.0

# %% [markdown]
# ## Why must every replica start from the same weights
#
# Each process builds its own model. If each one seeds its random numbers differently (or not
# at all), the replicas start as different networks, and averaging their gradients then averages
# the gradients of two different models. `dist.check_replicas(model)` compares every parameter
# and buffer across the processes:

# %%
# %%px
def make_net():
    """A small float64 MLP: the numbers below are exact enough to compare bit for bit."""
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(dtype=dt.float64)


dt.manual_seed(100 + rank)             # a different seed in each process
net = make_net()
print(dist.check_replicas(net))
assert not dist.check_replicas(net).equal

# %% [markdown] tags=["claim-torch-ddp-broadcast-at-start"]
# Wrapping the model in `DistributedDataParallel` (DDP) **broadcasts** process 0's parameters
# and buffers into every process first, as PyTorch's does: from then on the replicas are equal.

# %%
# %%px
ddp = dist.DistributedDataParallel(net)
print(dist.check_replicas(ddp))
assert dist.check_replicas(ddp).equal

# %% [markdown]
# Equal at the start is not enough: each process sees other data, so each replica's own
# gradient differs. Stepping on its own gradient, with no averaging, each replica drifts away:

# %%
# %%px
rng = np.random.default_rng(0)                       # the same data set in every process
X = dt.tensor(rng.standard_normal((16, 4)))
Y = dt.tensor(np.sin(X.numpy().sum(axis=1, keepdims=True)))
mine = slice(rank * 8, (rank + 1) * 8)               # this process's half of each batch

alone = make_net()
alone.load_state_dict(ddp.module.state_dict())       # equal at the start...
opt = optim.SGD(alone.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(alone(X[mine]), Y[mine]).backward()   # ...no averaging
    opt.step()
print(dist.check_replicas(alone))
assert not dist.check_replicas(alone).equal

# %% [markdown]
# ## Why are the gradients averaged
#
# Each process computes the gradient of the mean loss over its own 8 rows. DDP's backward then
# replaces it, in every process, by the **average** over the processes: an `all_reduce` of their
# sum, divided by N. The mean of two means over 8 rows is the mean over all 16 rows, so two
# processes with batch 8 take the step one process takes with batch 16.

# %% [markdown] tags=["claim-torch-ddp-averages-gradients"]
# Check it against one model here in each engine, fed the whole batch (PyTorch's DDP averages
# the same way):

# %%
# %%px
def grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


ddp.zero_grad()
nn.functional.mse_loss(ddp(X[mine]), Y[mine]).backward()     # averaged across the two
whole = make_net()
whole.load_state_dict(ddp.module.state_dict())
nn.functional.mse_loss(whole(X), Y).backward()               # one process, all 16 rows
gap = max(np.abs(a - b).max() for a, b in zip(grads(ddp), grads(whole)))
print("largest difference to the whole batch's gradient:", "below 1e-15" if gap < 1e-15 else gap)
assert gap < 1e-15

# %% [markdown]
# They agree to float64 rounding, not bit for bit: the whole batch sums 16 rows in one order,
# the two processes sum 8 and 8 and then add the two. Sum in the processes' order (each half's
# gradient, added, halved) and the agreement is exact:

# %%
# %%px
whole.zero_grad()
for half in (slice(0, 8), slice(8, 16)):                     # the gradients accumulate
    nn.functional.mse_loss(whole(X[half]), Y[half]).backward()
for p in whole.parameters():
    p.grad.data /= 2                                          # the sum over 2, halved
same_bits = all(np.array_equal(a, b) for a, b in zip(grads(ddp), grads(whole)))
print("bit for bit:", same_bits)
assert same_bits

# %% [markdown]
# So every replica steps with the same gradient and they stay equal. Three steps of SGD with
# momentum, and the replicas are still one model:

# %%
# %%px
opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for _ in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(ddp(X[mine]), Y[mine]).backward()
    opt.step()
print(dist.check_replicas(ddp))
assert dist.check_replicas(ddp).equal

# %% [markdown]
# ## What happens to the learning rate with more processes
#
# With N processes at batch B each, one step uses N x B samples, and an epoch has N times fewer
# steps. The averaged gradient has the same size as one process's, only less noisy, so with the
# same lr the model moves N times less per epoch. The **linear-scaling rule** (Goyal et al.,
# 2017) multiplies the lr by N: one step of batch N x B at lr N x η is close to N steps of
# batch B at lr η, as long as the gradient changes little over those N steps.
#
# Here, in the notebook's own process, on a linear regression: four steps of 8 rows at lr 0.05
# against one step of all 32 rows at lr 0.2.

# %%
rng = np.random.default_rng(1)
Xr = dt.tensor(rng.standard_normal((32, 3)))
yr = Xr @ dt.tensor([[1.0], [-2.0], [0.5]])


def regression_after(steps, lr):
    """Weights of a zero-initialised linear model after `steps` SGD steps over the 32 rows,
    each step on the next 32 / steps rows."""
    w = dt.zeros(3, 1, dtype=dt.float64, requires_grad=True)
    rows = 32 // steps
    for k in range(steps):
        batch = slice(k * rows, (k + 1) * rows)
        loss = ((Xr[batch] @ w - yr[batch]) ** 2).mean()
        loss.backward()
        with dt.no_grad():
            w -= lr * w.grad
            w.grad = None
    return w.detach().numpy().ravel()


small_steps = regression_after(4, lr=0.05)
one_big_step = regression_after(1, lr=0.2)
same_lr = regression_after(1, lr=0.05)
print("4 steps, batch 8,  lr 0.05:", np.round(small_steps, 3))
print("1 step,  batch 32, lr 0.2: ", np.round(one_big_step, 3))
print("1 step,  batch 32, lr 0.05:", np.round(same_lr, 3))
assert np.abs(small_steps - one_big_step).max() < np.abs(small_steps - same_lr).max() / 2

# %% [markdown]
# The scaled lr lands near the four small steps; the unscaled one covers about a quarter of the
# way. "Close" holds only while the gradient changes little within the N steps it replaces, and
# at the start of training it changes fast: the weights are random, the gradients large. So the
# rule comes with a **warmup**: the lr rises from a small value to N x η over the first few
# hundred steps. With 4 processes and a base lr of 0.1 found on one:

# %%
processes, base_lr = 4, 0.1
w0 = dt.zeros(1, requires_grad=True)
warm_opt = optim.SGD([w0], lr=processes * base_lr)
warmup = lr_scheduler.LinearWarmup(warm_opt, warmup_steps=5, start_factor=1 / processes)
lrs = []
for _ in range(7):
    lrs.append(warm_opt.param_groups[0]["lr"])
    warm_opt.step()
    warmup.step()
print("lr per step:", [round(lr, 3) for lr in lrs])
assert lrs[0] == base_lr and abs(lrs[-1] - processes * base_lr) < 1e-12

# %% [markdown]
# The rule is a starting point, not a law: it holds up to batches of a few thousand images for
# ResNets in the paper above, and beyond that (or with Adam, whose steps depend less on the
# gradient's size) the best lr grows more slowly than N.

# %% [markdown]
# ## Why does a frozen or unused parameter stop DistributedDataParallel
#
# DDP knows a backward is over when every parameter it wraps has received its gradient. A
# parameter the forward pass never uses never receives one, so DDP waits for it; the next
# forward then stops with an error, since the processes would otherwise wait for one another for
# ever. Here a second head exists but this step does not use it:

# %%
# %%px
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.main = nn.Linear(8, 1)
        self.aux = nn.Linear(8, 1)        # used only in some steps (here: never)

    def forward(self, x):
        return self.main(self.body(x).tanh())


dt.manual_seed(0)
two = dist.DistributedDataParallel(TwoHeads().to(dtype=dt.float64))
nn.functional.mse_loss(two(X[mine]), Y[mine]).backward()     # fine: nothing is averaged yet
try:
    two(X[mine])
except RuntimeError as err:
    print(str(err)[:150], "...")

# %% [markdown] tags=["claim-torch-ddp-unused-parameter-error", "claim-torch-ddp-find-unused-parameters"]
# PyTorch stops the same way (its message says "Expected to have finished reduction in the prior
# iteration"). Two ways out:
#
# * **Freeze** what is never trained (`requires_grad_(False)`) *before* wrapping: DDP leaves
#   frozen parameters out of its reducer altogether.
# * `find_unused_parameters=True`: after each forward, DDP walks the graph to find the
#   parameters it did not reach and counts them as done. Their `grad` stays None. The price: a
#   walk of the whole graph on every step, even the steps that use everything.

# %%
# %%px
dt.manual_seed(0)
frozen = TwoHeads().to(dtype=dt.float64)
frozen.aux.requires_grad_(False)
frozen = dist.DistributedDataParallel(frozen)

dt.manual_seed(0)
found = dist.DistributedDataParallel(TwoHeads().to(dtype=dt.float64), find_unused_parameters=True)
for model in (frozen, found):
    for _ in range(2):                                  # two steps: no error now
        model.zero_grad()
        nn.functional.mse_loss(model(X[mine]), Y[mine]).backward()
print("aux.weight.grad:", frozen.module.aux.weight.grad, "|", found.module.aux.weight.grad)
print("skipped by find_unused_parameters:", found.unreached_parameters)
assert found.module.aux.weight.grad is None
assert np.array_equal(frozen.module.main.weight.grad.numpy(), found.module.main.weight.grad.numpy())

# %% [markdown]
# Both give the used parameters the same averaged gradients. Freeze what is frozen for good;
# keep `find_unused_parameters` for models whose forward really changes from step to step.

# %% [markdown]
# ## How does gradient accumulation work with several processes
#
# Accumulating over 4 micro-batches before a step (chapter 10) needs the average only once, at
# the last backward. Inside `with ddp.no_sync():` a backward only adds to the process's own
# gradient; the first backward outside it averages the sum. We count the all-reduces DDP sends
# by wrapping the one it calls:

# %%
# %%px
import contextlib

import dltutor.distributed.ddp as ddp_module


@contextlib.contextmanager
def counting_all_reduces():
    """Count DDP's calls of all_reduce (each averaging sends two: which gradients exist, and
    the gradients themselves)."""
    calls, original = [], ddp_module.all_reduce

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    ddp_module.all_reduce = counted
    try:
        yield calls
    finally:
        ddp_module.all_reduce = original


micro = [slice(rank * 8 + 2 * k, rank * 8 + 2 * k + 2) for k in range(4)]   # 4 x 2 rows


def accumulate(model, skip_sync):
    model.zero_grad()
    with counting_all_reduces() as calls:
        for k, rows in enumerate(micro):
            last = k == len(micro) - 1
            with (contextlib.nullcontext() if last or not skip_sync else model.no_sync()):
                (nn.functional.mse_loss(model(X[rows]), Y[rows]) / len(micro)).backward()
    return len(calls), grads(model)


dt.manual_seed(0)
acc = dist.DistributedDataParallel(make_net())
every_time, g_every = accumulate(acc, skip_sync=False)
once, g_once = accumulate(acc, skip_sync=True)
gap = max(np.abs(a - b).max() for a, b in zip(g_every, g_once))
print(f"all-reduces: {every_time} without no_sync, {once} with it;",
      "same gradient:", gap < 1e-15)
assert once < every_time and gap < 1e-15

# %% [markdown] tags=["claim-torch-ddp-no-sync"]
# Four averagings become one (two all-reduces each here), and the gradient is the same: the
# average of sums equals the sum of averages, to rounding. PyTorch's `no_sync()` does the same.
# On a real network the all-reduce moves every gradient through the network card, so this is
# where accumulation saves time.

# %% [markdown]
# ## How do I clip gradients by their global norm on several processes
#
# `clip_grad_norm_` (chapter 09) scales all gradients by one factor, from the norm of all of
# them together. With several processes, "all of them" means the gradient of the whole batch:
# each process's own gradient, before the average, has another norm, and clipping with it
# gives each replica another factor.

# %%
# %%px
dt.manual_seed(0)
clip_net = dist.DistributedDataParallel(make_net())
with clip_net.no_sync():                                      # each process's own gradient
    nn.functional.mse_loss(clip_net(X[mine]), Y[mine]).backward()
own_norm = np.sqrt(sum((g ** 2).sum() for g in grads(clip_net)))
clip_net.zero_grad()
nn.functional.mse_loss(clip_net(X[mine]), Y[mine]).backward()   # averaged
right_norm = optim.clip_grad_norm_(clip_net.parameters(), max_norm=0.1).item()
print(f"own gradient's norm {own_norm:.4f} | the averaged gradient's norm {right_norm:.4f}")
assert abs(own_norm - right_norm) > 0.01

# %% [markdown]
# The two processes' own norms differ from each other and from the norm of the averaged gradient:
# clipped per process, the replicas would step apart (or, clipped before the average, take a step
# that no one process with the whole batch would take). After DDP's backward the gradients are
# already averaged, so `clip_grad_norm_` there sees the right norm in every process.
#
# When each process holds only **part** of the gradients (ZeRO's later stages, a model split
# across processes), the global norm is the square root of the **sum of every process's squared
# norm**: one `all_reduce` of a single number. Here each process takes the squares of half the
# parameters (of a fresh, unclipped backward):

# %%
# %%px
clip_net.zero_grad()
nn.functional.mse_loss(clip_net(X[mine]), Y[mine]).backward()   # averaged, not clipped yet
params = list(clip_net.parameters())
my_part = params[rank::world]                         # a share of the parameters each
squares = dt.tensor([sum(float((p.grad.numpy() ** 2).sum()) for p in my_part)])
dist.all_reduce(squares)
shared_norm = float(np.sqrt(squares.item()))
print(f"norm from the shares: {shared_norm:.4f}")
assert abs(shared_norm - right_norm) < 1e-6      # clip_grad_norm_ returns a float32 norm

# %% [markdown]
# ## Why do BatchNorm statistics differ across processes
#
# BatchNorm normalizes with the mean and variance **of the batch it sees**. In each process that
# is the process's share: two processes with batch 8 compute two sets of statistics over 8 rows,
# not one over 16, and their running statistics drift apart. Give process 1 data shifted by +3
# (as when the data set is sorted and each process reads a contiguous part):

# %%
# %%px
Xb = dt.tensor(np.random.default_rng(2).standard_normal((16, 3)) + np.repeat([[0.0], [3.0]], 8, 0))


def batchnorm_net(sync):
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).to(dtype=dt.float64)
    if sync:
        model = dist.SyncBatchNorm.convert_sync_batchnorm(model)
    return dist.DistributedDataParallel(model, broadcast_buffers=False)


def one_step_outputs(model):
    out = model(Xb[mine])
    out.sum().backward()
    return out.numpy(), model.module[1].running_mean.numpy()


plain_out, plain_mean = one_step_outputs(batchnorm_net(sync=False))
sync_out, sync_mean = one_step_outputs(batchnorm_net(sync=True))
print("BatchNorm running_mean:    ", np.round(plain_mean, 3))
print("SyncBatchNorm running_mean:", np.round(sync_mean, 3))

# %% [markdown]
# With BatchNorm each process keeps its own running mean; with SyncBatchNorm both hold the same
# one. Which is right? One process with the whole batch of 16, here in each engine:

# %%
# %%px
dt.manual_seed(0)
one = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).to(dtype=dt.float64)
whole_out = one(Xb).numpy()[mine]
whole_mean = one[1].running_mean.numpy()
sync_gap = max(np.abs(sync_out - whole_out).max(), np.abs(sync_mean - whole_mean).max())
plain_gap = np.abs(plain_out - whole_out).max()
print(f"SyncBatchNorm vs the whole batch: {'below 1e-12' if sync_gap < 1e-12 else sync_gap}"
      f" | BatchNorm: {plain_gap:.2f}")
assert sync_gap < 1e-12 and plain_gap > 0.1

# %% [markdown]
# SyncBatchNorm all-reduces the per-channel sums and counts (then the squared distances from the
# mean), so its statistics are those of the whole batch, in forward and backward. It costs
# collectives inside every forward; plain BatchNorm is fine when each process's batch is large
# and drawn from the same distribution (a `DistributedSampler` that shuffles).
# In evaluation both use the running statistics and no collective. Plain DDP copies process 0's
# buffers into the others at each forward (`broadcast_buffers=True`, the default), so the
# running statistics that get saved are process 0's.

# %% [markdown]
# ## What do I do when one process of several fails
#
# With several processes, an error in one of them often shows up somewhere else. The others
# wait in a collective for a process that has died, and what you see is a timeout, a "NCCL
# error" or a launcher's summary such as "Out of all 4 Trainers" listing which failed, not the
# error itself. The real message is in **the failed process's own output**. Read it first:
#
# * every process writes its own log; find the first rank that failed and read its log from the
#   top (the others only report that it disappeared);
# * an error in only one rank usually means something only that rank does: its share of the
#   data (a bad sample, an empty last batch), its GPU (out of memory, a wrong device id), or
#   code under `if rank == 0:`;
# * NCCL errors are most often a symptom: a process that died, processes that call different
#   collectives, or tensors of different shapes; set `NCCL_DEBUG=INFO` to have NCCL say more.
#   When every run fails, even the smallest, check the machine itself with NVIDIA's
#   `nccl-tests`: a driver or NCCL install that does not fit is the other common cause;
# * each process needs its own share of the data: a `DistributedSampler` in the `DataLoader`
#   (`sampler=`), with `set_epoch(epoch)` so that each epoch shuffles anew.
#
# Here is the kit's sampler, in the two engines: each process gets its own half, and the two
# halves cover the data set once.

# %%
# %%px
from dltutor.data import DataLoader, TensorDataset

sampler = dist.DistributedSampler(TensorDataset(np.arange(12)), shuffle=True, seed=0)
loader = DataLoader(TensorDataset(np.arange(12)), batch_size=3, sampler=sampler)
sampler.set_epoch(0)
print("my samples:", sorted(i for (batch,) in loader for i in batch.numpy().tolist()))

# %% [markdown]
# An error in one engine shows under its own rank, with its own traceback: the notebook's
# version of reading each rank's log. Here process 1's share of the rows runs past the end of
# the data:

# %%
# %%px
my_rows = np.arange(16)[mine] + (9 if rank == 1 else 0)   # process 1's share runs past the end
try:
    nn.functional.mse_loss(make_net()(X[my_rows]), Y[my_rows]).backward()
    print("fine")
except IndexError as err:
    print("process", rank, "failed:", type(err).__name__, str(err)[:60])

# %% [markdown] tags=["claim-paddle-launch-log-dir"]
# Paddle's launcher writes one log per process into a folder:
# `python -m paddle.distributed.launch --log_dir logs train.py` gives `logs/workerlog.0`,
# `logs/workerlog.1` and so on. When a process fails, its summary names the rank and its log
# (`Container rank 1 status failed ... log logs/workerlog.1`), and `workerlog.1` holds that
# process's traceback. Under MPICH's `mpiexec`, `-outfile-pattern log.%r` writes one file per
# rank (`log.0`, `log.1`).

# %% [markdown]
# ## How much optimizer memory does each process need
#
# With a plain optimizer every process keeps the whole optimizer state: Adam's two moments are
# two more copies of the model, the same in every process. **ZeRO stage 1**
# (`ZeroRedundancyOptimizer`) shares the parameters out: each process keeps the state of its
# share only, steps it, and broadcasts the updated values to the others. First, what one process
# with a plain Adam holds, here in the notebook:

# %%
def zero_net():
    dt.manual_seed(0)
    layers = [m for _ in range(4) for m in (nn.Linear(6, 6), nn.Tanh())]
    return nn.Sequential(*layers, nn.Linear(6, 1)).to(dtype=dt.float64)


Xz = dt.tensor(np.random.default_rng(3).standard_normal((8, 6)))
Yz = dt.tensor(np.random.default_rng(4).standard_normal((8, 1)))


def zero_steps(model, opt, steps, rows):
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(Xz[rows]), Yz[rows]).backward()
        opt.step()


def two_halves_step(model, opt):
    """One step on the gradient two processes average: each half's, added, halved."""
    opt.zero_grad()
    for rows in (slice(0, 4), slice(4, 8)):
        nn.functional.mse_loss(model(Xz[rows]), Yz[rows]).backward()
    for p in model.parameters():
        p.grad.data /= 2
    opt.step()


# this part's model, data and steps, sent to the engines too (push: a variable each)
engines.client[:].push({"zero_net": zero_net, "Xz": Xz, "Yz": Yz, "zero_steps": zero_steps,
                        "two_halves_step": two_halves_step}, block=True)
single = zero_net()
single_opt = optim.Adam(single.named_parameters(), lr=0.01)
nn.functional.mse_loss(single(Xz), Yz).backward()
single_opt.step()
values = sum(p.numel() for p in single.parameters())
one_process_bytes = dist.zero.optimizer_state_bytes(single_opt)
print(f"{values} parameter values; Adam's state in 1 process: {one_process_bytes} bytes")
assert one_process_bytes == 2 * values * 8            # two float64 moments per value

# %% [markdown]
# In the two engines, the same model under DDP with a `ZeroRedundancyOptimizer` around Adam:

# %%
# %%px
half = slice(rank * 4, (rank + 1) * 4)
zero = dist.DistributedDataParallel(zero_net())
zero_opt = dist.ZeroRedundancyOptimizer(zero.module.named_parameters(), optim.Adam, lr=0.01)
zero_steps(zero, zero_opt, 3, half)
print(zero_opt)
print("Adam's state in this process:", dist.zero.optimizer_state_bytes(zero_opt.optim), "bytes")
assert dist.check_replicas(zero).equal

# %% [markdown]
# Each process holds about half of the 2800 bytes. The halves are not exactly equal: a parameter
# is never split, it goes whole to the process that holds the fewest values so far. The updates
# are a plain Adam's arithmetic, so the replicas stay equal.
#
# ### A checkpoint of a sharded optimizer
#
# No process holds the whole optimizer state, so a checkpoint must first gather it:
# `consolidate_state_dict(to=0)`, called in every process, collects the shares on process 0,
# whose `state_dict()` is then a plain Adam's. Process 0 saves it, and the two processes go on
# for three more steps:

# %%
# %%px
zero_opt.consolidate_state_dict(to=0)
if rank == 0:
    dt.save({"model": zero.module.state_dict(), "optimizer": zero_opt.state_dict()},
            os.path.join(folder, "zero.safetensors"))
zero_steps(zero, zero_opt, 3, half)
last_weight = zero.module[8].weight.numpy()
print("after 6 steps:", np.round(last_weight.ravel()[:3], 4))

# %% [markdown]
# Resume it here, in **one** process with a plain Adam: the consolidated state is a plain
# optimizer's. To do the two processes' work, take each half's gradient, add them and halve the
# sum (what DDP's average computes), and the weights after the same three steps are the two
# processes' weights, bit for bit:

# %%
saved = dt.load(os.path.join(folder, "zero.safetensors"))
resumed = zero_net()
resumed.load_state_dict(saved["model"])
resumed_opt = optim.Adam(resumed.named_parameters(), lr=0.01)
resumed_opt.load_state_dict(saved["optimizer"])
for _ in range(3):
    two_halves_step(resumed, resumed_opt)
two_processes = engines.client[0].pull("last_weight", block=True)   # a value from engine 0
print("after 6 steps:", np.round(resumed[8].weight.numpy().ravel()[:3], 4))
print("bit for bit:", np.array_equal(two_processes, resumed[8].weight.numpy()))
assert np.array_equal(two_processes, resumed[8].weight.numpy())

# %% [markdown]
# ### Going deeper: four processes
# The memory per process with 4 processes, and the same checkpoint resumed on 4.

# %% [markdown]
# Four engines replace the two (on a 2-core laptop, four processes take turns: fine for this
# small work). Each process computes the two halves' gradient itself, so that the comparison
# stays exact, and the `ZeroRedundancyOptimizer` shares Adam's state four ways:

# %%
engines.stop()
engines = dist.start_engines(4)
# the folder, and this part's model, data and step, sent to the new engines
engines.client[:].push({"folder": folder, "zero_net": zero_net, "Xz": Xz, "Yz": Yz,
                        "two_halves_step": two_halves_step}, block=True)
engines

# %%
# %%px
import os

import numpy as np

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

dist.init_process_group("mpi")
rank = dist.get_rank()
saved = dt.load(os.path.join(folder, "zero.safetensors"))
four = zero_net()
four.load_state_dict(saved["model"])
four_opt = dist.ZeroRedundancyOptimizer(four.named_parameters(), optim.Adam, lr=0.01)
four_opt.load_state_dict(saved["optimizer"])
for _ in range(3):
    two_halves_step(four, four_opt)
four_weight = four[8].weight.numpy()
print("Adam's state in this process:", dist.zero.optimizer_state_bytes(four_opt.optim), "bytes")

# %%
print("bit for bit with two processes:",
      np.array_equal(engines.client[3].pull("four_weight", block=True), two_processes))
assert np.array_equal(engines.client[3].pull("four_weight", block=True), two_processes)

# %% [markdown] tags=["claim-torch-names-13", "claim-paddle-names-13", "claim-mge-names-13"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | average gradients, replicas start equal | `dist.DistributedDataParallel(model)` | `torch.nn.parallel.DistributedDataParallel(model)` | `paddle.DataParallel(model)` | `dist.bcast_list_(model.parameters())`, then `GradManager().attach(params, callbacks=[dist.make_allreduce_cb("mean")])` |
# | skip the all-reduce | `ddp.no_sync()` | `torch.nn.parallel.DistributedDataParallel.no_sync` | `paddle.DataParallel.no_sync` | — |
# | parameters a step does not use | `find_unused_parameters=True` | `find_unused_parameters=True` | `find_unused_parameters=True` | — |
# | each process its share of the data | `dist.DistributedSampler(dataset)` | `torch.utils.data.distributed.DistributedSampler(dataset)` | `paddle.io.DistributedBatchSampler(dataset, batch_size)` | `megengine.data.RandomSampler(dataset, batch_size)` (it shares out by rank itself) |
# | statistics of the whole batch | `dist.SyncBatchNorm.convert_sync_batchnorm(model)` | `torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)` (GPU only) | `paddle.nn.SyncBatchNorm.convert_sync_batchnorm(model)` (GPU only) | `megengine.module.SyncBatchNorm(channels)` |
# | shard the optimizer state (ZeRO-1) | `dist.ZeroRedundancyOptimizer(params, optim.Adam)` | `torch.distributed.optim.ZeroRedundancyOptimizer(params, torch.optim.Adam)` | `paddle.distributed.sharding.group_sharded_parallel(model, opt, level="os")` (GPU only) | — |
#
# ## Summary
#
# **In two lines:** data parallelism keeps one model in N processes: every replica starts from
# the same weights and every gradient is averaged, so each step is the whole batch's step.
# Clipping norms, BatchNorm statistics and a sharded optimizer's checkpoint must see every
# process too.
#
# * DDP broadcasts process 0's weights at the start; without averaging, replicas drift apart.
# * N processes with batch B take the step of one process with batch N x B (float64: to
#   rounding, and bit for bit when summed in the same order); scale the lr with N and warm up.
# * A parameter no forward uses stops DDP: freeze it before wrapping, or pay a graph walk per
#   step for `find_unused_parameters=True`.
# * `no_sync()` skips the all-reduce of all but the last micro-batch: the same gradient, fewer
#   messages.
# * Clip by the norm of the averaged gradient, or by the all-reduced sum of squares of the
#   shares, never by a process's own norm.
# * BatchNorm sees only its process's share; SyncBatchNorm sees the whole batch.
# * ZeRO-1 keeps each parameter's optimizer state in one process; consolidate on rank 0 to save,
#   and resume on any number of processes.
# * When one process fails, read the first failed rank's own log.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("13")

# %% [markdown]
# **1.** A model trains well in one process with batch 32 at lr 0.05. You move it to 8
# processes, each with batch 32. By the linear-scaling rule, which lr (`scaled_lr`) should the
# warmup reach?

# %%
scaled_lr = ____
ex.q1.check()

# %% [markdown]
# **2.** Two processes each hold half of the parameters' averaged gradients. The squared norms
# of their halves are 9.0 and 16.0. Which norm (`global_norm`) must a global-norm clip use?

# %%
global_norm = ____
ex.q2.check()

# %% [markdown]
# **3.** A model has 1,000,000 float32 parameter values, trained with Adam (two moments per
# value) under a `ZeroRedundancyOptimizer` on 4 processes that share the parameters out evenly.
# How many bytes of Adam's state does each process hold (`bytes_per_process`)?

# %%
bytes_per_process = ____
ex.q3.check()

# %% [markdown]
# **4.** (Not checked: experiments.) In the gradient-averaging section, give the two processes
# different seeds for `make_net` but skip DDP's broadcast (average the gradients yourself with
# `dist.all_reduce` and divide by 2): after three steps, what does `check_replicas` say? Then
# train the BatchNorm model for a few steps with `broadcast_buffers=True` and compare the
# running means of the two processes.

# %%
engines.stop()
workdir.cleanup()
engines
