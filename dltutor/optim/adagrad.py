"""Adagrad (PyTorch's rule): divide by the root of the sum of all past squared gradients."""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .. import checks
from ..autograd import Tensor
from .optimizer import Optimizer
from .settings import check_eps


class Adagrad(Optimizer):
    """Adagrad (PyTorch's rule): divide by the root of the sum of all past squared gradients,
    so often-updated parameters slow down. ``lr_decay`` shrinks the lr as
    ``lr / (1 + (t-1)*decay)``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = Adagrad([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)          # 1 - 0.1 * 2 / sqrt(4)
    0.9
    """

    returns_update = True

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: Any = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False, grad_clip: Any = None,
                 nonfinite: str = "raise"):
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps,
                        maximize=maximize)
        super().__init__(params, defaults, grad_clip, nonfinite)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.non_negative("Adagrad", "lr_decay", group["lr_decay"])
        checks.non_negative("Adagrad", "initial_accumulator_value",
                            group["initial_accumulator_value"])
        check_eps("Adagrad", group["eps"])  # > 0 (settings.py says why)

    def state_entries(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("sum",)

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> Any:
        """Adagrad's step, at step ``t = state["step"]``::

            sum = sum + g**2
            return g / (sqrt(sum) + eps) * (lr / (1 + (t - 1) * lr_decay))
        """
        # In place, into the sum and one scratch array: written as the formula above, NumPy
        # would allocate new arrays for every term at every step (benchmarks/RESULTS.md).
        xp = B.get_array_module(param.data)
        if "sum" not in state:
            state["sum"] = xp.full(param.shape, group["initial_accumulator_value"],
                                   dtype=param.dtype)
        tmp = self.scratch(param)
        xp.multiply(grad, grad, out=tmp)
        state["sum"] += tmp
        xp.sqrt(state["sum"], out=tmp)
        tmp += group["eps"]
        xp.divide(grad, tmp, out=tmp)
        tmp *= lr / (1 + (state["step"] - 1) * group["lr_decay"])
        return tmp
