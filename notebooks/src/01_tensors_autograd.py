# %% [markdown]
# # Tensors and autograd
#
# **About 25 minutes.** You will be able to:
#
# * make tensors of the shape and dtype you want from NumPy arrays or at random;
# * reduce, reshape and multiply them, and read the error a shape mistake gives;
# * say where `backward()` puts gradients, when they add up, and what `no_grad` and `detach()`
#   change.
#
# Every parameter of a network is a tensor: an array of numbers that also remembers how later
# results were computed from it, so `backward()` can hand it a gradient. Before managing
# parameters, you need to be at home with the tensors themselves; each section below answers a
# question learners ask again and again, from "how do I give grayscale images a channel axis?"
# to "what does stopping the gradient in the middle of a network do to everything before it?".
#
# **Going deeper** sections open folded: nothing later needs them.

# %%
import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import nn, optim, plot

dt.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown] tags=["claim-torch-tensors-dtype-rules"]
# ## Tensors from NumPy arrays and random tensors
#
# `dt.tensor(data, dtype=None)` copies `data` into a new tensor. Its dtype follows two rules
# (the same as PyTorch's):
#
# * a NumPy array **keeps its dtype**: NumPy's default float is `float64`, so an array of floats
#   becomes a `float64` tensor;
# * Python numbers and lists of them become `float32` (or `int64` for whole numbers), the dtype
#   networks use.
#
# Pass `dtype=` to choose, and convert network inputs to `float32` once, when you make the
# tensor: a layer's parameters are `float32`, and a `float64` input would make the whole
# computation `float64`, slower and twice the memory.

# %%
pixels = np.linspace(0.0, 1.0, 6).reshape(2, 3)      # a NumPy array, float64
a = dt.tensor(pixels)                                 # keeps float64
b = dt.tensor([[0.0, 0.2, 0.4], [0.6, 0.8, 1.0]])      # Python floats -> float32
c = dt.tensor(pixels, dtype=dt.float32)               # ask for float32
labels = dt.tensor(np.array([3, 1, 4]))               # integers -> int64

for name, t in [("a", a), ("b", b), ("c", c), ("labels", labels)]:
    print(f"{name:6s} shape={t.shape}  dtype={t.dtype}")
assert a.dtype == dt.float64 and a.shape == (2, 3)
assert b.dtype == dt.float32
assert c.dtype == dt.float32 and np.allclose(c.numpy(), pixels)
assert labels.dtype == dt.int64

# %% tags=["twin-torch", "twin-same-numbers"]
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)

pixels = np.linspace(0.0, 1.0, 6).reshape(2, 3)      # a NumPy array, float64
a = torch.tensor(pixels)                              # keeps float64
b = torch.tensor([[0.0, 0.2, 0.4], [0.6, 0.8, 1.0]])  # Python floats -> float32
c = torch.tensor(pixels, dtype=torch.float32)         # ask for float32
labels = torch.tensor(np.array([3, 1, 4]))            # integers -> int64

for name, t in [("a", a), ("b", b), ("c", c), ("labels", labels)]:
    print(f"{name:6s} shape={tuple(t.shape)}  dtype={t.dtype}")

# %% [markdown]
# `dt.tensor` **copies**: changing the NumPy array afterwards does not change the tensor.
# (`t.numpy()` goes the other way and, on the CPU, shares memory with the tensor.)

# %%
pixels[0, 0] = 99.0
print("array:", pixels[0, 0], "| tensor:", a[0, 0].item())
assert a[0, 0].item() == 0.0, "the tensor kept its own copy"

# %% tags=["twin-torch", "twin-same-numbers"]
pixels[0, 0] = 99.0                  # torch.tensor copied; torch.from_numpy would share
print("array:", pixels[0, 0], "| tensor:", a[0, 0].item())

# %% [markdown]
# Random tensors come from one generator that `dt.manual_seed(seed)` resets. The same seed gives
# the same numbers, which is what makes the notebooks (and your experiments) repeatable:
#
# * `dt.rand(*shape)`: uniform on [0, 1);
# * `dt.randn(*shape)`: normal with mean 0 and standard deviation 1;
# * `dt.randint(low, high, shape)`: whole numbers in [low, high), for example fake class labels.

# %%
dt.manual_seed(42)
u = dt.rand(2, 3)
n = dt.randn(2, 3)
k = dt.randint(0, 10, (2, 3))
print(u, n, k, sep="\n")

dt.manual_seed(42)                   # the same seed again: the same numbers
u_again, n_again = dt.rand(2, 3), dt.randn(2, 3)
dt.manual_seed(7)                    # another seed: others
u_other = dt.rand(2, 3)
assert np.array_equal(u.numpy(), u_again.numpy()) and np.array_equal(n.numpy(), n_again.numpy())
assert not np.array_equal(u.numpy(), u_other.numpy())
assert k.dtype == dt.int64 and k.min().item() >= 0 and k.max().item() < 10

# %% tags=["twin-torch"]
torch.manual_seed(42)                # PyTorch's own generator: other numbers than dltutor's
u = torch.rand(2, 3)
n = torch.randn(2, 3)
k = torch.randint(0, 10, (2, 3))
print(u, n, k, sep="\n")

torch.manual_seed(42)                # the same seed again: the same numbers
print("same seed, same numbers:", torch.equal(u, torch.rand(2, 3)))

# %% [markdown] tags=["claim-torch-tensors-shape-forms-and-normal"]
# Shapes can be given the ways PyTorch takes them: `dt.zeros(2, 3)`, `dt.zeros((2, 3))` and
# `dt.zeros(size=(2, 3))` are the same. `dt.normal(mean, std, size)` draws normal numbers with
# your own mean and spread, the line D2L starts its linear regression with:

# %%
dt.manual_seed(0)
w = dt.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = dt.zeros(1, requires_grad=True)
print(w.shape, w.requires_grad, b)
assert dt.zeros(2, 3).shape == dt.zeros((2, 3)).shape == dt.zeros(size=(2, 3)).shape == (2, 3)
assert w.shape == (2, 1) and w.requires_grad and abs(w.numpy()).max() < 0.05   # 5 std

# %% tags=["twin-torch", "twin-same-numbers"]
torch.manual_seed(0)
w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
print(tuple(w.shape), w.requires_grad, b)

# %% [markdown] tags=["claim-torch-differs-float64-input-refused"]
# ### Going deeper: a float64 input in a float32 layer
#
# dltutor quietly promotes the layer's output to `float64`; PyTorch 2.13 refuses to mix the two
# in a layer (`RuntimeError: mat1 and mat2 must have the same dtype`;
# `tests/frameworks/test_ch00_welcome.py` runs it).

# %%
layer = nn.Linear(3, 2)
print("float64 input ->", layer(a).dtype)
print("float32 input ->", layer(c).dtype)
assert layer.weight.dtype == dt.float32
assert layer(a).dtype == dt.float64 and layer(c).dtype == dt.float32

# %% tags=["twin-torch"]
# PyTorch refuses what dltutor promotes: a float64 input in a float32 layer is an error.
layer = nn.Linear(3, 2)
try:
    layer(a)
except RuntimeError as err:
    print("float64 input -> RuntimeError:", err)
print("float32 input ->", layer(c).dtype)

# %% [markdown]
# ### Going deeper: rand and randn on 100,000 samples
#
# With many samples the two distributions are easy to tell apart.

# %%
dt.manual_seed(0)
many_u, many_n = dt.rand(100_000).numpy(), dt.randn(100_000).numpy()
print(f"rand : all in [0, 1): {bool(many_u.min() >= 0 and many_u.max() < 1)}  mean {many_u.mean():.3f}")
print(f"randn: mean {many_n.mean():.3f}  std {many_n.std():.3f}")

fig, axes = plt.subplots(1, 2, figsize=(8, 3), layout="constrained")
axes[0].hist(many_u, bins=50, color="tab:blue")
axes[0].set_title("dt.rand: uniform on [0, 1)")
axes[1].hist(many_n, bins=50, color="tab:orange")
axes[1].set_title("dt.randn: normal, mean 0, std 1")
for ax in axes:
    ax.set_xlabel("value")
axes[0].set_ylabel("count")
plot.show()

# %% tags=["twin-torch"]
torch.manual_seed(0)                 # histograms: plt.hist(many_u.numpy(), bins=50)
many_u, many_n = torch.rand(100_000), torch.randn(100_000)
print(f"rand : all in [0, 1): {bool(many_u.min() >= 0 and many_u.max() < 1)}  mean {many_u.mean():.3f}")
print(f"randn: mean {many_n.mean():.3f}  std {many_n.std():.3f}")

# %%
assert 0.0 <= many_u.min() and many_u.max() < 1.0
assert abs(many_n.mean()) < 0.02 and abs(many_n.std() - 1.0) < 0.02     # 6 standard errors

# %% [markdown] tags=["claim-torch-tensors-max-dim-pair"]
# ## Reducing along a dimension: `dim=`, and what `max` returns
#
# Reductions (`sum`, `mean`, `max`, `std`, `softmax`, ...) take the dimension as `dim=` (PyTorch's
# name) or `axis=` (NumPy's); `keepdim=True` keeps it with size 1. Like PyTorch's,
# **`max(x, dim)` returns two tensors**: the largest values and their positions. That is what
# makes the classification idiom work: the predicted class of each row is the *index* of its
# largest score. (With only one tensor coming back, as in NumPy, `_, predicted = ...` on a batch
# of two would quietly unpack the two *rows* instead.)

# %%
scores = dt.tensor([[0.1, 2.0, -1.0],
                    [3.0, 0.5, 0.2]])          # 2 examples, 3 classes
values, indices = scores.max(dim=1)
_, predicted = dt.max(scores, 1)               # the PyTorch tutorials' line
print(values, indices, predicted, sep="\n")
print("whole tensor:", scores.max(), "| values only, over several dims:", scores.amax(dim=(0, 1)))
assert values.tolist() == [2.0, 3.0] and indices.tolist() == [1, 0]
assert predicted.tolist() == [1, 0] and predicted.dtype == dt.int64
assert scores.max().item() == 3.0 and scores.argmax(dim=1).tolist() == [1, 0]

# %% tags=["twin-torch", "twin-same-numbers"]
scores = torch.tensor([[0.1, 2.0, -1.0],
                       [3.0, 0.5, 0.2]])       # 2 examples, 3 classes
values, indices = scores.max(dim=1)
_, predicted = torch.max(scores, 1)
print(values, indices, predicted, sep="\n")
print("whole tensor:", scores.max(), "| values only, over several dims:", scores.amax(dim=(0, 1)))

# %% [markdown] tags=["claim-torch-tensors-max-grad-ties"]
# ### Going deeper: where max sends its gradient when values tie
#
# As in PyTorch, `values` sends its gradient to the one element each index picked, while
# `x.max()` and `x.amax(dim)` share it evenly among tied maxima.

# %%
x = dt.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
x.max(dim=1).values.sum().backward()
max_dim_grad = x.grad.tolist()
print("max(dim) :", x.grad, "| index picked:", x.max(dim=1).indices.tolist())
x.grad = None
x.amax(dim=1).sum().backward()
print("amax(dim):", x.grad)

# %% tags=["twin-torch", "twin-same-numbers"]
x = torch.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
x.max(dim=1).values.sum().backward()
print("max(dim) :", x.grad, "| index picked:", x.max(dim=1).indices.tolist())
x.grad = None
x.amax(dim=1).sum().backward()
print("amax(dim):", x.grad)

# %%
assert x.max(dim=1).indices.tolist() == [0]
assert max_dim_grad == [[1.0, 0.0, 0.0]]          # max(dim): all of it to the picked element
assert x.grad.tolist() == [[0.5, 0.5, 0.0]]       # amax(dim): shared between the tied maxima

# %% [markdown]
# ## Adding a channel dimension to images
#
# A batch of grayscale images, such as MNIST digits, often arrives with shape (N, 28, 28). A
# convolution wants (N, C, H, W): it needs to be told there is **one channel**. Three ways give
# the same result:
#
# * `x.unsqueeze(1)` inserts an axis of size 1 at position 1;
# * `x.reshape(N, 1, 28, 28)` spells out the new shape;
# * `x[:, None]` is NumPy's indexing shortcut for the same thing.
#
# No value moves: an axis of size 1 only changes how the same numbers are indexed, and the
# images now fit a convolution with one input channel. (Before the data reaches dltutor, NumPy's
# `np.expand_dims(array, 1)` does the same.)

# %%
dt.manual_seed(0)
images = dt.rand(8, 28, 28)          # 8 fake grayscale images
x1 = images.unsqueeze(1)
x2 = images.reshape(8, 1, 28, 28)
x3 = images[:, None]
print(images.shape, "->", x1.shape, x2.shape, x3.shape)
assert x1.shape == x2.shape == x3.shape == (8, 1, 28, 28)
assert np.array_equal(x1.numpy(), x2.numpy()) and np.array_equal(x1.numpy(), x3.numpy())

conv = nn.Conv2d(1, 6, kernel_size=5)   # one input channel
print(conv(x1).shape)
assert conv(x1).shape == (8, 6, 24, 24)
assert np.array_equal(np.expand_dims(images.numpy(), 1), x1.numpy())

# %% tags=["twin-torch", "twin-same-numbers"]
torch.manual_seed(0)
images = torch.rand(8, 28, 28)       # 8 fake grayscale images
x1 = images.unsqueeze(1)
x2 = images.reshape(8, 1, 28, 28)
x3 = images[:, None]
print(tuple(images.shape), "->", tuple(x1.shape), tuple(x2.shape), tuple(x3.shape))

conv = nn.Conv2d(1, 6, kernel_size=5)   # one input channel
print(tuple(conv(x1).shape))

# %% [markdown]
# **`expand` is for a different job**: repeating an axis of size 1 without copying it, for
# example to feed grayscale images to a network built for 3-channel colour images
# (`x1.expand(-1, 3, -1, -1)`: -1 keeps a dimension's size). Two facts about it:
#
# * it only repeats axes of size 1: expanding an axis of size 2 to 3 is an error (use `cat` or
#   `stack` to really copy data);
# * in backward, the gradient of the repeated copies is **added up** into the one original, so
#   the gradient has the original's shape. Here each pixel is used three times, so its gradient
#   is 3.

# %%
try:
    dt.rand(8, 2, 28, 28).expand(-1, 3, -1, -1)
except ValueError as err:
    print("ValueError:", err)

gray = dt.rand(8, 1, 28, 28, requires_grad=True)
gray.expand(-1, 3, -1, -1).sum().backward()
print("gradient shape:", gray.grad.shape, "| values:", np.unique(gray.grad.numpy()))
assert gray.grad.shape == gray.shape
assert np.all(gray.grad.numpy() == 3.0)

# %% tags=["twin-torch"]
try:
    torch.rand(8, 2, 28, 28).expand(-1, 3, -1, -1)
except RuntimeError as err:          # PyTorch raises a RuntimeError here
    print("RuntimeError:", err)

gray = torch.rand(8, 1, 28, 28, requires_grad=True)
gray.expand(-1, 3, -1, -1).sum().backward()
print("gradient shape:", tuple(gray.grad.shape), "| values:", gray.grad.unique())

# %% [markdown]
# ### Going deeper: expand makes a view, not a copy
#
# The result is a view whose repeated axis has stride 0: all three channels are the same memory.

# %%
rgb = x1.expand(-1, 3, -1, -1)       # -1 keeps a dimension's size
print(rgb.shape, "strides (bytes):", rgb.data.strides)
print("shares memory with the images:", np.shares_memory(rgb.data, images.data))

# %% tags=["twin-torch"]
# PyTorch counts strides in elements (dltutor's .data.strides, NumPy's, count bytes).
rgb = x1.expand(-1, 3, -1, -1)
print(tuple(rgb.shape), "strides (elements):", rgb.stride())
same_memory = rgb.untyped_storage().data_ptr() == images.untyped_storage().data_ptr()
print("shares memory with the images:", same_memory)

# %%
assert rgb.shape == (8, 3, 28, 28)
assert rgb.data.strides[1] == 0 and np.shares_memory(rgb.data, images.data)
assert np.array_equal(rgb[:, 0].numpy(), rgb[:, 2].numpy())

# %% [markdown]
# ## Batched matmul versus flatten then multiply
#
# `a @ b` (or `dt.matmul(a, b)`) multiplies the **last two axes** as matrices. Every axis before
# them is a batch axis, and batch axes broadcast like NumPy's. With a 3-D `a` and a matrix `b`,
# each of the 2 matrices in `a` is multiplied by `b`:

# %%
dt.manual_seed(1)
a = dt.randn(2, 3, 4)
b = dt.randn(4, 5)
out = a @ b
print(a.shape, "@", b.shape, "->", out.shape)
assert out.shape == (2, 3, 5)
for i in range(2):
    assert np.allclose(out[i].numpy(), a[i].numpy() @ b.numpy(), atol=1e-6)

# %% tags=["twin-torch", "twin-same-numbers"]
torch.manual_seed(1)
a = torch.randn(2, 3, 4)
b = torch.randn(4, 5)
out = a @ b
print(tuple(a.shape), "@", tuple(b.shape), "->", tuple(out.shape))

# %% [markdown] tags=["claim-paddle1-tensors-fluid-layers-mul", "claim-paddle-tensors-mul-flattens"]
# **Flatten, then multiply.** Paddle 1.x's `fluid.layers.mul(x, y, x_num_col_dims=1,
# y_num_col_dims=1)` first **flattens both inputs to 2-D** (the first `x_num_col_dims` axes of
# `x` become the rows, the others the columns; the same for `y`), does one matrix product, and
# gives the result the row axes of `x` and the column axes of `y`. With `x_num_col_dims=2` it
# agrees with `a @ b`: the batch axes are just more rows. With the default 1, each sample's
# 3 x 4 numbers become one row of 12, so a (12, 5) matrix `W` contracts over *both* trailing
# axes, where `a @ W` fails (and the default fails on `b`). Here it is, from reshape and `@`, so
# gradients flow through it:

# %%
def mul(x, y, x_num_col_dims=1, y_num_col_dims=1):
    """Paddle 1.x's flatten-then-multiply, built from reshape and one 2-D matmul."""
    rows, cols = x.shape[:x_num_col_dims], x.shape[x_num_col_dims:]
    y_rows, y_cols = y.shape[:y_num_col_dims], y.shape[y_num_col_dims:]
    x2 = x.reshape(int(np.prod(rows)), int(np.prod(cols)))
    y2 = y.reshape(int(np.prod(y_rows)), int(np.prod(y_cols)))
    return (x2 @ y2).reshape(*rows, *y_cols)


flat = mul(a, b, x_num_col_dims=2)  # a -> (6, 4), then (6, 4) @ (4, 5): the same as a @ b
W = dt.randn(12, 5)
summed = mul(a, W)                  # the default: (2, 12) @ (12, 5), a whole sample at once
print("mul(a, b, x_num_col_dims=2):", flat.shape, "   mul(a, W):", summed.shape)
for name, attempt in [("a @ W", lambda: a @ W), ("mul(a, b)", lambda: mul(a, b))]:
    try:
        attempt()
    except ValueError as err:
        print(f"{name}: ValueError: {err}")

# %% tags=["twin-torch"]
def mul(x, y, x_num_col_dims=1, y_num_col_dims=1):
    """Paddle 1.x's flatten-then-multiply, built from reshape and one 2-D matmul."""
    rows, cols = x.shape[:x_num_col_dims], x.shape[x_num_col_dims:]
    y_rows, y_cols = y.shape[:y_num_col_dims], y.shape[y_num_col_dims:]
    x2, y2 = x.reshape(rows.numel(), cols.numel()), y.reshape(y_rows.numel(), y_cols.numel())
    return (x2 @ y2).reshape(*rows, *y_cols)


flat = mul(a, b, x_num_col_dims=2)
W = torch.randn(12, 5)
summed = mul(a, W)
print("mul(a, b, x_num_col_dims=2):", tuple(flat.shape), "   mul(a, W):", tuple(summed.shape))
for name, attempt in [("a @ W", lambda: a @ W), ("mul(a, b)", lambda: mul(a, b))]:
    try:
        attempt()
    except RuntimeError as err:      # PyTorch's shape errors are RuntimeErrors
        print(f"{name}: RuntimeError: {err}")

# %% [markdown]
# ### Going deeper: when both operands are batched
#
# Then matmul pairs their batch axes, broadcasting axes of size 1: here `a2` holds 2 x 1 matrices
# and `b2` holds 5, and the result holds all 2 x 5 products.

# %%
a2 = dt.randn(2, 1, 3, 4)
b2 = dt.randn(5, 4, 2)
out2 = a2 @ b2                  # batch axes (2, 1) and (5,) broadcast to (2, 5)
print(a2.shape, "@", b2.shape, "->", out2.shape)

# %% tags=["twin-torch", "twin-same-numbers"]
a2 = torch.randn(2, 1, 3, 4)
b2 = torch.randn(5, 4, 2)
out2 = a2 @ b2                  # batch axes (2, 1) and (5,) broadcast to (2, 5)
print(tuple(a2.shape), "@", tuple(b2.shape), "->", tuple(out2.shape))

# %%
assert out2.shape == (2, 5, 3, 2)
for i in range(2):
    for j in range(5):
        assert np.allclose(out2[i, j].numpy(), a2[i, 0].numpy() @ b2[j].numpy(), atol=1e-6)

# %% [markdown] tags=["claim-paddle-tensors-mul-flattens", "claim-paddle-tensors-fc-flattens"]
# ### Going deeper: Paddle's mul and fc today
#
# Where Paddle still flattens this way, and the checks of `mul`'s results above.

# %% [markdown] tags=["claim-paddle-tensors-fc-flattens", "claim-paddle-tensors-mul-flattens"]
# The default `mul(a, W)` is what Paddle's fully connected `fc` does with image features, in 1.x
# and still in Paddle 3.3's `paddle.static.nn.fc`. Paddle 3.3 still runs the `mul` operator too
# (`paddle._legacy_C_ops.mul`; `tests/frameworks/test_ch01_tensors.py` checks it against the
# results above). Unlike `a2 @ b2`, `mul` cannot pair a batch of right-hand matrices. A `Linear`
# layer on a 3-D input treats the batch axes as more rows, as `mul` with `x_num_col_dims=2` does:

# %%
assert np.allclose(flat.numpy(), out.numpy(), atol=1e-6)
assert summed.shape == (2, 5)
assert np.allclose(summed.numpy(), np.tensordot(a.numpy(), W.numpy().reshape(3, 4, 5), axes=2),
                   atol=1e-5)
lin = nn.Linear(4, 5)               # a Linear layer on a 3-D input: rows first, the same idea
rows_first = (a.reshape(6, 4) @ lin.weight.T + lin.bias).reshape(2, 3, 5)
assert np.allclose(lin(a).numpy(), rows_first.numpy(), atol=1e-6)

# %% tags=["twin-torch"]
print("mul(a, b, x_num_col_dims=2) is a @ b:", torch.allclose(flat, out, atol=1e-6))
lin = nn.Linear(4, 5)               # a Linear layer on a 3-D input: rows first, the same idea
rows_first = (a.reshape(6, 4) @ lin.weight.T + lin.bias).reshape(2, 3, 5)
print("Linear on a 3-D input is rows first:", torch.allclose(lin(a), rows_first, atol=1e-6))

# %% tags=["twin-paddle"]
import numpy as np
import paddle
from paddle import nn

np.set_printoptions(precision=4, suppress=True)
paddle.seed(1)
mul = paddle._legacy_C_ops.mul      # the operator behind 1.x's fluid.layers.mul, still in 3.3
a, b, W = paddle.randn([2, 3, 4]), paddle.randn([4, 5]), paddle.randn([12, 5])
flat = mul(a, b, "x_num_col_dims", 2, "y_num_col_dims", 1)
summed = mul(a, W)                  # the defaults 1, 1: (2, 12) @ (12, 5)
print("mul(a, b, x_num_col_dims=2):", flat.shape, "   mul(a, W):", summed.shape)
print("the same as a @ b:", bool(paddle.allclose(flat, a @ b, atol=1e-5)))

# %% [markdown]
# ## Reading an error message
#
# Shape mistakes are the most common bug in deep-learning code. dltutor checks the shapes before
# computing and says which op failed, with which shapes, and why. Read the **last line** of a
# traceback first: here it names `matmul`, both shapes and the two inner sizes that should be
# equal. (This cell is meant to fail.)

# %% tags=["raises-exception"]
features = dt.randn(16, 3, 4)        # 16 samples of 3 x 4
weights = dt.randn(12, 5)            # meant for flattened samples of 12
features @ weights

# %% tags=["twin-torch", "raises-exception"]
features = torch.randn(16, 3, 4)     # 16 samples of 3 x 4
weights = torch.randn(12, 5)         # meant for flattened samples of 12
features @ weights

# %% [markdown]
# The fix is to flatten first, `features.reshape(16, 12) @ weights`, or to use a (4, 5) matrix.

# %%
assert (features.reshape(16, 12) @ weights).shape == (16, 5)

# %% [markdown] tags=["claim-torch-tensors-complex-and-strings"]
# ### Going deeper: what a tensor may hold
#
# A dltutor tensor holds real numbers: bool, integers or floats. PyTorch also has complex
# tensors; dltutor has none, so it refuses complex data instead of quietly dropping the
# imaginary part (and refuses strings and Python objects, as PyTorch does):

# %%
try:
    dt.tensor([1.0 + 2.0j])
except TypeError as err:
    print(err)
    complex_error = err
assert "complex" in str(complex_error)

# %% tags=["twin-torch"]
# PyTorch has complex tensors, so it keeps complex data; strings it refuses too.
print(torch.tensor([1.0 + 2.0j]))
try:
    torch.tensor(["one"])
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# ## Gradients accumulate until you clear them
#
# `loss.backward()` computes d loss / d t for every leaf tensor `t` with `requires_grad=True`
# and **adds** it into `t.grad`. Before any backward, `t.grad` is `None`.

# %%
w = dt.tensor([1.0, -2.0, 3.0], requires_grad=True)
print("before:", w.grad)
loss = (w * w).sum()                 # d loss / d w = 2 w
loss.backward()
print("after one backward:", w.grad)
assert np.allclose(w.grad.numpy(), 2 * w.numpy())

# %% tags=["twin-torch", "twin-same-numbers"]
w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
print("before:", w.grad)
loss = (w * w).sum()                 # d loss / d w = 2 w
loss.backward()
print("after one backward:", w.grad)

# %% [markdown]
# A second backward does not replace the gradient, it adds to it. This is on purpose (it lets
# you sum gradients over several small batches before one update), and it is why a training loop
# clears the gradients at every step. A backward frees the graph it walked, to save memory: to
# walk the same graph twice, pass `retain_graph=True` the first time.

# %%
first = w.grad.numpy().copy()
loss = (w * w).sum()                 # a fresh forward pass
loss.backward(retain_graph=True)     # a second backward, keeping the graph for one more
loss.backward()                      # a third, on the same graph
print("after three backwards:", w.grad)
assert np.allclose(w.grad.numpy(), 3 * first)

# %% tags=["twin-torch", "twin-same-numbers"]
loss = (w * w).sum()                 # a fresh forward pass
loss.backward(retain_graph=True)     # a second backward, keeping the graph for one more
loss.backward()                      # a third, on the same graph
print("after three backwards:", w.grad)

# %% [markdown]
# Clearing means setting the gradient to `None` (`w.grad = None`, `module.zero_grad()` or
# `optimizer.zero_grad()`). `None` and zeros are not the same thing: `None` says "no gradient
# reached this tensor", and optimizers skip such parameters entirely, which matters for freezing
# (chapter 08).

# %%
w.grad = None
(w * w).sum().backward()
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
net(dt.randn(5, 3)).sum().backward()
net.zero_grad()
print("w.grad:", w.grad, "| net grads:", [p.grad for p in net.parameters()])
assert np.allclose(w.grad.numpy(), 2 * w.numpy())
assert all(p.grad is None for p in net.parameters())

# %% tags=["twin-torch", "twin-same-numbers"]
w.grad = None
(w * w).sum().backward()
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
net(torch.randn(5, 3)).sum().backward()
net.zero_grad()                      # sets every .grad to None (PyTorch 2's default)
print("w.grad:", w.grad, "| net grads:", [p.grad for p in net.parameters()])

# %% [markdown] tags=["claim-mge-gradmanager-attach-backward", "claim-paddle-to-tensor-stops-gradient"]
# ### Going deeper: choosing which tensors get a gradient
#
# `backward(inputs=...)`, the training loop MegEngine builds on it, and Paddle's opposite default.

# %% [markdown] tags=["claim-torch-backward-inputs", "claim-mge-gradmanager-attach-backward", "claim-paddle-to-tensor-stops-gradient"]
# `loss.backward(inputs=[a])` (PyTorch's keyword) writes `.grad` of the listed leaves only;
# every other `.grad` stays as it was. MegEngine builds its training loop on that idea: its
# tensors carry no `requires_grad`. A `GradManager` is told which tensors get gradients
# (`attach`) and records the computation inside `with gm:`; `gm.backward(loss)` adds each
# attached tensor's gradient to its `.grad` and ends the recording. `dltutor.autodiff` has that
# `GradManager`, so MegEngine's loop runs as written, on top of `backward(inputs=...)`.
#
# Paddle asks the question the other way round, with `stop_gradient`, and its default for a
# plain tensor is the opposite of PyTorch's: `paddle.to_tensor([1.0, 2.0])` has
# `stop_gradient=True` (it gets no gradient) unless you pass `stop_gradient=False`, while a
# layer's trainable parameters start with `stop_gradient=False`. Here is MegEngine's loop, run with
# dltutor's `GradManager`:

# %%
from dltutor.autodiff import GradManager

a, b = dt.ones(2, requires_grad=True), dt.ones(2, requires_grad=True)
(a * b * 3).sum().backward(inputs=[a])
print("backward(inputs=[a]):", a.grad, b.grad)

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
gm = GradManager().attach(net[2].parameters())       # only the last layer gets gradients
with gm:
    loss = net(dt.ones(5, 3)).sum()
    gm.backward(loss)
print("attached:", [p.grad is not None for p in net[2].parameters()],
      "| not attached:", [p.grad is not None for p in net[0].parameters()])

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no GradManager: backward(inputs=...) names who gets a gradient.
a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
(a * b * 3).sum().backward(inputs=[a])
print("backward(inputs=[a]):", a.grad, b.grad)

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
loss = net(torch.ones(5, 3)).sum()
loss.backward(inputs=list(net[2].parameters()))     # only the last layer
print("attached:", [p.grad is not None for p in net[2].parameters()],
      "| not attached:", [p.grad is not None for p in net[0].parameters()])

# %% tags=["twin-paddle"]
# Paddle asks the other way round: stop_gradient, True for a plain tensor, not for a weight.
a = paddle.to_tensor([1.0, 1.0], stop_gradient=False)
b = paddle.to_tensor([1.0, 1.0])    # stop_gradient=True: it gets no gradient
(a * b * 3).sum().backward()
print("a.grad:", a.grad.numpy(), "| b.grad:", b.grad, "| b.stop_gradient:", b.stop_gradient)
layer = nn.Linear(3, 4)
print("a layer's weight: stop_gradient =", layer.weight.stop_gradient)

# %%
assert a.grad.tolist() == [3.0, 3.0] and b.grad is None
assert all(p.grad is not None for p in net[2].parameters())
assert all(p.grad is None for p in net[0].parameters())

# %% [markdown]
# ## Computing without recording
#
# Inside `with dt.no_grad():` nothing is recorded: results have `requires_grad=False` and no
# `grad_fn`, so no graph is kept in memory. Use it for evaluation and for changing parameters by
# hand: writing into a tensor that requires grad (`w[...] = ...`) is allowed only there, because
# outside it the engine may still need the old values for a backward pass.

# %%
w_before = w
with dt.no_grad():
    evaluated = (w * 2).sum()
    w[...] = w - 0.1 * w.grad        # a hand-made gradient step, written into w, not recorded
recorded = (w * 2).sum()
print("inside no_grad:", evaluated.requires_grad, evaluated.grad_fn)
print("outside       :", recorded.requires_grad, recorded.grad_fn)
print("w after the step:", w)

# %% tags=["twin-torch", "twin-same-numbers"]
w_before = w
with torch.no_grad():
    evaluated = (w * 2).sum()
    w[...] = w - 0.1 * w.grad        # a hand-made gradient step, written into w, not recorded
recorded = (w * 2).sum()
print("inside no_grad:", evaluated.requires_grad, evaluated.grad_fn)
print("outside       :", recorded.requires_grad, type(recorded.grad_fn).__name__)
print("w after the step:", w)

# %%
assert not evaluated.requires_grad and evaluated.grad_fn is None
assert recorded.requires_grad and recorded.grad_fn is not None
assert w is w_before and w.requires_grad and np.allclose(w.numpy(), [0.8, -1.6, 2.4])
try:
    w[...] = 0.0                     # outside no_grad: refused
    refused = False
except RuntimeError as err:
    refused = True
    print("RuntimeError:", err)
assert refused

# %% tags=["twin-torch"]
try:
    w[...] = 0.0                     # outside no_grad: refused
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# ## Broadcast gradients have the shape of the tensor
#
# When a tensor is broadcast, for example a bias of shape (3,) added to a batch of shape (4, 3),
# each of its numbers is used once per row. Its gradient collects all those uses and so has the
# **bias's own shape**, (3,), not the batch's: here each entry is used by 4 rows and gets 4.

# %%
bias = dt.zeros(3, requires_grad=True)
batch = dt.ones(4, 3)
(batch + bias).sum().backward()
print("bias.grad:", bias.grad, "shape", bias.grad.shape)
assert bias.grad.shape == bias.shape
assert np.allclose(bias.grad.numpy(), 4.0)

# %% tags=["twin-torch", "twin-same-numbers"]
bias = torch.zeros(3, requires_grad=True)
batch = torch.ones(4, 3)
(batch + bias).sum().backward()
print("bias.grad:", bias.grad, "shape", tuple(bias.grad.shape))

# %% [markdown] tags=["claim-paddle-tensors-stop-gradient-intermediate", "claim-torch-tensors-detach-cuts"]
# ## Stopping the gradient at an intermediate output
#
# A network is often built in stages: stage1 -> stage2 -> stage3. Suppose stage1 and stage2 are
# pretrained and you want to train only stage3. Paddle's FAQ answers: set `stop_gradient=True` on
# stage2's output. In dltutor (and PyTorch) you call **`.detach()`** on it.
#
# `h.detach()` returns a tensor with the same numbers as `h` (sharing its memory) but **without
# any record of how it was made**. Backward walks those records from the loss towards the
# leaves, so it stops there: nothing upstream of the cut, stage2, stage1 and anything before
# them, receives a gradient.

# %%
dt.manual_seed(0)
stage1, stage2, stage3 = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 1)
stages = {"stage1": stage1, "stage2": stage2, "stage3": stage3}
x, y = dt.randn(16, 4), dt.randn(16, 1)


def forward(cut=False):
    h = stage2(stage1(x).relu()).relu()
    if cut:
        h = h.detach()               # stop the gradient at stage2's output
    return nn.functional.mse_loss(stage3(h), y), h


def grads():
    """The gradient norm of every parameter, or None where no gradient arrived."""
    return {f"{s}.{n}": (None if p.grad is None else float(np.linalg.norm(p.grad.numpy())))
            for s, m in stages.items() for n, p in m.named_parameters()}


def clear():
    for m in stages.values():
        m.zero_grad()


loss, h = forward(cut=False)
loss.backward()
full = grads()
clear()

loss, h_cut = forward(cut=True)
loss.backward()
cut = grads()
for name in cut:
    show = lambda g: "None" if g is None else f"{g:.4f}"
    print(f"{name:13s} without detach: {show(full[name]):>7s}   with detach: {show(cut[name])}")

# %% tags=["twin-torch"]
torch.manual_seed(0)                 # PyTorch's own start weights: other norms than dltutor's
stage1, stage2, stage3 = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 1)
stages = {"stage1": stage1, "stage2": stage2, "stage3": stage3}
x, y = torch.randn(16, 4), torch.randn(16, 1)

def forward(cut=False):
    h = stage2(stage1(x).relu()).relu()
    if cut:
        h = h.detach()               # stop the gradient at stage2's output
    return nn.functional.mse_loss(stage3(h), y), h

def grads():                         # each gradient's norm, or None where none arrived
    return {f"{s}.{n}": None if p.grad is None else p.grad.norm().item()
            for s, m in stages.items() for n, p in m.named_parameters()}

def clear():
    for m in stages.values():
        m.zero_grad()

forward(cut=False)[0].backward()
full = grads()
clear()
forward(cut=True)[0].backward()
cut = grads()
show = lambda g: "None" if g is None else f"{g:.4f}"
for name in cut:
    print(f"{name:13s} without detach: {show(full[name]):>7s}   with detach: {show(cut[name])}")

# %% tags=["twin-paddle"]
# Paddle's FAQ way: set stop_gradient = True on stage2's output (h.detach() works too).
import paddle.nn.functional as F

paddle.seed(0)
stage1, stage2, stage3 = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 1)
x, y = paddle.randn([16, 4]), paddle.randn([16, 1])
h = F.relu(stage2(F.relu(stage1(x))))
h.stop_gradient = True               # stop the gradient at stage2's output
F.mse_loss(stage3(h), y).backward()
for name, layer in [("stage1", stage1), ("stage2", stage2), ("stage3", stage3)]:
    print(f"{name}.weight.grad is None: {layer.weight.grad is None}")

# %%
assert all(g is not None for g in full.values()), "without detach every stage gets a gradient"
for s in ("stage1", "stage2"):
    for n, p in stages[s].named_parameters():
        assert p.grad is None, f"{s}.{n} is upstream of the cut: no gradient"
for n, p in stage3.named_parameters():
    assert p.grad is not None and p.grad.shape == p.shape, "stage3 still learns"
assert not h_cut.requires_grad and h_cut.grad_fn is None

# %% [markdown]
# What `detach()` did **not** do: it did not freeze stage1 and stage2. Their parameters still
# have `requires_grad=True`, and the detached tensor holds the same values as before. Only this
# one path was cut, so a second path that reaches stage1 without passing through the cut, for
# example an extra loss on stage1's output, still trains stage1.

# %%
clear()
loss, _ = forward(cut=True)
extra = stage1(x).relu().mean()      # another path to stage1, not through the cut
(loss + extra).backward()
print("stage1.weight.grad is None:", stage1.weight.grad is None)
print("stage2.weight.grad is None:", stage2.weight.grad is None)
assert all(p.requires_grad for p in list(stage1.parameters()) + list(stage2.parameters()))
assert np.array_equal(h_cut.numpy(), forward(cut=False)[1].numpy()), "same values, no graph"
assert stage1.weight.grad is not None and stage2.weight.grad is None

# %% tags=["twin-torch"]
clear()
loss, _ = forward(cut=True)
extra = stage1(x).relu().mean()      # another path to stage1, not through the cut
(loss + extra).backward()
print("stage1.weight.grad is None:", stage1.weight.grad is None)
print("stage2.weight.grad is None:", stage2.weight.grad is None)

# %% [markdown]
# Compare with **freezing only stage2** (`stage2.requires_grad_(False)`): stage2 gets no
# gradient, but the gradient still flows *through* stage2's arithmetic to its input, so stage1
# keeps training. Cutting the path at stage2's output fixes both stages; freezing one layer
# fixes that layer only. Chapter 08 compares the ways of freezing in detail.

# %%
clear()
stage2.requires_grad_(False)
loss, _ = forward(cut=False)
loss.backward()
frozen2 = grads()
stage2.requires_grad_(True)
for name, g in frozen2.items():
    print(f"{name:13s} stage2 frozen: {'None' if g is None else f'{g:.4f}'}")
assert frozen2["stage2.weight"] is None and frozen2["stage2.bias"] is None
assert frozen2["stage1.weight"] is not None, "gradient flows through a frozen layer"

# %% tags=["twin-torch"]
clear()
stage2.requires_grad_(False)
forward(cut=False)[0].backward()
frozen2 = grads()
stage2.requires_grad_(True)
for name, g in frozen2.items():
    print(f"{name:13s} stage2 frozen: {'None' if g is None else f'{g:.4f}'}")

# %% [markdown]
# The picture: one bar per parameter and per setup, the gradient's norm; a cross marks a gradient
# that is `None`.

# %%
setups = {"no cut": full, "detach at stage2's output": cut, "stage2 frozen": frozen2}
names = list(full)
fig, ax = plt.subplots(figsize=(7.2, 3.3), layout="constrained")
width = 0.27
for k, (label, result) in enumerate(setups.items()):
    positions = np.arange(len(names)) + (k - 1) * width
    heights = [0.0 if result[n] is None else result[n] for n in names]
    bars = ax.bar(positions, heights, width, label=label)
    missing = [p for p, n in zip(positions, names) if result[n] is None]
    ax.plot(missing, [0.0] * len(missing), "x", color=bars.patches[0].get_facecolor(),
            markersize=9, markeredgewidth=2)
ax.axhline(0.0, color="black", lw=0.8)
ax.set_ylim(bottom=-0.04 * ax.get_ylim()[1])
ax.set_xticks(np.arange(len(names)), names, fontsize="small")
ax.set_ylabel("gradient norm")
ax.set_title("Which parameters get a gradient (x = None)")
ax.legend(fontsize="small")
plot.show()

# %% tags=["twin-torch"]
# The bars' heights (draw them with ax.bar as above): one column per setup, x = None.
setups = {"no cut": full, "detach": cut, "stage2 frozen": frozen2}
print(f"{'':13s}" + "".join(f"{label:>15s}" for label in setups))
for name in full:
    print(f"{name:13s}" + "".join(f"{'x' if r[name] is None else f'{r[name]:.4f}':>15s}"
                                  for r in setups.values()))

# %% [markdown]
# ### Going deeper: one training step with the cut
#
# The optimizer skips parameters whose gradient is `None`: after a step with the cut in place,
# stage1 and stage2 are unchanged and stage3 has moved.

# %%
opt = optim.SGD([p for m in stages.values() for p in m.parameters()], lr=0.1)
before = {s: m.weight.numpy().copy() for s, m in stages.items()}
opt.zero_grad()
loss, _ = forward(cut=True)
loss.backward()
opt.step()
moved = {s: not np.array_equal(before[s], m.weight.numpy()) for s, m in stages.items()}
print(moved)
assert moved == {"stage1": False, "stage2": False, "stage3": True}

# %% tags=["twin-torch"]
opt = torch.optim.SGD([p for m in stages.values() for p in m.parameters()], lr=0.1)
before = {s: m.weight.detach().clone() for s, m in stages.items()}
opt.zero_grad()
loss, _ = forward(cut=True)
loss.backward()
opt.step()                           # skips the parameters whose .grad is None
moved = {s: not torch.equal(before[s], m.weight) for s, m in stages.items()}
print(moved)

# %% [markdown] tags=["claim-torch-names-01", "claim-paddle-names-01", "claim-mge-names-01", "claim-paddle1-names-01", "claim-torch-tensors-max-dim-pair", "claim-paddle-tensors-max-values-only", "claim-mge-tensors-max-values-only"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | tensor from NumPy | `dt.tensor(arr, dtype=dt.float32)` | `torch.tensor(arr, dtype=torch.float32)` | `paddle.to_tensor(arr, dtype="float32")` (1.x: `fluid.dygraph.to_variable`) | `mge.tensor(arr, dtype="float32")` |
# | uniform / normal / integers | `dt.rand`, `dt.randn`, `dt.normal`, `dt.randint` | `torch.rand`, `torch.randn`, `torch.normal`, `torch.randint` | `paddle.rand`, `paddle.randn`, `paddle.normal`, `paddle.randint` | `mge.random.uniform`, `mge.random.normal`, — |
# | largest value and where | `values, indices = x.max(dim=1)` | `x.max(dim=1)` (same pair) | `paddle.max(x, axis=1)` (values only), `paddle.argmax` | `F.max(x, axis=1)` (values only), `F.argmax` |
# | seed | `dt.manual_seed(0)` | `torch.manual_seed(0)` | `paddle.seed(0)` | `mge.random.seed(0)` |
# | add an axis of size 1 | `x.unsqueeze(1)` | `x.unsqueeze(1)` | `paddle.unsqueeze(x, 1)` | `F.expand_dims(x, 1)` |
# | repeat a size-1 axis | `x.expand(-1, 3, -1, -1)` | `x.expand(-1, 3, -1, -1)` | `paddle.expand(x, [N, 3, 28, 28])` | `F.broadcast_to(x, (N, 3, 28, 28))` |
# | batched matmul | `a @ b`, `dt.matmul` | `a @ b`, `torch.matmul` | `paddle.matmul` (1.x: `fluid.layers.matmul`) | `F.matmul` |
# | flatten, then one 2-D product | `x.reshape(rows, -1) @ y` | — (reshape, then `@`) | 1.x: `fluid.layers.mul(x, y, x_num_col_dims)` | — |
# | stop the gradient here | `h.detach()` | `h.detach()` | `h.stop_gradient = True` or `h.detach()` | `h.detach()` |
# | no recording | `with dt.no_grad():` | `with torch.no_grad():` | `with paddle.no_grad():` | compute outside `GradManager.record()` |
# | forget gradients | `p.grad = None`, `zero_grad()` | `p.grad = None`, `zero_grad()` | `p.clear_gradient()`, `opt.clear_grad()` | `opt.clear_grad()` |
#
# ## Summary
#
# **In two lines:** a tensor is an array that remembers how it was computed, so `backward()` can
# hand every leaf that requires grad its gradient. Those gradients add up until you clear them,
# and `no_grad` or `detach()` decide where the recording stops.
#
# * `dt.tensor(array)` copies and keeps a NumPy array's dtype (float64 stays float64); Python
#   floats give float32. Pass `dtype=dt.float32` for network inputs.
# * `dt.rand`, `dt.randn`, `dt.normal`, `dt.randint` draw from one generator; `dt.manual_seed`
#   makes them repeatable.
# * Reductions take `dim=` or `axis=`; `x.max(dim)` returns `(values, indices)` as in PyTorch,
#   `x.amax(dim)` the values alone.
# * `unsqueeze(1)`, `reshape(N, 1, H, W)` and `x[:, None]` add a channel axis; `expand` repeats a
#   size-1 axis without copying, and its gradient sums the copies.
# * `a @ b` multiplies the last two axes and broadcasts the batch axes; flatten-then-multiply
#   turns everything into one 2-D product. They agree only when the flattened axes are plain rows.
# * Gradients add up across `backward()` calls until set to `None`; a broadcast tensor's gradient
#   has its own shape; `no_grad` records nothing.
# * `detach()` on an intermediate output cuts the graph there: nothing upstream gets a gradient,
#   though upstream parameters are not frozen and other paths still reach them.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it (correct, not yet and what differs, or not attempted). `ex.q1.hint()` gives a
# hint (call it again for the next), `ex.q1.solution()` shows an answer, and
# `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("01")

# %% [markdown]
# **1.** Make a tensor `t` holding `np.arange(6).reshape(2, 3)` that can have
# `requires_grad=True`. What dtype must it have?

# %%
t = ____
ex.q1.check()

# %% [markdown]
# **2.** `col = dt.ones(3, 1, requires_grad=True)` is expanded to shape (3, 4) and summed:
# `col.expand(3, 4).sum().backward()`. Predict `col.grad` *before* you run it, as an array in
# `predicted_grad`; then run it and compare.

# %%
predicted_grad = ____
ex.q2.check()

# %% [markdown]
# **3.** Call this chapter's `mul` on `a2` (shape (2, 1, 3, 4); if you skipped the Going deeper
# box that makes it, `a2 = dt.randn(2, 1, 3, 4)`) and a (12, 6) matrix with `x_num_col_dims=2`.
# Which shape comes out? Put it in `mul_shape` (a tuple).

# %%
mul_shape = ____
ex.q3.check()

# %% [markdown]
# **4.** In the three-stage network, move the `detach()` to stage1's output
# (`stage2(stage1(x).relu().detach())`). Which parameters get a gradient now? Put their names
# (`"stage2.weight"`, ...) in `with_grad`; `grads()` shows them.

# %%
with_grad = ____
ex.q4.check()

# %% [markdown]
# **5.** Make `x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)` and
# `loss = (x ** 2).sum()`, and call `loss.backward()` twice. Catch what the second call raises
# (`except Exception as err:`) and put the error object itself in `second_backward_error`. Its
# message names the fix: `loss.backward(retain_graph=True)` keeps the graph for one more
# backward. Make `x` and `loss` again, call `loss.backward(retain_graph=True)` and then
# `loss.backward()`, and put `x.grad` in `grad_after_two`. Predict it first.

# %%
second_backward_error = ____
grad_after_two = ____
ex.q5.check()

# %% [markdown]
# **6.** Write `input_gradient(f, x)`: for a function `f` that maps a tensor to one number and a
# NumPy array `x`, return the gradient of `f` at `x` as an array shaped like `x`, computed by
# autograd. The check tries functions and shapes of its own.

# %%
input_gradient = ____
ex.q6.check()
