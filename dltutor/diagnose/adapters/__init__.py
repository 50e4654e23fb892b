"""The diagnostics on any framework's model: one interface they ask, one adapter per framework.

``summary``, ``explain_lr``, ``why_not_updating`` and ``ties`` never look inside a model or an
optimizer themselves: they ask an :class:`~dltutor.diagnose.adapters.base.Adapter` ("does this
parameter require a gradient?", "which decay does the optimizer give it?"), and
:func:`adapter_for` picks the one for the objects they were given:

=========================  ====================================================================
``native.py``              dltutor's own modules and optimizers
``torch_adapter.py``       a ``torch.nn.Module`` with a ``torch.optim.Optimizer``
``paddle_adapter.py``      a ``paddle.nn.Layer`` with a ``paddle.optimizer.Optimizer``
=========================  ====================================================================

A framework is recognised by where its classes come from (a class of your own that subclasses
``torch.nn.Module`` counts as PyTorch's), so ``import dltutor`` never imports PyTorch or
Paddle: an adapter module is imported only when one of its framework's objects arrives.

>>> from dltutor import nn, optim
>>> net = nn.Linear(2, 1)
>>> adapter_for(net, optim.SGD(net.parameters(), lr=0.1)).framework
'dltutor'
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ...i18n import text
from .base import Adapter


def framework_of(obj: Any) -> str:
    """``"torch"``, ``"paddle"`` or ``"dltutor"``: whose classes ``obj`` is made of.

    >>> from dltutor import nn
    >>> framework_of(nn.Linear(2, 1)), framework_of(None)
    ('dltutor', 'dltutor')
    """
    for cls in type(obj).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in ("torch", "paddle"):
            return root
    return "dltutor"


def adapter_for(model: Any, optimizer: Any = None) -> Adapter:
    """The adapter for ``model`` (and ``optimizer``, which must come from the same framework).

    >>> from dltutor import nn
    >>> adapter_for(nn.Linear(2, 1)).framework
    'dltutor'
    """
    frameworks = {framework_of(obj) for obj in (model, optimizer) if obj is not None}
    if len(frameworks) > 1:
        names = " and ".join(f"{type(obj).__name__} ({framework_of(obj)})"
                             for obj in (model, optimizer))
        raise TypeError(f"the model and the optimizer come from different frameworks: {names}. "
                        "Pass the optimizer that trains this model")
    framework = frameworks.pop() if frameworks else "dltutor"
    if framework == "torch":
        from .torch_adapter import TorchAdapter
        return TorchAdapter()
    if framework == "paddle":
        from .paddle_adapter import PaddleAdapter
        return PaddleAdapter()
    from .native import NativeAdapter
    return NativeAdapter()


def import_framework(name: str) -> ModuleType | None:
    """``import torch`` (or ``paddle``) for an example that needs it, or, where it is not
    installed, None and one line saying the example is skipped: the kit never needs either.

    >>> import_framework("no_such_framework") is None
    no_such_framework is not installed here, so this example is skipped (pip install no_such_framework runs it).
    True
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        package = {"paddle": "paddlepaddle"}.get(name, name)
        print(text("diagnose.framework_missing", framework=name, package=package))
        return None


__all__ = ["Adapter", "adapter_for", "framework_of", "import_framework"]
