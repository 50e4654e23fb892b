"""dltutor: learn deep-learning parameter management with a small engine you can read.

>>> import dltutor as dt
>>> w = dt.tensor([1.0, 2.0], requires_grad=True)
>>> loss = (w * w).sum()
>>> loss.backward()
>>> w.grad
tensor([2., 4.])
"""
from . import backend, data, nn, optim, trace
from .autograd import *  # noqa: F401,F403  (the tensor API: dt.tensor, dt.exp, dt.no_grad, ...)
from .autograd import __all__ as _autograd_all
from .io import CheckpointError, load, save

__all__ = ["backend", "data", "nn", "optim", "trace", "save", "load", "CheckpointError", *_autograd_all]
__version__ = "0.1.0"
