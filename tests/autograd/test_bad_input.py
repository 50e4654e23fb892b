"""Bad input to the engine (tensors, ops, in-place writes, gradient hooks): refused, named,
nothing changed (nn's is in tests/nn/test_bad_input.py).

Each case goes through ``refused`` (tests/bad_input.py): the exception type, the words the
message must hold, and the state (tensors with gradients) that must
be bit for bit what it was.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dltutor as dt

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
    ("linear with a bias that would enlarge the output",
     lambda t: dt.linear(t, dt.ones(4, 3), dt.ones(5, 2, 4)), ValueError,
     ["linear", "(5, 2, 4)", "(2, 4)", "(4,)"]),
    ("linear with a bias of the input's width",
     lambda t: dt.linear(t, dt.ones(4, 3), dt.ones(3)), ValueError, ["linear", "(3,)", "(4,)"]),
    ("where with shapes that do not broadcast",
     lambda t: dt.where(dt.tensor([True, False]), t, dt.zeros(2, 3)), ValueError,
     ["where", "(2,)", "(2, 3)"]),
    ("add of two numbers, no tensor", lambda t: dt.add(1, 2.5), TypeError,
     ["add", "Tensor", "int", "float"]),
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

