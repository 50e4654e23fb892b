"""Bad input to the engine and to nn: refused, named, nothing changed.

Each case goes through ``refused`` (tests/bad_input.py): the exception type, the words the
message must hold, and the state (tensors with gradients, a model after a backward) that must
be bit for bit what it was.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dltutor as dt
from dltutor import nn
from dltutor.errors import MessageKeyError
from dltutor.nn import StateDictError

from bad_input import refused


def t23():
    dt.manual_seed(0)
    return dt.randn(2, 3)


# --- making tensors -----------------------------------------------------------------------------
CREATION = [
    ("a string", "abc", TypeError, ["dt.tensor", "strings"]),
    ("bytes", b"ab", TypeError, ["dt.tensor", "bytes"]),
    ("None", None, TypeError, ["dt.tensor", "None"]),
    ("an object", [object()], TypeError, ["dt.tensor", "objects"]),
    ("complex numbers", [1 + 2j], TypeError, ["dt.tensor", "complex"]),
    ("a complex array", np.zeros(2, np.complex64), TypeError, ["dt.tensor", "complex"]),
    ("a string array", np.array(["1", "2"]), TypeError, ["dt.tensor", "strings"]),
    ("ragged lists", [[1.0], [1.0, 2.0]], ValueError, ["dt.tensor", "ragged"]),
    ("dates", np.array(["2026-11-23"], dtype="datetime64[D]"), TypeError, ["dt.tensor", "dates"]),
]


@pytest.mark.parametrize("label, data, error, names", CREATION, ids=[c[0] for c in CREATION])
def test_a_tensor_holds_real_numbers_only(label, data, error, names):
    refused(lambda: dt.tensor(data), error, *names)


# --- operands and axes --------------------------------------------------------------------------
OPS = [
    ("tensor + string", lambda t: t + "x", TypeError, ["add", "str"]),
    ("string - tensor", lambda t: "x" - t, TypeError, ["sub", "str"]),
    ("tensor * None", lambda t: t * None, TypeError, ["mul", "None"]),
    ("tensor / complex", lambda t: t / 1j, TypeError, ["div", "complex"]),
    ("exp of a string", lambda t: dt.exp("a"), TypeError, ["exp", "str"]),
    ("tanh of a list", lambda t: dt.tanh([1.0]), TypeError, ["tanh", "list"]),
    ("matmul with None", lambda t: dt.matmul(t, None), TypeError, ["matmul", "None"]),
    ("matmul of mismatched shapes", lambda t: t @ dt.ones(2, 2), ValueError,
     ["matmul", "(2, 3)", "(2, 2)"]),
    ("add of shapes that do not broadcast", lambda t: t + dt.ones(4), ValueError,
     ["add", "(2, 3)", "(4,)"]),
    ("transpose with dim 5", lambda t: t.transpose(0, 5), IndexError, ["transpose", "5"]),
    ("flatten from dim 5", lambda t: t.flatten(5), IndexError, ["flatten", "5"]),
    ("sum over axis 2", lambda t: t.sum(axis=2), IndexError, ["sum", "2"]),
    ("mean over axis -3", lambda t: t.mean(axis=-3), IndexError, ["mean", "-3"]),
    ("max over axis 9", lambda t: t.max(axis=9), IndexError, ["max", "9"]),
    ("argmax over axis 7", lambda t: t.argmax(axis=7), IndexError, ["argmax", "7"]),
    ("argmin over axis -9", lambda t: dt.argmin(t, axis=-9), IndexError, ["argmin", "-9"]),
    ("softmax along dim 3", lambda t: dt.softmax(t, axis=3), IndexError, ["softmax", "3"]),
    ("log_softmax along dim -4", lambda t: dt.log_softmax(t, axis=-4), IndexError,
     ["log_softmax", "-4"]),
    ("unsqueeze at 4", lambda t: t.unsqueeze(4), IndexError, ["unsqueeze", "4"]),
    ("squeeze dim 3", lambda t: t.squeeze(3), IndexError, ["squeeze", "3"]),
    ("stack along 4", lambda t: dt.stack([t, t], axis=4), IndexError, ["stack", "4"]),
    ("cat along 2", lambda t: dt.cat([t, t], axis=2), IndexError, ["concat", "2"]),
    ("mean over an axis twice", lambda t: t.mean(axis=(0, 0)), ValueError, ["mean", "twice"]),
    ("sum over -1 and 1 (the same)", lambda t: t.sum(axis=(-1, 1)), ValueError, ["sum", "twice"]),
    ("permute with a repeat", lambda t: t.permute(0, 0), ValueError, ["permute"]),
    ("sum over a string axis", lambda t: t.sum(axis="x"), TypeError, ["sum", "'x'"]),
    ("sum over a float axis", lambda t: t.sum(axis=1.0), TypeError, ["sum", "1.0"]),
    ("sum over axis True", lambda t: t.sum(axis=True), TypeError, ["sum", "True"]),
    ("transpose with a float dim", lambda t: t.transpose(0, 1.5), TypeError, ["transpose", "1.5"]),
    ("reshape to a size that does not fit", lambda t: t.reshape(4, 4), ValueError,
     ["reshape", "(2, 3)", "(4, 4)"]),
    ("where with a float condition", lambda t: dt.where(t, t, 0.0), TypeError,
     ["where", "bool", "float32"]),
    ("where with an int condition", lambda t: dt.where(dt.tensor([1, 0, 1]), t, t), TypeError,
     ["where", "bool", "int64"]),
    ("where with shapes that do not broadcast",
     lambda t: dt.where(dt.tensor([True, False]), t, dt.zeros(2, 3)), ValueError,
     ["where", "(2,)", "(2, 3)"]),
]


@pytest.mark.parametrize("label, call, error, names", OPS, ids=[c[0] for c in OPS])
def test_ops_name_themselves_and_change_nothing(label, call, error, names):
    t = t23()
    refused(lambda: call(t), error, *names, state=[t])


def test_numpy_integer_axes_are_still_axes():
    t = t23()
    np.testing.assert_array_equal(t.sum(axis=np.int64(1)).numpy(), t.sum(axis=1).numpy())


@settings(max_examples=60, deadline=None)
@given(ndim=st.integers(1, 4), axis=st.integers(-12, 12))
def test_any_axis_outside_the_dimensions_is_refused_never_wrapped(ndim, axis):
    """Property: an axis outside -ndim..ndim-1 raises IndexError naming the op; one inside
    gives what NumPy gives for it."""
    t = dt.ones(*([2] * ndim))
    if -ndim <= axis < ndim:
        assert t.sum(axis=axis).shape == np.ones([2] * ndim).sum(axis=axis).shape
    else:
        refused(lambda: t.sum(axis=axis), IndexError, "sum", str(axis), state=[t])
        refused(lambda: dt.softmax(t, axis=axis), IndexError, "softmax", state=[t])


# --- writing in place ---------------------------------------------------------------------------
IN_PLACE = [
    ("+= a shape that does not fit", lambda u: u.__iadd__(dt.ones(4)), ValueError,
     ["+=", "(4,)", "(2, 3)"]),
    ("*= a string", lambda u: u.__imul__("2"), TypeError, ["*=", "str"]),
    ("/= None", lambda u: u.__itruediv__(None), TypeError, ["/=", "None"]),
    ("setitem of a wider row", lambda u: u.__setitem__(0, dt.ones(5)), ValueError,
     ["t[index] = value", "(5,)", "(3,)"]),
    ("setitem of a string", lambda u: u.__setitem__(0, "1.5"), TypeError,
     ["t[index] = value", "str"]),
    ("setitem of objects", lambda u: u.__setitem__(0, [object()] * 3), TypeError,
     ["t[index] = value"]),
]


@pytest.mark.parametrize("label, call, error, names", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_writes_check_before_they_write(label, call, error, names):
    u = t23()
    refused(lambda: call(u), error, *names, state=[u])


def test_float_into_an_int_tensor_in_place_is_refused():
    counts = dt.tensor([1, 2, 3])
    refused(lambda: counts.__iadd__(dt.tensor([0.5, 0.5, 0.5])), TypeError, "+=", ".float()",
            state=[counts])


# --- gradient hooks -----------------------------------------------------------------------------
def leaves():
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    b = dt.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward()                    # both have a gradient already
    return a, b


HOOKS = [
    ("raises", lambda g: 1 / 0, ZeroDivisionError, ["division"]),
    ("returns the wrong shape", lambda g: dt.ones(3), RuntimeError, ["returned shape (3,)"]),
    ("returns a string", lambda g: "x", TypeError, ["returned a str"]),
    ("returns a list", lambda g: [1.0, 2.0], TypeError, ["returned a list"]),
]


@pytest.mark.parametrize("label, hook, error, names", HOOKS, ids=[c[0] for c in HOOKS])
@pytest.mark.parametrize("on", ["a", "b"])
def test_a_failing_hook_leaves_every_grad_as_it_was(label, hook, error, names, on):
    """Whichever leaf the bad hook sits on, no .grad is written: not the other leaf's either."""
    a, b = leaves()
    (a if on == "a" else b).register_hook(hook)
    refused(lambda: (a * b).sum().backward(), error, *names, state=[a, b])


def test_a_failing_hook_leaves_a_retained_grad_as_it_was():
    a, b = leaves()
    hidden = a * 2
    hidden.retain_grad()
    (hidden * b).sum().backward(retain_graph=True)
    b.register_hook(lambda g: 1 / 0)
    refused(lambda: (hidden * b).sum().backward(), ZeroDivisionError, state=[a, b, hidden])


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).filter(lambda s: s != [2]))
def test_any_wrongly_shaped_hook_result_writes_no_grad(shape):
    a, b = leaves()
    b.register_hook(lambda g: dt.ones(*shape))
    refused(lambda: (a * b).sum().backward(), RuntimeError, "returned shape", state=[a, b])


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
