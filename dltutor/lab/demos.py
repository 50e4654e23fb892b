"""Ready-made labs: each function returns a configured :class:`TrainingLab`.

* :func:`moons_mlp`: a small MLP on the two-moons data; the lab to start with.
* :func:`exploding_tanh`: a deep tanh network whose gradients explode without clipping.
* :func:`tied_mlp`: an MLP that uses one hidden layer twice (a tied layer).
* :func:`digits_mlp`: an MLP on the 8x8 handwritten digits.

>>> lab = exploding_tanh()
>>> lab.run(200)
True
>>> lab.accuracy() < 0.7            # without clipping, exploding gradients wreck training
True
"""
from __future__ import annotations

from .. import data, nn, optim
from ..autograd.creation import manual_seed
from ..nn import functional as F
from ..nn import init
from .controller import TrainingLab


def moons_mlp(seed: int = 0, hidden: int = 16, lr: float = 0.1, batch_size: int = 32) -> TrainingLab:
    """A 2-16-16-2 ReLU network learning the two moons with SGD and momentum.

    >>> lab = moons_mlp()
    >>> lab.run(200)
    True
    >>> lab.accuracy() > 0.85
    True
    """
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 2))
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=batch_size, seed=seed,
                       name="moons MLP")


def exploding_tanh(seed: int = 0, depth: int = 8, width: int = 32, gain: float = 3.0,
                   lr: float = 0.5) -> TrainingLab:
    """A deep tanh network initialised too large (Xavier with gain 3): its gradients explode
    and training goes nowhere, until ``lab.set_clip("global_norm", 1.0)`` tames them.

    >>> lab = exploding_tanh()
    >>> lab.set_clip("global_norm", 1.0)
    >>> lab.run(200)
    True
    >>> lab.accuracy() > 0.9
    True
    """
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    layers: list[nn.Module] = []
    size = 2
    for _ in range(depth):
        linear = nn.Linear(size, width)
        init.xavier_normal_(linear.weight, gain=gain)
        layers += [linear, nn.Tanh()]
        size = width
    layers.append(nn.Linear(size, 2))
    model = nn.Sequential(*layers)
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=64, seed=seed,
                       name="exploding tanh")


def tied_mlp(seed: int = 0, hidden: int = 16, lr: float = 0.1) -> TrainingLab:
    """An MLP whose hidden layer is used twice; freezing it freezes both uses.

    >>> lab = tied_mlp()
    >>> lab.layers            # the tied layer is one layer
    ['0', '2', '6']
    """
    manual_seed(seed)
    X, y = data.make_moons(n=256, noise=0.15, seed=seed)
    shared = nn.Linear(hidden, hidden)
    model = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                          nn.Linear(hidden, 2))
    opt = optim.SGD(model.named_parameters(), lr=lr, momentum=0.9)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=32, seed=seed,
                       name="tied MLP")


def digits_mlp(seed: int = 0, hidden: int = 64, lr: float = 1e-3) -> TrainingLab:
    """A 64-64-10 MLP on scikit-learn's 8x8 digits, trained with Adam.

    >>> lab = digits_mlp()
    >>> lab.run(100)
    True
    >>> lab.accuracy() > 0.8
    True
    """
    manual_seed(seed)
    X, y = data.load_digits()
    model = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    opt = optim.Adam(model.named_parameters(), lr=lr)
    return TrainingLab(model, opt, F.cross_entropy, (X, y), batch_size=64, seed=seed,
                       name="digits MLP")
