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
from ..i18n import text
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
        return text("ch06.give_two_numbers_largest")
    plain_move, want_norm = _frozen_by_lr_mult()
    if same_number(abs(moved), plain_move, rel_tol=1e-3):
        return text("ch06.move_step_lr_mult")
    if moved != 0:
        return text("ch06.lr_mult_makes_every")
    if grad_norm == 0:
        return text("ch06.lr_mult_only_scales")
    if same_number(grad_norm, 2 * want_norm, rel_tol=1e-3):
        return text("ch06.twice_pass_gradient_two")
    if not same_number(grad_norm, want_norm, rel_tol=1e-3):
        return text("ch06.grad_norm_np_linalg")
    return None, text("ch06.why_not_updating_names")


Q1 = Exercise(
    "06.1", names=("moved", "grad_norm"),
    title="ch06.q1.title",
    expects="ch06.q1.expects",
    check=_mult_zero,
    hints=("ch06.q1.hint1", "ch06.q1.hint2"),
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
        return None, text("ch06.apply_decay_param_fun")
    if not names <= PADDLE_WEIGHTS | PADDLE_BIASES:
        return text("ch06.paddle_calls_function_generated")
    if names & PADDLE_BIASES:
        return text("ch06.set_holds_bias_names")
    return text("ch06.some_weights_missing_every")


Q2 = Exercise(
    "06.2", names=("decay_names",),
    title="ch06.q2.title",
    expects="ch06.q2.expects",
    check=_decay_names,
    hints=("ch06.q2.hint1", "ch06.q2.hint2"),
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
        return text("ch06.optimizer_hold_all_eight")
    fc2_lrs = {lr_of[s] for s in _FC2_SHAPES}
    other_lrs = {lr_of[s] for s in _ALL_SHAPES - _FC2_SHAPES}
    if fc2_lrs == {0.05} and other_lrs == {0.001}:
        return text("ch06.two_learning_rates_swapped")
    if fc2_lrs != {0.001}:
        return text("ch06.fc2_weight_fc2_bias")
    if other_lrs != {0.05}:
        return text("ch06.every_parameter_outside_fc2")
    return None, text("ch06.each_parameter_group_general")


Q3 = Exercise(
    "06.3", names=("fc2_opt",),
    title="ch06.q3.title",
    expects="ch06.q3.expects",
    check=_fc2_groups,
    hints=("ch06.q3.hint1", "ch06.q3.hint2"),
    solution=("special = {id(p) for p in net.fc2.parameters()}\n"
              "fc2_opt = optim.SGD([{'params': [(n, p) for n, p in net.named_parameters()\n"
              "                                 if id(p) not in special]},\n"
              "                     {'params': net.fc2.named_parameters(prefix='fc2'), "
              "'lr': 0.001}], lr=0.05)"))


def _fresh_models() -> list[tuple[str, Any]]:
    """Networks the learner has not seen, each with the key of its description: 1-D parameters
    in several kinds of layer."""
    return [("ch06.mlp_layernorm", nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.ReLU(),
                                                 nn.Linear(8, 3))),
            ("ch06.conv_net_batchnorm2d", nn.Sequential(
                nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                nn.Linear(4 * 6 * 6, 5))),
            ("ch06.embedding_under_bias_free", nn.Sequential(
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
        return text("ch06.decay_groups_function_model")
    for weight_decay, (what, model) in zip((0.01, 0.003, 0.2), _fresh_models()):
        where = text(what)
        groups, failure = called("decay_groups", decay_groups, model, weight_decay)
        if failure:
            return failure
        try:
            opt = optim.SGD(groups, lr=0.1)        # weight_decay 0 unless a group sets it
        except (TypeError, ValueError) as err:
            return text("ch06.optim_sgd_refused_groups", what=where, error=str(err).splitlines()[0])
        held = {id(p) for group in opt.param_groups for p in group["params"]}
        for name, param in model.named_parameters():
            if id(param) not in held:
                return text("ch06.no_group_optimizer_would", what=where, name=name)
            wanted = weight_decay if param.ndim >= 2 else 0.0
            got = _weight_decay(opt.decay_of(param))
            if got is None:
                return text("ch06.gets_regularizer_which_not", what=where, name=name,
                            regularizer=opt.decay_of(param).coupled)
            if not np.isclose(got, wanted):
                return text("ch06.shape_gets_weight_decay", what=where, name=name,
                            shape=tuple(param.shape), got=got, wanted=wanted)
    return None


Q4 = Exercise(
    "06.4", names=("decay_groups",),
    title="ch06.q4.title",
    expects="ch06.q4.expects",
    check=_decay_groups,
    hints=("ch06.q4.hint1", "ch06.q4.hint2"),
    solution=("def decay_groups(model, weight_decay):\n"
              "    named = list(model.named_parameters())\n"
              "    return [{'params': [(n, p) for n, p in named if p.ndim >= 2],\n"
              "             'weight_decay': weight_decay},\n"
              "            {'params': [(n, p) for n, p in named if p.ndim < 2],\n"
              "             'weight_decay': 0.0}]"))

EXERCISES = [Q1, Q2, Q3, Q4]
