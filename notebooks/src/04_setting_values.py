# %% [markdown] tags=["claim-paddle-paramattr-fields"]
# # Setting parameter values
#
# **About 25 minutes.** You will be able to:
#
# * change a parameter's numbers in place (`set_value`, assignment under `no_grad`) so that the
#   optimizer still trains it;
# * load pretrained word vectors into a new embedding or into one inside your model;
# * translate Paddle's `ParamAttr` settings, and turn a Paddle weight's `(in, out)` layout around;
# * give a lazy layer its first batch before you initialize it or make its optimizer.
#
# Chapter 03 started parameters from random rules. Often you have the numbers already: word
# vectors trained elsewhere, a weight matrix from NumPy or from another framework, or a value you
# want to try by hand. This chapter puts them in without breaking what holds on to the
# parameter, and ends with layers that wait for the first batch to learn their input size.

# %%
import io
import math

import numpy as np

import dltutor as dt
from dltutor import nn, optim
from dltutor.nn import init

dt.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown] tags=["claim-paddle-set-value-shape-checked"]
# ## Setting parameter values directly
#
# Sometimes you just want to change some numbers: add 1 to every weight, or put 42 in one entry.
# Two ways work, and both change the parameter **in place**:
#
# * assign into it with indexing, inside `with dt.no_grad():`;
# * `p.set_value(array)`, Paddle's name: a shape-checked copy of a whole new value.

# %%
dt.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
w = net[0].weight
start = w.numpy().copy()

with dt.no_grad():
    w[...] = w + 1                    # add 1 to every entry
    w[0, 0] = 42                      # set one entry
print(w.numpy()[0])

# %% tags=["twin-torch"]
import numpy as np
import torch
from torch import nn

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
w = net[0].weight
start = w.detach().numpy().copy()

with torch.no_grad():
    w[...] = w + 1                    # add 1 to every entry
    w[0, 0] = 42                      # set one entry
print(w.detach().numpy()[0])

# %% tags=["twin-paddle"]
import numpy as np
import paddle
from paddle import nn

np.set_printoptions(precision=4, suppress=True)
paddle.seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
w = net[0].weight                     # Paddle stores it as (in, out): (4, 8)
start = w.numpy().copy()

with paddle.no_grad():
    w[...] = w + 1                    # add 1 to every entry
    w[0, 0] = 42                      # set one entry
print(w.numpy()[0])

# %%
expected = start + 1
expected[0, 0] = 42
assert np.allclose(w.numpy(), expected)

# %% [markdown]
# The same with `set_value`, working on a NumPy copy:

# %%
value = w.numpy() + 1
value[0, 0] = 42
w.set_value(value)
print(w.numpy()[0])
expected = expected + 1
expected[0, 0] = 42
assert np.allclose(w.numpy(), expected)

# %% tags=["twin-torch"]
# PyTorch has no set_value: copy_ under no_grad writes a whole new value in place.
value = w.detach().numpy() + 1
value[0, 0] = 42
with torch.no_grad():
    w.copy_(torch.from_numpy(value))
print(w.detach().numpy()[0])

# %% tags=["twin-paddle"]
value = w.numpy() + 1
value[0, 0] = 42
w.set_value(value)
print(w.numpy()[0])

# %% [markdown]
# Outside `no_grad()` the assignment is refused: writing into a tensor that autograd may still
# need would silently corrupt the gradients.

# %% tags=["raises-exception"]
w[0, 0] = 42

# %% tags=["twin-torch", "raises-exception"]
w[0, 0] = 42

# %% [markdown]
# **Why in place?** Because other objects hold on to the parameter *object*: an optimizer keeps
# a list of the parameters it updates, and a tied layer (chapter 05) is the same object in two
# places. `set_value` and indexed assignment change the numbers inside that object, so
# everyone keeps seeing it:

# %%
opt = optim.SGD(net.parameters(), lr=0.1)
before = net[0].weight
net[0].weight.set_value(np.full((8, 4), 0.5))
assert net[0].weight is before                       # the very same object ...
assert (net[0].weight.numpy() == 0.5).all()
net(dt.randn(2, 4)).sum().backward()
opt.step()
assert (net[0].weight.numpy() != 0.5).any()          # ... that the optimizer updates

# %% tags=["twin-torch"]
# PyTorch has no set_value: copy_ under no_grad writes into the same parameter object.
opt = torch.optim.SGD(net.parameters(), lr=0.1)
before = net[0].weight
with torch.no_grad():
    net[0].weight.copy_(torch.full((8, 4), 0.5))
print("the very same object:", net[0].weight is before)
net(torch.randn(2, 4)).sum().backward()
opt.step()
print("moved by the optimizer:", bool((net[0].weight != 0.5).any()))

# %% tags=["twin-paddle"]
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
before = net[0].weight
net[0].weight.set_value(np.full((4, 8), 0.5, dtype="float32"))    # Paddle: (in, out)
print("the very same object:", net[0].weight is before)
net(paddle.randn([2, 4])).sum().backward()
opt.step()
print("moved by the optimizer:", bool((net[0].weight != 0.5).any()))

# %% [markdown]
# Assigning a *new* value to the attribute would break that link. dltutor refuses a plain tensor
# there (a parameter must stay a `Parameter`):

# %% tags=["raises-exception"]
net[0].weight = net[0].weight + 1

# %% tags=["twin-torch", "raises-exception"]
net[0].weight = net[0].weight + 1

# %% [markdown]
# and a new `nn.Parameter` is accepted — but it is a different object, which the optimizer made
# before has never heard of: the layer's new weight would never be trained. One step shows it:
# the new weight gets a gradient, and stays as it was (chapter 08's `why_not_updating` finds
# such a parameter for you, among the other reasons a parameter does not train):

# %%
net[0].weight = nn.Parameter(np.ones((8, 4), dtype=np.float32))
opt.zero_grad()
net(dt.randn(2, 4)).sum().backward()
opt.step()
print("gradient:", net[0].weight.grad is not None, "| values after the step:",
      np.unique(net[0].weight.numpy()))
assert net[0].weight.grad is not None and (net[0].weight.numpy() == 1).all()

# %% tags=["twin-torch", "twin-same-numbers"]
net[0].weight = nn.Parameter(torch.ones(8, 4))
opt.zero_grad()
net(torch.randn(2, 4)).sum().backward()
opt.step()
print("gradient:", net[0].weight.grad is not None, "| values after the step:",
      np.unique(net[0].weight.detach().numpy()))

# %% [markdown]
# ## Loading pretrained word vectors into an embedding
#
# An `nn.Embedding(num_words, dim)` is a table with one row per word; looking up word `i`
# returns row `i`. Word vectors trained elsewhere (word2vec, GloVe, fastText) come as text or
# binary files that you read into a NumPy array, one row per word of your vocabulary. Here is a
# tiny GloVe-style text file (a word, then its numbers), read with plain Python:

# %%
glove_text = """\
the 0.418 0.24968 -0.41242 0.1217
cat 0.45281 -0.50108 -0.53714 -0.015697
sat -0.3206 0.44036 0.16925 -0.38004
on 0.30045 0.25006 -0.16692 0.1923
mat -0.41213 0.12021 0.63024 0.07133
"""
vocab, rows = [], []
for line in io.StringIO(glove_text):
    word, *numbers = line.split()
    vocab.append(word)
    rows.append([float(v) for v in numbers])
vectors = np.array(rows, dtype=np.float32)        # float32, like the rest of the network
word_id = {word: i for i, word in enumerate(vocab)}
print(vocab, vectors.shape)

# %% tags=["twin-torch", "twin-same-numbers"]
import io

glove_text = """\
the 0.418 0.24968 -0.41242 0.1217
cat 0.45281 -0.50108 -0.53714 -0.015697
sat -0.3206 0.44036 0.16925 -0.38004
on 0.30045 0.25006 -0.16692 0.1923
mat -0.41213 0.12021 0.63024 0.07133
"""
vocab, rows = [], []
for line in io.StringIO(glove_text):
    word, *numbers = line.split()
    vocab.append(word)
    rows.append([float(v) for v in numbers])
vectors = torch.tensor(rows)                      # Python floats -> float32
word_id = {word: i for i, word in enumerate(vocab)}
print(vocab, tuple(vectors.shape))

# %% [markdown] tags=["claim-torch-embedding-from-pretrained-frozen"]
# **A new layer from the array:** `nn.Embedding.from_pretrained(array)`. As in PyTorch, the
# table is **frozen** by default (`requires_grad=False`): pretrained vectors are often kept fixed
# while the rest of the network learns. Pass `freeze=False` to fine-tune them.

# %%
emb = nn.Embedding.from_pretrained(vectors)
sentence = dt.tensor([word_id[w] for w in ["the", "cat", "sat", "on", "the", "mat"]])
looked_up = emb(sentence)
print(emb.weight.requires_grad, looked_up.shape)
print(looked_up[:2])

# %% tags=["twin-torch", "twin-same-numbers"]
emb = nn.Embedding.from_pretrained(vectors)       # frozen by default
sentence = torch.tensor([word_id[w] for w in ["the", "cat", "sat", "on", "the", "mat"]])
looked_up = emb(sentence)
print(emb.weight.requires_grad, tuple(looked_up.shape))
print(looked_up[:2])

# %%
assert emb.weight.requires_grad is False
assert np.array_equal(looked_up.numpy(), vectors[sentence.numpy()])   # row i is word i's vector
assert nn.Embedding.from_pretrained(vectors, freeze=False).weight.requires_grad

# %% [markdown]
# A frozen table gets no gradient, while the layers after it do:

# %%
head = nn.Linear(4, 2)
head(emb(sentence)).sum().backward()
assert emb.weight.grad is None and head.weight.grad is not None

# %% tags=["twin-torch"]
head = nn.Linear(4, 2)
head(emb(sentence)).sum().backward()
print("embedding grad:", emb.weight.grad, "| head grad is None:", head.weight.grad is None)

# %% [markdown] tags=["claim-paddle-init-assign-initializer"]
# **Into an existing embedding** — say it sits inside a model you already built — copy the array
# in with `set_value` (or `init.assign_`, Paddle's `Assign` initializer). The layer keeps its
# parameter object and stays trainable:

# %%
class Classifier(nn.Module):
    def __init__(self, num_words, dim):
        super().__init__()
        self.embedding = nn.Embedding(num_words, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, words):
        return self.out(self.embedding(words).mean(axis=0))

model = Classifier(len(vocab), 4)
model.embedding.weight.set_value(vectors)        # or: init.assign_(model.embedding.weight, vectors)
assert np.array_equal(model.embedding(sentence).numpy(), vectors[sentence.numpy()])
assert model.embedding.weight.requires_grad

# %% tags=["twin-torch"]
# PyTorch has no set_value: copy_ the array in under no_grad; the layer keeps its parameter.
class Classifier(nn.Module):
    def __init__(self, num_words, dim):
        super().__init__()
        self.embedding = nn.Embedding(num_words, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, words):
        return self.out(self.embedding(words).mean(dim=0))

model = Classifier(len(vocab), 4)
with torch.no_grad():
    model.embedding.weight.copy_(vectors)
print("rows are the vectors:", torch.equal(model.embedding(sentence), vectors[sentence]),
      "| trainable:", model.embedding.weight.requires_grad)

# %% [markdown]
# Often your vocabulary has words the file does not know. Start from the layer's random rows
# and overwrite only the rows of known words:

# %%
my_vocab = ["<unk>", "the", "dog", "sat", "on", "mat"]
dt.manual_seed(0)
table = nn.Embedding(len(my_vocab), 4)
random_rows = table.weight.numpy().copy()
known = [i for i, word in enumerate(my_vocab) if word in word_id]
with dt.no_grad():
    table.weight[known] = vectors[[word_id[my_vocab[i]] for i in known]]
print("rows taken from the file:", [my_vocab[i] for i in known])

# %% tags=["twin-torch"]
my_vocab = ["<unk>", "the", "dog", "sat", "on", "mat"]
torch.manual_seed(0)
table = nn.Embedding(len(my_vocab), 4)
known = [i for i, word in enumerate(my_vocab) if word in word_id]
with torch.no_grad():
    table.weight[known] = vectors[[word_id[my_vocab[i]] for i in known]]
print("rows taken from the file:", [my_vocab[i] for i in known])

# %%
for i, word in enumerate(my_vocab):
    expected = vectors[word_id[word]] if word in word_id else random_rows[i]
    assert np.array_equal(table.weight.numpy()[i], expected)

# %% [markdown]
# A table of the wrong shape is refused with both shapes in the message (here 3 columns
# instead of the file's 4):

# %% tags=["raises-exception"]
init.assign_(nn.Embedding(len(vocab), 3).weight, vectors)

# %% tags=["twin-torch", "raises-exception"]
with torch.no_grad():
    nn.Embedding(len(vocab), 3).weight.copy_(vectors)

# %% [markdown] tags=["claim-paddle-paramattr-fields", "claim-paddle-paramattr-lr-flat-list", "claim-paddle-paramattr-group-overrides", "claim-paddle-paramattr-regularizer-l2", "claim-paddle-paramattr-need-clip", "claim-paddle-paramattr-trainable", "claim-paddle-init-object-acts-only-when-called", "claim-paddle-init-assign-initializer"]
# ## Changing the weight and bias of a fully connected layer
#
# Paddle sets up a layer's parameters with a `ParamAttr` given when the layer is made:
# `paddle.ParamAttr(initializer=paddle.nn.initializer.Normal(0.0, 0.02), learning_rate=2.0)`
# says "start from N(0, 0.02²) and learn twice as fast as the optimizer's rate" — as long as the
# optimizer gets a flat list of parameters (and is not Rprop or LBFGS, which ignore the rate). In a parameter group (`parameters=[{"params": ...}]`)
# Paddle 3.3 replaces the `ParamAttr`'s learning rate with the group's `learning_rate` (1.0 if
# the group gives none) and its regularizer with the group's `weight_decay`; dltutor's `lr_mult`
# stays in force inside a group (chapters 06 and 07). In dltutor the same settings are plain
# attributes of the parameter, set after the layer is made:
#
# | Paddle `ParamAttr(...)` | dltutor |
# | --- | --- |
# | `initializer=Normal(0.0, 0.02)` | `init.normal_(layer.weight, 0.0, 0.02)` |
# | `initializer=Assign(array)` | `layer.weight.set_value(array)` or `init.assign_(layer.weight, array)` |
# | `learning_rate=2.0` | `layer.weight.lr_mult = 2.0` |
# | `learning_rate=0.0` | `layer.weight.lr_mult = 0.0` (never moves) |
# | `regularizer=L2Decay(1e-4)` | `layer.weight.regularizer = optim.L2Decay(1e-4)` |
# | `need_clip=False` | `layer.weight.need_clip = False` |
# | `trainable=False` | `layer.weight.requires_grad_(False)` |
#
# (You can also pass them when you make a parameter yourself:
# `nn.Parameter(array, lr_mult=2.0)`.) Chapter 06 takes up the learning rate and the
# regularizer, with the optimizer's parameter groups they work with, and chapters 08 and 09 the
# last two; here are the first two, the initializers.

# %%
dt.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
fc = net[2]
init.normal_(fc.weight, mean=0.0, std=0.02)     # the initializer
init.zeros_(fc.bias)
print(f"weight std {fc.weight.numpy().std():.4f}, bias {fc.bias.numpy()}")

# %% tags=["twin-torch"]
# PyTorch has no ParamAttr: nn.init after making the layer (a layer's own lr: chapter 06).
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
fc = net[2]
nn.init.normal_(fc.weight, mean=0.0, std=0.02)     # the initializer
nn.init.zeros_(fc.bias)
print(f"weight std {fc.weight.detach().numpy().std():.4f}, bias {fc.bias.detach().numpy()}")

# %% tags=["twin-paddle"]
# Paddle gives all of it when it makes the layer, in a ParamAttr.
paddle.seed(0)
weight_attr = paddle.ParamAttr(
    initializer=nn.initializer.Normal(0.0, 0.02), learning_rate=2.0,
    regularizer=paddle.regularizer.L2Decay(1e-4), need_clip=False)
bias_attr = paddle.ParamAttr(initializer=nn.initializer.Constant(0.0))
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4, weight_attr, bias_attr))
fc = net[2]
print(f"weight std {fc.weight.numpy().std():.4f}, bias {fc.bias.numpy()}")
print(fc.weight.optimize_attr, fc.weight.regularizer, "| need_clip:", fc.weight.need_clip,
      "| trainable:", fc.weight.trainable)

# %%
assert 0.015 < fc.weight.numpy().std() < 0.025 and (fc.bias.numpy() == 0).all()

# %% [markdown] tags=["claim-paddle-linear-weight-layout-in-out", "claim-torch-linear-weight-layout-out-in"]
# **Fixed values from NumPy.** `set_value` copies an array in. One trap when the array comes
# from Paddle: Paddle stores a Linear weight as `(in_features, out_features)` and computes
# `x @ W + b`, while dltutor and PyTorch store `(out_features, in_features)` and compute
# `x @ W.T + b`. A Paddle weight has to be transposed, and the shape check says so:

# %%
rng = np.random.default_rng(0)
paddle_weight = rng.normal(0, 0.02, size=(16, 4)).astype(np.float32)   # Paddle layout: (in, out)
paddle_bias = np.full(4, 0.5, dtype=np.float32)

# %% tags=["twin-torch"]
rng = np.random.default_rng(0)
paddle_weight = rng.normal(0, 0.02, size=(16, 4)).astype(np.float32)   # (in, out)
paddle_bias = np.full(4, 0.5, dtype=np.float32)
print("from Paddle:", paddle_weight.shape, "| PyTorch's fc.weight:", tuple(fc.weight.shape))

# %% tags=["twin-paddle"]
rng = np.random.default_rng(0)
paddle_weight = rng.normal(0, 0.02, size=(16, 4)).astype(np.float32)   # (in, out)
paddle_bias = np.full(4, 0.5, dtype=np.float32)
print("from Paddle:", paddle_weight.shape, "| Paddle's fc.weight:", tuple(fc.weight.shape))

# %% tags=["raises-exception"]
fc.weight.set_value(paddle_weight)

# %% tags=["twin-torch", "raises-exception"]
with torch.no_grad():
    fc.weight.copy_(torch.from_numpy(paddle_weight))

# %% tags=["twin-paddle"]
fc.weight.set_value(paddle_weight)   # Paddle's own layout: it fits as it is
print("fc.weight:", tuple(fc.weight.shape))

# %%
weight_object = fc.weight
fc.weight.set_value(paddle_weight.T)
fc.bias.set_value(paddle_bias)
h = dt.randn(5, 16)
assert np.allclose(fc(h).numpy(), h.numpy() @ paddle_weight + paddle_bias, atol=1e-6)
assert fc.weight is weight_object      # set_value changed the values, not the object

# %% tags=["twin-torch"]
weight_object = fc.weight
with torch.no_grad():
    fc.weight.copy_(torch.from_numpy(paddle_weight.T))    # transposed to (out, in)
    fc.bias.copy_(torch.from_numpy(paddle_bias))
h = torch.randn(5, 16)
paddle_out = h @ torch.from_numpy(paddle_weight) + torch.from_numpy(paddle_bias)
print("computes x @ W + b:", torch.allclose(fc(h), paddle_out, atol=1e-6),
      "| the same object:", fc.weight is weight_object)

# %% tags=["twin-paddle"]
fc.bias.set_value(paddle_bias)
h = paddle.randn([5, 16])
paddle_out = h @ paddle.to_tensor(paddle_weight) + paddle.to_tensor(paddle_bias)
print("computes x @ W + b:", bool(paddle.allclose(fc(h), paddle_out, atol=1e-6)))

# %% [markdown] tags=["claim-torch-lazy-linear-becomes-linear"]
# ## Lazy initialization: let the first batch decide the input size
#
# Every layer so far was told its input size (`nn.Linear(4, 8)`). In a long network that is
# tedious and easy to get wrong: change the image size and every following `in_features` must be
# recomputed by hand. A **lazy** layer leaves it out. `nn.LazyLinear(8)` knows only its output
# size; its weight cannot have a shape yet, so it starts as an `UninitializedParameter`. The
# first forward pass sees the input, creates the weight and bias with the default
# initialization, and turns the layer into a plain `Linear` (PyTorch does exactly this;
# D2L's "builders' guide" uses it throughout).

# %%
dt.manual_seed(0)
lazy_net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(lazy_net)
print(lazy_net[0].weight)

# %% tags=["twin-torch"]
torch.manual_seed(0)
lazy_net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(lazy_net)
print(lazy_net[0].weight)

# %% [markdown]
# Until then, anything that needs the parameter's values or shape is refused with a message
# that says what to do: reading the shape, counting the parameters, an initializer, saving.

# %%
try:
    sum(p.numel() for p in lazy_net.parameters())
except nn.UninitializedParameterError as err:
    print("UninitializedParameterError:", err)

# %% tags=["twin-torch"]
try:
    sum(p.numel() for p in lazy_net.parameters())
except ValueError as err:            # PyTorch raises a ValueError
    print("ValueError:", err)

# %%
X = dt.rand(2, 20)                              # one batch: 20 features
print(lazy_net(X).shape)
print(lazy_net)
print([(name, p.shape) for name, p in lazy_net.named_parameters()])

# %% tags=["twin-torch", "twin-same-numbers"]
X = torch.rand(2, 20)                           # one batch: 20 features
print(tuple(lazy_net(X).shape))
print(lazy_net)
print([(name, tuple(p.shape)) for name, p in lazy_net.named_parameters()])

# %%
assert [p.shape for p in lazy_net.parameters()] == [(256, 20), (256,), (10, 256), (10,)]
assert type(lazy_net[0]) is nn.Linear and lazy_net[0].in_features == 20
assert np.abs(lazy_net[0].weight.numpy()).max() <= 1 / math.sqrt(20)   # the default, fan_in 20

# %% [markdown] tags=["claim-torch-lazy-optimizer-before-first-batch", "claim-torch-lazy-load-state-dict-and-init-order"]
# So run one batch through a lazy network **before** you initialize it your own way (with
# `apply`, as in chapter 03), and before you make its optimizer: PyTorch's documentation prescribes that
# order ("dry runs" first, then the optimizer). In dltutor the parameters keep their identity when
# they are created, so an optimizer made before that first batch still updates them. In PyTorch
# 2.13 that works for `SGD` and `Adam`, but `Adagrad` reads every parameter in its constructor and
# raises `ValueError` on an uninitialized one; the documented order is the safe habit. Loading a
# state dict into a lazy network creates its parameters with the loaded shapes (in PyTorch too).
# One caveat, also PyTorch's: a lazy layer draws its random values at the first batch, after every
# plain layer drew its own, so the same seed gives a network with lazy layers other starting
# values than the same network written out in full.

# %%
def init_normal(m):                             # chapter 03's initializer
    if isinstance(m, nn.Linear):
        init.normal_(m.weight, mean=0.0, std=0.01)
        init.zeros_(m.bias)

lazy_net.apply(init_normal)
full = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
fresh = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
fresh.load_state_dict(full.state_dict())
print([p.shape for p in fresh.parameters()])
assert np.array_equal(fresh(X).numpy(), full(X).numpy())
assert 0.005 < lazy_net[0].weight.numpy().std() < 0.015

# %% tags=["twin-torch", "twin-same-numbers"]
def init_normal(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, mean=0.0, std=0.01)
        nn.init.zeros_(m.bias)

lazy_net.apply(init_normal)
full = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
fresh = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
fresh.load_state_dict(full.state_dict())
print([tuple(p.shape) for p in fresh.parameters()])

# %% [markdown] tags=["claim-torch-names-04", "claim-paddle-names-04", "claim-mge-names-04", "claim-torch-init-copy-array-in-no-grad", "claim-paddle-set-value-shape-checked", "claim-mge-init-functions-reset", "claim-torch-embedding-from-pretrained-frozen", "claim-mge-embedding-from-pretrained-frozen", "claim-paddle-init-assign-initializer", "claim-torch-param-group-own-lr", "claim-paddle-paramattr-lr-flat-list", "claim-mge-param-group-own-lr", "claim-torch-linear-weight-layout-out-in", "claim-paddle-linear-weight-layout-in-out", "claim-mge-linear-weight-layout-out-in", "claim-torch-lazy-linear-becomes-linear", "claim-paddle-no-lazy-layers", "claim-mge-no-lazy-layers"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | copy an array in | `p.set_value(a)`, `init.assign_(p, a)` | `with torch.no_grad(): p.copy_(torch.from_numpy(a))` | `p.set_value(a)`, `nn.initializer.Assign(a)` | `p._reset(mge.tensor(a))` (what its `init` functions do) |
# | change entries | `with dt.no_grad(): p[0, 0] = 42` | `with torch.no_grad(): p[0, 0] = 42` | `p.set_value(...)` | `p[0, 0] = 42` (writes in place) |
# | pretrained embedding | `nn.Embedding.from_pretrained(a)` (frozen), `nn.Embedding(n, d, weight_init=init.Assign(a))` | `nn.Embedding.from_pretrained(t)` (frozen) | `nn.Embedding(..., weight_attr=ParamAttr(initializer=Assign(a)))` | `M.Embedding.from_pretrained(t)` (frozen) |
# | per-parameter lr | `p.lr_mult = 2.0` | a param group with its own `lr` | `ParamAttr(learning_rate=2.0)` (flat parameter list) | a param group with its own `lr` |
# | Linear weight layout | `(out, in)` | `(out, in)` | `(in, out)` | `(out, in)` |
# | input size from the first batch | `nn.LazyLinear(out)`, `nn.LazyConv2d(out, k)` | `nn.LazyLinear(out)`, `nn.LazyConv2d(out, k)` | — (give `in_features`) | — (give `in_features`) |
#
# Paddle code that loads word vectors when it makes the layer
# (`weight_attr=ParamAttr(initializer=Assign(array))`) translates line by line too: dltutor's
# `init.Assign` object calls `init.assign_`.

# %%
vectors = np.arange(12, dtype=np.float32).reshape(6, 2)
emb = nn.Embedding(6, 2, weight_init=init.Assign(vectors))
print("row 5:", emb.weight.numpy()[5])
assert np.array_equal(emb.weight.numpy(), vectors) and emb.weight.requires_grad

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no weight_init: Embedding.from_pretrained(vectors, freeze=False) does it.
vectors = torch.arange(12, dtype=torch.float32).reshape(6, 2)
emb = nn.Embedding.from_pretrained(vectors, freeze=False)
print("row 5:", emb.weight.detach().numpy()[5])

# %% tags=["twin-paddle", "twin-same-numbers"]
vectors = np.arange(12, dtype=np.float32).reshape(6, 2)
attr = paddle.ParamAttr(initializer=nn.initializer.Assign(vectors))
emb = nn.Embedding(6, 2, weight_attr=attr)
print("row 5:", emb.weight.numpy()[5])

# %% [markdown] tags=["claim-paddle-paramattr-fields"]
# ## Summary
#
# **In two lines:** put numbers into a parameter in place (`set_value`, or assignment under
# `no_grad`), so that the optimizer and every tie still hold the object they trained. A lazy
# layer gets its shapes from the first batch: run one before you initialize it or make its
# optimizer.
#
# * `p.set_value(array)` copies a whole new value in and checks its shape; indexed assignment
#   under `dt.no_grad()` changes some entries. Assigning a new `Parameter` to the attribute
#   leaves the optimizer training the old one.
# * Pretrained vectors: `nn.Embedding.from_pretrained(array)` (frozen by default) or
#   `set_value` into an existing table; overwrite only the rows of words the file knows.
# * Paddle's `ParamAttr` settings are attributes here: `init.*` for the initializer, `lr_mult`,
#   `regularizer`, `need_clip`, `requires_grad`. A Paddle Linear weight is `(in, out)`:
#   transpose it.
# * `nn.LazyLinear(out)` takes its input size from the first batch: run one batch before reading,
#   initializing or saving its parameters.
#
# ## Exercises
#
# Replace `____` with your answer and run the cell; `ex.q1.hint()` and `ex.q1.solution()` help.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("04")

# %% [markdown]
# **1.** Load six word vectors with `nn.Embedding.from_pretrained(vectors, freeze=False)`, take
# one SGD step on `table(dt.tensor([0, 2])).sum()`, and list the rows that changed
# (`changed_rows`).

# %%
changed_rows = ____
ex.q1.check()

# %% [markdown]
# **2.** Write `load_known_rows(table, vocab, vectors, word_id)`: row `i` of the embedding `table`
# is the word `vocab[i]`; copy in the vector of every word the file knows (`word_id` maps a word
# to its row of `vectors`) and leave the other rows as they were. The check calls it on
# vocabularies and vector sizes it makes up, and makes sure the table keeps its parameter object.

# %%
load_known_rows = ____
ex.q2.check()

# %% [markdown] tags=["claim-paddle-linear-weight-layout-in-out"]
# **3.** Write `load_paddle_linear(fc, weight, bias)`, which puts a Paddle Linear layer's `weight`
# (shaped `(in_features, out_features)`) and `bias` into the dltutor layer `fc`, so that `fc(x)`
# computes what Paddle computes, `x @ weight + bias`. The check tries several layer sizes.

# %%
load_paddle_linear = ____
ex.q3.check()
