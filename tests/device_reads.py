"""A stand-in GPU that counts host reads: the marked backend (marked_backend.py), told that
reading its values costs what it costs on a GPU.

On a GPU, every read of a value on the host (``float(x)``, ``bool(x)``, ``int(x)``,
``x.item()``, ``x.tolist()``, a copy to NumPy, a boolean mask's index, whose size the host
must know) stops the host until the GPU has finished everything queued before it. Inside
:func:`counting_reads` the marked backend says its reads are not free (``reads_are_free =
False``, as CuPy's backend does), so the engine takes its device path, and each read of a
Marked array is counted with the place in dltutor that made it.
"""
from __future__ import annotations

import collections
import contextlib
import traceback
from typing import Iterator

import numpy as np

import marked_backend

#: The array methods that hand a value to the host.
READING_METHODS = ("__float__", "__int__", "__bool__", "__index__", "item", "tolist")


class Reads(collections.Counter):
    """Host reads by (how, file:line in dltutor); ``total`` is their number."""

    @property
    def total(self) -> int:
        return sum(self.values())

    def where(self) -> str:
        return "; ".join(f"{n}x {how} at {place}" for (how, place), n in self.most_common())


def _caller_in_dltutor() -> str:
    """file:line of the innermost frame inside the dltutor package that led here."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if "/dltutor/" in frame.filename:
            return f"{frame.filename.split('/dltutor/')[-1]}:{frame.lineno}"
    return "outside dltutor"


@contextlib.contextmanager
def counting_reads() -> Iterator[Reads]:
    """Inside: the marked backend behaves as a GPU whose host reads are counted.

    >>> import dltutor as dt
    >>> marked_backend.register() and None
    >>> with dt.backend.use("marked"), counting_reads() as reads:
    ...     x = dt.ones(3)
    ...     _ = float(x.sum())
    >>> reads.total
    1
    """
    reads = Reads()
    marked = marked_backend.Marked
    saved = {name: marked.__dict__.get(name) for name in READING_METHODS + ("__getitem__",)}
    saved_to_numpy = marked_backend.MARKED._to_numpy

    def counted(name):
        base = getattr(np.ndarray, name)

        def method(self, *args, **kwargs):
            reads[(name, _caller_in_dltutor())] += 1
            return base(self.view(np.ndarray), *args, **kwargs)
        return method

    indexing = saved["__getitem__"]

    def getitem(self, index):
        keys = index if isinstance(index, tuple) else (index,)
        if any(isinstance(k, np.ndarray) and k.dtype == bool and k.ndim > 0 for k in keys):
            reads[("boolean mask", _caller_in_dltutor())] += 1
        return indexing(self, index)

    def to_numpy(array):
        reads[("to_numpy", _caller_in_dltutor())] += 1
        return saved_to_numpy(array)

    for name in READING_METHODS:
        setattr(marked, name, counted(name))
    marked.__getitem__ = getitem
    def start_read(array):                 # a copy that does not wait: not a read
        values = np.array(array.view(np.ndarray))
        return lambda: values

    marked_backend.MARKED._to_numpy = to_numpy
    marked_backend.MARKED._start_read = start_read
    marked_backend.MARKED.reads_are_free = False
    try:
        yield reads
    finally:
        marked_backend.MARKED.reads_are_free = True
        marked_backend.MARKED._start_read = None
        marked_backend.MARKED._to_numpy = saved_to_numpy
        for name, method in saved.items():
            if method is None:
                delattr(marked, name)
            else:
                setattr(marked, name, method)
