"""The chapters' data sets. Each returns ``(X, y)``, two NumPy arrays with one row per sample,
deterministic for a given ``seed``.

The moons, the circles and the digits come from scikit-learn, imported inside those functions:
scikit-learn takes about a second to import, and ``import dltutor`` (which imports this
module) should not pay for it.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import checks

_MAX_SEED = 2**32 - 1


def _check_n(n: int, minimum: int = 1, owner: str = "") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        prefix = f"{owner}: " if owner else ""
        raise ValueError(f"{prefix}n must be an integer >= {minimum}, got {n!r}")
    return int(n)


def _check_noise_and_seed(owner: str, noise: float, seed: int | None) -> None:
    """The arguments every data set function shares: ``noise``, a standard deviation (a finite
    number >= 0), and ``seed`` (None, or an integer from 0 to 2**32 - 1, what scikit-learn
    takes), each refused with a message naming the function."""
    checks.non_negative(owner, "noise", noise, hint="the standard deviation of the noise")
    if seed is not None:
        checks.integer(owner, "seed", seed, minimum=0)
        if seed > _MAX_SEED:
            raise ValueError(f"{owner}: seed must be an integer from 0 to 2**32 - 1, got {seed!r}")


def make_moons(n: int = 200, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles: a 2-D problem a straight line cannot separate.

    Returns ``X`` float32 ``(n, 2)`` and ``y`` int64 ``(n,)`` with classes 0 and 1 (half each),
    in shuffled order; ``noise`` is the standard deviation of Gaussian noise on the points.
    Uses scikit-learn's ``make_moons``.

    >>> X, y = make_moons(n=100, noise=0.1, seed=0)
    >>> X.shape, X.dtype, y.dtype, int(y.sum())
    ((100, 2), dtype('float32'), dtype('int64'), 50)
    """
    n = _check_n(n, 2, "make_moons")
    _check_noise_and_seed("make_moons", noise, seed)
    from sklearn.datasets import make_moons as sk_make_moons

    X, y = sk_make_moons(n_samples=n, noise=noise, random_state=seed)
    return X.astype(np.float32), y.astype(np.int64)


def make_circles(n: int = 200, noise: float = 0.05, factor: float = 0.5,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A small circle (class 1) inside a large one (class 0): needs a non-linear boundary.

    ``factor`` is the inner radius relative to the outer one (which is 1). Returns ``X`` float32
    ``(n, 2)`` and ``y`` int64 ``(n,)``, half of each class. Uses scikit-learn's ``make_circles``.

    >>> X, y = make_circles(n=100, seed=0)
    >>> X.shape, y.dtype, int((y == 1).sum())
    ((100, 2), dtype('int64'), 50)
    """
    n = _check_n(n, 2, "make_circles")
    _check_noise_and_seed("make_circles", noise, seed)
    checks.between("make_circles", "factor", factor, 0, 1, high_open=True,
                   hint="the inner circle's radius, relative to the outer one's")
    from sklearn.datasets import make_circles as sk_make_circles

    X, y = sk_make_circles(n_samples=n, noise=noise, factor=factor, random_state=seed)
    return X.astype(np.float32), y.astype(np.int64)


def make_spirals(n: int = 300, arms: int = 3, noise: float = 0.2,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``arms`` spiral arms winding out from the centre, one class per arm.

    The classic test for a small MLP: each arm turns about 4 radians (angle noise ``noise``),
    so the classes wrap around each other. Class ``k`` gets ``n // arms`` points (the first
    ``n % arms`` classes one more). Returns ``X`` float32 ``(n, 2)`` within [-1, 1] and ``y``
    int64 ``(n,)``, rows shuffled.

    >>> X, y = make_spirals(n=300, arms=3, seed=0)
    >>> X.shape, np.bincount(y).tolist()
    ((300, 2), [100, 100, 100])
    """
    n = _check_n(n, 1, "make_spirals")
    _check_noise_and_seed("make_spirals", noise, seed)
    if isinstance(arms, bool) or not isinstance(arms, (int, np.integer)) or not 2 <= arms <= n:
        raise ValueError(f"make_spirals: arms must be an integer from 2 to n={n}, got {arms!r}")
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for k in range(arms):
        m = n // arms + (1 if k < n % arms else 0)
        r = np.linspace(0.0, 1.0, m)
        t = np.linspace(k * 2 * np.pi / arms, k * 2 * np.pi / arms + 4.0, m)
        t = t + rng.normal(0.0, noise, m) * r      # noise grows along the arm, not at the centre
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        ys.append(np.full(m, k, dtype=np.int64))
    X, y = np.concatenate(xs), np.concatenate(ys)
    perm = rng.permutation(n)
    return X[perm].astype(np.float32), y[perm]


def make_sine(n: int = 200, noise: float = 0.1, seed: int = 0,
              low: float = -3.0, high: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """A 1-D regression problem: ``y = sin(x) + noise`` with ``x`` uniform in ``[low, high)``.

    Returns ``X`` float32 ``(n, 1)`` and ``y`` float32 ``(n, 1)``. The target is a column, like
    the output of ``nn.Linear(..., 1)``: a target of shape ``(n,)`` would broadcast against an
    ``(n, 1)`` prediction into an ``(n, n)`` difference, a classic silent bug in an MSE loss.

    >>> X, y = make_sine(n=50, noise=0.0, seed=0)
    >>> X.shape, y.shape, y.dtype
    ((50, 1), (50, 1), dtype('float32'))
    >>> bool(np.allclose(y, np.sin(X), atol=1e-6))
    True
    """
    n = _check_n(n, 1, "make_sine")
    _check_noise_and_seed("make_sine", noise, seed)
    checks.number("make_sine", "low", low)
    checks.number("make_sine", "high", high)
    if not low < high:
        raise ValueError(f"make_sine: low must be below high, got low={low!r}, high={high!r}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, size=(n, 1))
    y = np.sin(x) + rng.normal(0.0, noise, size=(n, 1))
    return x.astype(np.float32), y.astype(np.float32)


def make_tokens(n: int = 1000, vocab_size: int = 20, seq_len: int = 8,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sequences of token ids with a label that depends on which tokens appear (for embeddings).

    A toy "sentiment" task. With ``g = vocab_size // 4``, ids ``0..g-1`` are "positive" words,
    ``g..2g-1`` "negative" words and the rest neutral. Each sequence holds 1-3 words of its
    label's kind, fewer of the other kind, and neutral filler, in random positions. The label is
    1 when positive words outnumber negative ones, else 0. A model that embeds each token, averages
    the embeddings and applies a linear layer can learn it: the embedding has to learn which ids
    are positive and which negative. Classes are balanced (``n // 2`` of label 1).

    Returns ``X`` int64 ``(n, seq_len)`` (ids in ``[0, vocab_size)``) and ``y`` int64 ``(n,)``.

    >>> X, y = make_tokens(n=6, vocab_size=8, seq_len=5, seed=0)
    >>> X.shape, X.dtype, int(X.max()) < 8, int(y.sum())
    ((6, 5), dtype('int64'), True, 3)
    >>> g = 8 // 4
    >>> pos, neg = (X < g).sum(axis=1), ((X >= g) & (X < 2 * g)).sum(axis=1)
    >>> bool(((pos > neg) == (y == 1)).all())
    True
    """
    n = _check_n(n, 1, "make_tokens")
    _check_noise_and_seed("make_tokens", 0.0, seed)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)) or vocab_size < 4:
        raise ValueError(f"make_tokens: vocab_size must be an integer >= 4, got {vocab_size!r}")
    if isinstance(seq_len, bool) or not isinstance(seq_len, (int, np.integer)) or seq_len < 1:
        raise ValueError(f"make_tokens: seq_len must be an integer >= 1, got {seq_len!r}")
    rng = np.random.default_rng(seed)
    g = vocab_size // 4
    y = rng.permutation(np.arange(n) < n // 2).astype(np.int64)  # exactly n // 2 ones
    X = rng.integers(2 * g, vocab_size, size=(n, seq_len), dtype=np.int64)   # neutral filler
    k_max = min(3, seq_len)
    for i in range(n):
        k = int(rng.integers(1, k_max + 1))                  # words of the label's kind
        j = int(rng.integers(0, min(k - 1, seq_len - k) + 1))  # fewer of the other kind
        pos_n, neg_n = (k, j) if y[i] == 1 else (j, k)
        where = rng.permutation(seq_len)[:pos_n + neg_n]
        X[i, where[:pos_n]] = rng.integers(0, g, size=pos_n)
        X[i, where[pos_n:]] = rng.integers(g, 2 * g, size=neg_n)
    return X, y


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()          # ships with scikit-learn: no download
    return (bunch.data / 16.0).astype(np.float32), bunch.target.astype(np.int64)


def load_digits(images: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The 1,797 handwritten digits (8x8 pixels) that ship with scikit-learn; no download.

    Returns ``X`` float32 with pixel values scaled to [0, 1] and ``y`` int64 digits 0-9 (about
    180 of each). ``X`` has shape ``(1797, 64)`` for an MLP, or ``(1797, 1, 8, 8)`` with
    ``images=True`` (N, channels, height, width) for a conv net. The data set has a fixed order;
    shuffle with a :class:`DataLoader`.

    >>> X, y = load_digits()
    >>> X.shape, X.dtype, float(X.max()), y.dtype
    ((1797, 64), dtype('float32'), 1.0, dtype('int64'))
    >>> load_digits(images=True)[0].shape
    (1797, 1, 8, 8)
    """
    if not isinstance(images, (bool, np.bool_)):
        raise TypeError(f"load_digits: images must be True (shape (1797, 1, 8, 8)) or False "
                        f"(shape (1797, 64)), got {images!r}")
    X, y = _digits()
    X, y = X.copy(), y.copy()         # callers may change their copy freely
    if images:
        X = X.reshape(-1, 1, 8, 8)
    return X, y
