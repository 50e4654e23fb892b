"""What PyTorch's optimizers do with a loaded state whose flags differ, and with ``eps=0``.

The referee for two decisions of issue 46 in dltutor/optim (settings.py, checkpoint.py;
tests/optim/test_bad_input.py); chapter 00's table states the second (claim
torch-differs-eps-zero):

* ``load_state_dict`` replaces a group's hyperparameters, flags included: an ``amsgrad=False``
  checkpoint loads into an ``amsgrad=True`` optimizer, and the group is then ``amsgrad=False``.
  dltutor follows this (the loaded group's value wins).
* ``eps=0`` is accepted, and an entry whose gradient has always been zero becomes 0/0 = NaN
  after one step. dltutor refuses ``eps <= 0`` for the rules that divide by ``sqrt(v) + eps``.
"""
from __future__ import annotations

import math
import warnings

import pytest
import torch

from claims import claim


def _stepped(opt_class, steps=2, **options):
    """A weight of two entries and its optimizer after ``steps`` steps (gradient 1, 2)."""
    w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = opt_class([w], lr=0.1, **options)
    for _ in range(steps):
        opt.zero_grad()
        (w * torch.tensor([1.0, 2.0])).sum().backward()
        opt.step()
    return w, opt


@pytest.mark.parametrize("saved, own", [(False, True), (True, False)])
def test_torch_adam_loads_a_checkpoint_whose_amsgrad_differs_and_the_loaded_flag_wins(saved, own):
    _, source = _stepped(torch.optim.Adam, amsgrad=saved)
    checkpoint = source.state_dict()
    w, opt = _stepped(torch.optim.Adam, steps=0, amsgrad=own)
    opt.load_state_dict(checkpoint)                      # no error
    assert opt.param_groups[0]["amsgrad"] is saved       # the loaded group's value
    assert ("max_exp_avg_sq" in opt.state[w]) is saved   # the state as it was saved
    opt.zero_grad()
    (w * torch.tensor([1.0, 2.0])).sum().backward()
    opt.step()                                           # and it steps under the loaded flag
    assert torch.isfinite(w).all()


def test_torch_load_state_dict_replaces_every_hyperparameter_of_a_group():
    """Not only lr: maximize, a flag, comes from the checkpoint too."""
    _, source = _stepped(torch.optim.SGD, momentum=0.9, maximize=True)
    _, opt = _stepped(torch.optim.SGD, steps=0, momentum=0.5, maximize=False)
    opt.load_state_dict(source.state_dict())
    group = opt.param_groups[0]
    assert (group["maximize"], group["momentum"]) == (True, 0.9)


@claim("torch-differs-eps-zero")
@pytest.mark.parametrize("opt_class", [torch.optim.Adam, torch.optim.AdamW,
                                       torch.optim.RMSprop, torch.optim.Adagrad])
def test_torch_accepts_eps_0_and_a_zero_gradient_then_gives_nan(opt_class):
    w = torch.nn.Parameter(torch.tensor([1.0, 1.0]))
    opt = opt_class([w], lr=0.1, eps=0.0)                # accepted when built
    assert opt.param_groups[0]["eps"] == 0.0
    opt.zero_grad()
    (w * torch.tensor([0.0, 1.0])).sum().backward()      # the first entry's gradient is 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.step()
    first, second = w.tolist()
    assert math.isnan(first)                             # 0 / (sqrt(0) + 0) = NaN
    assert math.isfinite(second)
