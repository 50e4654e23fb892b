"""GELU, the Gaussian error linear unit, as one op with PyTorch's formulas.

``gelu(x) = x * Phi(x)``, where Phi is the standard normal CDF ``0.5 * (1 + erf(x / sqrt(2)))``.
``approximate="tanh"`` replaces Phi by ``0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))``.

It is one op, not a chain of products, erf and sums, for three things a learner can see. Its
backward is the derivative written out, ``g * (Phi(x) + x * phi(x))`` with phi the normal
density, in the order PyTorch computes it: the chain's last digits differed. An infinite
upstream gradient gives ``inf`` or ``-inf`` as in PyTorch: the chain multiplied it by its inner
zeros and gave NaN. And the output says ``grad_fn=<GeluBackward>``, PyTorch's name, where the
chain said ``MulBackward``.

>>> import dltutor as dt
>>> x = dt.tensor([-1.0, 0.0, 1.0], requires_grad=True)
>>> y = dt.gelu(x)
>>> y
tensor([-0.1587,  0.0000,  0.8413], grad_fn=<GeluBackward>)
>>> y.sum().backward()
>>> x.grad                        # Phi(x) + x * phi(x)
tensor([-0.0833,  0.5000,  1.0833])
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ... import backend as B
from ..arrays import Array
from ..function import Function
from .elementwise import floating

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

# C's constants, as PyTorch's kernel spells its factors (products of these, not 1/sqrt(2*pi)
# written another way: the last bit of a factor shows in the last bit of the result).
_SQRT1_2 = 0.70710678118654752440        # M_SQRT1_2 = 1 / sqrt(2)
_TWO_OVER_SQRT_PI = 1.12837916709551257390  # M_2_SQRTPI = 2 / sqrt(pi)
_SQRT2 = 1.41421356237309504880          # M_SQRT2
_DENSITY = _TWO_OVER_SQRT_PI * _SQRT1_2 * 0.5   # 1 / sqrt(2 pi): phi(x) = _DENSITY * exp(-x*x/2)
_TANH_SCALE = _SQRT2 * _TWO_OVER_SQRT_PI * 0.5  # sqrt(2 / pi)
_KAPPA = 0.044715

APPROXIMATIONS = ("none", "tanh")


class Gelu(Function):
    """``x * Phi(x)`` (or its tanh form) and its derivative, as PyTorch's CPU kernel computes
    them. float16 is computed in float32 and rounded once at the end, as there.

    Forward keeps ``x`` and the one array the derivative shares with it: ``1 + erf(x/sqrt(2))``,
    or for the tanh form ``tanh(inner)``."""

    grad_shapes_exact = True

    def __init__(self, approximate: str):
        self.approximate = approximate

    def forward(self, a: Array) -> Array:
        self.dtype = a.dtype
        x = a.astype(np.float32) if a.dtype == np.float16 else a
        with B.ignore_float_errors(x):
            if self.approximate == "tanh":
                self.x, self.tanh_inner = x, _tanh_of_inner(x)
                out = (x * 0.5) * (1 + self.tanh_inner)
            else:
                self.x, self.one_plus_erf = x, 1 + (B.backend_of(x) or B.NUMPY).erf(x * _SQRT1_2)
                out = (x * 0.5) * self.one_plus_erf
        return out.astype(self.dtype, copy=False)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        x = self.x
        xp = B.get_array_module(x)
        with B.ignore_float_errors(x):
            if self.approximate == "tanh":
                derivative = _tanh_form_derivative(x, self.tanh_inner)
            else:
                cdf = 0.5 * self.one_plus_erf
                pdf = _DENSITY * xp.exp((x * x) * -0.5)
                derivative = cdf + x * pdf
            return ((g * derivative).astype(self.dtype, copy=False),)


def _tanh_of_inner(x: Array) -> Array:
    """``tanh(sqrt(2/pi) * (x + 0.044715 * x**3))``, the tanh form's one transcendental."""
    return B.get_array_module(x).tanh(_TANH_SCALE * (x + _KAPPA * (x * x * x)))


def _tanh_form_derivative(x: Array, tanh_inner: Array) -> Array:
    """The derivative of ``0.5 * x * (1 + tanh(inner))``: the product rule, term by term."""
    left_derivative = 0.5 * (1 + tanh_inner)
    tanh_derivative = 1 - tanh_inner * tanh_inner
    # 3 * 0.044715 rounded to the input's precision, as PyTorch's kernel computes it.
    three_kappa = float(x.dtype.type(3) * x.dtype.type(_KAPPA))
    inner_derivative = _TANH_SCALE * (1 + three_kappa * (x * x))
    return left_derivative + (0.5 * x) * tanh_derivative * inner_derivative


def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``a * Phi(a)`` (Phi: the standard normal CDF), as in PyTorch;
    ``approximate="tanh"`` uses ``0.5 * a * (1 + tanh(sqrt(2/pi) * (a + 0.044715 * a**3)))``.

    >>> import dltutor as dt
    >>> [round(v, 4) for v in dt.gelu(dt.tensor([-1.0, 0.0, 1.0])).tolist()]
    [-0.1587, 0.0, 0.8413]
    >>> round(dt.gelu(dt.tensor([1.0]), approximate="tanh").item(), 4)
    0.8412
    """
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu(approximate).apply(floating(a))
