"""Cross-check dltutor against PyTorch on identical inputs (a developer tool, not a test).

The kit and its tests never need PyTorch. To run this, make a separate environment:

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch numpy scipy safetensors
    PYTHONPATH=. /tmp/torchenv/bin/python tools/crosscheck_pytorch.py

Every line should start with OK.
"""
import math

import numpy as np
import torch

import dltutor as dt
from dltutor import nn, optim
from dltutor.nn import functional as F


rng = np.random.default_rng(0)
def close(name, a, b, tol=1e-5):
    a, b = np.asarray(a), np.asarray(b)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)
    print(f"{'OK ' if ok else 'BAD'} {name}" + ("" if ok else f"\n   dltutor {a.ravel()[:5]} {a.shape}\n   torch   {b.ravel()[:5]} {b.shape}"))

def both(fn_dt, fn_t, *arrays, name):
    td = [dt.tensor(a, requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    od, ot = fn_dt(*td), fn_t(*tt)
    close(name + " fwd", od.numpy(), ot.detach().numpy())
    u = rng.standard_normal(ot.shape)
    od.backward(dt.tensor(u)); ot.backward(torch.tensor(u))
    for i, (a, b) in enumerate(zip(td, tt)):
        close(f"{name} grad{i}", a.grad.numpy(), b.grad.numpy())

x = rng.standard_normal((4, 5))
both(lambda a: dt.var(a, axis=1), lambda a: a.var(1), x, name="var")
both(lambda a: dt.max(a), lambda a: a.max(), np.array([3.0, 1.0, 3.0]), name="max ties")
both(lambda a, b: dt.maximum(a, b), torch.maximum, np.array([1.0, 2.0]), np.array([1.0, 0.0]), name="maximum ties")
both(lambda a: dt.clip(a, -0.5, 0.5), lambda a: a.clamp(-0.5, 0.5), np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), name="clamp at bounds")
both(lambda a: dt.gelu(a), torch.nn.functional.gelu, x, name="gelu")
both(lambda a: dt.gelu(a, "tanh"), lambda a: torch.nn.functional.gelu(a, approximate="tanh"), x, name="gelu tanh")
both(lambda a: F.cross_entropy(a, dt.tensor([0, 4, -100, 2])), lambda a: torch.nn.functional.cross_entropy(a, torch.tensor([0, 4, -100, 2])), x, name="cross_entropy ignore")
both(lambda a: F.log_softmax(a, 0), lambda a: torch.log_softmax(a, 0), x, name="log_softmax")
both(lambda a: dt.logsumexp(a, 1), lambda a: torch.logsumexp(a, 1), x, name="logsumexp")
img = rng.standard_normal((2, 3, 7, 6)); w = rng.standard_normal((4, 3, 3, 2)); b = rng.standard_normal(4)
both(lambda a, ww, bb: F.conv2d(a, ww, bb, stride=2, padding=1), lambda a, ww, bb: torch.nn.functional.conv2d(a, ww, bb, stride=2, padding=1), img, w, b, name="conv2d")
both(lambda a: F.max_pool2d(a, 3, 2, 1), lambda a: torch.nn.functional.max_pool2d(a, 3, 2, 1), img, name="maxpool pad")
both(lambda a: F.avg_pool2d(a, 3, 2, 1), lambda a: torch.nn.functional.avg_pool2d(a, 3, 2, 1), img, name="avgpool pad")
both(lambda a: F.layer_norm(a, (5,)), lambda a: torch.nn.functional.layer_norm(a, (5,)), x, name="layer_norm")
both(lambda a, t: F.mse_loss(a, t), torch.nn.functional.mse_loss, x, rng.standard_normal((4,5)), name="mse")
both(lambda a: a[[0, 0, 2], 1:], lambda a: a[[0, 0, 2], 1:], x, name="index repeats")
both(lambda a, bb: a @ bb, torch.matmul, rng.standard_normal(3), rng.standard_normal((2, 3, 4)), name="matmul 1d")
both(lambda a, bb: a @ bb, torch.matmul, rng.standard_normal((2,1,3,4)), rng.standard_normal((5,4,2)), name="matmul batch bcast")
both(lambda a: a.std(0), lambda a: a.std(0), x, name="std")
both(lambda a: dt.sigmoid(a)*dt.tanh(a) / (dt.abs(a)+1), lambda a: torch.sigmoid(a)*torch.tanh(a)/(a.abs()+1), x, name="composite")

# batchnorm training + running stats + eval
bd, bt = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).double()
bd.running_mean.data = bd.running_mean.data.astype(np.float64); bd.running_var.data = bd.running_var.data.astype(np.float64)
bd.weight.data = np.linspace(0.5, 2, 3); bd.bias.data = np.linspace(-1, 1, 3)
with torch.no_grad(): bt.weight.copy_(torch.tensor(bd.weight.data)); bt.bias.copy_(torch.tensor(bd.bias.data))
both(lambda a: bd(a), lambda a: bt(a), img, name="batchnorm2d train")
close("bn running_mean", bd.running_mean.numpy(), bt.running_mean.numpy())
close("bn running_var", bd.running_var.numpy(), bt.running_var.numpy())
bd.eval(); bt.eval()
both(lambda a: bd(a), lambda a: bt(a), img, name="batchnorm2d eval")
print("state_dict keys", list(bd.state_dict()) == list(bt.state_dict()))

# init formulas
for nl, p in [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("selu", None), ("sigmoid", None), ("linear", None), ("conv2d", None)]:
    close(f"gain {nl}", nn.init.calculate_gain(nl, p), torch.nn.init.calculate_gain(nl, p))
# Linear default bounds
lt = torch.nn.Linear(400, 300); ld = nn.Linear(400, 300)
print("linear weight max", float(lt.weight.abs().max()), float(ld.weight.abs().max()))
print("linear bias max", float(lt.bias.abs().max()), float(ld.bias.abs().max()))
ct = torch.nn.Conv2d(3, 16, 5); cd = nn.Conv2d(3, 16, 5)
print("conv weight std", float(ct.weight.std()), float(cd.weight.std()))
et, ed = torch.nn.Embedding(1000, 50), nn.Embedding(1000, 50)
print("embedding std", float(et.weight.std()), float(ed.weight.std()))
# Embedding from_pretrained freeze
print("from_pretrained freeze", torch.nn.Embedding.from_pretrained(torch.eye(3)).weight.requires_grad, nn.Embedding.from_pretrained(np.eye(3, dtype=np.float32)).weight.requires_grad)
# dtype defaults
print("dtypes", torch.tensor([1.0]).dtype, dt.tensor([1.0]).dtype, (torch.tensor([1,2])*0.5).dtype, (dt.tensor([1,2])*0.5).dtype, (torch.tensor([1,2])/2).dtype, (dt.tensor([1,2])/2).dtype)
print("named_modules root", [n for n, _ in torch.nn.Sequential(torch.nn.Linear(1,1)).named_modules()], [n for n, _ in nn.Sequential(nn.Linear(1,1)).named_modules()])
# tied state dict
sh = torch.nn.Linear(2,2); tn = torch.nn.Sequential(sh, torch.nn.ReLU(), sh)
shd = nn.Linear(2,2); dn = nn.Sequential(shd, nn.ReLU(), shd)
print("tied sd keys", list(tn.state_dict()), list(dn.state_dict()))
print("tied params", [n for n,_ in tn.named_parameters()], [n for n,_ in dn.named_parameters()])


# --- optimizers and clipping ---
rng = np.random.default_rng(0)
start = rng.standard_normal((3, 4)); grads = [rng.standard_normal((3, 4)) for _ in range(6)]
def ours(make):
    p = nn.Parameter(start.copy()); o = make([p])
    for g in grads: p.grad = dt.tensor(g); o.step()
    return p.numpy()
def theirs(make):
    p = torch.nn.Parameter(torch.tensor(start.copy())); o = make([p])
    for g in grads: p.grad = torch.tensor(g); o.step()
    return p.detach().numpy()
cases = {
 "sgd": (lambda ps: optim.SGD(ps, lr=0.1), lambda ps: torch.optim.SGD(ps, lr=0.1)),
 "sgd mom damp wd": (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01), lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)),
 "sgd nesterov max": (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.8, nesterov=True, maximize=True, weight_decay=0.1), lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.8, nesterov=True, maximize=True, weight_decay=0.1)),
 "adam": (lambda ps: optim.Adam(ps, lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01)),
 "adam wd ams max": (lambda ps: optim.Adam(ps, lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True, betas=(0.8, 0.95), eps=1e-4), lambda ps: torch.optim.Adam(ps, lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True, betas=(0.8, 0.95), eps=1e-4)),
 "adamw": (lambda ps: optim.AdamW(ps, lr=0.05, weight_decay=0.3), lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.3)),
 "adamw ams": (lambda ps: optim.AdamW(ps, lr=0.05, amsgrad=True), lambda ps: torch.optim.AdamW(ps, lr=0.05, amsgrad=True)),
 "rmsprop": (lambda ps: optim.RMSprop(ps, lr=0.01), lambda ps: torch.optim.RMSprop(ps, lr=0.01)),
 "rmsprop centered mom wd": (lambda ps: optim.RMSprop(ps, lr=0.01, alpha=0.9, centered=True, momentum=0.7, weight_decay=0.05), lambda ps: torch.optim.RMSprop(ps, lr=0.01, alpha=0.9, centered=True, momentum=0.7, weight_decay=0.05)),
 "adagrad": (lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1, initial_accumulator_value=0.3, weight_decay=0.02), lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.1, initial_accumulator_value=0.3, weight_decay=0.02)),
}
for name, (a, b) in cases.items():
    x, y = ours(a), theirs(b)
    print(("OK " if np.allclose(x, y, rtol=1e-12, atol=1e-14) else "BAD"), name, np.abs(x - y).max())
# clip_grad_norm_
for nt in (2.0, 1.0, 3.0, math.inf):
    gs = [rng.standard_normal(5) * 3 for _ in range(3)]
    ps = [nn.Parameter(np.zeros(5)) for _ in gs]; ts = [torch.nn.Parameter(torch.zeros(5, dtype=torch.float64)) for _ in gs]
    for p, t, g in zip(ps, ts, gs): p.grad = dt.tensor(g); t.grad = torch.tensor(g)
    a = optim.clip_grad_norm_(ps, 2.0, norm_type=nt).item(); b = torch.nn.utils.clip_grad_norm_(ts, 2.0, norm_type=nt).item()
    ok = abs(a - b) < 1e-12 * abs(b) and all(np.allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12) for p, t in zip(ps, ts))
    print(("OK " if ok else "BAD"), "clip_grad_norm_", nt, a, b)
gs = [rng.standard_normal(5) * 3]
p = nn.Parameter(np.zeros(5)); t = torch.nn.Parameter(torch.zeros(5, dtype=torch.float64)); p.grad = dt.tensor(gs[0]); t.grad = torch.tensor(gs[0])
optim.clip_grad_value_([p], 1.5); torch.nn.utils.clip_grad_value_([t], 1.5)
print(("OK " if np.allclose(p.grad.numpy(), t.grad.numpy()) else "BAD"), "clip_grad_value_")

# --- issue 15: what learners bring from PyTorch ---
x5 = rng.standard_normal((4, 5))   # (x above was reused by the optimizer checks)
xt = np.array([[2.0, 2.0, 1.0], [0.5, 3.0, 3.0]])                   # ties on purpose
both(lambda a: a.max(dim=1).values, lambda a: a.max(dim=1).values, xt, name="max(dim) values, ties")
both(lambda a: a.min(0, keepdim=True).values, lambda a: a.min(0, keepdim=True).values, xt, name="min(dim, keepdim)")
print(("OK " if dt.tensor(xt).max(1).indices.tolist() == torch.tensor(xt).max(1).indices.tolist() else "BAD"), "max(dim) indices with ties")
both(lambda a: a.amax(dim=(0, 1)), lambda a: a.amax(dim=(0, 1)), xt, name="amax ties")
both(lambda a, b: dt.max(a, b), torch.max, x5, rng.standard_normal((4, 5)), name="max(a, b)")
for p in (2, 1, 3, math.inf, "fro"):
    both(lambda a: a.norm(p=p, dim=1), lambda a: a.norm(p=p, dim=1), x5, name=f"norm p={p}")
both(lambda a: a.norm(), lambda a: a.norm(), np.zeros(3), name="norm of zeros")
both(lambda a: F.softmax(a, dim=0), lambda a: torch.softmax(a, dim=0), x5, name="softmax dim=0")
both(lambda a: F.flatten(a, 1), lambda a: torch.flatten(a, 1), img, name="flatten")
labels = np.array([0, 4, 2, 1])
for red in ("mean", "sum", "none"):
    both(lambda a: nn.CrossEntropyLoss(reduction=red)(a, dt.tensor(labels)), lambda a: torch.nn.CrossEntropyLoss(reduction=red)(a, torch.tensor(labels)), x5, name=f"CrossEntropyLoss {red}")
target = rng.standard_normal((4, 5))
both(lambda a: nn.L1Loss()(a, dt.tensor(target)), lambda a: torch.nn.L1Loss()(a, torch.tensor(target)), x5, name="L1Loss")
both(lambda a: nn.BCEWithLogitsLoss()(a, dt.tensor((target > 0) * 1.0)), lambda a: torch.nn.BCEWithLogitsLoss()(a, torch.tensor((target > 0) * 1.0)), x5 * 30, name="BCEWithLogitsLoss large logits")
# lazy layers: shapes and default bounds after the first forward
lazy_t = torch.nn.Sequential(torch.nn.LazyLinear(8), torch.nn.ReLU(), torch.nn.LazyLinear(1)); lazy_t(torch.rand(2, 20))
lazy_d = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1)); lazy_d(dt.rand(2, 20))
print(("OK " if [tuple(p.shape) for p in lazy_t.parameters()] == [p.shape for p in lazy_d.parameters()] else "BAD"), "LazyLinear shapes", [tuple(p.shape) for p in lazy_d.parameters()])
print("LazyLinear repr after forward", repr(lazy_t[0]) == repr(lazy_d[0]), repr(lazy_d[0]))
print("lazy repr before", repr(torch.nn.LazyLinear(3)) == repr(nn.LazyLinear(3)), repr(nn.LazyLinear(3)))
# StepLR with a whole float step size
to = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0); ts = torch.optim.lr_scheduler.StepLR(to, step_size=4.0, gamma=0.5)
do = optim.SGD([nn.Parameter([0.0])], lr=1.0); ds = optim.lr_scheduler.StepLR(do, step_size=4.0, gamma=0.5)
seq_t, seq_d = [], []
for _ in range(10):
    seq_t.append(to.param_groups[0]["lr"]); seq_d.append(do.param_groups[0]["lr"]); to.step(); ts.step(); do.step(); ds.step()
print(("OK " if seq_t == seq_d else "BAD"), "StepLR(step_size=4.0)", seq_d)
print("t.type()", torch.tensor([1, 2]).type(), dt.tensor([1, 2]).type(), "(dltutor names the dtype)")
# chapter 01's claim: PyTorch refuses a float64 input to a float32 layer (dltutor computes in float64)
try:
    torch.nn.Linear(3, 2)(torch.zeros(1, 3, dtype=torch.float64))
    print("BAD PyTorch accepted a float64 input to a float32 Linear")
except RuntimeError as err:
    print("OK  PyTorch refuses float64 input to a float32 Linear:", str(err).splitlines()[0])
