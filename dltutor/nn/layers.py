"""Layers with weights: Linear, Conv2d and Embedding, with PyTorch's default initialization.
(Normalization, pooling and the activations have their own modules.)

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
from .paddle_names import check_initializer, layer_attrs
from .parameter import Parameter


def _empty(*shape: int, **settings: Any) -> Parameter:
    """A new float32 parameter on the current backend, to be filled by an initializer;
    ``settings`` are Parameter's keyword arguments (``lr_mult=``, ``need_clip=``, ...)."""
    return Parameter(ag.zeros(*shape), **settings)


def float_input(layer: Module, x: Any) -> None:
    """Refuse what a float layer cannot take: a non-Tensor (a NumPy array, a list) or an
    integer or bool tensor, which PyTorch refuses too ("mat1 and mat2 must have the same
    dtype"). Computing it in float64 instead would hide the mistake and be slower.

    >>> import dltutor as dt
    >>> float_input(Linear(2, 1), dt.tensor([[1, 2]]))
    Traceback (most recent call last):
    ...
    TypeError: Linear computes in floating point; it got a tensor of dtype int64: call .float() on the input first
    """
    name = type(layer).__name__
    if not isinstance(x, Tensor):
        kind = type(x).__name__
        if type(x).__module__ != "builtins":
            kind = f"{type(x).__module__.split('.')[0]}.{kind}"
        raise TypeError(f"{name} expects a Tensor; it got a {kind}: wrap it with dt.tensor(...)")
    if x.dtype.kind != "f":
        raise TypeError(f"{name} computes in floating point; it got a tensor of dtype {x.dtype}: call "
                        ".float() on the input first")


def check_initializers(layer: str, weight_init: Any, bias_init: Any, bias: bool) -> None:
    """Refuse ``weight_init``/``bias_init`` that are not callables taking a parameter (an
    initializer object such as ``init.Normal(0, 0.02)``, or a function), and a ``bias_init``
    for a layer without a bias. Checked before anything is drawn, so a refused layer leaves
    the random numbers where they were.

    >>> from dltutor.nn import init
    >>> check_initializers("Linear", init.Normal, None, True)
    Traceback (most recent call last):
    ...
    TypeError: Linear: weight_init got the class Normal, not an initializer made from it; add the parentheses: weight_init=Normal(...)
    """
    for name, value in (("weight_init", weight_init), ("bias_init", bias_init)):
        check_initializer(layer, name, value)
    if bias_init is not None and not bias:
        raise ValueError(f"{layer}: bias_init was given but bias=False, so there is no bias to "
                         "initialize; drop one of the two")


class _WeightAndBias(Module):
    """Shared by Linear and Conv2d: a weight, an optional bias (out_features long), PyTorch's
    default values for both, and the layer's own initializers when given. Paddle's
    ``weight_attr``/``bias_attr`` (an ``nn.ParamAttr``) set the parameters' ``lr_mult``,
    ``regularizer``, ``need_clip`` and ``requires_grad``, and may bring the initializer."""

    def _create(self, weight_shape: tuple[int, ...], bias: bool, weight_init: Any = None,
                bias_init: Any = None, weight_attr: Any = None, bias_attr: Any = None) -> None:
        name = type(self).__name__
        # Everything is checked before the first parameter is drawn.
        bias, weight_init, bias_init, weight_settings, bias_settings = layer_attrs(
            name, bias, weight_init, bias_init, weight_attr, bias_attr)
        check_initializers(name, weight_init, bias_init, bias)
        self.weight_init, self.bias_init = weight_init, bias_init
        self.weight = _empty(*weight_shape, **weight_settings)
        if bias:
            self.bias = _empty(weight_shape[0], **bias_settings)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh values: PyTorch's defaults, then the layer's own ``weight_init`` and
        ``bias_init`` if it has them. (The defaults are always drawn first, so a layer's bias
        starts the same whether or not its weight has an initializer of its own.)"""
        init.reset_linear_(self.weight, self.bias)
        if self.weight_init is not None:
            self.weight_init(self.weight)
        if self.bias_init is not None:
            self.bias_init(self.bias)


class Linear(_WeightAndBias):
    """A fully connected layer: ``y = x @ weight.T + bias``.

    ``weight`` has shape (out_features, in_features), as in PyTorch (Paddle stores the
    transpose). Both start uniform in ``[-1/sqrt(in_features), 1/sqrt(in_features)]``, unless
    you give the layer initializers of its own (Paddle's way): ``weight_init=init.Normal(0,
    0.02)``, ``bias_init=init.Constant(0.0)``, or any function that fills a parameter.

    >>> import dltutor as dt
    >>> from dltutor.nn import init
    >>> _ = dt.manual_seed(0)
    >>> layer = Linear(4, 2)
    >>> bool(layer.weight.abs().max() <= 0.5)      # 1/sqrt(4)
    True
    >>> Linear(4, 2, bias_init=init.Constant(0.5)).bias.tolist()
    [0.5, 0.5]

    Paddle's ``weight_attr=nn.ParamAttr(...)`` and ``bias_attr=`` work too (``bias_attr=False``:
    no bias); the weight stays (out, in) and, without an initializer, PyTorch's default values:

    >>> from dltutor import nn
    >>> fc = Linear(4, 2, weight_attr=nn.ParamAttr(learning_rate=0.1), bias_attr=False)
    >>> fc.weight.lr_mult, fc.bias
    (0.1, None)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *,
                 weight_init: Any = None, bias_init: Any = None, weight_attr: Any = None,
                 bias_attr: Any = None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self._create((out_features, in_features), bias, weight_init, bias_init, weight_attr,
                     bias_attr)

    def forward(self, x: Tensor) -> Tensor:
        float_input(self, x)
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear(in_features={self.in_features}) got input of shape "
                             f"{tuple(x.shape)}: its last dimension must be {self.in_features}")
        return ag.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def conv_geometry(owner: str, kernel_size: Any, stride: Any,
                  padding: Any) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """A conv layer's ``(kernel_size, stride, padding)``, each as a pair of ints and checked
    (an int means the same for height and width); ``owner`` names the layer in errors.

    >>> conv_geometry("Conv2d", 3, 1, (0, 1))
    ((3, 3), (1, 1), (0, 1))
    """
    return (as_pair(kernel_size, f"{owner}: kernel_size"), as_pair(stride, f"{owner}: stride"),
            as_pair(padding, f"{owner}: padding", minimum=0))


class Conv2d(_WeightAndBias):
    """2-D convolution over (N, C, H, W) images; weight (out_channels, in_channels, kh, kw).

    Weight and bias start as PyTorch's, uniform in ``±1/sqrt(in_channels * kh * kw)``, unless
    the layer gets initializers of its own (``weight_init=``, ``bias_init=``, as for Linear).

    >>> import dltutor as dt
    >>> from dltutor.nn import init
    >>> Conv2d(1, 6, 5)(dt.ones(2, 1, 28, 28)).shape
    (2, 6, 24, 24)
    >>> conv = Conv2d(3, 8, 3, weight_init=init.KaimingNormal(), bias_init=init.Constant(0.0))
    >>> conv.bias.tolist() == [0.0] * 8
    True
    >>> from dltutor import nn
    >>> Conv2d(3, 8, 3, weight_attr=nn.ParamAttr(trainable=False)).weight.requires_grad
    False
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, bias: bool = True, *, weight_init: Any = None,
                 bias_init: Any = None, weight_attr: Any = None, bias_attr: Any = None):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = conv_geometry(
            "Conv2d", kernel_size, stride, padding)
        self._create((out_channels, in_channels, *self.kernel_size), bias, weight_init, bias_init,
                     weight_attr, bias_attr)

    def forward(self, x: Tensor) -> Tensor:
        float_input(self, x)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        return text + ("" if self.bias is not None else ", bias=False")


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` is the vector of token ``i``.

    Rows start ~ N(0, 1) (PyTorch), or as ``weight_init`` says (``init.Assign(vectors)``
    loads pretrained word vectors, Paddle's way); the row at ``padding_idx`` starts at zero and
    never gets a gradient.

    >>> import dltutor as dt
    >>> table = Embedding(10, 3, padding_idx=0)
    >>> table(dt.tensor([[1, 0, 4]])).shape
    (1, 3, 3)
    >>> table.weight[0].tolist()
    [0.0, 0.0, 0.0]
    >>> from dltutor.nn import init
    >>> vectors = [[0.5, 0.5], [1.0, -1.0]]                  # two pretrained word vectors
    >>> Embedding(2, 2, weight_init=init.Assign(vectors)).weight.tolist()
    [[0.5, 0.5], [1.0, -1.0]]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 _weight: Parameter | None = None, *, weight_init: Any = None):
        super().__init__()
        check_initializers("Embedding", weight_init, None, False)
        if _weight is not None and weight_init is not None:
            raise ValueError("Embedding: give the table either as _weight (what from_pretrained "
                             "does) or through weight_init=init.Assign(values), not both")
        self.weight_init = weight_init
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
        """Draw fresh N(0, 1) rows (then apply ``weight_init`` if given) and zero the padding
        row."""
        init.normal_(self.weight)
        if self.weight_init is not None:
            self.weight_init(self.weight)
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


__all__ = ["Linear", "Conv2d", "Embedding"]
