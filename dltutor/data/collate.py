"""Collation: a list of samples becomes one batch, with the samples' structure kept.

Numbers and arrays are stacked along a new first axis; tuples become tuples of batches and
dicts dicts of batches. A sample the rules cannot stack gets an error that says which part of
it differs (``[0]``, ``['x']``) and what to do.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from ..autograd.function import make_tensor


def stack_samples(samples: list, path: str) -> Any:
    """Stack a list of like samples into arrays (keeping the structure of tuples and dicts)."""
    first = samples[0]
    for j, s in enumerate(samples):
        if type(s) is not type(first) and not (_is_numberlike(s) and _is_numberlike(first)):
            raise TypeError(f"cannot batch samples of different kinds{path}: sample 0 is "
                            f"{type(first).__name__}, sample {j} is {type(s).__name__}")
    if isinstance(first, Tensor):
        samples = [s.data for s in samples]
        first = samples[0]
    if isinstance(first, Mapping):
        out = {}
        for key in first:
            try:
                values = [s[key] for s in samples]
            except KeyError:
                raise KeyError(f"cannot batch dict samples{path}: key {key!r} is missing from "
                               "some of them") from None
            out[key] = stack_samples(values, f"{path}[{key!r}]")
        return out
    if isinstance(first, (tuple, list)):
        sizes = {len(s) for s in samples}
        if len(sizes) > 1:
            raise ValueError(f"cannot batch samples{path}: they have different lengths "
                             f"{sorted(sizes)}; pad them to one length or pass collate_fn")
        return tuple(stack_samples(list(column), f"{path}[{k}]") for k, column in enumerate(zip(*samples)))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, (bool, np.bool_)):
        return np.array(samples, dtype=np.bool_)
    if isinstance(first, np.generic) or B.backend_of(first) is not None:
        xp = B.get_array_module(first)
        shapes = {tuple(getattr(s, "shape", ())) for s in samples}
        if len(shapes) > 1:
            raise ValueError(f"cannot batch samples{path}: their shapes differ {sorted(shapes)}; "
                             "make them one shape (pad or crop) or pass collate_fn")
        return _real(xp.stack([xp.asarray(s) for s in samples]), path)
    if isinstance(first, (int, float)):
        values = _real(np.array(samples), path)
        if values.dtype == np.float64:       # Python floats -> float32, as in dt.tensor
            return values.astype(np.float32)
        return values.astype(np.int64)
    raise TypeError(f"cannot batch samples of type {type(first).__name__}{path}: return numbers, "
                    "NumPy arrays, Tensors, or tuples/dicts of them from __getitem__, "
                    "or pass collate_fn")


def _real(batch: Any, path: str) -> Any:
    """``batch`` if it holds bool, int or float values: a Tensor cannot hold strings, dates,
    complex numbers or Python objects (such as ints too large for int64)."""
    if batch.dtype.kind not in "biuf":
        what = "ints too large for int64" if batch.dtype.kind == "O" else f"{batch.dtype} values"
        raise TypeError(f"cannot batch samples{path}: they hold {what}, and a Tensor holds "
                        "bool, int or float numbers; convert them in __getitem__ or pass "
                        "collate_fn")
    return batch


def _is_numberlike(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_))


def to_tensors(tree: Any, backend: B.Backend) -> Any:
    """Arrays -> Tensors on ``backend`` (no extra copy when the array is already fresh and there)."""
    if isinstance(tree, tuple):
        return tuple(to_tensors(t, backend) for t in tree)
    if isinstance(tree, dict):
        return {k: to_tensors(v, backend) for k, v in tree.items()}
    if isinstance(tree, list):         # strings stay a list
        return tree
    array = backend.asarray(tree)
    return make_tensor(array)


def default_collate(samples: Sequence[Any]) -> Any:
    """Turn a list of samples into one batch of Tensors, keeping the samples' structure.

    Numbers and arrays are stacked along a new first dimension (Python floats become float32,
    ints int64, arrays keep their dtype); tuples become tuples of batches, dicts dicts of
    batches; strings are kept as a list.

    >>> import numpy as np
    >>> default_collate([(np.ones(2, np.float32), 0), (np.zeros(2, np.float32), 1)])
    (tensor([[1., 1.],
            [0., 0.]]), tensor([0, 1]))
    >>> default_collate([{"x": 1.5, "id": 3}, {"x": 2.5, "id": 4}])
    {'x': tensor([1.5000, 2.5000]), 'id': tensor([3, 4])}
    """
    samples = list(samples)
    if not samples:
        raise ValueError("default_collate needs at least one sample")
    return to_tensors(stack_samples(samples, ""), B.current())
