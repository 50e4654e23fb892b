"""DataLoader: a data set in mini-batches of Tensors, shuffled per epoch, optionally prefetched
by background workers (``workers.py``).
"""
from __future__ import annotations

import math
import weakref
from typing import Any, Callable

import numpy as np

from .. import backend as B
from ..autograd.function import make_tensor
from ..autograd.rng import generator
from .collate import stack_samples, to_tensors
from .datasets import TensorDataset
from .workers import WorkerPool


class _Fetcher:
    """Turns a batch's sample indices into a batch. Holds no reference to any iterator."""

    def __init__(self, dataset: Any, collate_fn: Callable | None, backend: B.Backend):
        self.dataset = dataset
        self.collate_fn = collate_fn
        self.backend = backend
        self.arrays = _whole_arrays(dataset) if collate_fn is None else None

    def __call__(self, indices: np.ndarray, where: list) -> Any:
        if self.arrays is not None:
            # The fast path: one fancy index per array gathers the whole batch.
            out = []
            for a in self.arrays:
                index = indices if isinstance(a, np.ndarray) else B.get_array_module(a).asarray(indices)
                out.append(make_tensor(self.backend.asarray(a[index])))
            return tuple(out)
        samples = []
        for i in indices.tolist():
            where[0] = i
            samples.append(_sample(self.dataset, i))
        where[0] = None
        if self.collate_fn is not None:
            return self.collate_fn(samples)
        return to_tensors(stack_samples(samples, ""), self.backend)


def _sample(dataset: Any, i: int) -> Any:
    """``dataset[i]``, where an IndexError for an index below ``len(dataset)`` is the data set's
    own bug: its ``__len__`` and ``__getitem__`` disagree, and the message says so."""
    try:
        return dataset[i]
    except IndexError as exc:
        raise IndexError(f"{type(dataset).__name__}[{i}] raised IndexError ({exc}) although "
                         f"len() says it has {len(dataset)} samples: its __len__ and "
                         "__getitem__ disagree") from exc


def _whole_arrays(dataset: Any) -> tuple | None:
    """The data set's whole arrays if batches can be gathered by fancy indexing, else None."""
    arrays = getattr(dataset, "arrays", None)
    if arrays is None:
        return None
    # A TensorDataset subclass that changes __getitem__ (augmentation, say) must go sample by sample.
    if isinstance(dataset, TensorDataset) and type(dataset).__getitem__ is not TensorDataset.__getitem__:
        return None
    return tuple(arrays)


class _LoaderIterator:
    """One pass over the data (one epoch). ``close()`` stops its workers early."""

    def __init__(self, batches: list, fetch: _Fetcher, num_workers: int, prefetch: int):
        self._batches = batches
        self._fetch = fetch
        self._next = 0
        self._pool: WorkerPool | None = None
        self._finalizer: Any = None
        if num_workers > 0 and batches:
            self._pool = WorkerPool(fetch, batches, min(num_workers, len(batches)), prefetch)
            # Runs when the iterator is closed, garbage collected (a `break` out of a for loop
            # drops the last reference) or the interpreter exits. It must not refer to self.
            self._finalizer = weakref.finalize(self, self._pool.shutdown)

    def __iter__(self) -> "_LoaderIterator":
        return self

    def __len__(self) -> int:
        return len(self._batches) - self._next

    def __next__(self) -> Any:
        b = self._next
        if b >= len(self._batches):
            self.close()
            raise StopIteration
        if self._pool is None:
            batch = self._fetch(self._batches[b], [None])
        else:
            try:
                batch = self._pool.get(b)
            except BaseException:
                self._next = len(self._batches)
                self.close()
                raise
        self._next = b + 1
        if self._next == len(self._batches):
            self.close()             # the workers are done; let them go now
        return batch

    def close(self) -> None:
        """Stop early: the background workers end and the iterator is exhausted."""
        self._next = len(self._batches)
        if self._finalizer is not None:
            self._finalizer()


def _count(name: str, value: Any, minimum: int, also: str = "") -> int:
    """``value`` as an int if it is an integer (not a bool) >= ``minimum``, else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"DataLoader: {name} must be {also}{wanted}, got {value!r}")
    return int(value)


def _flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False: ``shuffle="no"`` would otherwise count as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"DataLoader: {name} must be True or False, got {value!r}")
    return bool(value)


class DataLoader:
    """Walk a data set in mini-batches of dltutor Tensors, optionally shuffled and prefetched.

    Arguments:

    * ``batch_size``: samples per batch; the last batch is smaller unless ``drop_last=True``.
    * ``shuffle``: a new random order every epoch. Epoch ``e``'s order comes from a NumPy
      generator seeded with ``(seed, e)``, so each epoch differs from the last and the whole run
      repeats exactly for the same ``seed``. With ``seed=None`` the loader draws its seed from
      dltutor's generator when it is made (only if ``shuffle=True``), so ``dt.manual_seed`` makes
      it reproducible. Each ``for`` loop over the loader is the next epoch (``loader.epoch``
      tells which is next; ``set_epoch`` jumps, e.g. to resume training).
    * ``num_workers``: background threads that prepare batches ahead of the training loop.
      Why it helps: gathering a batch (indexing, decoding, augmenting) and training on a batch
      take turns in a plain loop; with workers, the *next* batch is prepared while the model
      trains on the current one, so the loop hardly ever waits for data. Threads, not processes:
      NumPy releases Python's GIL while it copies and computes, threads start instantly and
      they work in Jupyter without pickling anything. Batches arrive in exactly the same order
      as with ``num_workers=0``; at most ``prefetch_factor * num_workers`` wait in memory.
      Leaving the loop early (``break``) stops the workers; an error in a worker is raised in
      your loop as :class:`DataLoaderWorkerError`, with the worker's traceback.
    * ``collate_fn``: a function from a list of samples to a batch, for samples the default
      (:func:`default_collate`) cannot stack, e.g. sequences that need padding.
    * ``sampler``: an iterable of sample indices that decides each epoch's order instead of
      ``shuffle`` (``dist.DistributedSampler``: each process its share of the data).

    A batch from a :class:`TensorDataset` is a tuple with one Tensor per array, gathered with one
    fancy index per array (fast). For another Dataset, the samples are stacked with
    :func:`default_collate`. Tensors are made on the current backend (``dt.backend.use``);
    float arrays keep their dtype and integer labels stay int64.

    >>> import numpy as np, dltutor as dt
    >>> ds = TensorDataset(np.arange(10, dtype=np.float32), np.arange(10) % 2)
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, seed=0)
    >>> len(loader)
    3
    >>> [xb.shape[0] for xb, yb in loader]
    [4, 4, 2]
    >>> first = [xb.numpy().tolist() for xb, _ in loader]          # epoch 1: another order
    >>> again = DataLoader(ds, batch_size=4, shuffle=True, seed=0)
    >>> _ = list(again)                                             # epoch 0
    >>> first == [xb.numpy().tolist() for xb, _ in again]           # epoch 1 again
    True
    >>> threaded = DataLoader(ds, batch_size=4, shuffle=True, seed=0, num_workers=2)
    >>> [xb.numpy().tolist() for xb, _ in threaded] == [xb.numpy().tolist() for xb, _ in
    ...                                                  DataLoader(ds, 4, shuffle=True, seed=0)]
    True
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, seed: int | None = None, num_workers: int = 0, *,
                 prefetch_factor: int = 2, collate_fn: Callable | None = None,
                 sampler: Any = None):
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader needs a data set with __len__ and __getitem__ (a "
                            f"Dataset or TensorDataset), got {type(dataset).__name__}")
        # Every argument is checked before any is kept: a refused loader is never half made.
        _count("batch_size", batch_size, 1)
        _count("num_workers", num_workers, 0)
        _count("prefetch_factor", prefetch_factor, 1)
        if seed is not None:
            _count("seed", seed, 0, "None or ")
        _flag("shuffle", shuffle)
        _flag("drop_last", drop_last)
        if sampler is not None and (shuffle or not hasattr(sampler, "__iter__")
                                    or not hasattr(sampler, "__len__")):
            raise ValueError("DataLoader: a sampler decides the order itself, so shuffle must "
                             "be False with it, and it must be an iterable of indices with a "
                             f"length (such as dist.DistributedSampler), got {sampler!r} and "
                             f"shuffle={shuffle!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function from a list of samples to "
                            f"a batch (or None for default_collate), got {collate_fn!r}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.num_workers = int(num_workers)
        self.prefetch_factor = int(prefetch_factor)
        self.collate_fn = collate_fn
        self.sampler = sampler
        if seed is None and self.shuffle:
            # Drawn once, now: dt.manual_seed(...) before making the loader fixes every epoch.
            seed = int(generator().integers(0, 2**63 - 1))
        self.seed: int | None = None if seed is None else int(seed)
        self._epoch = 0

    # -- epochs -----------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        """The number of the epoch the next ``for`` loop will run (0 for the first)."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``for`` loop run epoch ``epoch`` (its shuffle order), e.g. when resuming.

        >>> import numpy as np
        >>> loader = DataLoader(TensorDataset(np.arange(6)), batch_size=6, shuffle=True, seed=1)
        >>> epoch0 = [x.numpy().tolist() for (x,) in loader]
        >>> epoch1 = [x.numpy().tolist() for (x,) in loader]
        >>> loader.set_epoch(1)
        >>> [x.numpy().tolist() for (x,) in loader] == epoch1
        True
        """
        self._epoch = _count("epoch", epoch, 0)

    def order(self, epoch: int | None = None) -> np.ndarray:
        """The sample indices in the order epoch ``epoch`` (default: the next) visits them.

        >>> import numpy as np
        >>> DataLoader(TensorDataset(np.arange(5)), shuffle=False).order()
        array([0, 1, 2, 3, 4])
        """
        if self.sampler is not None:       # its own order (DistributedSampler: set_epoch)
            return np.fromiter(self.sampler, dtype=np.int64)
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        epoch = self._epoch if epoch is None else _count("epoch", epoch, 0)
        seed: int = self.seed  # type: ignore[assignment]  # shuffle: __init__ drew one
        return np.random.default_rng([seed, epoch]).permutation(n)

    def _batches(self, order: np.ndarray) -> list:
        bs = self.batch_size
        stop = (len(order) // bs) * bs if self.drop_last else len(order)
        return [order[i:i + bs] for i in range(0, stop, bs)]

    # -- iteration --------------------------------------------------------------------------
    def __iter__(self) -> _LoaderIterator:
        order = self.order(self._epoch)
        self._epoch += 1
        fetch = _Fetcher(self.dataset, self.collate_fn, B.current())
        return _LoaderIterator(self._batches(order), fetch, self.num_workers, self.prefetch_factor)

    def __len__(self) -> int:
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)} samples, "
                f"batch_size={self.batch_size}, shuffle={self.shuffle}, drop_last={self.drop_last}, "
                f"seed={self.seed}, num_workers={self.num_workers}) -> {len(self)} batches")
