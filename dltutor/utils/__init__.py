"""PyTorch's addresses for the kit's tools, so that a tutorial's import lines run unchanged:
``dltutor.utils.data`` is ``dltutor.data`` (``from torch.utils.data import DataLoader`` becomes
``from dltutor.utils.data import DataLoader``).

>>> import dltutor as dt
>>> dt.utils.data.DataLoader is dt.data.DataLoader
True
"""
from . import data

__all__ = ["data"]
