"""Optimizers, parameter groups, per-parameter settings, clipping, regularizers, schedulers.

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> net = nn.Linear(3, 1)
>>> opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
>>> loss = net(dt.ones(4, 3)).sum()
>>> loss.backward()
>>> opt.step()
>>> opt.zero_grad()
>>> net.weight.grad is None
True
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .checkpoint import OptimizerLoadResult, OptimizerStateError
from ..nn.utils import clip_grad_norm_, clip_grad_value_   # PyTorch's address: nn.utils
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue, GradClip
from .decay import Decay
from .grad_scaler import GradScaler
from .multi_optimizer import MultiOptimizer
from .nonfinite import NonFiniteGradientError
from .optimizer import Optimizer
from .regularizer import L1Decay, L2Decay, Regularizer
from .report import StepRecord, StepReport
from .rmsprop import RMSprop
from .sgd import SGD
from .signsgd import SignSGD

__all__ = ["lr_scheduler", "Optimizer", "Decay", "OptimizerLoadResult", "OptimizerStateError",
           "NonFiniteGradientError",           "StepRecord", "StepReport",
           "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "SignSGD", "MultiOptimizer", "GradScaler",
           "clip_grad_norm_", "clip_grad_value_", "GradClip", "ClipGradByGlobalNorm",
           "ClipGradByNorm", "ClipGradByValue", "Regularizer", "L1Decay", "L2Decay"]
