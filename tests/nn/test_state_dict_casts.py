"""Issue 46, item 3: loading converts to the model's dtypes, rounding but never changing a value.

What is allowed (PyTorch's ``copy_`` does the same) is loaded here; what PyTorch converts
silently into another value (inf, -2**63, a truncated fraction, a wrapped negative) is refused
in tests/nn/test_bad_input.py. tests/frameworks/test_loading_referee.py shows what PyTorch does.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.nn import StateDictError
from dltutor.nn.state_dict import cast_problem


def test_float64_weights_round_into_a_float32_model_as_numpy_rounds_them():
    layer = nn.Linear(2, 1)
    weight = np.array([[0.1, 1 / 3]])
    layer.load_state_dict({"weight": weight, "bias": np.array([3.4028235e38])})
    assert layer.weight.dtype == np.float32
    assert layer.weight.numpy().tobytes() == weight.astype(np.float32).tobytes()
    assert layer.bias.numpy()[0] == np.finfo(np.float32).max    # rounds down, not up to inf


def test_nan_inf_and_underflow_load_into_a_float_as_values():
    layer = nn.Linear(3, 1)
    layer.load_state_dict({"weight": np.array([[np.nan, -np.inf, 1e-300]]),
                           "bias": np.array([np.inf])})
    weight = layer.weight.numpy()
    assert np.isnan(weight[0, 0]) and weight[0, 1] == -np.inf and weight[0, 2] == 0.0
    assert layer.bias.numpy()[0] == np.inf


def test_whole_numbers_load_into_integer_and_bool_buffers():
    bn = nn.BatchNorm1d(2)
    state = bn.state_dict()
    state["num_batches_tracked"] = np.array(7.0)               # a float that is an integer
    bn.load_state_dict(state)
    assert bn.num_batches_tracked.item() == 7 and bn.num_batches_tracked.dtype == np.int64
    module = nn.Module()
    module.register_buffer("flags", dt.tensor(np.array([False, False])))
    module.register_buffer("counts", dt.tensor(np.array([0, 0], dtype=np.uint8)))
    module.load_state_dict({"flags": np.array([1.0, 0.0]), "counts": np.array([True, False])})
    assert module.flags.numpy().tolist() == [True, False]
    assert module.counts.numpy().tolist() == [1, 0]


def test_ints_and_bools_load_into_a_float_weight():
    layer = nn.Linear(2, 1)
    layer.load_state_dict({"weight": np.array([[2**40, -3]]), "bias": np.array([True])})
    assert layer.weight.numpy().tolist() == [[2.0**40, -3.0]] and layer.bias.item() == 1.0


def test_a_refused_load_names_the_key_value_and_dtype_and_says_what_to_do():
    layer = nn.Linear(1, 1)
    with pytest.raises(StateDictError) as info:
        layer.load_state_dict({"weight": np.array([[1e300]]), "bias": np.zeros(1)})
    message = str(info.value)
    assert "'weight': holds 1e+300, which float32 cannot hold (it would become inf)" in message
    assert "model.double()" in message and "nothing was changed" in message


def test_a_float64_checkpoint_goes_into_a_float64_model(tmp_path):
    path = tmp_path / "big.safetensors"
    dt.save({"weight": np.array([[1e300]]), "bias": np.zeros(1)}, path)
    with pytest.raises(StateDictError, match="'weight'"):
        nn.Linear(1, 1).load_state_dict(dt.load(path))
    layer = nn.Linear(1, 1).double()
    layer.load_state_dict(dt.load(path))
    assert layer.weight.item() == 1e300


@pytest.mark.parametrize("values, dtype, fits", [
    (np.array([-2.0**63]), np.int64, True),                   # the smallest int64, exactly
    (np.array([2.0**63]), np.int64, False),                   # one past the largest
    (np.array([255.0, 0.0]), np.uint8, True),
    (np.array([256.0]), np.uint8, False),
    (np.array([-0.0]), np.uint8, True),                       # -0.0 is 0
    (np.array([65504.0]), np.float16, True),                  # float16's largest
    (np.array([65520.0]), np.float16, False),                 # rounds to inf
    (np.array([2**63 - 1], dtype=np.uint64), np.int64, True),
    (np.array([2**63], dtype=np.uint64), np.int64, False),
    (np.zeros((0, 3)), np.int8, True),                        # nothing to convert
    (np.array([np.nan], np.float32), np.float64, True),       # widening keeps everything
])
def test_cast_problem_at_the_edges_of_each_dtype(values, dtype, fits):
    assert (cast_problem(values, dtype) == "") is fits
