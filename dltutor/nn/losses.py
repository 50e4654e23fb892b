"""Loss modules: PyTorch's ``nn.CrossEntropyLoss``, ``nn.MSELoss``, ``nn.L1Loss`` and
``nn.BCEWithLogitsLoss``. Each holds its settings (``reduction=``, ``ignore_index=``) and calls
the function of the same name in ``nn.functional``, so ``nn.MSELoss()(a, b)`` and
``F.mse_loss(a, b)`` are the same number. They have no parameters.

>>> import dltutor as dt
>>> from dltutor import nn
>>> loss_fn = nn.CrossEntropyLoss()
>>> round(loss_fn(dt.zeros(2, 4), dt.tensor([1, 3])).item(), 4)   # log(4)
1.3863
"""
from __future__ import annotations

from typing import Any

from ..autograd.ops import check_reduction
from . import functional as F
from .module import Module


class _Loss(Module):
    """A loss with PyTorch's ``reduction``: "mean" (default), "sum" or "none" (per element)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        check_reduction(type(self).__name__, reduction)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """Cross-entropy of raw scores (N, C) against integer labels (N,): ``F.cross_entropy``.

    >>> import dltutor as dt
    >>> CrossEntropyLoss(reduction="none")(dt.zeros(2, 2), dt.tensor([0, 1])).shape
    (2,)
    """

    def __init__(self, reduction: str = "mean", ignore_index: int = -100):
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:  # PyTorch's names
        return F.cross_entropy(input, target, self.reduction, self.ignore_index)


class MSELoss(_Loss):
    """Mean squared error: ``F.mse_loss``.

    >>> import dltutor as dt
    >>> MSELoss()(dt.tensor([1.0, 3.0]), dt.tensor([0.0, 0.0]))
    tensor(5.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error: ``F.l1_loss``.

    >>> import dltutor as dt
    >>> L1Loss(reduction="sum")(dt.tensor([1.0, -3.0]), dt.tensor([0.0, 0.0]))
    tensor(4.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.l1_loss(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of raw scores, the sigmoid inside:
    ``F.binary_cross_entropy_with_logits``.

    >>> import dltutor as dt
    >>> round(BCEWithLogitsLoss()(dt.tensor([0.0]), dt.tensor([1.0])).item(), 4)   # log(2)
    0.6931
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy_with_logits(input, target, self.reduction)


__all__ = ["CrossEntropyLoss", "MSELoss", "L1Loss", "BCEWithLogitsLoss"]
