"""Background workers: threads that prepare the next batches while the model trains.

Worker ``w`` of ``n`` makes batches ``w, w + n, w + 2n, ...`` and puts them in its own bounded
queue; reading the queues in turn gives the batches back in their original order. A worker
that fails hands its exception to the main thread, which raises
:class:`DataLoaderWorkerError` with the worker's traceback.
"""
from __future__ import annotations

import queue
import threading
import traceback
from typing import Any, Callable

import numpy as np


class DataLoaderWorkerError(RuntimeError):
    """A background worker failed to prepare a batch; the message holds the worker's traceback.

    Attributes: ``batch`` (its number in the epoch), ``sample`` (the failing sample's index when
    the data set is read sample by sample, else None), ``worker`` (the thread's name) and
    ``worker_traceback`` (the formatted traceback). The original exception is ``__cause__``.
    Tip: ``num_workers=0`` runs the same code in the main thread, where a debugger can follow it.

    >>> from dltutor.data import DataLoader, Dataset
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
# What a worker calls to make a batch: (the batch's sample indices, a one-item list into which
# it writes the index of the sample it is reading, for the error message) -> the batch.
_Fetch = Callable[[np.ndarray, list], Any]


def _worker_loop(worker: int, num_workers: int, fetch: _Fetch, batches: list, out: queue.Queue,
                 stop: threading.Event) -> None:
    """Prepare batches worker, worker + num_workers, ... in order and put them into ``out``."""
    name = threading.current_thread().name
    where: list = [None]
    for b in range(worker, len(batches), num_workers):
        if stop.is_set():
            return
        try:
            item: Any = (b, fetch(batches[b], where))
        except BaseException as exc:  # handed to the main thread, which re-raises
            item = _Failure(b, where[0], exc, traceback.format_exc(), name)
        while not stop.is_set():
            try:
                out.put(item, timeout=_POLL_S)
                break
            except queue.Full:
                continue
        if isinstance(item, _Failure):
            return


class WorkerPool:
    """Worker threads, one bounded queue each; batch b is made by worker b % num_workers.

    Reading the queues round-robin gives the batches back in their original order, so the
    result is identical to ``num_workers=0``; each queue holds at most ``prefetch`` batches.
    """

    def __init__(self, fetch: _Fetch, batches: list, num_workers: int, prefetch: int):
        self.stop = threading.Event()
        self.queues: list[queue.Queue] = [queue.Queue(maxsize=prefetch) for _ in range(num_workers)]
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
