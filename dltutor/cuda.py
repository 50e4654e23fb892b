"""``torch.cuda``'s two questions, for the device line of PyTorch tutorials:
``dt.device("cuda" if dt.cuda.is_available() else "cpu")``.

>>> import dltutor as dt
>>> isinstance(dt.cuda.is_available(), bool), dt.cuda.device_count() in (0, 1)
(True, True)
"""
from __future__ import annotations

from . import backend as B


def is_available() -> bool:
    """True when the GPU backend works here: CuPy imports and sees a GPU. Never raises.

    >>> import dltutor as dt
    >>> dt.cuda.is_available() == dt.backend.gpu_available()
    True
    """
    return B.gpu_available()


def device_count() -> int:
    """How many GPUs dltutor can use: 1 when one is available (the kit uses one), else 0.

    >>> import dltutor as dt
    >>> dt.cuda.device_count() == int(dt.cuda.is_available())
    True
    """
    return 1 if B.gpu_available() else 0
