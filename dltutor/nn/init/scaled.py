"""Initializers whose spread comes from the layer's shape: the gains, the fans, Xavier (Glorot)
and Kaiming (He), and ``reset_linear_``, PyTorch's default for ``Linear`` and ``Conv2d``
(see :mod:`dltutor.nn.init`).

>>> import dltutor as dt
>>> calculate_fan_in_and_fan_out(dt.zeros(20, 10))
(10, 20)
"""
from __future__ import annotations

import difflib
import math
from numbers import Real
from typing import Any

import numpy as np

from ...autograd import Tensor, fills
from .distributions import check_tensor, normal_, uniform_

__all__ = ["MODES", "calculate_gain", "calculate_fan_in_and_fan_out", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "reset_linear_"]

# calculate_gain's names, in the order PyTorch's documentation lists them.
_LINEAR_NAMES = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d")
_NONLINEARITIES = _LINEAR_NAMES + ("sigmoid", "tanh", "relu", "leaky_relu", "selu")
#: The fans a Kaiming initializer can keep steady: the forward pass's or the backward pass's.
MODES = ("fan_in", "fan_out")


def _fans(tensor: Tensor, func: str) -> tuple[int, int]:
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            f"{func}: fan in and fan out can not be computed for a tensor with fewer than 2 "
            f"dimensions (this one has shape {shape}). Fans are defined for weight matrices "
            f"(out_features, in_features) and conv kernels (out_channels, in_channels, kh, kw). "
            f"For a 1-D bias use zeros_, constant_ or uniform_ (PyTorch's Linear draws its bias "
            f"from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the weight's fan_in: reset_linear_)."
        )
    receptive_field = math.prod(shape[2:])  # 1 for a matrix, kh * kw for a conv kernel
    return shape[1] * receptive_field, shape[0] * receptive_field


def _correct_fan(tensor: Tensor, mode: Any, func: str) -> int:
    if not isinstance(mode, str) or mode.lower() not in MODES:
        raise ValueError(
            f"{func}: mode {mode!r} is not supported; use 'fan_in' (the default: keeps the size "
            f"of the activations in the forward pass) or 'fan_out' (keeps the size of the "
            f"gradients in the backward pass)"
        )
    fan_in, fan_out = _fans(tensor, func)
    return fan_in if mode.lower() == "fan_in" else fan_out


# ---------------------------------------------------------------------------------------------
# Gains and fans
# ---------------------------------------------------------------------------------------------
def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The factor by which to scale the init's spread for a given activation (PyTorch's values).

    An activation such as ReLU throws away half of its input's variance; multiplying the
    initial weights by ``sqrt(2)`` gives that back, so the signal neither fades nor explodes.

    ==================================  =====================================
    nonlinearity                        gain
    ==================================  =====================================
    linear, conv1d/2d/3d,               1
    conv_transpose1d/2d/3d, sigmoid
    tanh                                5/3
    relu                                sqrt(2)
    leaky_relu                          sqrt(2 / (1 + negative_slope²)),
                                        ``param`` = negative_slope (0.01)
    selu                                3/4
    ==================================  =====================================

    For a self-normalizing network (SELU activations, Klambauer et al. 2017) PyTorch's docs
    advise ``nonlinearity="linear"`` rather than ``"selu"``: weights with variance ``1 / fan_in``
    are what keeps the activations at mean 0, variance 1.

    >>> calculate_gain("relu") == 2 ** 0.5
    True
    >>> calculate_gain("tanh")
    1.6666666666666667
    >>> round(calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    if nonlinearity in _LINEAR_NAMES or nonlinearity == "sigmoid":
        return 1  # an int, as PyTorch returns
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (Real, np.number)):
            negative_slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number; "
                             "pass the leaky ReLU's slope as param, e.g. 0.01")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    close = difflib.get_close_matches(str(nonlinearity), _NONLINEARITIES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; choose one of "
                     f"{', '.join(_NONLINEARITIES)}.{hint}")


def calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: how many inputs feed one output, and the reverse.

    For a Linear weight of shape ``(out, in)``: ``fan_in = in``, ``fan_out = out``. For a conv
    kernel ``(out_ch, in_ch, kh, kw)`` each input channel brings ``kh * kw`` values:
    ``fan_in = in_ch * kh * kw``, ``fan_out = out_ch * kh * kw``.

    >>> import dltutor as dt
    >>> calculate_fan_in_and_fan_out(dt.zeros(20, 10))
    (10, 20)
    >>> calculate_fan_in_and_fan_out(dt.zeros(16, 3, 5, 5))
    (75, 400)
    """
    check_tensor("calculate_fan_in_and_fan_out", tensor, floating=False)
    return _fans(tensor, "calculate_fan_in_and_fan_out")


# ---------------------------------------------------------------------------------------------
# Spread from the layer's shape: Xavier (Glorot) and Kaiming (He)
# ---------------------------------------------------------------------------------------------
def _xavier_std(func: str, tensor: Tensor, gain: Any) -> float | None:
    """Xavier's ``gain * sqrt(2 / (fan_in + fan_out))``, after checking the arguments; None
    for a tensor without elements (PyTorch leaves it as it is)."""
    check_tensor(func, tensor)
    gain = fills.number(func, "gain", gain)
    fan_in, fan_out = _fans(tensor, func)
    if tensor.data.size == 0:
        return None
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def _kaiming_std(func: str, tensor: Tensor, a: Any, mode: Any, nonlinearity: str) -> float | None:
    """Kaiming's ``gain / sqrt(fan)``, after checking the arguments; None for a tensor without
    elements (PyTorch leaves it as it is)."""
    check_tensor(func, tensor)
    fan = _correct_fan(tensor, mode, func)
    gain = calculate_gain(nonlinearity, a)
    if tensor.data.size == 0:
        return None
    return gain / math.sqrt(fan)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Xavier (Glorot) uniform: U(-bound, bound) with ``bound = gain * sqrt(6 / (fan_in + fan_out))``.

    Chosen so that the variance of the activations (forward) and of the gradients (backward)
    stays roughly the same from layer to layer through tanh or sigmoid layers (Glorot & Bengio,
    2010). Pass ``gain=calculate_gain("tanh")`` for tanh layers.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(30, 20))
    >>> bound = (6 / (20 + 30)) ** 0.5
    >>> bool(abs(xavier_uniform_(w).numpy()).max() <= bound)
    True
    """
    std = _xavier_std("xavier_uniform_", tensor, gain)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # a uniform U(-c, c) has std c / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Xavier (Glorot) normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    The normal twin of :func:`xavier_uniform_`: same variance, bell-shaped instead of flat.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(500, 400))
    >>> _ = xavier_normal_(w)
    >>> std = (2 / (400 + 500)) ** 0.5
    >>> bool(abs(w.numpy().std() / std - 1) < 0.01)    # within 1% of the formula
    True
    """
    std = _xavier_std("xavier_normal_", tensor, gain)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """Kaiming (He) uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    Made for ReLU networks (He et al., 2015): ReLU zeroes half of its inputs, so the weights get
    ``gain = sqrt(2)`` to keep the variance of the activations constant. ``fan`` is ``fan_in``
    (keep the forward activations steady, the default) or ``fan_out`` (keep the backward
    gradients steady). ``a`` is the negative slope of a leaky ReLU; with the defaults
    (``a=0``, ``"leaky_relu"``) the gain is ``sqrt(2)``, the ReLU gain.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(64, 32))
    >>> bound = 2 ** 0.5 * (3 / 32) ** 0.5
    >>> bool(abs(kaiming_uniform_(w, nonlinearity="relu").numpy()).max() <= bound)
    True
    """
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # a uniform U(-c, c) has std c / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """Kaiming (He) normal: N(0, std²) with ``std = gain / sqrt(fan)``.

    The normal twin of :func:`kaiming_uniform_`, the init of the original ResNet paper (used
    there with ``mode="fan_out"``).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(500, 400))
    >>> _ = kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    >>> std = 2 ** 0.5 / 500 ** 0.5                    # gain / sqrt(fan_out)
    >>> bool(abs(w.numpy().std() / std - 1) < 0.01)
    True
    """
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def reset_linear_(weight: Tensor, bias: Tensor | None = None, generator: Any = None) -> Tensor:
    """PyTorch's default init of ``nn.Linear`` and ``nn.Conv2d``: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    Both the weight and the bias are drawn from that range, with ``fan_in`` taken from the
    weight (``in_features``, or ``in_channels * kh * kw`` for a conv kernel). The weight is
    drawn first, then the bias, as in PyTorch. Returns the weight.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w, b = nn.Parameter(dt.zeros(8, 16)), nn.Parameter(dt.zeros(8))
    >>> _ = reset_linear_(w, b)
    >>> bound = 1 / 16 ** 0.5
    >>> bool(abs(w.numpy()).max() <= bound and abs(b.numpy()).max() <= bound)
    True
    """
    func = "reset_linear_"
    check_tensor(func, weight)
    if bias is not None:
        check_tensor(func, bias)  # check both before changing either
    fan_in, _ = _fans(weight, func)
    # PyTorch writes the weight's init as kaiming_uniform_(weight, a=sqrt(5)): the leaky-ReLU
    # gain with slope sqrt(5) is sqrt(2 / (1 + 5)) = sqrt(1/3), so the bound
    # sqrt(3) * gain / sqrt(fan_in) is 1 / sqrt(fan_in). We call it the same way, so the weight
    # gets PyTorch's bound to the last bit.
    kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
    if bias is not None:
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound, generator)
    return weight
