"""Initializers: fill a parameter with its starting values, in place, as PyTorch's ``nn.init``.

Where a network *starts* decides whether it trains at all: too small and the signal fades layer
after layer, too large and it explodes. Each initializer here picks the spread of the starting
values from the layer's shape (its *fans*) so that the signal keeps roughly the same size.

============================  =======================================  ========================
dltutor                       what it draws                            use it for
============================  =======================================  ========================
``uniform_(p, a, b)``         U(a, b)                                  anything, by hand
``normal_(p, mean, std)``     N(mean, std²)                            embeddings, by hand
``trunc_normal_``             N(mean, std²) cut to [a, b]              transformers (ViT, BERT)
``constant_/zeros_/ones_``    one value                                biases, norm layers
``xavier_uniform_/normal_``   spread from fan_in + fan_out             tanh / sigmoid layers
``kaiming_uniform_/normal_``  spread from fan_in (or fan_out)          ReLU layers
``orthogonal_``               a (scaled) orthogonal matrix             RNNs, deep linear nets
``eye_``                      the identity matrix                      residual-style starts
``assign_(p, values)``        exactly the values you give              pretrained weights
``reset_linear_(w, b)``       PyTorch's default for Linear and Conv2d  what layers call
============================  =======================================  ========================

Every function works in place on a :class:`~dltutor.Tensor` or :class:`~dltutor.nn.Parameter`
(the same object, so ties and optimizers keep seeing it), records no gradient, and returns the
tensor, so ``init.normal_(p, std=0.01)`` shows the result in a notebook.

Random numbers come from the generator that :func:`dltutor.manual_seed` seeds. They are drawn
with NumPy in float64, then cast to the parameter's dtype and moved to its device, so a seed
gives the same starting values on the CPU and on the GPU.

>>> import dltutor as dt
>>> from dltutor import nn
>>> from dltutor.nn import init
>>> _ = dt.manual_seed(0)
>>> w = nn.Parameter(dt.zeros(256, 128))
>>> _ = init.kaiming_normal_(w, nonlinearity="relu")
>>> std = (2 / 128) ** 0.5                  # Kaiming for ReLU: std = sqrt(2 / fan_in)
>>> bool(abs(w.numpy().std() / std - 1) < 0.02)
True

What the frameworks call these: PyTorch ``torch.nn.init.kaiming_normal_``; Paddle
``paddle.nn.initializer.KaimingNormal`` (an object given to ``ParamAttr``); MegEngine
``megengine.module.init.msra_normal_``. The functions above, PyTorch's names, are what the
chapters use. Paddle's objects exist here too, with Paddle's arguments and defaults, so that
Paddle code translates line by line (see :mod:`dltutor.nn.initializers`):

=================================  ===============================  ===========================
Paddle                             dltutor                          calls
=================================  ===============================  ===========================
``Normal(0.0, 0.02)``              ``init.Normal(0.0, 0.02)``       ``normal_(p, 0.0, 0.02)``
``Uniform(-0.1, 0.1)``             ``init.Uniform(-0.1, 0.1)``      ``uniform_(p, -0.1, 0.1)``
``TruncatedNormal(0.0, 0.02)``     ``init.TruncatedNormal(...)``    ``trunc_normal_``
``Constant(0.0)``                  ``init.Constant(0.0)``           ``constant_(p, 0.0)``
``XavierUniform()``                ``init.XavierUniform()``         ``xavier_uniform_(p)``
``KaimingNormal()`` (ReLU)         ``init.KaimingNormal()``         ``kaiming_normal_``
``Assign(array)``                  ``init.Assign(array)``           ``assign_(p, array)``
``ParamAttr(initializer=obj)``     ``weight_init=obj`` (a layer)    ``obj(layer.weight)``
=================================  ===============================  ===========================

An object is called on a parameter, ``init.XavierUniform()(layer.weight)``, or given to a layer
(``nn.Linear``, ``nn.Conv2d``, ``nn.Embedding``); either way the work is done by the function of
this module.
"""
from __future__ import annotations

import difflib
import math
from numbers import Real
from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor, no_grad
from ..autograd import rng
from ..autograd.dtypes import to_array

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "zeros_",
    "ones_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "assign_",
    "reset_linear_",
]

# calculate_gain's names, in the order PyTorch's documentation lists them.
_LINEAR_NAMES = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d")
_NONLINEARITIES = _LINEAR_NAMES + ("sigmoid", "tanh", "relu", "leaky_relu", "selu")
_MODES = ("fan_in", "fan_out")

# trunc_normal_ throws away candidates that fall outside [a, b] (or fail the density test).
# When it would keep less than this share of them, it refuses instead of looping for ages.
_MIN_TRUNC_MASS = 1e-3


# ---------------------------------------------------------------------------------------------
# Helpers: checking arguments and writing values in place
# ---------------------------------------------------------------------------------------------
def _check_tensor(func: str, tensor: Any, *, floating: bool = True) -> None:
    """Fail with a hint unless ``tensor`` is a dltutor Tensor (a floating one, if asked)."""
    if not isinstance(tensor, Tensor):
        if hasattr(tensor, "named_parameters"):
            hint = (f"initializers fill one tensor: call init.{func}(layer.weight), or visit "
                    f"every layer with model.apply(fn)")
        elif B.backend_of(tensor) is not None:
            hint = f"wrap the array first: p = nn.Parameter(array); init.{func}(p)"
        else:
            hint = f"pass a parameter, e.g. init.{func}(layer.weight)"
        raise TypeError(f"{func}: expected a Tensor or Parameter, got {type(tensor).__name__}; "
                        f"{hint}")
    if floating and tensor.dtype.kind not in "fc":
        raise TypeError(f"{func}: the tensor of shape {tuple(tensor.shape)} has dtype "
                        f"{tensor.dtype}, but random initial values need a floating-point "
                        f"tensor; make it with dtype=dt.float32")


def _number(func: str, name: str, value: Any) -> float:
    """``value`` as a float, or a TypeError naming the argument."""
    if isinstance(value, Tensor) and value.data.size == 1:
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
        raise TypeError(f"{func}: {name} must be a number, got {value!r}")
    return float(value)


def _generator(func: str, generator: Any) -> np.random.Generator:
    if generator is None:
        return rng.generator()
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{func}: generator must be a numpy.random.Generator (or None for the "
                        f"one dt.manual_seed seeds), got {type(generator).__name__}")
    return generator


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy NumPy ``values`` into ``tensor.data`` in place, on the tensor's own backend.

    The cast to the tensor's dtype happens here, in NumPy, so CPU and GPU get identical values.
    """
    backend = B.backend_of(tensor.data) or B.NUMPY
    with no_grad():
        tensor.data[...] = backend.asarray(np.asarray(values).astype(tensor.dtype, copy=False))
    return tensor


def _cast_within(values: np.ndarray, dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """``values`` (float64, all in ``[low, high]``) cast to ``dtype`` without leaving that range.

    Rounding to float32 can push a value just inside a bound to the float32 number just
    outside it (0.1 is 0.10000000149 in float32). Clipping to the representable numbers inside
    ``[low, high]`` keeps the promise "every value lies within the bound" in every dtype.
    """
    out = np.asarray(values).astype(dtype)
    if dtype.kind != "f" or dtype == np.float64:
        return out
    with np.errstate(over="ignore"):
        lo, hi = np.asarray(low, dtype=dtype), np.asarray(high, dtype=dtype)
    if float(lo) < low:  # compare in float64 (NumPy 2 would compare in float32)
        lo = np.nextafter(lo, np.asarray(np.inf, dtype=dtype))
    if float(hi) > high:
        hi = np.nextafter(hi, np.asarray(-np.inf, dtype=dtype))
    return np.clip(out, lo, hi, out=out)


def _fans(tensor: Tensor, func: str) -> tuple[int, int]:
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            f"{func}: fan in and fan out can not be computed for a tensor with fewer than 2 "
            f"dimensions (this one has shape {shape}). Fans are defined for weight matrices "
            f"(out_features, in_features) and conv kernels (out_channels, in_channels, kh, kw). "
            f"For a 1-D bias use zeros_, constant_ or uniform_ (PyTorch's Linear draws its bias "
            f"from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the weight's fan_in: reset_linear_)."
        )
    receptive_field = math.prod(shape[2:])  # 1 for a matrix, kh * kw for a conv kernel
    return shape[1] * receptive_field, shape[0] * receptive_field


def _correct_fan(tensor: Tensor, mode: Any, func: str) -> int:
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(
            f"{func}: mode {mode!r} is not supported; use 'fan_in' (the default: keeps the size "
            f"of the activations in the forward pass) or 'fan_out' (keeps the size of the "
            f"gradients in the backward pass)"
        )
    fan_in, fan_out = _fans(tensor, func)
    return fan_in if mode.lower() == "fan_in" else fan_out


# ---------------------------------------------------------------------------------------------
# Gains and fans
# ---------------------------------------------------------------------------------------------
def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The factor by which to scale the init's spread for a given activation (PyTorch's values).

    An activation such as ReLU throws away half of its input's variance; multiplying the
    initial weights by ``sqrt(2)`` gives that back, so the signal neither fades nor explodes.

    ==================================  =====================================
    nonlinearity                        gain
    ==================================  =====================================
    linear, conv1d/2d/3d,               1
    conv_transpose1d/2d/3d, sigmoid
    tanh                                5/3
    relu                                sqrt(2)
    leaky_relu                          sqrt(2 / (1 + negative_slope²)),
                                        ``param`` = negative_slope (0.01)
    selu                                3/4
    ==================================  =====================================

    For a self-normalizing network (SELU activations, Klambauer et al. 2017) PyTorch's docs
    advise ``nonlinearity="linear"`` rather than ``"selu"``: weights with variance ``1 / fan_in``
    are what keeps the activations at mean 0, variance 1.

    >>> calculate_gain("relu") == 2 ** 0.5
    True
    >>> calculate_gain("tanh")
    1.6666666666666667
    >>> round(calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    if nonlinearity in _LINEAR_NAMES or nonlinearity == "sigmoid":
        return 1  # an int, as PyTorch returns
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (Real, np.number)):
            negative_slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number; "
                             "pass the leaky ReLU's slope as param, e.g. 0.01")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    close = difflib.get_close_matches(str(nonlinearity), _NONLINEARITIES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; choose one of "
                     f"{', '.join(_NONLINEARITIES)}.{hint}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: how many inputs feed one output, and the reverse.

    For a Linear weight of shape ``(out, in)``: ``fan_in = in``, ``fan_out = out``. For a conv
    kernel ``(out_ch, in_ch, kh, kw)`` each input channel brings ``kh * kw`` values:
    ``fan_in = in_ch * kh * kw``, ``fan_out = out_ch * kh * kw``.

    >>> import dltutor as dt
    >>> _calculate_fan_in_and_fan_out(dt.zeros(20, 10))
    (10, 20)
    >>> _calculate_fan_in_and_fan_out(dt.zeros(16, 3, 5, 5))
    (75, 400)
    """
    _check_tensor("_calculate_fan_in_and_fan_out", tensor, floating=False)
    return _fans(tensor, "_calculate_fan_in_and_fan_out")


# ---------------------------------------------------------------------------------------------
# Plain distributions and constants
# ---------------------------------------------------------------------------------------------
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``.

    The simplest init: every value in the range is equally likely. The Xavier and Kaiming
    uniform initializers are this with a range computed from the layer's shape.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> p = nn.Parameter(dt.zeros(3, 4))
    >>> uniform_(p, -0.1, 0.1) is p
    True
    >>> bool((p.numpy() >= -0.1).all() and (p.numpy() <= 0.1).all())
    True
    """
    func = "uniform_"
    _check_tensor(func, tensor)
    a, b = _number(func, "a", a), _number(func, "b", b)
    if not a <= b:
        raise ValueError(f"uniform_: the range [a, b) needs a <= b, got a={a} and b={b}; "
                         f"swap them")
    gen = _generator(func, generator)
    values = gen.uniform(a, b, size=tuple(tensor.shape))
    return _write(tensor, _cast_within(values, tensor.dtype, a, b))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with values drawn from the normal distribution N(mean, std²).

    Small random values break the symmetry between units (if all weights were equal, all units
    would learn the same thing). ``nn.Embedding`` starts from ``normal_(w, 0, 1)``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> p = nn.Parameter(dt.zeros(500, 400))
    >>> _ = normal_(p, mean=1.0, std=0.01)
    >>> round(float(p.numpy().mean()), 3), round(float(p.numpy().std()), 3)
    (1.0, 0.01)
    """
    func = "normal_"
    _check_tensor(func, tensor)
    mean, std = _number(func, "mean", mean), _number(func, "std", std)
    if not std >= 0:
        raise ValueError(f"normal_: std must be >= 0 (it is the spread of the values), got {std}")
    gen = _generator(func, generator)
    z = np.asarray(gen.standard_normal(size=tuple(tensor.shape), dtype=np.float64))
    return _write(tensor, mean + std * z)


def _normal_mass(alpha: float, beta: float) -> float:
    """P(alpha <= Z <= beta) for a standard normal Z, accurate in both tails."""
    r2 = math.sqrt(2.0)
    if alpha >= 0:  # both in the upper tail: differences of erfc keep the precision
        return 0.5 * (math.erfc(alpha / r2) - math.erfc(beta / r2))
    if beta <= 0:  # both in the lower tail: mirror
        return 0.5 * (math.erfc(-beta / r2) - math.erfc(-alpha / r2))
    return 0.5 * (math.erf(beta / r2) - math.erf(alpha / r2))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` from N(mean, std²) truncated to ``[a, b]``: values outside are redrawn.

    Transformers (BERT, ViT) start their weights this way with a small std such as 0.02, which
    rules out the rare large values a plain normal would give. As in PyTorch, ``a`` and ``b``
    are absolute bounds, not multiples of ``std``: ``trunc_normal_(w, std=0.02)`` cuts at ±2,
    which cuts nothing; write ``a=-0.04, b=0.04`` to cut at two standard deviations.

    Sampling is by rejection, as in PyTorch 2.x, so every value lies in ``[a, b]`` and follows
    the truncated distribution exactly. When most of N(mean, std²) lies inside ``[a, b]`` the
    draws come from that normal; when little does (a narrow or far-off interval), candidates
    are drawn uniformly in ``[a, b]`` and kept with probability proportional to the normal's
    density.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> p = nn.Parameter(dt.zeros(100, 100))
    >>> _ = trunc_normal_(p, std=0.02, a=-0.04, b=0.04)
    >>> bool(p.numpy().min() >= -0.04 and p.numpy().max() <= 0.04)
    True
    """
    func = "trunc_normal_"
    _check_tensor(func, tensor)
    mean, std = _number(func, "mean", mean), _number(func, "std", std)
    a, b = _number(func, "a", a), _number(func, "b", b)
    if not std > 0:
        raise ValueError(f"trunc_normal_: std must be > 0, got {std}; for a constant use "
                         f"constant_")
    if not a < b:
        raise ValueError(f"trunc_normal_: the interval [a, b] needs a < b, got a={a} and b={b}")
    alpha, beta = (a - mean) / std, (b - mean) / std  # the bounds in units of std
    mass = _normal_mass(alpha, beta)  # share of normal draws that land in [a, b]
    # Share of uniform candidates in [a, b] kept when accepting with density / peak density.
    z_peak = min(max(0.0, alpha), beta)  # the point of [alpha, beta] nearest the mean
    if math.isfinite(beta - alpha) and mass > 0:
        log_share = (math.log(mass) + 0.5 * math.log(2 * math.pi) - math.log(beta - alpha)
                     + 0.5 * z_peak ** 2)
        uniform_share = math.exp(min(log_share, 0.0))
    else:
        uniform_share = 0.0
    if max(mass, uniform_share) < _MIN_TRUNC_MASS:
        raise ValueError(
            f"trunc_normal_: only {mass:.2g} of N(mean={mean}, std={std}) lies inside "
            f"[a, b] = [{a}, {b}], so almost every draw would be thrown away. Note that a and b "
            f"are absolute values, not multiples of std: to cut at two standard deviations "
            f"pass a=mean - 2 * std, b=mean + 2 * std."
        )
    gen = _generator(func, generator)
    shape = tuple(tensor.shape)
    count = math.prod(shape)
    share = max(mass, uniform_share)
    out = np.empty(count, dtype=np.float64)
    filled = 0
    while filled < count:
        need = count - filled
        # Enough candidates to fill what is left in one go most of the time (at most 4M at once).
        batch = min(int(need / share * 1.1) + 16, 1 << 22)
        if mass >= uniform_share:
            draws = mean + std * gen.standard_normal(batch, dtype=np.float64)
            kept = draws[(draws >= a) & (draws <= b)]
        else:
            draws = gen.uniform(a, b, size=batch)
            z = (draws - mean) / std
            keep_probability = np.exp(-0.5 * (z * z - z_peak * z_peak))
            kept = draws[(gen.random(batch) < keep_probability) & (draws >= a) & (draws <= b)]
        kept = kept[:need]
        out[filled:filled + kept.size] = kept
        filled += kept.size
    return _write(tensor, _cast_within(out.reshape(shape), tensor.dtype, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with the single value ``val``.

    Constants are fine for biases and for normalization layers (BatchNorm starts with weight 1
    and bias 0), but not for weights: equal weights make every unit compute the same thing.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> constant_(nn.Parameter(dt.zeros(3)), 0.5).tolist()
    [0.5, 0.5, 0.5]
    """
    func = "constant_"
    _check_tensor(func, tensor, floating=False)
    if isinstance(val, Tensor) and val.data.size == 1:
        val = val.item()
    if not isinstance(val, (Real, np.number, bool)):
        raise TypeError(f"constant_: val must be a single number, got {type(val).__name__}; "
                        f"to copy an array of values into the tensor use assign_(tensor, values)")
    with no_grad():
        tensor.data[...] = val
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros (the usual start for a bias).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> zeros_(nn.Parameter(dt.ones(2, 2))).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    _check_tensor("zeros_", tensor, floating=False)
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones (the usual start for a normalization layer's weight).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> ones_(nn.Parameter(dt.zeros(3))).tolist()
    [1.0, 1.0, 1.0]
    """
    _check_tensor("ones_", tensor, floating=False)
    return constant_(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity matrix (ones on the diagonal, zeros elsewhere).

    A linear layer that starts as the identity passes its input through unchanged, which is a
    safe start for a layer added to an already trained network.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> eye_(nn.Parameter(dt.zeros(2, 3))).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    _check_tensor("eye_", tensor, floating=False)
    shape = tuple(tensor.shape)
    if len(shape) != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, this one has shape {shape}; "
                         f"for a conv kernel write the values you want with assign_")
    return _write(tensor, np.eye(shape[0], shape[1]))


# ---------------------------------------------------------------------------------------------
# Spread from the layer's shape: Xavier (Glorot) and Kaiming (He)
# ---------------------------------------------------------------------------------------------
def _xavier_std(func: str, tensor: Tensor, gain: Any) -> float | None:
    """Xavier's ``gain * sqrt(2 / (fan_in + fan_out))``, after checking the arguments; None
    for a tensor without elements (PyTorch leaves it as it is)."""
    _check_tensor(func, tensor)
    gain = _number(func, "gain", gain)
    fan_in, fan_out = _fans(tensor, func)
    if tensor.data.size == 0:
        return None
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def _kaiming_std(func: str, tensor: Tensor, a: Any, mode: Any, nonlinearity: str) -> float | None:
    """Kaiming's ``gain / sqrt(fan)``, after checking the arguments; None for a tensor without
    elements (PyTorch leaves it as it is)."""
    _check_tensor(func, tensor)
    fan = _correct_fan(tensor, mode, func)
    gain = calculate_gain(nonlinearity, a)
    if tensor.data.size == 0:
        return None
    return gain / math.sqrt(fan)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Xavier (Glorot) uniform: U(-bound, bound) with ``bound = gain * sqrt(6 / (fan_in + fan_out))``.

    Chosen so that the variance of the activations (forward) and of the gradients (backward)
    stays roughly the same from layer to layer through tanh or sigmoid layers (Glorot & Bengio,
    2010). Pass ``gain=calculate_gain("tanh")`` for tanh layers.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(30, 20))
    >>> bound = (6 / (20 + 30)) ** 0.5
    >>> bool(abs(xavier_uniform_(w).numpy()).max() <= bound)
    True
    """
    std = _xavier_std("xavier_uniform_", tensor, gain)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # a uniform U(-c, c) has std c / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Xavier (Glorot) normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    The normal twin of :func:`xavier_uniform_`: same variance, bell-shaped instead of flat.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(500, 400))
    >>> _ = xavier_normal_(w)
    >>> std = (2 / (400 + 500)) ** 0.5
    >>> bool(abs(w.numpy().std() / std - 1) < 0.01)    # within 1% of the formula
    True
    """
    std = _xavier_std("xavier_normal_", tensor, gain)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """Kaiming (He) uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    Made for ReLU networks (He et al., 2015): ReLU zeroes half of its inputs, so the weights get
    ``gain = sqrt(2)`` to keep the variance of the activations constant. ``fan`` is ``fan_in``
    (keep the forward activations steady, the default) or ``fan_out`` (keep the backward
    gradients steady). ``a`` is the negative slope of a leaky ReLU; with the defaults
    (``a=0``, ``"leaky_relu"``) the gain is ``sqrt(2)``, the ReLU gain.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(64, 32))
    >>> bound = 2 ** 0.5 * (3 / 32) ** 0.5
    >>> bool(abs(kaiming_uniform_(w, nonlinearity="relu").numpy()).max() <= bound)
    True
    """
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # a uniform U(-c, c) has std c / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """Kaiming (He) normal: N(0, std²) with ``std = gain / sqrt(fan)``.

    The normal twin of :func:`kaiming_uniform_`, the init of the original ResNet paper (used
    there with ``mode="fan_out"``).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w = nn.Parameter(dt.zeros(500, 400))
    >>> _ = kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    >>> std = 2 ** 0.5 / 500 ** 0.5                    # gain / sqrt(fan_out)
    >>> bool(abs(w.numpy().std() / std - 1) < 0.01)
    True
    """
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with a random (semi-)orthogonal matrix, times ``gain``.

    An orthogonal matrix keeps the length of every vector it multiplies, so a signal can pass
    through many layers (or many RNN steps) without fading or exploding (Saxe et al., 2013).
    A tensor with more than 2 dimensions is treated as a ``(shape[0], rest)`` matrix.

    PyTorch's algorithm: QR-decompose a standard normal matrix (its transpose if it is wide)
    and fix the signs of Q's columns with the signs of R's diagonal, which makes the result
    uniformly distributed over orthogonal matrices.

    >>> import numpy as np, dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> q = orthogonal_(nn.Parameter(dt.zeros(3, 5, dtype=dt.float64))).numpy()
    >>> np.allclose(q @ q.T, np.eye(3))       # rows are orthonormal
    True
    """
    func = "orthogonal_"
    _check_tensor(func, tensor)
    gain = _number(func, "gain", gain)
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"this one has shape {shape}; a 1-D bias has no orthogonal form, use "
                         f"zeros_ or uniform_")
    if tensor.data.size == 0:
        return tensor
    gen = _generator(func, generator)
    rows = shape[0]
    cols = tensor.data.size // rows
    flat = gen.standard_normal((rows, cols), dtype=np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)  # reduced QR: q has orthonormal columns
    q = q * np.sign(np.diag(r))  # make the decomposition unique
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(shape))


# ---------------------------------------------------------------------------------------------
# Given values, and the layers' default
# ---------------------------------------------------------------------------------------------
def assign_(tensor: Tensor, values: Any) -> Tensor:
    """Copy ``values`` (a list, NumPy/CuPy array or Tensor) into ``tensor``: Paddle's ``Assign``.

    Use it to start from known weights (a pretrained layer, a hand-made example). The shape
    must match exactly; the values are converted to the tensor's dtype and moved to its device.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> p = nn.Parameter(dt.zeros(2, 2))
    >>> assign_(p, [[1.0, 2.0], [3.0, 4.0]]).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    func = "assign_"
    _check_tensor(func, tensor, floating=False)
    if isinstance(values, Tensor):
        values = values.data
    values = to_array(values, caller="assign_")   # refuses strings, objects, complex, ragged
    new_shape = tuple(values.shape)
    shape = tuple(tensor.shape)
    if tuple(new_shape) != shape:
        raise ValueError(f"assign_: the tensor has shape {shape} but the values have shape "
                         f"{tuple(new_shape)}; reshape the values to {shape} first (to fill "
                         f"with one number use constant_)")
    backend = B.backend_of(tensor.data) or B.NUMPY
    with no_grad():
        tensor.data[...] = backend.asarray(values, dtype=tensor.dtype)
    return tensor


def reset_linear_(weight: Tensor, bias: Tensor | None = None, generator: Any = None) -> Tensor:
    """PyTorch's default init of ``nn.Linear`` and ``nn.Conv2d``: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    Both the weight and the bias are drawn from that range, with ``fan_in`` taken from the
    weight (``in_features``, or ``in_channels * kh * kw`` for a conv kernel). The weight is
    drawn first, then the bias, as in PyTorch. Returns the weight.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> _ = dt.manual_seed(0)
    >>> w, b = nn.Parameter(dt.zeros(8, 16)), nn.Parameter(dt.zeros(8))
    >>> _ = reset_linear_(w, b)
    >>> bound = 1 / 16 ** 0.5
    >>> bool(abs(w.numpy()).max() <= bound and abs(b.numpy()).max() <= bound)
    True
    """
    func = "reset_linear_"
    _check_tensor(func, weight)
    if bias is not None:
        _check_tensor(func, bias)  # check both before changing either
    fan_in, _ = _fans(weight, func)
    # PyTorch writes the weight's init as kaiming_uniform_(weight, a=sqrt(5)): the leaky-ReLU
    # gain with slope sqrt(5) is sqrt(2 / (1 + 5)) = sqrt(1/3), so the bound
    # sqrt(3) * gain / sqrt(fan_in) is 1 / sqrt(fan_in). We call it the same way, so the weight
    # gets PyTorch's bound to the last bit.
    kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
    if bias is not None:
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound, generator)
    return weight


# Paddle's initializer objects (init.Normal(0.0, 0.02), init.Assign(vectors), ...) call the
# functions above. They live in initializers.py and are imported last, once those exist.
from .initializers import (Assign, Constant, Initializer, KaimingNormal,  # noqa: E402
                           KaimingUniform, Normal, TruncatedNormal, Uniform, XavierNormal,
                           XavierUniform)

__all__ += ["Initializer", "Normal", "Uniform", "TruncatedNormal", "Constant", "XavierUniform",
            "XavierNormal", "KaimingUniform", "KaimingNormal", "Assign"]
