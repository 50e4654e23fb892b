"""nn.init: PyTorch's formulas, in place, no graph, seeded, on every backend.

Every expected bound and std is written out here by hand from PyTorch's documentation, never
taken from the library's own helpers.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
import dltutor.nn.init as init
from dltutor import backend as B
from dltutor import nn
from dltutor.autograd import fills
from dltutor.autograd.function import make_tensor

import marked_backend

SHAPE = (500, 400)  # fan_out = 500, fan_in = 400: 200,000 values, sample stats within ~0.5%


def _param(*shape, dtype=None):
    return nn.Parameter(dt.zeros(*shape, dtype=dtype))


def _values(p):
    return B.to_numpy(p.data).astype(np.float64)


def _check_on_backend(p, backend):
    if backend == "marked":
        marked_backend.assert_marked(p.data, "the initialized parameter")


def _assert_uniform(values, bound):
    """Within [-bound, bound] exactly (even after rounding to float32), spread like U(-b, b)."""
    assert values.min() >= -bound and values.max() <= bound
    # Close to the bound at both ends: not a narrower distribution.
    assert values.max() > 0.99 * bound and values.min() < -0.99 * bound
    assert abs(values.mean()) < 0.01 * bound
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.01)


def _assert_normal(values, mean, std):
    assert values.mean() == pytest.approx(mean, abs=0.01 * std)
    assert values.std() == pytest.approx(std, rel=0.01)


# --- calculate_gain ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                  "conv_transpose2d", "conv_transpose3d", "sigmoid"])
def test_gain_is_one_for_linear_like(name):
    assert init.calculate_gain(name) == 1


@pytest.mark.parametrize("name, param, expected", [
    ("tanh", None, 5.0 / 3.0),
    ("relu", None, math.sqrt(2.0)),
    ("leaky_relu", None, math.sqrt(2.0 / (1.0 + 0.01 ** 2))),
    ("leaky_relu", 0.2, math.sqrt(2.0 / (1.0 + 0.2 ** 2))),
    ("leaky_relu", 0, math.sqrt(2.0)),
    ("leaky_relu", math.sqrt(5), math.sqrt(1.0 / 3.0)),
    ("selu", None, 0.75),
])
def test_gain_values(name, param, expected):
    assert init.calculate_gain(name, param) == pytest.approx(expected, rel=1e-15)


def test_gain_unknown_nonlinearity_names_it_and_lists_the_valid_ones():
    with pytest.raises(ValueError) as info:
        init.calculate_gain("relu6")
    message = str(info.value)
    assert "'relu6'" in message
    for valid in ("linear", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
        assert valid in message


def test_gain_suggests_a_close_name():
    with pytest.raises(ValueError, match="Did you mean 'leaky_relu'"):
        init.calculate_gain("leakyrelu")


@pytest.mark.parametrize("bad", ["0.1", True, [0.1]])
def test_gain_bad_negative_slope(bad):
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", bad)


# --- fans ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, fans", [
    ((20, 10), (10, 20)),                # Linear(10, 20): weight (out, in)
    ((16, 3, 5, 5), (3 * 25, 16 * 25)),  # Conv2d(3, 16, 5): (out, in, kh, kw)
    ((8, 4, 3), (4 * 3, 8 * 3)),         # Conv1d
    ((7, 1), (1, 7)),
])
def test_fans(shape, fans):
    assert init._calculate_fan_in_and_fan_out(_param(*shape)) == fans


@pytest.mark.parametrize("shape", [(5,), ()])
def test_fans_need_two_dims(shape):
    with pytest.raises(ValueError) as info:
        init._calculate_fan_in_and_fan_out(_param(*shape))
    message = str(info.value)
    assert "fewer than 2 dimensions" in message and str(shape) in message
    assert "bias" in message  # tells what to use for a 1-D bias


@pytest.mark.parametrize("fn", [init.xavier_uniform_, init.xavier_normal_,
                                init.kaiming_uniform_, init.kaiming_normal_])
def test_fan_based_inits_refuse_a_bias_naming_the_function(fn):
    with pytest.raises(ValueError, match=fn.__name__ + r".*\(10,\)"):
        fn(_param(10))


# --- plain distributions ---------------------------------------------------------------------
def test_uniform(backend):
    p = _param(*SHAPE)
    init.uniform_(p, -0.3, 0.7)
    _check_on_backend(p, backend)
    v = _values(p)
    assert v.min() >= -0.3 and v.max() <= 0.7
    assert v.mean() == pytest.approx(0.2, abs=0.003)
    assert v.std() == pytest.approx(1.0 / math.sqrt(12), rel=0.01)  # (b - a) / sqrt(12)


def test_uniform_defaults_to_zero_one():
    v = _values(init.uniform_(_param(*SHAPE)))
    assert v.min() >= 0 and v.max() <= 1 and v.mean() == pytest.approx(0.5, abs=0.003)


def test_uniform_rejects_reversed_range():
    with pytest.raises(ValueError, match="a <= b"):
        init.uniform_(_param(3), 1.0, 0.0)


def test_normal(backend):
    p = _param(*SHAPE)
    init.normal_(p, mean=2.0, std=0.05)
    _check_on_backend(p, backend)
    _assert_normal(_values(p), 2.0, 0.05)


def test_normal_rejects_negative_std():
    with pytest.raises(ValueError, match="std must be >= 0"):
        init.normal_(_param(3), std=-1.0)


def test_normal_with_zero_std_is_the_mean():
    assert _values(init.normal_(_param(4), mean=3.0, std=0.0)).tolist() == [3.0] * 4


@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0),       # PyTorch's defaults
    (0.0, 0.02, -0.04, 0.04),    # BERT/ViT style: cut at two std (absolute bounds!)
    (0.5, 1.0, 0.0, 1.25),       # asymmetric, mean inside
    (0.0, 1.0, 1.0, 3.0),        # interval in the upper tail
    (0.0, 1.0, 4.0, 5.0),        # far in the tail: 3e-5 of the mass, uniform candidates
    (1.0, 1.0, -0.0005, 0.0005),  # very narrow: 7e-4 of the mass, uniform candidates
    (0.0, 1.0, -math.inf, -1.5),  # one-sided
])
def test_trunc_normal_within_bounds_and_moments(backend, mean, std, a, b):
    p = _param(*SHAPE, dtype=dt.float64)
    init.trunc_normal_(p, mean=mean, std=std, a=a, b=b)
    _check_on_backend(p, backend)
    v = _values(p)
    assert v.min() >= a and v.max() <= b
    # Moments of the truncated normal, by hand: alpha, beta standardized bounds, Z = mass.
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731 - the formula, as written in maths
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731 - the formula, as written in maths
    xpdf = lambda x: 0.0 if math.isinf(x) else x * pdf(x)  # noqa: E731 - the formula, as written in maths
    z = cdf(beta) - cdf(alpha)
    t_mean = mean + std * (pdf(alpha) - pdf(beta)) / z
    t_var = std ** 2 * (1 + (xpdf(alpha) - xpdf(beta)) / z
                        - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    assert v.mean() == pytest.approx(t_mean, abs=0.01 * std)
    assert v.std() == pytest.approx(math.sqrt(t_var), rel=0.01)


def test_rounding_to_float32_never_leaves_the_bounds():
    # 0.1 is 0.10000000149 in float32: a draw just below 0.1 would round to just above it.
    just_inside = np.array([0.1 - 1e-12, -0.1 + 1e-12, 0.0])
    assert float(np.float32(just_inside[0])) > 0.1  # the trap
    out = fills.cast_within(just_inside, np.dtype(np.float32), -0.1, 0.1)
    assert out.dtype == np.float32
    assert out.astype(np.float64).max() <= 0.1 and out.astype(np.float64).min() >= -0.1
    assert out[0] == np.nextafter(np.float32(0.1), np.float32(0))  # the nearest value inside
    # float64 values are untouched.
    assert np.array_equal(fills.cast_within(just_inside, np.dtype(np.float64), -0.1, 0.1), just_inside)
    p = nn.Parameter(np.zeros(200_000, dtype=np.float32))
    for fill in (lambda: init.uniform_(p, -0.1, 0.1),
                 lambda: init.trunc_normal_(p, std=0.1, a=-0.1, b=0.1)):
        v = _values(fill())
        assert v.min() >= -0.1 and v.max() <= 0.1


def test_trunc_normal_default_bounds_are_absolute():
    # std=0.02 with the default a=-2, b=2 cuts nothing: a plain N(0, 0.02).
    v = _values(init.trunc_normal_(_param(*SHAPE), std=0.02))
    _assert_normal(v, 0.0, 0.02)


@pytest.mark.parametrize("kwargs, match", [
    (dict(a=1.0, b=-1.0), "a < b"),
    (dict(std=0.0), "std must be > 0"),
    (dict(mean=0.0, std=0.01, a=1.0, b=2.0), "absolute values"),  # no mass inside [a, b]
    (dict(mean=0.0, std=1.0, a=6.0, b=math.inf), "absolute values"),  # 1e-9, unbounded
])
def test_trunc_normal_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        init.trunc_normal_(_param(10), **kwargs)


def test_constant_zeros_ones(backend):
    p = _param(3, 2)
    assert _values(init.constant_(p, 0.25)).tolist() == [[0.25] * 2] * 3
    _check_on_backend(p, backend)
    assert _values(init.ones_(p)).tolist() == [[1.0] * 2] * 3
    assert _values(init.zeros_(p)).tolist() == [[0.0] * 2] * 3
    _check_on_backend(p, backend)


def test_constant_rejects_an_array():
    with pytest.raises(TypeError, match="assign_"):
        init.constant_(_param(3), [1.0, 2.0, 3.0])


def test_eye():
    assert _values(init.eye_(_param(2, 3))).tolist() == [[1, 0, 0], [0, 1, 0]]
    with pytest.raises(ValueError, match=r"eye_.*\(2, 2, 2\)"):
        init.eye_(_param(2, 2, 2))


# --- Xavier and Kaiming ----------------------------------------------------------------------
@pytest.mark.parametrize("gain", [1.0, 5.0 / 3.0])
def test_xavier_uniform(backend, gain):
    p = _param(*SHAPE)
    init.xavier_uniform_(p, gain=gain)
    _check_on_backend(p, backend)
    fan_in, fan_out = 400, 500
    _assert_uniform(_values(p), gain * math.sqrt(6.0 / (fan_in + fan_out)))


def test_xavier_uniform_conv_kernel():
    p = _param(32, 16, 3, 3)
    init.xavier_uniform_(p)
    fan_in, fan_out = 16 * 9, 32 * 9
    _assert_uniform(_values(p), math.sqrt(6.0 / (fan_in + fan_out)))


@pytest.mark.parametrize("gain", [1.0, math.sqrt(2.0)])
def test_xavier_normal(backend, gain):
    p = _param(*SHAPE)
    init.xavier_normal_(p, gain=gain)
    _check_on_backend(p, backend)
    _assert_normal(_values(p), 0.0, gain * math.sqrt(2.0 / (400 + 500)))


@pytest.mark.parametrize("a, mode, nonlinearity, gain, fan", [
    (0, "fan_in", "leaky_relu", math.sqrt(2.0), 400),                       # the defaults
    (0, "fan_out", "relu", math.sqrt(2.0), 500),
    (0.1, "fan_in", "leaky_relu", math.sqrt(2.0 / (1 + 0.1 ** 2)), 400),
    (math.sqrt(5), "fan_in", "leaky_relu", math.sqrt(1.0 / 3.0), 400),      # Linear's default
    (0, "FAN_OUT", "tanh", 5.0 / 3.0, 500),                                 # mode is lower-cased
])
def test_kaiming_uniform(backend, a, mode, nonlinearity, gain, fan):
    p = _param(*SHAPE)
    init.kaiming_uniform_(p, a=a, mode=mode, nonlinearity=nonlinearity)
    _check_on_backend(p, backend)
    _assert_uniform(_values(p), gain * math.sqrt(3.0 / fan))


@pytest.mark.parametrize("a, mode, nonlinearity, gain, fan", [
    (0, "fan_in", "leaky_relu", math.sqrt(2.0), 400),
    (0, "fan_out", "relu", math.sqrt(2.0), 500),
    (0.2, "fan_out", "leaky_relu", math.sqrt(2.0 / (1 + 0.2 ** 2)), 500),
    (0, "fan_in", "linear", 1.0, 400),
])
def test_kaiming_normal(backend, a, mode, nonlinearity, gain, fan):
    p = _param(*SHAPE)
    init.kaiming_normal_(p, a=a, mode=mode, nonlinearity=nonlinearity)
    _check_on_backend(p, backend)
    _assert_normal(_values(p), 0.0, gain / math.sqrt(fan))


def test_kaiming_normal_conv_kernel_fan_out():
    p = _param(64, 32, 3, 3)
    init.kaiming_normal_(p, mode="fan_out", nonlinearity="relu")
    _assert_normal(_values(p), 0.0, math.sqrt(2.0) / math.sqrt(64 * 9))


@pytest.mark.parametrize("fn", [init.kaiming_uniform_, init.kaiming_normal_])
def test_kaiming_bad_mode(fn):
    p = _param(4, 3)
    before = _values(p).copy()
    with pytest.raises(ValueError) as info:
        fn(p, mode="fan_avg")
    message = str(info.value)
    assert fn.__name__ in message and "'fan_avg'" in message
    assert "fan_in" in message and "fan_out" in message
    assert (_values(p) == before).all()  # nothing written


def test_kaiming_unknown_nonlinearity():
    with pytest.raises(ValueError, match="unsupported nonlinearity 'gelu'"):
        init.kaiming_uniform_(_param(4, 3), nonlinearity="gelu")


# --- orthogonal ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (8, 8), (4, 3, 2, 2)])
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_orthogonal(backend, shape, gain):
    p = _param(*shape, dtype=dt.float64)
    init.orthogonal_(p, gain=gain)
    _check_on_backend(p, backend)
    q = _values(p).reshape(shape[0], -1)
    rows, cols = q.shape
    if rows <= cols:
        np.testing.assert_allclose(q @ q.T, gain ** 2 * np.eye(rows), atol=1e-12)
    else:
        np.testing.assert_allclose(q.T @ q, gain ** 2 * np.eye(cols), atol=1e-12)


def test_orthogonal_float32():
    q = _values(init.orthogonal_(_param(50, 30)))
    np.testing.assert_allclose(q.T @ q, np.eye(30), atol=1e-5)


def test_orthogonal_needs_two_dims():
    with pytest.raises(ValueError, match=r"orthogonal_.*2 or more dimensions.*\(5,\)"):
        init.orthogonal_(_param(5))


# --- assign_ ---------------------------------------------------------------------------------
def test_assign_from_list_array_and_tensor(backend):
    p = _param(2, 2)
    init.assign_(p, [[1.0, 2.0], [3.0, 4.0]])
    _check_on_backend(p, backend)
    assert _values(p).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    init.assign_(p, np.full((2, 2), 5.0))  # a float64 NumPy array into a float32 parameter
    assert p.dtype == np.float32 and _values(p).tolist() == [[5.0] * 2] * 2
    init.assign_(p, dt.tensor([[6.0, 7.0], [8.0, 9.0]]))
    _check_on_backend(p, backend)
    assert _values(p).tolist() == [[6.0, 7.0], [8.0, 9.0]]


def test_assign_wrong_shape_names_both_shapes_and_changes_nothing():
    p = _param(2, 3)
    with pytest.raises(ValueError) as info:
        init.assign_(p, np.ones((3, 2)))
    message = str(info.value)
    assert "assign_" in message and "(2, 3)" in message and "(3, 2)" in message
    assert (_values(p) == 0).all()


def test_assign_ragged_list():
    with pytest.raises(ValueError, match="assign_: the nested lists are ragged"):
        init.assign_(_param(2, 2), [[1.0, 2.0], [3.0]])


# --- PyTorch's default for Linear / Conv2d ---------------------------------------------------
@pytest.mark.parametrize("w_shape, fan_in", [((300, 400), 400), ((64, 16, 5, 5), 16 * 25)])
def test_reset_linear(backend, w_shape, fan_in):
    w, b = _param(*w_shape), _param(w_shape[0])
    assert init.reset_linear_(w, b) is w
    _check_on_backend(w, backend)
    _check_on_backend(b, backend)
    bound = 1.0 / math.sqrt(fan_in)
    _assert_uniform(_values(w), bound)
    bias = _values(b)
    assert bias.min() >= -bound and bias.max() <= bound
    assert bias.std() > 0.4 * bound  # drawn, not left at zero


def test_reset_linear_equals_kaiming_uniform_with_sqrt5_stream_for_stream():
    """PyTorch writes the weight init as kaiming_uniform_(w, a=sqrt(5)): same numbers."""
    w1, w2 = _param(30, 20, dtype=dt.float64), _param(30, 20, dtype=dt.float64)
    dt.manual_seed(7)
    init.reset_linear_(w1)
    dt.manual_seed(7)
    init.kaiming_uniform_(w2, a=math.sqrt(5))
    np.testing.assert_allclose(_values(w1), _values(w2), rtol=0, atol=1e-15)


def test_reset_linear_without_bias_and_bad_bias():
    w = _param(4, 3)
    init.reset_linear_(w)
    assert (_values(w) != 0).all()
    w2 = _param(4, 3)
    with pytest.raises(TypeError, match="reset_linear_"):
        init.reset_linear_(w2, bias=np.zeros(4))
    assert (_values(w2) == 0).all()  # checked before anything was written


# --- common contract: in place, returns the tensor, no graph, dtype, seed ----------------------
RANDOM_INITS = {
    "uniform_": lambda p: init.uniform_(p, -1, 1),
    "normal_": lambda p: init.normal_(p, 0, 0.1),
    "trunc_normal_": lambda p: init.trunc_normal_(p, std=0.5),
    "xavier_uniform_": init.xavier_uniform_,
    "xavier_normal_": init.xavier_normal_,
    "kaiming_uniform_": init.kaiming_uniform_,
    "kaiming_normal_": init.kaiming_normal_,
    "orthogonal_": init.orthogonal_,
    "reset_linear_": init.reset_linear_,
}
ALL_INITS = dict(RANDOM_INITS, **{
    "constant_": lambda p: init.constant_(p, 0.5),
    "zeros_": init.zeros_,
    "ones_": init.ones_,
    "eye_": init.eye_,
    "assign_": lambda p: init.assign_(p, np.arange(12.0).reshape(4, 3)),
})


@pytest.mark.parametrize("name", sorted(ALL_INITS))
def test_in_place_returns_the_parameter_and_records_nothing(backend, name):
    p = nn.Parameter(dt.full((4, 3), 0.25))
    alias = p               # a second reference, like a tied layer
    array = p.data          # the very array an optimizer holds
    before = B.to_numpy(p.data).copy()
    out = ALL_INITS[name](p)
    assert out is p
    assert p.data is array  # written in place, not replaced
    assert not np.array_equal(B.to_numpy(alias.data), before)
    assert p.grad_fn is None and p.is_leaf and p.requires_grad and p.grad is None
    assert isinstance(p, nn.Parameter)
    _check_on_backend(p, backend)


@pytest.mark.parametrize("name", sorted(ALL_INITS))
def test_float64_stays_float64(name):
    p = nn.Parameter(np.ones((4, 3)))
    assert p.dtype == np.float64
    ALL_INITS[name](p)
    assert p.dtype == np.float64 and p.data.dtype == np.float64


@pytest.mark.parametrize("name", sorted(RANDOM_INITS))
def test_manual_seed_reproduces(name):
    a, b = _param(6, 5), _param(6, 5)
    dt.manual_seed(123)
    RANDOM_INITS[name](a)
    dt.manual_seed(123)
    RANDOM_INITS[name](b)
    assert np.array_equal(_values(a), _values(b))
    RANDOM_INITS[name](b)  # the stream moved on
    assert not np.array_equal(_values(a), _values(b))


@pytest.mark.parametrize("name", sorted(RANDOM_INITS))
def test_same_values_on_every_backend(name):
    dt.manual_seed(5)
    cpu = RANDOM_INITS[name](_param(6, 5))
    marked_backend.register()
    with B.use("marked"):
        dt.manual_seed(5)
        other = RANDOM_INITS[name](_param(6, 5))
        marked_backend.assert_marked(other.data, name)
    assert np.array_equal(_values(cpu), _values(other))


def test_float64_draws_match_float32_draws_up_to_rounding():
    """Values are drawn in float64 and then cast, so the dtype does not change the stream."""
    dt.manual_seed(1)
    p32 = init.normal_(_param(100))
    dt.manual_seed(1)
    p64 = init.normal_(_param(100, dtype=dt.float64))
    assert np.array_equal(_values(p32), _values(p64).astype(np.float32))


def test_explicit_generator():
    p1, p2 = _param(5, 5), _param(5, 5)
    init.normal_(p1, generator=np.random.default_rng(3))
    init.normal_(p2, generator=np.random.default_rng(3))
    assert np.array_equal(_values(p1), _values(p2))
    with pytest.raises(TypeError, match="generator"):
        init.normal_(p1, generator=3)


def test_initializing_inside_a_graph_records_nothing():
    p = nn.Parameter(dt.ones(3, 3))
    y = (p * 2).sum()
    init.normal_(p)
    y.backward()
    assert p.grad is not None and p.grad_fn is None and p.is_leaf


def test_view_of_another_tensor_writes_through():
    base = dt.zeros(4, 3)
    view = make_tensor(base.data[1:3])
    init.ones_(view)
    assert _values(base).tolist() == [[0.0] * 3, [1.0] * 3, [1.0] * 3, [0.0] * 3]


@pytest.mark.parametrize("name", sorted(RANDOM_INITS))
def test_zero_element_tensors_are_a_no_op(name):
    p = _param(0, 3)
    assert RANDOM_INITS[name](p) is p and p.shape == (0, 3)


# --- errors that teach ----------------------------------------------------------------------
def test_not_a_tensor():
    with pytest.raises(TypeError, match=r"wrap the array first: p = nn.Parameter\(array\)"):
        init.normal_(np.zeros((2, 2)))

    class FakeLayer:
        def named_parameters(self):
            return iter(())

    with pytest.raises(TypeError, match=r"layer.weight.*model.apply"):
        init.xavier_uniform_(FakeLayer())


def test_random_init_of_an_integer_tensor():
    with pytest.raises(TypeError, match=r"normal_.*\(3,\).*int64"):
        init.normal_(dt.tensor([1, 2, 3]))
    # Constants are fine for any dtype.
    assert init.zeros_(dt.tensor([1, 2, 3])).tolist() == [0, 0, 0]


def test_argument_that_is_not_a_number():
    with pytest.raises(TypeError, match="normal_: std must be a number"):
        init.normal_(_param(3), std="0.1")


def test_public_names():
    for name in ("calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_",
                 "ones_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                 "kaiming_normal_", "orthogonal_", "assign_", "reset_linear_"):
        fn = getattr(init, name)
        assert name in init.__all__
        assert fn.__doc__ and ">>>" in fn.__doc__, f"{name} needs a docstring with an example"
