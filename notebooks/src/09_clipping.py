# %% [markdown] tags=["claim-torch-clip-functions-not-optimizer", "claim-paddle-clip-optimizer-grad-clip"]
# # Gradient clipping and numerical trouble
#
# **About 30 minutes.** You will be able to:
#
# * clip gradients by value, by each tensor's norm or by the global norm, and keep some
#   parameters out;
# * find the op where a NaN started;
# * train with float16 layers and a loss scaler, clipping after `unscale_`;
# * check, step by step, why a training run does not converge.
#
# Now and then a batch produces a gradient hundreds of times larger than usual, one step
# throws the weights far away, and training never recovers — or the loss turns into `inf` and
# then `nan`. **Gradient clipping** limits how large a gradient may be before the optimizer uses
# it: PyTorch's way with functions, Paddle's way with a clip object handed to the optimizer.

# %%
import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import nn, optim, plot
from dltutor.data import make_moons, make_sine
from dltutor.nn import functional as F
from dltutor.nn import init
from dltutor.trace import Recorder

np.set_printoptions(precision=4, suppress=True)
print("quick mode:", dt.quick_mode())

# %% [markdown]
# ## Three ways to clip gradients
#
# A small network and one batch give us a set of gradients to clip. We keep a copy of them so
# that every method starts from exactly the same numbers. The **global norm** is the norm of all
# gradients joined into one vector: the square root of the sum of the squared per-tensor norms.

# %%
dt.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
x, y = dt.randn(32, 4), dt.randn(32, 1) * 3
F.mse_loss(net(x), y).backward()

names = [n for n, _ in net.named_parameters()]
original = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}


def restore_grads():
    """Put the original gradients back (the functions below change .grad in place)."""
    for n, p in net.named_parameters():
        p.grad = dt.tensor(original[n].copy())


def flat(grads):
    """All gradients as one long vector, in parameter order."""
    return np.concatenate([grads[n].ravel() for n in names])


def norm(a):
    return float(np.linalg.norm(a))


for n in names:
    print(f"{n:9s} norm {norm(original[n]):.4f}   largest |value| {np.abs(original[n]).max():.4f}")
print(f"global norm (all parameters together): {norm(flat(original)):.4f}")
assert np.isclose(norm(flat(original)), np.sqrt(sum(norm(original[n]) ** 2 for n in names)))

# %% tags=["twin-torch", "twin-same-numbers"]
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import dltutor as dt          # only to start from the kit's data and weights: the same numbers

np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4)
torch.set_num_threads(1)      # networks this small run fastest on one thread


def kit_start(model, kit_model):
    """`model` with the kit model's start weights copied in (same names, same shapes)."""
    weights = {n: torch.from_numpy(p.numpy().copy()) for n, p in kit_model.named_parameters()}
    model.load_state_dict(weights)
    return model


dt.manual_seed(0)
kit_net = dt.nn.Sequential(dt.nn.Linear(4, 16), dt.nn.Tanh(), dt.nn.Linear(16, 16),
                           dt.nn.Tanh(), dt.nn.Linear(16, 1))
x, y = torch.from_numpy(dt.randn(32, 4).numpy()), torch.from_numpy((dt.randn(32, 1) * 3).numpy())
net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
kit_start(net, kit_net)
F.mse_loss(net(x), y).backward()

names = [n for n, _ in net.named_parameters()]
original = {n: p.grad.clone() for n, p in net.named_parameters()}


def restore_grads():
    for n, p in net.named_parameters():
        p.grad = original[n].clone()


def global_norm(grads):
    return torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])).item()


for n in names:
    print(f"{n:9s} norm {original[n].norm():.4f}   largest |value| {original[n].abs().max():.4f}")
print(f"global norm (all parameters together): {global_norm(original.values()):.4f}")

# %% tags=["twin-paddle", "twin-same-numbers"]
import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

import dltutor as dt          # only to start from the kit's data and weights: the same numbers

np.set_printoptions(precision=4, suppress=True)
dt.manual_seed(0)
kit_net = dt.nn.Sequential(dt.nn.Linear(4, 16), dt.nn.Tanh(), dt.nn.Linear(16, 16),
                           dt.nn.Tanh(), dt.nn.Linear(16, 1))
x, y = paddle.to_tensor(dt.randn(32, 4).numpy()), paddle.to_tensor((dt.randn(32, 1) * 3).numpy())
net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
net.set_state_dict({n: p.numpy().T.copy() if n.endswith("weight") else p.numpy()
                    for n, p in kit_net.named_parameters()})    # Paddle's weights are (in, out)
F.mse_loss(net(x), y).backward()

names = [n for n, _ in net.named_parameters()]
original = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}   # Paddle's layout


def restore_grads():
    """Paddle's .grad cannot be assigned: clear it and run the same backward pass again."""
    net.clear_gradients(set_to_zero=False)
    F.mse_loss(net(x), y).backward()


def global_norm(grads):
    return float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)))


for n in names:
    g = original[n]
    print(f"{n:9s} norm {np.linalg.norm(g):.4f}   largest |value| {np.abs(g).max():.4f}")
print(f"global norm (all parameters together): {global_norm(original.values()):.4f}")

# %% [markdown] tags=["claim-torch-clip-grad-value-clamps", "claim-torch-clip-per-tensor-loop"]
# ### PyTorch style: functions on .grad between backward and step
#
# * `optim.clip_grad_value_(params, v)` clamps every gradient value into `[-v, v]`;
# * `optim.clip_grad_norm_(params, max_norm)` scales **all** gradients by one factor so that their
#   global norm is at most `max_norm` (a hair under it: Going deeper, below), and returns the
#   global norm before clipping (handy to log);
# * clipping each tensor on its own has no function of its own in PyTorch: call
#   `clip_grad_norm_` once per parameter.
#
# They change `p.grad` in place, so call them after `backward()` and before `opt.step()`.

# %%
restore_grads()
optim.clip_grad_value_(net.parameters(), 0.1)
by_value = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}

restore_grads()
for p in net.parameters():
    optim.clip_grad_norm_(p, max_norm=0.5)          # one tensor at a time
by_tensor_norm = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}

restore_grads()
total = optim.clip_grad_norm_(net.parameters(), max_norm=1.0)
by_global_norm = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
print(f"clip_grad_norm_ returned the norm before clipping: {total.item():.4f}")
print(f"global norm after: {norm(flat(by_global_norm)):.6f}")

# %% tags=["twin-torch", "twin-same-numbers"]
restore_grads()
nn.utils.clip_grad_value_(net.parameters(), 0.1)
by_value = {n: p.grad.clone() for n, p in net.named_parameters()}

restore_grads()
for p in net.parameters():
    nn.utils.clip_grad_norm_(p, max_norm=0.5)       # one tensor at a time
by_tensor_norm = {n: p.grad.clone() for n, p in net.named_parameters()}

restore_grads()
total = nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
by_global_norm = {n: p.grad.clone() for n, p in net.named_parameters()}
print(f"clip_grad_norm_ returned the norm before clipping: {total.item():.4f}")
print(f"global norm after: {global_norm(by_global_norm.values()):.6f}")

# %%
assert all(np.abs(by_value[n]).max() <= 0.1 + 1e-7 for n in names)        # every value in [-0.1, 0.1]
assert all(norm(by_tensor_norm[n]) <= 0.5 + 1e-6 for n in names)           # every tensor norm <= 0.5
assert np.isclose(total.item(), norm(flat(original)), rtol=1e-5)            # returns the norm before
assert norm(flat(by_global_norm)) <= 1.0                                    # the global norm is <= 1
assert np.isclose(norm(flat(by_global_norm)), 1.0, rtol=1e-5)   # clipped to 1 (the hair: Going deeper)

# %% [markdown] tags=["claim-paddle-clip-optimizer-grad-clip", "claim-paddle-clip-by-value-min-default", "claim-paddle-clip-by-norm-per-tensor", "claim-paddle-clip-global-norm-no-epsilon"]
# ### Paddle style: a clip object handed to the optimizer
#
# Paddle clips inside the optimizer: you make a clip object, `optim.ClipGradByValue(max)`
# (every value into `[-max, max]`), `optim.ClipGradByNorm(clip_norm)` (each tensor on its own) or
# `optim.ClipGradByGlobalNorm(clip_norm)`, and pass it as `grad_clip=`. Every `opt.step()` then
# clips before updating. dltutor's optimizer clips **its own copy**: the update uses the clipped
# gradient, and `p.grad` stays as backward left it. The clip object also remembers what it did in
# the last step: `last_total_norm` (the global norm before), `last_clipped_norm` (after) and
# `last_scale` (after / before), which is `clip_norm / max(global_norm, clip_norm)`: Paddle's
# formula, with no epsilon.

# %%
restore_grads()
before = {n: p.numpy().copy() for n, p in net.named_parameters()}
clip = optim.ClipGradByGlobalNorm(clip_norm=1.0)
opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=clip)
opt.step()

print(f"last_total_norm {clip.last_total_norm:.4f}  last_clipped_norm {clip.last_clipped_norm:.4f}"
      f"  last_scale {clip.last_scale:.4f}")

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch's optimizers take no grad_clip=: clip_grad_norm_ goes in the loop, between
# backward() and step(), and it clips .grad itself (the kit's clip object clips a copy).
restore_grads()
before = {n: p.detach().clone() for n, p in net.named_parameters()}
opt = torch.optim.SGD(net.parameters(), lr=0.1)
total = nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0).item()
clipped = global_norm(p.grad for p in net.parameters())
opt.step()
print(f"norm before {total:.4f}  after {clipped:.4f}  scale {clipped / total:.4f}")
with torch.no_grad():                               # undo the step
    for n, p in net.named_parameters():
        p.copy_(before[n])

# %% tags=["twin-paddle", "twin-same-numbers"]
restore_grads()
# Paddle's clip objects report nothing back: the norm before is computed here, and the norm
# after read from .grad, which Paddle's ClipGradByGlobalNorm scales in place.
before = {n: p.numpy().copy() for n, p in net.named_parameters()}
clip = nn.ClipGradByGlobalNorm(clip_norm=1.0)
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters(), grad_clip=clip)
opt.step()
total = global_norm(original.values())
clipped = global_norm(p.grad.numpy() for p in net.parameters())
print(f"norm before {total:.4f}  after {clipped:.4f}  scale {clipped / total:.4f}")

# %%
g_total = norm(flat(original))
assert np.isclose(clip.last_total_norm, g_total, rtol=1e-5)
assert np.isclose(clip.last_scale, 1.0 / g_total, rtol=1e-5)
assert np.isclose(clip.last_scale * clip.last_total_norm, 1.0, rtol=1e-12)   # no epsilon: exactly 1
assert np.isclose(clip.last_clipped_norm, 1.0, rtol=1e-12)                   # (with it: 1 - 7e-7)
for n, p in net.named_parameters():
    assert np.array_equal(p.grad.numpy(), original[n])                       # .grad untouched
    step_taken = before[n] - p.numpy()
    assert np.allclose(step_taken, 0.1 * original[n] * clip.last_scale, atol=1e-6)   # clipped update
    p.set_value(before[n])                                                   # undo the step

# %% tags=["twin-paddle"]
# Unlike the kit's clip object, which clips its own copy, Paddle's left .grad clipped:
scaled = [np.allclose(p.grad.numpy(), original[n] * clipped / total, atol=1e-7)
          for n, p in net.named_parameters()]
print(".grad holds the clipped gradient:", all(scaled))
for n, p in net.named_parameters():
    p.set_value(before[n])                                     # undo the step

# %% [markdown] tags=["claim-torch-clip-styles-agree-up-to-epsilon"]
# A clip object is also a plain function: called with the parameters and a list of gradient
# arrays, it clips the arrays in place, so we can check that the two styles agree (up to
# PyTorch's epsilon: Going deeper, below).

# %%
params = list(net.parameters())
objects = {
    "value": optim.ClipGradByValue(0.1),
    "tensor norm": optim.ClipGradByNorm(0.5),
    "global norm": optim.ClipGradByGlobalNorm(1.0),
}
clipped = {kind: dict(zip(names, obj(params, [original[n].copy() for n in names])))
           for kind, obj in objects.items()}

for n in names:
    assert np.array_equal(clipped["value"][n], by_value[n])
    assert np.allclose(clipped["tensor norm"][n], by_tensor_norm[n], rtol=1e-5, atol=1e-8)
    assert np.allclose(clipped["global norm"][n], by_global_norm[n], rtol=1e-5, atol=1e-8)

# %% tags=["twin-paddle"]
# A Paddle clip object is callable too, on (parameter, gradient) pairs; paddle.nn.utils has
# PyTorch's functions, which clip .grad: both ways agree (up to the functions' epsilon).
def pairs():
    return [(p, paddle.to_tensor(original[n])) for n, p in net.named_parameters()]


objects = {"value": nn.ClipGradByValue(0.1), "tensor norm": nn.ClipGradByNorm(0.5),
           "global norm": nn.ClipGradByGlobalNorm(1.0)}
functions = {"value": lambda ps: [paddle.nn.utils.clip_grad_value_(ps, 0.1)],
             "tensor norm": lambda ps: [paddle.nn.utils.clip_grad_norm_(p, 0.5) for p in ps],
             "global norm": lambda ps: [paddle.nn.utils.clip_grad_norm_(ps, 1.0)]}
for kind, obj in objects.items():
    by_object = [g.numpy() for _, g in obj(pairs())]
    restore_grads()
    functions[kind](net.parameters())
    agree = all(np.allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-8)
                for g, p in zip(by_object, net.parameters()))
    print(f"{kind:12s} clip object and function agree: {agree}")
restore_grads()

# %% [markdown] tags=["claim-torch-clip-grad-norm-formula", "claim-torch-clip-grad-norm-negative-or-zero"]
# ### Going deeper: PyTorch's epsilon, and a threshold of 0 or less
#
# Where the two styles differ by a hair, and what PyTorch does with a threshold that is not above 0.

# %% [markdown] tags=["claim-torch-clip-grad-norm-formula", "claim-paddle-clip-global-norm-no-epsilon", "claim-torch-clip-styles-agree-up-to-epsilon"]
# `clip_grad_norm_` computes its factor as `max_norm / (total + 1e-6)`, PyTorch's formula, so it
# lands a hair under `max_norm`; Paddle's formula has no epsilon. In float32 that epsilon hides
# in the rounding: it moves the norm by `1e-6 / (total + 1e-6)`,
# about `7e-7` here, as much as float32 rounds. In float64 it shows. The same gradients as
# float64, clipped both ways: PyTorch's formula (`clip_grad_norm_`) lands `1e-6 / (total + 1e-6)`
# under 1, Paddle's (`ClipGradByGlobalNorm`, no epsilon) lands on 1.

# %%
grads64 = [original[n].astype(np.float64) for n in names]
for p, g in zip(params, grads64):
    p.grad = dt.tensor(g.copy())
total64 = optim.clip_grad_norm_(params, max_norm=1.0).item()
torch_style = norm(np.concatenate([p.grad.numpy().ravel() for p in params]))
paddle_style = norm(np.concatenate([g.ravel() for g in
                                    optim.ClipGradByGlobalNorm(1.0)(params, [g.copy() for g in grads64])]))
# (Paddle's side prints as "below 1e-12": its last bit, 0 or 1e-16, depends on the CPU's BLAS.)
paddle_gap = "below 1e-12" if abs(1 - paddle_style) < 1e-12 else f"{1 - paddle_style:.4g}"
print(f"1 - norm after clipping: clip_grad_norm_ {1 - torch_style:.4g}, "
      f"ClipGradByGlobalNorm {paddle_gap}; 1e-6 / (total + 1e-6) = {1e-6 / (total64 + 1e-6):.4g}")
restore_grads()

assert np.isclose(1 - torch_style, 1e-6 / (total64 + 1e-6), rtol=1e-6)   # exactly the epsilon's hair
assert abs(1 - paddle_style) < 1e-12                                      # no epsilon at all

# %% tags=["twin-torch", "twin-same-numbers"]
grads64 = [original[n].double() for n in names]
params64 = [torch.zeros_like(g, requires_grad=True) for g in grads64]   # float64 stand-ins
for p, g in zip(params64, grads64):
    p.grad = g.clone()
total64 = nn.utils.clip_grad_norm_(params64, max_norm=1.0).item()
torch_style = global_norm(p.grad for p in params64)
# Paddle's formula by hand: clip_norm / max(total, clip_norm), no epsilon
paddle_style = global_norm(g * (1.0 / max(total64, 1.0)) for g in grads64)
paddle_gap = "below 1e-12" if abs(1 - paddle_style) < 1e-12 else f"{1 - paddle_style:.4g}"
print(f"1 - norm after clipping: clip_grad_norm_ {1 - torch_style:.4g}, "
      f"Paddle's formula {paddle_gap}; 1e-6 / (total + 1e-6) = {1e-6 / (total64 + 1e-6):.4g}")

# %% tags=["twin-paddle"]
# ClipGradByGlobalNorm has no epsilon: on float64 gradients it lands on 1 (to float64 rounding).
grads64 = [paddle.to_tensor(original[n].astype(np.float64)) for n in names]
clipped64 = nn.ClipGradByGlobalNorm(1.0)(list(zip(net.parameters(), grads64)))
gap = 1 - global_norm(g.numpy() for _, g in clipped64)
print("1 - norm after ClipGradByGlobalNorm:", "below 1e-12" if abs(gap) < 1e-12 else f"{gap:.4g}")

# %% [markdown] tags=["claim-torch-clip-grad-norm-negative-or-zero"]
# A threshold must be a number above 0. PyTorch 2.13 computes its factor
# `max_norm / (total + 1e-6)` whatever `max_norm` is, so `max_norm=-1` quietly flips the sign of
# every gradient (training then climbs the loss) and `max_norm=0` zeroes them; dltutor refuses
# both before it touches a gradient.

# %%
before_refusal = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
try:
    optim.clip_grad_norm_(net.parameters(), max_norm=-1)
except ValueError as err:
    print(err)
    threshold_error = err
assert "max_norm" in str(threshold_error)
assert all(np.array_equal(p.grad.numpy(), before_refusal[n]) for n, p in net.named_parameters())

# %% tags=["twin-torch"]
# PyTorch refuses no threshold: max_norm=-1 makes the factor -1 / (total + 1e-6), which
# flips the sign of every gradient (the kit raises before it touches one).
restore_grads()
nn.utils.clip_grad_norm_(net.parameters(), max_norm=-1)
flipped = all((p.grad * original[n] <= 0).all() for n, p in net.named_parameters())
print("max_norm=-1 accepted; every gradient's sign flipped:", flipped)
restore_grads()

# %% [markdown]
# ## How the clippings differ on the same gradients
#
# All three make gradients smaller, but not in the same way. Here are the per-tensor norms
# before and after each method, and the cosine similarity between the clipped and the original
# gradient as one vector (1 means the same direction).

# %%
def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


results = {"original": original, "value (0.1)": by_value, "tensor norm (0.5)": by_tensor_norm,
           "global norm (1.0)": by_global_norm}
print(f"{'':9s}" + "".join(f"{k:>19s}" for k in results))
for n in names:
    print(f"{n:9s}" + "".join(f"{norm(r[n]):19.4f}" for r in results.values()))
print(f"{'global':9s}" + "".join(f"{norm(flat(r)):19.4f}" for r in results.values()))
print(f"{'cosine':9s}" + "".join(f"{cosine(flat(r), flat(original)):19.4f}" for r in results.values()))

# %% tags=["twin-torch", "twin-same-numbers"]
def cosine(a, b):
    a, b = torch.cat([g.flatten() for g in a]), torch.cat([g.flatten() for g in b])
    return (a @ b / (a.norm() * b.norm())).item()


results = {"original": original, "value (0.1)": by_value, "tensor norm (0.5)": by_tensor_norm,
           "global norm (1.0)": by_global_norm}
print(f"{'':9s}" + "".join(f"{k:>19s}" for k in results))
for n in names:
    print(f"{n:9s}" + "".join(f"{r[n].norm():19.4f}" for r in results.values()))
print(f"{'global':9s}" + "".join(f"{global_norm(r.values()):19.4f}" for r in results.values()))
print(f"{'cosine':9s}" + "".join(f"{cosine(r.values(), original.values()):19.4f}"
                                  for r in results.values()))

# %% [markdown]
# * **Global norm** multiplies everything by one number (0.68 here): every tensor shrinks by the
#   same factor, so the whole gradient keeps its direction. Only the step length changes.
# * **Per-tensor norm** shrinks only the tensors above the threshold (the three weights), each
#   by its own factor, and leaves the biases alone: each tensor keeps its direction, but the whole
#   gradient turns.
# * **Value clipping** clamps single numbers: within one tensor the large entries are cut and
#   the small ones kept, so even a single tensor's direction changes.

# %%
ratios = {n: norm(by_global_norm[n]) / norm(original[n]) for n in names}
assert np.allclose(list(ratios.values()), 1.0 / g_total, rtol=1e-5)              # one factor for all
assert np.isclose(cosine(flat(by_global_norm), flat(original)), 1.0, atol=1e-6)  # same direction

for n in names:                                          # per-tensor: each tensor keeps its direction
    assert np.isclose(cosine(by_tensor_norm[n].ravel(), original[n].ravel()), 1.0, atol=1e-6)
    if norm(original[n]) <= 0.5:
        assert np.array_equal(by_tensor_norm[n], original[n])                  # small ones untouched
assert cosine(flat(by_tensor_norm), flat(original)) < 0.99                     # the whole turns

assert cosine(by_value["4.weight"].ravel(), original["4.weight"].ravel()) < 0.99  # even one tensor turns
assert cosine(flat(by_value), flat(original)) < 0.99

# %% [markdown] tags=["claim-paddle-clip-need-clip-paramattr", "claim-torch-clip-subset-not-passed"]
# Which one to use? Global-norm clipping is the usual choice (what most papers and code mean by
# "gradient clipping"): it keeps the direction and only limits the step length.
# Per-tensor clipping limits each layer separately, and value clipping is the bluntest tool.
#
# ### Keeping parameters out of clipping
#
# Every parameter has `need_clip` (Paddle's `ParamAttr(need_clip=...)`). A clip object handed to
# the optimizer skips parameters with `need_clip=False`: their gradients are neither counted in
# the global norm nor scaled. Here we keep all biases out. The PyTorch-style functions clip
# whatever you pass them, so there you leave parameters out by not passing them (the second cell
# below checks that this gives the same gradients).

# %%
for n, p in net.named_parameters():
    p.need_clip = not n.endswith("bias")
restore_grads()
before = {n: p.numpy().copy() for n, p in net.named_parameters()}
clip = optim.ClipGradByGlobalNorm(clip_norm=1.0)
opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=clip)
opt.step()
used = {n: (before[n] - p.numpy()) / 0.1 for n, p in net.named_parameters()}   # the gradient each step used

weights_norm = np.sqrt(sum(norm(original[n]) ** 2 for n in names if n.endswith("weight")))
print(f"last_total_norm {clip.last_total_norm:.4f} (the weights only: {weights_norm:.4f}; "
      f"all parameters: {g_total:.4f})")

# %% tags=["twin-torch", "twin-same-numbers"]
# PyTorch has no need_clip: pass clip_grad_norm_ only the parameters to clip (here the
# weights); it returns their norm, and the biases' gradients keep their size.
restore_grads()
weights = [p for n, p in net.named_parameters() if n.endswith("weight")]
total_weights = nn.utils.clip_grad_norm_(weights, max_norm=1.0).item()
weights_norm = global_norm(original[n] for n in names if n.endswith("weight"))
print(f"clip_grad_norm_ returned {total_weights:.4f} (the weights only: {weights_norm:.4f}; "
      f"all parameters: {global_norm(original.values()):.4f})")
restore_grads()

# %% tags=["twin-paddle"]
# Paddle keeps a parameter out of clipping with the ParamAttr its layer is made with:
# here every bias, in a copy of net (same weights, same gradients).
no_clip = paddle.ParamAttr(need_clip=False)
net_nc = nn.Sequential(nn.Linear(4, 16, bias_attr=no_clip), nn.Tanh(),
                       nn.Linear(16, 16, bias_attr=no_clip), nn.Tanh(),
                       nn.Linear(16, 1, bias_attr=no_clip))
net_nc.set_state_dict(net.state_dict())
F.mse_loss(net_nc(x), y).backward()
paddle.optimizer.SGD(learning_rate=0.1, parameters=net_nc.parameters(),
                     grad_clip=nn.ClipGradByGlobalNorm(1.0)).step()   # scales .grad in place
factor = {n: np.linalg.norm(p.grad.numpy()) / np.linalg.norm(original[n])
          for n, p in net_nc.named_parameters()}
weights_norm = global_norm(original[n] for n in names if n.endswith("weight"))
print(f"weights scaled by {factor['0.weight']:.4f} = 1 / {weights_norm:.4f} (the weights' norm);"
      f" biases by {factor['0.bias']:.4f}")

# %%
assert np.isclose(clip.last_total_norm, weights_norm, rtol=1e-5)       # biases not counted
for n in names:
    if n.endswith("bias"):
        assert np.allclose(used[n], original[n], atol=1e-5)            # biases not scaled
    else:
        assert np.allclose(used[n], original[n] * 1.0 / weights_norm, atol=1e-5)
for n, p in net.named_parameters():                                     # undo, and reset need_clip
    p.set_value(before[n])
    p.need_clip = True

# the PyTorch way: pass only the parameters to clip
restore_grads()
optim.clip_grad_norm_([p for n, p in net.named_parameters() if not n.endswith("bias")], 1.0)
assert all(np.allclose(p.grad.numpy(), used[n], atol=1e-5) for n, p in net.named_parameters())

# %% [markdown]
# ### Going deeper: the clippings in a picture, and a clip that stops training
#
# Value and norm clipping drawn for one small gradient and for our network, and a threshold typed as `1e-5` where `1e5` was meant.

# %% [markdown]
# **Two pictures of the same thing.** On the left, one gradient with two entries, `(3, 0.5)`, clipped
# by value to 1 and by norm to 1: value clipping turns it towards the diagonal. On the right, the
# per-tensor norms of our network's gradients after each method.

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.2, 4), layout="constrained",
                               gridspec_kw={"width_ratios": [1, 1.45]})
g2 = np.array([3.0, 0.5])
arrows = {"original": g2, "by value (1)": np.clip(g2, -1, 1), "by norm (1)": g2 / norm(g2)}
for (label, v), color in zip(arrows.items(), ["0.4", "tab:orange", "tab:blue"]):
    ax1.annotate("", xy=v, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, lw=2))
    ax1.plot([], [], color=color, lw=2, label=label)
ax1.add_patch(plt.Circle((0, 0), 1, fill=False, ls=":", color="tab:blue"))
ax1.add_patch(plt.Rectangle((-1, -1), 2, 2, fill=False, ls=":", color="tab:orange"))
ax1.set(xlim=(-1.2, 3.2), ylim=(-1.2, 1.5), aspect="equal", title="one gradient, two entries")
ax1.legend(fontsize="small", loc="lower right")

width = 0.2
positions = np.arange(len(names))
for k, (label, r) in enumerate(results.items()):
    ax2.bar(positions + (k - 1.5) * width, [norm(r[n]) for n in names], width, label=label)
ax2.axhline(0.5, color="tab:green", ls=":", lw=1)
ax2.set_xticks(positions, names)
ax2.set(ylabel="gradient norm of the tensor", title="per-tensor norms after each method")
ax2.legend(fontsize="small")
plot.show()

# %% tags=["twin-torch"]
# The left picture's numbers (the right one's are in the table above):
g2 = torch.tensor([3.0, 0.5])
print("original     ", g2)
print("by value (1) ", g2.clamp(-1, 1))
print("by norm (1)  ", g2 / g2.norm())

# %% [markdown]
# **A clip that stops training.** A threshold typed as `1e-5` where `1e5` was meant scales every gradient down to a norm of
# 0.00001: the parameters barely move, and nothing fails. Chapter 08's
# `dt.diagnose.why_not_updating` knows this cause too. It works out the scale the clip will
# apply to each gradient and calls anything below a millionth "clipped to nearly zero":

# %%
restore_grads()
typo = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=optim.ClipGradByNorm(1e-5))  # 1e5?
crushed = dt.diagnose.why_not_updating(net, typo, names[0])
print(crushed.verdict)
weight = net.get_parameter(names[0])
before = weight.numpy().copy()
typo.step()
step_size = np.abs(weight.numpy() - before).max()
weight.set_value(before)                                   # undo the step
assert crushed.cause == "clipped_to_zero"
assert 0 < step_size <= 0.1 * 1e-5 * (1 + 1e-4)            # at most lr x clip_norm: it moved, barely

# %% tags=["twin-torch"]
# PyTorch has no why_not_updating: a clip's factor far below 1 leaves the step near zero, silently.
restore_grads()
weight = net.get_parameter(names[0])
before = weight.detach().clone()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for p in net.parameters():
    nn.utils.clip_grad_norm_(p, max_norm=1e-5)      # 1e5 was meant
opt.step()
print(f"largest change of {names[0]}: {(weight - before).abs().max():.2g}")
with torch.no_grad():
    weight.copy_(before)

# %% tags=["twin-paddle"]
# Paddle has no why_not_updating: a clip_norm of 1e-5 trains nothing, and nothing says so.
restore_grads()
weight = net[0].weight
before = weight.numpy().copy()
typo = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters(),
                            grad_clip=nn.ClipGradByNorm(1e-5))       # 1e5?
typo.step()
print(f"largest change of {names[0]}: {np.abs(weight.numpy() - before).max():.2g}")
weight.set_value(before)                                   # undo the step

# %% [markdown] tags=["claim-torch-sgd-steps-with-nan-grad"]
# ## Where did my NaN loss start
#
# A NaN ("not a number") never comes from nowhere: some op produced an `inf` or a `nan` from
# finite inputs, and every op after it passed it on. Common first ops: the log of 0, a division
# by 0, `exp` of a large number, and numbers that grew too large for float32 (about `3.4e38`)
# because the learning rate was too large.
#
# ### A log of a probability that underflowed to 0
#
# A classifier on features that were never standardized (values up to 40), trained with a
# cross-entropy written by hand as `-log(softmax(logits)[label])`. (`np.errstate` silences NumPy's
# warnings; `nonfinite="apply"` makes the optimizer take a step with a NaN gradient, as PyTorch's
# does, where dltutor's default refuses it.)

# %%
rng = np.random.default_rng(0)
features = rng.random((64, 16)).astype(np.float32) * 40       # not standardized
labels = ((features / 40 - 0.5) @ rng.normal(size=(16, 3))).argmax(axis=1)
xc, yc = dt.tensor(features), dt.tensor(labels)


def naive_cross_entropy(logits, target):
    probs = F.softmax(logits, dim=1)
    return -dt.log(probs[dt.arange(len(target)), target]).mean()


def train_classifier(loss_fn, inputs, steps=6):
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = optim.SGD(model.parameters(), lr=0.05, nonfinite="apply")
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(inputs), yc)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


with np.errstate(all="ignore"):
    model, losses = train_classifier(naive_cross_entropy, xc)
print("losses:", [f"{v:.3f}" for v in losses])
print("weights finite:", {n: bool(np.isfinite(p.numpy()).all()) for n, p in model.named_parameters()})

# %% tags=["twin-torch", "twin-same-numbers"]
rng = np.random.default_rng(0)
features = rng.random((64, 16)).astype(np.float32) * 40       # not standardized
labels = ((features / 40 - 0.5) @ rng.normal(size=(16, 3))).argmax(axis=1)
xc, yc = torch.from_numpy(features), torch.from_numpy(labels)


def naive_cross_entropy(logits, target):
    probs = F.softmax(logits, dim=1)
    return -torch.log(probs[torch.arange(len(target)), target]).mean()


def train_classifier(loss_fn, inputs, steps=6):
    dt.manual_seed(0)                                          # the kit's start weights
    kit_model = dt.nn.Sequential(dt.nn.Linear(16, 32), dt.nn.ReLU(), dt.nn.Linear(32, 3))
    model = kit_start(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3)), kit_model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)         # steps with NaN gradients too
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(inputs), yc)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


model, losses = train_classifier(naive_cross_entropy, xc)
print("losses:", [f"{v:.3f}" for v in losses])
print("weights finite:", {n: bool(p.isfinite().all()) for n, p in model.named_parameters()})

# %% [markdown]
# The second loss is `inf`, and from then on everything is `nan`, weights included. Inside
# `dt.detect_anomaly()` every op checks its output, in the forward and in the backward pass, and
# the first one that produces a NaN or an Inf raises `dt.AnomalyError` naming itself and its
# inputs. We catch the error to print it.

# %%
try:
    with dt.detect_anomaly(), np.errstate(all="ignore"):
        train_classifier(naive_cross_entropy, xc)
except dt.AnomalyError as error:
    caught = error
    print(error)

# %% tags=["twin-torch"]
# torch.autograd.detect_anomaly checks only what backward functions return, for NaN: it
# passes log's -inf and stops one op later, in softmax's backward pass.
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")          # its notes: "enabled", and the forward traceback
    try:
        with torch.autograd.detect_anomaly():
            train_classifier(naive_cross_entropy, xc)
    except RuntimeError as error:
        print(error)

# %% [markdown]
# The culprit is `log`, with finite inputs: the probability it was given was exactly 0. After
# the first step the logits grew so far apart that `exp` of the difference underflowed to 0 in
# float32, and `log(0) = -inf`. (Other frameworks' checks, and an op that is only a victim:
# Going deeper, at the end of this section.)

# %%
model_1, _ = train_classifier(naive_cross_entropy, xc, steps=1)       # the weights after one step
z = model_1(xc).numpy()
gap = (z.max(axis=1) - z[np.arange(len(labels)), labels]).max()
print(f"largest gap between the top logit and the true class's logit after one step: {gap:.1f}")
assert np.exp(np.float32(-gap)) == 0                  # exp underflows to exactly 0 in float32
assert caught.args[0].startswith("log produced -inf in its forward pass")
assert "this op is where it started" in str(caught)
assert np.isinf(losses[1]) and np.isnan(losses[2])

# %% tags=["twin-torch", "twin-same-numbers"]
model_1, _ = train_classifier(naive_cross_entropy, xc, steps=1)      # the weights after one step
with torch.no_grad():
    z = model_1(xc).numpy()
gap = (z.max(axis=1) - z[np.arange(len(labels)), labels]).max()
print(f"largest gap between the top logit and the true class's logit after one step: {gap:.1f}")

# %% [markdown]
# The fix is to never take the log of a softmax: `F.log_softmax` computes the same numbers as
# `log(softmax(z))` with the largest logit subtracted first, so nothing underflows, and
# `F.cross_entropy` uses it. Where the naive formula is finite both agree. With `F.cross_entropy`
# the run stays finite, though its second loss is still large: the real problem is the scale of
# the inputs, and standardizing the features fixes that too.

# %%
logits = dt.tensor([[2.0, 1.0, -1.0], [200.0, 0.0, -50.0]])
with np.errstate(all="ignore"):
    naive_value = dt.log(F.softmax(logits, dim=1))
print("log(softmax):", naive_value)
print("log_softmax: ", F.log_softmax(logits, dim=1))
assert np.allclose(naive_value.numpy()[0], F.log_softmax(logits, dim=1).numpy()[0], atol=1e-6)
assert np.isinf(naive_value.numpy()[1]).any() and np.isfinite(F.log_softmax(logits, dim=1).numpy()).all()

_, safe_losses = train_classifier(F.cross_entropy, xc)
standardized = dt.tensor((features - features.mean(axis=0)) / features.std(axis=0))
_, std_losses = train_classifier(F.cross_entropy, standardized)
print("cross_entropy:              ", [f"{v:.3f}" for v in safe_losses])
print("cross_entropy, standardized:", [f"{v:.3f}" for v in std_losses])
assert np.isfinite(safe_losses).all()
assert safe_losses[1] > safe_losses[0]                             # still a jump: the inputs' scale
assert all(b < a for a, b in zip(std_losses, std_losses[1:]))      # smooth descent

# %% tags=["twin-torch", "twin-same-numbers"]
logits = torch.tensor([[2.0, 1.0, -1.0], [200.0, 0.0, -50.0]])
print("log(softmax):", torch.log(F.softmax(logits, dim=1)))
print("log_softmax: ", F.log_softmax(logits, dim=1))

_, safe_losses = train_classifier(F.cross_entropy, xc)
standardized = (xc - xc.mean(dim=0)) / xc.std(dim=0, correction=0)    # NumPy's std
_, std_losses = train_classifier(F.cross_entropy, standardized)
print("cross_entropy:              ", [f"{v:.3f}" for v in safe_losses])
print("cross_entropy, standardized:", [f"{v:.3f}" for v in std_losses])

# %% [markdown] tags=["claim-torch-detect-anomaly-nan-backward-only", "claim-paddle-check-nan-inf-forward-backward"]
# ### Going deeper: an op that is only a victim, and more NaN checks
#
# Weights that overflow under too large a learning rate, PyTorch's and Paddle's checks, and `error_if_nonfinite`.

# %% [markdown]
# **Weights that overflow because the learning rate is too large.** Not every NaN starts at the op that is to blame. A linear regression with a learning rate
# that is too large: each step overshoots the minimum by more than the last, the weights grow
# geometrically, and after a few dozen steps the squared error no longer fits in float32.
# A `Recorder` (the next section uses it more) follows the parameter norm.

# %%
dt.manual_seed(0)
xr = dt.randn(64, 8)
yr = xr @ dt.randn(8, 1) + 0.1 * dt.randn(64, 1)
reg = nn.Linear(8, 1)
opt = optim.SGD(reg.named_parameters(), lr=1.5)
rec_reg = Recorder(reg, opt)
failed_at = None
try:
    with dt.detect_anomaly(), np.errstate(all="ignore"):
        for step in range(200):
            failed_at = step
            opt.zero_grad()
            loss = F.mse_loss(reg(xr), yr)
            loss.backward()
            rec_reg.log_loss(loss)
            opt.step()
except dt.AnomalyError as error:
    overflow = error
    print(f"step {failed_at}:", error)

# %% tags=["twin-torch"]
# PyTorch has no Recorder, and detect_anomaly misses an inf in the forward pass:
# test the loss with torch.isfinite yourself, and keep the weight norms in a list.
torch.manual_seed(0)
xr = torch.randn(64, 8)
yr = xr @ torch.randn(8, 1) + 0.1 * torch.randn(64, 1)
reg = nn.Linear(8, 1)
opt = torch.optim.SGD(reg.parameters(), lr=1.5)
weight_norms = []
for step in range(200):
    opt.zero_grad()
    loss = F.mse_loss(reg(xr), yr)
    if not torch.isfinite(loss):
        print(f"step {step}: the loss is {loss.item()}")
        break
    loss.backward()
    opt.step()
    weight_norms.append(reg.weight.norm().item())

# %% [markdown]
# The anomaly check points at the loss (`mse_loss`), where the first `inf` appeared, but that op
# is a victim. The traces tell the real story: the weight norm grows by the same factor every
# step, a straight line on a log scale, and each update is larger than the weights themselves
# (an update ratio above 1). That is the signature of a learning rate that is too large.

# %%
fig, axes = plt.subplots(2, 1, figsize=(7.2, 6), layout="constrained")
plot.traces(rec_reg, "param_norm", names="weight", ax=axes[0], log=True)
plot.update_ratio(rec_reg, names="weight", ax=axes[1])
plot.show()

norms = rec_reg.series("param_norm", "weight")
growth = norms[6:] / norms[5:-1]
print(f"growth factor of the weight norm per step: {growth.min():.2f} .. {growth.max():.2f}")
assert overflow.args[0].startswith("mse_loss produced inf in its forward pass")
assert growth.min() > 2.0                                            # geometric blow-up
assert (rec_reg.series("update_ratio", "weight")[5:] > 1).all()      # steps larger than the weights

# %% tags=["twin-torch"]
norms = np.array(weight_norms)
growth = norms[6:] / norms[5:-1]
print(f"growth factor of the weight norm per step: {growth.min():.2f} .. {growth.max():.2f}")

# %% [markdown] tags=["claim-torch-detect-anomaly-naive-cross-entropy", "claim-torch-detect-anomaly-nan-backward-only", "claim-paddle-check-nan-inf-forward-backward", "claim-torch-clip-norm-error-if-nonfinite"]
# PyTorch's `torch.autograd.detect_anomaly()` would not have stopped at `log`. In PyTorch 2.13 it checks
# only what each backward function returns, and only for NaN: the `-inf` of `log` passes the
# forward pass, and the same naive cross-entropy stops one op later in the backward pass with
# `Function 'SoftmaxBackward0' returned nan values in its 0th output.` (softmax's backward
# multiplies the `inf` gradient by 0). Paddle 3.3's `paddle.set_flags({"FLAGS_check_nan_inf": 1})`
# checks every op's output for NaN and Inf, forward and backward, as `dt.detect_anomaly()` does.
#
# Two more tools: `np.isfinite(p.numpy()).all()` for each parameter finds the
# first one that went bad, and `optim.clip_grad_norm_(params, max_norm, error_if_nonfinite=True)`
# raises as soon as a gradient holds a NaN or an Inf (PyTorch's `clip_grad_norm_` has the same
# switch, off by default: its `RuntimeError` says the total norm "is non-finite"). Anomaly
# detection adds a check after every
# op, forward and backward: switch it on to hunt, then off again.

# %%
bad = nn.Parameter([1.0, 2.0])
bad.grad = dt.tensor([np.nan, 1.0])
try:
    optim.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
except RuntimeError as error:
    print(error)
    nonfinite_error = error
assert "nan" in str(nonfinite_error)

# %% tags=["twin-torch"]
bad = nn.Parameter(torch.tensor([1.0, 2.0]))
bad.grad = torch.tensor([float("nan"), 1.0])
try:
    nn.utils.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
except RuntimeError as error:
    print(error)

# %% [markdown]
# ## When training does not converge
#
# Two habits make every check below work:
#
# * **Start from a baseline that works** (a published recipe, the same model on an easier
#   problem, or the one-small-batch test below), with its loss curve recorded. Without one you
#   cannot tell "broken" from "slow".
# * **Change one thing at a time** and compare with the baseline: two changes at once can cancel
#   or hide each other.
#
# The **batch size** is one of those things, and it is tied to the learning rate: a smaller
# batch gives noisier gradients, so a learning rate that worked may now be too large. Halve the
# batch, and try a smaller lr before blaming the model.
#
# Then check, cheapest first:
#
# 1. **Data and labels.** Are the labels right and matched to the inputs (a shuffled `X` with an
#    unshuffled `y` learns nothing)? Are the features standardized, as the NaN example showed?
# 2. **Can the model overfit one small batch?** With a handful of examples the loss should go
#    to nearly 0. If it cannot, the model, the loss or the training loop is broken.
# 3. **The learning rate.** Too large: the loss jumps around or explodes. Too small: it barely
#    moves. Try values a factor of 10 apart.
# 4. **The initialization scale.** Activations and gradients should keep roughly the same size
#    from layer to layer (chapter 03's `plot.layer_statistics`).
# 5. **Gradient norms.** Spikes, steady growth, NaN, or layers whose gradient is nearly 0.
# 6. **The update / parameter ratio.** `||update|| / ||parameter||` per step is about `1e-3` in
#    healthy training; near 1 the weights are rewritten every step, far below they hardly move.
#
# The second check, on a small healthy network and eight points:

# %%
X_sine, Y_sine = make_sine(n=200, seed=0)
xs, ys = dt.tensor(X_sine), dt.tensor(Y_sine)

dt.manual_seed(0)
small = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
opt = optim.Adam(small.parameters(), lr=0.05)
one_batch = []
for _ in range(300):
    opt.zero_grad()
    loss = F.mse_loss(small(xs[:8]), ys[:8])
    loss.backward()
    opt.step()
    one_batch.append(loss.item())
print(f"loss on 8 points: {one_batch[0]:.4f} at the start, {one_batch[-1]:.4f} after 300 steps")
assert one_batch[-1] < 0.01 * one_batch[0]          # it can learn: below 1% of where it started

# %% tags=["twin-torch"]
from dltutor.data import make_moons, make_sine

X_sine, Y_sine = make_sine(n=200, seed=0)
xs, ys = torch.from_numpy(X_sine), torch.from_numpy(Y_sine)

torch.manual_seed(0)
small = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(small.parameters(), lr=0.05)
one_batch = []
for _ in range(300):
    opt.zero_grad()
    loss = F.mse_loss(small(xs[:8]), ys[:8])
    loss.backward()
    opt.step()
    one_batch.append(loss.item())
print(f"loss on 8 points: {one_batch[0]:.4f} at the start; below 1% of that after 300 steps: "
      f"{one_batch[-1] < 0.01 * one_batch[0]}")

# %% [markdown] tags=["claim-torch-sgd-steps-with-nan-grad"]
# ### Exploding gradients in a deep network
#
# Now a network that does not train at all: six ReLU layers whose weights are drawn twice as
# large as Kaiming's rule says (chapter 03), classifying the two moons with SGD and momentum on
# the whole set at every step.
# A `Recorder` records, at every step, each layer's gradient norm, update norm and parameter
# norm (`by="layer"` adds up a layer's weight and bias; `log_loss` hands it the loss). The loop
# stops when the loss is no longer a number, as a training script should.
#
# `nonfinite="apply"` takes a step even when the gradient holds NaN or Inf, as PyTorch does, so
# that we watch the explosion (dltutor's default refuses that step: Going deeper, at the end of
# this section).

# %%
X_moons, y_moons = make_moons(n=256, noise=0.15, seed=0)
xm, ym = dt.tensor(X_moons), dt.tensor(y_moons)
STEPS = 300


def too_large_relu_net(seed=0, gain=2.0, depth=6, width=32):
    dt.manual_seed(seed)
    layers, fan_in = [], 2
    for _ in range(depth):
        layer = nn.Linear(fan_in, width)
        init.normal_(layer.weight, std=gain * np.sqrt(2 / fan_in))    # Kaiming's std, x gain
        init.zeros_(layer.bias)
        layers += [layer, nn.ReLU()]
        fan_in = width
    layers.append(nn.Linear(fan_in, 2))
    return nn.Sequential(*layers)


def train_deep(grad_clip=None, seed=0, nonfinite="apply"):
    model = too_large_relu_net(seed)
    opt = optim.SGD(model.named_parameters(), lr=0.05, momentum=0.9, grad_clip=grad_clip,
                    nonfinite=nonfinite)
    rec = Recorder(model, opt, by="layer")
    with np.errstate(all="ignore"):           # overflow is the point here: no warnings
        for _ in range(STEPS):
            opt.zero_grad()
            loss = F.cross_entropy(model(xm), ym)
            if not np.isfinite(loss.item()):
                break
            loss.backward()
            rec.log_loss(loss)
            opt.step()
    return model, rec


model_plain, rec_plain = train_deep()
loss_plain = rec_plain.series("loss")
print(rec_plain)
print(f"global gradient norm at the first step: {rec_plain.series('global_grad_norm')[0]:.3g}")
print(f"loss: {loss_plain[0]:.2f} at the start; {int(np.log10(loss_plain[-1] / loss_plain[0]))} "
      f"orders of magnitude larger {rec_plain.count - 1} steps later; then not a number")

# %% tags=["twin-torch"]
# PyTorch has no Recorder: clip_grad_norm_ with max_norm=inf clips nothing and returns the
# global gradient norm, which we log ourselves with the loss.
X_moons, y_moons = make_moons(n=256, noise=0.15, seed=0)
xm, ym = torch.from_numpy(X_moons), torch.from_numpy(y_moons)
STEPS = 300


def too_large_relu_net(seed=0, gain=2.0, depth=6, width=32):
    torch.manual_seed(seed)
    layers, fan_in = [], 2
    for _ in range(depth):
        layer = nn.Linear(fan_in, width)
        nn.init.normal_(layer.weight, std=gain * np.sqrt(2 / fan_in))   # Kaiming's std, x gain
        nn.init.zeros_(layer.bias)
        layers += [layer, nn.ReLU()]
        fan_in = width
    layers.append(nn.Linear(fan_in, 2))
    return nn.Sequential(*layers)


def train_deep(max_norm=float("inf"), seed=0):
    """Losses and global gradient norms (before clipping) until the loss is not a number."""
    model = too_large_relu_net(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, grad_norms = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(xm), ym)
        if not torch.isfinite(loss):
            break
        loss.backward()
        grad_norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm).item())
        losses.append(loss.item())
        opt.step()
    return model, np.array(losses), np.array(grad_norms)


model_plain, loss_plain, grad_plain = train_deep()
print(f"global gradient norm at the first step: {grad_plain[0]:.3g}")
print(f"loss: {loss_plain[0]:.2f} at the start; {int(np.log10(loss_plain[-1] / loss_plain[0]))} "
      f"orders of magnitude larger {len(loss_plain) - 1} steps later; then not a number")

# %%
fig, axes = plt.subplots(4, 1, figsize=(7.2, 11), layout="constrained")
axes = axes.reshape(2, 2)
plot.loss(rec_plain, ax=axes[0, 0], log=True)
plot.traces(rec_plain, "grad_norm", ax=axes[0, 1], log=True)
plot.update_ratio(rec_plain, ax=axes[1, 0])
plot.traces(rec_plain, "param_norm", ax=axes[1, 1], log=True)
plot.show()

# %% tags=["twin-torch"]
# The figure's numbers: loss and global gradient norm at each step before the blow-up, to two
# digits (growing this fast, the later digits differ from CPU to CPU).
with np.printoptions(precision=1):
    print("loss:          ", loss_plain)
    print("gradient norm: ", grad_plain)

# %% [markdown]
# What the traces say:
#
# * the **gradient norm** is in the hundreds from the very first step (a healthy network of this
#   size starts around 1): the signal doubled at each of six layers on the way forward, and the
#   gradient grows the same way on the way back;
# * the **update ratio** is about 1 at once, a thousand times the `1e-3` rule of thumb: every
#   step rewrites the weights;
# * so the **parameter norms** grow, which makes the next gradient larger still. Exploding
#   gradients feed on themselves: the **loss** grows by many orders of magnitude and after a
#   handful of steps it is `nan`.

# %% [markdown]
# ### The same network with global-norm clipping
#
# We hand `optim.ClipGradByGlobalNorm(1.0)` to the optimizer and train again from the same
# initial weights. No single step can now be longer than `lr x 1` (about ten times that with
# momentum 0.9).

# %%
model_clip, rec_clip = train_deep(grad_clip=optim.ClipGradByGlobalNorm(1.0))
clipped_global = np.sqrt(np.nansum(rec_clip.series("clipped_grad_norm") ** 2, axis=1))
print(rec_clip)
print(f"global norm before clipping at the first step {rec_clip.series('global_grad_norm')[0]:.3g}"
      f", after clipping at most {clipped_global.max():.4f}")

fig, axes = plt.subplots(3, 1, figsize=(7.2, 9.6), layout="constrained")
plot.loss(rec_plain, ax=axes[0], log=True)
axes[0].lines[-1].set(color="tab:red", label="no clipping (stopped)")
plot.loss(rec_clip, ax=axes[0], log=True)
axes[0].lines[-1].set(label="ClipGradByGlobalNorm(1.0)")
axes[0].legend(fontsize="small")
plot.grad_norm_clipping(rec_clip, ax=axes[1], log=True)
plot.update_ratio(rec_clip, names=["0", "6", "12"], ax=axes[2])
plot.show()

# %% tags=["twin-torch"]
# PyTorch's optimizer takes no grad_clip=: clip_grad_norm_(params, 1.0) goes between
# backward() and step() (train_deep above calls it with the max_norm we pass).
model_clip, loss_clip, grad_clip = train_deep(max_norm=1.0)
with torch.no_grad():
    accuracy = (model_clip(xm).argmax(dim=1) == ym).float().mean().item()
print(f"{len(loss_clip)} steps; global norm before clipping at the first step {grad_clip[0]:.3g}")
print(f"loss {loss_clip[0]:.2f} at the start; below 1% of that at the end: "
      f"{loss_clip[-10:].mean() < 0.01 * loss_clip[0]}; accuracy above 95%: {accuracy > 0.95}")

# %% [markdown]
# The gradient after clipping (dashed) never exceeds 1 while the gradient before it starts in
# the hundreds; as the network settles, its gradients fall below the threshold and clipping
# stops acting. The loss falls by orders of magnitude, the network learns the moons, and the
# hidden layers' update ratios stay below `1e-2`. Clipping treats the symptom: the cure here
# would be a sensible initialization (chapter 03; try `gain=1.0`). It is the safety net that
# keeps a rare bad batch from undoing the work of many good ones. (Your curves may part from the
# stored ones after a few dozen steps: another CPU rounds the last bits of each matrix product
# differently. The five-seed checks in Going deeper, below, hold on every machine.)

# %% [markdown]
# ### Going deeper: five seeds, noisier small batches, and the step dltutor refuses
#
# The runs above checked for five seeds, the batch size's noise measured, and what dltutor does with a NaN gradient by default.

# %% [markdown]
# **Five seeds.** The blow-up without clipping and the rescue with it are not luck of the seed:
# both are checked here for seeds 0 to 4.

# %%
def blows_up(rec):
    """Stopped by a non-finite loss within 10 steps, after steps as large as the weights."""
    losses = rec.series("loss")
    return (rec.count < 10 and losses[-1] > 1e6 * losses[0]
            and np.nanmax(rec.series("update_ratio")) > 0.5
            and rec.series("global_grad_norm")[0] > 50)


assert blows_up(rec_plain)
assert all(blows_up(train_deep(seed=seed)[1]) for seed in range(1, 5))   # not luck: 5 seeds

# %% tags=["twin-torch"]
def blows_up(losses, grad_norms):
    """Stopped by a non-finite loss within 10 steps, with a large first gradient."""
    return len(losses) < 10 and losses[-1] > 1e6 * losses[0] and grad_norms[0] > 50


print("blows up for seeds 0-4:", all(blows_up(*train_deep(seed=s)[1:]) for s in range(5)))

# %%
def clipping_rescues(model, rec):
    clipped = np.sqrt(np.nansum(rec.series("clipped_grad_norm") ** 2, axis=1))
    with dt.no_grad():
        accuracy = (model(xm).numpy().argmax(axis=1) == y_moons).mean()
    losses = rec.series("loss")
    return (rec.count == STEPS                                         # no blow-up
            and (clipped <= 1.0 + 1e-6).all()                         # never above the threshold
            and (rec.series("clip_scale")[:20] < 1).all()             # the first steps are cut
            and losses[-10:].mean() < 0.01 * losses[0]                # the loss falls far
            and accuracy > 0.95                                       # it learns the moons
            and np.nanmax(rec.series("update_ratio")[:, :-1]) < 1e-2)  # hidden layers: calm


assert clipping_rescues(model_clip, rec_clip)
assert all(clipping_rescues(*train_deep(optim.ClipGradByGlobalNorm(1.0), seed=seed))
           for seed in range(1, 5))

# %% tags=["twin-torch"]
def clipping_rescues(model, losses):
    with torch.no_grad():
        accuracy = (model(xm).argmax(dim=1) == ym).float().mean().item()
    return len(losses) == STEPS and losses[-10:].mean() < 0.05 * losses[0] and accuracy > 0.95


print("clipping rescues seeds 0-4:",
      all(clipping_rescues(*train_deep(max_norm=1.0, seed=s)[:2]) for s in range(5)))

# %% [markdown]
# **Smaller batches, noisier gradients.** The gradient of a batch is an average over its examples, so its spread
# from batch to batch shrinks like `1 / sqrt(batch size)`. Forty random batches of 8 and of 64
# from the 200 sine points, the spread of the first layer's weight gradient:

# %%
def gradient_spread(batch_size, draws=40):
    """Std, over random batches, of the first layer's weight gradient (averaged over weights)."""
    rng = np.random.default_rng(0)
    grads = []
    for _ in range(draws):
        rows = rng.choice(len(X_sine), batch_size, replace=False)
        small.zero_grad()
        F.mse_loss(small(xs[rows]), ys[rows]).backward()
        grads.append(small[0].weight.grad.numpy().ravel().copy())
    return float(np.std(grads, axis=0).mean())


spread = {b: gradient_spread(b) for b in (8, 64)}
print("batches of 8 spread more than twice as much as batches of 64:", spread[8] > 2 * spread[64])
assert spread[8] > 2 * spread[64]            # sqrt(64 / 8) = 2.8 expected
assert spread[8] < 5 * spread[64]

# %% tags=["twin-torch"]
def gradient_spread(batch_size, draws=40):
    """Std, over random batches, of the first layer's weight gradient (averaged over weights)."""
    rng = np.random.default_rng(0)
    grads = []
    for _ in range(draws):
        rows = torch.from_numpy(rng.choice(len(X_sine), batch_size, replace=False))
        small.zero_grad()
        F.mse_loss(small(xs[rows]), ys[rows]).backward()
        grads.append(small[0].weight.grad.flatten().clone())
    return torch.stack(grads).std(dim=0).mean().item()


spread = {b: gradient_spread(b) for b in (8, 64)}
print("batches of 8 spread more than twice as much as batches of 64:", spread[8] > 2 * spread[64])

# %% [markdown] tags=["claim-torch-sgd-steps-with-nan-grad", "claim-torch-clip-norm-nan-inf-spread", "claim-torch-gradscaler-skips-nonfinite-step", "claim-torch-nan-value-written-kept"]
# **What dltutor does by default: refuse the poisoned step.** In PyTorch one `nan` in one gradient goes straight into the weights (every optimizer but Rprop
# takes the step), and with global-norm clipping into *every* weight: the global norm is `nan`,
# and so is every scaled gradient. (One `inf` makes the global norm `inf` and the factor 0: that gradient
# becomes `nan`, every other one 0.) dltutor's optimizers look at the gradients before they
# change anything: with the default `nonfinite="raise"` the step raises
# `optim.NonFiniteGradientError`, naming the parameters, and leaves the model as the last good
# step left it. (`nonfinite="skip"` skips such steps silently and counts them in
# `opt.skipped_steps`; skipping is what PyTorch's mixed-precision `GradScaler.step()` does, and
# the `scaler.update()` after it halves the loss scale.) This is one place where dltutor refuses
# what PyTorch accepts.
#
# A NaN or an infinity you write into a weight yourself (`set_value`, `init.assign_`, a loaded
# checkpoint) is different: it is kept, as PyTorch keeps one you copy in, since a value is data
# and dltutor does not guess what you meant by it. What it guards is the step after it: the NaN
# makes the gradients NaN, and `step()` refuses them, naming the parameter (the last lines of
# the second cell below).

# %%
def train_until_refused(seed=0):
    """The same run with the default nonfinite="raise": the error, and the model as it was."""
    model = too_large_relu_net(seed)
    opt = optim.SGD(model.named_parameters(), lr=0.05, momentum=0.9)
    with np.errstate(all="ignore"):
        for _ in range(STEPS):
            opt.zero_grad()
            F.cross_entropy(model(xm), ym).backward()
            try:
                opt.step()
            except optim.NonFiniteGradientError as error:
                return model, error
    return model, None


model_refused, refusal = train_until_refused()
print(type(refusal).__name__, "after", refusal.step, "good steps, naming",
      len(refusal.names), "of", len(list(model_refused.parameters())), "parameters")


# %% tags=["twin-torch"]
# PyTorch's optimizers take the step whatever the gradients hold (the kit refuses a NaN or an
# Inf): check them yourself before step(), and stop.
def train_until_nonfinite(seed=0):
    model = too_large_relu_net(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(STEPS):
        opt.zero_grad()
        F.cross_entropy(model(xm), ym).backward()
        bad = [n for n, p in model.named_parameters() if not p.grad.isfinite().all()]
        if bad:
            return model, step, bad
        opt.step()
    return model, STEPS, []


model_stopped, good_steps, bad = train_until_nonfinite()
print("stopped after", good_steps, "good steps, naming", len(bad), "of",
      len(list(model_stopped.parameters())), "parameters")

# %%
def refused_cleanly(model, error):
    """The step was refused, and every weight is still a finite number."""
    return error is not None and all(np.isfinite(p.numpy()).all() for p in model.parameters())


assert refused_cleanly(model_refused, refusal)
assert all(refused_cleanly(*train_until_refused(seed)) for seed in range(1, 5))

# a NaN written by hand is kept; the step after it is refused, naming the parameter
w = nn.Parameter(dt.ones(2))
w.set_value(np.array([np.nan, 1.0], dtype=np.float32))     # kept, as written
opt_w = optim.SGD([("w", w)], lr=0.1)
(w * w).sum().backward()
try:
    opt_w.step()
except optim.NonFiniteGradientError as error:
    nan_refusal = error
print(w.numpy(), "|", type(nan_refusal).__name__, "naming", nan_refusal.names)
assert np.isnan(w.numpy()[0]) and w.numpy()[1] == 1.0 and nan_refusal.names == ["w"]

# %% tags=["twin-torch"]
# A NaN written by hand is kept, as in the kit; then PyTorch's step takes the NaN gradient.
w = nn.Parameter(torch.ones(2))
with torch.no_grad():
    w.copy_(torch.tensor([float("nan"), 1.0]))     # kept, as written
opt_w = torch.optim.SGD([w], lr=0.1)
(w * w).sum().backward()
print("gradient:", w.grad, "| finite:", bool(w.grad.isfinite().all()))
opt_w.step()
print("after the step:", w.detach())

# %% [markdown]
# ## Mixed precision: a loss scaler, and where clipping goes
#
# float16 halves the memory of an array and, on a GPU, multiplies matrices several times
# faster, but it holds only about three significant digits, up to 65504 and down to about 6e-8.
# Gradients are often smaller than that: computed in float16 they become exactly 0, and the
# weights stop learning without any error. So mixed precision keeps the parameters (the *master
# weights*) and their gradients in float32 and computes the layers in float16. Here that is done
# by hand: the activations and weights are cast with `.to(dt.float16)`, and the output back with
# `.float()` before the loss.
#
# The cure: multiply the loss by a large number S before `backward()` (every gradient is then S
# times larger, which lifts it into float16's range), and divide the gradients by S afterwards,
# in float32. (A loss made tiny on purpose shows both the trouble and the cure: Going deeper,
# below.)

# %% [markdown] tags=["claim-torch-gradscaler-unscale-before-clip"]
# `optim.GradScaler` does this every step, with PyTorch's semantics: `scaler.scale(loss)`
# multiplies the loss by the scale S (65536 to start); `scaler.step(opt)` divides the gradients
# by S, then calls `opt.step()`; `scaler.update()` adjusts S for the next step. **Clipping goes
# between `backward()` and `step()`, after `scaler.unscale_(opt)`**, which divides by S early:
# clipped before that, the clip sees gradients S times too large, cuts them by that much, and
# the step then divides by S once more. One clipped step both ways (S = 1024 here), beside the
# same step in float32:

# %%
def clipped_step(order, loss_scale=1024.0, seed=1):
    """One SGD step with clip_grad_norm_(max_norm=1); returns the norm the clip saw and the
    largest change of a weight. order: "unscale_, then clip", "clip first" or "float32"."""
    dt.manual_seed(seed)
    layer = nn.Linear(16, 1)
    x, y = dt.randn(8, 16), dt.randn(8, 1)
    before = layer.weight.numpy().copy()
    opt = optim.SGD(layer.parameters(), lr=0.1)
    if order == "float32":
        F.mse_loss(layer(x), y).backward()
        norm = optim.clip_grad_norm_(layer.parameters(), max_norm=1.0)
        opt.step()
    else:
        scaler = optim.GradScaler(init_scale=loss_scale)
        out = F.linear(x.to(dt.float16), layer.weight.to(dt.float16), layer.bias.to(dt.float16))
        scaler.scale(F.mse_loss(out.float(), y)).backward()
        if order == "unscale_, then clip":
            scaler.unscale_(opt)
        norm = optim.clip_grad_norm_(layer.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
    return norm.item(), np.abs(layer.weight.numpy() - before).max()


steps = {order: clipped_step(order) for order in ("float32", "unscale_, then clip", "clip first")}
for order, (norm, moved) in steps.items():
    print(f"{order:20s} the clip saw a norm of {norm:7.4g}; the largest weight moved {moved:.3g}")

for seed in range(1, 6):                        # the same on five more setups
    (norm32, moved32), (norm, moved), (norm_early, moved_early) = (
        clipped_step(order, seed=seed) for order in ("float32", "unscale_, then clip", "clip first"))
    assert abs(norm - norm32) < 1e-2 * norm32 and abs(moved - moved32) < 1e-2 * moved32
    assert abs(norm_early - 1024 * norm32) < 1e-2 * 1024 * norm32       # S times too large
    assert moved_early < 2 * moved32 / 1024                              # a step S times too small

# %% tags=["twin-torch"]
# torch.autocast chooses the float16 casts op by op (the kit casts by hand); GradScaler is
# torch.amp.GradScaler("cpu") here, "cuda" on a GPU.
def clipped_step(order, loss_scale=1024.0, seed=1):
    torch.manual_seed(seed)
    layer = nn.Linear(16, 1)
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    before = layer.weight.detach().clone()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=loss_scale, enabled=order != "float32")
    with torch.autocast("cpu", dtype=torch.float16, enabled=order != "float32"):
        loss = F.mse_loss(layer(x), y)
    scaler.scale(loss).backward()
    if order == "unscale_, then clip":
        scaler.unscale_(opt)
    norm = nn.utils.clip_grad_norm_(layer.parameters(), max_norm=1.0)
    scaler.step(opt)
    scaler.update()
    return norm.item(), (layer.weight - before).abs().max().item()


for order in ("float32", "unscale_, then clip", "clip first"):
    norm, moved = clipped_step(order)
    print(f"{order:20s} the clip saw a norm of {norm:7.4g}; the largest weight moved {moved:.3g}")

# %% [markdown] tags=["claim-torch-gradscaler-backoff-and-growth"]
# ### Going deeper: gradients that float16 loses, and how the loss scaler chooses its scale
#
# The loss scale at work on a tiny loss, how S backs off after an overflow and grows again, and what else `GradScaler` shares with PyTorch's.

# %% [markdown]
# **Gradients that float16 loses.** A loss made tiny on purpose (times 1e-8): computed in a
# float16 layer its gradient becomes exactly 0, and the loss scale brings it back.

# %%
TINY = 1e-8


def weight_gradient(dtype, seed=0, loss_scale=1.0):
    """The gradient of a Linear(16, 1) layer's weight for a tiny loss, computed in `dtype`
    (float16: mixed precision), with the loss multiplied by `loss_scale` and the gradient
    divided by it again."""
    dt.manual_seed(seed)
    layer = nn.Linear(16, 1)                     # float32 master weights
    x, y = dt.randn(8, 16), dt.randn(8, 1)
    out = F.linear(x.to(dtype), layer.weight.to(dtype), layer.bias.to(dtype))
    loss = TINY * F.mse_loss(out.float(), y)     # the loss in float32
    (loss * loss_scale).backward()
    return layer.weight.grad.numpy() / loss_scale


def first_four(gradient):
    return (gradient[0, :4] / 1e-9).round(3)      # in units of 1e-9


print("in units of 1e-9:")
print("float32 throughout:       ", first_four(weight_gradient(dt.float32)))
print("float16 layer:            ", first_four(weight_gradient(dt.float16)))
print("float16, loss times 65536:", first_four(weight_gradient(dt.float16, loss_scale=65536.0)))

# %% tags=["twin-torch"]
TINY = 1e-8


def weight_gradient(dtype, seed=0, loss_scale=1.0):
    """The weight's gradient for a tiny loss, the layer computed in `dtype` under autocast."""
    torch.manual_seed(seed)
    layer = nn.Linear(16, 1)                     # float32 master weights
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    with torch.autocast("cpu", dtype=torch.float16, enabled=dtype == torch.float16):
        out = layer(x)                           # float16 under autocast
    loss = TINY * F.mse_loss(out.float(), y)     # the loss in float32
    (loss * loss_scale).backward()
    return layer.weight.grad.numpy() / loss_scale


def first_four(gradient):
    return (gradient[0, :4] / 1e-9).round(3)      # in units of 1e-9


print("in units of 1e-9:")
print("float32 throughout:       ", first_four(weight_gradient(torch.float32)))
print("float16 layer:            ", first_four(weight_gradient(torch.float16)))
print("float16, loss times 65536:", first_four(weight_gradient(torch.float16, loss_scale=65536.0)))

# %%
for seed in range(5):                            # every seed: all lost, then all recovered
    exact = weight_gradient(dt.float32, seed)
    assert (weight_gradient(dt.float16, seed) == 0).all()
    scaled = weight_gradient(dt.float16, seed, loss_scale=65536.0)
    assert np.abs(scaled - exact).max() < 1e-2 * np.abs(exact).max()

# %% [markdown] tags=["claim-torch-gradscaler-backoff-and-growth", "claim-torch-gradscaler-unscale-twice-raises", "claim-torch-gradscaler-refuses-fp16-grads", "claim-torch-gradscaler-state-dict-keys", "claim-torch-autocast-half-linear-float-loss"]
# **How S chooses itself.** Too large a scale overflows instead: some gradient passes 65504 in
# the float16 backward pass and becomes inf. Then `scaler.step` skips `opt.step()` (the weights
# stay as they were) and `scaler.update()` halves S; after `growth_interval` clean steps in a
# row (2000 by default, 3 below) it doubles S again. Started far too high, at 2^24, S falls
# until the backward pass fits, then keeps trying one step higher: it stays near the largest
# scale that does not overflow. The rest is as in PyTorch too: `unscale_` may be called once
# per step (a second call raises, and so does a second `step`), a float16 *parameter* is
# refused (keep the master weights in float32), and `scaler.state_dict()` holds S and its
# counter for a checkpoint.
#
# Where this differs from mixed precision on a GPU: there is no autocast here (you choose where
# to cast), and NumPy computes float16 on the CPU without special hardware, so here it saves no
# time. What it shows are the numerics, which are the same. PyTorch's `torch.autocast` makes the
# same choice of casts op by op: inside `torch.autocast("cpu", dtype=torch.float16)` a Linear's
# output is float16, `mse_loss`'s is float32, and the weight's gradient float32, as in the cells
# above.

# %%
def scale_history(seed=0, iterations=30):
    """S after each update, and whether each step was taken, from S = 2^24."""
    dt.manual_seed(seed)
    layer = nn.Linear(16, 1)
    x, y = dt.randn(8, 16), dt.randn(8, 1)
    opt = optim.SGD(layer.parameters(), lr=0.01)
    scaler = optim.GradScaler(init_scale=2.0 ** 24, growth_interval=3)
    scales, taken = [], []
    for _ in range(iterations):
        opt.zero_grad()
        out = F.linear(x.to(dt.float16), layer.weight.to(dt.float16), layer.bias.to(dt.float16))
        scaler.scale(F.mse_loss(out.float(), y)).backward()
        steps_before = opt.step_count
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        taken.append(opt.step_count > steps_before)
    return np.log2(scales), np.array(taken)


log_scale, taken = scale_history()
used = np.concatenate([[24.0], log_scale[:-1]])      # the scale each iteration ran with
fig, ax = plt.subplots(figsize=(8, 3))
ax.step(np.arange(len(used)), used, where="post", label="log2 of the scale S it ran with")
ax.plot(np.flatnonzero(~taken), used[~taken], "rx", label="overflow: step skipped, S halved")
ax.set_xlabel("iteration")
ax.set_ylabel("log2 S")
ax.legend()
plot.show()
print("log2 S after each update:", log_scale.astype(int).tolist())

# %% tags=["twin-torch"]
def scale_history(seed=0, iterations=30):
    """log2 of S after each update, from S = 2^24 (growth_interval 3, as in the kit's cell)."""
    torch.manual_seed(seed)
    layer = nn.Linear(16, 1)
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    opt = torch.optim.SGD(layer.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=3)
    scales = []
    for _ in range(iterations):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = F.mse_loss(layer(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(int(np.log2(scaler.get_scale())))
    return scales


print("log2 S after each update:", scale_history())

# %%
for seed in range(5):
    log_scale, taken = scale_history(seed)
    previous = np.concatenate([[24.0], log_scale[:-1]])
    assert (log_scale[~taken] == previous[~taken] - 1).all()    # a skipped step halves S
    assert not taken[0] and taken.any()                          # 2^24 overflows; S comes down
    clean_run = 0
    for s, before, ok in zip(log_scale, previous, taken):        # 3 clean steps double it
        clean_run = clean_run + 1 if ok else 0
        assert s == (before + 1 if clean_run == 3 else before - (not ok))
        clean_run %= 3

# %% [markdown] tags=["claim-torch-names-09", "claim-paddle-names-09", "claim-mge-names-09", "claim-torch-detect-anomaly-nan-backward-only", "claim-torch-isfinite-hook-catches-inf", "claim-paddle-check-nan-inf-forward-backward", "claim-paddle-clip-grad-in-place"]
# ## What the frameworks call it
#
# | idea | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | clip values (function) | `optim.clip_grad_value_(params, v)` | `torch.nn.utils.clip_grad_value_(params, v)` | `paddle.nn.utils.clip_grad_value_(params, v)` | `megengine.optimizer.clip_grad_value(params, lower, upper)` |
# | clip the global norm (function) | `optim.clip_grad_norm_(params, max_norm)` | `torch.nn.utils.clip_grad_norm_(params, max_norm)` | `paddle.nn.utils.clip_grad_norm_(params, max_norm)` | `megengine.optimizer.clip_grad_norm(params, max_norm)` |
# | clip values (in the optimizer) | `SGD(..., grad_clip=optim.ClipGradByValue(max))` | — | `SGD(..., grad_clip=paddle.nn.ClipGradByValue(max))` | — |
# | clip each tensor's norm | `grad_clip=optim.ClipGradByNorm(clip_norm)` | — (`clip_grad_norm_` per parameter) | `grad_clip=paddle.nn.ClipGradByNorm(clip_norm)` | — |
# | clip the global norm (in the optimizer) | `grad_clip=optim.ClipGradByGlobalNorm(clip_norm)` | — | `grad_clip=paddle.nn.ClipGradByGlobalNorm(clip_norm)` | — |
# | keep a parameter out of clipping | `p.need_clip = False` | — (do not pass it) | `ParamAttr(need_clip=False)` | — (do not pass it) |
# | find the op that made a NaN | `with dt.detect_anomaly():` | `with torch.autograd.detect_anomaly():` (NaN in the backward pass only, see below) | `paddle.set_flags({"FLAGS_check_nan_inf": 1})` | — |
# | stable log of a softmax | `F.log_softmax`, `F.cross_entropy` | `F.log_softmax`, `F.cross_entropy` | `F.log_softmax`, `F.cross_entropy` | `F.logsoftmax`, `F.nn.cross_entropy` |
# | scale the loss for float16 | `optim.GradScaler()` | `torch.amp.GradScaler()` | `paddle.amp.GradScaler()` | `megengine.amp.GradScaler()`, `scaler.backward(gm, loss)` (starts at 16) |
# | record training traces | `dltutor.trace.Recorder(model, opt)` | — (hooks, TensorBoard) | — (VisualDL) | — |
#
# `torch.autograd.detect_anomaly()` checks less than the other two: PyTorch 2.13 raises only when
# a backward function returns NaN, so an Inf passes silently. To catch one in PyTorch, test
# `torch.isfinite(t).all()` yourself, on outputs and, in a hook (`t.register_hook(fn)`), on
# gradients. Paddle's flag checks every op's output for NaN and Inf.
#
# ## Summary
#
# **In two lines:** clipping limits how far one step can go, and global-norm clipping does it
# without turning the gradient. A NaN or an overflow has one first op, which the kit's tools name
# before it spreads.
#
# * Clip after `backward()` and before `step()` with `clip_grad_value_` / `clip_grad_norm_`
#   (they change `.grad`), or hand `ClipGradByValue` / `ClipGradByNorm` / `ClipGradByGlobalNorm`
#   to the optimizer as `grad_clip=` (it clips its own copy: `.grad` stays, while Paddle's
#   `ClipGradByGlobalNorm` scales `.grad` in place).
# * Global-norm clipping scales all gradients by one factor and keeps their direction;
#   per-tensor clipping changes the tensors' relative sizes; value clipping changes directions
#   even within a tensor. `need_clip=False` keeps a parameter out of the clip objects.
# * A NaN starts at one op with finite inputs. `dt.detect_anomaly()` names it (a log of 0: use
#   `log_softmax` / `cross_entropy`); when that op is only a victim, the traces show the cause.
# * When training does not converge, check the data, overfit one batch, then look at the
#   learning rate, the initialization, the gradient norms and the update ratio.
# * Mixed precision computes in float16 but keeps float32 master weights; a loss scaler
#   (`optim.GradScaler`) keeps small gradients from turning into 0. Clip after
#   `scaler.unscale_(opt)`.
#
# ## Exercises
#
# Each exercise has a cell for your answer: replace `____` with it, run the cell, and the last
# line checks it. `ex.q1.hint()` gives a hint (call it again for the next), `ex.q1.solution()`
# shows an answer, and `exercises.progress()` lists how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("09")

# %% [markdown] tags=["claim-torch-clip-per-tensor-loop"]
# **1.** `by_tensor_norm` was clipped PyTorch's way, one `clip_grad_norm_` per parameter. Make
# the clip object that does the same inside an optimizer (`tensor_clip`).

# %%
tensor_clip = ____
ex.q1.check()

# %% [markdown]
# **2.** Predict: what is `clip.last_scale` after `optim.ClipGradByGlobalNorm(2.0)` clips the
# original gradients, and after `optim.ClipGradByGlobalNorm(0.5)`? Work both out from the global
# norm printed at the top, put them in `predicted_scales` as a pair (2.0's first), then check
# them by running the two clips.

# %%
predicted_scales = ____
ex.q2.check()

# %% [markdown]
# **3.** Keep the last layer of `net` out of clipping (`need_clip = False` for `"4.weight"` and
# `"4.bias"`), clip the original gradients with `ClipGradByGlobalNorm(1.0)`, and put its
# `last_total_norm` in `norm_without_last`. Which layers does it count? (Set `need_clip` back
# to `True` afterwards.)

# %%
norm_without_last = ____
ex.q3.check()

# %% [markdown] tags=["claim-torch-detect-anomaly-misses-sqrt0", "claim-torch-isfinite-hook-catches-inf"]
# **4.** `v = dt.tensor([0.0, 4.0], requires_grad=True)`, then `dt.sqrt(v).sum().backward()`
# inside `dt.detect_anomaly()`. Which op does the anomaly check name first (`bad_op`), and in
# which pass, `"forward"` or `"backward"` (`bad_pass`)? Predict, then run it. (The same lines
# in PyTorch 2.13, `torch.sqrt` inside `torch.autograd.detect_anomaly()`, raise nothing: no op
# here produces a NaN, and PyTorch checks only for NaN returned by a backward function. There a
# hook such as `v.register_hook(fn)` whose `fn` tests `torch.isfinite(grad).all()` finds it.)

# %%
bad_op = ____
bad_pass = ____
ex.q4.check()

# %% [markdown]
# **5.** Which of `net`'s parameters does `ClipGradByNorm(0.5)` shrink? List their names in
# `shrunk`, using the clip's `predict_scales` rather than clipping.

# %%
shrunk = ____
ex.q5.check()

# %% [markdown]
# **6.** Write `clip_global_norm(params, max_norm)` yourself, with NumPy on each `p.grad`: it
# must do what `optim.clip_grad_norm_(params, max_norm)` does (scale every gradient by one
# factor when their global norm is above `max_norm`, leave parameters without a gradient alone,
# and return the global norm measured before clipping). The check compares it with
# `clip_grad_norm_` on gradients of its own.

# %%
clip_global_norm = ____
ex.q6.check()
