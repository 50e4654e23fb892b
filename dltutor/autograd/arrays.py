"""``Array``: the one name the engine gives the arrays it computes with.

Every op is typed array to array (``forward(self, a: Array) -> Array``), and so are a tensor's
``.data``, the engine's gradients and the workspace's scratch arrays. ``Array`` names NumPy's
``ndarray``; a CuPy array flows through the same annotations at run time, because CuPy mirrors
NumPy's array API (``.shape``, ``.sum()``, ``a @ b``, ``xp.exp``), so code that is right for
NumPy's types is right for CuPy's, and CuPy ships no type information a checker could use.

Why not a ``typing.Protocol`` listing what the engine calls on an array: it would restate
dozens of NumPy's signatures, less exactly than NumPy's own stubs, and check nothing more.

>>> import numpy as np
>>> Array is np.ndarray
True
"""
from __future__ import annotations

from typing import TypeAlias

import numpy as np

__all__ = ["Array"]

Array: TypeAlias = np.ndarray
