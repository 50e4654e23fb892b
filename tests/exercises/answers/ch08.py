"""Chapter 08's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch08.py)."""
from __future__ import annotations

import dltutor as dt
from dltutor import nn
from dltutor.nn import functional as F


def chapter_gradients():
    """net[0].weight.grad after one train_step of the chapter (make_net() on x, y): the first
    with lr_mult = 0, the second after 5 steps (what net2 of the chapter holds), a wrong one."""
    dt.manual_seed(1)
    x, y = dt.randn(32, 3), dt.randn(32, 1)
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    for p in net[0].parameters():
        p.lr_mult = 0.0
    opt = dt.optim.SGD(net.named_parameters(), lr=0.05, momentum=0.9)
    grads = []
    for _ in range(5):
        opt.zero_grad()
        F.mse_loss(net(x), y).backward()
        opt.step()
        grads.append(net[0].weight.grad)
    return grads[0], grads[-1]


ONE_STEP, FIVE_STEPS = chapter_gradients()


def masked_step(opt, weight, mask):
    opt.step()
    with dt.no_grad():
        weight.copy_(weight * mask)


def step_only(opt, weight, mask):
    opt.step()


def mask_the_gradient(opt, weight, mask):
    weight.grad = weight.grad * mask
    opt.step()


def zeros_before_the_step(opt, weight, mask):
    with dt.no_grad():
        weight.copy_(weight * mask)
    opt.step()


def zeros_only(opt, weight, mask):
    with dt.no_grad():
        weight.copy_(weight * mask)


def two_steps(opt, weight, mask):
    for _ in range(2):
        opt.step()
    with dt.no_grad():
        weight.copy_(weight * mask)


def mask_gradient_and_zeros(opt, weight, mask):
    """Right too: the gradient mask changes only the pruned entries, which are zeroed anyway."""
    weight.grad = weight.grad * mask
    masked_step(opt, weight, mask)

def freeze_block(model, name):
    model.get_submodule(name).requires_grad_(False)


def freeze_by_prefix(model, name):
    """Catches "10." and "11." too when name is "1"."""
    for n, p in model.named_parameters():
        if n.startswith(name):
            p.requires_grad_(False)


def freeze_with_lr_mult(model, name):
    for p in model.get_submodule(name).parameters():
        p.lr_mult = 0.0


def freeze_first_parameter_only(model, name):
    next(iter(model.get_submodule(name).parameters())).requires_grad_(False)


CASES = {
    "08.1": ({"predicted_running_mean": [1.5, 2.25, 3.0]},
             [({"predicted_running_mean": [2.0, 3.0, 4.0]}, ["half of the way"]),
              ({"predicted_running_mean": [1.0, 1.5, 2.0]}, ["one pass"]),
              ({"predicted_running_mean": [1.5, 2.25]}, ["3 numbers"]),
              ({"predicted_running_mean": [[1.5, 2.25]]}, ["3 numbers"])]),
    "08.2": ({"zero_branch_cause": "zero_grad"},
             [({"zero_branch_cause": "not_reached"}, ["does reach"]),
              ({"zero_branch_cause": None}, ["check.cause"])]),
    "08.3": ({"grad_lr_mult": ONE_STEP, "grad_requires_grad": None},
             [({"grad_lr_mult": None, "grad_requires_grad": ONE_STEP}, ["grad_requires_grad"]),
              ({"grad_lr_mult": None, "grad_requires_grad": None}, ["still computes"]),
              ({"grad_lr_mult": ONE_STEP.numpy().tolist(), "grad_requires_grad": 0.0},
               ["grad_requires_grad"]),
              ({"grad_lr_mult": FIVE_STEPS, "grad_requires_grad": None}, ["fresh make_net()"]),
              ({"grad_lr_mult": ONE_STEP * 0, "grad_requires_grad": None}, ["all zeros"]),
              ({"grad_lr_mult": ONE_STEP[0], "grad_requires_grad": None}, ["8 x 3"]),
              ({"grad_lr_mult": "lr_mult", "grad_requires_grad": None}, ["8 x 3"])]),
    "08.4": ({"freeze_block": freeze_block},
             [({"freeze_block": freeze_by_prefix}, ["10.weight", "outside block '1'"]),
              ({"freeze_block": freeze_with_lr_mult}, ["still computes its gradient"]),
              ({"freeze_block": freeze_first_parameter_only}, ["1.bias", "still moved"]),
              ({"freeze_block": "encoder"}, ["function"])]),
    "08.5": ({"masked_step": masked_step},
             [({"masked_step": step_only}, ["no longer 0"]),
              ({"masked_step": mask_the_gradient}, ["momentum gathered before pruning"]),
              ({"masked_step": zeros_before_the_step}, ["no longer 0"]),
              ({"masked_step": zeros_only}, ["did not move"]),
              ({"masked_step": two_steps}, ["exactly one step"]),
              ({"masked_step": True}, ["function of (opt, weight, mask)"])]),
}

SELF_CONTAINED = {"08.2", "08.4", "08.5"}
