"""Initializer objects, Paddle's way of naming an initialization: ``init.Normal(0.0, 0.02)``.

In Paddle an initializer is an object you make once and hand to a layer
(``weight_attr=ParamAttr(initializer=Normal(0.0, 0.02))``) or call on a parameter
(``Normal(0.0, 0.02)(layer.weight)``). Here the same objects exist so that the answers of the
Paddle FAQs translate line by line: give one to a layer with ``weight_init=`` / ``bias_init=``,
or call it on a parameter. Each object only *remembers* its arguments (checked when you make
it) and calls the matching function of :mod:`dltutor.nn.init` (``Normal`` calls
``init.normal_``); the formulas live there, once. The chapters use those functions, PyTorch's
names.

===================  ====================  ==============================================
object               calls ``init.``       Paddle's arguments (the same order and defaults)
===================  ====================  ==============================================
``Normal``           ``normal_``           ``mean=0.0, std=1.0``
``Uniform``          ``uniform_``          ``low=-1.0, high=1.0``
``TruncatedNormal``  ``trunc_normal_``     ``mean=0.0, std=1.0, a=-2.0, b=2.0``
``Constant``         ``constant_``         ``value=0.0``
``XavierUniform``    ``xavier_uniform_``   ``fan_in=None, fan_out=None, gain=1.0``
``XavierNormal``     ``xavier_normal_``    the same
``KaimingUniform``   ``kaiming_uniform_``  ``fan_in=None, negative_slope=0.0,
                                           nonlinearity="relu", mode="fan_in"``
``KaimingNormal``    ``kaiming_normal_``   the same
``Assign``           ``assign_``           ``value`` (an array, a list or a tensor)
===================  ====================  ==============================================

The arguments come in Paddle's order with Paddle's defaults, so ``XavierUniform(None, None,
2.0)`` means the same in both. Two differences: the fans always come from the parameter's
shape (``fan_in``/``fan_out`` must stay None), and a parameter keeps PyTorch's layout, so a
Linear weight is ``(out_features, in_features)`` where Paddle stores ``(in, out)``: the fans
are the same numbers, but a Linear weight saved from Paddle must be transposed for ``Assign``.

An object changes nothing until it is called: a line ``init.Normal(0.0, 0.01)`` on its own
makes an object and throws it away. Call it on the parameter, ``init.Normal(0.0, 0.01)(w)``.

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

from abc import ABC, abstractmethod

from typing import Any, Callable

from ... import checks
from ...autograd import Tensor, zeros
from ...autograd.dtypes import to_array
from .distributions import assign_, constant_, normal_, trunc_normal_, uniform_
from .scaled import (MODES, calculate_gain, kaiming_normal_, kaiming_uniform_, xavier_normal_,
                     xavier_uniform_)

__all__ = ["Initializer", "Normal", "Uniform", "TruncatedNormal", "Constant", "XavierUniform",
           "XavierNormal", "KaimingUniform", "KaimingNormal", "Assign"]


# ---------------------------------------------------------------------------------------------
# Checking the arguments when the object is made
# ---------------------------------------------------------------------------------------------
def _argument(owner: str, name: str, value: Any,
              check: Callable[..., Any] = checks.number) -> Any:
    """``value`` checked by ``check`` (one of :mod:`dltutor.checks`, so the message names
    ``owner`` and ``name``). A tensor gets a message of its own: it is what one writes when
    passing the parameter to the constructor, ``XavierUniform(m.weight)``, instead of calling
    the object on it."""
    if isinstance(value, Tensor):
        raise TypeError(f"{owner}: {name} got a tensor of shape {tuple(value.shape)}; an "
                        f"initializer is made first, then called on the parameter: "
                        f"init.{owner}()(layer.weight)")
    return check(owner, name, value)


def _no_given_fan(owner: str, name: str, value: Any) -> None:
    """Refuse a hand-given ``fan_in``/``fan_out``: the functions of :mod:`dltutor.nn.init` take
    the fans from the parameter's shape, and the objects must not work them out a second way."""
    if value is None:
        return
    _argument(owner, name, value)     # a tensor or a non-number gets its own message first
    raise ValueError(f"{owner}: {name}={value!r} cannot be given here; the fans come from the "
                     f"parameter's shape (a Linear weight (out, in) has fan_in = in, a conv "
                     f"kernel in_channels * kh * kw). Leave {name}=None, or for a spread of "
                     f"your choosing use init.Normal(0.0, std) or init.Uniform(-bound, bound)")


class Initializer(ABC):
    """An initialization you can name before there is a parameter: ``init(param)`` fills
    ``param`` in place and returns it. Subclasses set their arguments in ``__init__`` (checked
    there) and say in ``_fill`` which function of :mod:`dltutor.nn.init` applies them.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter(dt.zeros(2, 3))
    >>> Constant(0.5)(w) is w                      # the same parameter, filled in place
    True
    """

    def __call__(self, param: Tensor) -> Tensor:
        return self._fill(param)

    @abstractmethod
    def _fill(self, param: Tensor) -> Tensor:
        """Fill ``param`` in place with the matching function of :mod:`dltutor.nn.init`."""

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={value!r}" for name, value in vars(self).items()
                         if not name.startswith("_"))
        return f"{type(self).__name__}({args})"


# ---------------------------------------------------------------------------------------------
# Given distributions and values
# ---------------------------------------------------------------------------------------------
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
        self.mean = _argument("Normal", "mean", mean)
        self.std = _argument("Normal", "std", std, checks.non_negative)

    def _fill(self, param: Tensor) -> Tensor:
        return normal_(param, self.mean, self.std)


class Uniform(Initializer):
    """Values from U[low, high): ``init.uniform_(param, low, high)`` (Paddle's defaults -1, 1).

    >>> Uniform(-0.1, 0.1)
    Uniform(low=-0.1, high=0.1)
    """

    def __init__(self, low: float = -1.0, high: float = 1.0):
        self.low = _argument("Uniform", "low", low)
        self.high = _argument("Uniform", "high", high)
        if not low <= high:
            raise ValueError(f"Uniform: the range needs low <= high, got low={low} and "
                             f"high={high}; swap them")

    def _fill(self, param: Tensor) -> Tensor:
        return uniform_(param, self.low, self.high)


class TruncatedNormal(Initializer):
    """N(mean, std²) cut to ``[a, b]``, values outside redrawn: ``init.trunc_normal_``.

    ``a`` and ``b`` are absolute bounds, as in Paddle and PyTorch: ``TruncatedNormal(0.0,
    0.02)`` cuts at ±2, which cuts nothing. Where Paddle only warns that an interval far from
    the mean gives a wrong distribution, this one refuses it when made (almost every draw
    would be thrown away).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = TruncatedNormal(0.0, 0.02, a=-0.04, b=0.04)(nn.Parameter(dt.zeros(50, 50)))
    >>> bool(abs(w.numpy()).max() <= 0.04)
    True
    >>> TruncatedNormal(0.0, 0.01, a=5.0, b=6.0)
    Traceback (most recent call last):
    ...
    ValueError: TruncatedNormal: trunc_normal_: only 0 of N(mean=0.0, std=0.01) lies inside [a, b] = [5.0, 6.0], so almost every draw would be thrown away. Note that a and b are absolute values, not multiples of std: to cut at two standard deviations pass a=mean - 2 * std, b=mean + 2 * std.
    """

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0):
        owner = "TruncatedNormal"
        self.mean = _argument(owner, "mean", mean)
        self.std = _argument(owner, "std", std, checks.positive)
        self.a, self.b = _argument(owner, "a", a), _argument(owner, "b", b)
        if not a < b:
            raise ValueError(f"TruncatedNormal: the interval [a, b] needs a < b, got a={a} "
                             f"and b={b}")
        # Whether enough of the normal lies in [a, b] is the function's own rule: ask it on a
        # tensor without elements, which checks everything and draws nothing.
        try:
            trunc_normal_(zeros(0), mean, std, a, b)
        except ValueError as error:
            raise ValueError(f"TruncatedNormal: {error}") from None

    def _fill(self, param: Tensor) -> Tensor:
        return trunc_normal_(param, self.mean, self.std, self.a, self.b)


class Constant(Initializer):
    """Every value ``value``: ``init.constant_(param, value)``.

    >>> from dltutor import nn
    >>> Constant(42)(nn.Parameter([0.0, 0.0])).tolist()
    [42.0, 42.0]
    """

    def __init__(self, value: float = 0.0):
        self.value = _argument("Constant", "value", value)

    def _fill(self, param: Tensor) -> Tensor:
        return constant_(param, self.value)


class Assign(Initializer):
    """Given values (a NumPy array, a list or a tensor), copied in: ``init.assign_(param,
    value)``. How Paddle loads pretrained word vectors. The values are copied when the object
    is made; their shape must be the parameter's.

    >>> import numpy as np
    >>> Assign(np.ones((2, 2)))
    Assign(shape=(2, 2))
    >>> Assign("glove.txt")
    Traceback (most recent call last):
    ...
    TypeError: Assign: cannot make a tensor from str data holding strings; a tensor holds real numbers (bool, int, float): pass numbers, (nested) lists of numbers or a numeric array

    A Linear weight here is ``(out_features, in_features)``, as in PyTorch; Paddle stores the
    transpose, so weights saved from Paddle need ``.T``:

    >>> from dltutor import nn
    >>> paddle_weight = np.zeros((4, 8), dtype=np.float32)     # Paddle's Linear(4, 8): (in, out)
    >>> nn.Linear(4, 8, weight_init=Assign(paddle_weight))
    Traceback (most recent call last):
    ...
    ValueError: Assign: the parameter has shape (8, 4) but the values have shape (4, 8), its transpose. A Linear weight here is (out_features, in_features), as in PyTorch; Paddle stores (in_features, out_features): pass values.T
    """

    def __init__(self, value: Any):
        # Converted (and copied) now, so a bad value fails where it was written, not at the
        # layer, and changing the array afterwards does not change what the layer gets.
        self._value = to_array(value.data if isinstance(value, Tensor) else value,
                               caller="Assign")

    def _fill(self, param: Tensor) -> Tensor:
        if isinstance(param, Tensor):    # (anything else: assign_ says what it expects)
            self._check_shape(tuple(param.shape))
        return assign_(param, self._value)

    def _check_shape(self, shape: tuple[int, ...]) -> None:
        values = tuple(self._value.shape)
        if values == shape:
            return
        message = f"Assign: the parameter has shape {shape} but the values have shape {values}"
        if len(shape) == 2 and values == shape[::-1]:
            message += (", its transpose. A Linear weight here is (out_features, in_features), "
                        "as in PyTorch; Paddle stores (in_features, out_features): pass values.T")
        else:
            message += f"; reshape the values to {shape} first"
        raise ValueError(message)

    def __repr__(self) -> str:
        return f"Assign(shape={tuple(self._value.shape)})"


# ---------------------------------------------------------------------------------------------
# Spread from the parameter's shape: Xavier (Glorot) and Kaiming (He)
# ---------------------------------------------------------------------------------------------
class XavierUniform(Initializer):
    """Glorot's uniform init from the parameter's fans: ``init.xavier_uniform_(param, gain)``.

    Paddle's arguments and order, ``(fan_in=None, fan_out=None, gain=1.0)``; the fans come
    from the shape, so ``fan_in``/``fan_out`` must stay None. Paddle also takes the fans of a
    1-D bias (its length); here, as in PyTorch, the parameter needs 2 or more dimensions.

    >>> XavierUniform()
    XavierUniform(gain=1.0)
    >>> XavierUniform(gain=2.0)
    XavierUniform(gain=2.0)
    >>> from dltutor import nn
    >>> XavierUniform(nn.Parameter([[1.0, 2.0]]))        # the parameter goes in the call
    Traceback (most recent call last):
    ...
    TypeError: XavierUniform: fan_in got a tensor of shape (1, 2); an initializer is made first, then called on the parameter: init.XavierUniform()(layer.weight)
    """

    def __init__(self, fan_in: None = None, fan_out: None = None, gain: float = 1.0):
        owner = type(self).__name__
        _no_given_fan(owner, "fan_in", fan_in)
        _no_given_fan(owner, "fan_out", fan_out)
        self.gain = _argument(owner, "gain", gain, checks.non_negative)

    def _fill(self, param: Tensor) -> Tensor:
        return xavier_uniform_(param, self.gain)


class XavierNormal(XavierUniform):
    """Glorot's normal init: ``init.xavier_normal_(param, gain)``, Paddle's arguments as
    :class:`XavierUniform`.

    >>> XavierNormal(gain=2.0)
    XavierNormal(gain=2.0)
    """

    def _fill(self, param: Tensor) -> Tensor:
        return xavier_normal_(param, self.gain)


class KaimingUniform(Initializer):
    """He's uniform init: ``init.kaiming_uniform_(param, a=negative_slope, mode, nonlinearity)``.

    Paddle's arguments, order and defaults: ``(fan_in=None, negative_slope=0.0,
    nonlinearity="relu", mode="fan_in")``, so the default is the ReLU gain sqrt(2) (PyTorch's
    function defaults to ``"leaky_relu"`` with slope 0, the same gain). The fans come from the
    parameter's shape, so ``fan_in`` must stay None.

    >>> KaimingUniform()
    KaimingUniform(negative_slope=0.0, nonlinearity='relu', mode='fan_in')
    >>> KaimingUniform(nonlinearity="relux")
    Traceback (most recent call last):
    ...
    ValueError: calculate_gain: unsupported nonlinearity 'relux'; choose one of linear, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, sigmoid, tanh, relu, leaky_relu, selu. Did you mean 'relu'?
    """

    def __init__(self, fan_in: None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", mode: str = "fan_in"):
        owner = type(self).__name__
        _no_given_fan(owner, "fan_in", fan_in)
        self.negative_slope = _argument(owner, "negative_slope", negative_slope)
        calculate_gain(nonlinearity, negative_slope)    # refuses an unknown name now
        self.nonlinearity = nonlinearity
        if not (isinstance(mode, str) and mode.lower() in MODES):    # the function's list
            raise ValueError(f"{owner}: mode must be 'fan_in' (keeps the size of the "
                             f"activations, the default) or 'fan_out' (keeps the size of the "
                             f"gradients), got {mode!r}")
        self.mode = mode

    def _fill(self, param: Tensor) -> Tensor:
        return kaiming_uniform_(param, self.negative_slope, self.mode, self.nonlinearity)


class KaimingNormal(KaimingUniform):
    """He's normal init: ``init.kaiming_normal_``, Paddle's arguments as
    :class:`KaimingUniform`.

    >>> KaimingNormal(negative_slope=0.1, nonlinearity="leaky_relu")
    KaimingNormal(negative_slope=0.1, nonlinearity='leaky_relu', mode='fan_in')
    """

    def _fill(self, param: Tensor) -> Tensor:
        return kaiming_normal_(param, self.negative_slope, self.mode, self.nonlinearity)
