"""Statistics of a network at work, as plain numbers: no matplotlib here.

=============================  ==================================================================
:func:`activation_stats`       ``(name, mean, std)`` of each layer's output on a batch
:func:`gradient_stats`         ``(name, mean, std)`` of the gradient w.r.t. each layer's output
:func:`eval_mode`              evaluate a model in eval mode, then give every module its own
                               train/eval flag back
:func:`as_model_input`         an array or tensor as a tensor the model can take (its device
                               and float dtype)
=============================  ==================================================================

``dltutor.plot.layer_statistics`` draws the first two; a test or your own code can read them
directly:

>>> import dltutor as dt
>>> from dltutor import nn, stats
>>> _ = dt.manual_seed(0)
>>> net = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
>>> [name for name, mean, std in stats.activation_stats(net, dt.randn(8, 4))]
['0', '1']
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from . import backend as B
from .autograd import Tensor, no_grad, tensor
from .nn import Module

__all__ = ["activation_stats", "gradient_stats", "eval_mode", "as_model_input"]


@contextmanager
def eval_mode(model: Module) -> Iterator[Module]:
    """Run the block with ``model`` in eval mode; afterwards every module gets back its OWN
    train/eval flag, also when the block raises.

    Not ``model.train()`` afterwards: that would switch on a BatchNorm or Dropout you had put
    in eval mode on purpose (chapter 08 freezes a BatchNorm's statistics that way). It does
    not turn off gradients: combine it with ``dt.no_grad()`` to evaluate.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    >>> _ = net[1].eval()                       # this Dropout stays off
    >>> with eval_mode(net), dt.no_grad():
    ...     [m.training for m in net.modules()]
    [False, False, False]
    >>> [m.training for m in net.modules()]
    [True, True, False]
    """
    modes = [(module, module.training) for module in model.modules()]
    try:
        model.eval()
        yield model
    finally:
        for module, mode in modes:
            module.training = mode


def as_model_input(model: Module, x: Any, requires_grad: bool = False) -> Tensor:
    """``x`` (a NumPy or CuPy array, a list or a Tensor) as a fresh tensor on the model's
    device, with the model's float dtype (float64 data for a float32 model becomes float32).

    >>> import numpy as np
    >>> from dltutor import nn
    >>> as_model_input(nn.Linear(2, 1), np.zeros((3, 2))).dtype        # float64 in
    dtype('float32')
    """
    data = x.data if isinstance(x, Tensor) else x
    array = np.asarray(B.to_numpy(data) if B.backend_of(data) is not None else data)
    param = next(iter(model.parameters()), None)
    if param is not None and array.dtype.kind == "f":
        array = array.astype(param.dtype, copy=False)
    if param is not None and param.device != "cpu":
        return tensor(tensor(array).to(param.device).data, requires_grad=requires_grad)
    return tensor(array, requires_grad=requires_grad)


def activation_stats(model: Module, x: Any) -> list[tuple[str, float, float]]:
    """``(name, mean, std)`` of the output of each layer (direct child) of ``model`` on ``x``.

    One forward pass under ``no_grad()`` with forward hooks, in the order the layers ran (a
    layer used twice appears twice); the hooks are removed afterwards. The std is NumPy's
    (``np.std``, over every element of the batch). The model runs in the mode it is in.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> from dltutor.stats import activation_stats
    >>> _ = dt.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(100, 100), nn.Tanh(), nn.Linear(100, 100), nn.Tanh())
    >>> [(name, round(std, 2)) for name, mean, std in activation_stats(net, dt.randn(256, 100))]
    [('0', 0.58), ('1', 0.46), ('2', 0.27), ('3', 0.26)]
    """
    return _mean_and_std(_layer_pass(model, x, gradient=False, loss_fn=None))


def gradient_stats(model: Module, x: Any, loss_fn: Callable[[Tensor], Tensor] | None = None
                   ) -> list[tuple[str, float, float]]:
    """``(name, mean, std)`` of the gradient with respect to each layer's OUTPUT.

    Runs ``model(x)``, then backward of ``loss_fn(output)`` (default: ``output.sum()``), with
    a gradient hook on every layer's output tensor. This is the signal that flows back
    through the network: if it shrinks layer by layer the early layers barely learn. With the
    default ``output.sum()`` the gradient w.r.t. the last output is all ones (std 0), so every
    change of scale you see comes from the backward pass itself. The model's parameter
    gradients are left as they were, and all hooks are removed.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> from dltutor.stats import gradient_stats
    >>> _ = dt.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1))
    >>> stats = gradient_stats(net, dt.randn(32, 10))
    >>> [name for name, mean, std in stats], stats[-1][2]      # d(sum)/d(output) is all ones
    (['0', '1', '2'], 0.0)
    >>> net[0].weight.grad is None
    True
    """
    return _mean_and_std(_layer_pass(model, x, gradient=True, loss_fn=loss_fn))


def _mean_and_std(pairs: list[tuple[str, np.ndarray]]) -> list[tuple[str, float, float]]:
    return [(name, float(np.mean(a)), float(np.std(a))) for name, a in pairs]


def _numpy(value: Any) -> np.ndarray:
    return B.to_numpy(value.data if isinstance(value, Tensor) else value)


def _layer_pass(model: Module, x: Any, gradient: bool,
                loss_fn: Callable[[Tensor], Tensor] | None) -> list[tuple[str, np.ndarray]]:
    """Arrays per direct child of ``model``, in the order they ran: outputs, or the
    gradients of the loss w.r.t. the outputs. Hooks are removed and parameter gradients
    restored before returning."""
    names = {id(m): n for n, m in model.named_children()}
    if not names:
        raise ValueError(f"layer statistics need a model with layers (children), e.g. "
                         f"nn.Sequential(...); {type(model).__name__} has none")
    order: list[str] = []
    arrays: dict[int, np.ndarray] = {}
    tensor_handles: list[Any] = []

    def forward_hook(module: Any, inputs: tuple, output: Any) -> None:
        index = len(order)
        order.append(names[id(module)])
        if not gradient:
            arrays[index] = _numpy(output)
        elif isinstance(output, Tensor) and output.requires_grad:
            def grad_hook(grad: Any, index: int = index) -> None:
                arrays[index] = _numpy(grad)
            tensor_handles.append(output.register_hook(grad_hook))

    handles = [m.register_forward_hook(forward_hook) for _, m in model.named_children()]
    with _gradients_kept(model):
        try:
            _forward_and_backward(model, x, gradient, loss_fn)
        finally:
            for handle in handles + tensor_handles:
                handle.remove()
    return [(name, arrays.get(i, np.array([np.nan]))) for i, name in enumerate(order)]


def _forward_and_backward(model: Module, x: Any, gradient: bool,
                          loss_fn: Callable[[Tensor], Tensor] | None) -> None:
    """A forward under ``no_grad()`` for activations; forward and backward for gradients."""
    if gradient:
        out = model(as_model_input(model, x, requires_grad=True))
        target = loss_fn(out) if loss_fn is not None else out.sum()
        target.backward()
    else:
        with no_grad():
            model(as_model_input(model, x))


@contextmanager
def _gradients_kept(model: Module) -> Iterator[None]:
    """Give every parameter back the gradient it had: backward adds into existing gradients
    (replacing their ``.data``), so both the tensor and its data are kept."""
    saved = [(p, p.grad, None if p.grad is None else p.grad.data) for p in model.parameters()]
    try:
        yield
    finally:
        for p, grad, data in saved:
            if grad is not None and data is not None:     # (data is None with grad)
                grad.data = data
            p.grad = grad
