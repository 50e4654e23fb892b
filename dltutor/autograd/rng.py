"""The one random generator behind every random number dltutor draws: ``dt.rand``,
``dt.randn``, the initializers, dropout and the DataLoader's shuffling.

>>> import dltutor as dt
>>> _ = manual_seed(3); a = dt.rand(2)
>>> _ = manual_seed(3); b = dt.rand(2)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import contextlib
from typing import Iterator

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


@contextlib.contextmanager
def fork_rng() -> Iterator[None]:
    """Seed and draw as you like inside the block; afterwards the generator is the one from
    before, in the state it had (PyTorch: ``torch.random.fork_rng``). A check that rebuilds a
    chapter's numbers uses it, so the learner's own random numbers go on where they were.

    >>> import dltutor as dt
    >>> _ = manual_seed(0); expected = dt.rand(2)
    >>> _ = manual_seed(0)
    >>> with fork_rng():
    ...     _ = dt.rand(3); _ = manual_seed(5); _ = dt.rand(3)
    >>> bool((dt.rand(2) == expected).all())
    True
    """
    global _generator
    saved = _generator
    state = saved.bit_generator.state
    try:
        yield
    finally:
        saved.bit_generator.state = state
        _generator = saved
