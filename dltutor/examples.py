"""The small LeNet, the digits and the training loop that chapters 06 and 07 share.

Both optimizer chapters ask their questions of the same network on the same data, so that a
learner compares like with like: a LeNet made for scikit-learn's 8x8 handwritten digits, the
first 1,500 digits to train on and the other 297 to test on, batches of 64 in a fixed shuffled
order. The helpers are the few lines every experiment repeats: a fresh network with a fixed
seed, one epoch of training, the test accuracy, and copies of parameter values to compare
before and after a step.

>>> from dltutor import optim
>>> net = make_net(seed=0)
>>> [name for name, _ in net.named_parameters()][:3]
['conv1.weight', 'conv1.bias', 'conv2.weight']
>>> len(make_loader())                       # 1500 digits in batches of 64: 23 full + 1 of 28
24
>>> before = snapshot(net.parameters())
>>> loss = train_epoch(net, optim.SGD(net.parameters(), lr=0.05), make_loader())
>>> all_changed(before, net.parameters())
True
"""
from __future__ import annotations

import functools

import numpy as np

from . import autograd as _autograd
from . import nn
from .data import DataLoader, TensorDataset, load_digits
from .nn import functional as F

__all__ = ["LeNet", "make_net", "digits", "make_loader", "train_epoch", "accuracy",
           "snapshot", "unchanged", "all_changed"]

TRAIN_SIZE = 1500          # the first 1,500 digits train; the remaining 297 test


class LeNet(nn.Module):
    """conv 6@3x3 (pad 1), relu, maxpool 2, conv 16@3x3, relu, fc 64->32, relu, fc 32->10

    The layers are attributes named ``conv1``, ``conv2``, ``fc1`` and ``fc2``, so every
    parameter's name says which kind of layer it belongs to (the chapters pick parameters by
    name).

    >>> import dltutor as dt
    >>> LeNet()(dt.zeros(2, 1, 8, 8)).shape
    (2, 10)
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3, padding=1)   # 1x8x8 -> 6x8x8
        self.pool = nn.MaxPool2d(2)                              # 6x8x8 -> 6x4x4
        self.conv2 = nn.Conv2d(6, 16, kernel_size=3)             # 6x4x4 -> 16x2x2
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x)).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def make_net(seed: int = 0) -> LeNet:
    """A fresh LeNet whose initial values depend only on ``seed``.

    >>> np.array_equal(make_net(3).fc2.bias.numpy(), make_net(3).fc2.bias.numpy())
    True
    """
    _autograd.manual_seed(seed)
    return LeNet()


@functools.lru_cache(maxsize=1)
def digits() -> tuple[TensorDataset, np.ndarray, np.ndarray]:
    """``(train_set, X_test, y_test)``: the digits as images, split at 1,500.

    The test images are a NumPy array (wrap them with ``dt.tensor``); the labels are int64.

    >>> train_set, X_test, y_test = digits()
    >>> len(train_set), X_test.shape, y_test.dtype
    (1500, (297, 1, 8, 8), dtype('int64'))
    """
    X, y = load_digits(images=True)
    return TensorDataset(X[:TRAIN_SIZE], y[:TRAIN_SIZE]), X[TRAIN_SIZE:], y[TRAIN_SIZE:]


def make_loader(seed: int = 0) -> DataLoader:
    """The training digits in shuffled batches of 64; the same order for the same ``seed``.

    >>> xb, yb = next(iter(make_loader()))
    >>> xb.shape, yb.shape
    ((64, 1, 8, 8), (64,))
    """
    return DataLoader(digits()[0], batch_size=64, shuffle=True, seed=seed)


def train_epoch(net: nn.Module, opt, loader: DataLoader) -> float:
    """One pass over ``loader`` (zero_grad, backward, step for each batch); the mean loss.

    ``opt`` is anything with ``zero_grad()`` and ``step()``: an optimizer or a MultiOptimizer.

    >>> from dltutor import optim
    >>> net = make_net()
    >>> train_epoch(net, optim.SGD(net.parameters(), lr=0.05), make_loader()) > 0
    True
    """
    total = 0.0
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


def accuracy(net: nn.Module) -> float:
    """The fraction of the 297 test digits that ``net`` classifies right.

    >>> 0.0 <= accuracy(make_net()) <= 1.0
    True
    """
    _, X_test, y_test = digits()
    with _autograd.no_grad():
        _, predicted = net(_autograd.tensor(X_test)).max(dim=1)     # (values, indices)
    return float((predicted.numpy() == y_test).mean())


def snapshot(params) -> list[np.ndarray]:
    """Copies of the parameters' values (``p.numpy()`` shares memory with ``p``, so copy).

    >>> net = make_net()
    >>> saved = snapshot(net.parameters())
    >>> saved[0] is net.conv1.weight.numpy()
    False
    """
    return [p.numpy().copy() for p in params]


def unchanged(before: list[np.ndarray], params) -> bool:
    """True when every parameter still holds exactly its ``before`` values.

    >>> net = make_net()
    >>> unchanged(snapshot(net.parameters()), net.parameters())
    True
    """
    return all(np.array_equal(old, p.numpy()) for old, p in zip(before, params))


def all_changed(before: list[np.ndarray], params) -> bool:
    """True when every parameter differs from its ``before`` values (in some element).

    >>> net = make_net()
    >>> all_changed(snapshot(net.parameters()), net.parameters())
    False
    """
    return all(not np.array_equal(old, p.numpy()) for old, p in zip(before, params))
