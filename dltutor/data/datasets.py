"""Data sets: what a sample is (``ds[i]``) and how many there are (``len(ds)``).

A :class:`Dataset` is anything with those two; :class:`TensorDataset` is the common case, rows
of arrays held in memory. The :class:`~dltutor.data.DataLoader` turns either into batches.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor


class Dataset:
    """The base class of map-style data sets: subclass it and define ``__len__`` and ``__getitem__``.

    ``ds[i]`` returns one sample, usually a tuple ``(features, label)`` of NumPy arrays or
    numbers (a dict works too). The :class:`DataLoader` stacks samples into batches. With
    ``num_workers > 0``, ``__getitem__`` is called from background threads, so it must not change
    shared state (reading arrays is fine).

    >>> import numpy as np
    >>> from dltutor.data import DataLoader
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def __getitem__(self, i):
    ...         return np.float32(i), i * i
    >>> ds = Squares()
    >>> len(ds), ds[3]
    (5, (np.float32(3.0), 9))
    >>> xb, yb = next(iter(DataLoader(ds, batch_size=5)))
    >>> yb
    tensor([ 0,  1,  4,  9, 16])
    """

    def __len__(self) -> int:
        raise NotImplementedError(f"a Dataset subclass must define __len__ ({type(self).__name__} "
                                  "does not): return the number of samples")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"a Dataset subclass must define __getitem__ ({type(self).__name__} "
                                  "does not): return sample number i")


def _as_data_array(data: Any, position: int) -> Any:
    """A NumPy (or CuPy) array for TensorDataset, with dt.tensor's dtype rules for Python lists."""
    if isinstance(data, Tensor):
        return data.data
    if B.backend_of(data) is not None:
        return _numeric(data, position)
    try:
        array = np.asarray(data)
    except ValueError:   # NumPy's "inhomogeneous shape": rows of different lengths
        raise ValueError(f"TensorDataset: argument {position} has rows of different lengths, "
                         "so it does not make one array; pad the rows to one length") from None
    array = _numeric(array, position)
    if array.dtype == np.float64:   # Python floats become float32, as in dt.tensor
        array = array.astype(np.float32)
    elif array.dtype.kind in "iu" and array.dtype != np.int64:
        array = array.astype(np.int64)
    return array


def _numeric(array: Any, position: int) -> Any:
    """``array`` if it holds numbers (bool, int or float), else a TypeError naming its dtype:
    strings, bytes, dates, complex numbers and Python objects cannot become a batch of tensors."""
    if array.dtype.kind not in "biuf":
        raise TypeError(f"TensorDataset: argument {position} holds {array.dtype} values; a data "
                        "set holds real numbers (bool, int or float): pass NumPy arrays, Tensors "
                        "or lists of numbers (encode labels that are strings as integers first)")
    return array


class TensorDataset(Dataset):
    """A data set made of arrays that share their first dimension: row ``i`` of each is sample ``i``.

    Pass NumPy arrays (kept as they are: float64 stays float64), dltutor Tensors or lists.
    ``ds[i]`` is a tuple with row ``i`` of every array. ``ds.arrays`` holds the whole arrays,
    which lets the :class:`DataLoader` gather a batch with one fancy index per array
    (``X[indices]``) instead of a Python loop over samples.

    >>> import numpy as np
    >>> X = np.arange(6, dtype=np.float32).reshape(3, 2)
    >>> y = np.array([0, 1, 1])
    >>> ds = TensorDataset(X, y)
    >>> len(ds)
    3
    >>> ds[1]
    (array([2., 3.], dtype=float32), np.int64(1))
    >>> TensorDataset(X, y[:2])
    Traceback (most recent call last):
        ...
    ValueError: TensorDataset: every array needs the same first dimension (one row per sample), got lengths [3, 2] (shapes [(3, 2), (2,)])
    """

    def __init__(self, *arrays: Any):
        if not arrays:
            raise ValueError("TensorDataset needs at least one array, e.g. TensorDataset(X, y)")
        converted = tuple(_as_data_array(a, i) for i, a in enumerate(arrays))
        for i, a in enumerate(converted):
            if a.ndim == 0:
                raise ValueError(f"TensorDataset: argument {i} is a single number (0-d); each "
                                 "argument needs one row per sample")
        lengths = [int(a.shape[0]) for a in converted]
        if len(set(lengths)) > 1:
            shapes = [tuple(a.shape) for a in converted]
            raise ValueError("TensorDataset: every array needs the same first dimension (one row "
                             f"per sample), got lengths {lengths} (shapes {shapes})")
        self.arrays: tuple[Any, ...] = converted

    def __len__(self) -> int:
        return int(self.arrays[0].shape[0])

    def __getitem__(self, index: int) -> tuple:
        """Row ``index`` of every array (``ds[-1]`` is the last; NumPy indexes such as slices work
        too). An integer out of range is an IndexError that says how many samples there are.

        >>> TensorDataset(np.zeros((3, 2)))[3]
        Traceback (most recent call last):
            ...
        IndexError: TensorDataset index 3 is out of range: it has 3 samples (0 to 2, or -3 to -1)
        """
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            n = len(self)
            if not -n <= index < n:
                raise IndexError(f"TensorDataset index {index} is out of range: it has {n} "
                                 f"samples (0 to {n - 1}, or {-n} to -1)")
        elif isinstance(index, (str, float, bool)) or index is None:
            raise TypeError(f"TensorDataset indices are integers (or slices, or integer arrays), "
                            f"got {index!r}")
        return tuple(a[index] for a in self.arrays)

    def __repr__(self) -> str:
        parts = ", ".join(f"{a.dtype} {tuple(a.shape[1:])}" for a in self.arrays)
        return f"TensorDataset({len(self)} samples; per sample: {parts})"
