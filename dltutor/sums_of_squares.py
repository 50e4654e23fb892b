"""Sums of squares of NumPy arrays, fast: what the NumPy backend's ``sums_of_squares`` runs
(backend.py). An optimizer step takes one per gradient (the non-finite check, the clips' norms)
on every step, mostly of small arrays, so the call's own cost is what counts: SciPy's BLAS dot
product (``sdot``/``ddot``) checks less than NumPy's ``dot``, and gives inf on overflow quietly.

>>> import numpy as np
>>> blas_sums_of_squares([np.array([3.0, 4.0], dtype=np.float32), np.zeros(0), np.array([2])])
[25.0, 0.0, 4.0]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

_BLAS_DOTS: dict[Any, Callable] = {}


def _blas_dot(dtype: np.dtype) -> Callable | None:
    """SciPy's BLAS dot product for this dtype (``sdot``, ``ddot``), or None for others."""
    if not _BLAS_DOTS:
        from scipy.linalg import blas  # SciPy comes with scikit-learn; imported when needed
        _BLAS_DOTS.update({np.dtype(np.float32): blas.sdot, np.dtype(np.float64): blas.ddot})
    return _BLAS_DOTS.get(dtype)


def blas_sums_of_squares(arrays: Sequence[np.ndarray]) -> list[float]:
    """Sums of squares of NumPy arrays through SciPy's BLAS dot (``sdot``/``ddot``): for the
    many small arrays of a step, NumPy's ``dot`` spends more time checking its arguments than
    adding, and raises NumPy's overflow flag (BLAS gives inf, quietly).
    """
    if not len(arrays):
        return []
    # Usually all have the first one's dtype: one lookup, then a plain loop (else: careful path).
    dtype = arrays[0].dtype
    dot = _blas_dot(dtype)
    if dot is None:
        return [_any_sum_of_squares(array) for array in arrays]
    sums = []
    for array in arrays:
        flat = array if array.ndim == 1 else array.ravel()  # a view when contiguous
        if flat.dtype is dtype:
            try:
                sums.append(dot(flat, flat))
                continue
            except Exception:  # BLAS refuses an empty array (n=0); the careful path does not
                pass
        sums.append(_any_sum_of_squares(flat))
    return sums


def _any_sum_of_squares(array: np.ndarray) -> float:
    """The sum of squares of one NumPy array of any dtype and size (BLAS where it can)."""
    dot = _blas_dot(array.dtype)
    if not array.size:
        return 0.0
    if dot is None:  # float16, integers: NumPy's own dot
        return dot_sums_of_squares([array], np.errstate(all="ignore"))[0]
    flat = array.ravel()
    return dot(flat, flat)


def dot_sums_of_squares(arrays: Sequence[Any], errors_ignored: Any) -> list[float]:
    """Sums of squares with the arrays' own ``dot``, inside ``errors_ignored`` (a context)."""
    with errors_ignored:
        return [float(flat.dot(flat)) for flat in (array.ravel() for array in arrays)]
