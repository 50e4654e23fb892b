"""Bad input to nn: refused, named, nothing changed.

Each case goes through ``refused`` (tests/bad_input.py): the exception type, the words the
message must hold, and the state (a model after a backward) that must be bit for bit what it
was.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn
from dltutor.errors import MessageKeyError
from dltutor.nn import StateDictError

from bad_input import refused


# --- modules ------------------------------------------------------------------------------------
def net_with_grads():
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    net(dt.randn(4, 2)).sum().backward()
    return net


def corrupted(key, value):
    def state(net):
        saved = {k: v.numpy().copy() + 1 for k, v in net.state_dict().items()}
        saved[key] = value
        return saved
    return state


LOADS = [
    ("strings under a later key", corrupted("2.weight", np.array([["a", "b", "c"]])),
     ["2.weight", "not numbers"]),
    ("None", corrupted("2.bias", None), ["2.bias", "NoneType"]),
    ("a list", corrupted("0.bias", [1.0, 2.0, 3.0]), ["0.bias", "list"]),
    ("complex values", corrupted("0.weight", np.zeros((3, 2), np.complex64)),
     ["0.weight", "complex"]),
    ("objects", corrupted("1.running_mean", np.array([None] * 3, dtype=object)),
     ["1.running_mean", "object"]),
    ("a wrong shape", corrupted("2.weight", np.zeros((2, 3), np.float32)),
     ["2.weight", "(1, 3)", "(2, 3)"]),
    ("a scalar for a vector", corrupted("1.bias", np.float32(1.0)), ["1.bias"]),
    # issue 46: no silent lossy cast (PyTorch's copy_ makes these inf, -2**63, 2, ...)
    ("1e300 into a float32 weight", corrupted("2.weight", np.array([[0.5, 1e300, 0.5]])),
     ["2.weight", "1e+300", "float32", "inf"]),
    ("NaN into num_batches_tracked", corrupted("1.num_batches_tracked", np.array(np.nan)),
     ["1.num_batches_tracked", "nan", "int64"]),
    ("inf into num_batches_tracked", corrupted("1.num_batches_tracked", np.array(np.inf)),
     ["1.num_batches_tracked", "inf", "int64"]),
    ("2.5 into num_batches_tracked", corrupted("1.num_batches_tracked", np.array(2.5)),
     ["1.num_batches_tracked", "2.5", "fraction"]),
    ("2**63 into num_batches_tracked", corrupted("1.num_batches_tracked", np.array(2.0 ** 63)),
     ["1.num_batches_tracked", "9223372036854775807"]),
    ("uint64 2**64-1 into num_batches_tracked",
     corrupted("1.num_batches_tracked", np.array(2**64 - 1, dtype=np.uint64)),
     ["1.num_batches_tracked", "18446744073709551615"]),
]


@pytest.mark.parametrize("label, make_state, names", LOADS, ids=[c[0] for c in LOADS])
def test_load_state_dict_checks_every_value_before_copying_any(label, make_state, names):
    net = net_with_grads()
    saved = make_state(net)
    refused(lambda: net.load_state_dict(saved), StateDictError, "nothing was changed", *names,
            state=[net])


def register(action):
    def run(net):
        lin = net[0]
        action(lin)
    return run


COLLISIONS = [
    ("buffer over a parameter", lambda m: m.register_buffer("weight", dt.zeros(3, 2)),
     MessageKeyError, ["'weight'", "already exists", "parameter"]),
    ("module over a parameter", lambda m: m.add_module("bias", nn.Linear(1, 1)),
     MessageKeyError, ["'bias'", "already exists"]),
    ("parameter over a plain attribute", lambda m: m.register_parameter(
        "in_features", nn.Parameter([1.0])), MessageKeyError, ["'in_features'", "already exists"]),
    ("a method's name", lambda m: m.register_buffer("forward", dt.zeros(1)), MessageKeyError,
     ["'forward'", "hide"]),
    ("a dotted name", lambda m: m.register_parameter("a.b", nn.Parameter([1.0])),
     MessageKeyError, ["'a.b'"]),
    ("an empty name", lambda m: m.add_module("", nn.ReLU()), MessageKeyError, ["''"]),
    ("a name that is not a string", lambda m: m.register_buffer(3, dt.zeros(1)), TypeError,
     ["buffer name", "int"]),
    ("a buffer that is not a tensor", lambda m: m.register_buffer("b2", [1.0]), TypeError,
     ["'b2'", "list"]),
    ("a parameter that is a tensor", lambda m: m.register_parameter("p2", dt.zeros(1)),
     TypeError, ["'p2'", "Parameter"]),
]


@pytest.mark.parametrize("label, action, error, names", COLLISIONS, ids=[c[0] for c in COLLISIONS])
def test_registering_never_replaces_something_else(label, action, error, names):
    net = net_with_grads()
    refused(lambda: action(net[0]), error, *names, state=[net])


INPUTS = [
    ("a NumPy array to Linear", lambda net: net[0](np.ones((1, 2), np.float32)), TypeError,
     ["Linear", "numpy.ndarray", "dt.tensor"]),
    ("a list to Linear", lambda net: net[0]([[1.0, 2.0]]), TypeError, ["Linear", "list"]),
    ("ints to Linear", lambda net: net[0](dt.tensor([[1, 2]])), TypeError,
     ["Linear", "int64", ".float()"]),
    ("bools to Linear", lambda net: net[0](dt.tensor([[True, False]])), TypeError,
     ["Linear", "bool", ".float()"]),
    ("the wrong width to Linear", lambda net: net[0](dt.ones(4, 5)), ValueError,
     ["Linear(in_features=2)", "(4, 5)"]),
    ("ints to BatchNorm1d", lambda net: net[1](dt.tensor([[1, 2, 3], [4, 5, 6]])), TypeError,
     ["BatchNorm1d", ".float()"]),
    ("a batch of one to BatchNorm1d in training", lambda net: net[1](dt.ones(1, 3)), ValueError,
     ["batch_norm", "more than one value"]),
    ("the wrong channels to BatchNorm1d", lambda net: net[1](dt.ones(4, 5)), ValueError,
     ["BatchNorm1d(3)", "(4, 5)"]),
    ("ints to Conv2d", lambda net: nn.Conv2d(1, 1, 3)(dt.zeros(1, 1, 5, 5, dtype=dt.int64)),
     TypeError, ["Conv2d", ".float()"]),
    ("a name as an index", lambda net: net["a"], TypeError, ["Sequential", "'a'"]),
    ("an index past the end", lambda net: net[7], IndexError, ["Sequential", "7", "3"]),
    ("a float index", lambda net: net[1.0], TypeError, ["Sequential", "1.0"]),
]


@pytest.mark.parametrize("label, call, error, names", INPUTS, ids=[c[0] for c in INPUTS])
def test_modules_refuse_inputs_they_cannot_take(label, call, error, names):
    net = net_with_grads()
    refused(lambda: call(net), error, *names, state=[net])


BATCHNORM_ARGS = [
    ("num_features 0", dict(num_features=0), ValueError, ["num_features"]),
    ("num_features 2.0", dict(num_features=2.0), TypeError, ["num_features", "2.0"]),
    ("eps 0", dict(num_features=2, eps=0.0), ValueError, ["eps"]),
    ("eps NaN", dict(num_features=2, eps=float("nan")), ValueError, ["eps", "nan"]),
    ("momentum 1.5", dict(num_features=2, momentum=1.5), ValueError, ["momentum", "1.5"]),
    ("momentum -0.1", dict(num_features=2, momentum=-0.1), ValueError, ["momentum"]),
    ("use_global_stats 'yes'", dict(num_features=2, use_global_stats="yes"), TypeError,
     ["use_global_stats"]),
]


@pytest.mark.parametrize("label, kwargs, error, names", BATCHNORM_ARGS,
                         ids=[c[0] for c in BATCHNORM_ARGS])
def test_batchnorm_checks_its_arguments(label, kwargs, error, names):
    refused(lambda: nn.BatchNorm1d(**kwargs), error, "BatchNorm1d", *names)


def test_batchnorm_momentum_none_is_the_average_of_every_batch():
    """PyTorch's cumulative moving average: with momentum=None the running mean after k
    batches is the plain mean of their k batch means."""
    dt.manual_seed(0)
    norm = nn.BatchNorm1d(2, momentum=None)
    batches = [dt.randn(8, 2) for _ in range(3)]
    for batch in batches:
        norm(batch)
    expected = np.mean([b.numpy().mean(axis=0) for b in batches], axis=0)
    np.testing.assert_allclose(norm.running_mean.numpy(), expected, rtol=1e-5)
    assert norm.num_batches_tracked.item() == 3


def test_module_list_extend_adds_nothing_when_one_item_is_bad():
    blocks = nn.ModuleList([nn.Linear(2, 2)])
    refused(lambda: blocks.extend([nn.ReLU(), "relu"]), TypeError, "ModuleList.extend", "item 1",
            state=[blocks])
    refused(lambda: blocks.insert(0, lambda x: x), TypeError, "ModuleList.insert",
            state=[blocks])


VALUES = [
    ("a string", "abc", TypeError, ["strings"]),
    ("ragged lists", [[1.0], [1.0, 2.0]], ValueError, ["ragged"]),
    ("complex numbers", [[1 + 2j] * 2] * 3, TypeError, ["complex"]),
    ("None", None, TypeError, ["None"]),
    ("the wrong shape", dt.ones(3), ValueError, ["(3, 2)", "(3,)"]),
]


@pytest.mark.parametrize("label, value, error, names", VALUES, ids=[c[0] for c in VALUES])
@pytest.mark.parametrize("how", ["set_value", "assign_"])
def test_new_values_for_a_parameter_are_checked_before_they_are_written(label, value, error,
                                                                        names, how):
    net = net_with_grads()
    weight = net[0].weight
    call = (lambda: weight.set_value(value)) if how == "set_value" else (
        lambda: nn.init.assign_(weight, value))
    refused(call, error, how, *names, state=[net])


CONSTRUCTORS = [
    ("Conv2d kernel 0", lambda: nn.Conv2d(1, 1, 0), ValueError, ["Conv2d", "kernel_size"]),
    ("Conv2d stride 0", lambda: nn.Conv2d(1, 1, 3, stride=0), ValueError, ["Conv2d", "stride"]),
    ("Conv2d padding -1", lambda: nn.Conv2d(1, 1, 3, padding=-1), ValueError,
     ["Conv2d", "padding", "-1"]),
    ("Conv2d kernel 2.5", lambda: nn.Conv2d(1, 1, 2.5), ValueError, ["Conv2d", "2.5"]),
    ("Conv2d kernel of three", lambda: nn.Conv2d(1, 1, (3, 3, 3)), ValueError,
     ["Conv2d", "kernel_size"]),
    ("max_pool2d kernel 0", lambda: nn.MaxPool2d(0)(dt.ones(1, 1, 4, 4)), ValueError,
     ["max_pool2d", "kernel_size"]),
    ("Dropout p 1.5", lambda: nn.Dropout(1.5), ValueError, ["Dropout", "1.5"]),
    ("manual_seed -1", lambda: dt.manual_seed(-1), ValueError, ["manual_seed", "-1"]),
    ("manual_seed 'x'", lambda: dt.manual_seed("x"), TypeError, ["manual_seed", "'x'"]),
    ("regularizer a number", lambda: nn.Parameter([1.0], regularizer=0.1), TypeError,
     ["regularizer", "float"]),
    ("lr_mult NaN", lambda: nn.Parameter([1.0], lr_mult=float("nan")), ValueError,
     ["lr_mult", "nan"]),
    ("lr_mult negative", lambda: nn.Parameter([1.0], lr_mult=-1), ValueError, ["lr_mult", "-1"]),
]


@pytest.mark.parametrize("label, call, error, names", CONSTRUCTORS,
                         ids=[c[0] for c in CONSTRUCTORS])
def test_layers_and_parameters_check_their_arguments(label, call, error, names):
    refused(call, error, *names)


def test_a_negative_embedding_index_is_refused_not_wrapped():
    dt.manual_seed(0)
    table = nn.Embedding(5, 3)
    refused(lambda: table(dt.tensor([0, -1])), IndexError, "embedding", "-1", "0..4",
            state=[table])



def small_buffers():
    """A module with one buffer of each kind a cast can damage."""
    module = nn.Module()
    module.register_buffer("flags", dt.tensor(np.array([True, False])))
    module.register_buffer("counts", dt.tensor(np.array([1, 2], dtype=np.uint8)))
    module.register_buffer("ids", dt.tensor(np.array([1, 2], dtype=np.int32)))
    module.register_buffer("half", dt.tensor(np.array([1, 2], dtype=np.float16)))
    return module


CASTS = [
    ("2 into a bool", "flags", np.array([2, 0]), ["'flags'", "2", "bool"]),
    ("0.5 into a bool", "flags", np.array([0.5, 1.0]), ["'flags'", "0.5", "bool"]),
    ("NaN into a bool", "flags", np.array([np.nan, 1.0]), ["'flags'", "nan", "bool"]),
    ("-1 into a uint8", "counts", np.array([-1, 3]), ["'counts'", "-1", "uint8", "0 to 255"]),
    ("300 into a uint8", "counts", np.array([3, 300]), ["'counts'", "300", "uint8"]),
    ("-0.5 into a uint8", "counts", np.array([-0.5, 3.0]), ["'counts'", "-0.5", "fraction"]),
    ("2**40 into an int32", "ids", np.array([2**40, 1]), ["'ids'", "1099511627776", "int32"]),
    ("70000 into a float16", "half", np.array([70000, 1]), ["'half'", "70000", "float16", "inf"]),
    ("1e10 float32 into a float16", "half", np.array([1e10, 1], np.float32),
     ["'half'", "float16", "inf"]),
]


@pytest.mark.parametrize("label, key, value, names", CASTS, ids=[c[0] for c in CASTS])
def test_a_value_the_buffer_cannot_hold_is_refused_naming_the_key(label, key, value, names):
    module = small_buffers()
    state = {k: v.numpy().copy() for k, v in module.state_dict().items()}
    state = {k: (v if v.dtype == bool else v + 1) for k, v in state.items()}
    state[key] = value
    refused(lambda: module.load_state_dict(state), StateDictError, "nothing was changed",
            "cannot hold", *names, state=[module])
    refused(lambda: module.set_state_dict(state), StateDictError, *names, state=[module])


def test_a_lazy_layer_refuses_1e300_before_it_takes_the_shape():
    lazy = nn.LazyLinear(2)
    state = {"weight": np.full((2, 3), 1e300), "bias": np.zeros(2)}
    refused(lambda: lazy.load_state_dict(state), StateDictError, "'weight'", "float32")
    assert nn.parameter.is_uninitialized(lazy.weight) and nn.parameter.is_uninitialized(lazy.bias)


@pytest.mark.parametrize("value", [[1e300, 1.0], np.array([1e300, 1.0]), np.array([1.0, 1e39])])
def test_set_value_refuses_a_value_the_parameters_dtype_cannot_hold(value):
    """1e300 (or 1e39) into a float32 parameter would become inf: refused as a load refuses it,
    by the same check (dtypes.cast_problem)."""
    p = nn.Parameter([1.0, 2.0])
    refused(lambda: p.set_value(value), ValueError, "set_value", "float32", "inf", state=[p])
