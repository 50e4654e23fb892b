"""Clearing gradients: the one rule behind ``Module.zero_grad``, ``Optimizer.zero_grad`` and
Paddle's ``clear_grad`` / ``clear_gradients`` (:func:`clear_grads`, zeros by default).

PyTorch (since 2.0) sets ``.grad`` to None by default: the next backward writes a fresh
gradient, and a parameter the loss did not reach keeps None, which is how chapter 08 tells
"frozen or not reached" from "reached, gradient zero". ``set_to_none=False`` keeps the
gradient tensor and fills it with zeros instead (Paddle's default, ``set_to_zero=True``).

>>> import dltutor as dt
>>> from dltutor import nn
>>> w = nn.Parameter([1.0, 2.0]); w.grad = dt.tensor([3.0, 4.0])
>>> g = w.grad
>>> zero_grads([w], set_to_none=False); w.grad is g, w.grad
(True, tensor([0., 0.]))
>>> zero_grads([w]); w.grad is None
True
"""
from __future__ import annotations

from typing import Any, Iterable

from ... import backend as B


def zero_grads(params: Iterable[Any], set_to_none: bool = True) -> None:
    """Set each parameter's ``.grad`` to None, or (``set_to_none=False``) to zeros in the same
    gradient tensor. (It runs every training step: nothing here is worked out per call that
    could be worked out once.)"""
    if set_to_none is not True and set_to_none is not False:
        raise TypeError(f"zero_grad: set_to_none must be True or False, got {set_to_none!r}")
    if set_to_none:
        for param in params:
            param.grad = None
        return
    for param in params:
        if param.grad is not None:
            # A new zero array inside the same gradient tensor, not zeros written into the old
            # array: backward may have handed that array to two parameters (``a + b`` does).
            data = param.grad.data
            param.grad.data = B.get_array_module(data).zeros_like(data)


def clear_grads(params: Iterable[Any], set_to_zero: bool, caller: str) -> None:
    """Paddle's spelling, ``clear_grad(set_to_zero=True)``, of :func:`zero_grads`: zeros by
    default, None with ``set_to_zero=False``. ``caller`` names the method in its error
    (``Optimizer.clear_grad`` and ``Module.clear_gradients`` both call this).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0]); w.grad = dt.ones(1)
    >>> clear_grads([w], True, "SGD.clear_grad"); w.grad
    tensor([0.])
    >>> clear_grads([w], 0, "SGD.clear_grad")
    Traceback (most recent call last):
    ...
    TypeError: SGD.clear_grad: set_to_zero must be True or False, got 0
    """
    if not isinstance(set_to_zero, bool):
        raise TypeError(f"{caller}: set_to_zero must be True or False, got {set_to_zero!r}")
    zero_grads(params, set_to_none=not set_to_zero)
