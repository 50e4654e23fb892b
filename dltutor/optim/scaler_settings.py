"""The GradScaler's settings, one check each: used by its constructor, its ``set_...`` methods
and its ``load_state_dict``, so a value refused in one place is refused in all.

Each check takes the value and the name it came under (``"init_scale"``, ``"scale"``...) and
returns the value as the scaler stores it, or raises an error naming both.

>>> growth_factor(1.0)
Traceback (most recent call last):
...
ValueError: GradScaler: growth_factor must be a number > 1, got 1.0 (the scale is multiplied by
it after growth_interval clean steps; default 2.0)
>>> growth_tracker(2000, growth_interval=2000)
Traceback (most recent call last):
...
ValueError: GradScaler: _growth_tracker must be below growth_interval=2000 (the clean steps
counted towards the next growth), got 2000
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import checks

OWNER = "GradScaler"
SCALE_HINT = "float32 must hold it: from about 1.4e-45 to 3.4e38"


def float32(value: float) -> float:
    """``value`` rounded to float32, as a Python float: PyTorch keeps its scale in float32
    (too large becomes inf, silently: the callers check).

    >>> float32(0.1)
    0.10000000149011612
    """
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def checked_scale(value: Any, name: str = "init_scale") -> float:
    """``value`` as a float32 scale, if it is a number > 0 that float32 holds.

    >>> checked_scale(1e39, "scale")
    Traceback (most recent call last):
    ...
    ValueError: GradScaler: scale must be a number > 0, got 1e+39 (float32 must hold it: from
    about 1.4e-45 to 3.4e38)
    """
    if isinstance(value, str):                 # GradScaler("cpu"), torch.amp's spelling
        raise ValueError(f"{OWNER}: {name} must be a number > 0, got {value!r} (dltutor's "
                         "GradScaler takes no device: write optim.GradScaler())")
    checks.positive(OWNER, name, value, hint=SCALE_HINT)
    scale = float32(value)
    if not (0 < scale < math.inf):             # rounds to 0 or overflows in float32
        raise ValueError(f"{OWNER}: {name} must be a number > 0, got {value!r} ({SCALE_HINT})")
    return scale


def growth_factor(value: Any, name: str = "growth_factor") -> float:
    """A number > 1: the scale must be able to grow after clean steps.

    >>> growth_factor(4)
    4.0
    """
    checks.number(OWNER, name, value)
    if value <= 1:
        raise ValueError(f"{OWNER}: {name} must be a number > 1, got {value!r} "
                         "(the scale is multiplied by it after growth_interval clean steps; "
                         "default 2.0)")
    return float(value)


def backoff_factor(value: Any, name: str = "backoff_factor") -> float:
    """A number in (0, 1): the scale must shrink after an overflow, and not to 0.

    >>> backoff_factor(0.25)
    0.25
    """
    return float(checks.between(OWNER, name, value, 0, 1, low_open=True, high_open=True,
                                hint="the scale is multiplied by it after a step with inf/NaN; "
                                     "default 0.5"))


def growth_interval(value: Any, name: str = "growth_interval") -> int:
    """An integer >= 1: the clean steps in a row before the scale grows.

    >>> growth_interval(True)
    Traceback (most recent call last):
    ...
    TypeError: GradScaler: growth_interval must be an integer, got True of type bool (clean
    steps in a row before the scale grows; default 2000)
    """
    return checks.integer(OWNER, name, value, minimum=1,
                          hint="clean steps in a row before the scale grows; default 2000")


def growth_tracker(value: Any, growth_interval: int) -> int:
    """The clean steps counted since the scale last changed: 0 up to ``growth_interval - 1``
    (update() starts it again at the interval; one past it, the scale would never grow).

    >>> growth_tracker(3, growth_interval=2000)
    3
    """
    tracker = checks.integer(OWNER, "_growth_tracker", value, minimum=0)
    if tracker >= growth_interval:
        raise ValueError(f"{OWNER}: _growth_tracker must be below growth_interval="
                         f"{growth_interval} (the clean steps counted towards the next growth), "
                         f"got {tracker}")
    return tracker
