"""The arithmetic operators ``+ - * / **``, ``maximum``, ``minimum``, ``where`` and the
comparisons, with NumPy broadcasting. Each op's class is followed by the function learners call.

An op never sums a broadcast gradient back to its input's shape itself: its backward returns
the full-size gradient and the engine reduces it, in one place.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> b = dt.tensor([[1.0], [2.0]], requires_grad=True)
>>> (x * b).sum().backward()          # (1, 3) * (2, 1) broadcasts to (2, 3)
>>> x.grad, b.grad                    # each gradient has its own tensor's shape
(tensor([[3., 3., 3.]]), tensor([[6.],
        [6.]]))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ... import backend as B
from ..arrays import Array
from ..dtypes import default_float
from ..function import Function, is_tensor, make_tensor
from .convert import cast
from .gates import gate
from .operands import Operand, broadcast_error, promote

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module
# log(0), x/0 and overflow give inf/nan silently, as in PyTorch; dt.detect_anomaly finds them.
ignore_float_errors = B.ignore_float_errors


class Add(Function):
    """``a + b``: the gradient passes to both inputs unchanged (engine.py sums it back
    over any broadcast dimensions)."""

    def forward(self, a: Array, b: Array) -> Array:
        try:
            return a + b
        except ValueError:
            raise broadcast_error("add", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return g, g


def add(a: Operand, b: Operand) -> Tensor:
    """``a + b`` with broadcasting.

    >>> import dltutor as dt
    >>> dt.add(dt.tensor([1.0, 2.0]), 1)
    tensor([2., 3.])
    """
    a, b = promote(a, b, "add")
    return Add().apply(a, b)


class Sub(Function):
    """``a - b``: the gradient passes to ``a`` and, negated, to ``b``."""

    def forward(self, a: Array, b: Array) -> Array:
        try:
            return a - b
        except ValueError:
            raise broadcast_error("sub", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return g, -g


def sub(a: Operand, b: Operand) -> Tensor:
    """``a - b`` with broadcasting.

    >>> import dltutor as dt
    >>> dt.sub(dt.tensor([3.0]), dt.tensor([1.0, 2.0]))
    tensor([2., 1.])
    """
    a, b = promote(a, b, "sub")
    return Sub().apply(a, b)


class Mul(Function):
    """``a * b``: each input's gradient is ``g`` times the other input (kept from forward)."""

    def forward(self, a: Array, b: Array) -> Array:
        self.a, self.b = a, b
        try:
            return a * b
        except ValueError:
            raise broadcast_error("mul", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        ta, tb = self.inputs
        return (g * self.b if ta.requires_grad else None,
                g * self.a if tb.requires_grad else None)


def mul(a: Operand, b: Operand) -> Tensor:
    """``a * b`` elementwise with broadcasting.

    >>> import dltutor as dt
    >>> dt.mul(dt.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    a, b = promote(a, b, "mul")
    return Mul().apply(a, b)


class Div(Function):
    """``a / b``: ``g / b`` for ``a``; ``-g * a / b**2`` for ``b``."""

    def forward(self, a: Array, b: Array) -> Array:
        self.a, self.b = a, b
        try:
            with ignore_float_errors(a):
                return a / b
        except ValueError:
            raise broadcast_error("div", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        ta, tb = self.inputs
        with ignore_float_errors(g):
            ga = g / self.b
            gb = -ga * self.a / self.b if tb.requires_grad else None
        return ga if ta.requires_grad else None, gb


def div(a: Operand, b: Operand) -> Tensor:
    """``a / b`` elementwise (true division: ints give floats).

    >>> import dltutor as dt
    >>> dt.div(dt.tensor([1.0, 2.0]), 4)
    tensor([0.2500, 0.5000])
    """
    a, b = promote(a, b, "div")
    if a.data.dtype.kind not in "fc":
        a, b = cast(a, default_float), cast(b, default_float)
    return Div().apply(a, b)


class Pow(Function):
    """``a ** b`` with a tensor exponent (the exponent's gradient needs ``log(a)``)."""

    def forward(self, a: Array, b: Array) -> Array:
        self.a, self.b = a, b
        try:
            with ignore_float_errors(a):
                self.out = a ** b
        except ValueError:
            raise broadcast_error("pow", a, b) from None
        return self.out

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        ta, tb = self.inputs
        a, b = self.a, self.b
        xp = get_array_module(g)
        ga = gb = None
        with ignore_float_errors(g):
            if ta.requires_grad:
                # b * a**(b-1), and exactly 0 where b == 0 (a**0 is 1 whatever a is), as in
                # PyTorch: the product would be NaN there for a == 0 (0 * 0**-1) or an inf g.
                ga = gate(g * (b * a ** (b - 1)), b != 0)
            if tb.requires_grad:
                # a**b * log(a), taken as 0 where a == 0 and b >= 0, as in PyTorch (0 * log(0)
                # would be NaN: a learnable exponent on a zero base would turn NaN).
                gb = g * xp.where((a == 0) & (b >= 0), 0, self.out * xp.log(a))
        return ga, gb


class PowConst(Function):
    """``a ** c`` for a Python number ``c``."""

    name = "pow"

    def __init__(self, exponent: float):
        self.exponent = exponent

    def forward(self, a: Array) -> Array:
        self.a = a
        with ignore_float_errors(a):
            return a ** self.exponent

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        c = self.exponent
        if c == 0:      # a**0 is 1 whatever a is: exactly 0, as in PyTorch (not 0 * inf at a == 0)
            return (get_array_module(g).zeros_like(g),)
        if c == 2:
            return (g * (2 * self.a),)
        with ignore_float_errors(g):
            return (g * (c * self.a ** (c - 1)),)     # PyTorch's order: c * a**(c-1) first

    def __repr__(self) -> str:
        return "<PowBackward>"      # PyTorch's name for both kinds of pow (PowBackward0 and 1)


def pow(a: Operand, b: Operand) -> Tensor:  # the name learners expect
    """``a ** b``; a Python number as exponent is the common case.

    >>> import dltutor as dt
    >>> dt.pow(dt.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    """
    if is_tensor(a) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return PowConst(b).apply(a)
    a, b = promote(a, b, "pow")
    return Pow().apply(a, b)


def split_between(g: Array, a: Array, b: Array, a_lost: Array,
                  b_lost: Array) -> tuple[Array, Array]:
    """The gradients of ``maximum(a, b)`` or ``minimum(a, b)``, PyTorch's rule: the side that
    lost gets exactly 0 (a gate: not NaN for a NaN gradient), a tie splits ``g`` evenly, and
    where neither lost (a NaN compares false both ways) both sides get ``g``.

    >>> import numpy as np
    >>> a, b = np.array([1.0, 2.0, 3.0]), np.array([0.0, 2.0, 4.0])
    >>> split_between(np.ones(3), a, b, a_lost=a < b, b_lost=a > b)
    (array([1. , 0.5, 0. ]), array([0. , 0.5, 1. ]))
    """
    even = get_array_module(g).where(a == b, g * 0.5, g)
    return gate(even, ~a_lost), gate(even, ~b_lost)


class Maximum(Function):
    """Elementwise max; where both are equal the gradient is split evenly, as in PyTorch."""

    def forward(self, a: Array, b: Array) -> Array:
        self.a, self.b = a, b
        try:
            return get_array_module(a).maximum(a, b)
        except ValueError:
            raise broadcast_error("maximum", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return split_between(g, self.a, self.b, a_lost=self.a < self.b, b_lost=self.a > self.b)


def maximum(a: Operand, b: Operand) -> Tensor:
    """Elementwise maximum of two tensors (broadcasting).

    >>> import dltutor as dt
    >>> dt.maximum(dt.tensor([1.0, 5.0]), dt.tensor([3.0, 2.0]))
    tensor([3., 5.])
    """
    a, b = promote(a, b, "maximum")
    return Maximum().apply(a, b)


class Minimum(Function):
    """Elementwise min; ties split the gradient evenly, as in PyTorch."""

    def forward(self, a: Array, b: Array) -> Array:
        self.a, self.b = a, b
        try:
            return get_array_module(a).minimum(a, b)
        except ValueError:
            raise broadcast_error("minimum", a, b) from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return split_between(g, self.a, self.b, a_lost=self.a > self.b, b_lost=self.a < self.b)


def minimum(a: Operand, b: Operand) -> Tensor:
    """Elementwise minimum of two tensors (broadcasting).

    >>> import dltutor as dt
    >>> dt.minimum(dt.tensor([1.0, 5.0]), 2.0)
    tensor([1., 2.])
    """
    a, b = promote(a, b, "minimum")
    return Minimum().apply(a, b)


class Where(Function):
    """``where(condition, a, b)``: ``a`` where the condition holds, else ``b``."""

    def __init__(self, condition: Array):
        self.condition = condition

    def forward(self, a: Array, b: Array) -> Array:
        try:
            return get_array_module(a).where(self.condition, a, b)
        except ValueError:
            shapes = f"{tuple(self.condition.shape)}, {tuple(a.shape)} and {tuple(b.shape)}"
            raise ValueError(f"where: the condition, a and b have shapes {shapes}, which do not "
                             "broadcast together: trailing dimensions must be equal or 1") from None

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        zero = xp.zeros((), dtype=g.dtype)
        return xp.where(self.condition, g, zero), xp.where(self.condition, zero, g)


def where(condition: Any, a: Operand, b: Operand) -> Tensor:
    """Take ``a`` where ``condition`` is true and ``b`` elsewhere (all three broadcast).

    >>> import dltutor as dt
    >>> x = dt.tensor([-1.0, 2.0])
    >>> dt.where(x > 0, x, 0.0)
    tensor([0., 2.])
    """
    cond = condition.data if is_tensor(condition) else condition
    if getattr(cond, "dtype", None) != bool:  # noqa: E721 - a NumPy dtype equals bool, is not it
        # PyTorch refuses too: a float mask where 0.5 counts as True is a bug waiting to happen
        raise TypeError(f"where: the condition must be a bool tensor (such as x > 0), got "
                        f"{getattr(cond, 'dtype', type(cond).__name__)}; compare it with "
                        "something first (mask > 0), or use mask.astype(dt.bool_)")
    if not is_tensor(a) and not is_tensor(b):
        a = make_tensor((B.backend_of(cond) or B.current()).asarray(a, dtype=default_float))
    a, b = promote(a, b, "where")
    return Where(cond).apply(a, b)


class Neg(Function):
    """``-a``: the gradient, negated."""

    grad_shapes_exact = True

    def forward(self, a: Array) -> Array:
        return -a

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (-g,)


def neg(a: Tensor) -> Tensor:
    """``-a``.

    >>> import dltutor as dt
    >>> dt.neg(dt.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    """
    return Neg().apply(a)


def compare(a: Tensor, b: Operand, op: str) -> Tensor:
    """``a < b`` and the other comparisons (``op`` is ``"__lt__"`` etc.): a boolean tensor,
    which carries no gradient.

    >>> import dltutor as dt
    >>> compare(dt.tensor([1.0, 3.0]), 2.0, "__lt__")
    tensor([ True, False])
    """
    other = b.data if is_tensor(b) else b
    result = getattr(a.data, op)(other)
    if result.__class__ is np.bool_:      # two 0-d arrays compared: NumPy gives a scalar
        result = get_array_module(a.data).asarray(result)
    return make_tensor(result)
