"""Reductions over axes: ``sum``, ``mean``, ``max``, ``min``, ``amax``, ``amin``, ``norm``
(``var`` and ``std`` are in variance.py, ``logsumexp`` beside softmax; the index reductions
``argmax``/``argmin``, which carry no gradient, are in indexing.py). Each op's class is
followed by the function learners call. ``dim=``/``keepdim=`` are PyTorch's spellings of
``axis=``/``keepdims=``; both work. As in PyTorch, ``max`` and ``min`` along one dimension
return the values *and* their indices (``_, predicted = logits.max(dim=1)``); ``amax``/``amin``
return the values alone.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> x.mean(axis=0).sum().backward()
>>> x.grad                            # each element counted once in a mean of two
tensor([[0.5000, 0.5000],
        [0.5000, 0.5000]])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from ... import backend as B
from ..arrays import Array
from ..dtypes import int64
from ..function import Function, is_tensor, make_tensor
from .arithmetic import maximum, minimum
from .elementwise import sign_of
from .gates import gate
from .operands import Axes, axis_index, reduction_axes

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module


class Reduction(Function):
    """Shared plumbing: reduce over ``axes``; backward puts the reduced dims back as size 1."""

    shape: tuple[int, ...]              # the input's, kept by each forward

    def __init__(self, axes: tuple[int, ...], keepdims: bool):
        self.axes, self.keepdims = axes, keepdims

    def finish(self, out: Array) -> Array:
        """Drop kept dims unless asked; always an array (never a NumPy scalar)."""
        return out if self.keepdims else out.reshape(
            tuple(n for i, n in enumerate(out.shape) if i not in self.axes))

    def expand(self, g: Array) -> Array:
        """``g`` with the reduced dims back as size 1, ready to broadcast against the input."""
        return g.reshape(tuple(1 if i in self.axes else n for i, n in enumerate(self.shape)))

    def share_of(self, g: Array, chosen: Array) -> Array:
        """Each chosen element's even share of ``g`` (reduced dims as size 1): ``g`` divided by
        how many elements the bool array ``chosen`` marks along the reduced axes. Tied extremes
        and the inf norm's largest values split their gradient this way."""
        return g / chosen.sum(axis=self.axes, keepdims=True, dtype=g.dtype)


def run_reduction(cls: type, a: Tensor, axis: Axes, keepdims: bool, dim: Axes,
                  keepdim: bool | None, op: str, **extra: float) -> Tensor:
    """Run reduction ``cls`` with PyTorch's or NumPy's argument names."""
    if dim is not None:
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return cls(reduction_axes(op, axis, a.ndim), bool(keepdims), **extra).apply(a)


class Sum(Reduction):
    """Sum over ``axes``: every summed element gets the gradient of its sum."""

    def forward(self, a: Array) -> Array:
        self.shape = a.shape
        return self.finish(a.sum(axis=self.axes, keepdims=True))

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        return (get_array_module(g).broadcast_to(self.expand(g), self.shape),)


def sum(a: Tensor, axis: Axes = None, keepdims: bool = False, *, dim: Axes = None,
        keepdim: bool | None = None) -> Tensor:
    """Sum over ``axis`` (all axes by default).

    >>> import dltutor as dt
    >>> x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dt.sum(x), dt.sum(x, axis=0), dt.sum(x, dim=1, keepdim=True).shape
    (tensor(10.), tensor([4., 6.]), (2, 1))
    """
    return run_reduction(Sum, a, axis, keepdims, dim, keepdim, "sum")


def mean_over(a: Array, axes: tuple[int, ...], count: int) -> Array:
    """The mean of array ``a`` over ``axes`` (kept as size 1), ``count`` elements each; the
    mean of nothing is NaN, silently, as in PyTorch (NumPy warns "Mean of empty slice").

    >>> import numpy as np
    >>> mean_over(np.ones((0, 2)), (0,), 0)
    array([[nan, nan]])
    """
    if count:
        return a.mean(axis=axes, keepdims=True)
    with B.ignore_float_errors(a):
        return a.sum(axis=axes, keepdims=True) / 0


class Mean(Reduction):
    """Mean over ``axes``: every element gets its mean's gradient divided by the count."""

    def forward(self, a: Array) -> Array:
        self.shape = a.shape
        self.count = math.prod(a.shape[i] for i in self.axes)
        return self.finish(mean_over(a, self.axes, self.count))

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        return (xp.broadcast_to(self.expand(g) / self.count, self.shape),)


def mean(a: Tensor, axis: Axes = None, keepdims: bool = False, *, dim: Axes = None,
         keepdim: bool | None = None) -> Tensor:
    """Mean over ``axis`` (all axes by default).

    >>> import dltutor as dt
    >>> dt.mean(dt.tensor([1.0, 2.0, 6.0]))
    tensor(3.)
    """
    if a.data.dtype.kind not in "fc":
        raise TypeError(f"mean of a {a.dtype} tensor: convert it first with .float()")
    return run_reduction(Mean, a, axis, keepdims, dim, keepdim, "mean")


class Extreme(Reduction):
    """Max (``largest = True``) or min over axes; tied extremes share the gradient evenly.

    ``whole=True`` is ``max(x)``/``min(x)`` of the whole tensor, whose backward PyTorch (on the
    CPU) writes differently from ``amax``'s: the other elements get exactly 0 (a gate,
    gates.py) rather than ``g * 0`` (NaN for a NaN gradient, -0.0 for a negative one), and
    when the extreme is NaN, the NaN elements share the gradient."""

    largest = True

    def __init__(self, axes: tuple[int, ...], keepdims: bool, whole: bool = False):
        super().__init__(axes, keepdims)
        self.whole = whole

    def forward(self, a: Array) -> Array:
        self.shape, self.a = a.shape, a
        if any(a.shape[i] == 0 for i in self.axes):   # (along a non-empty one: an empty result)
            raise ValueError(f"{self.op_name}: cannot reduce an empty tensor of shape {a.shape} "
                             f"along its dimension(s) of size 0 (there is no largest or smallest "
                             "value of nothing)")
        f = a.max if self.largest else a.min
        self.out = f(axis=self.axes, keepdims=True)
        return self.finish(self.out)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        if self.whole and xp.isnan(self.out).any():
            mask = xp.isnan(self.a)
        else:
            mask = self.a == self.out
        share = self.share_of(self.expand(g), mask)
        if self.whole:
            return (gate(share, mask),)
        return (share * mask,)


class Max(Extreme):
    """Largest value over ``axes`` (see :class:`Extreme` for how ties share the gradient)."""

    largest = True


class Min(Extreme):
    """Smallest value over ``axes`` (see :class:`Extreme` for how ties share the gradient)."""

    largest = False


class TakeAlong(Function):
    """The element at ``indices`` along ``axis`` (one per position of the other axes): the
    values of ``max(x, dim)``. Backward sends each gradient to the one element picked, as
    PyTorch does for ``max(x, dim)``, even when another element ties with it."""

    name = "take_along"

    def __init__(self, axis: int, indices: Array, keepdims: bool):
        self.axis, self.indices, self.keepdims = axis, indices, keepdims

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        self.shape = a.shape
        out = xp.take_along_axis(a, xp.expand_dims(self.indices, self.axis), axis=self.axis)
        return out if self.keepdims else out.squeeze(self.axis)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        grad = xp.zeros(self.shape, dtype=g.dtype)
        g = g if self.keepdims else xp.expand_dims(g, self.axis)
        xp.put_along_axis(grad, xp.expand_dims(self.indices, self.axis), g, axis=self.axis)
        return (grad,)


class ValuesIndices(NamedTuple):
    """What ``max(x, dim)`` and ``min(x, dim)`` return, as in PyTorch: the extreme values and
    where they are. It unpacks like a pair: ``values, indices = x.max(dim=1)``."""

    values: Tensor
    indices: Tensor


def _extreme(op: str, a: Tensor, axis: Axes | Tensor, keepdims: bool, dim: Axes,
             keepdim: bool | None) -> Tensor | ValuesIndices:
    """``max``/``min`` with PyTorch's three forms: the whole tensor (a tensor), one dimension
    (values and indices), or a second tensor (the elementwise ``maximum``/``minimum``)."""
    if is_tensor(axis):
        if dim is not None or keepdim is not None:
            raise TypeError(f"{op}(a, b) compares two tensors elementwise and takes no dim")
        return (maximum if op == "max" else minimum)(a, axis)
    if dim is not None:
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    if axis is None:
        return run_reduction(Max if op == "max" else Min, a, None, keepdims, None, None, op,
                             whole=True)
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}(x, dim) takes one dimension (it also returns where the extreme "
                        f"is); for several dimensions {axis!r} use dt.a{op}(x, dim=...)")
    axis = axis_index(op, axis, a.ndim)
    xp = get_array_module(a.data)
    if a.ndim == 0:     # PyTorch takes dim 0 or -1 of a 0-d tensor: the value, at index 0
        values = run_reduction(Max if op == "max" else Min, a, None, keepdims, None, None, op)
        return ValuesIndices(values, make_tensor(xp.zeros((), dtype=int64)))
    if a.shape[axis] == 0:
        raise ValueError(f"{op}: cannot reduce dimension {axis} of size 0 of a tensor of shape "
                         f"{tuple(a.shape)}")
    find = a.data.argmax if op == "max" else a.data.argmin
    indices = xp.asarray(find(axis=axis))       # (of a 1-D tensor, NumPy gives a scalar)
    values = TakeAlong(axis, indices, bool(keepdims)).apply(a)
    if keepdims:
        indices = xp.expand_dims(indices, axis)
    return ValuesIndices(values, make_tensor(indices.astype(int64)))


def max(a: Tensor, axis: Axes | Tensor = None, keepdims: bool = False, *, dim: Axes = None,
        keepdim: bool | None = None) -> Tensor | ValuesIndices:
    """The largest value, as in PyTorch: ``max(x)`` is one number (tied maxima share the
    gradient); ``max(x, dim)`` gives ``(values, indices)`` along ``dim`` (the gradient goes to
    the element picked); ``max(x, y)`` with a tensor ``y`` is ``maximum(x, y)``.

    >>> import dltutor as dt
    >>> x = dt.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> dt.max(x)
    tensor(7.)
    >>> values, indices = dt.max(x, dim=1)
    >>> values, indices
    (tensor([5., 7.]), tensor([1, 0]))
    >>> _, predicted = x.max(1)              # the class each row predicts
    >>> predicted
    tensor([1, 0])
    """
    return _extreme("max", a, axis, keepdims, dim, keepdim)


def min(a: Tensor, axis: Axes | Tensor = None, keepdims: bool = False, *, dim: Axes = None,
        keepdim: bool | None = None) -> Tensor | ValuesIndices:
    """The smallest value; the same three forms as :func:`max`.

    >>> import dltutor as dt
    >>> dt.min(dt.tensor([3.0, 1.0]))
    tensor(1.)
    >>> dt.min(dt.tensor([[3.0, 1.0]]), dim=1)
    ValuesIndices(values=tensor([1.]), indices=tensor([1]))
    """
    return _extreme("min", a, axis, keepdims, dim, keepdim)


def amax(a: Tensor, axis: Axes = None, keepdims: bool = False, *, dim: Axes = None,
         keepdim: bool | None = None) -> Tensor:
    """The largest value over one or several dimensions, values only (tied maxima share the
    gradient evenly, as in PyTorch's ``amax``).

    >>> import dltutor as dt
    >>> dt.amax(dt.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=(0, 1))
    tensor(7.)
    """
    return run_reduction(Max, a, axis, keepdims, dim, keepdim, "amax")


def amin(a: Tensor, axis: Axes = None, keepdims: bool = False, *, dim: Axes = None,
         keepdim: bool | None = None) -> Tensor:
    """The smallest value over one or several dimensions, values only (see :func:`amax`).

    >>> import dltutor as dt
    >>> dt.amin(dt.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0)
    tensor([1., 2.])
    """
    return run_reduction(Min, a, axis, keepdims, dim, keepdim, "amin")


class Norm(Reduction):
    """The p-norm ``(sum |a|^p)^(1/p)`` over ``axes``, or for ``p = inf`` the largest ``|a|``.
    Its gradient is ``g * sign(a) * (|a| / norm)^(p-1)``: ``g * a / norm`` for p = 2 and
    ``g * sign(a)`` for p = 1, with PyTorch's sign (0 at NaN); where the norm is 0 it is 0 (as
    in PyTorch), not the NaN the formula would give. For p = inf, the elements whose ``|a|``
    is the norm (or NaN) share ``g``, as in PyTorch."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool, p: float):
        super().__init__(axes, keepdims)
        self.p = p

    def forward(self, a: Array) -> Array:
        xp = get_array_module(a)
        self.a, self.shape = a, a.shape
        magnitude = xp.abs(a)
        if self.p == math.inf:
            if a.size == 0:
                raise ValueError(f"norm: the inf norm (the largest |value|) of an empty tensor "
                                 f"of shape {a.shape} is not defined")
            self.norm = magnitude.max(axis=self.axes, keepdims=True)
        elif self.p == 2:
            self.norm = xp.sqrt((magnitude * magnitude).sum(axis=self.axes, keepdims=True))
        else:
            self.norm = (magnitude ** self.p).sum(axis=self.axes, keepdims=True) ** (1 / self.p)
        return self.finish(self.norm)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        xp = get_array_module(g)
        g = self.expand(g)
        if self.p == math.inf:
            # Shared by the elements whose |a| is the norm, or is NaN (the norm is NaN then,
            # and equals nothing); 0 elsewhere. PyTorch's inf-norm gradient.
            magnitude = xp.abs(self.a)
            largest = (magnitude == self.norm) | xp.isnan(magnitude)
            return (sign_of(self.a, g.dtype) * (self.share_of(g, largest) * largest),)
        if self.p == 1:
            return (g * sign_of(self.a, g.dtype),)
        safe = xp.where(self.norm == 0, 1, self.norm)           # 0 / 0 would be NaN
        if self.p == 2:
            slope = self.a / safe
        else:
            slope = sign_of(self.a, g.dtype) * (xp.abs(self.a) / safe) ** (self.p - 1)
        return (g * xp.where(self.norm == 0, 0, slope),)


def norm(a: Tensor, p: float | str = 2, dim: Axes = None, keepdim: bool = False, *,
         axis: Axes = None, keepdims: bool | None = None) -> Tensor:
    """The ``p``-norm of ``a`` (all elements, or along ``dim``), as ``torch.norm``: ``p=2``
    (also ``"fro"``) is the length of the vector, ``p=1`` the sum of absolute values, ``p=inf``
    the largest absolute value (ties share the gradient), any other ``p > 0`` by its formula.

    >>> import math
    >>> import dltutor as dt
    >>> x = dt.tensor([[3.0, 4.0], [0.0, 0.0]])
    >>> x.norm(), dt.norm(x, p=1), dt.norm(x, p=math.inf)
    (tensor(5.), tensor(7.), tensor(4.))
    >>> _ = x.requires_grad_()
    >>> x.norm(dim=1).sum().backward()        # a zero row gets gradient 0, not NaN
    >>> x.grad
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    """
    if p == "fro":
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
        raise ValueError(f"norm: p must be a number > 0, 'fro' or math.inf, got {p!r}")
    if a.data.dtype.kind != "f":
        raise TypeError(f"norm of a {a.dtype} tensor: convert it first with .float()")
    keep = bool(keepdim or keepdims)
    return run_reduction(Norm, a, axis, keep, dim, None, "norm", p=float(p))
