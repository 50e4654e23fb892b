"""Gates: a gradient that passes where a mask is on and is exactly 0 where it is off.

ReLU, clamp and max pooling send the gradient through some positions and stop it at the
others. Multiplying by the mask (``g * mask``) looks right but is not what PyTorch does:
where the mask is off, ``inf * 0`` and ``nan * 0`` are NaN, and ``-2.0 * 0`` is ``-0.0``
(which prints as ``-0.``). PyTorch writes a plain 0 there, whatever the gradient held. So
does a gate:

>>> import numpy as np
>>> g = np.array([-2.0, np.inf, np.nan, 3.0])
>>> on = np.array([False, False, False, True])
>>> with np.errstate(invalid="ignore"):      # (inf * 0 also warns)
...     product = g * on
>>> product                                  # not PyTorch's numbers
array([-0., nan, nan,  3.])
>>> gate(g, gate_mask(g.dtype, on=on))       # PyTorch's
array([0., 0., 0., 3.])

``xp.where(on, g, 0)`` gives the same numbers but is several times slower than the product
in NumPy. A gate works on the float's bits instead: the mask is an integer array of the
float's width holding all ones (keep every bit) or all zeros (clear them: +0.0), and one
bitwise AND applies it. Making the mask costs one cast, in ``forward``; applying it is
faster than the product it replaces.
"""
from __future__ import annotations

from typing import Any

from ... import backend as B

# The signed integer type as wide as each float type: -1 in it has every bit set.
_SAME_WIDTH_INT = {2: "int16", 4: "int32", 8: "int64"}


def gate_mask(dtype: Any, *, on: Any = None, off: Any = None) -> Any:
    """The mask :func:`gate` applies to gradients of ``dtype`` (a NumPy dtype): all ones where
    the gradient passes, zeros where it stops, in an integer type as wide as ``dtype``. Say
    where it passes (``on``, a bool array) or where it stops (``off``): they differ at NaN,
    which compares False both ways (PyTorch's relu passes the gradient at a NaN input, its
    clamp stops it).

    >>> import numpy as np
    >>> x = np.array([np.nan, -1.0, 2.0], dtype=np.float32)
    >>> gate_mask(x.dtype, off=x <= 0), gate_mask(x.dtype, on=x > 0)
    (array([-1,  0, -1], dtype=int32), array([ 0,  0, -1], dtype=int32))
    """
    if (on is None) == (off is None):
        raise TypeError("gate_mask: give on= (where the gradient passes) or off= (where it "
                        "stops), one of them")
    bits = (off if on is None else on).astype(_SAME_WIDTH_INT[dtype.itemsize])   # 1 or 0
    if on is None:
        bits -= 1          # off: 1 -> 0 (stop), 0 -> -1 (every bit set: pass)
    else:
        bits *= -1         # on: 1 -> -1 (pass), 0 -> 0 (stop)
    return bits


def gate(grad: Any, mask: Any) -> Any:
    """``grad`` where ``mask`` (from :func:`gate_mask`) is on, +0.0 where it is off, whatever
    ``grad`` holds there (NaN and inf included), as PyTorch's masked gradients. A new array.

    >>> import numpy as np
    >>> gate(np.array([-1.0, 5.0], dtype=np.float32), np.array([0, -1], dtype=np.int32))
    array([0., 5.], dtype=float32)
    """
    if grad.dtype.itemsize != mask.dtype.itemsize:     # a gradient of another width: no bit trick
        return B.get_array_module(grad).where(mask != 0, grad, 0).astype(grad.dtype, copy=False)
    return (grad.view(mask.dtype) & mask).view(grad.dtype)
