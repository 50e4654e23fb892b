"""The one random generator behind every random number dltutor draws: ``dt.rand``,
``dt.randn``, the initializers, dropout and the DataLoader's shuffling.

>>> import dltutor as dt
>>> _ = manual_seed(3); a = dt.rand(2)
>>> _ = manual_seed(3); b = dt.rand(2)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Seed every random number dltutor draws (init, rand/randn, dropout, shuffling).

    >>> import dltutor as dt
    >>> _ = dt.manual_seed(0); first = dt.randn(1).item()
    >>> _ = dt.manual_seed(0); first == dt.randn(1).item()
    True
    """
    global _generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: the seed must be an integer, got {seed!r}")
    if seed < 0:
        raise ValueError(f"manual_seed: the seed must be >= 0, got {seed}")
    _generator = np.random.default_rng(seed)
    return _generator


def generator() -> np.random.Generator:
    """The NumPy generator behind dltutor's random numbers (seed it with :func:`manual_seed`)."""
    return _generator
