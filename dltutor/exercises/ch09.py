"""The exercises of chapter 09 (gradient clipping and numerical trouble).

>>> grads = {"0.weight": np.array([0.75, 1.0])}           # a global norm of 1.25
>>> Q2.verdict({"predicted_scales": (1.0, 0.4), "original": grads}).status
'correct'
>>> Q2.verdict({"predicted_scales": (1.0, 1.0), "original": grads}).message
'Exercise 09.2: not yet. The global norm (1.2500) is above 0.5, so every gradient is scaled by one factor that brings it down to 0.5.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..autograd import tensor
from ..i18n import text
from ..optim import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue, clip_grad_norm_
from .answers import number, called, same_number
from .checker import CheckResult, Exercise


def _tensor_clip(tensor_clip: Any) -> CheckResult:
    if isinstance(tensor_clip, ClipGradByGlobalNorm):
        return text("ch09.clipgradbyglobalnorm_scales_all_tensors")
    if isinstance(tensor_clip, ClipGradByValue):
        return text("ch09.clipgradbyvalue_clamps_single_values")
    if not isinstance(tensor_clip, ClipGradByNorm):
        return text("ch09.tensor_clip_clip_object")
    if not np.isclose(tensor_clip.clip_norm, 0.5):
        return text("ch09.right_kind_clip_other")
    return None


Q1 = Exercise(
    "09.1", names=("tensor_clip",),
    title="ch09.q1.title",
    expects="ch09.q1.expects",
    check=_tensor_clip,
    hints=("ch09.q1.hint1", "ch09.q1.hint2"),
    solution="tensor_clip = optim.ClipGradByNorm(0.5)")


#: The thresholds of 09.2: one above the chapter's global norm, one below it.
_THRESHOLDS = (2.0, 0.5)


def _predicted_scales(predicted_scales: Any, original: Any) -> CheckResult:
    got: list[Any] = [number(value) for value in predicted_scales]   # (floats, once checked)
    if len(got) != len(_THRESHOLDS) or None in got:
        return text("ch09.give_two_numbers_scale")
    total = _norm(original, ("",))
    want = [min(1.0, threshold / total) for threshold in _THRESHOLDS]
    if all(same_number(g, w, rel_tol=1e-4) for g, w in zip(got, want)):
        return None, text("ch09.clip_only_acts_gradients")
    if any(g > 1.0 for g in got):
        return text("ch09.clipping_only_ever_shrinks")
    if same_number(got[0], want[1], rel_tol=1e-4) and same_number(got[1], want[0], rel_tol=1e-4):
        return text("ch09.swapped_first_number_clipgradbyglobalnorm")
    for threshold, scale, right in zip(_THRESHOLDS, got, want):
        if same_number(scale, right, rel_tol=1e-4):
            continue
        if total <= threshold:
            return text("ch09.global_norm_printed_top", total=total, threshold=threshold)
        return text("ch09.global_norm_above_every", total=total, threshold=threshold)
    return None


Q2 = Exercise(
    "09.2", names=("predicted_scales", "original"),
    title="ch09.q2.title",
    expects="ch09.q2.expects",
    check=_predicted_scales,
    hints=("ch09.q2.hint1", "ch09.q2.hint2"),
    solution=("predicted_scales = (1.0, 0.5 / np.linalg.norm(flat(original)))\n"
              "# check them:\n"
              "for threshold in (2.0, 0.5):\n"
              "    restore_grads()\n"
              "    clip = optim.ClipGradByGlobalNorm(threshold)\n"
              "    clip(list(net.parameters()), [p.grad.numpy().copy() for p in net.parameters()])\n"
              "    print(threshold, clip.last_scale)"))


def _norm(original: dict, prefixes: tuple[str, ...]) -> float:
    return float(np.sqrt(sum(np.sum(g.astype(float) ** 2) for n, g in original.items()
                             if n.startswith(prefixes))))


def _norm_without_last(norm_without_last: Any, original: Any) -> CheckResult:
    got = norm_without_last
    if same_number(got, _norm(original, ("0.", "2.")), rel_tol=1e-4):
        return None
    if same_number(got, _norm(original, ("0.", "2.", "4.")), rel_tol=1e-4):
        return text("ch09.last_layer_still_counted")
    if same_number(got, _norm(original, ("4.",)), rel_tol=1e-4):
        return text("ch09.last_layer_own_norm")
    return text("ch09.last_total_norm_global")


Q3 = Exercise(
    "09.3", names=("norm_without_last", "original"),
    title="ch09.q3.title",
    expects="ch09.q3.expects",
    check=_norm_without_last,
    hints=("ch09.q3.hint1", "ch09.q3.hint2", "ch09.q3.hint3"),
    solution=("for n, p in net.named_parameters():\n"
              "    p.need_clip = not n.startswith('4.')\n"
              "restore_grads()\n"
              "clip = optim.ClipGradByGlobalNorm(1.0)\n"
              "clip(list(net.parameters()), [p.grad.numpy().copy() for p in net.parameters()])\n"
              "norm_without_last = clip.last_total_norm\n"
              "for p in net.parameters():\n"
              "    p.need_clip = True"))


def _sqrt_anomaly(bad_op: Any, bad_pass: Any) -> CheckResult:
    op, where = str(bad_op).strip().lower(), str(bad_pass).strip().lower()
    if op == "sum":
        return text("ch09.sum_only_adds_finite")
    if op != "sqrt":
        return text("ch09.name_op_anomaly_error")
    if where == "forward":
        return text("ch09.sqrt_finite_forward_pass")
    if where != "backward":
        return text("ch09.bad_pass_forward_backward")
    return None


Q4 = Exercise(
    "09.4", names=("bad_op", "bad_pass"),
    title="ch09.q4.title",
    expects="ch09.q4.expects",
    check=_sqrt_anomaly,
    hints=("ch09.q4.hint1", "ch09.q4.hint2"),
    solution=("v = dt.tensor([0.0, 4.0], requires_grad=True)\n"
              "try:\n"
              "    with dt.detect_anomaly():\n"
              "        dt.sqrt(v).sum().backward()\n"
              "except dt.AnomalyError as error:\n"
              "    print(error)\n"
              "bad_op, bad_pass = 'sqrt', 'backward'\n"
              "# PyTorch 2.13's torch.autograd.detect_anomaly() raises nothing on the same lines: it\n"
              "# checks only for NaN returned by a backward function, and sqrt's backward returns inf.\n"
              "# There, check torch.isfinite(grad).all() yourself (in a hook: v.register_hook(fn))."))

_WEIGHTS = ["0.weight", "2.weight", "4.weight"]


def _shrunk(shrunk: Any) -> CheckResult:
    got = sorted(str(name) for name in shrunk)
    if got == _WEIGHTS:
        return None
    if any(name.endswith("bias") for name in got):
        return text("ch09.biases_gradients_have_norms")
    if set(got) < set(_WEIGHTS):
        return text("ch09.every_tensor_whose_norm")
    return text("ch09.use_names_like_weight")


Q5 = Exercise(
    "09.5", names=("shrunk",),
    title="ch09.q5.title",
    expects="ch09.q5.expects",
    check=_shrunk,
    hints=("ch09.q5.hint1", "ch09.q5.hint2"),
    solution=("restore_grads()\n"
              "scales = optim.ClipGradByNorm(0.5).predict_scales(list(net.parameters()))\n"
              "shrunk = [n for n, s in zip(names, scales) if s < 1]"))


# Fresh cases for 09.6: (shapes, how large the gradients are, max_norm). Large gradients are
# clipped, small ones must be left alone, and one parameter has no gradient at all.
_CLIP_CASES = (([(3, 4), (4,), (2, 2)], 3.0, 1.0),
               ([(5,), (6, 2)], 0.05, 1.0),
               ([(2, 3, 3), (7,), (4, 1)], 10.0, 0.5))


def _parameters_with_gradients(case: int) -> list:
    shapes, size, _ = _CLIP_CASES[case]
    rng = np.random.default_rng(60 + case)
    params = [nn.Parameter(rng.normal(size=s).astype(np.float32)) for s in shapes]
    for param in params[:-1] if case == 2 else params:    # case 2: the last has no gradient
        param.grad = tensor((rng.normal(size=param.shape) * size).astype(np.float32))
    return params


def _clip_global_norm(clip_global_norm: Any) -> CheckResult:
    if not callable(clip_global_norm):
        return text("ch09.clip_global_norm_function")
    for case, (_, _, max_norm) in enumerate(_CLIP_CASES):
        mine, reference = _parameters_with_gradients(case), _parameters_with_gradients(case)
        expected_total = float(clip_grad_norm_(reference, max_norm).item())
        returned, failure = called("clip_global_norm", clip_global_norm, mine, max_norm)
        if failure:
            return failure
        total = number(returned)
        if total is None or not np.isclose(total, expected_total, rtol=1e-5):
            return text("ch09.these_gradients_clip_global", expected=expected_total, got=returned)
        for got, want in zip(mine, reference):
            if want.grad is None:
                if got.grad is not None:
                    return text("ch09.parameter_without_gradient_keep")
                continue
            if np.allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-7):
                continue
            if expected_total <= max_norm:
                return text("ch09.global_norm_here_below")
            return text("ch09.every_gradient_multiplied_factor")
    return None


Q6 = Exercise(
    "09.6", names=("clip_global_norm",),
    title="ch09.q6.title",
    expects="ch09.q6.expects",
    check=_clip_global_norm,
    hints=("ch09.q6.hint1", "ch09.q6.hint2"),
    solution=("def clip_global_norm(params, max_norm):\n"
              "    grads = [p.grad.data for p in params if p.grad is not None]\n"
              "    total = float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)))\n"
              "    if total > max_norm:\n"
              "        for g in grads:\n"
              "            g *= max_norm / total\n"
              "    return total"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6]
