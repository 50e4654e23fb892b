"""``torch.utils.data``'s address for :mod:`dltutor.data`: the same objects, not copies.

>>> from dltutor.utils.data import DataLoader, TensorDataset
>>> import dltutor as dt
>>> loader = DataLoader(TensorDataset(dt.arange(6.0)), batch_size=4)
>>> [batch[0].shape for batch in loader]
[(4,), (2,)]
"""
from ..data import DataLoader, Dataset, TensorDataset, default_collate

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate"]
