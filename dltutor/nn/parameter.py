"""Parameter: a tensor a module learns, with Paddle's per-parameter settings as attributes.

>>> import dltutor as dt
>>> from dltutor import nn
>>> p = nn.Parameter(dt.zeros(2, 3), lr_mult=2.0)
>>> p.requires_grad, p.lr_mult, p.need_clip, p.regularizer
(True, 2.0, True, None)
"""
from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from ..autograd import Tensor, no_grad
from ..autograd.dtypes import to_array
from ..autograd.function import init_tensor


class Parameter(Tensor):
    """A tensor that a :class:`~dltutor.nn.Module` registers as learnable.

    Three attributes come from Paddle's ``ParamAttr`` and are honoured by every optimizer:

    * ``lr_mult``: this parameter's learning rate is the group's lr times ``lr_mult``
      (0 means it never moves).
    * ``regularizer``: an ``optim.L1Decay``/``optim.L2Decay`` that replaces the optimizer's
      ``weight_decay`` for this parameter.
    * ``need_clip``: False keeps this parameter out of gradient clipping.

    Made from a Tensor, a Parameter shares its memory; from a list or array, it copies.

    >>> import numpy as np
    >>> p = Parameter(np.ones((2, 2)), need_clip=False)
    >>> p
    Parameter(shape=(2, 2), dtype=float64, need_clip=False)
    tensor([[1., 1.],
            [1., 1.]], dtype=float64, requires_grad=True)
    """

    __slots__ = ("lr_mult", "regularizer", "need_clip")

    def __init__(self, data: Any, requires_grad: bool = True, *, lr_mult: float = 1.0,
                 regularizer: Any = None, need_clip: bool = True):
        array = data.data if isinstance(data, Tensor) else to_array(data)
        if array.dtype.kind not in "fc":
            raise TypeError(f"a Parameter must hold floating-point values, got {array.dtype}; "
                            "make it with dtype=dt.float32")
        init_tensor(self, array, bool(requires_grad))  # shares a Tensor's memory: no copy
        self.lr_mult = _check_lr_mult(lr_mult)
        if regularizer is not None and not callable(getattr(regularizer, "add_to", None)):
            raise TypeError(f"Parameter: regularizer must be an optim.L1Decay or optim.L2Decay "
                            f"(or None), got {type(regularizer).__name__}; for a plain number "
                            "use the optimizer's weight_decay")
        self.regularizer = regularizer
        self.need_clip = bool(need_clip)

    def set_value(self, value: Any) -> "Parameter":
        """Copy ``value`` into this parameter in place (same object, so ties and optimizers
        keep seeing it). The shape must match; the dtype is converted.

        >>> p = Parameter([1.0, 2.0])
        >>> p.set_value([5.0, 6.0]).tolist()
        [5.0, 6.0]
        """
        new = to_array(value.data if isinstance(value, Tensor) else value, self.dtype,
                       caller="set_value")     # refuses strings, objects, complex, ragged lists
        if tuple(new.shape) != tuple(self.shape):
            raise ValueError(f"set_value: the parameter has shape {tuple(self.shape)} but the new "
                             f"value has shape {tuple(new.shape)}; reshape the value first")
        with no_grad():
            self.data[...] = new
        return self

    def __repr__(self) -> str:
        extras = [f"shape={tuple(self.shape)}", f"dtype={self.dtype}"]
        if self.lr_mult != 1.0:
            extras.append(f"lr_mult={self.lr_mult:g}")
        if self.regularizer is not None:
            extras.append(f"regularizer={self.regularizer!r}")
        if not self.need_clip:
            extras.append("need_clip=False")
        if not self.requires_grad:
            extras.append("requires_grad=False")
        return f"Parameter({', '.join(extras)})\n{Tensor.__repr__(self)}"


def _check_lr_mult(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not value >= 0:
        raise ValueError(f"lr_mult must be a number >= 0 (0 freezes the parameter), got {value!r}")
    return float(value)
