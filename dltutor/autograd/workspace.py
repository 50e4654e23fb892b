"""Scratch arrays that big ops borrow for a step and give back, so the next step reuses them.

Why: a convolution unfolds its input into a patch matrix (im2col) that is often megabytes, and
keeps it until backward. Made afresh every step and freed every step, memory that large goes
back to the operating system and comes back page by page: in LeNet's training step that cost
about 1,400 page faults, a third of the step. Borrowed from here instead, the same arrays
serve every step.

The rule that keeps it safe: an op borrows with :func:`borrow`, lists what it borrowed in
``self.borrowed``, and never hands those arrays to anyone else; the backward engine gives them
back (:func:`give_back`) when it frees the op after backward. An op whose graph is dropped
without a backward simply lets its arrays go (the pool then makes new ones). Contents of a
borrowed array are whatever was left in it: write every element before reading.

>>> import numpy as np
>>> a = borrow(np, (2, 3), np.float32)
>>> give_back([a])
>>> borrow(np, (2, 3), np.float32) is a      # the same array, ready for the next step
True
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np
from numpy.typing import DTypeLike

from .. import backend as B
from .arrays import Array

#: How many arrays of one shape and dtype are kept (a network with several convolutions of
#: one shape borrows one each).
KEPT_PER_SHAPE = 8

_free: dict[tuple, list[Array]] = {}


def borrow(xp: Any, shape: tuple[int, ...], dtype: DTypeLike) -> Array:
    """An array of ``xp`` (NumPy or CuPy) with ``shape`` and ``dtype``, uninitialized: one
    given back earlier, or a new one.

    >>> import numpy as np
    >>> borrow(np, (4,), np.float64).shape
    (4,)
    """
    kept = _free.get((xp, shape, np.dtype(dtype)))
    if kept:
        return kept.pop()
    return xp.empty(shape, dtype=dtype)


def give_back(arrays: Iterable[Array]) -> None:
    """Return borrowed arrays: the caller must hold no reference to them afterwards.

    >>> import numpy as np
    >>> give_back([borrow(np, (1,), np.float32)])
    """
    for array in arrays:
        key = (B.get_array_module(array), array.shape, np.dtype(array.dtype))
        kept = _free.setdefault(key, [])
        if len(kept) < KEPT_PER_SHAPE:
            kept.append(array)


def clear() -> None:
    """Let go of every kept array (their memory goes back when nothing else holds them).

    >>> clear()
    """
    _free.clear()
