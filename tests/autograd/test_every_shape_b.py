"""Every op on every shape, continued: the bugs the sweep found, each as its own test; every
public op is in the sweep's table; the in-place methods (no gradient) on every shape; and the
refusals the sweep expects, with their messages.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from bad_input import refused
from dltutor.autograd import ops
from dltutor.nn import functional as F
from tests.autograd.every_shape_table import OPS
from tests.autograd.test_every_shape import non_contiguous

DTYPES = ("float32", "float64", "float16")
SHAPES = {"0d": (), "empty": (0, 3), "one": (1,), "noncontig": (3, 2)}


def test_sigmoid_of_a_0d_tensor():
    """Issue 46: "TypeError: return arrays must be of ArrayType" (an in-place out= on the
    NumPy scalar that -x of a 0-d array is)."""
    x = dt.tensor(0.5, requires_grad=True)
    y = dt.sigmoid(x)
    assert y.shape == () and abs(y.item() - 1 / (1 + np.exp(-0.5))) < 1e-7
    y.backward()
    assert abs(x.grad.item() - y.item() * (1 - y.item())) < 1e-7


def test_bce_with_logits_backward_of_a_0d_logit():
    """Binary cross-entropy's backward computes the sigmoid the same way."""
    x = dt.tensor(0.0, requires_grad=True)
    F.binary_cross_entropy_with_logits(x, dt.tensor(1.0)).backward()
    assert x.grad.item() == -0.5


def test_the_gradient_of_a_0d_leaf_is_an_array_that_can_be_changed_in_place():
    """NumPy computes a 0-d gradient as a scalar: ``x.grad.zero_()`` raised, and
    ``x.grad += 1`` changed nothing (a scalar cannot change in place)."""
    x = dt.tensor(2.0, requires_grad=True)
    (x * 3).backward()
    g = x.grad
    g += 1
    assert x.grad.item() == 4.0
    x.grad.zero_()
    assert x.grad.item() == 0.0
    (x * x).backward()                        # added to the existing 0-d gradient
    assert isinstance(x.grad.data, np.ndarray) and x.grad.item() == 4.0


def test_a_hook_on_a_0d_tensor_receives_an_array():
    x = dt.tensor(2.0, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(type(g.data)))
    dt.exp(x).backward()
    assert seen == [np.ndarray]


@pytest.mark.parametrize("make", [lambda x: x > 0, lambda x: x.argmax(), lambda x: x.max(0)[1]],
                         ids=["compare", "argmax", "max_indices"])
def test_integer_and_bool_results_of_a_0d_tensor_are_arrays(make):
    out = make(dt.tensor(1.5))
    assert isinstance(out.data, np.ndarray) and out.shape == ()


def test_reductions_along_dim_0_of_a_0d_tensor():
    """PyTorch takes dim 0 or -1 of a 0-d tensor (tests/frameworks/test_every_shape_torch.py);
    it raised NumPy's AxisError."""
    x = dt.tensor(1.5, requires_grad=True)
    values, indices = x.max(dim=0)
    assert (values.item(), indices.item()) == (1.5, 0)
    assert x.sum(dim=-1).item() == 1.5 and x.mean(0, keepdim=True).shape == ()
    assert x.squeeze(0).shape == () and x.amin(dim=0).item() == 1.5


def test_max_along_a_non_empty_dimension_of_an_empty_tensor():
    """(0, 3) reduced along its 3 is an empty result, as in PyTorch; along its 0 refused."""
    x = dt.zeros(0, 3, requires_grad=True)
    assert x.amax(dim=-1).shape == (0,) and x.max(dim=1).indices.shape == (0,)
    refused(lambda: x.amax(dim=0), ValueError, "max", "(0, 3)", state=[x])
    refused(lambda: x.max(dim=0), ValueError, "max", "dimension 0", state=[x])


def test_the_mean_of_nothing_is_nan_without_a_warning():
    with np.testing.assert_no_warnings():
        assert np.isnan(dt.zeros(0, 3).mean().item())
        assert np.isnan(dt.zeros(0).var().item())
        assert np.isnan(F.mse_loss(dt.zeros(0), dt.zeros(0)).item())
        assert np.isnan(F.cross_entropy(dt.zeros(0, 3), dt.zeros(0, dtype=dt.int64)).item())


def test_layer_norm_of_float16_is_computed_in_float32():
    """In float16 the gradient was 35% off, 0 for the second row (PyTorch computes the
    forward in float32: tests/frameworks/test_every_shape_torch.py)."""
    values = np.array([[-0.1753, -0.2267], [-0.3845, 0.3188]])
    grads = []
    for dtype in (dt.float16, dt.float64):
        x = dt.tensor(values, dtype=dtype, requires_grad=True)
        y = F.layer_norm(x, (2,))
        y.backward(dt.tensor([[1.0, -0.5], [0.3, 0.2]], dtype=dtype))
        assert (y.dtype, x.grad.dtype) == (dtype, dtype)
        grads.append(x.grad.numpy().astype(np.float64))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-2, atol=1e-5)


@pytest.mark.parametrize("call,error,names", [
    (lambda: dt.cat([dt.tensor(1.0), dt.tensor(2.0)]), ValueError, ("concat", "0-d", "stack")),
    (lambda: F.linear(dt.tensor(1.0), dt.ones(2, 3)), ValueError, ("linear", "no features")),
    (lambda: F.binary_cross_entropy_with_logits(dt.zeros(2, 1), dt.zeros(2)), ValueError,
     ("binary_cross_entropy_with_logits", "(2,)", "(2, 1)")),
    (lambda: dt.matmul(dt.tensor(1.0), dt.tensor(2.0)), ValueError, ("matmul", "1 dimension")),
    (lambda: dt.zeros(0, 3).max(), ValueError, ("max", "(0, 3)")),
    (lambda: dt.norm(dt.zeros(0), p=float("inf")), ValueError, ("norm", "empty")),
], ids=["concat_0d", "linear_0d", "bce_shapes", "matmul_0d", "max_empty", "inf_norm_empty"])
def test_edge_shapes_pytorch_refuses_are_refused_with_names(call, error, names):
    refused(call, error, *names)


# -- every public op is in the table --------------------------------------------------------
# Public names that are not differentiable ops on a tensor's values, and why.
NOT_OPS = {
    # bookkeeping, reading values, devices, gradients
    "T": "in the table as 'T'", "backward": "the engine", "zero_grad": "sets .grad = None",
    "requires_grad_": "a flag", "retain_grad": "a flag", "register_hook": "see the hook test",
    "register_post_accumulate_grad_hook": "a leaf's hook (test_engine.py)",
    "detach": "no graph", "numpy": "reading", "item": "reading", "tolist": "reading",
    "numel": "reading", "dim": "reading", "all": "reading", "any": "reading",
    "cpu": "one device here", "cuda": "needs a GPU", "to_backend": "one device here",
    "long": "to int64: no gradient", "as_tensor": "a constant", "index_arrays": "a helper",
    "check_reduction": "a helper", "as_pair": "a helper", "compare": "the six comparisons",
    # in place: no gradient, on every shape in test_in_place_methods below
    "fill_": "in place", "zero_": "in place", "copy_": "in place", "normal_": "in place",
    "uniform_": "in place", "__iadd__": "in place", "__isub__": "in place",
    "__imul__": "in place", "__itruediv__": "in place", "__setitem__": "in place",
    "__pos__": "returns the tensor itself",
}
OPERATORS = {"__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__matmul__", "__neg__",
             "__abs__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__",
             "__rmatmul__", "__getitem__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
             "__ne__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__setitem__",
             "__pos__"}


def public_ops() -> set[str]:
    functions = {n for n in dir(ops) if n.islower() and not n.startswith("_")
                 and callable(getattr(ops, n)) and not isinstance(getattr(ops, n), type)}
    methods = {n for n, v in vars(dt.Tensor).items()
               if (not n.startswith("_") and (callable(v) or n == "T")) or n in OPERATORS}
    return functions | methods | set(F.__all__)


def test_every_public_op_is_in_the_table():
    covered = {op.name for op in OPS} | {n for op in OPS for n in op.covers}
    covered |= {name.split("_")[0] for name in covered}      # "sum_dim0" runs sum
    missing = public_ops() - covered - set(NOT_OPS)
    assert not missing, f"add a row to every_shape_table.OPS for {sorted(missing)}"


# -- in-place methods on every shape ---------------------------------------------------------
IN_PLACE = {
    "fill_": (lambda t: t.fill_(2.0), lambda a: np.full_like(a, 2.0)),
    "zero_": (lambda t: t.zero_(), np.zeros_like),
    "copy_": (lambda t: t.copy_(dt.tensor(0.5)), lambda a: np.full_like(a, 0.5)),
    "iadd": (lambda t: t.__iadd__(1.0), lambda a: a + 1.0),
    "isub": (lambda t: t.__isub__(1.0), lambda a: a - 1.0),
    "imul": (lambda t: t.__imul__(3.0), lambda a: a * 3.0),
    "itruediv": (lambda t: t.__itruediv__(2.0), lambda a: a / 2.0),
    "setitem": (lambda t: t.__setitem__(..., 4.0), lambda a: np.full_like(a, 4.0)),
    "normal_": (lambda t: t.normal_(), None),
    "uniform_": (lambda t: t.uniform_(), None),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_methods(name, kind, dtype):
    """The values change where they are (the same array, also a non-contiguous view), and
    the shape and dtype stay."""
    change, expected = IN_PLACE[name]
    a = np.asarray(np.arange(np.prod(SHAPES[kind]), dtype=dtype).reshape(SHAPES[kind]) + 1)
    data = non_contiguous(a.copy()) if kind == "noncontig" else a.copy()
    t = ops.as_tensor(data, dt.tensor(0.0))
    returned = change(t)
    assert returned is (None if name == "setitem" else t)
    assert t.data is data and (t.shape, t.dtype) == (a.shape, a.dtype)
    if expected is not None:
        np.testing.assert_array_equal(t.numpy(), expected(a).astype(dtype))
