"""RMSprop (PyTorch's rule): divide by a moving root-mean-square of recent gradients."""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .. import checks
from ..autograd.tensor import Tensor
from .optimizer import Optimizer


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

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: Any = 0.0, momentum: float = 0.0, centered: bool = False,
                 maximize: bool = False, grad_clip: Any = None):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults, grad_clip)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.between("RMSprop", "alpha", group["alpha"], 0, 1)
        checks.non_negative("RMSprop", "eps", group["eps"])
        checks.non_negative("RMSprop", "momentum", group["momentum"])

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> Any:
        xp = B.get_array_module(param.data)
        alpha = group["alpha"]
        if "square_avg" not in state:
            state["square_avg"] = xp.zeros_like(param.data)
            if group["momentum"] > 0:
                state["momentum_buffer"] = xp.zeros_like(param.data)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(param.data)
        square_avg = state["square_avg"]
        tmp = self.scratch(param)
        square_avg *= alpha                 # E[g^2] = alpha * E[g^2] + (1 - alpha) * g^2
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - alpha
        square_avg += tmp
        if group["centered"]:               # subtract E[g]^2: divide by a standard deviation
            grad_avg = state["grad_avg"]
            grad_avg *= alpha
            xp.multiply(grad, 1 - alpha, out=tmp)
            grad_avg += tmp
            xp.multiply(grad_avg, grad_avg, out=tmp)
            xp.subtract(square_avg, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)
        else:
            xp.sqrt(square_avg, out=tmp)
        tmp += group["eps"]
        xp.divide(grad, tmp, out=tmp)       # g / avg
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += tmp
            xp.multiply(buf, lr, out=tmp)
        else:
            tmp *= lr
        return tmp
