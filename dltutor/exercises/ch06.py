"""The exercises of chapter 06 (optimizers, parameter groups, per-parameter settings).

>>> Q2.verdict({"decay_names": {"fc1.weight", "fc2.weight"}}).status
'not yet'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn, optim
from ..i18n import sentence
from .answers import called, truth
from .checker import CheckResult, Exercise


def _mult_zero(moves: Any, gets_gradient: Any) -> CheckResult:
    moves, gets_gradient = truth(moves), truth(gets_gradient)
    if moves is True:
        return "lr_mult = 0 makes every step of this parameter zero (plain SGD): it does not move."
    if gets_gradient is False:
        return ("lr_mult only scales the step: backward still computes the gradient "
                "(requires_grad is still True).")
    if moves is False and gets_gradient is True:
        return None, ("why_not_updating names it: lr_mult_zero. The gradient is computed for "
                      "nothing; requires_grad_(False) would save that work.")
    return "Answer True or False for each."


Q1 = Exercise(
    "06.1", names=("moves", "gets_gradient"),
    title="What lr_mult = 0 stops",
    expects="True or False, for each",
    check=_mult_zero,
    hints=("Set net.conv1.weight.lr_mult = 0, train one step, compare the weight before and "
           "after, and look at net.conv1.weight.grad.",
           "diagnose.why_not_updating(net, opt, 'conv1.weight') says why."),
    solution=("net = make_net()\n"
              "net.conv1.weight.lr_mult = 0.0\n"
              "opt = optim.SGD(net.named_parameters(), lr=0.05)\n"
              "before = net.conv1.weight.numpy().copy()\n"
              "xb, yb = next(iter(make_loader()))\n"
              "F.cross_entropy(net(xb), yb).backward()\n"
              "opt.step()\n"
              "moves = not np.array_equal(before, net.conv1.weight.numpy())      # False\n"
              "gets_gradient = net.conv1.weight.grad is not None                   # True"))


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
    or its own regularizer's when that replaces it (the chapter's third way, ``L2Decay(0.0)``);
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
