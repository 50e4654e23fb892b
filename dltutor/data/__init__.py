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

The pieces, one file each: ``datasets.py`` (Dataset, TensorDataset), ``collate.py`` (samples to
a batch), ``loader.py`` (DataLoader), ``workers.py`` (its background threads) and ``toy.py``
(the data sets).
"""
from .collate import default_collate
from .datasets import Dataset, TensorDataset
from .loader import DataLoader
from .toy import load_digits, make_circles, make_moons, make_sine, make_spirals, make_tokens
from .workers import DataLoaderWorkerError

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
