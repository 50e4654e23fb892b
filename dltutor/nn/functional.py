"""The functional form of layers: plain functions on tensors (PyTorch's ``torch.nn.functional``).

>>> import dltutor as dt
>>> from dltutor.nn import functional as F
>>> F.relu(dt.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""
from ..autograd.ops import (avg_pool2d, batch_norm, binary_cross_entropy_with_logits, conv2d,
                            cross_entropy, dropout, embedding, flatten, gelu, l1_loss, layer_norm,
                            leaky_relu, linear, log_softmax, logsumexp, max_pool2d, mse_loss,
                            relu, sigmoid, softmax, tanh)

__all__ = ["avg_pool2d", "batch_norm", "binary_cross_entropy_with_logits", "conv2d",
           "cross_entropy", "dropout", "embedding", "flatten", "l1_loss",
           "layer_norm", "max_pool2d", "mse_loss", "gelu", "leaky_relu", "linear", "log_softmax",
           "logsumexp", "relu", "sigmoid", "softmax", "tanh"]
