"""Building networks: Parameter, Module, containers, layers (lazy ones too), losses, initializers, functional ops.

>>> from dltutor import nn
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> net
Sequential(
  (0): Linear(in_features=4, out_features=8, bias=True)
  (1): ReLU()
  (2): Linear(in_features=8, out_features=1, bias=True)
)
"""
from . import functional, init, utils
from .containers import ModuleDict, ModuleList, Sequential
from .parameter_containers import ParameterDict, ParameterList
from .activations import (GELU, Dropout, Flatten, Identity, LeakyReLU, LogSoftmax, ReLU, Sigmoid,
                          Softmax, Tanh)
from .layers import Conv2d, Embedding, Linear
from .lazy import LazyConv2d, LazyLinear
from .losses import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AvgPool2d, GlobalAvgPool2d, MaxPool2d
from .module import Layer, Module
from .paddle_names import ParamAttr
from .state_dict import LoadResult, StateDictError
from .parameter import Parameter, UninitializedParameter, UninitializedParameterError

__all__ = ["functional", "init", "utils", "Parameter", "Module", "Layer", "ParamAttr", "LoadResult",
           "StateDictError",
           "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Linear", "Conv2d", "LazyLinear", "LazyConv2d",
           "UninitializedParameter", "UninitializedParameterError", "Embedding", "BatchNorm1d",
           "BatchNorm2d", "LayerNorm", "Dropout", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d",
           "Flatten", "Identity", "ReLU", "LeakyReLU", "Tanh", "Sigmoid", "GELU", "Softmax",
           "LogSoftmax", "CrossEntropyLoss", "MSELoss", "L1Loss", "BCEWithLogitsLoss"]
