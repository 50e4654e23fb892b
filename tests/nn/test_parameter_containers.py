"""nn.ParameterList and nn.ParameterDict: parameters in a list or dict that a module registers,
with PyTorch's names (tests/frameworks/test_custom_layers_torch.py runs the same cases in
PyTorch)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim


class Scales(nn.Module):
    """One scale per layer in a ParameterList, a shift per name in a ParameterDict, and the
    same kind of parameter in a plain list (the mistake)."""

    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([dt.ones(3, dtype=dt.float64) * (i + 1) for i in range(2)])
        self.shifts = nn.ParameterDict({"out": np.zeros(3), "mid": np.full(3, 0.5)})
        self.plain = [nn.Parameter(np.ones(3))]

    def forward(self, x):
        for scale in self.scales:
            x = x * scale
        return x + self.shifts["mid"] + self.shifts["out"] + self.plain[0]


def test_the_names_are_positions_and_keys_and_a_plain_list_is_not_seen():
    model = Scales()
    assert [n for n, _ in model.named_parameters()] == \
        ["scales.0", "scales.1", "shifts.mid", "shifts.out"]          # a dict: keys sorted
    assert list(model.state_dict()) == ["scales.0", "scales.1", "shifts.mid", "shifts.out"]
    assert all(p is not model.plain[0] for p in model.parameters())


def test_tensors_and_arrays_become_parameters_and_a_tensor_keeps_its_memory():
    t = dt.ones(2)
    plist = nn.ParameterList([t, np.zeros(3), nn.Parameter(dt.ones(1))])
    assert all(type(p) is nn.Parameter and p.requires_grad for p in plist)
    assert np.shares_memory(plist[0].data, t.data)                      # as torch.nn.Parameter(t)
    assert plist[1].dtype == np.float64
    given = nn.Parameter(dt.ones(4))
    assert nn.ParameterDict({"w": given})["w"] is given                  # a Parameter stays itself


def test_an_optimizer_step_moves_the_containers_parameters_but_not_the_plain_list():
    model = Scales()
    x = dt.tensor(np.arange(6.0).reshape(2, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    # d/d scale0 of sum(x * s0 * s1) = sum over rows of x * s1 = [3, 5, 7] * 2
    assert np.allclose(model.scales[0].grad.numpy(), [6.0, 10.0, 14.0])
    assert np.allclose(model.shifts["mid"].grad.numpy(), [2.0, 2.0, 2.0])
    opt.step()
    assert np.allclose(model.scales[0].numpy(), [1 - 0.6, 1 - 1.0, 1 - 1.4])
    assert np.allclose(model.shifts["mid"].numpy(), [0.3, 0.3, 0.3])
    assert model.plain[0].grad is not None                              # it had a gradient ...
    assert np.array_equal(model.plain[0].numpy(), np.ones(3))           # ... and never moved


def test_to_moves_them_and_the_state_dict_round_trips():
    model = Scales()
    model.to(dt.float32)
    assert {p.dtype for p in model.parameters()} == {np.dtype("float32")}
    assert model.plain[0].dtype == np.float64                            # left behind
    other = Scales().to(dt.float32)
    for p in other.parameters():
        p.set_value(np.full(p.shape, 7.0))
    model.load_state_dict(other.state_dict())
    assert all(np.array_equal(p.numpy(), np.full(p.shape, 7.0)) for p in model.parameters())


def test_list_indexing_setting_slicing_and_extending():
    plist = nn.ParameterList([dt.zeros(1), dt.zeros(2), dt.zeros(3)])
    assert len(plist) == 3 and plist[-1].shape == (3,)
    first = plist[0]
    plist[0] = dt.ones(5)
    assert plist[0] is not first and plist[0].shape == (5,)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]   # kept its place
    part = plist[1:]
    assert isinstance(part, nn.ParameterList) and part[0] is plist[1]
    plist += [dt.zeros(4)]
    plist.append(dt.zeros(6)).extend([dt.zeros(7)])
    assert [p.shape for p in plist][3:] == [(4,), (6,), (7,)]


def test_list_errors_name_the_problem_and_change_nothing():
    plist = nn.ParameterList([dt.zeros(1)])
    with pytest.raises(IndexError, match="index 1 is out of range: it holds 1"):
        plist[1]
    with pytest.raises(TypeError, match="use nn.ParameterDict"):
        plist["w"]
    with pytest.raises(TypeError, match="item 2 is a Linear.*nn.ModuleList"):
        plist.extend([dt.ones(1), nn.Linear(1, 1)])
    with pytest.raises(TypeError, match="item 1 is a NoneType"):
        plist.append(None)
    with pytest.raises(TypeError, match="got one Tensor; to add a single one use append"):
        plist.extend(dt.ones(3))
    with pytest.raises(TypeError, match="a Parameter must hold floating-point values"):
        plist.append(np.arange(3))
    assert len(plist) == 1
    with pytest.raises(RuntimeError, match="not called"):
        plist(dt.ones(1))


def test_dict_keeps_insertion_order_except_for_a_plain_dict_which_is_sorted():
    pairs = [("b", dt.ones(1)), ("a", dt.ones(2))]
    assert list(nn.ParameterDict(pairs)) == ["b", "a"]
    assert list(nn.ParameterDict(OrderedDict(pairs))) == ["b", "a"]
    assert list(nn.ParameterDict(dict(pairs))) == ["a", "b"]
    pdict = nn.ParameterDict(pairs)
    pdict["c"] = dt.ones(3)
    assert list(pdict.keys()) == ["b", "a", "c"]
    assert [p.shape for p in pdict.values()] == [(1,), (2,), (3,)]
    assert [k for k, _ in pdict.items()] == ["b", "a", "c"]


def test_dict_access_errors_and_removal():
    pdict = nn.ParameterDict({"w": dt.ones(2)})
    with pytest.raises(KeyError, match="no parameter 'v'; it has: w"):
        pdict["v"]
    with pytest.raises(AttributeError):              # what PyTorch raises for a missing key
        pdict["v"]
    assert pdict.get("v") is None and "w" in pdict and "v" not in pdict
    for key, error in [(3, TypeError), ("a.b", KeyError), ("", KeyError), ("keys", KeyError)]:
        with pytest.raises(error):
            pdict[key] = dt.ones(1)
    with pytest.raises(TypeError, match=r"ParameterDict\['x'\] is a str"):
        pdict.update({"x": "oops", "a": dt.ones(1)})
    assert list(pdict) == ["w"]                       # the good entry was not added either
    w = pdict.pop("w")
    assert w.shape == (2,) and len(pdict) == 0 and list(pdict.parameters()) == []
    with pytest.raises(KeyError):
        del pdict["w"]
    with pytest.raises(ValueError, match="element 0 should be a"):
        nn.ParameterDict([("a", dt.ones(1), "extra")])
