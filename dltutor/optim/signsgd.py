"""SignSGD: the smallest optimizer in the kit, and the example for writing your own."""
from __future__ import annotations

from typing import Any

from .. import backend as B
from ..autograd import Tensor
from .optimizer import Optimizer


class SignSGD(Optimizer):
    """A custom optimizer in six lines: step by the SIGN of the gradient, ``p -= lr * sign(g)``.

    It shows what writing your own optimizer takes here: subclass ``Optimizer``, pass your
    hyperparameters as ``defaults``, and override ``update``. Groups, lr multipliers,
    regularizers, clipping, hooks and checkpoints all work without another line.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0, 1.0])
    >>> opt = SignSGD([w], lr=0.1)
    >>> (w * dt.tensor([5.0, -0.01])).sum().backward(); opt.step()
    >>> w
    Parameter(shape=(2,), dtype=float32)
    tensor([0.9000, 1.1000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: Any = 0.0,
                 grad_clip: Any = None, nonfinite: str = "raise"):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay), grad_clip, nonfinite)

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        param.data -= lr * B.get_array_module(grad).sign(grad)
