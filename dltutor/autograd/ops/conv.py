"""Convolution and pooling on images (N, C, H, W): ``conv2d``, ``max_pool2d``, ``avg_pool2d``.

Vectorised over pixels. The convolution gathers its patches and adds their gradients back with
a fixed number of array operations, whatever the kernel's size (stride tricks: see
:func:`patch_view` and :func:`fold_patches`); pooling's Python loops run over the kernel's
offsets.

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

from typing import TYPE_CHECKING, Any

import numpy as np

from ... import backend as B
from .. import workspace
from ..arrays import Array
from ..function import Function
from .gates import gate

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

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


def _pad(x: Array, padding: tuple[int, int], value: float = 0.0) -> Array:
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


def patch_view(padded: Array, kernel: tuple[int, int], stride: tuple[int, int],
               out: tuple[int, int]) -> Array:
    """Every window of ``padded`` (C, H, W, N) as one (C, KH, KW, OH, OW, N) view, no copy.

    Entry (c, i, j, oy, ox, n) is pixel (oy*stride + i, ox*stride + j) of channel c of image n.
    An array finds an entry by its strides, the bytes one step along each axis moves: here a
    step of i moves one row (the row stride of ``padded``), a step of oy moves ``stride`` rows.
    So the view is ``padded``'s memory with the strides (channel, row, column, stride*row,
    stride*column, batch), and copying it once writes the whole patch matrix. In one
    dimension, windows of 3 over 5 numbers (8 bytes each):

    >>> import numpy as np
    >>> from numpy.lib.stride_tricks import as_strided
    >>> as_strided(np.arange(5.0), shape=(3, 3), strides=(8, 8))
    array([[0., 1., 2.],
           [1., 2., 3.],
           [2., 3., 4.]])

    Windows overlap, so entries of the view share memory: read it, never write to it.
    """
    xp = get_array_module(padded)
    channel, row, column, batch = padded.strides
    return xp.lib.stride_tricks.as_strided(
        padded, (padded.shape[0], kernel[0], kernel[1], out[0], out[1], padded.shape[3]),
        (channel, row, column, stride[0] * row, stride[1] * column, batch))


def fold_patches(gcols: Array, size: tuple[int, int], stride: tuple[int, int],
                 padding: tuple[int, int]) -> Array:
    """The gradient of the input (C, H, W, N) from that of the patches ``gcols`` (C, KH, KW,
    OH, OW, N): each pixel gets the sum of the gradients of every patch entry that was a copy
    of it. One copy and one sum, whatever the kernel's size.

    Kernel offset (i, j) copied pixel (oy*stride + i, ox*stride + j) into window (oy, ox). So
    each offset gets a zeroed image of its own; one strided view of those images puts every
    window's gradient back on the pixel its offset took it from (a step of the offset moves
    one image and one pixel on), written once; summing the images over the offsets gives each
    pixel all its shares. In one dimension, 4 pixels and a kernel of 2, so 3 windows, with
    ``g[i, o]`` the gradient of offset i in window o:

    >>> import numpy as np
    >>> from numpy.lib.stride_tricks import as_strided
    >>> g = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    >>> images = np.zeros((2, 4))                      # one image of 4 pixels per offset
    >>> image, pixel = images.strides
    >>> as_strided(images, shape=(2, 3), strides=(image + pixel, pixel))[:] = g
    >>> images
    array([[ 1.,  2.,  3.,  0.],
           [ 0., 10., 20., 30.]])
    >>> images.sum(axis=0)
    array([ 1., 12., 23., 30.])

    With a stride s a step of the window moves s pixels, and padding only shifts where the real
    pixels start. (On NumPy the sum gives the same bits as the loop it replaced, which added
    the offsets one after another.)
    """
    xp = get_array_module(gcols)
    c, kh, kw, _, _, n = gcols.shape
    (sh, sw), (ph, pw) = stride, padding
    images = _borrow_images(xp, (c, kh, kw, size[0] + 2 * ph, size[1] + 2 * pw, n), gcols.dtype,
                            stride)
    channel, offset_row, offset_column, row, column, batch = images.strides
    # Entry (c, i, j, oy, ox, n) of this view is pixel (oy*sh + i, ox*sw + j) of image (i, j);
    # no two entries share memory, so writing to it is safe.
    on_their_pixels = xp.lib.stride_tricks.as_strided(
        images, gcols.shape,
        (channel, offset_row + row, offset_column + column, sh * row, sw * column, batch))
    on_their_pixels[...] = gcols
    gx = images[:, :, :, ph:ph + size[0], pw:pw + size[1]].sum(axis=(1, 2))
    _give_back_images(images, stride)
    return gx


# The images fold_patches writes in, kept from one step to the next: one per (array module,
# shape, dtype, stride), at most KEPT_IMAGES. Only the places its view picks are ever written
# (the same ones every time), so every other place keeps the zero it was made with: clearing
# them every step would cost more than the whole fold. Borrowed by popping, so two folds at
# once (threads) never share one.
KEPT_IMAGES = 8
_images: dict[tuple, Array] = {}


def _borrow_images(xp: Any, shape: tuple[int, ...], dtype: Any, stride: tuple[int, int]) -> Array:
    images = _images.pop((xp, shape, np.dtype(dtype), stride), None)
    return xp.zeros(shape, dtype=dtype) if images is None else images


def _give_back_images(images: Array, stride: tuple[int, int]) -> None:
    if len(_images) >= KEPT_IMAGES:
        del _images[next(iter(_images))]          # the one kept longest
    _images[(get_array_module(images), images.shape, np.dtype(images.dtype), stride)] = images


class Conv2d(Function):
    """2-D cross-correlation as ONE matrix product over unfolded patches (im2col).

    The patches of the whole batch are laid out as a (C*KH*KW, OH*OW*N) matrix, so the
    convolution is a single large matrix product instead of N small ones. Unfolding the
    patches is one copy of a strided view (:func:`patch_view`), folding their gradients back
    one copy and one sum (:func:`fold_patches`): a 7x7 kernel costs no more array operations
    than a 3x3, which matters on a GPU, where each is a kernel launch. Inside, the batch axis
    comes last in memory, (C, H, W, N): then a window of the input is long runs of memory
    (OW*N numbers, not OW), so those copies move large pieces. The output keeps that memory
    order, seen as (N, O, OH, OW) without a copy, so ReLU and pooling after it, and the next
    convolution, find it there too.
    """

    def __init__(self, stride: tuple[int, int], padding: tuple[int, int]):
        self.stride, self.padding = stride, padding

    def forward(self, x: Array, w: Array, b: Array | None = None) -> Array:
        xp = get_array_module(x)
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        self.x_shape, self.w = x.shape, w
        self.out_hw = oh, ow = _output_size("conv2d", (h, wd), (kh, kw), self.stride, self.padding)
        padded = _pad_batch_last(x, self.padding)
        cols = workspace.borrow(xp, (c, kh, kw, oh, ow, n), x.dtype)   # see workspace.py
        self.borrowed = (cols,)
        cols[...] = patch_view(padded, (kh, kw), self.stride, self.out_hw)
        self.cols = cols.reshape(c * kh * kw, oh * ow * n)
        out = w.reshape(o, -1) @ self.cols                   # (O, OH*OW*N)
        if b is not None:
            out += b.reshape(o, 1)
        return out.reshape(o, oh, ow, n).transpose(3, 0, 1, 2)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
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
            gx = fold_patches(gcols, (h, wd), self.stride, self.padding).transpose(3, 0, 1, 2)
            workspace.give_back([gcols])
        return gx, gw, gb


def _pad_batch_last(x: Array, padding: tuple[int, int]) -> Array:
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


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0) -> Tensor:
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


def _in_memory_order_of(like: Array, array: Array) -> Array:
    """``array`` (shaped like ``like``) laid out in memory as ``like`` is: a copy when it is
    not. Pooling's backward multiplies the gradient with masks four times; in one memory
    order, each product walks both arrays in step (in two orders, it is several times slower)."""
    if array.strides == like.strides:
        return array
    copy = get_array_module(like).empty_like(like)
    copy[...] = array
    return copy


def _pool(cls: type, op: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any) -> Tensor:
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

    def forward(self, x: Array) -> Array:
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

    def backward(self, g: Array) -> tuple[Array | None, ...]:
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


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
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

    def forward(self, x: Array) -> Array:
        self.padded, windows = self.views(x, 0.0)
        out = windows[0].copy(order="K")
        for view in windows[1:]:
            out += view
        return out / len(windows)  # padding counts, as PyTorch's default

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        share = g / (self.kernel[0] * self.kernel[1])
        return (self.scatter([share] * (self.kernel[0] * self.kernel[1])),)


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """Mean of each window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> avg_pool2d(dt.ones(1, 1, 4, 4), 2).shape
    (1, 1, 2, 2)
    """
    return _pool(AvgPool2d, "avg_pool2d", x, kernel_size, stride, padding)
