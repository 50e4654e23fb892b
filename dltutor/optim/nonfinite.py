"""What ``step()`` does with a gradient that holds NaN or Inf: the ``nonfinite`` option.

One NaN in one gradient is enough to ruin a model: the update writes NaN into that parameter,
and under global-norm clipping the NaN norm scales EVERY gradient to NaN. So before it changes
anything, ``step()`` looks at the gradients it is about to use, and by default refuses:

* ``nonfinite="raise"`` (the default): raise :class:`NonFiniteGradientError`, naming the
  parameters and the step; nothing changes (no parameter, no state, no step count);
* ``nonfinite="skip"``: change nothing and return, counting the step in
  ``optimizer.skipped_steps``: what PyTorch's AMP ``GradScaler`` does with an overflowed step;
* ``nonfinite="apply"``: PyTorch's plain ``optimizer.step()``, NaN and all.

The look costs one dot product per gradient (its sum of squares, which is NaN or Inf exactly
when a value is, or when the values are so large that the square overflows: then each value is
checked), and clipping reuses those sums for its norms, so with a clip the check is free.

>>> import numpy as np
>>> nonfinite_names(["w", "b"], [np.array([1.0, np.nan]), np.array([2.0])], [np.nan, 4.0])
['w']
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import backend as B

#: The values the ``nonfinite`` option of every optimizer takes.
NONFINITE_MODES = ("raise", "skip", "apply")


class NonFiniteGradientError(FloatingPointError):
    """``step()`` found NaN or Inf in a gradient and changed nothing.

    ``names`` are the parameters whose gradients hold them, ``step`` the number of steps the
    optimizer had taken before this one.

    >>> error = NonFiniteGradientError("SGD", ["0.weight"], 3)
    >>> print(error)
    SGD.step(): the gradient of '0.weight' holds NaN or Inf (step 4); nothing was changed. Look for the cause (dt.detect_anomaly() names the op), lower the lr or clip; nonfinite='skip' skips such steps, as AMP does
    >>> error.names, error.step
    (['0.weight'], 3)
    """

    def __init__(self, owner: str, names: Sequence[str], step: int, on_device: bool = False):
        self.names, self.step = list(names), step
        which = ", ".join(repr(name) for name in self.names[:5])
        if len(self.names) > 5:
            which += f" and {len(self.names) - 5} more"
        noun = "gradient of" if len(self.names) == 1 else "gradients of"
        verb = "holds" if len(self.names) == 1 else "hold"
        found = " (found on the device, read after the step)" if on_device else ""
        super().__init__(
            f"{owner}.step(): the {noun} {which} {verb} NaN or Inf (step {step + 1}){found}; "
            "nothing was changed. Look for the cause (dt.detect_anomaly() names the op), lower the lr or "
            "clip; nonfinite='skip' skips such steps, as AMP does")


def check_mode(owner: str, mode: Any) -> str:
    """``mode`` if it is one of :data:`NONFINITE_MODES`, else a ValueError that lists them.

    >>> check_mode("SGD", "skip")
    'skip'
    >>> check_mode("SGD", "ignore")
    Traceback (most recent call last):
    ...
    ValueError: SGD: nonfinite must be 'raise', 'skip' or 'apply', got 'ignore'
    """
    if not isinstance(mode, str) or mode not in NONFINITE_MODES:
        raise ValueError(f"{owner}: nonfinite must be 'raise', 'skip' or 'apply', got {mode!r}")
    return mode


def nonfinite_names(names: Sequence[str], grads: Sequence[Any],
                    squares: Sequence[float]) -> list[str]:
    """The names whose gradient holds NaN or Inf, given each gradient's sum of squares (a
    non-finite sum is confirmed value by value: finite values can overflow their square).

    >>> import numpy as np
    >>> big = np.array([1e30], dtype=np.float32)      # its square overflows float32
    >>> nonfinite_names(["big"], [big], [float("inf")])
    []
    """
    return [name for name, grad, square in zip(names, grads, squares)
            if not math.isfinite(square) and not bool(B.get_array_module(grad).isfinite(grad).all())]
