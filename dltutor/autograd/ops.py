"""The differentiable ops: each a :class:`Function` with its backward beside it, and a lowercase
function that learners call (``dt.exp(x)``, ``x.exp()``, ``x + y``).

Ops work on raw backend arrays and get their array module from :func:`get_array_module`, never
from ``numpy`` directly, so the same code runs on CuPy. They never reduce broadcast gradients
themselves: the backward engine does that in one place.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> b = dt.tensor([[1.0], [2.0]], requires_grad=True)
>>> (x * b).sum().backward()          # (1,3) * (2,1) broadcasts to (2,3)
>>> x.grad, b.grad                    # each gradient has its own tensor's shape
(tensor([[3., 3., 3.]]), tensor([[6.],
        [6.]]))
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

from .. import backend as B
from .creation import as_dtype, default_float
from .tensor import Function, Tensor, _make

get_array_module = B.get_array_module
# log(0), x/0 and overflow give inf/nan silently, as in PyTorch; dt.detect_anomaly finds them.
quiet = B.ignore_float_errors


# ---------------------------------------------------------------------------------------------
# Turning Python numbers and arrays into tensors next to an existing tensor.
# ---------------------------------------------------------------------------------------------
def lift(value: Any, like: Tensor) -> Tensor:
    """``value`` as a constant tensor on ``like``'s backend (Python numbers take its dtype)."""
    if isinstance(value, Tensor):
        return value
    backend = B.backend_of(like.data) or B.current()
    dtype = None
    if isinstance(value, (bool, int, float)):
        if like.data.dtype.kind in "fc" or not isinstance(value, float):
            dtype = like.data.dtype
        else:
            dtype = default_float  # int tensor * 0.5 is float32, as in PyTorch
    return _make(backend.asarray(value, dtype=dtype), False, None)


def _pair(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Two operands as tensors with PyTorch's int/float promotion."""
    if not isinstance(a, Tensor):
        a = lift(a, b)
    elif not isinstance(b, Tensor):
        b = lift(b, a)
    if a.data.dtype != b.data.dtype:
        ka, kb = a.data.dtype.kind, b.data.dtype.kind
        if ka in "fc" and kb not in "fc":
            b = cast(b, a.data.dtype)
        elif kb in "fc" and ka not in "fc":
            a = cast(a, b.data.dtype)
    return a, b


def _broadcast_error(op: str, a: Any, b: Any) -> ValueError:
    return ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast: "
                      "trailing dimensions must be equal or 1 (see the broadcasting rules of "
                      "NumPy). Reshape or unsqueeze one operand.")


def _binary_forward(op: str, func: Any, a: Any, b: Any) -> Any:
    try:
        return func(a, b)
    except ValueError:
        if a.ndim and b.ndim:
            raise _broadcast_error(op, a, b) from None
        raise


# ---------------------------------------------------------------------------------------------
# Elementwise binary ops (NumPy broadcasting)
# ---------------------------------------------------------------------------------------------
class Add(Function):
    def forward(self, a, b):
        try:
            return a + b
        except ValueError:
            raise _broadcast_error("add", a, b) from None

    def backward(self, g):
        return g, g


class Sub(Function):
    def forward(self, a, b):
        try:
            return a - b
        except ValueError:
            raise _broadcast_error("sub", a, b) from None

    def backward(self, g):
        return g, -g


class Mul(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        try:
            return a * b
        except ValueError:
            raise _broadcast_error("mul", a, b) from None

    def backward(self, g):
        ta, tb = self.inputs
        return (g * self.b if ta.requires_grad else None,
                g * self.a if tb.requires_grad else None)


class Div(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        try:
            with quiet(a):
                return a / b
        except ValueError:
            raise _broadcast_error("div", a, b) from None

    def backward(self, g):
        ta, tb = self.inputs
        with quiet(g):
            ga = g / self.b
            gb = -ga * self.a / self.b if tb.requires_grad else None
        return ga if ta.requires_grad else None, gb


class Pow(Function):
    """``a ** b`` with a tensor exponent (the exponent's gradient needs ``log(a)``)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        try:
            with quiet(a):
                self.out = a ** b
        except ValueError:
            raise _broadcast_error("pow", a, b) from None
        return self.out

    def backward(self, g):
        ta, tb = self.inputs
        xp = get_array_module(g)
        with quiet(g):
            ga = g * self.b * self.a ** (self.b - 1) if ta.requires_grad else None
            gb = g * self.out * xp.log(self.a) if tb.requires_grad else None
        return ga, gb


class PowConst(Function):
    name = "pow"
    """``a ** c`` for a Python number ``c``."""

    def __init__(self, exponent: float):
        self.exponent = exponent

    def forward(self, a):
        self.a = a
        with quiet(a):
            return a ** self.exponent

    def backward(self, g):
        c = self.exponent
        if c == 2:
            return (g * 2 * self.a,)
        with quiet(g):
            return (g * c * self.a ** (c - 1),)


class Maximum(Function):
    """Elementwise max; where both are equal the gradient is split evenly, as in PyTorch."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return _binary_forward("maximum", get_array_module(a).maximum, a, b)

    def backward(self, g):
        share = ((self.a > self.b) + 0.5 * (self.a == self.b)).astype(g.dtype)
        return g * share, g * (1 - share)


class Minimum(Function):
    """Elementwise min; ties split the gradient evenly, as in PyTorch."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return _binary_forward("minimum", get_array_module(a).minimum, a, b)

    def backward(self, g):
        share = ((self.a < self.b) + 0.5 * (self.a == self.b)).astype(g.dtype)
        return g * share, g * (1 - share)


class Where(Function):
    """``where(condition, a, b)``: ``a`` where the condition holds, else ``b``."""

    def __init__(self, condition: Any):
        self.condition = condition

    def forward(self, a, b):
        return get_array_module(a).where(self.condition, a, b)

    def backward(self, g):
        xp = get_array_module(g)
        zero = xp.zeros((), dtype=g.dtype)
        return xp.where(self.condition, g, zero), xp.where(self.condition, zero, g)


def add(a: Any, b: Any) -> Tensor:
    """``a + b`` with broadcasting.

    >>> import dltutor as dt
    >>> dt.add(dt.tensor([1.0, 2.0]), 1)
    tensor([2., 3.])
    """
    a, b = _pair(a, b)
    return Add()(a, b)


def sub(a: Any, b: Any) -> Tensor:
    """``a - b`` with broadcasting.

    >>> import dltutor as dt
    >>> dt.sub(dt.tensor([3.0]), dt.tensor([1.0, 2.0]))
    tensor([2., 1.])
    """
    a, b = _pair(a, b)
    return Sub()(a, b)


def mul(a: Any, b: Any) -> Tensor:
    """``a * b`` elementwise with broadcasting.

    >>> import dltutor as dt
    >>> dt.mul(dt.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    a, b = _pair(a, b)
    return Mul()(a, b)


def div(a: Any, b: Any) -> Tensor:
    """``a / b`` elementwise (true division: ints give floats).

    >>> import dltutor as dt
    >>> dt.div(dt.tensor([1.0, 2.0]), 4)
    tensor([0.25, 0.5 ])
    """
    a, b = _pair(a, b)
    if a.data.dtype.kind not in "fc":
        a, b = cast(a, default_float), cast(b, default_float)
    return Div()(a, b)


def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - the name learners expect
    """``a ** b``; a Python number as exponent is the common case.

    >>> import dltutor as dt
    >>> dt.pow(dt.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    """
    if isinstance(a, Tensor) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return PowConst(b)(a)
    a, b = _pair(a, b)
    return Pow()(a, b)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum of two tensors (broadcasting).

    >>> import dltutor as dt
    >>> dt.maximum(dt.tensor([1.0, 5.0]), dt.tensor([3.0, 2.0]))
    tensor([3., 5.])
    """
    a, b = _pair(a, b)
    return Maximum()(a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum of two tensors (broadcasting).

    >>> import dltutor as dt
    >>> dt.minimum(dt.tensor([1.0, 5.0]), 2.0)
    tensor([1., 2.])
    """
    a, b = _pair(a, b)
    return Minimum()(a, b)


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """Take ``a`` where ``condition`` is true and ``b`` elsewhere (all three broadcast).

    >>> import dltutor as dt
    >>> x = dt.tensor([-1.0, 2.0])
    >>> dt.where(x > 0, x, 0.0)
    tensor([0., 2.])
    """
    cond = condition.data if isinstance(condition, Tensor) else condition
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _make((B.backend_of(cond) or B.current()).asarray(a, dtype=default_float), False, None)
    a, b = _pair(a, b)
    return Where(cond.astype(bool) if hasattr(cond, "astype") else cond)(a, b)


# ---------------------------------------------------------------------------------------------
# Elementwise unary ops
# ---------------------------------------------------------------------------------------------
class Neg(Function):
    def forward(self, a):
        return -a

    def backward(self, g):
        return (-g,)


class Exp(Function):
    def forward(self, a):
        with quiet(a):
            self.out = get_array_module(a).exp(a)
        return self.out

    def backward(self, g):
        return (g * self.out,)


class Log(Function):
    def forward(self, a):
        self.a = a
        with quiet(a):
            return get_array_module(a).log(a)

    def backward(self, g):
        with quiet(g):
            return (g / self.a,)


class Sqrt(Function):
    def forward(self, a):
        with quiet(a):
            self.out = get_array_module(a).sqrt(a)
        return self.out

    def backward(self, g):
        with quiet(g):
            return (g / (2 * self.out),)


class Abs(Function):
    """``|a|``; the gradient at 0 is 0, as in PyTorch."""

    def forward(self, a):
        self.a = a
        return get_array_module(a).abs(a)

    def backward(self, g):
        return (g * get_array_module(g).sign(self.a),)


class Tanh(Function):
    def forward(self, a):
        self.out = get_array_module(a).tanh(a)
        return self.out

    def backward(self, g):
        return (g * (1 - self.out * self.out),)


class Sigmoid(Function):
    def forward(self, a):
        # 1 / (1 + exp(-a)) overflows for large negative a; this form cannot.
        self.out = 0.5 * get_array_module(a).tanh(0.5 * a) + 0.5
        return self.out

    def backward(self, g):
        return (g * self.out * (1 - self.out),)


class Relu(Function):
    """``max(a, 0)``; the gradient at 0 is 0, as in PyTorch."""

    def forward(self, a):
        self.mask = a > 0
        return get_array_module(a).maximum(a, 0)  # a * mask would give -0.0 and hide NaN

    def backward(self, g):
        return (g * self.mask,)


class LeakyRelu(Function):
    def __init__(self, negative_slope: float):
        self.slope = negative_slope

    def forward(self, a):
        xp = get_array_module(a)
        self.mask = a > 0
        return xp.where(self.mask, a, a * self.slope)

    def backward(self, g):
        return (get_array_module(g).where(self.mask, g, g * self.slope),)


class Clip(Function):
    """Clamp to ``[low, high]``; the gradient passes where ``low <= a <= high`` (PyTorch)."""

    def __init__(self, low: float | None, high: float | None):
        self.low, self.high = low, high

    def forward(self, a):
        self.a = a
        return get_array_module(a).clip(a, self.low, self.high)

    def backward(self, g):
        keep = True
        if self.low is not None:
            keep = self.a >= self.low
        if self.high is not None:
            keep = keep & (self.a <= self.high)
        return (g * keep,)


class Erf(Function):
    """The error function; its derivative is ``2 / sqrt(pi) * exp(-a**2)``."""

    def forward(self, a):
        self.a = a
        return B.backend_of(a).erf(a)

    def backward(self, g):
        xp = get_array_module(g)
        return (g * (2 / math.sqrt(math.pi)) * xp.exp(-self.a * self.a),)


def neg(a: Tensor) -> Tensor:
    """``-a``."""
    return Neg()(a)


def exp(a: Tensor) -> Tensor:
    """``e ** a`` elementwise.

    >>> import dltutor as dt
    >>> dt.exp(dt.tensor([0.0]))
    tensor([1.])
    """
    return Exp()(a)


def log(a: Tensor) -> Tensor:
    """Natural logarithm elementwise (``log(0)`` is ``-inf``; see ``dt.detect_anomaly``).

    >>> import dltutor as dt
    >>> dt.log(dt.tensor([1.0]))
    tensor([0.])
    """
    return Log()(a)


def sqrt(a: Tensor) -> Tensor:
    """Square root elementwise.

    >>> import dltutor as dt
    >>> dt.sqrt(dt.tensor([4.0]))
    tensor([2.])
    """
    return Sqrt()(a)


def abs(a: Tensor) -> Tensor:  # noqa: A001
    """Absolute value elementwise.

    >>> import dltutor as dt
    >>> dt.abs(dt.tensor([-2.0, 3.0]))
    tensor([2., 3.])
    """
    return Abs()(a)


def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise.

    >>> import dltutor as dt
    >>> dt.tanh(dt.tensor([0.0]))
    tensor([0.])
    """
    return Tanh()(a)


def sigmoid(a: Tensor) -> Tensor:
    """Logistic sigmoid ``1 / (1 + exp(-a))``, computed without overflow.

    >>> import dltutor as dt
    >>> dt.sigmoid(dt.tensor([0.0]))
    tensor([0.5])
    """
    return Sigmoid()(a)


def relu(a: Tensor) -> Tensor:
    """``max(a, 0)`` elementwise.

    >>> import dltutor as dt
    >>> dt.relu(dt.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return Relu()(a)


def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``a`` where positive, ``negative_slope * a`` elsewhere.

    >>> import dltutor as dt
    >>> dt.leaky_relu(dt.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1,  2. ])
    """
    return LeakyRelu(negative_slope)(a)


def erf(a: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^a exp(-t**2) dt`` elementwise.

    >>> import dltutor as dt
    >>> round(dt.erf(dt.tensor([1.0])).item(), 4)
    0.8427
    """
    return Erf()(a)


def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``a * Phi(a)`` (Phi: standard normal CDF), as in PyTorch;
    ``approximate="tanh"`` uses ``0.5 * a * (1 + tanh(sqrt(2/pi) * (a + 0.044715 * a**3)))``.

    >>> import dltutor as dt
    >>> [round(v, 4) for v in dt.gelu(dt.tensor([-1.0, 0.0, 1.0])).tolist()]
    [-0.1587, 0.0, 0.8413]
    """
    if approximate == "tanh":
        inner = (a + 0.044715 * a ** 3) * math.sqrt(2 / math.pi)
        return a * (tanh(inner) + 1) * 0.5
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return a * (erf(a * (1 / math.sqrt(2))) + 1) * 0.5


def clip(a: Tensor, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """Clamp values to ``[min, max]`` (either bound may be None). PyTorch calls it ``clamp``.

    >>> import dltutor as dt
    >>> dt.clip(dt.tensor([-2.0, 0.5, 3.0]), -1, 1)
    tensor([-1. ,  0.5,  1. ])
    """
    if min is None and max is None:
        raise ValueError("clip: give at least one of min and max")
    return Clip(min, max)(a)


clamp = clip


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------
def _axes(axis: Any, ndim: int, op: str) -> tuple[int, ...]:
    """Normalise ``axis`` (None, int or tuple, negatives allowed) to sorted positive axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < builtins.max(ndim, 1):
            raise ValueError(f"{op}: axis {ax} is out of range for a tensor with {ndim} "
                             f"dimension(s)")
        out.append(ax % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def _keep_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class Reduction(Function):
    """Shared plumbing: reduce over ``axes``; backward reshapes ``g`` to keep reduced dims."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool):
        self.axes, self.keepdims = axes, keepdims

    def finish(self, out):
        """Drop kept dims unless asked; always an array (never a NumPy scalar)."""
        return out if self.keepdims else out.reshape(
            tuple(n for i, n in enumerate(out.shape) if i not in self.axes))

    def expand(self, g):
        """``g`` with the reduced dims back as size 1, ready to broadcast against the input."""
        return g.reshape(_keep_shape(self.shape, self.axes))


class Sum(Reduction):
    def forward(self, a):
        self.shape = a.shape
        return self.finish(a.sum(axis=self.axes, keepdims=True))

    def backward(self, g):
        return (get_array_module(g).broadcast_to(self.expand(g), self.shape),)


class Mean(Reduction):
    def forward(self, a):
        self.shape = a.shape
        self.count = math.prod(a.shape[i] for i in self.axes)
        return self.finish(a.mean(axis=self.axes, keepdims=True))

    def backward(self, g):
        xp = get_array_module(g)
        return (xp.broadcast_to(self.expand(g) / self.count, self.shape),)


class Max(Reduction):
    """Max over axes; tied maxima share the gradient evenly."""

    largest = True

    def forward(self, a):
        self.shape, self.a = a.shape, a
        if a.size == 0:
            raise ValueError(f"{self.op_name}: cannot reduce an empty tensor of shape {a.shape}")
        f = a.max if self.largest else a.min
        self.out = f(axis=self.axes, keepdims=True)
        return self.finish(self.out)

    def backward(self, g):
        mask = self.a == self.out
        ties = mask.sum(axis=self.axes, keepdims=True).astype(g.dtype)  # int counts -> g's dtype
        return (self.expand(g) / ties * mask,)


class Min(Max):
    largest = False


class Var(Reduction):
    """Variance with ``correction`` (1: unbiased, PyTorch's default; 0: population)."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool, correction: int):
        super().__init__(axes, keepdims)
        self.correction = correction

    def forward(self, a):
        self.shape = a.shape
        count = math.prod(a.shape[i] for i in self.axes)
        self.denominator = builtins.max(count - self.correction, 0)
        self.centered = a - a.mean(axis=self.axes, keepdims=True)
        squares = (self.centered * self.centered).sum(axis=self.axes, keepdims=True)
        return self.finish(squares / self.denominator)

    def backward(self, g):
        return (self.expand(g) * (2 / self.denominator) * self.centered,)


class LogSumExp(Reduction):
    name = "logsumexp"
    """``log(sum(exp(a)))`` without overflow: shift by the max first."""

    def forward(self, a):
        xp = get_array_module(a)
        self.shape, self.a = a.shape, a
        shift = a.max(axis=self.axes, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)  # all -inf: avoid inf - inf
        with quiet(a):
            self.out = xp.log(xp.exp(a - shift).sum(axis=self.axes, keepdims=True)) + shift
        return self.finish(self.out)

    def backward(self, g):
        return (self.expand(g) * get_array_module(g).exp(self.a - self.out),)


def _reduce(cls: type, a: Tensor, axis: Any, keepdims: bool, dim: Any, keepdim: Any,
            name: str, **extra: Any) -> Tensor:
    if dim is not None:
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return cls(_axes(axis, a.ndim, name), bool(keepdims), **extra)(a)


def sum(a: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Tensor:
    """Sum over ``axis`` (all axes by default). ``dim``/``keepdim`` are PyTorch's spellings.

    >>> import dltutor as dt
    >>> x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dt.sum(x), dt.sum(x, axis=0), dt.sum(x, dim=1, keepdim=True).shape
    (tensor(10.), tensor([4., 6.]), (2, 1))
    """
    return _reduce(Sum, a, axis, keepdims, dim, keepdim, "sum")


def mean(a: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """Mean over ``axis`` (all axes by default).

    >>> import dltutor as dt
    >>> dt.mean(dt.tensor([1.0, 2.0, 6.0]))
    tensor(3.)
    """
    if a.data.dtype.kind not in "fc":
        raise TypeError(f"mean of a {a.dtype} tensor: convert it first with .float()")
    return _reduce(Mean, a, axis, keepdims, dim, keepdim, "mean")


def max(a: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Tensor:
    """Largest value over ``axis``; tied maxima share the gradient. Use ``argmax`` for indices.

    >>> import dltutor as dt
    >>> dt.max(dt.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1)
    tensor([5., 7.])
    """
    return _reduce(Max, a, axis, keepdims, dim, keepdim, "max")


def min(a: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A001
        keepdim: bool | None = None) -> Tensor:
    """Smallest value over ``axis``; tied minima share the gradient.

    >>> import dltutor as dt
    >>> dt.min(dt.tensor([3.0, 1.0]))
    tensor(1.)
    """
    return _reduce(Min, a, axis, keepdims, dim, keepdim, "min")


def var(a: Tensor, axis: Any = None, keepdims: bool = False, correction: int = 1, *,
        dim: Any = None, keepdim: bool | None = None, unbiased: bool | None = None) -> Tensor:
    """Variance over ``axis``; unbiased (divides by n - 1) by default, as in PyTorch.

    >>> import dltutor as dt
    >>> x = dt.tensor([1.0, 2.0, 3.0, 4.0])
    >>> dt.var(x), dt.var(x, correction=0)
    (tensor(1.6667), tensor(1.25))
    """
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return _reduce(Var, a, axis, keepdims, dim, keepdim, "var", correction=correction)


def std(a: Tensor, axis: Any = None, keepdims: bool = False, correction: int = 1, *,
        dim: Any = None, keepdim: bool | None = None, unbiased: bool | None = None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments.

    >>> import dltutor as dt
    >>> dt.std(dt.tensor([1.0, 3.0]))
    tensor(1.4142)
    """
    return sqrt(var(a, axis, keepdims, correction, dim=dim, keepdim=keepdim, unbiased=unbiased))


def logsumexp(a: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
              keepdim: bool | None = None) -> Tensor:
    """``log(sum(exp(a)))`` over ``axis``, stable for large inputs.

    >>> import dltutor as dt
    >>> dt.logsumexp(dt.tensor([-1000.0, 1.0]))
    tensor(1.)
    """
    return _reduce(LogSumExp, a, axis, keepdims, dim, keepdim, "logsumexp")


# ---------------------------------------------------------------------------------------------
# Softmax family
# ---------------------------------------------------------------------------------------------
class Softmax(Function):
    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, a):
        xp = get_array_module(a)
        e = xp.exp(a - a.max(axis=self.axis, keepdims=True))
        self.out = e / e.sum(axis=self.axis, keepdims=True)
        return self.out

    def backward(self, g):
        s = self.out
        return (s * (g - (g * s).sum(axis=self.axis, keepdims=True)),)


class LogSoftmax(Function):
    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, a):
        xp = get_array_module(a)
        shifted = a - a.max(axis=self.axis, keepdims=True)
        self.out = shifted - xp.log(xp.exp(shifted).sum(axis=self.axis, keepdims=True))
        return self.out

    def backward(self, g):
        xp = get_array_module(g)
        return (g - xp.exp(self.out) * g.sum(axis=self.axis, keepdims=True),)


def _one_axis(axis: Any, dim: Any, ndim: int, op: str) -> int:
    axis = dim if dim is not None else axis
    return _axes(axis, ndim, op)[0]


def softmax(a: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``exp(a) / sum(exp(a))`` along ``axis``, stable for inputs like ``[-1000, 1]``.

    >>> import dltutor as dt
    >>> dt.softmax(dt.tensor([-1000.0, 1.0]))
    tensor([0., 1.])
    """
    return Softmax(_one_axis(axis, dim, a.ndim, "softmax"))(a)


def log_softmax(a: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``log(softmax(a))`` along ``axis``, computed without taking the log of 0.

    >>> import dltutor as dt
    >>> dt.log_softmax(dt.tensor([-1000.0, 1.0]))
    tensor([-1001.,     0.])
    """
    return LogSoftmax(_one_axis(axis, dim, a.ndim, "log_softmax"))(a)


# ---------------------------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------------------------
class Reshape(Function):
    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape

    def forward(self, a):
        self.in_shape = a.shape
        return a.reshape(self.shape)

    def backward(self, g):
        return (g.reshape(self.in_shape),)


class Permute(Function):
    def __init__(self, axes: tuple[int, ...]):
        self.axes = axes

    def forward(self, a):
        return get_array_module(a).transpose(a, self.axes)

    def backward(self, g):
        inverse = [0] * len(self.axes)
        for i, ax in enumerate(self.axes):
            inverse[ax] = i
        return (get_array_module(g).transpose(g, inverse),)


class BroadcastTo(Function):
    """``expand``: a read-only broadcast view; backward is the shared reduction."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape

    def forward(self, a):
        return get_array_module(a).broadcast_to(a, self.shape)

    def backward(self, g):
        return (g,)


def _resolve_shape(shape: Sequence[int], size: int, old: tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(int(n) for n in shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    if len(unknown) > 1:
        raise ValueError(f"reshape: only one dimension can be -1, got {shape}")
    if unknown and known and size % known == 0:
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size or any(n < 0 for n in shape):
        raise ValueError(f"reshape: cannot reshape a tensor of shape {old} ({size} elements) "
                         f"into shape {shape}")
    return shape


def reshape(a: Tensor, *shape: Any) -> Tensor:
    """The same values in a new shape (one dimension may be -1: worked out from the rest).

    >>> import dltutor as dt
    >>> dt.reshape(dt.arange(6), 2, -1).shape
    (2, 3)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    new = _resolve_shape(shape, a.data.size, tuple(a.shape))
    if new == a.shape:
        return a
    return Reshape(new)(a)


def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one (``nn.Flatten`` starts at 1).

    >>> import dltutor as dt
    >>> dt.flatten(dt.zeros(2, 3, 4), 1).shape
    (2, 12)
    """
    if a.ndim == 0:
        return reshape(a, 1)
    start, end = start_dim % a.ndim, end_dim % a.ndim
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = a.shape[:start] + (math.prod(a.shape[start:end + 1]),) + a.shape[end + 1:]
    return reshape(a, shape)


def permute(a: Tensor, *axes: Any) -> Tensor:
    """Reorder dimensions: ``permute(x, 2, 0, 1)`` makes axis 2 the first.

    >>> import dltutor as dt
    >>> dt.permute(dt.zeros(2, 3, 4), 2, 0, 1).shape
    (4, 2, 3)
    """
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    if sorted(ax % builtins.max(a.ndim, 1) for ax in axes) != list(range(a.ndim)):
        raise ValueError(f"permute: {axes} is not an ordering of the {a.ndim} dimensions of a "
                         f"tensor of shape {tuple(a.shape)}")
    return Permute(tuple(ax % a.ndim for ax in axes))(a)


def transpose(a: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Swap two dimensions (the last two by default); ``t.T`` reverses all of them.

    >>> import dltutor as dt
    >>> dt.transpose(dt.zeros(2, 3)).shape
    (3, 2)
    """
    if a.ndim < 2:
        return a
    axes = list(range(a.ndim))
    i, j = dim0 % a.ndim, dim1 % a.ndim
    axes[i], axes[j] = axes[j], axes[i]
    return Permute(tuple(axes))(a)


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim`` (e.g. a channel axis for images).

    >>> import dltutor as dt
    >>> dt.unsqueeze(dt.zeros(28, 28), 0).shape
    (1, 28, 28)
    """
    if not -a.ndim - 1 <= dim <= a.ndim:
        raise ValueError(f"unsqueeze: dim {dim} is out of range for a tensor with {a.ndim} "
                         f"dimensions (use -{a.ndim + 1}..{a.ndim})")
    dim = dim % (a.ndim + 1)
    return reshape(a, a.shape[:dim] + (1,) + a.shape[dim:])


def squeeze(a: Tensor, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (only ``dim`` if given, and only if its size is 1).

    >>> import dltutor as dt
    >>> dt.squeeze(dt.zeros(1, 3, 1)).shape
    (3,)
    """
    if dim is None:
        return reshape(a, tuple(n for n in a.shape if n != 1))
    dim = _axes(dim, a.ndim, "squeeze")[0]
    if a.shape[dim] != 1:
        return a
    return reshape(a, a.shape[:dim] + a.shape[dim + 1:])


def broadcast_to(a: Tensor, shape: Sequence[int]) -> Tensor:
    """Repeat size-1 dimensions (and add leading ones) to reach ``shape`` without copying.

    >>> import dltutor as dt
    >>> dt.broadcast_to(dt.tensor([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    shape = tuple(int(n) for n in shape)
    try:
        get_array_module(a.data).broadcast_shapes(a.shape, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(a.shape)} to "
                         f"{shape}") from None
    if shape == a.shape:
        return a
    return BroadcastTo(shape)(a)


def expand(a: Tensor, *sizes: Any) -> Tensor:
    """PyTorch's ``expand``: like :func:`broadcast_to`, and -1 keeps a dimension's size.

    >>> import dltutor as dt
    >>> dt.expand(dt.zeros(3, 1), -1, 4).shape
    (3, 4)
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - a.ndim
    shape = tuple(a.shape[i - lead] if n == -1 else n for i, n in enumerate(sizes))
    return broadcast_to(a, shape)


# ---------------------------------------------------------------------------------------------
# Indexing, concatenation, stacking
# ---------------------------------------------------------------------------------------------
def _is_basic(index: tuple) -> bool:
    """Basic indexing (ints, slices, None, ...) never repeats an element."""
    return all(isinstance(i, (int, slice)) or i is None or i is Ellipsis for i in index)


class GetItem(Function):
    name = "getitem"
    def __init__(self, index: tuple):
        self.index = index

    def forward(self, a):
        self.shape, self.dtype = a.shape, a.dtype
        try:
            return a[self.index]
        except IndexError as exc:
            raise IndexError(f"indexing a tensor of shape {a.shape}: {exc}") from None

    def backward(self, g):
        xp = get_array_module(g)
        full = xp.zeros(self.shape, dtype=g.dtype)
        if _is_basic(self.index):
            full[self.index] = g
        else:  # integer arrays may repeat an element: their gradients must add up
            B.scatter_add(full, self.index, g)
        return (full,)


def _normalise_index(index: Any, like: Any) -> tuple:
    if not isinstance(index, tuple):
        index = (index,)
    backend = B.backend_of(like) or B.current()
    out = []
    for i in index:
        if isinstance(i, Tensor):
            i = i.data
        elif isinstance(i, list):
            i = backend.asarray(i)
        if hasattr(i, "dtype") and getattr(i, "ndim", 1) == 0 and i.dtype.kind in "iu":
            i = int(i)
        out.append(i)
    return tuple(out)


def getitem(a: Tensor, index: Any) -> Tensor:
    """``a[index]`` with everything NumPy accepts: ints, slices, integer arrays, boolean masks.

    Integer arrays may repeat an element; the gradients of the repeats add up.

    >>> import dltutor as dt
    >>> x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> x[[0, 0, 2]].sum().backward()
    >>> x.grad
    tensor([2., 0., 1.])
    """
    return GetItem(_normalise_index(index, a.data))(a)


class Concat(Function):
    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, *arrays):
        self.sizes = [x.shape[self.axis] for x in arrays]
        try:
            return get_array_module(arrays[0]).concatenate(arrays, axis=self.axis)
        except ValueError:
            shapes = ", ".join(str(x.shape) for x in arrays)
            raise ValueError(f"concat along axis {self.axis}: shapes {shapes} must agree in "
                             "every other dimension") from None

    def backward(self, g):
        grads, start = [], 0
        for size in self.sizes:
            index = [slice(None)] * g.ndim
            index[self.axis] = slice(start, start + size)
            grads.append(g[tuple(index)])
            start += size
        return tuple(grads)


class Stack(Function):
    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, *arrays):
        try:
            return get_array_module(arrays[0]).stack(arrays, axis=self.axis)
        except ValueError:
            shapes = ", ".join(str(x.shape) for x in arrays)
            raise ValueError(f"stack: all tensors must have the same shape, got {shapes}") from None

    def backward(self, g):
        index = [slice(None)] * g.ndim
        grads = []
        for i in range(g.shape[self.axis]):
            index[self.axis] = i
            grads.append(g[tuple(index)])
        return tuple(grads)


def _tensors(values: Sequence[Any], op: str) -> list[Tensor]:
    values = list(values)
    if not values:
        raise ValueError(f"{op}: needs at least one tensor")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        raise TypeError(f"{op}: expects a list of tensors")
    return [lift(v, like) for v in values]


def concat(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis (PyTorch: ``cat``).

    >>> import dltutor as dt
    >>> dt.concat([dt.zeros(2, 3), dt.ones(1, 3)]).shape
    (3, 3)
    """
    tensors = _tensors(tensors, "concat")
    axis = _one_axis(axis, dim, tensors[0].ndim, "concat")
    return Concat(axis)(*tensors)


cat = concat


def stack(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis.

    >>> import dltutor as dt
    >>> dt.stack([dt.zeros(3), dt.ones(3)]).shape
    (2, 3)
    """
    tensors = _tensors(tensors, "stack")
    axis = dim if dim is not None else axis
    ndim = tensors[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"stack: axis {axis} is out of range for {ndim} dimensions")
    return Stack(axis % ndim)(*tensors)


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------
class Matmul(Function):
    """Batched, broadcasting matrix product with NumPy's rules for 1-D operands."""

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: operands must have at least 1 dimension, got shapes "
                             f"{a.shape} and {b.shape}; use * for scalars")
        ka = a.shape[-1]
        kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if ka != kb:
            raise ValueError(f"matmul: {a.shape} @ {b.shape}: inner dimensions {ka} and {kb} "
                             "differ")
        self.a, self.b = a, b
        try:
            return a @ b
        except ValueError:
            raise ValueError(f"matmul: {a.shape} @ {b.shape}: batch dimensions "
                             f"{a.shape[:-2]} and {b.shape[:-2]} do not broadcast") from None

    def backward(self, g):
        ta, tb = self.inputs
        a, b = self.a, self.b
        xp = get_array_module(g)
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if ta.requires_grad else None, g * a if tb.requires_grad else None)
        if a.ndim == 1:                     # (k,) @ (..., k, n) -> (..., n)
            g2 = g[..., None, :]
            ga = (g2 @ xp.swapaxes(b, -1, -2))[..., 0, :] if ta.requires_grad else None
            gb = a[:, None] * g2 if tb.requires_grad else None
            return ga, gb
        if b.ndim == 1:                     # (..., m, k) @ (k,) -> (..., m)
            g2 = g[..., :, None]
            ga = g2 * b if ta.requires_grad else None
            gb = (xp.swapaxes(a, -1, -2) @ g2)[..., 0] if tb.requires_grad else None
            return ga, gb
        ga = g @ xp.swapaxes(b, -1, -2) if ta.requires_grad else None
        gb = xp.swapaxes(a, -1, -2) @ g if tb.requires_grad else None
        return ga, gb


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product ``a @ b``; leading (batch) dimensions broadcast, 1-D operands work.

    >>> import dltutor as dt
    >>> (dt.ones(5, 2, 3) @ dt.ones(3, 4)).shape
    (5, 2, 4)
    """
    a, b = _pair(a, b)
    return Matmul()(a, b)


class Linear(Function):
    """``x @ w.T + b`` in one op (weight shaped (out, in) as in PyTorch)."""

    def forward(self, x, w, b=None):
        if x.shape[-1] != w.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} has {x.shape[-1]} features but "
                             f"the weight of shape {w.shape} expects {w.shape[1]}")
        self.x, self.w = x, w
        out = x @ w.T
        if b is not None:
            out += b  # ``out`` is a fresh array, so adding in place is safe
        return out

    def backward(self, g):
        x, w = self.x, self.w
        inputs = self.inputs
        gx = g @ w if inputs[0].requires_grad else None
        gw = gb = None
        if inputs[1].requires_grad:
            if x.ndim == 2:
                gw = g.T @ x
            else:
                gw = g.reshape(-1, g.shape[-1]).T @ x.reshape(-1, x.shape[-1])
        if len(inputs) == 3 and inputs[2].requires_grad:
            gb = g.sum(axis=tuple(range(g.ndim - 1)))
        return gx, gw, gb


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """A fully connected layer's arithmetic: ``x @ weight.T + bias``.

    >>> import dltutor as dt
    >>> dt.linear(dt.ones(2, 3), dt.ones(4, 3), dt.zeros(4)).shape
    (2, 4)
    """
    if bias is None:
        return Linear()(x, weight)
    return Linear()(x, weight, bias)


# ---------------------------------------------------------------------------------------------
# Type and device changes
# ---------------------------------------------------------------------------------------------
class Cast(Function):
    def __init__(self, dtype: Any):
        self.dtype = dtype

    def forward(self, a):
        self.in_dtype = a.dtype
        return a.astype(self.dtype)

    def backward(self, g):
        return (g.astype(self.in_dtype) if self.in_dtype.kind in "fc" else None,)


def cast(a: Tensor, dtype: Any) -> Tensor:
    """The tensor converted to ``dtype``; gradients flow back for float to float casts.

    >>> import dltutor as dt
    >>> dt.cast(dt.tensor([1, 2]), dt.float32)
    tensor([1., 2.])
    """
    dtype = as_dtype(dtype)
    if a.data.dtype == dtype:
        return a
    return Cast(dtype)(a)


class ToBackend(Function):
    def __init__(self, target: B.Backend):
        self.target = target

    def forward(self, a):
        self.source = B.backend_of(a)
        return self.target.asarray(a)

    def backward(self, g):
        return (self.source.asarray(g),)


def to_backend(a: Tensor, target: B.Backend) -> Tensor:
    """The tensor moved to ``target``'s device (itself when already there)."""
    if B.backend_of(a.data) is target:
        return a
    return ToBackend(target)(a)


# ---------------------------------------------------------------------------------------------
# Comparisons and arg-reductions: results carry no gradient.
# ---------------------------------------------------------------------------------------------
def _compare(a: Tensor, b: Any, op: str) -> Tensor:
    other = b.data if isinstance(b, Tensor) else b
    return _make(getattr(a.data, op)(other), False, None)


def argmax(a: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    """Index of the largest value (over the flattened tensor when ``axis`` is None).

    >>> import dltutor as dt
    >>> dt.argmax(dt.tensor([[1.0, 9.0], [8.0, 2.0]]), axis=1)
    tensor([1, 0])
    """
    axis = dim if dim is not None else axis
    keepdims = keepdim if keepdim is not None else keepdims
    return _make(a.data.argmax(axis=axis, keepdims=keepdims).astype(as_dtype("long")), False, None)


def argmin(a: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    """Index of the smallest value (over the flattened tensor when ``axis`` is None)."""
    axis = dim if dim is not None else axis
    keepdims = keepdim if keepdim is not None else keepdims
    return _make(a.data.argmin(axis=axis, keepdims=keepdims).astype(as_dtype("long")), False, None)
