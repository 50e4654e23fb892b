"""The differentiable ops, one module per kind. In each module, an op is a
:class:`~dltutor.autograd.function.Function` subclass with ``forward`` and ``backward`` side by
side, followed by the lowercase function learners call (``dt.exp(x)``, ``x.exp()``, ``x + y``).

* ``arithmetic``: ``+ - * / **``, maximum, minimum, where, comparisons
* ``elementwise``: exp, log, sqrt, abs, the activations, erf, clip, dropout
* ``gelu``: gelu, exact and in its tanh form
* ``reduce``: sum, mean, max, min, amax, amin, norm
* ``variance``: var, std
* ``softmax``: softmax, log_softmax, logsumexp
* ``shape``: reshape, flatten, (un)squeeze, permute, transpose, broadcast_to, expand, concat, stack
* ``indexing``: ``t[index]``, embedding, argmax, argmin
* ``linalg``: matmul, linear
* ``losses``: cross_entropy, mse_loss, l1_loss, binary_cross_entropy_with_logits
* ``conv``: conv2d, max_pool2d, avg_pool2d
* ``norm``: batch_norm, layer_norm
* ``convert``: cast (dtypes), to_backend (devices), clone (a copy)

Helpers the ops share: ``operands`` (making and promoting inputs, naming axes) and ``gates``
(a gradient that relu, clamp, maximum/minimum or max pooling stops is exactly 0).

Ops work on raw backend arrays and take their array module from the arrays
(``backend.get_array_module``), never from ``numpy`` directly, so the same code runs on CuPy.
They never reduce broadcast gradients themselves: the engine does that in one place.

>>> import dltutor as dt
>>> x = dt.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> dt.log_softmax(x, dim=1).sum().backward()
>>> [round(v, 4) for v in x.grad.tolist()[0]]
[0.7299, 0.2658, -0.9957]
"""
from .arithmetic import (Add, Div, Maximum, Minimum, Mul, Neg, Pow, PowConst, Sub, Where, add,
                         compare, div, maximum, minimum, mul, neg, pow, sub, where)
from .conv import AvgPool2d, Conv2d, MaxPool2d, as_pair, avg_pool2d, conv2d, max_pool2d
from .convert import Cast, Clone, ToBackend, cast, clone, to_backend
from .elementwise import (Abs, Clip, Dropout, Erf, Exp, LeakyRelu, Log, Relu, Sigmoid, Sqrt,
                          Tanh, abs, clamp, clip, dropout, erf, exp, leaky_relu, log, relu,
                          sigmoid, sqrt, tanh)
from .gelu import Gelu, gelu
from .indexing import Embedding, GetItem, argmax, argmin, embedding, getitem, index_arrays
from .linalg import Linear, Matmul, linear, matmul
from .losses import (BCEWithLogits, CrossEntropy, MSELoss, binary_cross_entropy_with_logits,
                     check_reduction, cross_entropy, l1_loss, mse_loss)
from .norm import BatchNorm, batch_norm, layer_norm
from .operands import as_tensor
from .reduce import (Max, Mean, Min, Norm, Sum, TakeAlong, ValuesIndices, amax, amin, max, mean,
                     min, norm, sum)
from .shape import (BroadcastTo, Concat, Permute, Reshape, Stack, broadcast_to, cat, concat,
                    expand, flatten, permute, reshape, squeeze, stack, transpose, unsqueeze)
from .softmax import LogSoftmax, LogSumExp, Softmax, log_softmax, logsumexp, softmax
from .variance import Std, Var, std, var

# Everything above is the package's index, re-exported: autograd/__init__.py and the tests
# import these names from here.
__all__ = [
    "Add", "Div", "Maximum", "Minimum", "Mul", "Neg", "Pow", "PowConst", "Sub", "Where", "add",
    "compare", "div", "maximum", "minimum", "mul", "neg", "pow", "sub", "where",
    "AvgPool2d", "Conv2d", "MaxPool2d", "as_pair", "avg_pool2d", "conv2d", "max_pool2d",
    "Cast", "Clone", "ToBackend", "cast", "clone", "to_backend",
    "Abs", "Clip", "Dropout", "Erf", "Exp", "LeakyRelu", "Log", "Relu", "Sigmoid", "Sqrt", "Tanh",
    "abs", "clamp", "clip", "dropout", "erf", "exp", "leaky_relu", "log", "relu", "sigmoid",
    "sqrt", "tanh",
    "Gelu", "gelu",
    "Embedding", "GetItem", "argmax", "argmin", "embedding", "getitem", "index_arrays",
    "Linear", "Matmul", "linear", "matmul",
    "BCEWithLogits", "CrossEntropy", "MSELoss", "binary_cross_entropy_with_logits",
    "check_reduction", "cross_entropy", "l1_loss", "mse_loss",
    "BatchNorm", "batch_norm", "layer_norm",
    "as_tensor",
    "Max", "Mean", "Min", "Norm", "Sum", "TakeAlong", "ValuesIndices", "amax", "amin",
    "max", "mean", "min", "norm", "sum",
    "BroadcastTo", "Concat", "Permute", "Reshape", "Stack", "broadcast_to", "cat", "concat",
    "expand", "flatten", "permute", "reshape", "squeeze", "stack", "transpose", "unsqueeze",
    "LogSoftmax", "LogSumExp", "Softmax", "log_softmax", "logsumexp", "softmax",
    "Std", "Var", "std", "var",
]
