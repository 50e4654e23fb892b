"""Chapter 06's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch06.py)."""
from __future__ import annotations

import numpy as np

from dltutor import optim
from dltutor.examples import make_loader, make_net
from dltutor.nn import functional as F

PADDLE_WEIGHTS = {"conv2d_0.w_0", "conv2d_1.w_0", "linear_0.w_0", "linear_1.w_0"}


def conv1_after_one_step(lr_mult):
    """(largest change of conv1.weight, norm of its gradient) after one SGD step at lr 0.05 on
    a fresh LeNet and the first batch, with conv1.weight's lr_mult set to ``lr_mult``."""
    net = make_net()
    net.conv1.weight.lr_mult = lr_mult
    opt = optim.SGD(net.named_parameters(), lr=0.05)
    before = net.conv1.weight.numpy().copy()
    xb, yb = next(iter(make_loader()))
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
    grad = net.conv1.weight.grad.numpy()
    return float(np.abs(before - net.conv1.weight.numpy()).max()), float(np.linalg.norm(grad))


MOVED, GRAD_NORM = conv1_after_one_step(0.0)
PLAIN_MOVE, _ = conv1_after_one_step(1.0)


def fc2_optimizer(fc2_lr, other_lr, leave_out=()):
    """An SGD over a fresh LeNet: fc2 at ``fc2_lr``, the rest at ``other_lr``."""
    net = make_net()
    fc2 = {id(p) for p in net.fc2.parameters()}
    rest = [(n, p) for n, p in net.named_parameters() if id(p) not in fc2 and n not in leave_out]
    return optim.SGD([{"params": rest, "lr": other_lr},
                      {"params": net.fc2.named_parameters(prefix="fc2"), "lr": fc2_lr}], lr=0.05)


def decay_groups(model, weight_decay):
    named = list(model.named_parameters())
    return [{"params": [(n, p) for n, p in named if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [(n, p) for n, p in named if p.ndim < 2], "weight_decay": 0.0}]


def decay_groups_by_name(model, weight_decay):
    """Spares the biases only: a LayerNorm or BatchNorm weight still decays."""
    named = list(model.named_parameters())
    return [{"params": [(n, p) for n, p in named if not n.endswith("bias")],
             "weight_decay": weight_decay},
            {"params": [(n, p) for n, p in named if n.endswith("bias")], "weight_decay": 0.0}]


def decay_groups_without_the_rest(model, weight_decay):
    return [{"params": [p for p in model.parameters() if p.ndim >= 2],
             "weight_decay": weight_decay}]


CASES = {
    "06.1": ({"moved": MOVED, "grad_norm": GRAD_NORM},
             [({"moved": PLAIN_MOVE, "grad_norm": GRAD_NORM}, ["lr_mult 1"]),
              ({"moved": 0.01, "grad_norm": GRAD_NORM}, ["does not move"]),
              ({"moved": 0.0, "grad_norm": 0.0}, ["still computes"]),
              ({"moved": 0.0, "grad_norm": 2 * GRAD_NORM}, ["twice"]),
              ({"moved": 0.0, "grad_norm": 1.0}, ["np.linalg.norm"]),
              ({"moved": False, "grad_norm": True}, ["two numbers"])]),
    "06.2": ({"decay_names": PADDLE_WEIGHTS},
             [({"decay_names": {"conv1.weight", "conv2.weight", "fc1.weight", "fc2.weight"}},
               ["generated names"]),
              ({"decay_names": PADDLE_WEIGHTS | {"linear_1.b_0"}}, ["bias names"]),
              ({"decay_names": {"linear_0.w_0"}}, ["missing"])]),
    "06.3": ({"fc2_opt": fc2_optimizer(0.001, 0.05)},
             [({"fc2_opt": fc2_optimizer(0.05, 0.001)}, ["swapped"]),
              ({"fc2_opt": fc2_optimizer(0.001, 0.05, leave_out=("conv1.bias",))},
               ["all eight"]),
              ({"fc2_opt": fc2_optimizer(0.01, 0.05)}, ["fc2.weight and fc2.bias"])]),
    "06.4": ({"decay_groups": decay_groups},
             [({"decay_groups": decay_groups_by_name}, ["1.weight", "every 1-D parameter"]),
              ({"decay_groups": decay_groups_without_the_rest}, ["in no group"]),
              ({"decay_groups": lambda model, wd: {"params": model.parameters()}},
               ["should get 0.01"]),
              ({"decay_groups": "p.ndim < 2"}, ["function"])]),
}

SELF_CONTAINED = {"06.4"}
