"""The exercises of chapter 06 (optimizers, parameter groups, per-parameter settings).

>>> Q2.verdict({"decay_names": {"fc1.weight", "fc2.weight"}}).status
'not yet'
>>> Q1.verdict({"moved": 0.0, "grad_norm": 1.0}).status          # a guessed norm
'not yet'
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .. import nn, optim
from ..autograd import rng
from ..i18n import sentence
from .answers import called, number, same_number
from .checker import CheckResult, Exercise


@lru_cache(maxsize=None)
def _frozen_by_lr_mult() -> tuple[float, float]:
    """06.1's step, redone as the solution takes it: a fresh make_net() with
    conv1.weight.lr_mult = 0, SGD at lr 0.05, one step on make_loader()'s first batch. Returns
    how far conv1.weight would have moved at lr_mult 1 (lr x its largest gradient element) and
    its gradient's norm, both measured here, never written down. The learner's random numbers
    go on where they were (make_net seeds the generator)."""
    from ..examples import make_loader, make_net
    from ..nn import functional as F

    with rng.fork_rng():
        net = make_net()
    net.conv1.weight.lr_mult = 0.0
    opt = optim.SGD(net.named_parameters(), lr=0.05)
    xb, yb = next(iter(make_loader()))
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
    grad = net.conv1.weight.grad.numpy()
    return 0.05 * float(np.abs(grad).max()), float(np.linalg.norm(grad))


def _mult_zero(moved: Any, grad_norm: Any) -> CheckResult:
    moved, grad_norm = number(moved), number(grad_norm)
    if moved is None or grad_norm is None:
        return ("Give two numbers: the largest change of any element of conv1.weight, and the "
                "norm of its gradient.")
    plain_move, want_norm = _frozen_by_lr_mult()
    if same_number(abs(moved), plain_move, rel_tol=1e-3):
        return ("That is the move of a step at lr_mult 1: set net.conv1.weight.lr_mult = 0 "
                "before opt.step().")
    if moved != 0:
        return "lr_mult = 0 makes every step of this parameter zero (plain SGD): it does not move."
    if grad_norm == 0:
        return ("lr_mult only scales the step: backward still computes the gradient "
                "(requires_grad is still True).")
    if same_number(grad_norm, 2 * want_norm, rel_tol=1e-3):
        return ("That is twice one pass's gradient: two backward passes added up. Take one "
                "step on a fresh make_net(), or call opt.zero_grad() first.")
    if not same_number(grad_norm, want_norm, rel_tol=1e-3):
        return ("grad_norm is np.linalg.norm(net.conv1.weight.grad.numpy()) after one step on "
                "a fresh make_net() and the first batch of make_loader().")
    return None, ("why_not_updating names it: lr_mult_zero. The gradient is computed for "
                  "nothing; requires_grad_(False) would save that work.")


Q1 = Exercise(
    "06.1", names=("moved", "grad_norm"),
    title="What lr_mult = 0 stops",
    expects="two numbers",
    check=_mult_zero,
    hints=("Copy conv1.weight's values before the step (.numpy().copy()), take the step, then "
           "np.abs(before - after).max().",
           "The gradient is still there after the step: np.linalg.norm(net.conv1.weight.grad"
           ".numpy()). diagnose.why_not_updating(net, opt, 'conv1.weight') says why."),
    solution=("net = make_net()\n"
              "net.conv1.weight.lr_mult = 0.0\n"
              "opt = optim.SGD(net.named_parameters(), lr=0.05)\n"
              "before = net.conv1.weight.numpy().copy()\n"
              "xb, yb = next(iter(make_loader()))\n"
              "F.cross_entropy(net(xb), yb).backward()\n"
              "opt.step()\n"
              "moved = np.abs(before - net.conv1.weight.numpy()).max()          # 0.0\n"
              "grad_norm = np.linalg.norm(net.conv1.weight.grad.numpy())       # above 0"))


#: The names a fresh Paddle process gives the chapter's LeNet (layer type, counter, w or b).
PADDLE_WEIGHTS = {"conv2d_0.w_0", "conv2d_1.w_0", "linear_0.w_0", "linear_1.w_0"}
PADDLE_BIASES = {"conv2d_0.b_0", "conv2d_1.b_0", "linear_0.b_0", "linear_1.b_0"}


def _decay_names(decay_names: Any) -> CheckResult:
    names = set(decay_names)
    if names == PADDLE_WEIGHTS:
        return None, ("apply_decay_param_fun=lambda name: name in decay_names now decays the "
                      "weights only, in Paddle as in dltutor.")
    if not names <= PADDLE_WEIGHTS | PADDLE_BIASES:
        return ("Paddle calls the function with its generated names (like linear_1.b_0), not "
                "the structured ones: take them from paddle_generated.")
    if names & PADDLE_BIASES:
        return "The set holds bias names (…b_0): those are the ones that must not decay."
    return "Some weights are missing: every …w_0 name should decay."


Q2 = Exercise(
    "06.2", names=("decay_names",),
    title="The Paddle names that should decay",
    expects="a set of parameter names",
    check=_decay_names,
    hints=("paddle_generated maps each structured name (fc2.bias) to Paddle's (linear_1.b_0).",
           "Keep the Paddle names whose structured name does not end with 'bias'."),
    solution=("decay_names = {paddle_generated[n] for n in paddle_generated "
              "if not n.endswith('bias')}"))


#: The chapter's LeNet: each parameter's shape is unique, so a shape names the parameter.
_FC2_SHAPES = {(10, 32), (10,)}
_ALL_SHAPES = {(6, 1, 3, 3), (6,), (16, 6, 3, 3), (16,), (32, 64), (32,)} | _FC2_SHAPES


def _fc2_groups(fc2_opt: Any) -> CheckResult:
    lr_of = {}
    for group in fc2_opt.param_groups:
        for param in group["params"]:
            lr_of[tuple(param.shape)] = group["lr"]
    if set(lr_of) != _ALL_SHAPES:
        return "The optimizer should hold all eight parameters of net, each exactly once."
    fc2_lrs = {lr_of[s] for s in _FC2_SHAPES}
    other_lrs = {lr_of[s] for s in _ALL_SHAPES - _FC2_SHAPES}
    if fc2_lrs == {0.05} and other_lrs == {0.001}:
        return "The two learning rates are swapped: fc2 gets 0.001, the rest 0.05."
    if fc2_lrs != {0.001}:
        return "fc2.weight and fc2.bias should both train at lr 0.001."
    if other_lrs != {0.05}:
        return "Every parameter outside fc2 should train at the default lr 0.05."
    return None, "Each parameter in one group: the general group leaves fc2 out (compare with id)."


Q3 = Exercise(
    "06.3", names=("fc2_opt",),
    title="One layer at its own learning rate",
    expects="an optimizer",
    check=_fc2_groups,
    hints=("Two groups: everything except fc2 (default lr 0.05), and fc2 with 'lr': 0.001.",
           "Leave fc2's parameters out of the first group by object: id(p) not in "
           "{id(q) for q in net.fc2.parameters()}."),
    solution=("special = {id(p) for p in net.fc2.parameters()}\n"
              "fc2_opt = optim.SGD([{'params': [(n, p) for n, p in net.named_parameters()\n"
              "                                 if id(p) not in special]},\n"
              "                     {'params': net.fc2.named_parameters(prefix='fc2'), "
              "'lr': 0.001}], lr=0.05)"))


def _fresh_models() -> list[tuple[str, Any]]:
    """Networks the learner has not seen: 1-D parameters in several kinds of layer."""
    return [("an MLP with LayerNorm", nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.ReLU(),
                                                    nn.Linear(8, 3))),
            ("a conv net with BatchNorm2d", nn.Sequential(
                nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                nn.Linear(4 * 6 * 6, 5))),
            ("an embedding under a bias-free head", nn.Sequential(
                nn.Embedding(10, 4), nn.Linear(4, 2, bias=False)))]


def _weight_decay(decay: Any) -> float | None:
    """The weight decay coefficient of a parameter's :class:`optim.Decay`: its group's number,
    or its own regularizer's when that replaces it (the chapter's fourth way, ``L2Decay(0.0)``);
    None for a penalty that is not a weight decay (an ``L1Decay`` above 0).

    >>> bias, weight = nn.Parameter([1.0], regularizer=optim.L2Decay(0.0)), nn.Parameter([[1.0]])
    >>> opt = optim.SGD([bias, weight], lr=0.1, weight_decay=0.01)
    >>> _weight_decay(opt.decay_of(bias)), _weight_decay(opt.decay_of(weight))
    (0.0, 0.01)
    """
    coupled = decay.coupled
    if isinstance(coupled, optim.Regularizer):
        if isinstance(coupled, optim.L2Decay) or coupled.coeff == 0:
            return coupled.coeff
        return None
    return float(coupled or 0.0)


def _decay_groups(decay_groups: Any) -> CheckResult:
    if not callable(decay_groups):
        return "decay_groups should be a function of (model, weight_decay)."
    for weight_decay, (what, model) in zip((0.01, 0.003, 0.2), _fresh_models()):
        where = sentence(what)
        groups, failure = called("decay_groups", decay_groups, model, weight_decay)
        if failure:
            return failure
        try:
            opt = optim.SGD(groups, lr=0.1)        # weight_decay 0 unless a group sets it
        except (TypeError, ValueError) as err:
            return sentence("optim.SGD refused the groups for {what}: {error}", what=where,
                            error=str(err).splitlines()[0])
        held = {id(p) for group in opt.param_groups for p in group["params"]}
        for name, param in model.named_parameters():
            if id(param) not in held:
                return sentence("In {what}, {name} is in no group, so the optimizer would "
                                "never train it.", what=where, name=name)
            wanted = weight_decay if param.ndim >= 2 else 0.0
            got = _weight_decay(opt.decay_of(param))
            if got is None:
                return sentence("In {what}, {name} gets the regularizer {regularizer}, which is "
                                "not a weight decay: use a number or optim.L2Decay.", what=where,
                                name=name, regularizer=opt.decay_of(param).coupled)
            if not np.isclose(got, wanted):
                return sentence("In {what}, {name} (shape {shape}) gets weight decay {got}, "
                                "but should get {wanted}: every 1-D parameter gets none.",
                                what=where, name=name, shape=tuple(param.shape), got=got,
                                wanted=wanted)
    return None


Q4 = Exercise(
    "06.4", names=("decay_groups",),
    title="Write decay_groups",
    expects="a function of (model, weight_decay) returning parameter groups",
    check=_decay_groups,
    hints=("Two groups: [{'params': decay, 'weight_decay': weight_decay}, {'params': no_decay, "
           "'weight_decay': 0.0}].",
           "Sort each (name, p) of model.named_parameters() by p.ndim: 2 or more decays."),
    solution=("def decay_groups(model, weight_decay):\n"
              "    named = list(model.named_parameters())\n"
              "    return [{'params': [(n, p) for n, p in named if p.ndim >= 2],\n"
              "             'weight_decay': weight_decay},\n"
              "            {'params': [(n, p) for n, p in named if p.ndim < 2],\n"
              "             'weight_decay': 0.0}]"))

EXERCISES = [Q1, Q2, Q3, Q4]
