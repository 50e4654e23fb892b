"""Layers: modules that hold parameters (Linear, Conv2d, Embedding, norms) and ones that do not
(activations, pooling, Flatten, Dropout). Default initialization is PyTorch's.

>>> import dltutor as dt
>>> from dltutor import nn
>>> layer = nn.Linear(4, 3)
>>> layer.weight.shape, layer.bias.shape      # weight is (out_features, in_features)
((3, 4), (3,))
>>> layer(dt.ones(2, 4)).shape
(2, 3)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import autograd as ag
from ..autograd import Tensor, float32, no_grad
from ..autograd.ops import as_pair
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _empty(*shape: int) -> Parameter:
    """A new float32 parameter on the current backend, to be filled by an initializer."""
    return Parameter(ag.zeros(*shape))


class _WeightAndBias(Module):
    """Shared by Linear and Conv2d: a weight, an optional bias (out_features long), and
    PyTorch's default values for both."""

    def _create(self, weight_shape: tuple[int, ...], bias: bool) -> None:
        self.weight = _empty(*weight_shape)
        if bias:
            self.bias = _empty(weight_shape[0])
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh default values (PyTorch's initialization)."""
        init.reset_linear_(self.weight, self.bias)


class Linear(_WeightAndBias):
    """A fully connected layer: ``y = x @ weight.T + bias``.

    ``weight`` has shape (out_features, in_features), as in PyTorch (Paddle stores the
    transpose). Both start uniform in ``[-1/sqrt(in_features), 1/sqrt(in_features)]``.

    >>> import dltutor as dt
    >>> _ = dt.manual_seed(0)
    >>> layer = Linear(4, 2)
    >>> bool(layer.weight.abs().max() <= 0.5)      # 1/sqrt(4)
    True
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self._create((out_features, in_features), bias)

    def forward(self, x: Tensor) -> Tensor:
        return ag.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(_WeightAndBias):
    """2-D convolution over (N, C, H, W) images; weight (out_channels, in_channels, kh, kw).

    >>> import dltutor as dt
    >>> Conv2d(1, 6, 5)(dt.ones(2, 1, 28, 28)).shape
    (2, 6, 24, 24)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, bias: bool = True):
        super().__init__()
        kh, kw = as_pair(kernel_size, "kernel_size")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kh, kw)
        self.stride = as_pair(stride, "stride")
        self.padding = as_pair(padding, "padding")
        self._create((out_channels, in_channels, kh, kw), bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        return text + ("" if self.bias is not None else ", bias=False")


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` is the vector of token ``i``.

    Rows start ~ N(0, 1) (PyTorch); the row at ``padding_idx`` starts at zero and never gets
    a gradient.

    >>> import dltutor as dt
    >>> table = Embedding(10, 3, padding_idx=0)
    >>> table(dt.tensor([[1, 0, 4]])).shape
    (1, 3, 3)
    >>> table.weight[0].tolist()
    [0.0, 0.0, 0.0]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 _weight: Parameter | None = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"padding_idx {padding_idx} is outside the table of "
                                 f"{num_embeddings} rows")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is not None:  # from_pretrained: use the given table, draw nothing
            self.weight = _weight
        else:
            self.weight = _empty(num_embeddings, embedding_dim)
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh N(0, 1) rows and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> "Embedding":
        """An Embedding holding a copy of given vectors (e.g. word2vec from NumPy), frozen by
        default. Nothing random is drawn.

        >>> import numpy as np
        >>> table = Embedding.from_pretrained(np.eye(3, dtype=np.float32))
        >>> table.weight.requires_grad
        False
        """
        values = embeddings.data if isinstance(embeddings, Tensor) else embeddings
        shape = getattr(values, "shape", None) or np.shape(values)
        if len(shape) != 2:
            raise ValueError(f"from_pretrained needs a 2-D table (num_embeddings, dim), got shape "
                             f"{tuple(shape)}")
        weight = Parameter(ag.tensor(values, dtype=getattr(values, "dtype", float32)),
                           requires_grad=not freeze)
        return cls(shape[0], shape[1], padding_idx=padding_idx, _weight=weight)

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(indices, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class _BatchNorm(Module):
    """Shared by BatchNorm1d and BatchNorm2d; subclasses say which input ranks they accept."""

    ranks: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, use_global_stats: bool | None = None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.use_global_stats = affine, use_global_stats
        if affine:
            self.weight = Parameter(ag.ones(num_features))
            self.bias = Parameter(ag.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", ag.zeros(num_features))
        self.register_buffer("running_var", ag.ones(num_features))
        self.register_buffer("num_batches_tracked", ag.tensor(0))

    def uses_batch_stats(self) -> bool:
        """True when this forward normalizes with the batch's own mean and variance.

        ``use_global_stats``: None follows train()/eval(); True always uses (and never updates)
        the running statistics; False always uses the batch's.
        """
        if self.use_global_stats is None:
            return self.training
        return not self.use_global_stats

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.ranks or x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}) expects input of rank "
                             f"{' or '.join(map(str, self.ranks))} with {self.num_features} "
                             f"channels on axis 1, got shape {tuple(x.shape)}")
        batch_stats = self.uses_batch_stats()
        update = batch_stats and self.training
        if update:
            with no_grad():
                self.num_batches_tracked.data[...] = self.num_batches_tracked.data + 1
        return F.batch_norm(
            x,
            self.running_mean if (update or not batch_stats) else None,
            self.running_var if (update or not batch_stats) else None,
            self.weight, self.bias, training=batch_stats, momentum=self.momentum, eps=self.eps)

    def extra_repr(self) -> str:
        text = f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"
        if self.use_global_stats is not None:
            text += f", use_global_stats={self.use_global_stats}"
        return text


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C.

    >>> import dltutor as dt
    >>> bn = BatchNorm1d(2)
    >>> y = bn(dt.tensor([[1.0, 5.0], [3.0, 9.0]]))
    >>> bn.running_mean                 # 10% of the way to the batch mean [2, 7]
    tensor([0.2, 0.7])
    """

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) images, per channel C.

    >>> import dltutor as dt
    >>> BatchNorm2d(3)(dt.randn(4, 3, 5, 5)).shape
    (4, 3, 5, 5)
    """

    ranks = (4,)


class LayerNorm(Module):
    """Normalize each sample over its last dimensions (no batch statistics, no buffers).

    >>> import dltutor as dt
    >>> LayerNorm(4)(dt.randn(2, 4)).shape
    (2, 4)
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        if elementwise_affine:
            self.weight = Parameter(ag.ones(*shape))
            self.bias = Parameter(ag.zeros(*shape))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


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
        return f"p={self.p}"


class _Pool2d(Module):
    """What the pooling layers share: a window size, a stride (the window size by default) and
    padding."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}"


class MaxPool2d(_Pool2d):
    """Largest value of each ``kernel_size`` window (stride defaults to the kernel size).

    >>> import dltutor as dt
    >>> MaxPool2d(2)(dt.ones(1, 1, 4, 4)).shape
    (1, 1, 2, 2)
    """

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


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
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return ag.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return "" if self.approximate == "none" else "approximate='tanh'"


class Softmax(Module):
    """Softmax along ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.softmax(x, self.dim)


class LogSoftmax(Softmax):
    """Log-softmax along ``dim``."""

    def forward(self, x: Tensor) -> Tensor:
        return ag.log_softmax(x, self.dim)


__all__ = ["Linear", "Conv2d", "Embedding", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout",
           "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d", "Flatten", "Identity", "ReLU", "LeakyReLU",
           "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax"]
