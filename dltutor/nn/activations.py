"""Layers without parameters that transform each value or reshape: the activations (ReLU,
LeakyReLU, Tanh, Sigmoid, GELU, Softmax, LogSoftmax), Dropout, Flatten and Identity.

>>> import dltutor as dt
>>> ReLU()(dt.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""
from __future__ import annotations

from typing import Any

from .. import autograd as ag
from ..autograd import Tensor
from ..autograd.ops.gelu import APPROXIMATIONS
from . import functional as F
from .module import Module


class ReLU(Module):
    """``max(x, 0)``."""

    def forward(self, x: Tensor) -> Tensor:
        return ag.relu(x)


class LeakyReLU(Module):
    """``x`` for positive inputs, ``negative_slope * x`` otherwise."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return ag.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x: Tensor) -> Tensor:
        return ag.tanh(x)


class Sigmoid(Module):
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""

    def forward(self, x: Tensor) -> Tensor:
        return ag.sigmoid(x)


class GELU(Module):
    """``x * Phi(x)`` where Phi is the standard normal CDF (``approximate="tanh"`` for the
    tanh formula), as in PyTorch.

    >>> import dltutor as dt
    >>> round(GELU()(dt.tensor([1.0])).item(), 4)
    0.8413
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in APPROXIMATIONS:      # refused now, not at the first forward
            raise ValueError(f"GELU approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return ag.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """Softmax along ``dim``.

    >>> import dltutor as dt
    >>> Softmax(dim=1)(dt.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim`` (what ``nn.NLLLoss`` expects in PyTorch).

    >>> import dltutor as dt
    >>> LogSoftmax(dim=1)(dt.zeros(1, 2))
    tensor([[-0.6931, -0.6931]])
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.log_softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Dropout(Module):
    """Zero each element with probability ``p`` while training (scaling the rest by 1/(1-p));
    do nothing in eval mode.

    >>> import dltutor as dt
    >>> drop = Dropout(0.5).eval()
    >>> drop(dt.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout probability must be between 0 and 1, got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace=False"     # (PyTorch's option; dltutor never works in place)


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` (from 1 by default, keeping the batch axis).

    >>> import dltutor as dt
    >>> Flatten()(dt.ones(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. to switch a layer off)."""

    def forward(self, x: Any) -> Any:
        return x


__all__ = ["ReLU", "LeakyReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax", "Dropout",
           "Flatten", "Identity"]
