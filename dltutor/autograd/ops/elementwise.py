"""Functions applied to every element: ``exp``, ``log``, ``sqrt``, ``abs``, the activations
(``tanh``, ``sigmoid``, ``relu``, ``leaky_relu``), ``erf``, ``clip`` and ``dropout`` (``gelu``
has its own module, gelu.py). Each op's class is followed by the function learners call; each
backward is the derivative written out.

>>> import dltutor as dt
>>> x = dt.tensor([0.0, 2.0], requires_grad=True)
>>> dt.tanh(x).sum().backward()
>>> x.grad                            # 1 - tanh(x)**2
tensor([1.0000, 0.0707])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from numpy.typing import DTypeLike

from ... import backend as B
from ..arrays import Array
from ..dtypes import default_float
from ..function import Function
from ..rng import generator
from .convert import cast
from .gates import gate

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


def floating(a: Tensor) -> Tensor:
    """``a`` itself if it holds floats; an integer or bool tensor as float32, as PyTorch's
    ``exp``, ``log``, ``sqrt``, ``tanh``, ``sigmoid`` and ``erf`` take them (their results are
    not integers).

    >>> import dltutor as dt
    >>> floating(dt.tensor([1, 2])).dtype
    dtype('float32')
    """
    data = getattr(a, "data", None)
    if data is not None and data.dtype.kind in "biu":
        return cast(a, default_float)
    return a
# log(0), x/0 and overflow give inf/nan silently, as in PyTorch; dt.detect_anomaly finds them.
ignore_float_errors = B.ignore_float_errors


class Exp(Function):
    """``exp(a)``: the gradient is ``g * exp(a)``, the output itself (kept, not recomputed)."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        with ignore_float_errors(a):
            self.out = get_array_module(a).exp(a)
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g * self.out,)


def exp(a: Tensor) -> Tensor:
    """``e ** a`` elementwise.

    >>> import dltutor as dt
    >>> dt.exp(dt.tensor([0.0]))
    tensor([1.])
    """
    return Exp().apply(floating(a))


class Log(Function):
    """``log(a)``: the gradient is ``g / a``."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        self.a = a
        with ignore_float_errors(a):
            return get_array_module(a).log(a)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        with ignore_float_errors(g):
            return (g / self.a,)


def log(a: Tensor) -> Tensor:
    """Natural logarithm elementwise (``log(0)`` is ``-inf``; see ``dt.detect_anomaly``).

    >>> import dltutor as dt
    >>> dt.log(dt.tensor([1.0]))
    tensor([0.])
    """
    return Log().apply(floating(a))


class Sqrt(Function):
    """``sqrt(a)``: the gradient is ``g / (2 * sqrt(a))``, from the kept output."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        with ignore_float_errors(a):
            self.out = get_array_module(a).sqrt(a)
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        with ignore_float_errors(g):
            return (g / (2 * self.out),)


def sqrt(a: Tensor) -> Tensor:
    """Square root elementwise.

    >>> import dltutor as dt
    >>> dt.sqrt(dt.tensor([4.0]))
    tensor([2.])
    """
    return Sqrt().apply(floating(a))


def sign_of(a: Array, dtype: DTypeLike) -> Array:
    """PyTorch's sign of an array, as ``dtype``: -1, 0 or 1, and 0 at NaN, where NumPy's
    ``sign`` gives NaN (so a NaN element does not spread NaN through ``g * sign``).

    >>> import numpy as np
    >>> sign_of(np.array([-2.0, 0.0, np.nan, 3.0]), np.float64)
    array([-1.,  0.,  0.,  1.])
    """
    return (a > 0).astype(dtype) - (a < 0)


class Abs(Function):
    """``|a|``: the gradient is ``g * sign(a)`` with PyTorch's sign (``sign_of``)."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        self.a = a
        return get_array_module(a).abs(a)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g * sign_of(self.a, g.dtype),)


def abs(a: Tensor) -> Tensor:
    """Absolute value elementwise.

    >>> import dltutor as dt
    >>> dt.abs(dt.tensor([-2.0, 3.0]))
    tensor([2., 3.])
    """
    return Abs().apply(a)


class Tanh(Function):
    """``tanh(a)``: the gradient is ``g * (1 - tanh(a)**2)``, from the kept output."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        self.out = get_array_module(a).tanh(a)
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g * (1 - self.out * self.out),)


def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise.

    >>> import dltutor as dt
    >>> dt.tanh(dt.tensor([0.0]))
    tensor([0.])
    """
    return Tanh().apply(floating(a))


def sigmoid_of(a: Array) -> Array:
    """``1 / (1 + exp(-a))`` of an array, as PyTorch computes it, in one new array (the
    sigmoid op and binary cross-entropy's gradient share it).

    For a very negative ``a``, ``exp(-a)`` overflows to inf and ``1 / inf`` is the right limit,
    0 (silently, as in PyTorch). The overflow-free ``0.5 * tanh(a / 2) + 0.5`` loses every digit
    below 1e-8 (float32) or 1e-17 (float64): it gave sigmoid(-10) = 4.5389e-05 in float32 and 0
    for sigmoid(-20), where the answers are 4.5398e-05 and 2.0612e-09.

    >>> import numpy as np
    >>> [f"{v:.4g}" for v in sigmoid_of(np.array([-20.0, 0.0, 800.0], dtype=np.float32))]
    ['2.061e-09', '0.5', '1']
    """
    xp = get_array_module(a)
    out = a.copy()      # a new array: xp.negative(a) of a 0-d array is a NumPy scalar, which
    xp.negative(out, out=out)   # no out= can write into ("return arrays must be of ArrayType")
    with ignore_float_errors(a):
        xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


class Sigmoid(Function):
    """``sigmoid(a) = 1 / (1 + exp(-a))``: the gradient is ``g * s * (1 - s)`` with ``s`` the
    kept output."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        self.out = sigmoid_of(a)
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (g * self.out * (1 - self.out),)


def sigmoid(a: Tensor) -> Tensor:
    """Logistic sigmoid ``1 / (1 + exp(-a))``, to full precision at both ends.

    >>> import dltutor as dt
    >>> dt.sigmoid(dt.tensor([0.0, -10.0, -20.0]))
    tensor([5.0000e-01, 4.5398e-05, 2.0612e-09])
    """
    return Sigmoid().apply(floating(a))


class Relu(Function):
    """``max(a, 0)``; the gradient passes where ``a > 0`` and is exactly 0 elsewhere (at 0
    too), as in PyTorch: a gate (gates.py), not ``g * mask``."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        out = get_array_module(a).maximum(a, 0)   # a * mask would give -0.0 and hide NaN
        self.on = out != 0      # a > 0, and NaN: PyTorch passes the gradient at a NaN input
        return out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (gate(g, self.on),)


def relu(a: Tensor) -> Tensor:
    """``max(a, 0)`` elementwise.

    >>> import dltutor as dt
    >>> dt.relu(dt.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return Relu().apply(a)


class LeakyRelu(Function):
    """``a`` where ``a > 0``, else ``slope * a``: the gradient is ``g`` or ``slope * g``,
    chosen by the same mask."""

    def __init__(self, negative_slope: float):
        self.slope = negative_slope

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        self.mask = a > 0
        return xp.where(self.mask, a, a * self.slope)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (get_array_module(g).where(self.mask, g, g * self.slope),)


def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``a`` where positive, ``negative_slope * a`` elsewhere.

    >>> import dltutor as dt
    >>> dt.leaky_relu(dt.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return LeakyRelu(negative_slope).apply(a)


class Erf(Function):
    """The error function; its derivative is ``2 / sqrt(pi) * exp(-a**2)``."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        self.a = a
        # SciPy has no float16 erf: it answers in float64. Back to the input's dtype, as PyTorch.
        return (B.backend_of(a) or B.NUMPY).erf(a).astype(a.dtype, copy=False)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        return (g * (2 / math.sqrt(math.pi)) * xp.exp(-self.a * self.a),)


def erf(a: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^a exp(-t**2) dt`` elementwise.

    >>> import dltutor as dt
    >>> round(dt.erf(dt.tensor([1.0])).item(), 4)
    0.8427
    """
    return Erf().apply(floating(a))


class Clip(Function):
    """Clamp to ``[low, high]``; the gradient passes where ``low <= a <= high`` and is exactly
    0 elsewhere (a gate, gates.py), as in PyTorch."""

    def __init__(self, low: float | None, high: float | None):
        self.low, self.high = low, high

    def forward(self, a: Array) -> Array:
        self.a = a
        return get_array_module(a).clip(a, self.low, self.high)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        inside: Array | bool = True
        if self.low is not None:
            inside = self.a >= self.low
        if self.high is not None:
            inside = inside & (self.a <= self.high)
        return (gate(g, inside),)


def clip(a: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """Clamp values to ``[min, max]`` (either bound may be None). PyTorch calls it ``clamp``.

    >>> import dltutor as dt
    >>> dt.clip(dt.tensor([-2.0, 0.5, 3.0]), -1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise ValueError("clip: give at least one of min and max")
    return Clip(min, max).apply(a)


clamp = clip


class Dropout(Function):
    """Multiply by a fixed mask of zeros and ``1 / (1 - p)``; the gradient by the same mask."""

    grad_shapes_exact = True

    def __init__(self, mask: Array):
        self.mask = mask

    def forward(self, a: Array) -> Array:
        return a * self.mask

    def backward(self, g: Array) -> tuple[Array | None, ...]:
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
    backend = B.backend_of(x.data) or B.NUMPY
    mask = backend.asarray(keep * scale, dtype=x.data.dtype)
    return Dropout(mask).apply(x)
