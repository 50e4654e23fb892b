"""RMSprop (PyTorch's rule): divide by a moving root-mean-square of recent gradients."""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .. import checks
from ..autograd import Tensor
from .optimizer import Optimizer
from .settings import check_eps


class RMSprop(Optimizer):
    """RMSprop (PyTorch's rule): divide by a moving root-mean-square of recent gradients.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)          # 1 - 0.01 * 2 / sqrt(0.01 * 4)
    0.9
    """

    returns_update = True
    momentum_state = ("momentum_buffer",)      # with momentum > 0

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: Any = 0.0, momentum: float = 0.0, centered: bool = False,
                 maximize: bool = False, grad_clip: Any = None,
                 nonfinite: str = "raise"):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults, grad_clip, nonfinite)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.between("RMSprop", "alpha", group["alpha"], 0, 1)
        check_eps("RMSprop", group["eps"])  # > 0 (settings.py says why)
        checks.non_negative("RMSprop", "momentum", group["momentum"])

    def state_entries(self, group: dict[str, Any]) -> tuple[str, ...]:
        return (("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ())
                + (("grad_avg",) if group["centered"] else ()))

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> Any:
        """RMSprop's step::

            v = alpha * v + (1 - alpha) * g**2
            m = alpha * m + (1 - alpha) * g          # centered only: then avg is sqrt(v - m**2)
            step = g / (sqrt(v) + eps)
            buf = momentum * buf + step               # momentum > 0 only: then step is buf
            return step * lr
        """
        # In place, into the averages and one scratch array: written as the formula above,
        # NumPy would allocate new arrays for every term at every step (benchmarks/RESULTS.md).
        xp = B.get_array_module(param.data)
        alpha, momentum = group["alpha"], group["momentum"]
        if "square_avg" not in state:
            state["square_avg"] = xp.zeros_like(param.data)
        # The others start when first needed: momentum or centered may be switched on by hand
        # or by a load after the first step.
        if momentum > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = xp.zeros_like(param.data)
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = xp.zeros_like(param.data)
        v, tmp = state["square_avg"], self.scratch(param)
        v *= alpha
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - alpha
        v += tmp
        if group["centered"]:                # divide by a standard deviation, not a mean square
            m = state["grad_avg"]
            m *= alpha
            xp.multiply(grad, 1 - alpha, out=tmp)
            m += tmp
            xp.multiply(m, m, out=tmp)
            xp.subtract(v, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)
        else:
            xp.sqrt(v, out=tmp)
        tmp += group["eps"]
        xp.divide(grad, tmp, out=tmp)        # the step
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf *= momentum
            buf += tmp
            return xp.multiply(buf, lr, out=tmp)
        tmp *= lr
        return tmp
