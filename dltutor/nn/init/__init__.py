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
Paddle code translates line by line (see :mod:`dltutor.nn.init.initializers`):

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

# The package: distributions.py (uniform_, normal_, trunc_normal_, constants, eye_,
# orthogonal_, assign_), scaled.py (gains, fans, Xavier, Kaiming, reset_linear_), and
# initializers.py (Paddle's objects, which call those functions).
from .distributions import (assign_, constant_, eye_, normal_, ones_, orthogonal_, trunc_normal_,
                            uniform_, zeros_)
from .initializers import (Assign, Constant, Initializer, KaimingNormal, KaimingUniform, Normal,
                           TruncatedNormal, Uniform, XavierNormal, XavierUniform)
from .scaled import (MODES, calculate_fan_in_and_fan_out, calculate_gain, kaiming_normal_,
                     kaiming_uniform_, reset_linear_, xavier_normal_, xavier_uniform_)

#: PyTorch's name for it (``torch.nn.init._calculate_fan_in_and_fan_out``), which code ported
#: from PyTorch calls.
_calculate_fan_in_and_fan_out = calculate_fan_in_and_fan_out

__all__ = [
    "calculate_gain",
    "calculate_fan_in_and_fan_out",
    "MODES",
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
    "Initializer", "Normal", "Uniform", "TruncatedNormal", "Constant", "XavierUniform",
    "XavierNormal", "KaimingUniform", "KaimingNormal", "Assign",
]
