"""PyTorch's path to gradient clipping: ``nn.utils.clip_grad_norm_`` and
``nn.utils.clip_grad_value_`` are the functions of :mod:`dltutor.optim.clip`, under the names a
PyTorch training loop uses (``torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)``).

They live with the optimizers, next to Paddle's clip objects (``optim.ClipGradByGlobalNorm``),
because clipping is part of an update step; this module only gives them PyTorch's address.
It imports ``optim``, which is built on ``nn``, so ``dltutor/__init__.py`` loads it after both.

>>> import dltutor as dt
>>> from dltutor import nn
>>> w = nn.Parameter([0.0, 0.0]); w.grad = dt.tensor([3.0, 4.0])
>>> nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> nn.utils.clip_grad_norm_ is dt.optim.clip_grad_norm_
True
"""
from ..optim.clip import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
