"""The autograd engine: tensors, the ops on them, and backward.

* ``function.py``: Function (one op) and how calling it records the graph; ``no_grad``,
  ``detect_anomaly``
* ``engine.py``: backward, from a loss to the leaves
* ``tensor.py``: Tensor, with its operators and methods; ``placement.py``: what its ``to()``
  (and Module's) asks for
* ``dtypes.py``, ``creation.py``, ``rng.py``: element types, making tensors, random numbers
* ``workspace.py``: scratch arrays big ops (the convolution) borrow for a step and give back
* ``ops/``: the differentiable ops, one module per kind

>>> from dltutor.autograd import Tensor, Function, no_grad
"""
from .creation import (arange, eye, full, normal, ones, ones_like, rand, randint, randn, tensor,
                       zeros, zeros_like)
from .dtypes import as_dtype, bool_, float16, float32, float64, int32, int64
from .engine import backward
from .function import (AnomalyError, Function, detect_anomaly, enable_grad, is_grad_enabled,
                       no_grad, set_grad_enabled)
from .ops import (abs, add, amax, amin, argmax, argmin, broadcast_to, cast, cat, clamp, clip,
                  clone, concat, div, erf, exp, expand, flatten, gelu, getitem, leaky_relu,
                  linear, log, log_softmax, logsumexp, matmul, max, maximum, mean, min, minimum,
                  mul, neg, norm, permute, pow, relu, reshape, sigmoid, softmax, sqrt, squeeze,
                  stack, std, sub, sum, tanh, transpose, unsqueeze, var, where)
from .rng import manual_seed
from .tensor import Tensor

__all__ = [
    "arange",
    "as_dtype",
    "bool_",
    "eye",
    "float16",
    "float32",
    "float64",
    "full",
    "int32",
    "int64",
    "manual_seed",
    "normal",
    "ones",
    "ones_like",
    "rand",
    "randint",
    "randn",
    "tensor",
    "zeros",
    "zeros_like",
    "abs",
    "add",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "broadcast_to",
    "cast",
    "cat",
    "clamp",
    "clip",
    "clone",
    "concat",
    "div",
    "erf",
    "exp",
    "gelu",
    "expand",
    "flatten",
    "getitem",
    "leaky_relu",
    "linear",
    "log",
    "log_softmax",
    "logsumexp",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mul",
    "neg",
    "norm",
    "permute",
    "pow",
    "relu",
    "reshape",
    "sigmoid",
    "softmax",
    "sqrt",
    "squeeze",
    "stack",
    "std",
    "sub",
    "sum",
    "tanh",
    "transpose",
    "unsqueeze",
    "var",
    "where",
    "AnomalyError",
    "Function",
    "Tensor",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]
