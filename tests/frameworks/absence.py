"""A "—" in a names table says the framework has no such thing: proved by looking for it.

:func:`spellings_found` lists every attribute of the given modules and classes whose name holds
one of the obvious spellings of the idea; a "—" test asserts that it finds none. Pick the
spellings a learner would try (``lr_mult``, ``learning_rate``, ``lr_scale``), not fragments
that every library has (``lr`` alone).

>>> import math
>>> spellings_found([math], ["sqrt", "cube_root"])
['math.isqrt', 'math.sqrt']
"""
from __future__ import annotations

import inspect
from typing import Iterable


def _owner_name(owner: object) -> str:
    if inspect.ismodule(owner):
        return owner.__name__
    if inspect.isclass(owner):
        return owner.__qualname__
    return type(owner).__qualname__


def spellings_found(owners: Iterable[object], spellings: Iterable[str]) -> list[str]:
    """``owner.attribute`` for every attribute of ``owners`` whose name contains one of
    ``spellings`` (letter case ignored), sorted; an empty list proves the absence."""
    words = [s.lower() for s in spellings]
    return sorted(f"{_owner_name(owner)}.{name}" for owner in owners for name in dir(owner)
                  if any(word in name.lower() for word in words))
