"""What a ``to()`` call asks for: a device, a dtype, or both, in any of PyTorch's spellings.

Tensor's ``to`` and Module's ``to`` read their arguments here, so ``t.to("cuda", dt.float64)``
and ``model.to(dtype=dt.float64)`` mean the same thing to both.

>>> import dltutor as dt
>>> to_targets(("cuda",), dtype="float64")
('cuda', dtype('float64'))
"""
from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from .. import backend as B
from .. import devices
from .dtypes import as_dtype

#: Where a tensor may be asked to live: a ``dt.device``, a name ("cpu", "cuda:0"), a backend.
Device: TypeAlias = "str | devices.device | B.Backend"
T = TypeVar("T")


def to_targets(targets: tuple, device: Device | None = None,
               dtype: DTypeLike | None = None) -> tuple[Device | None, np.dtype | None]:
    """``(device, dtype)`` from the arguments of a ``to()`` call (Tensor's and Module's): each
    positional target is a device (a ``dt.device``, a backend, a name such as "cuda") or a
    dtype; keywords may give either instead.

    >>> import dltutor as dt
    >>> to_targets(("cpu", dt.float64))
    ('cpu', dtype('float64'))
    """
    for target in targets:
        if isinstance(target, (B.Backend, devices.device)) or (
                isinstance(target, str) and not _names_dtype(target)):
            device = _only_one("device", device, target)
        else:
            dtype = _only_one("dtype", dtype, target)
    return device, (None if dtype is None else as_dtype(dtype))


def _only_one(what: str, given: object, another: T) -> T:
    """``another`` as the ``to()`` argument ``what``, unless one was given already."""
    if given is not None:
        raise TypeError(f"to(): two {what}s given ({given!r} and {another!r}); give one")
    return another


def _names_dtype(name: str) -> bool:
    """Whether the string ``name`` is a dtype (``"float64"``, ``"long"``) rather than a device."""
    try:
        return as_dtype(name) is not None
    except TypeError:
        return False
