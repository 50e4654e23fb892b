"""The parts a TrainingLab is made of, checked and put in shape before the lab exists
(controller.py): the model, optimizer and loss function checked together, the data as a
loader, the optimizer's starting state as plain arrays, and the accuracy the lab reports.

>>> loader, X, y = as_loader((np.zeros((3, 2)), np.array([0, 1, 0])), None, seed=0)
>>> len(loader)
1
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor, no_grad, tensor
from ..data import DataLoader, TensorDataset
from ..nn import Module
from ..optim import Optimizer
from ..stats import eval_mode
from .errors import LabError


def accuracy(model: Module, X: np.ndarray, y: np.ndarray) -> float:
    """The share of rows of ``X`` whose largest output is the label in ``y`` (eval mode).

    >>> from dltutor import nn
    >>> always_first = nn.Linear(2, 2)                   # zero inputs: the output is the bias
    >>> _ = always_first.bias.set_value([1.0, 0.0])
    >>> accuracy(always_first, np.zeros((4, 2)), np.array([0, 0, 0, 1]))
    0.75
    """
    with eval_mode(model), no_grad():
        predicted = model(tensor(X)).numpy().argmax(axis=1)
    return float((predicted == np.asarray(y)).mean())


def check_parts(model: Any, optimizer: Any, loss_fn: Callable) -> None:
    """Refuse a lab that could not take a step, before any part of it is made.

    >>> from dltutor import nn, optim
    >>> check_parts(nn.Linear(2, 2), "sgd", print)
    Traceback (most recent call last):
    ...
    dltutor.lab.errors.LabError: TrainingLab: optimizer must be a dltutor optimizer such as optim.SGD(model.parameters(), lr=0.1), got str
    """
    if not isinstance(model, Module):
        raise LabError(f"TrainingLab: model must be an nn.Module, got {type(model).__name__}")
    if next(iter(model.parameters()), None) is None:
        raise LabError(f"TrainingLab: the model {type(model).__name__} has no parameters, so "
                       "there is nothing to train (a model of lazy layers gets its parameters "
                       "at its first forward call: call it once on a batch first)")
    if not isinstance(optimizer, Optimizer):
        raise LabError(f"TrainingLab: optimizer must be a dltutor optimizer such as "
                       f"optim.SGD(model.parameters(), lr=0.1), got {type(optimizer).__name__}")
    if not callable(loss_fn):
        raise LabError(f"TrainingLab: loss_fn must be a function loss_fn(output, target) such "
                       f"as F.cross_entropy, got {loss_fn!r}")


def as_loader(data: Any, batch_size: int | None, seed: int) -> tuple[Any, Any, Any]:
    """The lab's data as ``(loader, X, y)``: a DataLoader as given (its arrays, when it has
    them, for the accuracy), or a pair of arrays in one batch (``batch_size`` None) or in
    shuffled batches.

    >>> loader, X, y = as_loader((np.zeros((6, 2)), np.zeros(6)), batch_size=4, seed=0)
    >>> [len(xb) for xb, _ in loader], X.shape
    ([4, 2], (6, 2))
    """
    if isinstance(data, DataLoader):
        arrays = getattr(data.dataset, "arrays", None)
        X = B.to_numpy(arrays[0]) if arrays else None
        y = B.to_numpy(arrays[1]) if arrays and len(arrays) > 1 else None
        return data, X, y
    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise LabError("data must be a DataLoader or a pair of arrays (X, y)")
    X, y = (np.asarray(B.to_numpy(d.data if isinstance(d, Tensor) else d)) for d in data)
    size = len(X) if batch_size is None else batch_size
    loader = DataLoader(TensorDataset(X, y), batch_size=size, shuffle=batch_size is not None,
                        seed=seed)
    return loader, X, y


def plain_state(state: Any) -> Any:
    """An optimizer state dict with its tensors as NumPy copies (safe to keep and reuse).

    >>> from dltutor import tensor
    >>> plain_state({"state": [tensor([1.0])], "lr": 0.1})
    {'state': [array([1.], dtype=float32)], 'lr': 0.1}
    """
    if isinstance(state, dict):
        return {k: plain_state(v) for k, v in state.items()}
    if isinstance(state, list):
        return [plain_state(v) for v in state]
    if isinstance(state, Tensor):
        return state.numpy().copy()
    return state
