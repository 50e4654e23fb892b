"""Ops that neural-network layers are made of: losses, convolution, pooling, dropout, embedding
lookup and the batch-norm arithmetic. ``dltutor.nn.functional`` exposes them to learners.

Each is one :class:`Function` whose backward is written out by hand (and checked against finite
differences in the tests), which is both faster and easier to read than a chain of small ops.

>>> import dltutor as dt
>>> logits = dt.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
>>> loss = cross_entropy(logits, dt.tensor([0]))
>>> round(loss.item(), 4)
0.2413
"""
from __future__ import annotations

import warnings
from typing import Any

from .. import backend as B
from .creation import generator
from .ops import lift, reshape, permute, mean, var, sqrt
from .tensor import Function, Tensor, _make

get_array_module = B.get_array_module


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------
_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


class CrossEntropy(Function):
    """Softmax + negative log-likelihood of integer labels, fused and stable.

    ``valid`` is a mask of the labels that count (None when no label is ``ignore_index``,
    which skips the masking work on the usual path).
    """

    def __init__(self, labels: Any, reduction: str, valid: Any):
        self.labels, self.reduction, self.valid = labels, reduction, valid

    def forward(self, logits):
        xp = get_array_module(logits)
        shifted = logits - logits.max(axis=1, keepdims=True)
        self.log_probs = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
        self.rows = xp.arange(logits.shape[0])
        losses = -self.log_probs[self.rows, self.labels]
        if self.valid is not None:
            losses *= self.valid
        if self.reduction == "none":
            return losses
        total = losses.sum(keepdims=True).reshape(())
        if self.reduction == "sum":
            return total
        # A Python int: dividing a float32 array by a NumPy int64 scalar would give float64.
        self.count = logits.shape[0] if self.valid is None else int(self.valid.sum())
        return total / self.count

    def backward(self, g):
        xp = get_array_module(g)
        grad = xp.exp(self.log_probs)                 # softmax
        grad[self.rows, self.labels] -= 1             # minus the one-hot labels
        if self.valid is not None:
            grad *= self.valid[:, None]
        if self.reduction == "none":
            return (grad * g[:, None],)
        if self.reduction == "mean":
            return (grad * (g / self.count),)
        return (grad * g,)


def _check_labels(labels: Any, n: int, classes: int, ignore_index: int) -> Any:
    """Check the labels; return the mask of labels that count, or None if all of them do."""
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: labels must be integer class indices (got {labels.dtype});"
                        " make them with dt.tensor(labels, dtype=dt.int64)")
    if labels.shape != (n,):
        raise ValueError(f"cross_entropy: logits of shape ({n}, {classes}) need labels of shape "
                         f"({n},), got {tuple(labels.shape)}")
    if n == 0 or (0 <= int(labels.min()) and int(labels.max()) < classes):
        return None  # the usual case, found with two cheap reductions
    valid = labels != ignore_index
    used = labels[valid]
    if used.size and (int(used.min()) < 0 or int(used.max()) >= classes):
        bad = int(used.min()) if int(used.min()) < 0 else int(used.max())
        raise ValueError(f"cross_entropy: label {bad} is out of range for {classes} classes "
                         f"(labels must be in 0..{classes - 1})")
    return valid


def cross_entropy(logits: Tensor, labels: Any, reduction: str = "mean",
                  ignore_index: int = -100) -> Tensor:
    """Cross-entropy between raw scores ``logits`` (N, C) and integer ``labels`` (N,).

    Applies log-softmax itself (pass raw scores, not probabilities). ``reduction`` is
    ``"mean"`` (over labels that are not ``ignore_index``), ``"sum"`` or ``"none"``.
    Extra dimensions (N, C, d1, ...) with labels (N, d1, ...) work as in PyTorch.

    >>> import dltutor as dt
    >>> round(cross_entropy(dt.zeros(2, 4), dt.tensor([1, 3])).item(), 4)   # log(4)
    1.3863
    """
    _check_reduction("cross_entropy", reduction)
    label_data = labels.data if isinstance(labels, Tensor) else lift(labels, logits).data
    if logits.ndim < 2:
        raise ValueError(f"cross_entropy: logits must have shape (N, C), got {tuple(logits.shape)}")
    if logits.ndim > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        classes = logits.shape[1]
        order = (0,) + tuple(range(2, logits.ndim)) + (1,)
        logits = reshape(permute(logits, order), -1, classes)
        label_data = label_data.reshape(-1)
    n, classes = logits.shape
    valid = _check_labels(label_data, n, classes, ignore_index)
    if valid is not None:  # ignored rows look up class 0, then count for nothing
        label_data = get_array_module(label_data).where(valid, label_data, 0)
    return CrossEntropy(label_data, reduction, valid)(logits)


class MSELoss(Function):
    def __init__(self, reduction: str):
        self.reduction = reduction

    def forward(self, a, b):
        self.diff = a - b
        squares = self.diff * self.diff
        if self.reduction == "none":
            return squares
        self.count = squares.size
        total = squares.sum(keepdims=True).reshape(())
        return total / self.count if self.reduction == "mean" else total

    def backward(self, g):
        scale = 2 / self.count if self.reduction == "mean" else 2
        ga = self.diff * (g * scale)
        return ga, -ga


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error ``mean((input - target) ** 2)``.

    Shapes that differ are broadcast, as in PyTorch, with a warning: (5, 1) against (5,)
    compares every prediction with every target, which is almost never what you want.

    >>> import dltutor as dt
    >>> mse_loss(dt.tensor([1.0, 3.0]), dt.tensor([0.0, 0.0]))
    tensor(5.)
    """
    _check_reduction("mse_loss", reduction)
    target = lift(target, input)
    if target.shape != input.shape:
        warnings.warn(f"mse_loss: input shape {tuple(input.shape)} and target shape "
                      f"{tuple(target.shape)} differ and will be broadcast; reshape one of them "
                      "if that is not what you meant", UserWarning, stacklevel=2)
    return MSELoss(reduction)(input, target)


# ---------------------------------------------------------------------------------------------
# Dropout and embedding
# ---------------------------------------------------------------------------------------------
class Dropout(Function):
    def __init__(self, mask: Any):
        self.mask = mask

    def forward(self, a):
        return a * self.mask

    def backward(self, g):
        return (g * self.mask,)


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Off (returns ``x`` itself) when ``training`` is False or ``p`` is 0.

    >>> import dltutor as dt
    >>> _ = dt.manual_seed(0)
    >>> y = dropout(dt.ones(1000), p=0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be between 0 and 1, got {p}")
    if not training or p == 0:
        return x
    keep = generator().random(tuple(x.shape)) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    backend = B.backend_of(x.data)
    mask = backend.asarray(keep * scale, dtype=x.data.dtype)
    return Dropout(mask)(x)


class Embedding(Function):
    def __init__(self, indices: Any, padding_idx: int | None):
        self.indices, self.padding_idx = indices, padding_idx

    def forward(self, weight):
        self.table_shape = weight.shape
        return weight[self.indices]

    def backward(self, g):
        xp = get_array_module(g)
        grad = xp.zeros(self.table_shape, dtype=g.dtype)
        B.scatter_add(grad, self.indices, g)  # a row looked up twice gets both gradients
        if self.padding_idx is not None:
            grad[self.padding_idx] = 0
        return (grad,)


def embedding(indices: Any, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Look up rows of ``weight`` (num_embeddings, dim) for integer ``indices`` of any shape.

    The row at ``padding_idx`` receives no gradient.

    >>> import dltutor as dt
    >>> table = dt.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> embedding(dt.tensor([[2, 1]]), table)
    tensor([[[3., 4.],
             [1., 2.]]])
    """
    data = indices.data if isinstance(indices, Tensor) else lift(indices, weight).data
    if data.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got {data.dtype}")
    rows = weight.shape[0]
    if data.size and (int(data.min()) < -rows or int(data.max()) >= rows):
        bad = int(data.max()) if int(data.max()) >= rows else int(data.min())
        raise IndexError(f"embedding: index {bad} is out of range for a table of {rows} rows "
                         f"(valid: 0..{rows - 1})")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += rows
    return Embedding(data, padding_idx)(weight)


# ---------------------------------------------------------------------------------------------
# Convolution and pooling (vectorised over pixels; loops only over the kernel's offsets)
# ---------------------------------------------------------------------------------------------
def _pair(value: Any, name: str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(value)
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {value}")
    return int(value[0]), int(value[1])


def _output_size(op: str, size: tuple[int, int], kernel: tuple[int, int],
                 stride: tuple[int, int], padding: tuple[int, int]) -> tuple[int, int]:
    out = tuple((size[i] + 2 * padding[i] - kernel[i]) // stride[i] + 1 for i in range(2))
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
            stride: tuple[int, int]) -> tuple:
    """The slice of the padded input that kernel offset (row, col) sees at every output pixel."""
    return (slice(None), slice(None),
            slice(kernel_row, kernel_row + stride[0] * out[0], stride[0]),
            slice(kernel_col, kernel_col + stride[1] * out[1], stride[1]))


class Conv2d(Function):
    """2-D cross-correlation as ONE matrix product over unfolded patches (im2col).

    The patches of the whole batch are laid out as a (C*KH*KW, N*OH*OW) matrix, so the
    convolution is a single large matrix product instead of N small ones.
    """

    def __init__(self, stride: tuple[int, int], padding: tuple[int, int]):
        self.stride, self.padding = stride, padding

    def forward(self, x, w, b=None):
        xp = get_array_module(x)
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        self.x_shape, self.w = x.shape, w
        self.out_hw = oh, ow = _output_size("conv2d", (h, wd), (kh, kw), self.stride, self.padding)
        padded = _pad(x, self.padding).transpose(1, 0, 2, 3)  # channels first: (C, N, H, W)
        cols = xp.empty((c, kh, kw, n, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, i, j] = padded[_window(i, j, self.out_hw, self.stride)]
        self.cols = cols.reshape(c * kh * kw, n * oh * ow)
        out = w.reshape(o, -1) @ self.cols                    # (O, N*OH*OW)
        if b is not None:
            out += b.reshape(o, 1)
        return out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3)

    def backward(self, g):
        xp = get_array_module(g)
        inputs = self.inputs
        n, c, h, wd = self.x_shape
        o, _, kh, kw = self.w.shape
        oh, ow = self.out_hw
        g2 = g.transpose(1, 0, 2, 3).reshape(o, -1)            # (O, N*OH*OW)
        gw = gb = gx = None
        if inputs[1].requires_grad:
            gw = (g2 @ self.cols.T).reshape(self.w.shape)
        if len(inputs) == 3 and inputs[2].requires_grad:
            gb = g2.sum(axis=1)
        if inputs[0].requires_grad:
            gcols = (self.w.reshape(o, -1).T @ g2).reshape(c, kh, kw, n, oh, ow)
            ph, pw = self.padding
            gpad = xp.zeros((c, n, h + 2 * ph, wd + 2 * pw), dtype=g.dtype)
            for i in range(kh):
                for j in range(kw):
                    gpad[_window(i, j, self.out_hw, self.stride)] += gcols[:, i, j]
            gx = gpad[:, :, ph:ph + h, pw:pw + wd].transpose(1, 0, 2, 3)
        return gx, gw, gb


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
    op = Conv2d(_pair(stride, "stride"), _pair(padding, "padding"))
    return op(x, weight) if bias is None else op(x, weight, bias)


class _Pool2d(Function):
    def __init__(self, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int]):
        self.kernel, self.stride, self.padding = kernel, stride, padding

    def views(self, x, fill):
        """Each kernel offset's strided view of the padded input (no copies)."""
        self.x_shape = x.shape
        self.out_hw = _output_size(self.op_name, x.shape[2:], self.kernel, self.stride,
                                   self.padding)
        padded = _pad(x, self.padding, fill)
        kh, kw = self.kernel
        return [padded[_window(i, j, self.out_hw, self.stride)]
                for i in range(kh) for j in range(kw)]

    def scatter(self, per_offset):
        """Add each kernel offset's gradient back at the pixels it came from."""
        xp = get_array_module(per_offset[0])
        n, c, h, w = self.x_shape
        ph, pw = self.padding
        kh, kw = self.kernel
        gpad = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=per_offset[0].dtype)
        for k, grad in enumerate(per_offset):
            gpad[_window(k // kw, k % kw, self.out_hw, self.stride)] += grad
        return gpad[:, :, ph:ph + h, pw:pw + w]


class MaxPool2d(_Pool2d):
    def forward(self, x):
        xp = get_array_module(x)
        self.windows = self.views(x, -xp.inf)
        out = self.windows[0].copy()
        for view in self.windows[1:]:
            xp.maximum(out, view, out=out)
        self.out = out
        return out

    def backward(self, g):
        # The first offset holding the maximum gets the gradient, as in PyTorch.
        unclaimed = get_array_module(g).ones(g.shape, dtype=bool)
        per_offset = []
        for view in self.windows:
            hit = (view == self.out) & unclaimed
            unclaimed &= ~hit
            per_offset.append(g * hit)
        return (self.scatter(per_offset),)


class AvgPool2d(_Pool2d):
    def forward(self, x):
        windows = self.views(x, 0.0)
        out = windows[0].copy()
        for view in windows[1:]:
            out += view
        return out / len(windows)  # padding counts, as PyTorch's default

    def backward(self, g):
        share = g / (self.kernel[0] * self.kernel[1])
        return (self.scatter([share] * (self.kernel[0] * self.kernel[1])),)


def _pool(cls: type, x: Tensor, kernel_size: Any, stride: Any, padding: Any) -> Tensor:
    if x.ndim != 4:
        raise ValueError(f"{cls.__name__.lower()}: input must be (N, C, H, W), got "
                         f"{tuple(x.shape)}")
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    padding = _pair(padding, "padding")
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"padding {padding} must be at most half the kernel size {kernel}")
    return cls(kernel, stride, padding)(x)


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """Largest value in each window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> max_pool2d(dt.arange(16).float().reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _pool(MaxPool2d, x, kernel_size, stride, padding)


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """Mean of each window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> avg_pool2d(dt.ones(1, 1, 4, 4), 2).shape
    (1, 1, 2, 2)
    """
    return _pool(AvgPool2d, x, kernel_size, stride, padding)


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------
class BatchNorm(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (axis 1).

    With ``use_batch_stats`` the mean and (biased) variance come from the batch and the
    gradient flows through them; otherwise the given running statistics are constants.
    """

    def __init__(self, use_batch_stats: bool, mean: Any, var: Any, eps: float):
        self.use_batch_stats, self.mean, self.var, self.eps = use_batch_stats, mean, var, eps

    def forward(self, x, w, b):
        xp = get_array_module(x)
        self.axes = (0,) + tuple(range(2, x.ndim))
        shape = [1] * x.ndim
        shape[1] = x.shape[1]
        self.channel_shape = tuple(shape)
        if self.use_batch_stats:
            self.mean = x.mean(axis=self.axes, keepdims=True)
            self.var = x.var(axis=self.axes, keepdims=True)
        else:  # running statistics, in the input's dtype
            self.mean = self.mean.reshape(self.channel_shape).astype(x.dtype, copy=False)
            self.var = self.var.reshape(self.channel_shape).astype(x.dtype, copy=False)
        self.inv_std = 1 / xp.sqrt(self.var + self.eps)
        self.xhat = (x - self.mean) * self.inv_std
        self.w = w.reshape(self.channel_shape)
        return self.xhat * self.w + b.reshape(self.channel_shape)

    def backward(self, g):
        inputs = self.inputs
        gxhat = g * self.w
        gx = gw = gb = None
        if inputs[0].requires_grad:
            if self.use_batch_stats:
                count = g.size // g.shape[1]
                gx = (self.inv_std / count) * (
                    count * gxhat - gxhat.sum(axis=self.axes, keepdims=True)
                    - self.xhat * (gxhat * self.xhat).sum(axis=self.axes, keepdims=True))
            else:
                gx = gxhat * self.inv_std
        if inputs[1].requires_grad:
            gw = (g * self.xhat).sum(axis=self.axes)
        if inputs[2].requires_grad:
            gb = g.sum(axis=self.axes)
        return gx, gw, gb


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (axis 1) of ``x`` (N, C) or (N, C, H, W).

    ``training=True`` uses the batch's statistics and, when running buffers are given, updates
    them in place: ``running = (1 - momentum) * running + momentum * batch`` (PyTorch's
    convention), with the unbiased batch variance. ``training=False`` uses the running buffers.

    >>> import dltutor as dt
    >>> x = dt.tensor([[1.0], [3.0]])
    >>> rm, rv = dt.zeros(1), dt.ones(1)
    >>> batch_norm(x, rm, rv, training=True)
    tensor([[-1.],
            [ 1.]])
    >>> rm, rv     # moved 10% of the way to the batch mean 2 and unbiased variance 2
    (tensor([0.2]), tensor([1.1]))
    """
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input must be (N, C, ...), got {tuple(x.shape)}")
    channels = x.shape[1]
    xp = get_array_module(x.data)
    if weight is None:
        weight = _make(xp.ones(channels, dtype=x.data.dtype), False, None)
    if bias is None:
        bias = _make(xp.zeros(channels, dtype=x.data.dtype), False, None)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.shape != (channels,):
            raise ValueError(f"batch_norm: {name} has shape {tuple(t.shape)} but the input has "
                             f"{channels} channels (shape {tuple(x.shape)})")
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False needs running_mean and running_var")
        op = BatchNorm(False, running_mean.data, running_var.data, eps)
        return op(x, weight, bias)
    count = x.data.size // channels
    if count < 2:
        raise ValueError(f"batch_norm: training needs more than one value per channel to compute "
                         f"a variance, got input shape {tuple(x.shape)}")
    op = BatchNorm(True, None, None, eps)
    out = op(x, weight, bias)
    if running_mean is not None and running_var is not None:
        batch_mean = op.mean.reshape(channels)
        batch_var = op.var.reshape(channels) * (count / (count - 1))
        running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * batch_mean
        running_var.data[...] = (1 - momentum) * running_var.data + momentum * batch_var
    return out


def layer_norm(x: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions of each sample.

    >>> import dltutor as dt
    >>> y = layer_norm(dt.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 4) for v in y.tolist()[0]]
    [-1.0, 1.0]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ValueError(f"layer_norm: the last dimensions of the input {tuple(x.shape)} must be "
                         f"{shape}")
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    centered = x - mean(x, axes, keepdims=True)
    out = centered / sqrt(var(x, axes, keepdims=True, correction=0) + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


__all__ = ["cross_entropy", "mse_loss", "dropout", "embedding", "conv2d", "max_pool2d",
           "avg_pool2d", "batch_norm", "layer_norm"]
