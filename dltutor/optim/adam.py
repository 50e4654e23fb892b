"""Adam and AdamW (PyTorch's rules), the whole rule in :meth:`Adam.update_param`: Adam adds
weight decay to the gradient, AdamW shrinks the parameter directly (decoupled decay). On a
GPU the same formula runs as one fused kernel, :func:`adam_kernel`."""
from __future__ import annotations

import math
from typing import Any, Callable

from .. import backend as B
from .. import checks
from .device_step import write_unless_refused
from .optimizer import Optimizer, ParamStep, add_weight_decay
from .settings import check_eps
from .regularizer import Regularizer


class Adam(Optimizer):
    """Adam (PyTorch's rule): bias-corrected moving averages of the gradient and its square.

    ``weight_decay`` is coupled L2 (added to the gradient); for decoupled decay use AdamW.
    ``amsgrad=True`` divides by the running maximum of the second moment instead.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = Adam([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 6)
    0.99
    """

    returns_update = True
    momentum_state = ("exp_avg",)

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: Any = 0.0, amsgrad: bool = False,
                 maximize: bool = False, grad_clip: Any = None,
                 nonfinite: str = "raise"):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults, grad_clip, nonfinite)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name = type(self).__name__
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            checks.probability(name, f"betas[{i}]", beta)
        check_eps(name, group["eps"])  # > 0 (settings.py says why)

    def state_entries(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def update_param(self, p: ParamStep, state: dict[str, Any]) -> Any:
        """Adam's (and AdamW's) step for one parameter ``p``, at step ``t = state["step"]``, as
        PyTorch's ``_single_tensor_adam``::

            g = g + weight_decay * param         # Adam's coupled weight decay
            param *= 1 - lr * weight_decay       # AdamW's decoupled one, instead
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g**2
            v_max = maximum(v_max, v)            # amsgrad only: then v_max replaces v below
            return m / (sqrt(v) / sqrt(1 - beta2**t) + eps) * (lr / (1 - beta1**t))

        ``p.lr`` is this parameter's lr (the group's times its ``lr_mult``). Paddle's
        precedence (``decay_parts``) chose ``p.weight_decay``, the coupled decay: the
        parameter's own regularizer, else Adam's ``weight_decay``; ``p.decoupled_decay`` is
        AdamW's (0.0 where ``apply_decay_param_fun`` says no).
        """
        param, group, grad = p.param, p.group, p.grad
        if p.weight_decay is not None:   # in place: the base gave the rule its own copy of g
            grad = add_weight_decay(grad, param.data, p.weight_decay, self.scratch(param))
        if p.decoupled_decay:
            param.data *= 1 - p.lr * p.decoupled_decay
        # In place, into the moments and one scratch array: written as the formula above, NumPy
        # allocates new arrays for every line (benchmarks/RESULTS.md has the cost).
        xp = B.get_array_module(param.data)
        beta1, beta2 = group["betas"]
        if "exp_avg" not in state:
            state["exp_avg"] = xp.zeros_like(param.data)
            state["exp_avg_sq"] = xp.zeros_like(param.data)
        m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        tmp = self.scratch(param)
        m *= beta1
        xp.multiply(grad, 1 - beta1, out=tmp)
        m += tmp
        v *= beta2
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - beta2
        v += tmp
        if group["amsgrad"]:
            if "max_exp_avg_sq" not in state:   # here: amsgrad may be switched on after steps
                state["max_exp_avg_sq"] = xp.zeros_like(param.data)
            v = xp.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
        xp.sqrt(v, out=tmp)                  # the denominator
        tmp /= math.sqrt(1 - beta2 ** t)
        tmp += group["eps"]
        xp.divide(m, tmp, out=tmp)           # the step
        tmp *= p.lr / (1 - beta1 ** t)
        return tmp

    def fused_update(self, p: ParamStep, state: dict[str, Any], refused: Any) -> bool:
        """:meth:`update_param`'s step as one kernel (:func:`adam_kernel`), on a GPU. A
        regularizer object (L1Decay, your own) has no kernel: then False, nothing changed."""
        if isinstance(p.weight_decay, Regularizer):
            return False
        param, group, t = p.param.data, p.group, state["step"]
        xp = B.get_array_module(param)
        for key in self.state_entries(group):     # amsgrad may be switched on after steps
            if key not in state:
                state[key] = xp.zeros_like(param)
        beta1, beta2 = group["betas"]
        B.run_fused(adam_kernel, param, p.grad, state["exp_avg"], state["exp_avg_sq"],
                    state.get("max_exp_avg_sq") if group["amsgrad"] else None, refused,
                    p.weight_decay, 1 - p.lr * p.decoupled_decay if p.decoupled_decay else None,
                    beta1, 1 - beta1, beta2, 1 - beta2, math.sqrt(1 - beta2 ** t),
                    group["eps"], p.lr / (1 - beta1 ** t))
        return True


def adam_kernel(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any,
                max_exp_avg_sq: Any, refused: Any, weight_decay: float | None,
                shrink: float | None, beta1: float, one_minus_beta1: float, beta2: float,
                one_minus_beta2: float, bias2_root: float, eps: float, step_size: float) -> None:
    """:meth:`Adam.update_param` and the base's ``param -= step``, as one elementwise
    formula (``backend.run_fused``: one kernel on a GPU), in the same order of operations, so
    the same bits. The host works out the numbers of step ``t``: ``bias2_root =
    sqrt(1 - beta2**t)``, ``step_size = lr / (1 - beta1**t)``, ``shrink = 1 - lr *
    weight_decay`` (AdamW). None switches a part off: ``weight_decay`` (Adam's coupled decay),
    ``shrink`` (AdamW's decoupled one), ``max_exp_avg_sq`` (no amsgrad). ``refused`` gates the
    writes (device_step.py).

    >>> import numpy as np
    >>> param, m, v = np.array([1.0]), np.zeros(1), np.zeros(1)
    >>> adam_kernel(np, param, np.array([2.0]), m, v, None, None, None, None,
    ...             0.9, 0.1, 0.999, 0.001, (1 - 0.999) ** 0.5, 1e-8, 0.01 / (1 - 0.9))
    >>> param.round(6), m.round(6), v.round(6)        # the first step moves by lr
    (array([0.99]), array([0.2]), array([0.004]))
    """
    g = grad if weight_decay is None else grad + param * weight_decay
    new_param = param if shrink is None else param * shrink
    m = exp_avg * beta1 + g * one_minus_beta1
    v = exp_avg_sq * beta2 + (g * g) * one_minus_beta2
    write_unless_refused(xp, exp_avg, m, refused)
    write_unless_refused(xp, exp_avg_sq, v, refused)
    if max_exp_avg_sq is not None:                   # amsgrad: the running maximum replaces v
        v = xp.maximum(max_exp_avg_sq, v)
        write_unless_refused(xp, max_exp_avg_sq, v, refused)
    denominator = xp.sqrt(v) / bias2_root + eps
    write_unless_refused(xp, param, new_param - m / denominator * step_size, refused)


class AdamW(Adam):
    """Adam with decoupled weight decay (PyTorch's AdamW): first ``p *= 1 - lr * weight_decay``,
    then the Adam step without L2 in the gradient.

    ``apply_decay_param_fun(name) -> bool`` (Paddle) chooses which parameters decay, by their
    structured name (e.g. skip biases: ``lambda name: not name.endswith("bias")``); it needs
    the optimizer to be given names, e.g. ``model.named_parameters()``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> net = nn.Linear(2, 1)
    >>> opt = AdamW(net.named_parameters(), lr=0.1, weight_decay=0.5,
    ...             apply_decay_param_fun=lambda name: name != "bias")
    >>> opt.decay_of("weight").decoupled, opt.decay_of("bias").excluded
    (0.5, True)
    """

    coupled_weight_decay = False    # a number weight_decay shrinks the parameter (decay_parts)

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2,
                 apply_decay_param_fun: Callable[[str], bool] | None = None,
                 amsgrad: bool = False, maximize: bool = False, grad_clip: Any = None,
                 nonfinite: str = "raise"):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize, grad_clip,
                         nonfinite)
        self.apply_decay_param_fun = apply_decay_param_fun
        if apply_decay_param_fun is not None:
            unnamed = [n for n, _, _ in self.param_entries() if n.startswith("#")]
            if unnamed:
                raise ValueError("AdamW: apply_decay_param_fun is called with parameter names, but "
                                 "this optimizer was given parameters without names; pass "
                                 "model.named_parameters()")
        self._decay_by_name: dict[str, bool] = {}

    def decoupled_decay_applies(self, name: str) -> bool:
        """Whether the parameter called ``name`` gets the decoupled weight decay: what
        ``apply_decay_param_fun(name)`` says (asked once per name), True without one."""
        if self.apply_decay_param_fun is None:
            return True
        if name not in self._decay_by_name:
            self._decay_by_name[name] = bool(self.apply_decay_param_fun(name))
        return self._decay_by_name[name]

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        if isinstance(group["weight_decay"], Regularizer):
            raise ValueError("AdamW: weight_decay is the decoupled decay coefficient (a number); "
                             "set an L1Decay/L2Decay on a parameter as its regularizer instead")
