"""Initializer objects, Paddle's way of naming an initialization: ``init.Normal(0.0, 0.02)``.

In Paddle an initializer is an object you make once and hand to a layer
(``weight_attr=ParamAttr(initializer=Normal(0.0, 0.02))``) or call on a parameter
(``Normal(0.0, 0.02)(layer.weight)``). Here the same objects exist so that the answers of the
Paddle FAQs translate line by line: give one to a layer with ``weight_init=`` / ``bias_init=``,
or call it on a parameter. Each object only *remembers* its arguments (checked when you make
it) and calls the matching function of :mod:`dltutor.nn.init` (``Normal`` calls
``init.normal_``); the formulas live there, once. The chapters use those functions, PyTorch's
names.

>>> import numpy as np
>>> import dltutor as dt
>>> from dltutor import nn
>>> from dltutor.nn import init
>>> fc = nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02), bias_init=init.Constant(0.0))
>>> fc.bias.tolist() == [0.0] * 8
True
>>> vectors = np.arange(6, dtype=np.float32).reshape(3, 2)      # "my word vectors"
>>> table = nn.Embedding(3, 2, weight_init=init.Assign(vectors))
>>> table.weight.tolist()
[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
"""
from __future__ import annotations

from typing import Any

from .. import checks
from ..autograd import Tensor
from ..autograd.dtypes import to_array
from . import init

__all__ = ["Initializer", "Normal", "Uniform", "Constant", "XavierUniform", "XavierNormal",
           "KaimingUniform", "KaimingNormal", "Assign"]


class Initializer:
    """An initialization you can name before there is a parameter: ``init(param)`` fills
    ``param`` in place and returns it. Subclasses set their arguments in ``__init__`` (checked
    there) and say in ``_fill`` which function of :mod:`dltutor.nn.init` applies them."""

    def __call__(self, param: Tensor) -> Tensor:
        return self._fill(param)

    def _fill(self, param: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={value!r}" for name, value in vars(self).items()
                         if not name.startswith("_"))
        return f"{type(self).__name__}({args})"


class Normal(Initializer):
    """Values from N(mean, std²): ``init.normal_(param, mean, std)``.

    >>> Normal(0.0, 0.02)
    Normal(mean=0.0, std=0.02)
    >>> Normal(std=-1)
    Traceback (most recent call last):
    ...
    ValueError: Normal: std must be a number >= 0, got -1
    """

    def __init__(self, mean: float = 0.0, std: float = 1.0):
        self.mean = checks.number("Normal", "mean", mean)
        self.std = checks.non_negative("Normal", "std", std)

    def _fill(self, param: Tensor) -> Tensor:
        return init.normal_(param, self.mean, self.std)


class Uniform(Initializer):
    """Values from U[low, high): ``init.uniform_(param, low, high)`` (Paddle's defaults -1, 1).

    >>> Uniform(-0.1, 0.1)
    Uniform(low=-0.1, high=0.1)
    """

    def __init__(self, low: float = -1.0, high: float = 1.0):
        self.low = checks.number("Uniform", "low", low)
        self.high = checks.number("Uniform", "high", high)
        if not low <= high:
            raise ValueError(f"Uniform: the range needs low <= high, got low={low} and "
                             f"high={high}; swap them")

    def _fill(self, param: Tensor) -> Tensor:
        return init.uniform_(param, self.low, self.high)


class Constant(Initializer):
    """Every value ``value``: ``init.constant_(param, value)``.

    >>> from dltutor import nn
    >>> Constant(42)(nn.Parameter([0.0, 0.0])).tolist()
    [42.0, 42.0]
    """

    def __init__(self, value: float = 0.0):
        self.value = checks.number("Constant", "value", value)

    def _fill(self, param: Tensor) -> Tensor:
        return init.constant_(param, self.value)


class XavierUniform(Initializer):
    """Glorot's uniform init from the parameter's fans: ``init.xavier_uniform_(param, gain)``.
    (Paddle also lets you give ``fan_in``/``fan_out`` by hand; here they come from the shape.)

    >>> XavierUniform()
    XavierUniform(gain=1.0)
    """

    def __init__(self, gain: float = 1.0):
        self.gain = checks.non_negative(type(self).__name__, "gain", gain)

    def _fill(self, param: Tensor) -> Tensor:
        return init.xavier_uniform_(param, self.gain)


class XavierNormal(XavierUniform):
    """Glorot's normal init: ``init.xavier_normal_(param, gain)``.

    >>> XavierNormal(gain=2.0)
    XavierNormal(gain=2.0)
    """

    def _fill(self, param: Tensor) -> Tensor:
        return init.xavier_normal_(param, self.gain)


class KaimingUniform(Initializer):
    """He's uniform init from the fan-in, with Paddle's arguments and defaults (ReLU):
    ``init.kaiming_uniform_(param, a=negative_slope, mode="fan_in", nonlinearity=...)``.

    >>> KaimingUniform()
    KaimingUniform(negative_slope=0.0, nonlinearity='relu')
    >>> KaimingUniform(nonlinearity="relux")
    Traceback (most recent call last):
    ...
    ValueError: calculate_gain: unsupported nonlinearity 'relux'; choose one of linear, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, sigmoid, tanh, relu, leaky_relu, selu. Did you mean 'relu'?
    """

    def __init__(self, negative_slope: float = 0.0, nonlinearity: str = "relu"):
        self.negative_slope = checks.number(type(self).__name__, "negative_slope",
                                            negative_slope)
        init.calculate_gain(nonlinearity, negative_slope)    # refuses an unknown name now
        self.nonlinearity = nonlinearity

    def _fill(self, param: Tensor) -> Tensor:
        return init.kaiming_uniform_(param, self.negative_slope, "fan_in", self.nonlinearity)


class KaimingNormal(KaimingUniform):
    """He's normal init from the fan-in: ``init.kaiming_normal_`` with Paddle's defaults.

    >>> KaimingNormal(nonlinearity="leaky_relu", negative_slope=0.1)
    KaimingNormal(negative_slope=0.1, nonlinearity='leaky_relu')
    """

    def _fill(self, param: Tensor) -> Tensor:
        return init.kaiming_normal_(param, self.negative_slope, "fan_in", self.nonlinearity)


class Assign(Initializer):
    """Given values (a NumPy array, a list or a tensor), copied in: ``init.assign_(param,
    value)``. The shape must match the parameter's; how Paddle loads pretrained word vectors.

    >>> import numpy as np
    >>> Assign(np.ones((2, 2)))
    Assign(shape=(2, 2))
    >>> Assign("glove.txt")
    Traceback (most recent call last):
    ...
    TypeError: Assign: cannot make a tensor from str data holding strings; a tensor holds real numbers (bool, int, float): pass numbers, (nested) lists of numbers or a numeric array
    """

    def __init__(self, value: Any):
        # Converted now, so a bad value fails where it was written, not at the layer.
        self._value = to_array(value.data if isinstance(value, Tensor) else value,
                               caller="Assign")

    def _fill(self, param: Tensor) -> Tensor:
        return init.assign_(param, self._value)

    def __repr__(self) -> str:
        return f"Assign(shape={tuple(self._value.shape)})"
