"""One check per scheduler setting, used by the constructors and by ``load_state_dict``.

A scheduler's state dict is a plain dict that anyone can edit (or a hostile file can hold):
``{"step_size": 0}`` would divide by zero at the next ``step()``, ``{"gamma": nan}`` would make
every lr NaN. So each key of a state dict goes through the same function that checks the
constructor's argument of that name, *before* anything is replaced: a refused load names the
key and the value, and changes nothing.

Every check has the signature ``check(owner, name, value) -> value`` (the value as it will be
stored) and raises ``ValueError`` or ``TypeError`` naming ``owner`` and ``name``. A scheduler
class lists the checks of its state keys in ``STATE_CHECKS``; :func:`check_of` finds the one
for a key, looking through the class and its bases.

>>> steps("StepLR.load_state_dict", "step_size", 0)
Traceback (most recent call last):
...
ValueError: StepLR.load_state_dict: step_size must be an integer >= 1, got 0 (a number of steps)
>>> lr_list("StepLR.load_state_dict", "base_lrs", [0.1, float("nan")])
Traceback (most recent call last):
...
ValueError: StepLR.load_state_dict: base_lrs[1] must be a number >= 0, got nan
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from numbers import Real
from typing import Any, Callable

from ... import checks

#: ``check(owner, name, value)``: the value to store, or an error naming owner and name.
Check = Callable[[str, str, Any], Any]


def last_epoch(owner: str, name: str, value: Any) -> int:
    """The steps already taken: an integer >= -1 (-1: a schedule that has not started).

    >>> last_epoch("StepLR", "last_epoch", "x")
    Traceback (most recent call last):
    ...
    TypeError: StepLR: last_epoch must be an integer, got 'x' of type str (-1 for a new
    schedule, else the steps already done)
    """
    return checks.integer(owner, name, value, minimum=-1,
                          hint="-1 for a new schedule, else the steps already done")


def count(owner: str, name: str, value: Any) -> int:
    """A counter of steps or events: an integer >= 0.

    >>> count("ReduceLROnPlateau", "num_bad_epochs", 2)
    2
    """
    return checks.integer(owner, name, value, minimum=0)


def steps(owner: str, name: str, value: Any) -> int:
    """A number of steps >= 1 (``step_size``, ``total_iters``...); a whole float such as
    ``epochs / 4`` counts as the integer it equals, as in PyTorch.

    >>> steps("StepLR", "step_size", 30.0)
    30
    """
    return checks.integer(owner, name, value, minimum=1, whole_floats=True,
                          hint="a number of steps")


def rate(owner: str, name: str, value: Any) -> Any:
    """A finite number >= 0 (``gamma``, ``eta_min``, ``threshold``, ``eps``).

    >>> rate("StepLR", "gamma", -0.5)
    Traceback (most recent call last):
    ...
    ValueError: StepLR: gamma must be a number >= 0, got -0.5
    """
    return checks.non_negative(owner, name, value)


def fraction(owner: str, name: str, value: Any) -> Any:
    """A finite number in [0, 1] (an end factor, a warmup's start factor, a momentum).

    >>> fraction("LinearLR", "end_factor", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: LinearLR: end_factor must be a number in [0, 1], got 1.5
    """
    return checks.between(owner, name, value, 0, 1)


def start_factor(owner: str, name: str, value: Any) -> Any:
    """LinearLR's first factor, in (0, 1] (it divides by it: a warmup from 0 is LinearWarmup).

    >>> start_factor("LinearLR", "start_factor", 0.25)
    0.25
    """
    return checks.between(owner, name, value, 0, 1, low_open=True,
                          hint="for a warmup from 0 use LinearWarmup")


#: True or False, the kit's one check for a switch (a string such as "no" would count as True).
flag = checks.flag


def choice(*choices: str) -> Check:
    """A check that accepts only one of ``choices`` (``mode``, ``threshold_mode``...).

    >>> choice("min", "max")("ReduceLROnPlateau", "mode", "minimum")
    Traceback (most recent call last):
    ...
    ValueError: ReduceLROnPlateau: mode must be one of 'min', 'max', got 'minimum'
    """
    def check(owner: str, name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{owner}: {name} must be one of "
                             f"{', '.join(repr(c) for c in choices)}, got {value!r}")
        return value
    return check


def list_of(each: Check) -> Check:
    """A check for a list (one entry per param group) whose every entry passes ``each``.

    >>> list_of(rate)("ReduceLROnPlateau", "min_lrs", [0.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: ReduceLROnPlateau: min_lrs[1] must be a number >= 0, got -1.0
    """
    def check(owner: str, name: str, value: Any) -> list:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{owner}: {name} must be a list with one number per param group, "
                            f"got {value!r:.80}")
        return [each(owner, f"{name}[{i}]", v) for i, v in enumerate(value)]
    return check


#: The lrs of the groups (``base_lrs``, ``_last_lr``): finite numbers >= 0.
lr_list = list_of(rate)


def best(owner: str, name: str, value: Any) -> float:
    """ReduceLROnPlateau's best metric so far: a number, inf before the first (not NaN: no
    value would ever beat it, and the lr would fall at every step).

    >>> best("ReduceLROnPlateau", "best", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: ReduceLROnPlateau: best must be a number (inf or -inf before the first step),
    got nan
    """
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
        raise ValueError(f"{owner}: {name} must be a number (inf or -inf before the first "
                         f"step), got {value!r}")
    return float(value)


def milestones(owner: str, name: str, value: Any) -> Counter:
    """MultiStepLR's milestones as a Counter (a milestone listed twice decays twice): from
    the constructor's increasing list, or from a state dict's {step: times} (``dt.load``
    brings a Counter back as a plain dict).

    >>> milestones("MultiStepLR", "milestones", [2, 5, 5])
    Counter({5: 2, 2: 1})
    >>> milestones("MultiStepLR.load_state_dict", "milestones", {3: 0})
    Traceback (most recent call last):
    ...
    ValueError: MultiStepLR.load_state_dict: milestones[3] must be an integer >= 1, got 0 (how
    many times the lr decays at that step)
    """
    if isinstance(value, Mapping):
        return Counter({checks.integer(owner, f"a step of {name}", step, minimum=0,
                                       whole_floats=True):
                        checks.integer(owner, f"{name}[{step!r}]", times, minimum=1,
                                       hint="how many times the lr decays at that step")
                        for step, times in value.items()})
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{owner}: {name} must be a list of step numbers such as [30, 80], "
                        f"got {value!r}")
    given = list(value)
    values = [checks.integer(owner, f"each of {name}", m, whole_floats=True) for m in given]
    if any(m < 0 for m in values):
        raise ValueError(f"{owner}: {name} are step numbers and must be >= 0, got "
                         f"{name}={given}")
    if any(b < a for a, b in zip(values, values[1:])):
        raise ValueError(f"{owner}: {name} must be increasing, got {name}={given}; did you "
                         f"mean {sorted(values)}?")
    return Counter(values)


class Setting:
    """A scheduler's setting, checked at every assignment by ``check``: the constructor's
    ``self.gamma = gamma``, a learner's ``sched.gamma = 0.5`` and ``load_state_dict`` all run
    the same check. The value lives in the instance's ``__dict__`` (so in ``state_dict()``).

    >>> class Demo:
    ...     gamma = Setting(rate)
    >>> demo = Demo(); demo.gamma = 0.5; demo.gamma
    0.5
    >>> demo.gamma = float("nan")
    Traceback (most recent call last):
    ...
    ValueError: Demo: gamma must be a number >= 0, got nan
    >>> demo.gamma
    0.5
    """

    def __init__(self, check: Check) -> None:
        self.check = check

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__} has no {self.name} yet") from None

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = self.check(type(obj).__name__, self.name, value)


def check_of(cls: type, key: str) -> Check | None:
    """The check of state key ``key`` for scheduler class ``cls``: its :class:`Setting`'s, or
    the one in a ``STATE_CHECKS`` table (None: the key has none).

    >>> from dltutor.optim.lr_scheduler import StepLR
    >>> check_of(StepLR, "step_size") is steps, check_of(StepLR, "last_epoch") is last_epoch
    (True, True)
    """
    for klass in cls.__mro__:
        found = vars(klass).get(key)
        if isinstance(found, Setting):
            return found.check
        table = vars(klass).get("STATE_CHECKS", {})
        if key in table:
            return table[key]
    return None


def same_length(owner: str, name: str, value: list, expected: list) -> None:
    """Refuse a per-group list whose length differs from this scheduler's.

    >>> same_length("StepLR.load_state_dict", "base_lrs", [0.1], [0.1, 0.2])
    Traceback (most recent call last):
    ...
    ValueError: StepLR.load_state_dict: base_lrs has 1 entries but this scheduler has 2 (one per
    param group); build it on an optimizer with the same groups as the saved one
    """
    if len(value) != len(expected):
        raise ValueError(f"{owner}: {name} has {len(value)} entries but this scheduler has "
                         f"{len(expected)} (one per param group); build it on an optimizer "
                         "with the same groups as the saved one")
