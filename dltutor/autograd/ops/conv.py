"""Convolution and pooling on images (N, C, H, W): ``conv2d``, ``max_pool2d``, ``avg_pool2d``.

Vectorised over pixels: the only Python loops run over the kernel's offsets.

>>> import dltutor as dt
>>> x = dt.ones(1, 1, 4, 4, requires_grad=True)
>>> conv2d(x, dt.ones(1, 1, 3, 3)).sum().backward()
>>> x.grad[0, 0]                      # how many 3x3 windows cover each pixel
tensor([[1., 2., 2., 1.],
        [2., 4., 4., 2.],
        [2., 4., 4., 2.],
        [1., 2., 2., 1.]])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import backend as B
from .. import workspace
from ..function import Function
from .gates import gate

get_array_module = B.get_array_module


def as_pair(value: Any, name: str, minimum: int = 1) -> tuple[int, int]:
    """``value`` as (height, width): an int means both; each must be an integer >=
    ``minimum`` (1 for a kernel size or a stride, 0 for padding).

    >>> as_pair(3, "kernel_size"), as_pair((2, 1), "stride")
    ((3, 3), (2, 1))
    >>> as_pair(-1, "padding", minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: padding must be an integer >= 0 or a pair of them, got -1
    """
    pair = (value, value) if not isinstance(value, (tuple, list)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                                 and n >= minimum for n in pair):
        raise ValueError(f"{name} must be an integer >= {minimum} or a pair of them, got {value!r}")
    return int(pair[0]), int(pair[1])


def _output_size(op: str, size: tuple[int, int], kernel: tuple[int, int],
                 stride: tuple[int, int], padding: tuple[int, int]) -> tuple[int, int]:
    out = ((size[0] + 2 * padding[0] - kernel[0]) // stride[0] + 1,
           (size[1] + 2 * padding[1] - kernel[1]) // stride[1] + 1)
    if out[0] < 1 or out[1] < 1:
        raise ValueError(f"{op}: a {kernel[0]}x{kernel[1]} kernel does not fit an input of "
                         f"{size[0]}x{size[1]} pixels with padding {padding}")
    return out


def _pad(x: Any, padding: tuple[int, int], value: float = 0.0) -> Any:
    if padding == (0, 0):
        return x
    xp = get_array_module(x)
    ph, pw = padding
    return xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _window(kernel_row: int, kernel_col: int, out: tuple[int, int],
            stride: tuple[int, int]) -> tuple[slice, slice]:
    """The (rows, columns) slices of the padded input that kernel offset (row, col) sees at
    every output pixel."""
    return (slice(kernel_row, kernel_row + stride[0] * out[0], stride[0]),
            slice(kernel_col, kernel_col + stride[1] * out[1], stride[1]))


class Conv2d(Function):
    """2-D cross-correlation as ONE matrix product over unfolded patches (im2col).

    The patches of the whole batch are laid out as a (C*KH*KW, OH*OW*N) matrix, so the
    convolution is a single large matrix product instead of N small ones. Inside, the batch
    axis comes last in memory, (C, H, W, N): then a window of the input is long runs of
    memory (OW*N numbers, not OW), so unfolding the patches and folding their gradients back
    copy in large pieces. The output keeps that memory order, seen as (N, O, OH, OW) without
    a copy, so ReLU and pooling after it, and the next convolution, find it there too.
    """

    def __init__(self, stride: tuple[int, int], padding: tuple[int, int]):
        self.stride, self.padding = stride, padding

    def forward(self, x, w, b=None):
        xp = get_array_module(x)
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        self.x_shape, self.w = x.shape, w
        self.out_hw = oh, ow = _output_size("conv2d", (h, wd), (kh, kw), self.stride, self.padding)
        padded = _pad_batch_last(x, self.padding)
        cols = workspace.borrow(xp, (c, kh, kw, oh, ow, n), x.dtype)   # see workspace.py
        self.borrowed = (cols,)
        for i in range(kh):
            for j in range(kw):
                rows, columns = _window(i, j, self.out_hw, self.stride)
                cols[:, i, j] = padded[:, rows, columns, :]
        self.cols = cols.reshape(c * kh * kw, oh * ow * n)
        out = w.reshape(o, -1) @ self.cols                   # (O, OH*OW*N)
        if b is not None:
            out += b.reshape(o, 1)
        return out.reshape(o, oh, ow, n).transpose(3, 0, 1, 2)

    def backward(self, g):
        xp = get_array_module(g)
        inputs = self.inputs
        n, c, h, wd = self.x_shape
        o, _, kh, kw = self.w.shape
        oh, ow = self.out_hw
        g2 = g.transpose(1, 2, 3, 0).reshape(o, -1)           # (O, OH*OW*N), as forward's out
        gw = gb = gx = None
        if inputs[1].requires_grad:
            gw = (g2 @ self.cols.T).reshape(self.w.shape)
        if len(inputs) == 3 and inputs[2].requires_grad:
            gb = g2.sum(axis=1)
        if inputs[0].requires_grad:
            gcols = workspace.borrow(xp, (c, kh, kw, oh, ow, n), g.dtype)
            xp.matmul(self.w.reshape(o, -1).T, g2, out=gcols.reshape(c * kh * kw, -1))
            ph, pw = self.padding
            gpad = xp.zeros((c, h + 2 * ph, wd + 2 * pw, n), dtype=g.dtype)
            for i in range(kh):
                for j in range(kw):
                    rows, columns = _window(i, j, self.out_hw, self.stride)
                    gpad[:, rows, columns, :] += gcols[:, i, j]
            workspace.give_back([gcols])
            gx = gpad[:, ph:ph + h, pw:pw + wd, :].transpose(3, 0, 1, 2)
        return gx, gw, gb


def _pad_batch_last(x: Any, padding: tuple[int, int]) -> Any:
    """``x`` (N, C, H, W) zero-padded, as a C-contiguous (C, H, W, N) array: a view of ``x``
    itself when it is already laid out so (a convolution's output is) and needs no padding."""
    batch_last = x.transpose(1, 2, 3, 0)
    if padding == (0, 0) and batch_last.flags.c_contiguous:
        return batch_last
    xp = get_array_module(x)
    n, c, h, w = x.shape
    ph, pw = padding
    padded = xp.zeros((c, h + 2 * ph, w + 2 * pw, n), dtype=x.dtype)
    padded[:, ph:ph + h, pw:pw + w, :] = batch_last
    return padded


def conv2d(x: Any, weight: Any, bias: Any | None = None, stride: Any = 1,
           padding: Any = 0) -> Any:
    """Convolve ``x`` (N, C, H, W) with ``weight`` (O, C, KH, KW), plus ``bias`` (O,).

    >>> import dltutor as dt
    >>> conv2d(dt.ones(1, 1, 5, 5), dt.ones(2, 1, 3, 3), padding=1).shape
    (1, 2, 5, 5)
    """
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"conv2d: input must be (N, C, H, W) and weight (O, C, KH, KW); got "
                         f"{tuple(x.shape)} and {tuple(weight.shape)}")
    if x.shape[1] != weight.shape[1]:
        raise ValueError(f"conv2d: input has {x.shape[1]} channels but the weight of shape "
                         f"{tuple(weight.shape)} expects {weight.shape[1]}")
    op = Conv2d(as_pair(stride, "conv2d: stride"), as_pair(padding, "conv2d: padding", minimum=0))
    return op.apply(x, weight) if bias is None else op.apply(x, weight, bias)


class Pool2d(Function):
    """What max and average pooling share: every kernel offset's view of the input, and
    adding gradients back through those views."""

    grad_shapes_exact = True

    def __init__(self, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int]):
        self.kernel, self.stride, self.padding = kernel, stride, padding

    def views(self, x, fill):
        """The padded input and each kernel offset's strided view of it (no copies). Keep the
        padded input as ``self.padded``: :meth:`scatter` lays its gradient out like it."""
        self.x_shape = x.shape
        self.out_hw = _output_size(self.op_name, x.shape[2:], self.kernel, self.stride,
                                   self.padding)
        padded = _pad(x, self.padding, fill)
        kh, kw = self.kernel
        return padded, [padded[(slice(None), slice(None)) + _window(i, j, self.out_hw,
                                                                    self.stride)]
                        for i in range(kh) for j in range(kw)]

    def scatter(self, per_offset):
        """Add each kernel offset's gradient back at the pixels it came from."""
        xp = get_array_module(per_offset[0])
        n, c, h, w = self.x_shape
        ph, pw = self.padding
        kh, kw = self.kernel
        # Laid out in memory as the input is (a convolution's output keeps its batch and
        # channels innermost): the next op's backward then walks both in the same order.
        gpad = xp.zeros_like(self.padded, dtype=per_offset[0].dtype)
        for k, grad in enumerate(per_offset):
            gpad[(slice(None), slice(None)) + _window(k // kw, k % kw, self.out_hw,
                                                      self.stride)] += grad
        return gpad[:, :, ph:ph + h, pw:pw + w]


def _in_memory_order_of(like: Any, array: Any) -> Any:
    """``array`` (shaped like ``like``) laid out in memory as ``like`` is: a copy when it is
    not. Pooling's backward multiplies the gradient with masks four times; in one memory
    order, each product walks both arrays in step (in two orders, it is several times slower)."""
    if array.strides == like.strides:
        return array
    copy = get_array_module(like).empty_like(like)
    copy[...] = array
    return copy


def _pool(cls: type, op: str, x: Any, kernel_size: Any, stride: Any, padding: Any) -> Any:
    """Check the arguments of pooling op ``op`` and run pooling class ``cls``."""
    if x.ndim != 4:
        raise ValueError(f"{op}: input must be (N, C, H, W), got {tuple(x.shape)}")
    kernel = as_pair(kernel_size, f"{op}: kernel_size")
    stride = kernel if stride is None else as_pair(stride, f"{op}: stride")
    padding = as_pair(padding, f"{op}: padding", minimum=0)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel size {kernel}")
    return cls(kernel, stride, padding).apply(x)


class MaxPool2d(Pool2d):
    """Largest value of each window. Backward follows PyTorch: scanning a window's real pixels
    row by row, the first maximum gets the whole gradient (padding never does); in a window
    holding NaN (whose maximum is NaN), the last NaN gets it."""

    def forward(self, x):
        xp = get_array_module(x)
        self.padded, self.windows = self.views(x, -xp.inf)
        # Which positions of each view are real pixels, not padding (None: no padding).
        self.real = (None if self.padding == (0, 0)
                     else self.views(xp.ones(x.shape, dtype=bool), False)[1])
        out = self.windows[0].copy(order="K")      # in the input's memory order
        for view in self.windows[1:]:
            xp.maximum(out, view, out=out)
        self.out = out
        return out

    def backward(self, g):
        xp = get_array_module(g)
        g = _in_memory_order_of(self.out, g)
        hits = self._first_hits(lambda view: view == self.out, xp.ones_like(self.out, dtype=bool))
        nan_windows = xp.isnan(self.out)
        # (on a GPU asking whether any window holds NaN would make the host wait: it does not ask)
        if not B.reads_are_free(g) or nan_windows.any():
            last_nans = self._first_hits(xp.isnan, nan_windows, reverse=True)
            hits = [a | b for a, b in zip(hits, last_nans)]
        return (self.scatter([gate(g, hit) for hit in hits]),)

    def _first_hits(self, matches, open_windows, reverse=False):
        """Per kernel offset, the windows where this offset is the first real pixel (in scan
        order, or reversed) for which ``matches(view)`` holds; each window is claimed once."""
        hits = [None] * len(self.windows)
        order = range(len(self.windows))
        for k in (reversed(order) if reverse else order):
            hit = matches(self.windows[k]) & open_windows
            if self.real is not None:
                hit &= self.real[k]
            open_windows = open_windows & ~hit
            hits[k] = hit
        return hits


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
    """Largest value in each window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> max_pool2d(dt.arange(16).float().reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _pool(MaxPool2d, "max_pool2d", x, kernel_size, stride, padding)


class AvgPool2d(Pool2d):
    """The mean of each window: every position of a window gets an equal share of its
    gradient, ``g / (kh * kw)``."""

    def forward(self, x):
        self.padded, windows = self.views(x, 0.0)
        out = windows[0].copy(order="K")
        for view in windows[1:]:
            out += view
        return out / len(windows)  # padding counts, as PyTorch's default

    def backward(self, g):
        share = g / (self.kernel[0] * self.kernel[1])
        return (self.scatter([share] * (self.kernel[0] * self.kernel[1])),)


def avg_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Any:
    """Mean of each window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> avg_pool2d(dt.ones(1, 1, 4, 4), 2).shape
    (1, 1, 2, 2)
    """
    return _pool(AvgPool2d, "avg_pool2d", x, kernel_size, stride, padding)
