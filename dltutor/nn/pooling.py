"""Pooling layers for images (N, C, H, W): MaxPool2d, AvgPool2d, GlobalAvgPool2d.

>>> import dltutor as dt
>>> MaxPool2d(2)(dt.ones(1, 3, 8, 8)).shape
(1, 3, 4, 4)
"""
from __future__ import annotations

from typing import Any

from ..autograd import Tensor
from . import functional as F
from .module import Module


class _Pool2d(Module):
    """What the pooling layers share: a window size, a stride (the window size by default) and
    padding."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, "
                f"padding={self.padding}")


class MaxPool2d(_Pool2d):
    """Largest value of each ``kernel_size`` window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> MaxPool2d(2)(dt.ones(1, 1, 4, 4)).shape
    (1, 1, 2, 2)
    """

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        # PyTorch prints two more options; dltutor's max pooling always works with these values.
        return super().extra_repr() + ", dilation=1, ceil_mode=False"


class AvgPool2d(_Pool2d):
    """Mean of each ``kernel_size`` window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> AvgPool2d(2)(dt.ones(1, 1, 4, 4)).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class GlobalAvgPool2d(Module):
    """Average each channel over all its pixels: (N, C, H, W) -> (N, C).

    PyTorch writes this as ``AdaptiveAvgPool2d(1)`` followed by ``Flatten()``.

    >>> import dltutor as dt
    >>> GlobalAvgPool2d()(dt.ones(2, 3, 4, 4)).shape
    (2, 3)
    """

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise ValueError(f"GlobalAvgPool2d expects (N, C, H, W), got {tuple(x.shape)}")
        return x.mean(axis=(2, 3))


__all__ = ["MaxPool2d", "AvgPool2d", "GlobalAvgPool2d"]
