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
from ..i18n import sentence
from ..optim import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue, clip_grad_norm_
from .answers import number, called, same_number
from .checker import CheckResult, Exercise


def _tensor_clip(tensor_clip: Any) -> CheckResult:
    if isinstance(tensor_clip, ClipGradByGlobalNorm):
        return ("ClipGradByGlobalNorm scales all tensors by one factor; by_tensor_norm clipped "
                "each tensor on its own.")
    if isinstance(tensor_clip, ClipGradByValue):
        return ("ClipGradByValue clamps single values; by_tensor_norm limited the norm of each "
                "tensor.")
    if not isinstance(tensor_clip, ClipGradByNorm):
        return "tensor_clip should be a clip object from optim, like optim.ClipGradByGlobalNorm(1.0)."
    if not np.isclose(tensor_clip.clip_norm, 0.5):
        return "Right kind of clip, other threshold: by_tensor_norm used max_norm=0.5."
    return None


Q1 = Exercise(
    "09.1", names=("tensor_clip",),
    title="Per-tensor clipping in an optimizer",
    expects="a clip object",
    check=_tensor_clip,
    hints=("by_tensor_norm called clip_grad_norm_ once per parameter, with max_norm=0.5.",
           "Paddle's clip objects: ClipGradByValue, ClipGradByNorm (each tensor), "
           "ClipGradByGlobalNorm (all together)."),
    solution="tensor_clip = optim.ClipGradByNorm(0.5)")


#: The thresholds of 09.2: one above the chapter's global norm, one below it.
_THRESHOLDS = (2.0, 0.5)


def _predicted_scales(predicted_scales: Any, original: Any) -> CheckResult:
    got: list[Any] = [number(value) for value in predicted_scales]   # (floats, once checked)
    if len(got) != len(_THRESHOLDS) or None in got:
        return ("Give two numbers: the scale of ClipGradByGlobalNorm(2.0), then the scale of "
                "ClipGradByGlobalNorm(0.5).")
    total = _norm(original, ("",))
    want = [min(1.0, threshold / total) for threshold in _THRESHOLDS]
    if all(same_number(g, w, rel_tol=1e-4) for g, w in zip(got, want)):
        return None, ("A clip only acts on gradients above its threshold: 2.0 leaves these "
                      "alone, 0.5 scales all of them by one factor, 0.5 / global norm.")
    if any(g > 1.0 for g in got):
        return "Clipping only ever shrinks: a scale above 1 would make the gradients larger."
    if same_number(got[0], want[1], rel_tol=1e-4) and same_number(got[1], want[0], rel_tol=1e-4):
        return "Swapped: the first number is for ClipGradByGlobalNorm(2.0), the second for 0.5."
    for threshold, scale, right in zip(_THRESHOLDS, got, want):
        if same_number(scale, right, rel_tol=1e-4):
            continue
        if total <= threshold:
            return sentence("The global norm ({total:.4f}, printed at the top) is already below "
                            "{threshold}, so nothing needs to be cut.", total=total,
                            threshold=threshold)
        return sentence("The global norm ({total:.4f}) is above {threshold}, so every gradient "
                        "is scaled by one factor that brings it down to {threshold}.",
                        total=total, threshold=threshold)
    return None


Q2 = Exercise(
    "09.2", names=("predicted_scales", "original"),
    title="The scale of a global-norm clip",
    expects="two numbers, and the chapter's gradients",
    check=_predicted_scales,
    hints=("The scale is clip_norm / max(global_norm, clip_norm).",
           "Compare the global norm printed at the top of the chapter with 2.0 and with 0.5."),
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
        return ("The last layer is still counted: set need_clip = False on 4.weight and 4.bias "
                "before the clip runs.")
    if same_number(got, _norm(original, ("4.",)), rel_tol=1e-4):
        return ("That is the last layer's own norm; the layers that are still clipped are the "
                "ones counted.")
    return ("last_total_norm should be the global norm of the gradients of the layers 0 and 2 "
            "only.")


Q3 = Exercise(
    "09.3", names=("norm_without_last", "original"),
    title="Clipping without the last layer",
    expects="a number, and the chapter's gradients",
    check=_norm_without_last,
    hints=("The last layer of net is net[4]: its parameters are 4.weight and 4.bias.",
           "Set p.need_clip = False for those two, restore_grads(), then clip (step with a "
           "grad_clip optimizer, or call the clip object with the parameters and gradient "
           "copies) and read clip.last_total_norm.",
           "Set need_clip back to True afterwards."),
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
        return "sum only adds finite numbers here; the inf starts at the op before it."
    if op != "sqrt":
        return "Name the op as the anomaly error does: its first word."
    if where == "forward":
        return ("sqrt(0) = 0 is finite, so the forward pass is fine; the derivative "
                "1 / (2 sqrt(x)) is not.")
    if where != "backward":
        return "bad_pass is 'forward' or 'backward'."
    return None


Q4 = Exercise(
    "09.4", names=("bad_op", "bad_pass"),
    title="Where detect_anomaly stops",
    expects="two words: an op and a pass",
    check=_sqrt_anomaly,
    hints=("Wrap it in `with dt.detect_anomaly():` and catch dt.AnomalyError to read it.",
           "The error starts with the op's name and says which pass produced the inf."),
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
        return ("The biases' gradients have norms below 0.5: per-tensor clipping leaves them "
                "alone.")
    if set(got) < set(_WEIGHTS):
        return ("Every tensor whose norm is above 0.5 is shrunk, each by its own factor, not "
                "only the largest.")
    return "Use names like '0.weight', as net.named_parameters() gives them."


Q5 = Exercise(
    "09.5", names=("shrunk",),
    title="What ClipGradByNorm shrinks",
    expects="a list of parameter names",
    check=_shrunk,
    hints=("clip.predict_scales(params) says, without clipping, the factor for each gradient.",
           "A factor below 1 means the tensor is shrunk; pair the factors with names."),
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
        return "clip_global_norm should be a function of (params, max_norm)."
    for case, (_, _, max_norm) in enumerate(_CLIP_CASES):
        mine, reference = _parameters_with_gradients(case), _parameters_with_gradients(case)
        expected_total = float(clip_grad_norm_(reference, max_norm).item())
        returned, failure = called("clip_global_norm", clip_global_norm, mine, max_norm)
        if failure:
            return failure
        total = number(returned)
        if total is None or not np.isclose(total, expected_total, rtol=1e-5):
            return sentence("For these gradients clip_global_norm should return the global norm "
                            "before clipping, {expected:.4g}; it returned {got!r}.",
                            expected=expected_total, got=returned)
        for got, want in zip(mine, reference):
            if want.grad is None:
                if got.grad is not None:
                    return "A parameter without a gradient should keep grad None."
                continue
            if np.allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-7):
                continue
            if expected_total <= max_norm:
                return ("The global norm here is below max_norm: the gradients should be left "
                        "as they are.")
            return ("Every gradient should be multiplied by one factor, max_norm / global norm "
                    "(the global norm is the square root of the sum of every squared value).")
    return None


Q6 = Exercise(
    "09.6", names=("clip_global_norm",),
    title="Write clip_global_norm",
    expects="a function of (params, max_norm)",
    check=_clip_global_norm,
    hints=("The global norm: np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in params if p.grad "
           "is not None)).",
           "When it is above max_norm, multiply every p.grad.data by max_norm / total, in place; "
           "return total either way."),
    solution=("def clip_global_norm(params, max_norm):\n"
              "    grads = [p.grad.data for p in params if p.grad is not None]\n"
              "    total = float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)))\n"
              "    if total > max_norm:\n"
              "        for g in grads:\n"
              "            g *= max_norm / total\n"
              "    return total"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6]
