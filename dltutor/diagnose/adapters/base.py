"""The interface the diagnostics ask: what they need to know about a model, its parameters and
its optimizer, whatever framework made them.

Each method answers one question from the framework's real state; an answer the framework has
no idea of is None (PyTorch has no per-parameter lr multiplier, no regularizer object on a
parameter and no clip inside its optimizers), and the reports then say so instead of guessing.
Arrays come back as NumPy arrays, numbers as Python floats.

>>> from dltutor import nn, optim
>>> from dltutor.diagnose.adapters import adapter_for
>>> net = nn.Linear(2, 1)
>>> opt = optim.SGD(net.named_parameters(), lr=0.1)
>>> adapter = adapter_for(net, opt)
>>> entry = adapter.entries(opt)[0]
>>> entry.name, adapter.effective_lr(entry), adapter.lr_mult(entry.param)
('weight', 0.1, 1.0)
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...optim.decay import Decay
from ..buffer_check import buffer_or_unknown
from ..lookup import Entry


def framework_class(obj: Any, framework: str) -> str:
    """The name of the class of ``framework`` (``"torch"``, ``"paddle"``) that ``obj`` is or
    subclasses: a learner's ``class MySGD(torch.optim.SGD)`` follows SGD's rules, so the
    adapters look up "SGD", not "MySGD".

    >>> class Mine(dict): pass
    >>> framework_class(Mine(), "builtins"), framework_class(3, "torch")
    ('dict', 'int')
    """
    for cls in type(obj).__mro__:
        if cls.__module__.partition(".")[0] == framework:
            return cls.__name__
    return type(obj).__name__


@dataclass
class Clip:
    """The clipping an optimizer applies to one parameter's gradient: the clip described
    (``ClipGradByGlobalNorm(clip_norm=1)``), whether it applies to this parameter, the scale
    its last step applied and the scale it would apply to the current gradients (None when
    not known)."""

    description: str
    applies: bool
    last_scale: float | None
    predicted_scale: float | None


class Adapter(ABC):
    """What the diagnostics ask; one subclass per framework (native.py, torch_adapter.py,
    paddle_adapter.py). The abstract methods are what each framework must answer; the others
    have the answer all three share, or None ("no such idea")."""

    #: "dltutor", "torch" or "paddle"
    framework = ""
    #: The framework's name in sentences ("PyTorch")
    display_name = ""
    #: Whether its optimizers clip gradients themselves (PyTorch's do not: clipping is a call
    #: in the training loop, which a report cannot see)
    clips_in_optimizer = True

    # -- the model ---------------------------------------------------------------------------
    def named_parameters(self, model: Any) -> list[tuple[str, Any]]:
        """Every (name, parameter) of ``model``, a tied parameter under each of its names (all
        three frameworks spell it the same way)."""
        return list(model.named_parameters(remove_duplicate=False))

    def buffer_check(self, model: Any, name: str, param_names: list[str]) -> Any:
        """why_not_updating's answer for ``name`` when it is not a parameter: the checklist of
        a buffer, or UnknownNameError listing ``param_names`` and the buffers."""
        return buffer_or_unknown(model, name, param_names)

    # -- one parameter -----------------------------------------------------------------------
    def shape(self, param: Any) -> tuple[int, ...]:
        return tuple(int(n) for n in param.shape)

    def count(self, param: Any) -> int:
        return int(np.prod(self.shape(param), dtype=np.int64))

    def dtype(self, param: Any) -> str:
        """``"float32"`` (PyTorch and Paddle say ``torch.float32`` / ``paddle.float32``)."""
        return str(param.dtype).rpartition(".")[2]

    @abstractmethod
    def requires_grad(self, param: Any) -> bool:
        """Whether backward gives it a gradient (PyTorch's requires_grad, Paddle's
        ``not stop_gradient``)."""

    @abstractmethod
    def grad(self, param: Any) -> np.ndarray | None:
        """Its gradient as the last backward left it, or None when it has none."""

    @abstractmethod
    def values(self, param: Any) -> np.ndarray:
        """Its values now, as a NumPy array."""

    def lr_mult(self, param: Any) -> float | None:
        """Its own learning-rate multiplier (None: the framework has none)."""
        return None

    def regularizer(self, param: Any) -> Any | None:
        """Its own regularizer, as a dltutor L1Decay/L2Decay (None: none, or no such idea)."""
        return None

    def need_clip(self, param: Any) -> bool | None:
        """Whether the optimizer's clip may clip it (None: the framework has no such flag)."""
        return None

    def loss_reaches(self, loss: Any, param: Any) -> bool | None:
        """Whether ``loss`` was computed from ``param`` (None: cannot tell)."""
        return None

    # -- the optimizer -----------------------------------------------------------------------
    @abstractmethod
    def entries(self, optimizer: Any) -> list[Entry]:
        """Every parameter the optimizer holds, in its order, with its name and group."""

    @abstractmethod
    def group_lr(self, entry: Entry) -> float:
        """The learning rate of the parameter's group, now (after any scheduler)."""

    def initial_lr(self, entry: Entry) -> float | None:
        """The group's lr before a scheduler changed it (None: no scheduler said)."""
        value = entry.group.get("initial_lr")
        return None if value is None else float(value)

    def effective_lr(self, entry: Entry) -> float:
        """The number that multiplies this parameter's update: group lr x its multiplier."""
        mult = self.lr_mult(entry.param)
        return self.group_lr(entry) * (1.0 if mult is None else mult)

    @abstractmethod
    def decay(self, entry: Entry) -> Decay:
        """Which weight decay the optimizer gives this parameter (see dltutor/optim/decay.py
        for what the fields mean)."""

    def clip(self, entry: Entry) -> Clip | None:
        """The optimizer's gradient clipping, as it concerns this parameter (None: none)."""
        return None

    @abstractmethod
    def no_clip_text(self, entry: Entry) -> str:
        """What the reports say when :meth:`clip` is None."""

    def momentum_state(self, entry: Entry) -> list[tuple[str, np.ndarray]]:
        """The optimizer's momentum-like state for this parameter: (key, array) pairs."""
        return []

    # -- watching the steps (the Recorder) --------------------------------------------------
    def watch_steps(self, optimizer: Any, before: Callable[[], None],
                    after: Callable[[], None]) -> Callable[[], None]:
        """Call ``before()`` and ``after()`` around every ``optimizer.step()``; returns the
        function that stops it. PyTorch's optimizers (and dltutor's) have step hooks with one
        signature, ``hook(optimizer, args, kwargs)``; Paddle's adapter wraps ``step``."""
        handles = [optimizer.register_step_pre_hook(lambda opt, args, kwargs: before()),
                   optimizer.register_step_post_hook(lambda opt, args, kwargs: after())]

        def stop() -> None:
            for handle in handles:
                handle.remove()

        return stop
