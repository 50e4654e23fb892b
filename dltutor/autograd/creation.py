"""Making tensors: from data, filled with a value, or random.

New tensors live on the current backend (``dt.backend.use``). Random numbers come from one
generator seeded by :func:`manual_seed`; they are drawn with NumPy and moved to the backend, so a
seed gives the same numbers on the CPU and the GPU.

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

from .. import backend as B
from .tensor import Tensor, _make

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")
#: The dtype of floating-point tensors made from Python numbers (PyTorch's default).
default_float = float32

_DTYPE_NAMES = {"float": float32, "double": float64, "long": int64, "int": int32,
                "half": float16, "bool": bool_}


def as_dtype(dtype: Any) -> np.dtype | None:
    """Turn ``"float32"``, ``np.float64``, ``dt.float32`` or ``"long"`` into a NumPy dtype.

    >>> as_dtype("double")
    dtype('float64')
    """
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use dt.float32, dt.float64, dt.int64 "
                        "or a NumPy dtype") from None


def _to_array(data: Any, dtype: Any = None) -> Any:
    """An array of the current backend (or of ``data``'s own backend) with PyTorch's dtype rules.

    Python floats become float32; NumPy/CuPy arrays keep their dtype; ints stay int64.
    """
    dtype = as_dtype(dtype)
    if isinstance(data, Tensor):
        data = data.data
    owner = B.backend_of(data)
    # Lists, scalars and NumPy arrays go to the current backend; a GPU array stays where it is.
    backend = owner if owner not in (None, B.NUMPY) else B.current()
    if owner is None and dtype is None and not isinstance(data, np.generic):
        probe = np.asarray(data)  # Python numbers and lists (a NumPy scalar keeps its dtype)
        if probe.dtype == np.float64:
            dtype = default_float
        elif probe.dtype.kind == "O":
            raise TypeError(f"cannot make a tensor from {type(data).__name__} data: use numbers, "
                            "(nested) lists of numbers or an array")
    array = backend.asarray(data, dtype=dtype)
    if owner is not None and (array is data or getattr(array, "base", None) is data):
        array = array.copy()  # dt.tensor copies, as torch.tensor does
    return array


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, a NumPy or CuPy array).

    Floats from Python become float32; an array keeps its dtype (float64 stays float64).

    >>> import numpy as np, dltutor as dt
    >>> dt.tensor([[1.0, 2.0]], requires_grad=True)
    tensor([[1., 2.]], requires_grad=True)
    >>> dt.tensor(np.zeros(2)).dtype
    dtype('float64')
    """
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def _shape(sizes: tuple) -> tuple[int, ...]:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for n in sizes:
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"sizes must be non-negative integers, got {sizes}")
    return tuple(int(n) for n in sizes)


def _filled(shape: tuple[int, ...], value: float, dtype: Any, requires_grad: bool) -> Tensor:
    xp = B.current().xp
    array = xp.full(shape, value, dtype=as_dtype(dtype) or default_float)
    return Tensor._from_array(array, requires_grad)


def zeros(*sizes: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros; ``dt.zeros(2, 3)`` and ``dt.zeros((2, 3))`` both work.

    >>> import dltutor as dt
    >>> dt.zeros(2)
    tensor([0., 0.])
    """
    return _filled(_shape(sizes), 0, dtype, requires_grad)


def ones(*sizes: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones.

    >>> import dltutor as dt
    >>> dt.ones(1, 2)
    tensor([[1., 1.]])
    """
    return _filled(_shape(sizes), 1, dtype, requires_grad)


def full(size: Any, fill_value: float, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``.

    >>> import dltutor as dt
    >>> dt.full((2,), 42.0)
    tensor([42., 42.])
    """
    return _filled(_shape((size,)), fill_value, dtype, requires_grad)


def zeros_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``t``.

    >>> import dltutor as dt
    >>> dt.zeros_like(dt.ones(2, dtype=dt.float64)).dtype
    dtype('float64')
    """
    return _filled(tuple(t.shape), 0, dtype or t.dtype, requires_grad)


def ones_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``t``."""
    return _filled(tuple(t.shape), 1, dtype or t.dtype, requires_grad)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, like ``np.arange`` (ints stay int64).

    >>> import dltutor as dt
    >>> dt.arange(3)
    tensor([0, 1, 2])
    """
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, step)
    return tensor(values, dtype=dtype or (int64 if values.dtype.kind == "i" else default_float))


def eye(n: int, dtype: Any = None) -> Tensor:
    """The ``n x n`` identity matrix.

    >>> import dltutor as dt
    >>> dt.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return Tensor._from_array(B.current().xp.eye(n, dtype=as_dtype(dtype) or default_float), False)


# ---------------------------------------------------------------------------------------------
# Random numbers
# ---------------------------------------------------------------------------------------------
_generator = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Seed every random number dltutor draws (init, rand/randn, dropout, shuffling).

    >>> import dltutor as dt
    >>> _ = dt.manual_seed(3); a = dt.rand(2)
    >>> _ = dt.manual_seed(3); b = dt.rand(2)
    >>> bool((a == b).all())
    True
    """
    global _generator
    _generator = np.random.default_rng(seed)
    return _generator


def generator() -> np.random.Generator:
    """The NumPy generator behind dltutor's random numbers (seed it with :func:`manual_seed`)."""
    return _generator


def _random(draw: str, shape: tuple[int, ...], dtype: Any) -> Any:
    dtype = as_dtype(dtype) or default_float
    if draw == "uniform":
        values = _generator.random(shape, dtype=np.float64)
    else:
        values = _generator.standard_normal(shape, dtype=np.float64)
    return B.current().asarray(values.astype(dtype, copy=False))


def rand(*sizes: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in ``[0, 1)``.

    >>> import dltutor as dt
    >>> t = dt.rand(1000)
    >>> bool(t.min() >= 0) and bool(t.max() < 1)
    True
    """
    return Tensor._from_array(_random("uniform", _shape(sizes), dtype), requires_grad)


def randn(*sizes: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers (mean 0, std 1).

    >>> import dltutor as dt
    >>> dt.randn(2, 3).shape
    (2, 3)
    """
    return Tensor._from_array(_random("normal", _shape(sizes), dtype), requires_grad)


def randint(low: int, high: int, size: Any, dtype: Any = None) -> Tensor:
    """Random integers in ``[low, high)`` (int64 by default), e.g. fake class labels.

    >>> import dltutor as dt
    >>> dt.randint(0, 10, (4,)).dtype
    dtype('int64')
    """
    values = _generator.integers(low, high, size=_shape((size,)), dtype=np.int64)
    return tensor(values, dtype=dtype)
