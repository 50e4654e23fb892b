"""A short real training run, recorded, to try the plots on (the docstrings' examples use it)."""
from __future__ import annotations

from typing import Any

from .. import nn, optim
from ..autograd import manual_seed, tensor
from ..data import make_moons
from ..nn import functional as F
from ..trace import Recorder


def example_recorder(steps: int = 40, freeze_at: int | None = None, grad_clip: Any = None,
                     histograms_every: int = 0, lr: float = 0.5, seed: int = 0) -> Recorder:
    """A :class:`~dltutor.trace.Recorder` of a short real run, to try the plots on.

    A 2-16-16-2 tanh MLP learns the moons data (full batch, SGD with momentum 0.9, ``lr``);
    from step ``freeze_at`` its first layer ``"0"`` is frozen with ``requires_grad_(False)``.
    ``grad_clip`` goes to the optimizer; ``histograms_every`` to the recorder.

    >>> from dltutor import plot
    >>> rec = plot.example_recorder(steps=5, freeze_at=3)
    >>> rec.steps.tolist(), rec.series("frozen", "0.weight").tolist()
    ([0, 1, 2, 3, 4], [0.0, 0.0, 0.0, 1.0, 1.0])
    """
    manual_seed(seed)
    X, y = make_moons(n=200, noise=0.15, seed=seed)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                        nn.Linear(16, 2))
    opt = optim.SGD(net.parameters(), lr=lr, momentum=0.9, grad_clip=grad_clip)
    rec = Recorder(net, opt, histograms_every=histograms_every)
    xb, yb = tensor(X), tensor(y)
    for step in range(steps):
        if step == freeze_at:
            net[0].requires_grad_(False)
        opt.zero_grad()
        value = F.cross_entropy(net(xb), yb)
        value.backward()
        rec.log_loss(value)
        opt.step()
    return rec
