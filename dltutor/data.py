"""Feeding a model: data sets, batching, shuffling and background loading.

Three pieces, shaped like PyTorch's ``torch.utils.data``:

* a :class:`Dataset` answers two questions: how many samples (``len(ds)``) and what is sample
  ``i`` (``ds[i]``). :class:`TensorDataset` is the common case: rows of arrays held in memory.
* a :class:`DataLoader` walks a data set in mini-batches, shuffled in a reproducible order, and
  hands out dltutor Tensors. With ``num_workers > 0`` background threads prepare the next batches
  while your model trains on the current one.
* the chapters' data sets: :func:`make_moons`, :func:`make_circles`, :func:`make_spirals`,
  :func:`make_sine`, :func:`make_tokens` and :func:`load_digits`.

**One convention for every data set function**: it returns ``(X, y)``, two NumPy arrays with one
row per sample. Features are float32; class labels are int64 (what ``cross_entropy`` expects);
regression targets are float32 of shape ``(n, 1)``. NumPy arrays are easy to plot and to inspect;
wrap them in a :class:`TensorDataset` to train on them. Every function is deterministic for a
given ``seed`` and never touches the network.

>>> import dltutor as dt
>>> from dltutor.data import DataLoader, TensorDataset, make_moons
>>> X, y = make_moons(n=200, seed=0)
>>> X.shape, X.dtype, y.dtype
((200, 2), dtype('float32'), dtype('int64'))
>>> loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True, seed=0)
>>> len(loader)                                   # 64 + 64 + 64 + 8
4
>>> for xb, yb in loader:
...     pass                                      # a training step would go here
>>> xb.shape, yb.shape                            # the last, partial batch
((8, 2), (8,))
"""
from __future__ import annotations

import functools
import math
import queue
import threading
import traceback
import weakref
from collections.abc import Mapping
from typing import Any, Callable, Sequence

import numpy as np

from . import backend as B
from .autograd.creation import generator
from .autograd.tensor import Tensor

__all__ = [
    "Dataset",
    "TensorDataset",
    "DataLoader",
    "DataLoaderWorkerError",
    "default_collate",
    "make_moons",
    "make_circles",
    "make_spirals",
    "make_sine",
    "make_tokens",
    "load_digits",
]


# =============================================================================================
# Data sets
# =============================================================================================
class Dataset:
    """The base class of map-style data sets: subclass it and define ``__len__`` and ``__getitem__``.

    ``ds[i]`` returns one sample, usually a tuple ``(features, label)`` of NumPy arrays or
    numbers (a dict works too). The :class:`DataLoader` stacks samples into batches. With
    ``num_workers > 0``, ``__getitem__`` is called from background threads, so it must not change
    shared state (reading arrays is fine).

    >>> import numpy as np
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def __getitem__(self, i):
    ...         return np.float32(i), i * i
    >>> ds = Squares()
    >>> len(ds), ds[3]
    (5, (np.float32(3.0), 9))
    >>> xb, yb = next(iter(DataLoader(ds, batch_size=5)))
    >>> yb
    tensor([ 0,  1,  4,  9, 16])
    """

    def __len__(self) -> int:
        raise NotImplementedError(f"a Dataset subclass must define __len__ ({type(self).__name__} "
                                  "does not): return the number of samples")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"a Dataset subclass must define __getitem__ ({type(self).__name__} "
                                  "does not): return sample number i")


def _as_data_array(data: Any, position: int) -> Any:
    """A NumPy (or CuPy) array for TensorDataset, with dt.tensor's dtype rules for Python lists."""
    if isinstance(data, Tensor):
        return data.data
    if B.backend_of(data) is not None:
        return data
    array = np.asarray(data)
    if array.dtype.kind == "O":
        raise TypeError(f"TensorDataset: argument {position} is {type(data).__name__} data that "
                        "does not make a numeric array; pass NumPy arrays, Tensors or lists of numbers")
    if array.dtype == np.float64:   # Python floats become float32, as in dt.tensor
        array = array.astype(np.float32)
    elif array.dtype.kind in "iu" and array.dtype != np.int64:
        array = array.astype(np.int64)
    return array


class TensorDataset(Dataset):
    """A data set made of arrays that share their first dimension: row ``i`` of each is sample ``i``.

    Pass NumPy arrays (kept as they are: float64 stays float64), dltutor Tensors or lists.
    ``ds[i]`` is a tuple with row ``i`` of every array. ``ds.arrays`` holds the whole arrays,
    which lets the :class:`DataLoader` gather a batch with one fancy index per array
    (``X[indices]``) instead of a Python loop over samples.

    >>> import numpy as np
    >>> X = np.arange(6, dtype=np.float32).reshape(3, 2)
    >>> y = np.array([0, 1, 1])
    >>> ds = TensorDataset(X, y)
    >>> len(ds)
    3
    >>> ds[1]
    (array([2., 3.], dtype=float32), np.int64(1))
    >>> TensorDataset(X, y[:2])
    Traceback (most recent call last):
        ...
    ValueError: TensorDataset: every array needs the same first dimension (one row per sample), got lengths [3, 2] (shapes [(3, 2), (2,)])
    """

    def __init__(self, *arrays: Any):
        if not arrays:
            raise ValueError("TensorDataset needs at least one array, e.g. TensorDataset(X, y)")
        converted = tuple(_as_data_array(a, i) for i, a in enumerate(arrays))
        for i, a in enumerate(converted):
            if a.ndim == 0:
                raise ValueError(f"TensorDataset: argument {i} is a single number (0-d); each "
                                 "argument needs one row per sample")
        lengths = [int(a.shape[0]) for a in converted]
        if len(set(lengths)) > 1:
            shapes = [tuple(a.shape) for a in converted]
            raise ValueError("TensorDataset: every array needs the same first dimension (one row "
                             f"per sample), got lengths {lengths} (shapes {shapes})")
        self.arrays: tuple[Any, ...] = converted

    def __len__(self) -> int:
        return int(self.arrays[0].shape[0])

    def __getitem__(self, index: int) -> tuple:
        return tuple(a[index] for a in self.arrays)

    def __repr__(self) -> str:
        parts = ", ".join(f"{a.dtype} {tuple(a.shape[1:])}" for a in self.arrays)
        return f"TensorDataset({len(self)} samples; per sample: {parts})"


# =============================================================================================
# Collation: a list of samples -> one batch
# =============================================================================================
def _stack(samples: list, path: str) -> Any:
    """Stack a list of like samples into arrays (keeping the structure of tuples and dicts)."""
    first = samples[0]
    for j, s in enumerate(samples):
        if type(s) is not type(first) and not (_is_numberlike(s) and _is_numberlike(first)):
            raise TypeError(f"cannot batch samples of different kinds{path}: sample 0 is "
                            f"{type(first).__name__}, sample {j} is {type(s).__name__}")
    if isinstance(first, Tensor):
        samples = [s.data for s in samples]
        first = samples[0]
    if isinstance(first, Mapping):
        out = {}
        for key in first:
            try:
                values = [s[key] for s in samples]
            except KeyError:
                raise KeyError(f"cannot batch dict samples{path}: key {key!r} is missing from "
                               "some of them") from None
            out[key] = _stack(values, f"{path}[{key!r}]")
        return out
    if isinstance(first, (tuple, list)):
        sizes = {len(s) for s in samples}
        if len(sizes) > 1:
            raise ValueError(f"cannot batch samples{path}: they have different lengths "
                             f"{sorted(sizes)}; pad them to one length or pass collate_fn")
        return tuple(_stack(list(column), f"{path}[{k}]") for k, column in enumerate(zip(*samples)))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, (bool, np.bool_)):
        return np.array(samples, dtype=np.bool_)
    if isinstance(first, np.generic) or B.backend_of(first) is not None:
        xp = B.get_array_module(first)
        shapes = {tuple(getattr(s, "shape", ())) for s in samples}
        if len(shapes) > 1:
            raise ValueError(f"cannot batch samples{path}: their shapes differ {sorted(shapes)}; "
                             "make them one shape (pad or crop) or pass collate_fn")
        return xp.stack([xp.asarray(s) for s in samples])
    if isinstance(first, (int, float)):
        values = np.array(samples)
        if values.dtype == np.float64:       # Python floats -> float32, as in dt.tensor
            return values.astype(np.float32)
        return values.astype(np.int64)
    raise TypeError(f"cannot batch samples of type {type(first).__name__}{path}: return numbers, "
                    "NumPy arrays, Tensors, or tuples/dicts of them from __getitem__, "
                    "or pass collate_fn")


def _is_numberlike(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_))


def _to_tensors(tree: Any, backend: B.Backend) -> Any:
    """Arrays -> Tensors on ``backend`` (no extra copy when the array is already fresh and there)."""
    if isinstance(tree, tuple):
        return tuple(_to_tensors(t, backend) for t in tree)
    if isinstance(tree, dict):
        return {k: _to_tensors(v, backend) for k, v in tree.items()}
    if isinstance(tree, list):         # strings stay a list
        return tree
    array = backend.asarray(tree)
    return Tensor._from_array(array, False)


def default_collate(samples: Sequence[Any]) -> Any:
    """Turn a list of samples into one batch of Tensors, keeping the samples' structure.

    Numbers and arrays are stacked along a new first dimension (Python floats become float32,
    ints int64, arrays keep their dtype); tuples become tuples of batches, dicts dicts of
    batches; strings are kept as a list.

    >>> import numpy as np
    >>> default_collate([(np.ones(2, np.float32), 0), (np.zeros(2, np.float32), 1)])
    (tensor([[1., 1.],
            [0., 0.]]), tensor([0, 1]))
    >>> default_collate([{"x": 1.5, "id": 3}, {"x": 2.5, "id": 4}])
    {'x': tensor([1.5, 2.5]), 'id': tensor([3, 4])}
    """
    samples = list(samples)
    if not samples:
        raise ValueError("default_collate needs at least one sample")
    return _to_tensors(_stack(samples, ""), B.current())


# =============================================================================================
# Fetching one batch (shared by the main thread and the workers)
# =============================================================================================
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
                out.append(Tensor._from_array(self.backend.asarray(a[index]), False))
            return tuple(out)
        samples = []
        for i in indices.tolist():
            where[0] = i
            samples.append(self.dataset[i])
        where[0] = None
        if self.collate_fn is not None:
            return self.collate_fn(samples)
        return _to_tensors(_stack(samples, ""), self.backend)


def _whole_arrays(dataset: Any) -> tuple | None:
    """The data set's whole arrays if batches can be gathered by fancy indexing, else None."""
    arrays = getattr(dataset, "arrays", None)
    if arrays is None:
        return None
    # A TensorDataset subclass that changes __getitem__ (augmentation, say) must go sample by sample.
    if isinstance(dataset, TensorDataset) and type(dataset).__getitem__ is not TensorDataset.__getitem__:
        return None
    return tuple(arrays)


# =============================================================================================
# Background workers
# =============================================================================================
class DataLoaderWorkerError(RuntimeError):
    """A background worker failed to prepare a batch; the message holds the worker's traceback.

    Attributes: ``batch`` (its number in the epoch), ``sample`` (the failing sample's index when
    the data set is read sample by sample, else None), ``worker`` (the thread's name) and
    ``worker_traceback`` (the formatted traceback). The original exception is ``__cause__``.
    Tip: ``num_workers=0`` runs the same code in the main thread, where a debugger can follow it.

    >>> class Broken(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return 1 / (i - 2)
    >>> try:
    ...     list(DataLoader(Broken(), batch_size=2, num_workers=1))
    ... except DataLoaderWorkerError as e:
    ...     print(e.batch, e.sample, type(e.__cause__).__name__)
    1 2 ZeroDivisionError
    """

    def __init__(self, message: str, *, batch: int, sample: int | None, worker: str,
                 worker_traceback: str):
        super().__init__(message)
        self.batch = batch
        self.sample = sample
        self.worker = worker
        self.worker_traceback = worker_traceback


class _Failure:
    """What a worker puts in its queue instead of a batch when preparing it raised."""

    def __init__(self, batch: int, sample: int | None, exc: BaseException, formatted: str,
                 worker: str):
        self.batch = batch
        self.sample = sample
        self.exc = exc
        self.formatted = formatted
        self.worker = worker


_POLL_S = 0.05      # how often a blocked worker or consumer looks at the stop flag


def _worker_loop(worker: int, num_workers: int, fetch: _Fetcher, batches: list, out: queue.Queue,
                 stop: threading.Event) -> None:
    """Prepare batches worker, worker + num_workers, ... in order and put them into ``out``."""
    name = threading.current_thread().name
    where: list = [None]
    for b in range(worker, len(batches), num_workers):
        if stop.is_set():
            return
        try:
            item: Any = (b, fetch(batches[b], where))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which re-raises
            item = _Failure(b, where[0], exc, traceback.format_exc(), name)
        while not stop.is_set():
            try:
                out.put(item, timeout=_POLL_S)
                break
            except queue.Full:
                continue
        if isinstance(item, _Failure):
            return


class _WorkerPool:
    """Worker threads, one bounded queue each; batch b is made by worker b % num_workers.

    Reading the queues round-robin gives the batches back in their original order, so the
    result is identical to ``num_workers=0``; each queue holds at most ``prefetch`` batches.
    """

    def __init__(self, fetch: _Fetcher, batches: list, num_workers: int, prefetch: int):
        self.stop = threading.Event()
        self.queues = [queue.Queue(maxsize=prefetch) for _ in range(num_workers)]
        self.threads = [
            threading.Thread(target=_worker_loop, name=f"dltutor-loader-{w}", daemon=True,
                             args=(w, num_workers, fetch, batches, self.queues[w], self.stop))
            for w in range(num_workers)
        ]
        for t in self.threads:
            t.start()

    def get(self, b: int) -> Any:
        w = b % len(self.threads)
        q, thread = self.queues[w], self.threads[w]
        try:
            while True:
                try:
                    item = q.get(timeout=_POLL_S)
                    break
                except queue.Empty:
                    if not thread.is_alive() and q.empty():
                        raise RuntimeError(f"DataLoader worker {thread.name!r} stopped without "
                                           f"delivering batch {b}") from None
        except BaseException:
            self.shutdown()          # Ctrl-C while waiting: do not leave workers behind
            raise
        if isinstance(item, _Failure):
            self.shutdown()
            where = f" (sample {item.sample})" if item.sample is not None else ""
            message = (f"DataLoader worker {item.worker!r} failed while preparing batch "
                       f"{item.batch}{where}: {type(item.exc).__name__}: {item.exc}\n\n"
                       f"The worker's traceback:\n{item.formatted}\n"
                       "Tip: with num_workers=0 the same error is raised in the main thread, "
                       "where you can debug it.")
            raise DataLoaderWorkerError(message, batch=item.batch, sample=item.sample,
                                        worker=item.worker,
                                        worker_traceback=item.formatted) from item.exc
        got, batch = item
        assert got == b, f"DataLoader worker delivered batch {got} where {b} was expected"
        return batch

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the workers and wait for them; safe to call more than once."""
        self.stop.set()
        for q in self.queues:            # wake workers blocked on a full queue
            try:
                while True:
                    q.get_nowait()
            except queue.Empty:
                pass
        current = threading.current_thread()
        for t in self.threads:
            if t is not current and t.is_alive():
                t.join(timeout)


# =============================================================================================
# DataLoader
# =============================================================================================
class _LoaderIterator:
    """One pass over the data (one epoch). ``close()`` stops its workers early."""

    def __init__(self, batches: list, fetch: _Fetcher, num_workers: int, prefetch: int):
        self._batches = batches
        self._fetch = fetch
        self._next = 0
        self._pool: _WorkerPool | None = None
        self._finalizer: Any = None
        if num_workers > 0 and batches:
            self._pool = _WorkerPool(fetch, batches, min(num_workers, len(batches)), prefetch)
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
                 prefetch_factor: int = 2, collate_fn: Callable | None = None):
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader needs a data set with __len__ and __getitem__ (a "
                            f"Dataset or TensorDataset), got {type(dataset).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)) or num_workers < 0:
            raise ValueError(f"num_workers must be an integer >= 0, got {num_workers!r}")
        if not isinstance(prefetch_factor, (int, np.integer)) or prefetch_factor < 1:
            raise ValueError(f"prefetch_factor must be a positive integer, got {prefetch_factor!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                                 or seed < 0):
            raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.num_workers = int(num_workers)
        self.prefetch_factor = int(prefetch_factor)
        self.collate_fn = collate_fn
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
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise ValueError(f"epoch must be an integer >= 0, got {epoch!r}")
        self._epoch = int(epoch)

    def order(self, epoch: int | None = None) -> np.ndarray:
        """The sample indices in the order epoch ``epoch`` (default: the next) visits them.

        >>> import numpy as np
        >>> DataLoader(TensorDataset(np.arange(5)), shuffle=False).order()
        array([0, 1, 2, 3, 4])
        """
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        epoch = self._epoch if epoch is None else int(epoch)
        return np.random.default_rng([self.seed, epoch]).permutation(n)

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
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)} samples, "
                f"batch_size={self.batch_size}, shuffle={self.shuffle}, drop_last={self.drop_last}, "
                f"seed={self.seed}, num_workers={self.num_workers}) -> {len(self)} batches")


# =============================================================================================
# The chapters' data sets. Each returns (X, y) NumPy arrays, deterministic for a seed.
# =============================================================================================
def _check_n(n: int, minimum: int = 1) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"n must be an integer >= {minimum}, got {n!r}")
    return int(n)


def make_moons(n: int = 200, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles: a 2-D problem a straight line cannot separate.

    Returns ``X`` float32 ``(n, 2)`` and ``y`` int64 ``(n,)`` with classes 0 and 1 (half each),
    in shuffled order; ``noise`` is the standard deviation of Gaussian noise on the points.
    Uses scikit-learn's ``make_moons``.

    >>> X, y = make_moons(n=100, noise=0.1, seed=0)
    >>> X.shape, X.dtype, y.dtype, int(y.sum())
    ((100, 2), dtype('float32'), dtype('int64'), 50)
    """
    from sklearn.datasets import make_moons as sk_make_moons

    X, y = sk_make_moons(n_samples=_check_n(n, 2), noise=noise, random_state=seed)
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
    from sklearn.datasets import make_circles as sk_make_circles

    X, y = sk_make_circles(n_samples=_check_n(n, 2), noise=noise, factor=factor, random_state=seed)
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
    n = _check_n(n)
    if isinstance(arms, bool) or not isinstance(arms, (int, np.integer)) or not 2 <= arms <= n:
        raise ValueError(f"arms must be an integer from 2 to n={n}, got {arms!r}")
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
    n = _check_n(n)
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
    n = _check_n(n)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)) or vocab_size < 4:
        raise ValueError(f"vocab_size must be an integer >= 4, got {vocab_size!r}")
    if isinstance(seq_len, bool) or not isinstance(seq_len, (int, np.integer)) or seq_len < 1:
        raise ValueError(f"seq_len must be an integer >= 1, got {seq_len!r}")
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
    X, y = _digits()
    X, y = X.copy(), y.copy()         # callers may change their copy freely
    if images:
        X = X.reshape(-1, 1, 8, 8)
    return X, y
