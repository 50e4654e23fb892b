"""PyTorch's fill functions that draw from a distribution or copy given values:
``uniform_``, ``normal_``, ``trunc_normal_``, ``constant_`` / ``zeros_`` / ``ones_``, ``eye_``,
``orthogonal_`` and ``assign_`` (see :mod:`dltutor.nn.init`). Each works in place, records no
gradient and returns the tensor. The random draws come from :mod:`dltutor.autograd.fills`,
the one path every random value of the kit takes.

>>> import dltutor as dt
>>> from dltutor import nn
>>> zeros_(nn.Parameter(dt.ones(2))).tolist()
[0.0, 0.0]
"""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np

from ... import backend as B
from ...autograd import Tensor, fills, no_grad
from ...autograd.dtypes import to_array

__all__ = ["check_tensor", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_",
           "eye_", "orthogonal_", "assign_"]

# trunc_normal_ throws away candidates that fall outside [a, b] (or fail the density test).
# When it would keep less than this share of them, it refuses instead of looping for ages.
_MIN_TRUNC_MASS = 1e-3


def check_tensor(func: str, tensor: Any, *, floating: bool = True) -> None:
    """Fail with a hint unless ``tensor`` is a dltutor Tensor (a floating one, if asked).

    >>> check_tensor("normal_", [1.0, 2.0])
    Traceback (most recent call last):
    ...
    TypeError: normal_: expected a Tensor or Parameter, got list; pass a parameter, e.g. init.normal_(layer.weight)
    """
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
    if floating:
        fills.require_floating(func, tensor)


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
    check_tensor("uniform_", tensor)
    with no_grad():                        # as PyTorch's init.uniform_ calls tensor.uniform_
        return tensor.uniform_(a, b, generator=generator)


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
    check_tensor("normal_", tensor)
    with no_grad():                        # as PyTorch's init.normal_ calls tensor.normal_
        return tensor.normal_(mean, std, generator=generator)


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
    check_tensor(func, tensor)
    mean, std = fills.number(func, "mean", mean), fills.number(func, "std", std)
    a, b = fills.number(func, "a", a), fills.number(func, "b", b)
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
    gen = fills.generator_for(func, generator)
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
    return fills.write(tensor, fills.cast_within(out.reshape(shape), tensor.dtype, a, b))


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
    check_tensor(func, tensor, floating=False)
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
    check_tensor("zeros_", tensor, floating=False)
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones (the usual start for a normalization layer's weight).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> ones_(nn.Parameter(dt.zeros(3))).tolist()
    [1.0, 1.0, 1.0]
    """
    check_tensor("ones_", tensor, floating=False)
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
    check_tensor("eye_", tensor, floating=False)
    shape = tuple(tensor.shape)
    if len(shape) != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, this one has shape {shape}; "
                         f"for a conv kernel write the values you want with assign_")
    return fills.write(tensor, np.eye(shape[0], shape[1]))


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
    check_tensor(func, tensor)
    gain = fills.number(func, "gain", gain)
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"this one has shape {shape}; a 1-D bias has no orthogonal form, use "
                         f"zeros_ or uniform_")
    if tensor.data.size == 0:
        return tensor
    gen = fills.generator_for(func, generator)
    rows = shape[0]
    cols = tensor.data.size // rows
    flat = gen.standard_normal((rows, cols), dtype=np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)  # reduced QR: q has orthonormal columns
    q = q * np.sign(np.diag(r))  # make the decomposition unique
    if rows < cols:
        q = q.T
    return fills.write(tensor, gain * q.reshape(shape))


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
    check_tensor(func, tensor, floating=False)
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
