"""Gates: a gradient that passes where a mask is on and is exactly 0 where it is off.

ReLU, clamp and max pooling send the gradient through some positions and stop it at the
others. Multiplying by the mask (``g * on``) looks right but is not what PyTorch does: where
the mask is off, ``inf * 0`` and ``nan * 0`` are NaN, and ``-2.0 * 0`` is ``-0.0`` (which
prints as ``-0.``). PyTorch writes a plain 0 there, whatever the gradient held. So does a gate:

>>> import numpy as np
>>> g = np.array([-2.0, np.inf, np.nan, 3.0])
>>> on = np.array([False, False, False, True])
>>> with np.errstate(invalid="ignore"):      # (inf * 0 also warns)
...     product = g * on
>>> product                                  # not PyTorch's numbers
array([-0., nan, nan,  3.])
>>> gate(g, on)                              # PyTorch's
array([0., 0., 0., 3.])

``xp.where(on, g, 0)`` gives the same numbers but is several times slower than the product
in NumPy. A gate multiplies the float's *bits* instead: read as an integer of the same width,
times 1 keeps every bit, times 0 clears them all, and all-zero bits are +0.0. It is as fast
as the product it replaces (faster: no bool-to-float conversion).
"""
from __future__ import annotations


import numpy as np

from ... import backend as B
from ..arrays import Array

# The integer type as wide as each float type: a float's bits, read as one number.
_SAME_WIDTH_INT = {size: np.dtype(f"int{8 * size}") for size in (2, 4, 8)}


def gate(grad: Array, on: Array | bool) -> Array:
    """``grad`` where ``on`` (a bool array that broadcasts against it) is True and +0.0
    elsewhere, whatever ``grad`` holds there (NaN and inf included), as PyTorch's masked
    gradients. A new array.

    >>> import numpy as np
    >>> gate(np.array([-1.0, np.nan, 5.0], dtype=np.float32), np.array([False, False, True]))
    array([0., 0., 5.], dtype=float32)
    """
    same_width = _SAME_WIDTH_INT.get(grad.dtype.itemsize)
    if same_width is None:        # no integer this wide (float128, x86's long double): slower
        return B.get_array_module(grad).where(on, grad, 0).astype(grad.dtype, copy=False)
    return (grad.view(same_width) * on).view(grad.dtype)
