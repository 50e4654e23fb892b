"""PyTorch's gradient clipping functions, at PyTorch's address (``torch.nn.utils``):
``clip_grad_norm_(params, max_norm)`` scales all gradients together so that their total norm is
at most ``max_norm`` and returns the total norm before clipping; ``clip_grad_value_(params,
clip_value)`` clamps every gradient value. Paddle's clip objects, which an optimizer takes as
``grad_clip=`` (``optim.ClipGradByGlobalNorm``), are in :mod:`dltutor.optim.clip`; ``optim``
offers these two functions under its name too.

>>> import dltutor as dt
>>> from dltutor import nn
>>> w = nn.Parameter([0.0, 0.0])
>>> w.grad = dt.tensor([3.0, 4.0])            # norm 5
>>> clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from ... import backend as B
from ... import checks
from ...autograd import Tensor
from ...autograd.function import make_tensor
from .norms import device_total_norm, l2_norms, p_norm, total_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "unique_with_grad"]


def unique_with_grad(params: Iterable[Tensor] | Tensor) -> list[Tensor]:
    """Parameters that have a gradient, each once (a tied parameter counts once).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0]); w.grad = dt.tensor([2.0])
    >>> unique_with_grad([w, w, nn.Parameter([0.0])]) == [w]
    True
    """
    if isinstance(params, Tensor):
        params = [params]
    seen, out = set(), []
    for p in params:
        if p.grad is not None and id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients so that their total ``norm_type``-norm is at most ``max_norm``.

    PyTorch's formula: ``total`` is the norm of the per-tensor norms, the scale is
    ``min(1, max_norm / (total + 1e-6))``, and the total before clipping is returned.
    ``norm_type`` may be 2, 1, any p > 0, or ``math.inf`` (the largest absolute value).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> a, b = nn.Parameter([0.0]), nn.Parameter([0.0])
    >>> a.grad, b.grad = dt.tensor([6.0]), dt.tensor([8.0])
    >>> clip_grad_norm_([a, b], 5.0).item()
    10.0
    >>> round(a.grad.item(), 4), round(b.grad.item(), 4)
    (3.0, 4.0)
    """
    # A threshold <= 0 would zero every gradient (or, negative, flip it): PyTorch takes it.
    checks.positive("clip_grad_norm_", "max_norm", max_norm)
    if norm_type != math.inf:
        checks.positive("clip_grad_norm_", "norm_type", norm_type,
                        hint="or math.inf for the largest absolute value")
    norm_type = float(norm_type)
    # (unique_with_grad keeps the parameters that have a gradient: `is not None` tells mypy)
    gradients = [p.grad for p in unique_with_grad(parameters) if p.grad is not None]
    grads = [g.data for g in gradients]
    backend = (B.backend_of(grads[0]) or B.NUMPY) if grads else B.current()
    total: Any
    if grads and not backend.reads_are_free and not error_if_nonfinite:
        # On a GPU: the norm and the factor stay on the device (reading them would make the
        # host wait for the GPU every step); min() of a NaN is NaN and of inf's factor 0.
        total = device_total_norm(grads, norm_type)
        scale = backend.xp.minimum(1.0, max_norm / (total + 1e-6))
    else:
        norms = l2_norms(grads) if norm_type == 2 else [p_norm(g, norm_type) for g in grads]
        total = total_norm(norms, norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(f"clip_grad_norm_: the total norm of the gradients is {total}; "
                               "a NaN or Inf gradient is upstream (find it with "
                               "dt.detect_anomaly()). Pass error_if_nonfinite=False to clip "
                               "anyway.")
        scale = min(1.0, max_norm / (total + 1e-6)) if math.isfinite(total) else max_norm / total
    with backend.ignore_float_errors():    # an inf gradient times 0 is NaN, silently (PyTorch)
        for g in gradients:
            g.data = g.data * scale        # a new array: gradients may share memory
    dtype = gradients[0].dtype if gradients else "float32"
    return make_tensor(backend.asarray(total, dtype=dtype), False, None)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient value to ``[-clip_value, clip_value]``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([0.0, 0.0]); w.grad = dt.tensor([-3.0, 0.5])
    >>> clip_grad_value_([w], 1.0); w.grad.tolist()
    [-1.0, 0.5]
    """
    checks.positive("clip_grad_value_", "clip_value", clip_value)
    for g in [p.grad for p in unique_with_grad(parameters) if p.grad is not None]:
        g.data = B.get_array_module(g.data).clip(g.data, -clip_value, clip_value)
