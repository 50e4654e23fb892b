"""Reading a learner's answer fairly: the same answer in any of the forms that mean the same.

A learner may type ``0.1155`` for a bound the chapter prints as ``0.1155`` (the exact value is
0.11547...), or name a type as ``int``, ``"int"`` or ``np.dtype("int64")``. The checks read
answers through these functions, so every exercise accepts what means the same and refuses
only what does not.

>>> same_number(0.1155, 1 / 75 ** 0.5), same_number(0.1154, 1 / 75 ** 0.5)
(True, False)
>>> import numpy as np
>>> type_name(int), type_name("int"), type_name(np.dtype("float32"))
('int', 'int', 'float32')
>>> whole_numbers(np.array([2, 1, 6]))
(2, 1, 6)

An exercise that asks for a function calls it on cases of its own; :func:`called` runs it and
turns what it raised into the sentence the verdict shows.
"""
from __future__ import annotations

import math
from numbers import Real
from typing import Any, Callable

import numpy as np

from ..autograd import Tensor
from ..i18n import text

#: A value typed with at least this many significant digits passes when it is the right value
#: rounded to them (fewer are too few to tell a right answer from a guess).
MIN_TYPED_DIGITS = 4


def number(value: Any) -> float | None:
    """``value`` as a float when it is one number: a Python or NumPy number, a 0-d array or a
    one-element tensor. None otherwise (a bool is an answer to another question).

    >>> import numpy as np
    >>> number(3), number(np.float32(0.5)), number(np.array(2.0)), number(True), number("1")
    (3.0, 0.5, 2.0, None, None)
    """
    if isinstance(value, Tensor):
        value = value.data
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, np.ndarray):
        if value.size != 1 or value.dtype.kind not in "iuf":
            return None
        return float(value.reshape(()))
    if isinstance(value, (Real, np.integer, np.floating)):
        return float(value)
    return None


def typed_digits(value: float) -> int:
    """How many significant digits the shortest text of ``value`` has: what a learner typed.

    >>> typed_digits(0.1155), typed_digits(1.6667), typed_digits(2.0), typed_digits(1 / 3)
    (4, 5, 1, 16)
    """
    if value == 0 or not math.isfinite(value):
        return 1
    mantissa = repr(abs(value)).lower().split("e")[0]     # repr: the shortest exact text
    return max(1, len(mantissa.replace(".", "").strip("0")))


def same_number(got: Any, expected: float, rel_tol: float = 1e-6) -> bool:
    """Whether ``got`` is ``expected``: equal within ``rel_tol``, or ``expected`` rounded to the
    significant digits ``got`` was typed with, if at least four (``0.1155`` for 0.11547...).

    >>> same_number(5 / 3, 5 / 3), same_number(1.6667, 5 / 3), same_number(1.667, 5 / 3)
    (True, True, True)
    >>> same_number(1.67, 5 / 3), same_number(1.666, 5 / 3), same_number("1.667", 5 / 3)
    (False, False, False)
    """
    value = number(got)
    if value is None:
        return False
    if math.isclose(value, expected, rel_tol=rel_tol, abs_tol=1e-12):
        return True
    digits = typed_digits(value)
    return digits >= MIN_TYPED_DIGITS and value == float(f"{expected:.{digits}g}")


def type_name(value: Any) -> str:
    """The name of a type, a dtype or an exception class, given as the thing or as its name:
    ``int``, ``"int"`` and ``"<class 'int'>"`` all give ``"int"``.

    >>> import numpy as np
    >>> type_name(RuntimeError), type_name(" RuntimeError "), type_name(np.float64)
    ('RuntimeError', 'RuntimeError', 'float64')
    >>> type_name("<class 'int'>"), type_name(np.dtype("int64"))
    ('int', 'int64')
    """
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type):
        return np.dtype(value).name if issubclass(value, np.generic) else value.__name__
    text = str(value).strip()
    if text.startswith("<class '") and text.endswith("'>"):
        text = text[len("<class '"):-2]
    return text.rsplit(".", 1)[-1]


def whole_numbers(value: Any) -> tuple[int, ...] | None:
    """``value`` as a tuple of ints when it is a sequence of whole numbers (a tuple, a list, a
    shape or a 1-d array); None otherwise.

    >>> import numpy as np
    >>> whole_numbers([2, 1, 6]), whole_numbers(np.array([2, 1, 6])), whole_numbers((2.0, 3))
    ((2, 1, 6), (2, 1, 6), (2, 3))
    >>> whole_numbers("216"), whole_numbers([2.5]), whole_numbers(7)
    (None, None, None)
    """
    if isinstance(value, Tensor):
        value = value.data
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim == 1 else None
    if not isinstance(value, (tuple, list)):
        return None
    numbers = [number(v) for v in value]
    if any(n is None or n != int(n) for n in numbers):
        return None
    return tuple(int(n) for n in numbers if n is not None)   # (none is None, checked above)


def called(name: str, function: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call the learner's ``function`` on one of the checker's cases: ``(what it returned,
    None)``, or ``(None, one sentence naming name, the exception and its first line)``.

    >>> called("f", int, "x")
    (None, "f raised ValueError: invalid literal for int() with base 10: 'x'")
    >>> called("f", int, "7")
    (7, None)
    """
    try:
        return function(*args), None
    except Exception as err:  # the learner's code may raise anything
        return None, raised(name, err)


def raised(name: str, err: BaseException) -> str:
    """The sentence a verdict shows when the learner's ``name`` raised ``err``: the exception's
    kind and the first line of its message (the rest is a traceback the learner can get by
    calling the function in a cell).

    >>> raised("noise", NameError("name 'rng' is not defined"))
    "noise raised NameError: name 'rng' is not defined"
    """
    first_line = str(err).splitlines()[0] if str(err) else ""
    return text("exercise.raised", name=name, kind=type(err).__name__, message=first_line)
