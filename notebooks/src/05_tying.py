# %% [markdown] tags=["claim-torch-tying-same-object-twice"]
# # Tying parameters
#
# **About 25 minutes.** You will be able to:
#
# * tie a whole layer or a single parameter, and check a tie with `is` or `dt.diagnose.ties`;
# * say what gradient a shared parameter receives, and prove it against an untied twin;
# * look up several input columns in one shared embedding table;
# * save and load a tied network without losing the tie, and read how its state dict lists it;
# * train a network with a shared layer and watch its norms step by step.
#
# Sometimes two parts of a network should use **the same** weights: one layer applied at
# several depths, one embedding table looked up by several input columns, a language model
# whose output layer reuses its input embedding. This is called *tying* or *sharing*
# parameters.
#
# In dltutor (as in PyTorch) there is no special mechanism for it: you use the same object
# twice. This chapter shows what follows from that simple rule.

# %%
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from safetensors.numpy import load_file

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.data import make_moons
from dltutor.trace import Recorder

F = nn.functional
dt.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Sharing one layer in several places
#
# Make the layer once, give it a name, and put it into the network twice. Here the 8 x 8 layer
# `shared` is the third and the fifth module of the Sequential:

# %%
dt.manual_seed(0)
X = dt.rand(2, 4)
shared = nn.Linear(8, 8)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                    shared, nn.ReLU(),
                    shared, nn.ReLU(),
                    nn.Linear(8, 1))
print(net)
print(net(X))

# %% tags=["twin-torch", "twin-same-numbers"]
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import dltutor as dt              # here only to hand over the lesson's start values and data

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)


def tied_net(nn):
    """The lesson's network, its 8 x 8 layer used twice; nn is torch.nn or the kit's dt.nn."""
    shared = nn.Linear(8, 8)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                         nn.Linear(8, 1))


def with_lesson_values(model, lesson):
    """model, given the values of the kit's model of the same build: the lesson's numbers."""
    model.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                           for k, v in lesson.state_dict().items()})
    return model


dt.manual_seed(0)
X = torch.from_numpy(dt.rand(2, 4).numpy())
net = with_lesson_values(tied_net(nn), tied_net(dt.nn))
shared = net[2]
print(net)
print(net(X))

# %% [markdown]
# `net[2]` and `net[4]` are not two layers with equal values: they are **one** layer reached
# twice. Python's `is` checks that two names refer to the same object:

# %%
print("same layer:  ", net[2] is net[4])
print("same weight: ", net[2].weight is net[4].weight)
print("equal values:", bool((net[2].weight == net[4].weight).all()))

# %% tags=["twin-torch"]
print("same layer:  ", net[2] is net[4])
print("same weight: ", net[2].weight is net[4].weight)
print("equal values:", bool((net[2].weight == net[4].weight).all()))

# %%
assert net[2] is net[4] and net[2].weight is net[4].weight and net[2].bias is net[4].bias

# %% [markdown]
# So changing one changes "the other" — there is no other:

# %%
with dt.no_grad():
    net[2].weight[0, 0] = 100.0
print(net[4].weight[0, 0].item())
assert net[4].weight[0, 0].item() == 100.0

# %% tags=["twin-torch", "twin-same-numbers"]
with torch.no_grad():
    net[2].weight[0, 0] = 100.0
print(net[4].weight[0, 0].item())

# %% [markdown]
# Equal values are not enough. A copy made with `load_state_dict` starts equal but lives its
# own life:

# %%
copy = nn.Linear(8, 8)
copy.load_state_dict(shared.state_dict())
equal_at_first = bool((copy.weight == shared.weight).all())
with dt.no_grad():
    shared.weight[0, 0] = -1.0
print("equal after the copy:", equal_at_first, "| after changing the shared layer:",
      bool((copy.weight == shared.weight).all()))
assert equal_at_first and copy.weight is not shared.weight
assert copy.weight[0, 0].item() == 100.0 and shared.weight[0, 0].item() == -1.0

# %% tags=["twin-torch"]
copy = nn.Linear(8, 8)
copy.load_state_dict(shared.state_dict())
equal_at_first = torch.equal(copy.weight, shared.weight)
with torch.no_grad():
    shared.weight[0, 0] = -1.0
print("equal after the copy:", equal_at_first, "| after changing the shared layer:",
      torch.equal(copy.weight, shared.weight))

# %% [markdown]
# You can also tie a single **parameter** of two different layers by assigning it. Below,
# `b` uses `a`'s weight but keeps its own bias. (This is how the tied embeddings of the last
# section are made.)

# %%
a, b = nn.Linear(3, 3), nn.Linear(3, 3)
b.weight = a.weight                      # one weight, two layers; two separate biases
assert b.weight is a.weight and b.bias is not a.bias
dt.diagnose.ties(nn.Sequential(a, b))

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no diagnose.ties: named_parameters(remove_duplicate=False) lists every name of
# each parameter object, so grouping its names by object finds the ties.
def ties(model):
    """(names joined by =, shape, count) of every parameter reached under several names."""
    groups = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), (p, []))[1].append(name)
    return [(" = ".join(names), tuple(p.shape), p.numel())
            for p, names in groups.values() if len(names) > 1]


a, b = nn.Linear(3, 3), nn.Linear(3, 3)
b.weight = a.weight                      # one weight, two layers; two separate biases
ties(nn.Sequential(a, b))

# %% [markdown]
# ## What happens to the gradient of a shared parameter
#
# The shared layer is used twice in the forward pass, so the loss depends on its weight
# through two paths: the derivative is the sum over the paths, and backward adds each use's
# contribution into the one `.grad`.
#
# To prove it, build an **untied** twin: the same architecture with two *separate* 8 x 8 layers
# at positions 2 and 4, loaded with the tied network's values (the tied state dict lists the
# shared weight under both names, `2.weight` and `4.weight`: more on that below).

# %%
dt.manual_seed(0)
shared = nn.Linear(8, 8)
tied = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                     nn.Linear(8, 1))
untied = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                       nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
untied.load_state_dict(tied.state_dict())
print(list(tied.state_dict()))

X, target = dt.randn(16, 4), dt.randn(16, 1)
for model in (tied, untied):
    F.mse_loss(model(X), target).backward()

print("tied:   same output?", np.allclose(tied(X).numpy(), untied(X).numpy()))
print("tied: gradient of the shared weight, row 0:  ", tied[2].weight.grad.numpy()[0])
print("untied: layer 2's + layer 4's gradient, row 0:",
      untied[2].weight.grad.numpy()[0] + untied[4].weight.grad.numpy()[0])

# %% tags=["twin-torch", "twin-same-numbers"]
def untied_net(nn):
    """The same architecture with two separate 8 x 8 layers."""
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                         nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))


dt.manual_seed(0)                 # the lesson's start values and data: the same numbers
tied = with_lesson_values(tied_net(nn), tied_net(dt.nn))
untied = with_lesson_values(untied_net(nn), untied_net(dt.nn))
untied.load_state_dict(tied.state_dict())
print(list(tied.state_dict()))

X, target = (torch.from_numpy(dt.randn(*shape).numpy()) for shape in [(16, 4), (16, 1)])
for model in (tied, untied):
    F.mse_loss(model(X), target).backward()

print("tied:   same output?", torch.allclose(tied(X), untied(X)))
print("tied: gradient of the shared weight, row 0:  ", tied[2].weight.grad.numpy()[0])
print("untied: layer 2's + layer 4's gradient, row 0:",
      untied[2].weight.grad.numpy()[0] + untied[4].weight.grad.numpy()[0])

# %%
assert untied[2].weight is not untied[4].weight
assert np.allclose(tied(X).numpy(), untied(X).numpy())            # the same function
for name in ("weight", "bias"):
    tied_grad = getattr(tied[2], name).grad.numpy()
    grad_2 = getattr(untied[2], name).grad.numpy()
    grad_4 = getattr(untied[4], name).grad.numpy()
    assert np.allclose(tied_grad, grad_2 + grad_4, atol=1e-6)     # the uses add up
    assert not np.allclose(grad_2, grad_4)                         # and they were different

# %% [markdown] tags=["claim-torch-tying-grad-sum"]
# Each use contributes something different (the two layers sit at different depths), and the
# tied parameter receives their sum. PyTorch 2.13 gives the same sum for the same tied network.

# %% [markdown]
# ### Going deeper: a hook on a shared parameter
# How often a gradient hook on a tied parameter runs, and with what.

# %% [markdown] tags=["claim-torch-tying-hook-fires-once"]
# A **hook** on the shared parameter runs when its gradient is ready. It fires **once**, with the
# sum, not once per use (in PyTorch 2.13 too):

# %%
calls = []
handle = tied[2].weight.register_hook(lambda grad: calls.append(grad.numpy().copy()))
tied.zero_grad()
F.mse_loss(tied(X), target).backward()
handle.remove()
print(f"the hook ran {len(calls)} time(s)")

# %% tags=["twin-torch", "twin-same-numbers"]
calls = []
handle = tied[2].weight.register_hook(lambda grad: calls.append(grad.clone()))
tied.zero_grad()
F.mse_loss(tied(X), target).backward()
handle.remove()
print(f"the hook ran {len(calls)} time(s)")

# %%
assert len(calls) == 1
assert np.allclose(calls[0], tied[2].weight.grad.numpy())
assert np.allclose(calls[0], untied[2].weight.grad.numpy() + untied[4].weight.grad.numpy(),
                   atol=1e-6)

# %% [markdown] tags=["claim-torch-tying-embedding-two-columns", "claim-paddle-tying-embedding-two-columns"]
# ## Several features sharing one embedding table
#
# A common case: a recommendation model gets two columns that hold the same kind of thing —
# a "user id" and a "friend id" — and both should be looked up in **one** table of user vectors.
# In dltutor (and in PyTorch, and in Paddle's dynamic graphs) you simply call the same
# `nn.Embedding` module for both columns.

# %%
class FriendScore(nn.Module):
    """How likely are two users to be friends? The dot product of their vectors."""

    def __init__(self, num_users, dim):
        super().__init__()
        self.users = nn.Embedding(num_users, dim)      # ONE table

    def forward(self, user_id, friend_id):
        u = self.users(user_id)        # column "user id"
        f = self.users(friend_id)      # column "friend id": the same table
        return (u * f).sum(axis=1)

dt.manual_seed(0)
model = FriendScore(num_users=5, dim=3)
user_id, friend_id = dt.tensor([0, 1, 2]), dt.tensor([1, 3, 0])
model(user_id, friend_id).sum().backward()
print("parameters:", [(name, tuple(p.shape)) for name, p in model.named_parameters()])
print("gradient of the table:")
print(model.users.weight.grad.numpy())

# %% tags=["twin-torch", "twin-same-numbers"]
class FriendScore(nn.Module):
    """How likely are two users to be friends? The dot product of their vectors."""

    def __init__(self, num_users, dim):
        super().__init__()
        self.users = nn.Embedding(num_users, dim)      # ONE table

    def forward(self, user_id, friend_id):
        u = self.users(user_id)        # column "user id"
        f = self.users(friend_id)      # column "friend id": the same table
        return (u * f).sum(dim=1)


model = FriendScore(num_users=5, dim=3)
dt.manual_seed(0)                      # the lesson's start table, for the same numbers
with torch.no_grad():
    model.users.weight.copy_(torch.from_numpy(dt.nn.Embedding(5, 3).weight.numpy()))
user_id, friend_id = torch.tensor([0, 1, 2]), torch.tensor([1, 3, 0])
model(user_id, friend_id).sum().backward()
print("parameters:", [(name, tuple(p.shape)) for name, p in model.named_parameters()])
print("gradient of the table:")
print(model.users.weight.grad.numpy())

# %% [markdown]
# Users 0 and 1 appear in both columns, so their rows collect a contribution from each column;
# user 4 appears nowhere and its row gets zero. As before, compare with two separate tables
# holding the same values:

# %%
user_table = nn.Embedding.from_pretrained(model.users.weight.numpy(), freeze=False)
friend_table = nn.Embedding.from_pretrained(model.users.weight.numpy(), freeze=False)
(user_table(user_id) * friend_table(friend_id)).sum(axis=1).sum().backward()
summed = user_table.weight.grad.numpy() + friend_table.weight.grad.numpy()

# %% tags=["twin-torch"]
start = model.users.weight.detach()
user_table = nn.Embedding.from_pretrained(start.clone(), freeze=False)
friend_table = nn.Embedding.from_pretrained(start.clone(), freeze=False)
(user_table(user_id) * friend_table(friend_id)).sum(dim=1).sum().backward()
summed = user_table.weight.grad + friend_table.weight.grad
print("the shared table's gradient is the sum:", torch.allclose(model.users.weight.grad, summed))

# %%
assert len(list(model.parameters())) == 1                           # one table
assert np.allclose(model.users.weight.grad.numpy(), summed, atol=1e-6)
assert (model.users.weight.grad.numpy()[4] == 0).all()              # user 4 was never looked up
# rows 0 and 1: their use as a user plus their use as a friend, both non-zero
for row in (0, 1):
    as_user, as_friend = user_table.weight.grad.numpy()[row], friend_table.weight.grad.numpy()[row]
    assert np.abs(as_user).sum() > 0 and np.abs(as_friend).sum() > 0
    assert np.allclose(model.users.weight.grad.numpy()[row], as_user + as_friend, atol=1e-6)

# %% [markdown] tags=["claim-torch-tying-assign-weight", "claim-paddle-tying-assign-weight"]
# If the two lookups must be separate modules — say two `nn.Embedding` layers that already exist
# in someone else's model — tie them afterwards by assigning one's weight to the other (the same
# line works in PyTorch and in Paddle's dynamic graph):

# %%
user_emb, friend_emb = nn.Embedding(5, 3), nn.Embedding(5, 3)
friend_emb.weight = user_emb.weight
assert friend_emb.weight is user_emb.weight
dt.diagnose.ties(nn.ModuleDict({"user": user_emb, "friend": friend_emb}))

# %% tags=["twin-torch", "twin-same-numbers"]
user_emb, friend_emb = nn.Embedding(5, 3), nn.Embedding(5, 3)
friend_emb.weight = user_emb.weight
ties(nn.ModuleDict({"user": user_emb, "friend": friend_emb}))

# %% tags=["twin-paddle"]
import paddle
from paddle import nn

user_emb, friend_emb = nn.Embedding(5, 3), nn.Embedding(5, 3)
friend_emb.weight = user_emb.weight              # dynamic graph: the same object, as in PyTorch
both = nn.LayerDict({"user": user_emb, "friend": friend_emb})
print(friend_emb.weight is user_emb.weight, [name for name, _ in both.named_parameters()])

# %% [markdown] tags=["claim-paddle-tying-static-paramattr-name-shares", "claim-paddle-tying-dynamic-same-name-valueerror"]
# ### Going deeper: Paddle's names, side by side
# How Paddle's static graphs share a table by name, and why its dynamic graph refuses that.

# %% [markdown] tags=["claim-paddle-tying-static-paramattr-name-shares", "claim-paddle-tying-dynamic-default", "claim-paddle-tying-dynamic-same-name-valueerror", "claim-paddle-tying-assign-weight", "claim-torch-tying-assign-weight", "claim-torch-tying-weight-only-two-biases"]
# In a Paddle *static* graph a parameter **is** its name: you share a table by giving both
# lookups a parameter attribute of the same name, and every layer built with
# `ParamAttr(name="shared_emb")` reads and writes the one variable of that name in the program (Paddle 3.3 still runs this layer in its legacy program format, inside
# `paddle.pir_utils.OldIrGuard()`). In Paddle's *dynamic* graph (its default mode), in PyTorch
# and in dltutor, a parameter is an **object** and its name only a label (Paddle issue 69497).
# Paddle 3.3 even refuses a second layer with the same `ParamAttr(name=...)`:
# `ValueError: parameter name [shared_emb] have be been used. In dygraph mode, the name of
# parameter can't be same.` Share the object instead.
#
# | | Paddle, static graph | Paddle dynamic graph, PyTorch, dltutor |
# | --- | --- | --- |
# | one table for two columns | `attr = ParamAttr(name="shared_emb")`, then `paddle.static.nn.embedding(ids, size=[5, 3], param_attr=attr)` for each column | one `nn.Embedding(5, 3)`, called for each column |
# | tie two layers that already exist | (names are fixed when the program is built) | `friend_emb.weight = user_emb.weight` |
# | a layer with a weight *and* a bias | name both `param_attr` and `bias_attr`, or only the weights are shared | share the module, or assign both attributes |
# | what you see | one variable name in the program | one object under several names (`dt.diagnose.ties`) |
#
# The third row bites in both worlds: tying only the weight of two `Linear` layers leaves two
# biases.

# %%
left, right = nn.Linear(3, 3), nn.Linear(3, 3)
right.weight = left.weight                        # the weight only
print(dt.diagnose.ties(nn.ModuleDict({"left": left, "right": right})))
assert right.weight is left.weight and right.bias is not left.bias
right.bias = left.bias                            # now the whole layer is shared
assert len(list(nn.ModuleDict({"left": left, "right": right}).parameters())) == 2

# %% tags=["twin-torch", "twin-same-numbers"]
left, right = nn.Linear(3, 3), nn.Linear(3, 3)
right.weight = left.weight                        # the weight only
print(ties(nn.ModuleDict({"left": left, "right": right})))
right.bias = left.bias                            # now the whole layer is shared

# %% tags=["twin-paddle"]
left, right = nn.Linear(3, 3), nn.Linear(3, 3)
right.weight = left.weight                        # the weight only: two biases remain
print("weight shared:", right.weight is left.weight, "| bias shared:", right.bias is left.bias)
right.bias = left.bias                            # now the whole layer is shared
print(len(nn.LayerDict({"left": left, "right": right}).parameters()), "parameters")
try:                                              # sharing by name, a static graph's way,
    for column in ("user", "friend"):             # is refused in the dynamic graph
        nn.Embedding(5, 3, weight_attr=paddle.ParamAttr(name="shared_emb"))
except ValueError as err:
    print("ValueError:", str(err).split("Please")[0])

# %% [markdown] tags=["claim-torch-tying-named-parameters-once", "claim-torch-tying-state-dict-every-alias"]
# ## How shared parameters are listed and stored
#
# A shared parameter is **one** object with **several** names. Each way of listing parameters
# makes its own choice:
#
# * `parameters()` and `named_parameters()` list each object **once** (under the first name they
#   reach it by). That is what you give an optimizer: a parameter listed twice would be updated
#   twice per step.
# * `named_parameters(remove_duplicate=False)` lists every name.
# * `state_dict()` lists every name too, so that the keys always match the structure of the
#   network, however it is tied.
#
# PyTorch 2.13 makes the same three choices, with the same names.

# %%
print("parameters():", len(list(tied.parameters())), "tensors")
print("named_parameters():", [name for name, _ in tied.named_parameters()])
print("remove_duplicate=False:", [name for name, _ in tied.named_parameters(remove_duplicate=False)])
print("state_dict():", list(tied.state_dict()))

# %% tags=["twin-torch", "twin-same-numbers"]
print("parameters():", len(list(tied.parameters())), "tensors")
print("named_parameters():", [name for name, _ in tied.named_parameters()])
print("remove_duplicate=False:", [name for name, _ in tied.named_parameters(remove_duplicate=False)])
print("state_dict():", list(tied.state_dict()))

# %%
assert len(list(tied.parameters())) == 6
assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                                   "6.weight", "6.bias"]
assert len(list(tied.named_parameters(remove_duplicate=False))) == 8
assert {"2.weight", "4.weight", "2.bias", "4.bias"} <= set(tied.state_dict())

# %% [markdown]
# `dt.diagnose.ties` lists the groups of names that share one object, and `summary` marks them
# and counts each parameter once in its totals:

# %%
report = dt.diagnose.ties(tied)
report

# %% tags=["twin-torch", "twin-same-numbers"]
report = ties(tied)
report

# %%
assert report.groups == [["2.weight", "4.weight"], ["2.bias", "4.bias"]]
dt.diagnose.summary(tied)

# %% tags=["twin-torch"]
# PyTorch has no summary table: count each parameter once, as parameters() lists it.
once = sum(p.numel() for p in tied.parameters())
every_name = sum(p.numel() for _, p in tied.named_parameters(remove_duplicate=False))
print(f"total: {once} parameters (counted under every name: {every_name})")

# %% [markdown]
# **In a file.** `dt.save(net.state_dict(), path)` writes a safetensors file. Any safetensors
# reader shows what is in it: both names, each with the full values — a file holds arrays, not
# objects, so it cannot say "these two are the same".

# %%
folder = tempfile.TemporaryDirectory()
path = os.path.join(folder.name, "tied.safetensors")
dt.save(tied.state_dict(), path)
raw = load_file(path)                     # plain safetensors, no dltutor involved
print(sorted(raw))
print("2.weight and 4.weight equal in the file:", np.array_equal(raw["2.weight"], raw["4.weight"]))

# %% tags=["twin-torch"]
# torch.save writes a zip holding a pickle: the shared tensor's storage is stored once.
folder = tempfile.TemporaryDirectory()
path = os.path.join(folder.name, "tied.pt")
torch.save(tied.state_dict(), path)
raw = torch.load(path)
print(sorted(raw))
print("2.weight and 4.weight equal in the file:", torch.equal(raw["2.weight"], raw["4.weight"]))
print("and one storage:", raw["2.weight"].untyped_storage().data_ptr()
      == raw["4.weight"].untyped_storage().data_ptr())

# %%
assert "2.weight" in raw and "4.weight" in raw
assert np.array_equal(raw["2.weight"], raw["4.weight"])
assert np.array_equal(raw["4.weight"], tied[2].weight.numpy())

# %% [markdown]
# **Loading keeps the tie** — as long as the network you load into is tied. The tie is made by
# the code that builds the network; `load_state_dict` only copies values into the existing
# parameters, in place. Build a fresh tied network (other random values), load the file:

# %%
def make_tied(seed):
    dt.manual_seed(seed)
    layer = nn.Linear(8, 8)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), layer, nn.ReLU(), layer, nn.ReLU(),
                         nn.Linear(8, 1))

fresh = make_tied(seed=123)
fresh.load_state_dict(dt.load(path))
print("still one object:", fresh[2].weight is fresh[4].weight)
print("same output as the saved network:", np.allclose(fresh(X).numpy(), tied(X).numpy()))

# %% tags=["twin-torch"]
def make_tied(seed):
    torch.manual_seed(seed)
    return tied_net(nn)


fresh = make_tied(seed=123)
fresh.load_state_dict(torch.load(path))
print("still one object:", fresh[2].weight is fresh[4].weight)
print("same output as the saved network:", torch.allclose(fresh(X), tied(X)))

# %%
assert fresh[2].weight is fresh[4].weight
assert np.array_equal(fresh[2].weight.numpy(), tied[2].weight.numpy())
assert np.allclose(fresh(X).numpy(), tied(X).numpy())

# %% [markdown]
# Load the same file into the **untied** architecture and you get equal values in two separate
# layers — a copy, not a tie. The first training step pulls them apart:

# %%
loose = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                      nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
loose.load_state_dict(dt.load(path))
equal_before = np.array_equal(loose[2].weight.numpy(), loose[4].weight.numpy())
opt = optim.SGD(loose.parameters(), lr=0.1)
F.mse_loss(loose(X), target).backward()
opt.step()
print("equal before the step:", equal_before, "| after:",
      np.array_equal(loose[2].weight.numpy(), loose[4].weight.numpy()))

# %% tags=["twin-torch"]
loose = untied_net(nn)
loose.load_state_dict(torch.load(path))
equal_before = torch.equal(loose[2].weight, loose[4].weight)
opt = torch.optim.SGD(loose.parameters(), lr=0.1)
F.mse_loss(loose(X), target).backward()
opt.step()
print("equal before the step:", equal_before, "| after:",
      torch.equal(loose[2].weight, loose[4].weight))
folder.cleanup()

# %%
assert equal_before and loose[2].weight is not loose[4].weight
assert not np.array_equal(loose[2].weight.numpy(), loose[4].weight.numpy())
folder.cleanup()

# %% [markdown] tags=["claim-torch-tying-load-disagreeing-aliases-last-module-wins"]
# ### Going deeper: two values for one tied parameter
# What dltutor and PyTorch do with a state dict whose names of one tied parameter disagree.

# %% [markdown] tags=["claim-torch-tying-load-disagreeing-aliases-last-module-wins"]
# **Here dltutor differs from PyTorch.** A state dict has a key for each name of a tied
# parameter, so it can hold two *different* values for what is one object (edited by hand, or
# merged from two checkpoints). There is no right answer, and dltutor refuses the load, naming
# both keys; nothing is changed:

# %%
disagreeing = {name: value.numpy().copy() for name, value in tied.state_dict().items()}
disagreeing["4.weight"] = disagreeing["2.weight"] + 1.0          # the two names now disagree
kept = fresh[2].weight.numpy().copy()
try:
    fresh.load_state_dict(disagreeing)
except nn.StateDictError as err:
    print(err)
assert np.array_equal(fresh[2].weight.numpy(), kept)              # dltutor: nothing changed

# %% tags=["twin-torch"]
# Here PyTorch differs: it loads the disagreeing dict without a word, and the name the
# network reaches last, 4.weight, wins.
disagreeing = {name: value.clone() for name, value in tied.state_dict().items()}
disagreeing["4.weight"] = disagreeing["2.weight"] + 1.0          # the two names now disagree
print(fresh.load_state_dict(disagreeing))
print("the shared weight holds 4.weight's value:",
      torch.equal(fresh[2].weight, disagreeing["4.weight"]))

# %% [markdown] tags=["claim-torch-tying-load-disagreeing-aliases-last-module-wins"]
# PyTorch 2.13 loads the same dict without a word. Its `load_state_dict` walks the network
# module by module and copies each module's keys into that module's parameters, so both keys
# land in the one shared tensor and the name the network reaches **last** wins: here
# `4.weight`, whatever order the keys have in the dict. The value under `2.weight` is lost.
# This notebook runs no PyTorch; `tests/frameworks/test_ch05_tying.py` loads such a dict into
# this tied network in PyTorch 2.13 and checks it.

# %% [markdown]
# ## Training a network with a shared layer
#
# Now train one. The classifier below maps the two moons data set's 2-D points to two classes
# through a 16 x 16 hidden layer that is applied **twice**. To watch the training we use a
# `Recorder` (from `dltutor.trace`; later chapters plot with it too). It hooks into the
# optimizer and keeps, for every step, each layer's (or each parameter's) parameter norm,
# gradient norm and update size; `recorder.series(kind)` returns one as an
# array with a row per step, and `plot.traces` draws it.

# %%
X_moons, y_moons = make_moons(n=200, noise=0.15, seed=0)
xb, yb = dt.tensor(X_moons), dt.tensor(y_moons)

def train_tied_mlp(seed=0):
    """An MLP whose hidden layer is used twice, trained on the moons; the model, its recorder
    and its accuracy."""
    dt.manual_seed(seed)
    hidden = nn.Linear(16, 16)
    mlp = nn.Sequential(nn.Linear(2, 16), nn.Tanh(),
                        hidden, nn.Tanh(),
                        hidden, nn.Tanh(),
                        nn.Linear(16, 2))
    opt = optim.SGD(mlp.named_parameters(), lr=0.3, momentum=0.9)
    recorder = Recorder(mlp, opt, by="layer")
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(mlp(xb), yb)
        loss.backward()
        recorder.log_loss(loss)
        opt.step()
    accuracy = float((mlp(xb).numpy().argmax(axis=1) == y_moons).mean())
    return mlp, recorder, accuracy


steps = 200 if dt.quick_mode() else 300
mlp, recorder, accuracy = train_tied_mlp()
losses = recorder.series("loss")
print(f"{steps} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {accuracy:.1%}")
print("layers recorded:", recorder.names)

# %% tags=["twin-torch"]
# PyTorch has no Recorder: the loop keeps the loss and each layer's norms itself.
from dltutor.data import make_moons

X_moons, y_moons = make_moons(n=200, noise=0.15, seed=0)
xb, yb = torch.from_numpy(X_moons), torch.from_numpy(y_moons)
norm = nn.utils.get_total_norm


def train_tied_mlp(seed=0):
    torch.manual_seed(seed)
    hidden = nn.Linear(16, 16)
    mlp = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), hidden, nn.Tanh(), hidden, nn.Tanh(),
                        nn.Linear(16, 2))
    opt = torch.optim.SGD(mlp.parameters(), lr=0.3, momentum=0.9)
    losses, param_norms, grad_norms = [], [], []
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(mlp(xb), yb)
        loss.backward()
        losses.append(loss.item())
        param_norms.append([norm(list(mlp[i].parameters())).item() for i in (0, 2, 6)])
        grad_norms.append([norm([p.grad for p in mlp[i].parameters()]).item() for i in (0, 2, 6)])
        opt.step()
    accuracy = (mlp(xb).argmax(dim=1) == yb).float().mean().item()
    return mlp, losses, param_norms, grad_norms, accuracy


steps = 200 if dt.quick_mode() else 300
mlp, losses, param_norms, grad_norms, accuracy = train_tied_mlp()
print(f"{steps} steps: loss {losses[0]:.4f} -> below 0.05: {losses[-1] < 0.05}, "
      f"accuracy above 95%: {accuracy > 0.95}")

# %%
def tied_mlp_learns(mlp, recorder, accuracy):
    losses = recorder.series("loss")
    return losses[-1] < 0.5 * losses[0] and accuracy > 0.85


assert tied_mlp_learns(mlp, recorder, accuracy)
assert all(tied_mlp_learns(*train_tied_mlp(seed)) for seed in range(1, 5))   # not luck
assert recorder.names == ["0", "2", "6"]          # the shared layer once, under its first name

# %% [markdown]
# The recorder lists the shared layer once, as `"2"`: it records what the optimizer updates,
# and the optimizer holds one parameter for both uses. Its gradient norm is the norm of the
# summed gradient from the two places.

# %%
fig, axes = plt.subplots(3, 1, figsize=(7.2, 9.6), layout="constrained")
plot.traces(recorder, "param_norm", ax=axes[0])
plot.traces(recorder, "grad_norm", ax=axes[1])
plot.decision_boundary(mlp, X_moons, y_moons, ax=axes[2])
axes[0].set_title("Parameter norm per layer (layer 2 = the shared one)")
axes[1].set_title("Gradient norm per layer")
plot.show()


# %% tags=["twin-torch"]
# No plot.traces in PyTorch: the loop kept the norms, which matplotlib would draw. Here the
# first and last step's parameter norms (one decimal: after hundreds of steps the later digits
# differ from CPU to CPU) and the first step's gradient norms.
first, last = np.array(param_norms)[[0, -1]]
print("parameter norm, layers 0, 2 (shared), 6: first step", first.round(1), "last step", last.round(1))
print("gradient norm at the first step:         ", np.array(grad_norms[0]).round(3))

# %% [markdown]
# **Why share at all?**
#
# * **Fewer parameters.** The tied network has one hidden 16 x 16 layer where an untied one has
#   two, which saves 272 of 626 numbers here. Fewer parameters mean less memory and less to learn
#   from the same data.

# %%
def count(model):
    return sum(p.numel() for p in model.parameters())

untied_mlp = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                           nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
print(f"tied: {count(mlp)} parameters   untied: {count(untied_mlp)} parameters   "
      f"saved: {count(untied_mlp) - count(mlp)}")

# %% tags=["twin-torch", "twin-same-numbers"]
def count(model):
    return sum(p.numel() for p in model.parameters())


untied_mlp = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                           nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
print(f"tied: {count(mlp)} parameters   untied: {count(untied_mlp)} parameters   "
      f"saved: {count(untied_mlp) - count(mlp)}")

# %%
assert count(mlp) == 48 + 272 + 34 and count(untied_mlp) == count(mlp) + 16 * 16 + 16

# %% [markdown]
# * **The same transformation at every place.** Sharing says "these steps should do the same
#   thing". A recurrent network applies one cell at every time step; a convolution applies one
#   small kernel at every position of an image. Both are weight sharing, and both are why those
#   networks work on sequences of any length and images of any size.
# * **Tied input and output embeddings.** A language model looks words up in an embedding table
#   of shape `(vocab, dim)` and, at the end, scores every word with a Linear layer
#   `dim -> vocab`, whose weight has the same shape `(vocab, dim)`. Using one matrix for both
#   removes `vocab x dim` parameters, often the largest matrix in the model; Press and Wolf
#   (2017) found that it also tends to improve the model, and GPT-2, for one, is built this way.

# %%
vocab_size, dim = 1000, 32

class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.head.weight = self.embed.weight          # tie: (vocab, dim) both

    def forward(self, tokens):
        return self.head(dt.tanh(self.mix(self.embed(tokens))))

lm = TinyLM()
print(dt.diagnose.ties(lm))
print("parameters:", count(lm), "| without the tie it would be", count(lm) + vocab_size * dim)
logits = lm(dt.tensor([3, 14, 15]))
print("logits:", logits.shape)

# %% tags=["twin-torch", "twin-same-numbers"]
vocab_size, dim = 1000, 32


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.head.weight = self.embed.weight          # tie: (vocab, dim) both

    def forward(self, tokens):
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


lm = TinyLM()
print(ties(lm))
print("parameters:", count(lm), "| without the tie it would be", count(lm) + vocab_size * dim)
logits = lm(torch.tensor([3, 14, 15]))
print("logits:", tuple(logits.shape))

# %%
assert lm.head.weight is lm.embed.weight and logits.shape == (3, vocab_size)
assert count(lm) == vocab_size * dim + dim * dim + dim

# %% [markdown] tags=["claim-torch-tying-optimizer-step-hooks"]
# ### Going deeper: a Recorder in PyTorch
# The dozen lines at the core of the `Recorder`, written with the optimizer hooks PyTorch has too.

# %% [markdown] tags=["claim-torch-tying-optimizer-step-hooks"]
# **A Recorder in PyTorch.** PyTorch 2.x optimizers have the same two hooks the `Recorder`
# uses: `register_step_pre_hook` runs just before each `step()`, `register_step_post_hook` just
# after, both called as `hook(optimizer, args, kwargs)`. Before the step, keep a copy of each
# parameter and note its gradient's norm; after it, the size of the change is the update. These
# lines run unchanged in PyTorch (`torch` for `dt`):

# %%
class NormTrace:
    """Per step: the gradient norm and the update norm of every parameter."""

    def __init__(self, model, opt):
        self.named = list(model.named_parameters())
        self.grad_norm, self.update_norm = [], []
        opt.register_step_pre_hook(self.before_step)
        opt.register_step_post_hook(self.after_step)

    def before_step(self, opt, args, kwargs):
        self.before = [p.detach().clone() for _, p in self.named]
        self.grad_norm.append([p.grad.norm().item() for _, p in self.named])

    def after_step(self, opt, args, kwargs):
        self.update_norm.append([(p.detach() - old).norm().item()
                                 for (_, p), old in zip(self.named, self.before)])


# %% tags=["twin-torch"]
class NormTrace:
    """Per step: the gradient norm and the update norm of every parameter."""

    def __init__(self, model, opt):
        self.named = list(model.named_parameters())
        self.grad_norm, self.update_norm = [], []
        opt.register_step_pre_hook(self.before_step)
        opt.register_step_post_hook(self.after_step)

    def before_step(self, opt, args, kwargs):
        self.before = [p.detach().clone() for _, p in self.named]
        self.grad_norm.append([p.grad.norm().item() for _, p in self.named])

    def after_step(self, opt, args, kwargs):
        self.update_norm.append([(p.detach() - old).norm().item()
                                 for (_, p), old in zip(self.named, self.before)])


print("the hooks it uses:", [name for name in dir(torch.optim.SGD) if name.startswith("register_step")])

# %% [markdown]
# Attach it and a `Recorder` (one column per parameter) to a fresh tied network and train a few
# steps: both see the same numbers.

# %%
dt.manual_seed(0)
hidden = nn.Linear(16, 16)
traced = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), hidden, nn.Tanh(), hidden, nn.Tanh(),
                       nn.Linear(16, 2))
opt = optim.SGD(traced.named_parameters(), lr=0.3, momentum=0.9)
mine, kits = NormTrace(traced, opt), Recorder(traced, opt, by="parameter")
for step in range(5):
    opt.zero_grad()
    F.cross_entropy(traced(xb), yb).backward()
    opt.step()
print("parameters traced:", [name for name, _ in mine.named])

# %% tags=["twin-torch"]
torch.manual_seed(0)
hidden = nn.Linear(16, 16)
traced = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), hidden, nn.Tanh(), hidden, nn.Tanh(),
                       nn.Linear(16, 2))
opt = torch.optim.SGD(traced.parameters(), lr=0.3, momentum=0.9)
mine = NormTrace(traced, opt)
for step in range(5):
    opt.zero_grad()
    F.cross_entropy(traced(xb), yb).backward()
    opt.step()
print("parameters traced:", [name for name, _ in mine.named])
print("steps traced:", len(mine.grad_norm), "| values per step:", len(mine.update_norm[0]))

# %%
assert [name for name, _ in mine.named] == kits.names       # the shared weight once
assert np.allclose(mine.grad_norm, kits.series("grad_norm"), rtol=1e-5)
assert np.allclose(mine.update_norm, kits.series("update_norm"), rtol=1e-4, atol=1e-9)

# %% [markdown] tags=["claim-torch-names-05", "claim-paddle-names-05", "claim-mge-names-05", "claim-torch-tying-grad-sum", "claim-paddle-tying-grad-sum", "claim-mge-tying-grad-sum", "claim-torch-tying-named-parameters-once", "claim-paddle-tying-named-parameters-remove-duplicate", "claim-mge-tying-parameters-once", "claim-torch-tying-assign-weight", "claim-paddle-tying-assign-weight", "claim-paddle-tying-static-paramattr-name-shares", "claim-torch-tying-save-zip-storage-once", "claim-paddle-tying-save-pickle", "claim-mge-tying-save-pickle", "claim-torch-tying-load-keeps-tie", "claim-paddle-tying-set-state-dict-keeps-tie", "claim-mge-tying-load-keeps-tie"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | share a layer | use the same module twice | same | same (dynamic graph) | same |
# | share one parameter | `b.weight = a.weight` | `b.weight = a.weight` | same object, or `ParamAttr(name=...)` in static graphs | `b.weight = a.weight` |
# | check a tie | `p is q`, `dt.diagnose.ties(net)` | `p is q` | `p is q` | `p is q` |
# | gradient of a tied parameter | sum over its uses | same | same | same |
# | list each parameter once | `net.parameters()` | `net.parameters()` | `net.parameters()` | `net.parameters()` |
# | list every alias | `named_parameters(remove_duplicate=False)` | `named_parameters(remove_duplicate=False)` | `named_parameters(remove_duplicate=False)` | — |
# | file | safetensors, every alias stored | `torch.save`: a zip holding a pickle, the shared storage stored once | `paddle.save`: pickle | `mge.save`: pickle |
# | does loading keep the tie? | yes, values are copied in place | yes (`load_state_dict` copies in place) | yes (`set_state_dict` copies in place) | yes |
#
# ## Summary
#
# **In two lines:** a tie is one parameter object used in several places, so its gradient sums over
# its uses and the optimizer updates it once. A file holds values, not ties: the code that builds
# the network makes the tie, and loading values into it keeps it.
#
# * To share, use the same module (or assign the same `Parameter`) in several places. Check it
#   with `is`, or list all ties with `dt.diagnose.ties(net)`.
# * The gradient of a shared parameter is the sum of the gradients of its uses.
# * Several inputs sharing one embedding: call one `nn.Embedding` for each of them. Rows used by
#   several of them collect the sum.
# * `parameters()` lists a shared parameter once (that is what the optimizer gets);
#   `state_dict()` and saved files list it under every name.
# * A file holds values, not ties: loading into a tied network keeps the tie, loading into an
#   untied one makes copies.
# * Sharing saves parameters, applies one transformation in many places, and is standard for
#   input/output embeddings of language models.
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
# **1.** Write `tie_head(model)`, which ties the output layer of a language model built like
# `TinyLM` to its input embedding after the model was made: `model.head` and `model.embed` end
# up sharing one weight. The check builds models with other vocabulary sizes and widths.

# %%
tie_head = ____
ex.q1.check()

# %% [markdown] tags=["claim-torch-tying-load-disagreeing-aliases-last-module-wins"]
# **2.** Change the state dict of `tied` so that `"2.weight"` and `"4.weight"` hold *different*
# values, and load it. What happens in dltutor? Catch the error and store the error object
# itself in `tie_load_error` (`except Exception as err: tie_load_error = err`).
# (PyTorch's behaviour is in the section on how shared parameters are stored: the name the
# network reaches last, `4.weight`, silently wins.)

# %%
tie_load_error = ____
ex.q2.check()

# %% [markdown]
# **3.** An autoencoder's decoder often uses the *transpose* of the encoder's weight. For
# `enc = nn.Linear(4, 6)` and `dec = nn.Linear(6, 4)`, give the two weights' shapes
# (`shapes`). Why can't you simply assign `dec.weight = enc.weight`?

# %%
shapes = ____
ex.q3.check()

# %% [markdown]
# **4.** (Not checked: an experiment.) Train the untied version of the moons classifier
# (`untied_mlp`) with the same optimizer settings and compare the loss curves and decision
# boundaries. *Hint: a second `Recorder`, and `plot.traces(rec, "loss")` for both.*
