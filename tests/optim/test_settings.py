"""One check per setting (issue 46): what a group or a parameter accepts after construction,
and what a load does with flags that differ. The refusals are in test_bad_input.py; here, what
must still work, and what the checks must not get in the way of.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim.settings import ParamGroup


def _net():
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def _train(net, opt, steps, first=0):
    for step in range(first, first + steps):
        opt.zero_grad()
        dt.manual_seed(100 + step)
        net(dt.randn(5, 3)).pow(2).sum().backward()
        opt.step()


def _weights(net):
    return [p.numpy().copy() for p in net.parameters()]


@pytest.mark.parametrize("saved, own", [(False, True), (True, False)])
def test_a_checkpoint_whose_amsgrad_differs_loads_and_its_flag_wins(saved, own):
    """PyTorch's rule (tests/frameworks/test_optimizer_loading.py): the loaded group replaces
    the optimizer's, flags included. Refused before for saved=False, own=True. The resumed run
    is exactly the uninterrupted one, under the saved flag."""
    net = _net()
    opt = optim.Adam(net.named_parameters(), lr=0.01, amsgrad=saved)
    _train(net, opt, 3)
    checkpoint = copy.deepcopy((net.state_dict(), opt.state_dict()))
    _train(net, opt, 3, first=3)
    expected = _weights(net)

    resumed = _net()
    resumed.load_state_dict(checkpoint[0])
    opt2 = optim.Adam(resumed.named_parameters(), lr=0.01, amsgrad=own)
    result = opt2.load_state_dict(checkpoint[1])
    assert opt2.param_groups[0]["amsgrad"] is saved
    assert result.changed["group 0 amsgrad"] == (own, saved)
    _train(resumed, opt2, 3, first=3)
    for got, want in zip(_weights(resumed), expected):
        np.testing.assert_array_equal(got, want)


def test_a_loaded_group_is_written_whole_not_key_by_key():
    """nesterov=False with momentum 0 loads into a Nesterov SGD: written one key at a time,
    momentum 0 would meet nesterov=True and be refused half-way."""
    net = _net()
    source = optim.SGD(net.named_parameters(), lr=0.1)
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9, nesterov=True)
    opt.load_state_dict(source.state_dict())
    group = opt.param_groups[0]
    assert (group["momentum"], group["nesterov"]) == (0.0, False)
    assert isinstance(group, ParamGroup)


def test_param_names_that_fit_load_and_the_state_dict_still_works():
    net = _net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    _train(net, opt, 1)
    saved = opt.state_dict()
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    saved["param_groups"][0]["param_names"] = list(names)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["param_names"] == names
    assert sorted(opt.state_dict()["state"]) == sorted(names)


def test_a_good_write_by_hand_takes_effect_and_a_group_is_still_a_dict():
    w = nn.Parameter([1.0])
    opt = optim.SGD([w], lr=0.1)
    group = opt.param_groups[0]
    assert isinstance(group, dict)
    group["maximize"] = True                   # climb: the gradient 1 now raises w
    group.update(lr=0.5)
    group.setdefault("initial_lr", 0.5)        # what a scheduler writes
    w.grad = dt.ones(1)
    opt.step()
    assert w.item() == pytest.approx(1.5)
    group["maximize"] = np.bool_(False)        # a NumPy bool is a bool
    opt.step()
    assert w.item() == pytest.approx(1.0)


def test_amsgrad_switched_on_after_some_steps_starts_its_maximum():
    """Before, the next step stopped on a KeyError: 'max_exp_avg_sq'. Its maximum starts at
    zero, so that step is Adam's own step, and the ones after divide by the maximum."""
    net = _net()
    opt = optim.Adam(net.named_parameters(), lr=0.01)
    twin_net = _net()
    twin = optim.Adam(twin_net.named_parameters(), lr=0.01)
    _train(net, opt, 2)
    _train(twin_net, twin, 3)
    opt.param_groups[0]["amsgrad"] = True
    _train(net, opt, 1, first=2)
    for got, want in zip(_weights(net), _weights(twin_net)):
        np.testing.assert_array_equal(got, want)
    first = next(iter(opt.state.values()))
    np.testing.assert_array_equal(first["max_exp_avg_sq"], first["exp_avg_sq"])


@pytest.mark.parametrize("switch", [{"momentum": 0.9}, {"centered": True}])
def test_rmsprop_switches_turned_on_after_a_step_start_their_arrays(switch):
    net = _net()
    opt = optim.RMSprop(net.named_parameters(), lr=0.01)
    _train(net, opt, 1)
    opt.param_groups[0].update(switch)
    _train(net, opt, 2, first=1)
    assert all(np.isfinite(w).all() for w in _weights(net))
    entry = {"momentum": "momentum_buffer", "centered": "grad_avg"}[next(iter(switch))]
    assert all(entry in state for state in opt.state.values())


def test_a_copied_optimizer_checks_its_own_groups():
    net = _net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    twin = copy.deepcopy(opt)
    group = twin.param_groups[0]
    assert isinstance(group, ParamGroup) and group is not opt.param_groups[0]
    with pytest.raises(TypeError, match="param_groups\\[0\\]\\['maximize'\\]"):
        group["maximize"] = "no"
    group["lr"] = 0.5
    assert opt.param_groups[0]["lr"] == 0.1


def test_a_parameter_accepts_good_settings_written_later():
    w = nn.Parameter([1.0, -2.0])
    w.lr_mult = 0.5
    w.regularizer = optim.L1Decay(0.1)
    w.need_clip = False
    w.regularizer = None
    opt = optim.SGD([w], lr=0.2)
    assert opt.effective_lr(w, opt.param_groups[0]) == pytest.approx(0.1)
    w.grad = dt.tensor([1.0, 1.0])
    opt.step()
    np.testing.assert_allclose(w.numpy(), [0.9, -2.1], rtol=1e-6)
    assert (w.lr_mult, w.need_clip) == (0.5, False)
    w.need_clip = np.bool_(True)
    assert w.need_clip is True


def test_a_lazy_parameter_has_its_settings_before_and_after_its_first_forward():
    layer = nn.LazyLinear(2)
    layer.weight.lr_mult = 2.0
    with pytest.raises(ValueError, match="Parameter: lr_mult"):
        layer.weight.lr_mult = -1.0
    layer(dt.ones(1, 3))
    assert layer.weight.lr_mult == 2.0


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad])
def test_a_small_eps_is_accepted_and_a_zero_gradient_leaves_the_weight_where_it_was(cls):
    """What eps > 0 buys: PyTorch, with eps=0, turns this weight into NaN."""
    w = nn.Parameter([1.0, 1.0])
    opt = cls([w], lr=0.1, eps=1e-30, **({"weight_decay": 0.0} if cls is optim.AdamW else {}))
    w.grad = dt.tensor([0.0, 1.0])
    opt.step()
    assert w.numpy()[0] == 1.0 and np.isfinite(w.numpy()).all()


def test_a_saved_state_that_only_rounds_or_counts_as_pytorch_does_still_loads():
    """The gradient-like checks refuse what would break the step, not what is merely another
    dtype: float64 moments that fit float32, and a step count saved as 2.0 (PyTorch's)."""
    net = _net()
    opt = optim.Adam(net.named_parameters(), lr=0.01)
    _train(net, opt, 2)
    saved = opt.state_dict()
    for entry in saved["state"].values():
        entry["exp_avg"] = entry["exp_avg"].numpy().astype(np.float64) + 1e-12
        entry["step"] = np.array(2.0)
    opt.load_state_dict(saved)
    assert all(state["exp_avg"].dtype == np.float32 for state in opt.state.values())
    _train(net, opt, 1, first=2)
