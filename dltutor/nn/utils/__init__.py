"""Utilities for training, at PyTorch's addresses: ``nn.utils.clip_grad_norm_`` and
``nn.utils.clip_grad_value_`` (clip_grad.py), and the norms of gradients and parameters that
the clips, the optimizers and the Recorder take (norms.py), and clearing gradients (grads.py).

>>> import dltutor as dt
>>> from dltutor import nn
>>> w = nn.Parameter([0.0, 0.0]); w.grad = dt.tensor([3.0, 4.0])
>>> nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> nn.utils.clip_grad_norm_ is dt.optim.clip_grad_norm_
True
"""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .grads import zero_grads

__all__ = ["clip_grad_norm_", "clip_grad_value_", "zero_grads"]
