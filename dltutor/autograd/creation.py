"""Making tensors: from data, filled with a value, or random.

New tensors live on the current backend (``dt.backend.use``). Random numbers come from one
generator seeded by :func:`~dltutor.autograd.rng.manual_seed`; they are drawn with NumPy and
moved to the backend, so a seed gives the same numbers on the CPU and the GPU.

>>> import dltutor as dt
>>> _ = dt.manual_seed(0)
>>> dt.zeros(2, 3).shape
(2, 3)
>>> dt.tensor([1, 2]).dtype, dt.tensor([1.0, 2.0]).dtype
(dtype('int64'), dtype('float32'))
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import backend as B
from .. import devices
from .dtypes import as_dtype, default_float, int64
from . import fills
from .arrays import Array
from .function import make_tensor
from .ops.operands import Operand, Size
from .placement import Device
from .rng import generator
from .tensor import Tensor


def tensor(data: Any, dtype: DTypeLike | None = None, requires_grad: bool = False, *,
           device: Device | None = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, a NumPy or CuPy array),
    on the current backend or on ``device`` (``"cpu"``, ``"cuda"``, a ``dt.device``).

    Floats from Python become float32; an array keeps its dtype (float64 stays float64).

    >>> import numpy as np, dltutor as dt
    >>> dt.tensor([[1.0, 2.0]], requires_grad=True)
    tensor([[1., 2.]], requires_grad=True)
    >>> dt.tensor(np.zeros(2)).dtype
    dtype('float64')
    """
    if device is None:
        return Tensor(data, dtype=dtype, requires_grad=requires_grad)
    with B.use(devices.backend_for(device)):
        return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def _shape(sizes: tuple[Size, ...], size: Size | None = None, op: str = "",
           shape: Size | None = None) -> tuple[int, ...]:
    """The shape asked for in any of PyTorch's ways: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``
    or ``f(size=(2, 3))``, or Paddle's ``f(shape=[2, 3])``."""
    if shape is not None:
        if size is not None:
            raise TypeError(f"{op}: give the shape once, as size= (PyTorch's name) or shape= "
                            "(Paddle's), not both")
        size = shape
    if size is not None:
        if sizes:
            raise TypeError(f"{op}: give the shape once, either as sizes {sizes} or as "
                            f"size={size!r}, not both")
        sizes = (size,)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    checked = []
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"{op}: sizes must be non-negative integers, got {sizes}")
        checked.append(int(n))
    return tuple(checked)


def _backend(device: Device | None) -> B.Backend:
    """The backend a creation function makes its tensor on: ``device``'s, or the current one."""
    return B.current() if device is None else devices.backend_for(device)


def _filled(shape: tuple[int, ...], value: float, dtype: DTypeLike | None, requires_grad: bool,
            device: Device | None = None) -> Tensor:
    xp = _backend(device).xp
    array = xp.full(shape, value, dtype=as_dtype(dtype) or default_float)
    return make_tensor(array).requires_grad_(requires_grad)


def zeros(*sizes: Size, size: Size | None = None, dtype: DTypeLike | None = None,
          requires_grad: bool = False, shape: Size | None = None,
          device: Device | None = None) -> Tensor:
    """A tensor of zeros; ``dt.zeros(2, 3)``, ``dt.zeros((2, 3))`` and ``dt.zeros(size=(2, 3))``
    all work, as in PyTorch.

    >>> import dltutor as dt
    >>> dt.zeros(2)
    tensor([0., 0.])
    >>> dt.zeros(size=(1, 3)).shape, dt.zeros(shape=[3]).shape     # shape=: Paddle's name
    ((1, 3), (3,))
    """
    return _filled(_shape(sizes, size, "zeros", shape), 0, dtype, requires_grad, device)


def ones(*sizes: Size, size: Size | None = None, dtype: DTypeLike | None = None,
         requires_grad: bool = False, shape: Size | None = None,
         device: Device | None = None) -> Tensor:
    """A tensor of ones.

    >>> import dltutor as dt
    >>> dt.ones(1, 2)
    tensor([[1., 1.]])
    """
    return _filled(_shape(sizes, size, "ones", shape), 1, dtype, requires_grad, device)


def full(size: Size | None = None, fill_value: float | None = None,
         dtype: DTypeLike | None = None, requires_grad: bool = False, *,
         shape: Size | None = None, device: Device | None = None) -> Tensor:
    """A tensor filled with ``fill_value`` (``shape=`` is Paddle's name for ``size``).

    >>> import dltutor as dt
    >>> dt.full((2,), 42.0)
    tensor([42., 42.])
    >>> dt.full(shape=[1, 2], fill_value=7.0)
    tensor([[7., 7.]])
    """
    if fill_value is None:
        raise TypeError("full: give the value to fill with, e.g. dt.full((2, 3), 0.5)")
    if size is None and shape is None:
        raise TypeError("full: give the shape, e.g. dt.full((2, 3), 0.5) or shape=[2, 3]")
    sizes = () if size is None else (size,)
    return _filled(_shape(sizes, None, "full", shape), fill_value, dtype, requires_grad, device)


def zeros_like(t: Tensor, dtype: DTypeLike | None = None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``t``.

    >>> import dltutor as dt
    >>> dt.zeros_like(dt.ones(2, dtype=dt.float64)).dtype
    dtype('float64')
    """
    return _filled(tuple(t.shape), 0, dtype or t.dtype, requires_grad)


def ones_like(t: Tensor, dtype: DTypeLike | None = None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``t``."""
    return _filled(tuple(t.shape), 1, dtype or t.dtype, requires_grad)


def arange(start: float, stop: float | None = None, step: float = 1,
           dtype: DTypeLike | None = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, like ``np.arange`` (ints stay int64).

    >>> import dltutor as dt
    >>> dt.arange(3)
    tensor([0, 1, 2])
    """
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, step)
    return tensor(values, dtype=dtype or (int64 if values.dtype.kind == "i" else default_float))


def eye(n: int, dtype: DTypeLike | None = None) -> Tensor:
    """The ``n x n`` identity matrix.

    >>> import dltutor as dt
    >>> dt.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return make_tensor(B.current().xp.eye(n, dtype=as_dtype(dtype) or default_float))


# -- random tensors ---------------------------------------------------------------------------
def _random(draw: str, shape: tuple[int, ...], dtype: DTypeLike | None,
            device: Device | None = None) -> Array:
    """Random numbers drawn in float64 with the shared generator, then cast (the same numbers
    for every dtype and device; see fills)."""
    return fills.on_backend(fills.standard_draws(draw, shape), as_dtype(dtype) or default_float,
                            _backend(device))


def rand(*sizes: Size, size: Size | None = None, dtype: DTypeLike | None = None,
         requires_grad: bool = False, shape: Size | None = None,
         device: Device | None = None) -> Tensor:
    """Uniform random numbers in ``[0, 1)``.

    >>> import dltutor as dt
    >>> t = dt.rand(1000)
    >>> bool(t.min() >= 0) and bool(t.max() < 1)
    True
    """
    shape = _shape(sizes, size, "rand", shape)
    return make_tensor(_random("uniform", shape, dtype, device)).requires_grad_(requires_grad)


def randn(*sizes: Size, size: Size | None = None, dtype: DTypeLike | None = None,
          requires_grad: bool = False, shape: Size | None = None,
          device: Device | None = None) -> Tensor:
    """Standard normal random numbers (mean 0, std 1).

    >>> import dltutor as dt
    >>> dt.randn(2, 3).shape
    (2, 3)
    """
    shape = _shape(sizes, size, "randn", shape)
    return make_tensor(_random("normal", shape, dtype, device)).requires_grad_(requires_grad)


def normal(mean: Operand = 0.0, std: Operand = 1.0, size: Size | None = None, *,
           dtype: DTypeLike | None = None, requires_grad: bool = False,
           shape: Size | None = None, device: Device | None = None) -> Tensor:
    """Normal random numbers with the given ``mean`` and ``std``, as ``torch.normal``:
    ``dt.normal(0, 0.01, size=(2, 1))`` draws a ``(2, 1)`` tensor; tensors as ``mean`` or
    ``std`` give one draw per element (their broadcast shape).

    Drawn like ``dt.randn`` (from the generator ``dt.manual_seed`` seeds), then scaled and
    shifted in float64 before rounding to the dtype.

    >>> import dltutor as dt
    >>> _ = dt.manual_seed(0)
    >>> w = dt.normal(0, 0.01, size=(2, 1), requires_grad=True)
    >>> w.shape, w.requires_grad
    ((2, 1), True)
    >>> dt.normal(dt.tensor([0.0, 100.0]), 0.0)          # std 0: exactly the means
    tensor([  0., 100.])
    >>> dt.normal(0, 1, shape=(2, 1)).shape                # Paddle's spelling
    (2, 1)
    """
    means, stds = _float64("normal", "mean", mean), _float64("normal", "std", std)
    if not (stds >= 0).all():
        raise ValueError(f"normal: std must be >= 0 (it is the spread), got {std!r}")
    if shape is not None:
        size = _shape((), size, "normal", shape)
    try:
        shape = np.broadcast_shapes(means.shape, stds.shape,
                                    *([_shape((size,), op="normal")] if size is not None else []))
    except ValueError:
        raise ValueError(f"normal: mean of shape {means.shape}, std of shape {stds.shape} and "
                         f"size {size!r} do not broadcast together") from None
    dtype = as_dtype(dtype) or (mean.dtype if isinstance(mean, Tensor) else default_float)
    values = means + stds * fills.standard_draws("normal", shape)
    values = fills.on_backend(values, dtype, _backend(device))
    return make_tensor(values).requires_grad_(requires_grad)


def _float64(op: str, name: str, value: Operand) -> np.ndarray:
    """A number or tensor argument as a float64 array, or a TypeError naming it."""
    array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    if isinstance(value, bool) or array.dtype.kind not in "biuf":
        raise TypeError(f"{op}: {name} must be a number or a tensor of numbers, got {value!r}")
    return array.astype(np.float64)


def randint(low: int, high: int | Size | None = None, size: Size | None = None,
            dtype: DTypeLike | None = None) -> Tensor:
    """Random integers in ``[low, high)`` (int64 by default), e.g. fake class labels. As in
    PyTorch, ``low`` may be left out: ``dt.randint(10, (4,))`` is ``dt.randint(0, 10, (4,))``.

    >>> import dltutor as dt
    >>> dt.randint(0, 10, (4,)).dtype
    dtype('int64')
    >>> dt.randint(3, size=(2, 2)).shape
    (2, 2)
    """
    if size is None and isinstance(high, (tuple, list)):   # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:                                      # randint(high, size=...)
        low, high = 0, low
    if size is None:
        raise TypeError("randint: give the shape, e.g. dt.randint(0, 10, (4,)) or size=(4,)")
    values = generator().integers(low, high, size=_shape((size,), op="randint"), dtype=np.int64)
    return tensor(values, dtype=dtype)
