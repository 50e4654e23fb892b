"""What PyTorch's ``load_state_dict`` does with values that do not fit a parameter's dtype.

PyTorch copies each value with ``copy_``, which converts without a word: each case below loads
and comes out as another value. dltutor refuses every one of these, naming the key
(dltutor/nn/state_dict.py, ``cast_problem``; tests/nn/test_bad_input.py), and loads what only
rounds, as PyTorch does (the last tests here; tests/nn/test_state_dict_casts.py).
"""
from __future__ import annotations

import math

import pytest
import torch


def loaded(module, key, value):
    """What ``module`` holds under ``key`` after loading ``value`` there."""
    state = module.state_dict()
    state[key] = value
    module.load_state_dict(state)
    return module.state_dict()[key]


def buffers():
    module = torch.nn.Module()
    module.register_buffer("flags", torch.zeros(2, dtype=torch.bool))
    module.register_buffer("counts", torch.zeros(2, dtype=torch.uint8))
    module.register_buffer("ids", torch.zeros(1, dtype=torch.int32))
    module.register_buffer("halves", torch.zeros(1, dtype=torch.float16))
    return module


def test_torch_loads_1e300_into_a_float32_weight_as_inf():
    value = loaded(torch.nn.Linear(1, 1), "bias", torch.tensor([1e300], dtype=torch.float64))
    assert value.dtype == torch.float32 and math.isinf(value.item())


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_torch_loads_nan_or_inf_into_num_batches_tracked_as_the_smallest_int64(bad):
    value = loaded(torch.nn.BatchNorm1d(2), "num_batches_tracked", torch.tensor(bad))
    assert value.item() == -2**63      # x86-64's answer to an undefined conversion


def test_torch_truncates_a_fraction_loaded_into_an_integer():
    assert loaded(torch.nn.BatchNorm1d(2), "num_batches_tracked", torch.tensor(2.7)).item() == 2


def test_torch_wraps_a_negative_or_large_int_loaded_into_a_uint8():
    assert loaded(buffers(), "counts", torch.tensor([-1, 300])).tolist() == [255, 44]


def test_torch_wraps_an_int_too_large_for_an_int32():
    assert loaded(buffers(), "ids", torch.tensor([2**40])).tolist() == [0]


def test_torch_loads_any_nonzero_into_a_bool_as_true():
    assert loaded(buffers(), "flags", torch.tensor([2, 0])).tolist() == [True, False]
    assert loaded(buffers(), "flags", torch.tensor([0.5, 0.0])).tolist() == [True, False]


def test_torch_loads_70000_into_a_float16_as_inf():
    assert math.isinf(loaded(buffers(), "halves", torch.tensor([70000.0])).item())


def test_torch_rounds_float64_into_float32_and_keeps_nan_and_inf():
    """What both PyTorch and dltutor allow: rounding, underflow to 0, NaN and inf as values."""
    value = loaded(torch.nn.Linear(4, 1), "weight",
                   torch.tensor([[0.1, 1e-300, math.nan, -math.inf]], dtype=torch.float64))
    assert value[0, 0].item() == torch.tensor(0.1, dtype=torch.float32).item()
    assert value[0, 1].item() == 0.0 and math.isnan(value[0, 2].item())
    assert value[0, 3].item() == -math.inf
