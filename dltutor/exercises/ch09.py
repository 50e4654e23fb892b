"""The exercises of chapter 09 (gradient clipping and numerical trouble).

>>> Q2.verdict({"predicted_scale": 2.0 / 1.4647}).message
'Exercise 09.2: not yet. Clipping only ever shrinks: a scale above 1 would make the gradients larger.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..optim import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .answers import number, same_number
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
    expects="a clip object",
    check=_tensor_clip,
    hints=("by_tensor_norm called clip_grad_norm_ once per parameter, with max_norm=0.5.",
           "Paddle's clip objects: ClipGradByValue, ClipGradByNorm (each tensor), "
           "ClipGradByGlobalNorm (all together)."),
    solution="tensor_clip = optim.ClipGradByNorm(0.5)")


def _predicted_scale(predicted_scale: Any) -> CheckResult:
    scale = number(predicted_scale)
    if scale is None:
        return "Give the scale as a number between 0 and 1."
    if same_number(scale, 1.0):
        return None, "A clip only acts on gradients above its threshold."
    if scale > 1.0:
        return "Clipping only ever shrinks: a scale above 1 would make the gradients larger."
    return ("The global norm (printed at the top, about 1.46) is already below 2.0, so "
            "nothing needs to be cut.")


Q2 = Exercise(
    "09.2", names=("predicted_scale",),
    expects="a number",
    check=_predicted_scale,
    hints=("The scale is clip_norm / max(global_norm, clip_norm).",
           "Compare the global norm printed at the top of the chapter with 2.0."),
    solution=("predicted_scale = 1.0\n"
              "# check it:\n"
              "restore_grads()\n"
              "clip2 = optim.ClipGradByGlobalNorm(2.0)\n"
              "clip2(list(net.parameters()), [p.grad.numpy().copy() for p in net.parameters()])\n"
              "print(clip2.last_scale)"))


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
    expects="a list of parameter names",
    check=_shrunk,
    hints=("clip.predict_scales(params) says, without clipping, the factor for each gradient.",
           "A factor below 1 means the tensor is shrunk; pair the factors with names."),
    solution=("restore_grads()\n"
              "scales = optim.ClipGradByNorm(0.5).predict_scales(list(net.parameters()))\n"
              "shrunk = [n for n, s in zip(names, scales) if s < 1]"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5]
