"""What the two diagnose test files share: the input, and each cause why_not_updating can name
set up in dltutor (the verdict PyTorch's and Paddle's same setups are compared with)."""
from __future__ import annotations

import numpy as np

import dltutor as dt
from dltutor import nn, optim

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


def dltutor_case(cause: str):
    """(net, optimizer, name, loss) in dltutor so that ``name`` suffers ``cause``."""
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = dt.tensor(X)
    name, first = "0.weight", net[0].weight
    params, kwargs = list(net.named_parameters()), {}
    others = [(n, p) for n, p in params if n != name]
    if cause == "requires_grad_false":
        first.requires_grad_(False)
    elif cause == "not_in_optimizer":
        params = others
    elif cause == "lr_zero":
        params = [{"params": [(name, first)], "lr": 0.0}, {"params": others}]
    elif cause == "lr_mult_zero":
        first.lr_mult = 0.0
    elif cause == "clipped_to_zero":
        kwargs = {"grad_clip": optim.ClipGradByGlobalNorm(1e-9)}
    elif cause == "moves_by_momentum":
        kwargs = {"momentum": 0.9}
    elif cause == "moves_by_weight_decay":
        kwargs = {"weight_decay": 0.5}
    opt = optim.SGD(params, lr=0.1, **kwargs)
    if cause == "moves_by_momentum":
        net(x).sum().backward()
        opt.step()
        opt.zero_grad()
    if cause == "not_reached":
        return net, opt, "2.weight", net[0](x).sum()
    scale = 0.0 if cause in ("zero_grad", "moves_by_momentum", "moves_by_weight_decay") else 1.0
    (net(x) * scale).sum().backward()
    return net, opt, name, None
