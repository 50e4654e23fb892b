"""The table of every public differentiable op, for test_every_shape.py: how to call it, its
formula in NumPy (float64), what inputs it needs, and the input kinds it is run on.

Each row is an :class:`Op`. ``call`` takes the float tensors (the leaves whose gradients are
checked) and then the row's ``extra`` arguments for the kind (integer indices, labels, a kernel
size); ``ref`` takes the same, as float64 NumPy arrays, and returns the expected output.
``domains`` says what values each float input takes ("any": normal; "pos": in [0.5, 2] for log,
sqrt, division and pow; "away": at least 0.1 from 0, so that relu's or abs's kink is not within
a finite difference; "clip": at least 0.1 from the clip bounds +-0.5; "distinct": no two equal,
so that max, min and max pooling have one winner; "unit": in [0, 1], targets of binary
cross-entropy). ``shapes`` gives the input shapes of each kind; ``refused`` the kinds PyTorch
refuses too, with the error the kit raises (tests/frameworks/test_every_shape_torch.py runs
them in PyTorch; the one kind the kit refuses and PyTorch does not is said at its row).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import dltutor as dt
from dltutor.nn import functional as F

KINDS = ("0d", "empty", "one", "noncontig", "broadcast")


@dataclass
class Op:
    name: str
    call: Callable
    ref: Callable
    shapes: dict                        # kind -> tuple of input shapes
    domains: tuple = ("any",)
    extra: dict = field(default_factory=dict)      # kind -> extra (non-float) arguments
    refused: dict = field(default_factory=dict)    # kind -> error type (PyTorch refuses too)
    covers: tuple = ()                  # the public names this row runs (besides ``name``)
    dtypes: tuple = ("float32", "float64", "float16")
    grad: bool = True                   # False: integer or bool output, no gradient
    out_dtype: str | None = None        # the result's dtype when it is not the input's


# Input shapes by kind: one float input, two (which broadcast in "broadcast"; "empty" also
# broadcasts (0, 1) against (3,)), and one float input for the reductions.
UNARY = {"0d": ((),), "empty": ((0, 3),), "one": ((1,),), "noncontig": ((3, 2),)}
BINARY = {"0d": ((), ()), "empty": ((0, 1), (3,)), "one": ((1,), (1,)),
          "noncontig": ((3, 2), (3, 2)), "broadcast": ((2, 1), (3,))}


def unary(name, call, ref, domain="any", **kw):
    return Op(name, call, ref, UNARY, (domain,), **kw)


def binary(name, call, ref, domains=("any", "any"), **kw):
    shapes = dict(BINARY, empty=((0, 3), (0, 3))) if "broadcast" in kw.get("refused", {}) \
        else BINARY
    return Op(name, call, ref, shapes, domains, **kw)


def softmax_ref(a, log=False):
    x = np.atleast_1d(a)
    shifted = x - x.max(axis=-1, keepdims=True) if x.size else x
    lse = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    out = shifted - lse if log else np.exp(shifted - lse)
    return out.reshape(np.shape(a))


def erf_ref(a):
    return np.vectorize(math.erf, otypes=[np.float64])(a)


def gelu_tanh_ref(a):
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))


def lse_ref(a):
    return np.log(np.exp(a).sum()) if a.size else np.array(-np.inf)


def var_ref(a, correction=1, axis=None):
    n = a.size if axis is None else a.shape[axis]
    with np.errstate(all="ignore"):
        centered = a - a.mean(axis=axis, keepdims=True)
        return (centered ** 2).sum(axis=axis) / max(n - correction, 0)


def labels_for(n, classes):
    return np.arange(n) % classes


def ce_ref(x, labels, reduction="mean"):
    logp = softmax_ref(x, log=True)
    picked = -logp[np.arange(x.shape[0]), labels]
    with np.errstate(all="ignore"):
        return {"none": picked, "sum": picked.sum(), "mean": picked.mean()}[reduction]


def bce_ref(x, y):
    with np.errstate(all="ignore"):
        return (np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))).mean()


def conv_ref(x, w, b, stride=1, padding=1):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("ncijkl,ockl->noij", win, w) + b[:, None, None]


def pool_ref(x, k, reduce):
    return reduce(sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::k, ::k], axis=(-2, -1))


def bn_ref(x, w, b, mean=None, var=None, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    axes = (0,) + tuple(range(2, x.ndim))
    if mean is None:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape)
            + b.reshape(shape))


def ln_ref(x, w, b, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * w + b


def dropout_ref(a):
    dt.manual_seed(7)
    from dltutor.autograd.rng import generator
    keep = generator().random(a.shape) >= 0.5
    return a * keep * 2.0


def dropout_call(a):
    dt.manual_seed(7)
    return F.dropout(a, 0.5)


def basic_index(a):      # 0-d takes only an empty index; others a strided slice of the last axis
    return (None, Ellipsis) if a.ndim == 0 else (Ellipsis, slice(None, None, -2))


def picks(a):            # an integer array that picks row 0 twice (gradients add up)
    return np.zeros((0 if a.shape[0] == 0 else 2,), dtype=np.int64)


def neg_dim_max(a):
    return dt.max(a, dim=-1).values


def neg_dim_max_ref(a):
    return a.max(axis=-1) if a.ndim else a


# The 0-d forms of the reductions along a dimension: PyTorch takes dim 0 or -1 of a 0-d tensor.
OPS = [
    # arithmetic: operators with broadcasting ((dt.add etc. are the same functions)
    binary("add", lambda a, b: a + b, np.add, covers=("__add__", "add")),
    binary("sub", lambda a, b: a - b, np.subtract, covers=("__sub__", "sub")),
    binary("mul", lambda a, b: a * b, np.multiply, covers=("__mul__", "mul")),
    binary("div", lambda a, b: a / b, np.divide, ("any", "pos"), covers=("__truediv__", "div")),
    binary("pow", lambda a, b: a ** b, np.power, ("pos", "any"), covers=("__pow__",)),
    binary("maximum", dt.maximum, np.maximum, ("distinct", "distinct")),
    binary("minimum", lambda a, b: a.minimum(b), np.minimum, ("distinct", "distinct")),
    binary("max_of_two", dt.max, np.maximum, ("distinct", "distinct")),
    binary("where", lambda a, b: dt.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b),
           ("away", "any")),
    # with a Python number
    unary("neg", lambda a: -a, np.negative, covers=("__neg__",)),
    unary("radd", lambda a: 2.5 + a, lambda a: 2.5 + a, covers=("__radd__",)),
    unary("rsub", lambda a: 1.0 - a, lambda a: 1.0 - a, covers=("__rsub__",)),
    unary("rmul", lambda a: 2.0 * a, lambda a: 2.0 * a, covers=("__rmul__",)),
    unary("rdiv", lambda a: 2.0 / a, lambda a: 2.0 / a, "pos", covers=("__rtruediv__",)),
    unary("rpow", lambda a: 2.0 ** a, lambda a: 2.0 ** a, covers=("__rpow__",)),
    unary("pow_square", lambda a: a ** 2, np.square),
    unary("pow_cube", lambda a: a.pow(3), lambda a: a ** 3),
    unary("pow_half", lambda a: dt.pow(a, 0.5), np.sqrt, "pos"),
    unary("pow_zero", lambda a: a ** 0, lambda a: a ** 0),
    # elementwise
    unary("exp", dt.exp, np.exp),
    unary("log", lambda a: a.log(), np.log, "pos"),
    unary("sqrt", dt.sqrt, np.sqrt, "pos"),
    unary("abs", lambda a: abs(a), np.abs, "away", covers=("__abs__",)),
    unary("tanh", dt.tanh, np.tanh),
    unary("sigmoid", dt.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    unary("relu", F.relu, lambda a: np.maximum(a, 0), "away"),
    unary("leaky_relu", lambda a: F.leaky_relu(a, 0.1), lambda a: np.where(a > 0, a, 0.1 * a),
          "away"),
    unary("erf", dt.erf, erf_ref),
    unary("gelu", F.gelu, lambda a: a * 0.5 * (1 + erf_ref(a / math.sqrt(2)))),
    unary("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), gelu_tanh_ref),
    unary("clip", lambda a: dt.clip(a, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), "clip",
          covers=("clamp",)),
    unary("clip_min_only", lambda a: a.clamp(min=0.5), lambda a: np.maximum(a, 0.5), "clip"),
    unary("dropout", dropout_call, dropout_ref),
    unary("clone", lambda a: a.clone(), np.copy),
    unary("double", lambda a: a.double(), lambda a: a, out_dtype="float64",
          covers=("to", "astype", "type", "cast")),
    unary("float", lambda a: a.float(), lambda a: a, out_dtype="float32"),
    # reductions (a dim of a 0-d tensor is 0 or -1, as in PyTorch)
    unary("sum", lambda a: a.sum(), np.sum),
    unary("sum_dim0", lambda a: dt.sum(a, dim=0), lambda a: a.sum(axis=0) if a.ndim else a),
    unary("mean", lambda a: a.mean(), np.mean),
    unary("mean_dim0_keepdim", lambda a: a.mean(dim=0, keepdim=True),
          lambda a: a.mean(axis=0, keepdims=True) if a.ndim else a),
    unary("max", lambda a: a.max(), np.max, "distinct", refused={"empty": ValueError}),
    unary("min", dt.min, np.min, "distinct", refused={"empty": ValueError}),
    unary("max_dim", neg_dim_max, neg_dim_max_ref, "distinct"),
    unary("min_dim_values", lambda a: a.min(-1, keepdim=True)[0],
          lambda a: a.min(axis=-1, keepdims=True) if a.ndim else a, "distinct"),
    unary("amax", lambda a: a.amax(dim=-1), neg_dim_max_ref, "distinct"),
    unary("amin", lambda a: dt.amin(a, -1), lambda a: a.min(axis=-1) if a.ndim else a,
          "distinct"),
    unary("norm", lambda a: a.norm(), lambda a: np.sqrt((a * a).sum()), "away"),
    unary("norm_p1", lambda a: dt.norm(a, p=1), lambda a: np.abs(a).sum(), "away"),
    unary("norm_p3", lambda a: dt.norm(a, p=3), lambda a: (np.abs(a) ** 3).sum() ** (1 / 3),
          "away"),
    unary("norm_inf", lambda a: dt.norm(a, p=math.inf), lambda a: np.abs(a).max(), "distinct",
          refused={"empty": ValueError}),
    unary("var", lambda a: a.var(), var_ref),
    unary("var_population", lambda a: dt.var(a, correction=0), lambda a: var_ref(a, 0)),
    unary("std", lambda a: a.std(), lambda a: np.sqrt(var_ref(a))),
    unary("logsumexp", lambda a: a.logsumexp(), lse_ref),
    unary("softmax", lambda a: a.softmax(-1), softmax_ref),
    unary("log_softmax", lambda a: F.log_softmax(a, dim=-1), lambda a: softmax_ref(a, True)),
    # shapes
    unary("reshape", lambda a: a.reshape(-1), np.ravel, covers=("view",)),
    unary("flatten", F.flatten, lambda a: a.reshape(-1)),
    unary("unsqueeze", lambda a: a.unsqueeze(0), lambda a: a[None]),
    unary("squeeze", lambda a: a.squeeze(), np.squeeze),
    unary("permute", lambda a: a.permute(*reversed(range(a.ndim))), np.transpose),
    unary("transpose", lambda a: a.transpose(0, -1), lambda a: np.swapaxes(a, 0, -1)
          if a.ndim else a),
    unary("T", lambda a: a.T, np.transpose),
    unary("expand", lambda a: a.expand(2, *a.shape), lambda a: np.broadcast_to(a, (2,) + a.shape)),
    unary("broadcast_to", lambda a: a.broadcast_to((2,) + a.shape),
          lambda a: np.broadcast_to(a, (2,) + a.shape)),
    unary("getitem_basic", lambda a: a[basic_index(a.data)], lambda a: a[basic_index(a)],
          covers=("__getitem__",)),
    unary("getitem_int_array", lambda a: a[dt.tensor(picks(a.data))], lambda a: a[picks(a)],
          refused={"0d": IndexError}),
    unary("getitem_mask", lambda a: a[a > 0], lambda a: a[a > 0], "away"),
    Op("concat", lambda a, b: dt.cat([a, b]), lambda a, b: np.concatenate([a, b]),
       {"empty": ((0, 3), (2, 3)), "one": ((1,), (1,)), "noncontig": ((3, 2), (3, 2)),
        "0d": ((), ())}, ("any", "any"), refused={"0d": ValueError}, covers=("cat",)),
    Op("stack", lambda a, b: dt.stack([a, b], dim=-1), lambda a, b: np.stack([a, b], -1),
       dict(BINARY, empty=((0, 3), (0, 3)), broadcast=((2, 1), (3,))), ("any", "any"),
       refused={"broadcast": ValueError}),
    # matrix products
    Op("matmul", lambda a, b: a @ b, np.matmul,
       {"0d": ((), ()), "empty": ((0, 3), (3, 2)), "one": ((1,), (1,)),
        "noncontig": ((3, 2), (2, 3)), "broadcast": ((2, 1, 2, 3), (4, 3, 2))},
       ("any", "any"), refused={"0d": ValueError}, covers=("__matmul__",)),
    Op("matmul_inner_empty", dt.matmul, np.matmul, {"empty": ((2, 0), (0, 3))}, ("any", "any")),
    Op("rmatmul", lambda b: np.ones((2, 3), b.dtype) @ b, lambda b: np.ones((2, 3)) @ b,
       {"noncontig": ((3, 2),), "one": ((3,),)}, covers=("__rmatmul__",)),
    Op("linear", F.linear, lambda x, w, b: x @ w.T + b,
       {"0d": ((), (2, 3), (2,)), "empty": ((0, 3), (2, 3), (2,)),
        "one": ((1, 1), (1, 1), (1,)), "noncontig": ((4, 3), (2, 3), (2,)),
        "broadcast": ((2, 3), (2, 3), ())}, ("any", "any", "any"), refused={"0d": ValueError}),
]

# Losses and layers: labels, indices and kernel sizes come with each kind as ``extra``.
CE_SHAPES = {"0d": ((),), "empty": ((0, 3),), "one": ((1, 1),), "noncontig": ((4, 3),)}
CE_LABELS = {k: (labels_for(*s[0]),) if len(s[0]) == 2 else (np.zeros((), np.int64),)
             for k, s in CE_SHAPES.items()}
IMAGES = {"0d": ((), (2, 2, 3, 3), (2,)), "empty": ((0, 2, 4, 4), (3, 2, 3, 3), (3,)),
          "one": ((1, 1, 1, 1), (1, 1, 1, 1), (1,)),
          "noncontig": ((1, 2, 4, 4), (2, 2, 3, 3), (2,))}
EMBEDDING_INDICES = {"0d": (np.array(2),), "empty": (np.zeros((0,), np.int64),),
                     "one": (np.array([0]),), "noncontig": (np.array([[0, 2], [2, 3]]),)}
RUNNING = (np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 1.0]))

OPS += [
    Op(f"cross_entropy_{r}", lambda x, y, r=r: F.cross_entropy(x, dt.tensor(y), reduction=r),
       lambda x, y, r=r: ce_ref(x, y, r), CE_SHAPES, extra=CE_LABELS,
       refused={"0d": ValueError}, covers=("cross_entropy",)) for r in ("mean", "sum", "none")
] + [
    binary("mse_loss", F.mse_loss, lambda a, b: ((a - b) ** 2).mean()),
    binary("mse_loss_sum", lambda a, b: F.mse_loss(a, b, reduction="sum"),
           lambda a, b: ((a - b) ** 2 + 0 * b).sum()),
    binary("mse_loss_none", lambda a, b: F.mse_loss(a, b, reduction="none"),
           lambda a, b: (a - b) ** 2),
    binary("l1_loss", F.l1_loss, lambda a, b: np.abs(a - b).mean(), ("away", "pos")),
    # PyTorch refuses a target whose shape differs from the input's (mse_loss broadcasts).
    binary("bce_with_logits", F.binary_cross_entropy_with_logits, bce_ref, ("any", "unit"),
           refused={"broadcast": ValueError}, covers=("binary_cross_entropy_with_logits",)),
    Op("embedding", lambda w, i: F.embedding(dt.tensor(i), w), lambda w, i: w[i],
       {"0d": ((4, 3),), "empty": ((4, 3),), "one": ((1, 1),), "noncontig": ((4, 3),)},
       extra=EMBEDDING_INDICES),
    Op("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), conv_ref, IMAGES,
       ("any", "any", "any"), refused={"0d": ValueError}),
    Op("max_pool2d", lambda x, k: F.max_pool2d(x, k), lambda x, k: pool_ref(x, k, np.max),
       {k: s[:1] for k, s in IMAGES.items()}, ("distinct",), refused={"0d": ValueError},
       extra={"0d": (2,), "empty": (2,), "one": (1,), "noncontig": (2,)}),
    Op("avg_pool2d", lambda x, k: F.avg_pool2d(x, k), lambda x, k: pool_ref(x, k, np.mean),
       {k: s[:1] for k, s in IMAGES.items()}, refused={"0d": ValueError},
       extra={"0d": (2,), "empty": (2,), "one": (1,), "noncontig": (2,)}),
    # Training on one value per channel is refused by PyTorch too; on an empty batch PyTorch
    # returns an empty result where the kit refuses (tests/frameworks/test_every_shape_torch.py).
    Op("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
       bn_ref, {"0d": ((), (3,), (3,)), "empty": ((0, 3), (3,), (3,)),
                "one": ((1, 3), (3,), (3,)), "noncontig": ((4, 3), (3,), (3,))},
       ("any", "pos", "any"), refused={"0d": ValueError, "empty": ValueError,
                                        "one": ValueError}, covers=("batch_norm",)),
    Op("batch_norm_eval", lambda x, w, b: F.batch_norm(
        x, dt.tensor(RUNNING[0], dtype=x.dtype), dt.tensor(RUNNING[1], dtype=x.dtype), w, b),
       lambda x, w, b: bn_ref(x, w, b, *RUNNING),
       {"0d": ((), (3,), (3,)), "empty": ((0, 3), (3,), (3,)), "one": ((1, 3), (3,), (3,)),
        "noncontig": ((2, 3, 2, 2), (3,), (3,))}, ("any", "pos", "any"),
       refused={"0d": ValueError}),
    Op("layer_norm", lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b), ln_ref,
       {"empty": ((0, 3), (3,), (3,)), "one": ((1, 1), (1,), (1,)),
        "noncontig": ((3, 2), (2,), (2,))}, ("any", "pos", "any")),
]

# Ops whose result is an integer or bool tensor: forward only (no gradient flows through).
OPS += [
    unary("argmax", lambda a: a.argmax(), np.argmax, "distinct", grad=False,
          refused={"empty": ValueError}),
    unary("argmin_dim", lambda a: dt.argmin(a, dim=-1), lambda a: np.argmin(a, axis=-1)
          if a.ndim else np.array(0), "distinct", grad=False),
    unary("max_dim_indices", lambda a: a.max(dim=-1).indices, lambda a: np.argmax(a, axis=-1)
          if a.ndim else np.array(0), "distinct", grad=False),
] + [
    binary(f"compare{op}", lambda a, b, op=op: getattr(a, op)(b),
           lambda a, b, op=op: getattr(a, op)(b), grad=False, covers=(op,))
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")
]
