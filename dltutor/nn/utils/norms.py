"""Norms of gradients and parameters for the clips: per array, of a list, any p.

Most norms here are L2 norms, and most are taken many at a time (every gradient of a model, on
every step), so the primitive is a batch: ``backend.sums_of_squares`` returns the squared L2
norm of each array in one call (for NumPy a BLAS dot product per array, fast for the many small
arrays a model has). A sum too large for the dtype is ``inf`` (as in PyTorch), a NaN stays NaN,
and an empty array counts 0.0, all without a warning.

>>> import numpy as np
>>> l2_norms([np.array([3.0, 4.0]), np.zeros(0)])
[5.0, 0.0]
>>> total_norm([3.0, 4.0], 2)             # the norm of per-tensor norms: one global norm
5.0
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from ... import backend as B


def l2_norms(arrays: Sequence[Any]) -> list[float]:
    """The L2 norm of each array (all of one backend), as Python floats.

    >>> import numpy as np
    >>> l2_norms([np.array([3.0, 4.0]), np.array([np.nan])])
    [5.0, nan]
    """
    return [math.sqrt(square) for square in B.sums_of_squares(arrays)]


def device_total_norm(arrays: Sequence[Any], p: float) -> Any:
    """The ``p``-norm of all the arrays together as a 0-d array on their device, read by no
    one: what a clip on a GPU computes with (``math.inf``: the largest absolute value).

    >>> import math, numpy as np
    >>> arrays = [np.array([3.0, -4.0]), np.array([12.0])]
    >>> [float(device_total_norm(arrays, p)) for p in (2, 1, math.inf)]
    [13.0, 19.0, 12.0]
    """
    xp = B.get_array_module(arrays[0])
    with B.ignore_float_errors(arrays[0]):      # too large: inf, silently, as PyTorch's norm
        if p == 2:
            return xp.sqrt(xp.stack([xp.vdot(a, a) for a in arrays]).sum())
        if p == math.inf:
            return xp.stack([xp.abs(a).max() if a.size else xp.zeros((), a.dtype)
                             for a in arrays]).max()
        return xp.stack([(xp.abs(a) ** p).sum() for a in arrays]).sum() ** (1.0 / p)


def p_norm(array: Any, p: float) -> float:
    """The ``p``-norm of one array's values: ``math.inf`` for the largest absolute value, any
    other p > 0 as ``sum(|x| ** p) ** (1 / p)``. (For p = 2 use :func:`l2_norms`, which takes
    many at once.)

    >>> import math, numpy as np
    >>> p_norm(np.array([3.0, -4.0]), 1), p_norm(np.array([3.0, -4.0]), math.inf)
    (7.0, 4.0)
    """
    xp = B.get_array_module(array)
    if p == math.inf:
        return float(xp.abs(array).max()) if array.size else 0.0
    with B.ignore_float_errors(array):          # too large: inf, silently, as PyTorch's norm
        return power(float((xp.abs(array) ** p).sum()), 1.0 / p)


def total_norm(norms: Sequence[float], p: float) -> float:
    """The ``p``-norm of a list of norms: the norm of all the arrays taken together.

    >>> import math
    >>> total_norm([1.0, 7.0], math.inf), total_norm([], 2)
    (7.0, 0.0)
    """
    if not norms:
        return 0.0
    if p == math.inf:
        return max(norms)
    return power(sum(power(n, p) for n in norms), 1.0 / p)


def power(x: float, y: float) -> float:
    """``x ** y`` of Python floats (``x >= 0``), but ``inf`` where the result is too large for a
    float: Python raises OverflowError there, PyTorch's norms give inf.

    >>> power(2.0, 10.0), power(1e300, 2.0)
    (1024.0, inf)
    """
    try:
        return x ** y
    except OverflowError:
        return math.inf
