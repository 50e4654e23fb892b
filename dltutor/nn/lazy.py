"""Lazy layers: ``LazyLinear`` and ``LazyConv2d`` learn their input size from the first batch.

``nn.LazyLinear(256)`` is a Linear layer whose ``in_features`` you do not write: its weight
cannot have a shape yet, so it starts as an :class:`UninitializedParameter`. The first forward
pass sees the input (``x.shape[-1]`` features, or ``x.shape[1]`` channels for a convolution),
creates the weight and bias with PyTorch's default initialization, and turns the layer into
a plain ``Linear`` (or ``Conv2d``), as PyTorch does.

Until then the parameters exist (``named_parameters()`` lists them, an ``apply`` visits them)
but have no values: anything that needs a value or a shape (``p.shape``, ``p.numel()``, an
initializer, an optimizer, saving) raises :class:`UninitializedParameterError`, which says to
run one batch through the model first. The parameters keep their identity when they are
created, so hooks and ties made before the first forward keep working.

>>> import dltutor as dt
>>> from dltutor import nn
>>> net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
>>> net[0].weight
<UninitializedParameter: shape (8, ?) until the first forward>
>>> _ = net(dt.rand(2, 20))                  # one batch of 20 features
>>> net[0].weight.shape, net[2].weight.shape
((8, 20), (1, 8))
>>> net[0]
Linear(in_features=20, out_features=8, bias=True)
"""
from __future__ import annotations

from typing import Any, Callable

from ..autograd import Tensor
from .layers import Conv2d, Linear, check_initializers, conv_geometry, float_input
from .module import Module
from .parameter import UninitializedParameter, is_uninitialized


class _LazyWeightAndBias:
    """What LazyLinear and LazyConv2d share: uninitialized weight and bias, and creating them
    from the first input. ``becomes`` is the plain layer class the module turns into."""

    becomes: type[Module]
    # What the host layer (Linear, Conv2d, a Module) gives the mixin, named for mypy only:
    # annotations make no class attribute, so the host's own methods are the ones that run.
    weight: Any                          # an UninitializedParameter, then a Parameter
    bias: Any
    register_parameter: Callable[[str, Any], None]
    reset_parameters: Callable[[], None]
    _set_in_size: Callable[[int], None]

    def _create_lazy(self, weight_template: tuple[int | None, ...], bias: bool,
                     weight_init: Any, bias_init: Any) -> None:
        name = type(self).__name__
        check_initializers(name, weight_init, bias_init, bias)
        self.weight_init, self.bias_init = weight_init, bias_init   # applied at creation
        self.weight = UninitializedParameter(weight_template, f"the weight of this {name}")
        if bias:
            self.bias = UninitializedParameter(weight_template[:1], f"the bias of this {name}")
        else:
            self.register_parameter("bias", None)

    def _initialize(self, in_size: int, input_shape: tuple[int, ...]) -> None:
        """Create the parameters for inputs of ``in_size`` features (or channels), draw
        PyTorch's default values for the ones not loaded from a state dict, and become
        ``self.becomes``."""
        params = [p for p in (self.weight, self.bias) if p is not None]
        if is_uninitialized(self.weight) and in_size < 1:
            raise ValueError(f"{type(self).__name__} got an input of shape {input_shape}: it "
                             "needs at least one feature to size its weight")
        if not is_uninitialized(self.weight) and self.weight.shape[1] != in_size:
            # checked before anything changes: a failed first forward leaves the layer lazy
            raise ValueError(f"{type(self).__name__}: the weight loaded from a state dict has "
                             f"shape {tuple(self.weight.shape)}, made for {self.weight.shape[1]} "
                             f"input features (or channels), but the first input has shape "
                             f"{input_shape}; the layer is unchanged. Give it inputs of that "
                             f"size, or load a weight made for {in_size}")
        fresh = [p for p in params if is_uninitialized(p)]
        loaded = {id(p): p.data.copy() for p in params if not is_uninitialized(p)}
        for p in fresh:
            p.materialize(tuple(in_size if n is None else n for n in p.template))
        self._set_in_size(self.weight.shape[1])   # (a loaded weight already has its size)
        self.__class__ = self.becomes  # type: ignore[assignment]  # the mixin's host is a Module
        if fresh:
            self.reset_parameters()     # PyTorch's defaults (the same draws as the plain layer)
            for p in params:            # ... but what a state dict gave stays
                if id(p) in loaded:
                    p.data[...] = loaded[id(p)]


class LazyLinear(_LazyWeightAndBias, Linear):
    """A :class:`~dltutor.nn.Linear` layer whose ``in_features`` comes from the first input.

    Before that, ``in_features`` is 0 (as PyTorch prints it) and the parameters are
    :class:`UninitializedParameter`; after it, the layer is a plain ``Linear``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> layer = nn.LazyLinear(3)
    >>> layer
    LazyLinear(in_features=0, out_features=3, bias=True)
    >>> layer(dt.ones(2, 5)).shape, layer.weight.shape
    ((2, 3), (3, 5))
    """

    becomes = Linear

    def __init__(self, out_features: int, bias: bool = True, *, weight_init: Any = None,
                 bias_init: Any = None):
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self._create_lazy((out_features, None), bias, weight_init, bias_init)

    def forward(self, x: Tensor) -> Tensor:
        float_input(self, x)
        if x.ndim == 0:
            raise ValueError("LazyLinear got a 0-d input; it needs (..., features)")
        self._initialize(x.shape[-1], tuple(x.shape))
        return self.forward(x)              # now Linear.forward

    def _set_in_size(self, size: int) -> None:
        self.in_features = size


class LazyConv2d(_LazyWeightAndBias, Conv2d):
    """A :class:`~dltutor.nn.Conv2d` whose ``in_channels`` comes from the first input.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> conv = nn.LazyConv2d(4, kernel_size=3)
    >>> conv(dt.ones(1, 2, 5, 5)).shape, conv.weight.shape
    ((1, 4, 3, 3), (4, 2, 3, 3))
    """

    becomes = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 bias: bool = True, *, weight_init: Any = None,
                 bias_init: Any = None):
        Module.__init__(self)
        self.in_channels, self.out_channels = 0, out_channels
        self.kernel_size, self.stride, self.padding = conv_geometry(
            "LazyConv2d", kernel_size, stride, padding)
        self._create_lazy((out_channels, None, *self.kernel_size), bias, weight_init, bias_init)

    def forward(self, x: Tensor) -> Tensor:
        float_input(self, x)
        if x.ndim != 4:
            raise ValueError(f"LazyConv2d expects images of shape (N, C, H, W); got "
                             f"{tuple(x.shape)}")
        self._initialize(x.shape[1], tuple(x.shape))
        return self.forward(x)              # now Conv2d.forward

    def _set_in_size(self, size: int) -> None:
        self.in_channels = size
