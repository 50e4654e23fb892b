"""The exercises of chapter 08 (freezing, BatchNorm's statistics, and pruning).

>>> Q1.verdict({"predicted_running_mean": [2.0, 3.0, 4.0]}).message
'Exercise 08.1: not yet. That is the batch mean itself; momentum 0.5 moves the running mean only half of the way at each pass.'
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from .. import nn, optim
from ..autograd import Tensor, no_grad, randn, rng, tensor
from ..nn import functional as F
from ..i18n import text
from .answers import called
from .checker import CheckResult, Exercise

_BATCH_MEAN = np.array([2.0, 3.0, 4.0])


def _running_mean(predicted_running_mean: Any) -> CheckResult:
    got = np.asarray(predicted_running_mean, dtype=float).ravel()   # [[1.5, 2.25, 3.0]] too
    if got.shape != (3,):
        return text("ch08.running_mean_has_value")
    if np.allclose(got, 0.75 * _BATCH_MEAN):
        return None, text("ch08.each_pass_halves_distance")
    if np.allclose(got, _BATCH_MEAN):
        return text("ch08.batch_mean_itself_momentum")
    if np.allclose(got, 0.5 * _BATCH_MEAN):
        return text("ch08.after_pass_second_pass")
    return text("ch08.running_momentum_running_momentum")


Q1 = Exercise(
    "08.1", names=("predicted_running_mean",),
    title="ch08.q1.title",
    expects="ch08.q1.expects",
    check=_running_mean,
    hints=("ch08.q1.hint1", "ch08.q1.hint2"),
    solution=("predicted_running_mean = [1.5, 2.25, 3.0]\n"
              "bn = nn.BatchNorm1d(3, momentum=0.5)\n"
              "batch = dt.tensor([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])\n"
              "bn(batch); bn(batch)\n"
              "print(bn.running_mean)"))


def _zero_branch(zero_branch_cause: Any) -> CheckResult:
    if zero_branch_cause == "zero_grad":
        return None, text("ch08.gradient_exists_but_all")
    if zero_branch_cause == "not_reached":
        return text("ch08.backward_does_reach_branch")
    if zero_branch_cause is None:
        return text("ch08.why_not_updating_found")
    return text("ch08.run_why_not_updating", cause=zero_branch_cause)


Q2 = Exercise(
    "08.2", names=("zero_branch_cause",),
    title="ch08.q2.title",
    expects="ch08.q2.expects",
    check=_zero_branch,
    hints=("ch08.q2.hint1",),
    solution=("from dltutor import nn, optim\n"
              "from dltutor.nn import functional as F\n"
              "class Zeroed(nn.Module):\n"
              "    def __init__(self):\n"
              "        super().__init__()\n"
              "        self.a, self.zeroed, self.head = nn.Linear(4, 4), nn.Linear(4, 4), "
              "nn.Linear(4, 1)\n"
              "    def forward(self, x):\n"
              "        return self.head((self.a(x) + self.zeroed(x) * 0).tanh())\n"
              "zero_model = Zeroed()\n"
              "zero_opt = optim.SGD(zero_model.parameters(), lr=0.1, momentum=0.9)\n"
              "zero_loss = F.mse_loss(zero_model(dt.randn(8, 4)), dt.randn(8, 1))\n"
              "zero_loss.backward(retain_graph=True)\n"
              "zero_branch_cause = dt.diagnose.why_not_updating(zero_model, zero_opt, "
              "'zeroed.weight', loss=zero_loss).cause"))


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Draw from the chapter's seed, and give the learner's generator back afterwards."""
    with rng.fork_rng():
        rng.manual_seed(seed)
        yield


def _chapter_gradient() -> np.ndarray:
    """net[0].weight's gradient after one backward through the chapter's make_net() on its
    batch x, y (seeds 0 and 1, as the chapter draws them)."""
    with _seeded(1):
        x, y = randn(32, 3), randn(32, 1)
    with _seeded(0):
        net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    F.mse_loss(net(x), y).backward()
    return net[0].weight.grad.numpy()


def _as_array(value: Any) -> np.ndarray | None:
    """A gradient as the learner may give it: a Tensor, an array or nested lists."""
    if isinstance(value, Tensor):
        return value.numpy()
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if array.ndim else None


def _two_gradients(grad_lr_mult: Any, grad_requires_grad: Any) -> CheckResult:
    expected = _chapter_gradient()
    got = None if grad_lr_mult is None else _as_array(grad_lr_mult)
    if grad_requires_grad is not None:
        other = _as_array(grad_requires_grad)
        if other is not None and other.shape == expected.shape and np.allclose(other, expected,
                                                                               atol=1e-6):
            return text("ch08.grad_requires_grad_holds")
        return text("ch08.grad_requires_grad_after")
    if grad_lr_mult is None:
        return text("ch08.lr_mult_backward_still")
    if got is None or got.shape != expected.shape:
        return text("ch08.grad_lr_mult_net")
    if not got.any():
        return text("ch08.gradient_all_zeros_lr")
    if not np.allclose(got, expected, rtol=1e-4, atol=1e-6):
        return text("ch08.not_gradient_step_fresh")
    return None, text("ch08.lr_mult_only_scales")


Q3 = Exercise(
    "08.3", names=("grad_lr_mult", "grad_requires_grad"),
    title="ch08.q3.title",
    expects="ch08.q3.expects",
    check=_two_gradients,
    hints=("ch08.q3.hint1", "ch08.q3.hint2"),
    solution=("net = make_net()\n"
              "for p in net[0].parameters():\n"
              "    p.lr_mult = 0.0\n"
              "train_step(net, optim.SGD(net.named_parameters(), lr=0.05))\n"
              "grad_lr_mult = net[0].weight.grad\n"
              "net = make_net()\n"
              "net[0].requires_grad_(False)\n"
              "train_step(net, optim.SGD(net.named_parameters(), lr=0.05))\n"
              "grad_requires_grad = net[0].weight.grad     # None: no gradient computed"))


class _EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 4))

    def forward(self, x: Any) -> Any:
        return self.decoder(self.encoder(x))


def _blocks_to_freeze() -> list[tuple[Any, str]]:
    """Networks and the block to freeze in each; in the first, a name match by prefix would
    also catch blocks 10 and 11."""
    return [(nn.Sequential(*[nn.Linear(4, 4) for _ in range(12)]), "1"),
            (nn.Sequential(nn.Sequential(nn.Linear(4, 5), nn.Tanh()),
                           nn.Sequential(nn.Linear(5, 5), nn.Tanh()), nn.Linear(5, 4)), "1"),
            (_EncoderDecoder(), "encoder")]


def _freeze_block(freeze_block: Any) -> CheckResult:
    if not callable(freeze_block):
        return text("ch08.freeze_block_function_model")
    for model, block in _blocks_to_freeze():
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
        _, failure = called("freeze_block", freeze_block, model, block)
        if failure:
            return failure
        before = {name: p.numpy().copy() for name, p in model.named_parameters()}
        model(randn(8, 4)).pow(2).mean().backward()
        opt.step()
        for name, param in model.named_parameters():
            inside = name.startswith(block + ".")
            moved = not np.array_equal(param.numpy(), before[name])
            if inside and moved:
                return text("ch08.belongs_block_but_still", name=name, block=block)
            if inside and param.grad is not None:
                return text("ch08.no_longer_moves_but", name=name)
            if not inside and not moved:
                return text("ch08.outside_block_still_train", name=name, block=block)
    return None


Q4 = Exercise(
    "08.4", names=("freeze_block",),
    title="ch08.q4.title",
    expects="ch08.q4.expects",
    check=_freeze_block,
    hints=("ch08.q4.hint1", "ch08.q4.hint2"),
    solution=("def freeze_block(model, name):\n"
              "    model.get_submodule(name).requires_grad_(False)"))

def _pruned_weight(make_optimizer: Any, seed: int) -> tuple[Any, Any, Any]:
    """A 4 x 5 weight that trained two steps with ``make_optimizer``, then had its half
    smallest in size pruned to 0: (weight, optimizer, mask)."""
    draws = np.random.default_rng(seed)
    weight = nn.Parameter(draws.normal(size=(4, 5)).astype(np.float32))
    opt = make_optimizer([weight])
    for _ in range(2):
        weight.grad = tensor(draws.normal(size=(4, 5)).astype(np.float32))
        opt.step()
    order = np.argsort(np.abs(weight.numpy()), axis=None, kind="stable")
    mask = np.ones((4, 5), dtype=np.float32)
    mask.flat[order[:10]] = 0.0
    with no_grad():
        weight.copy_(weight * tensor(mask))
    return weight, opt, tensor(mask)


_PRUNING_OPTIMIZERS = (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
                       lambda ps: optim.Adam(ps, lr=0.1))


def _masked_step(masked_step: Any) -> CheckResult:
    if not callable(masked_step):
        return text("ch08.masked_step_function_opt")
    for seed, make in enumerate(_PRUNING_OPTIMIZERS):
        weight, opt, mask = _pruned_weight(make, seed)
        reference, reference_opt, _ = _pruned_weight(make, seed)
        pruned = mask.numpy() == 0
        draws = np.random.default_rng(seed + 10)
        for _ in range(4):
            gradient = draws.normal(size=(4, 5)).astype(np.float32)
            weight.grad, reference.grad = tensor(gradient), tensor(gradient)
            before = weight.numpy().copy()
            reference_opt.step()
            with no_grad():
                reference.copy_(reference * mask)
            _, failure = called("masked_step", masked_step, opt, weight, mask)
            if failure:
                return failure
            if weight.numpy()[pruned].any():
                if weight.grad is not None and not weight.grad.numpy()[pruned].any():
                    return text("ch08.masking_gradient_not_enough")
                return text("ch08.after_step_entries_where")
            if np.array_equal(weight.numpy()[~pruned], before[~pruned]):
                return text("ch08.entries_mask_keeps_did")
            if not np.allclose(weight.numpy(), reference.numpy(), rtol=1e-5, atol=1e-6):
                return text("ch08.kept_entries_moved_differently")
    return None, text("ch08.zeros_hold_under_momentum")


Q5 = Exercise(
    "08.5", names=("masked_step",),
    title="ch08.q5.title",
    expects="ch08.q5.expects",
    check=_masked_step,
    hints=("ch08.q5.hint1", "ch08.q5.hint2"),
    solution=("def masked_step(opt, weight, mask):\n"
              "    opt.step()\n"
              "    with dt.no_grad():\n"
              "        weight.copy_(weight * mask)"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5]
