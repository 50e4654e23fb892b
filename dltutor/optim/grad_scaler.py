"""Loss scaling for mixed precision: PyTorch's ``GradScaler`` (``torch.amp.GradScaler``).

**Why scale the loss.** float16 keeps about 3 decimal digits over a narrow range: its smallest
normal number is about 6e-5 and its smallest subnormal about 6e-8; anything smaller becomes
0. Gradients are often that small, so a backward pass computed in float16 can turn real
gradients into zeros, and the weights stop learning without any error. Multiplying the loss
by a large factor ``S`` (the *scale*, 65536 by default) multiplies every gradient by ``S`` too
(the chain rule is linear), which lifts them back into float16's range. Before the optimizer
uses them they are divided by ``S`` again, in float32, where they no longer underflow.

**The loop**, as in PyTorch::

    scaler.scale(loss).backward()     # gradients are S times too large
    scaler.unscale_(opt)              # optional: divide them by S now ...
    clip_grad_norm_(params, 1.0)      # ... so that the clip sees the true gradients
    scaler.step(opt)                  # unscale_ (if not done), then opt.step() unless inf/NaN
    scaler.update()                   # adjust S for the next iteration

**Choosing S by itself.** Too large a scale overflows: a gradient becomes inf or NaN. Then
``step`` skips ``opt.step()`` (the weights stay as they were) and ``update`` multiplies the scale
by ``backoff_factor`` (0.5). After ``growth_interval`` clean steps in a row (2000), ``update``
multiplies it by ``growth_factor`` (2): the scale stays near the largest value that does not
overflow. The scale is a float32 number, as in PyTorch.

Keep the parameters (the master weights) and their gradients in float32 and compute in float16
by casting activations: ``unscale_`` refuses float16 gradients, as PyTorch does.

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> w = nn.Parameter([1.0, 2.0])
>>> opt = optim.SGD([w], lr=0.5)
>>> scaler = optim.GradScaler(init_scale=1024.0)
>>> scaler.scale((w * w).sum()).backward()
>>> w.grad                      # 2w, times 1024
tensor([2048., 4096.])
>>> scaler.step(opt); scaler.update()
>>> w.data                      # w - 0.5 * 2w: the step used the unscaled gradient
array([0., 0.], dtype=float32)
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import backend as B
from ..autograd import Tensor
from ..errors import MessageKeyError
from .optimizer import display_name
from .scaler_settings import OWNER, checked_scale, float32, growth_tracker
from .scaler_settings import backoff_factor as check_backoff_factor
from .scaler_settings import growth_factor as check_growth_factor
from .scaler_settings import growth_interval as check_growth_interval

__all__ = ["GradScaler"]

STATE_KEYS = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")
# Where one optimizer is in the current iteration (PyTorch's stages): nothing done since the
# last update(); its gradients unscaled and checked; its step taken (or skipped).
READY, UNSCALED, STEPPED = "READY", "UNSCALED", "STEPPED"


def _gradients_of(optimizer: Any) -> list[Tensor]:
    """Every gradient tensor of the optimizer's parameters, each once. All are checked here,
    before any is changed: a refused ``unscale_`` leaves every gradient as it was."""
    grads: list[Tensor] = []
    seen: set[int] = set()
    index = -1
    for group in optimizer.param_groups:
        names = group.get("param_names") or [None] * len(group["params"])
        for param, name in zip(group["params"], names):
            index += 1
            grad = param.grad
            if grad is None or id(grad) in seen:
                continue
            if grad.dtype == "float16":       # PyTorch's words first, then what to do
                raise ValueError(
                    "Attempting to unscale FP16 gradients. The parameter "
                    f"{display_name(name, index)!r} has a float16 gradient: "
                    "keep the parameters (the master weights) in float32 and compute in float16 "
                    "by casting the activations (x.to(dt.float16)), as AMP does; float32 "
                    "gradients keep the small values that float16 would lose.")
            seen.add(id(grad))
            grads.append(grad)
    return grads


def _unscale_and_check(grads: list[Tensor], inv_scale: float) -> bool | None:
    """Multiply every gradient by ``inv_scale``; whether any held inf or NaN (None when there
    were no gradients: no check was made)."""
    if not grads:
        return None
    found_inf = False
    for grad in grads:
        data = grad.data
        # PyTorch checks each value before multiplying it, so it looks at the scaled values.
        found_inf = found_inf or not bool(B.get_array_module(data).isfinite(data).all())
        with (B.backend_of(data) or B.NUMPY).ignore_float_errors():
            # A new array, not ``*=``: backward may hand two parameters the same array.
            grad.data = data * data.dtype.type(inv_scale)
    return found_inf


def _scaled(output: Tensor, scale: float) -> Tensor:
    """``output * scale`` as PyTorch computes it, recorded for backward."""
    with (B.backend_of(output.data) or B.NUMPY).ignore_float_errors():
        if output.dtype == "float16":
            # PyTorch multiplies by its float32 scale and rounds once; multiplying by the
            # scale cast to float16 first would turn 65536 into inf.
            return (output.float() * scale).to(output.dtype)
        return output * scale


class GradScaler:
    """Scale the loss so that small float16 gradients survive; unscale them before the step;
    skip a step whose gradients overflowed; adjust the scale (see the module docstring).

    ``enabled=False`` makes every method a pass-through: ``scale`` returns its input, ``step``
    calls ``opt.step()``, the others do nothing, so one loop runs with and without AMP.

    >>> scaler = GradScaler(init_scale=8.0, growth_interval=3)
    >>> scaler.get_scale(), scaler.get_growth_interval(), scaler.is_enabled()
    (8.0, 3, True)
    >>> GradScaler(backoff_factor=1.0)
    Traceback (most recent call last):
    ...
    ValueError: GradScaler: backoff_factor must be a number in (0, 1), got 1.0 (the scale is
    multiplied by it after a step with inf/NaN; default 0.5)
    """

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if not isinstance(enabled, bool):
            raise TypeError(f"{OWNER}: enabled must be True or False, got {enabled!r}")
        # Checked even when disabled (PyTorch does not): turning AMP on must find no bad value.
        self._scale = checked_scale(init_scale, "init_scale")
        self._growth_factor = check_growth_factor(growth_factor)
        self._backoff_factor = check_backoff_factor(backoff_factor)
        self._growth_interval = check_growth_interval(growth_interval)
        self._enabled = enabled
        self._growth_tracker = 0            # clean steps in a row since the scale last changed
        self._used = False                  # scale() was called: PyTorch's lazy start
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def _state_of(self, optimizer: Any) -> dict[str, Any]:
        """This iteration's stage of ``optimizer`` and its inf check (None: none made)."""
        return self._per_optimizer.setdefault(id(optimizer), {"stage": READY, "found_inf": None})

    def _require_scaled(self, method: str) -> None:
        # PyTorch makes its scale on the first scale(): before it, there is nothing to unscale.
        if not self._used:
            raise RuntimeError(f"{OWNER}.{method}() was called before any scale(). This may "
                               "indicate your script did not use scaler.scale(loss or outputs) "
                               "earlier in the iteration: write scaler.scale(loss).backward().")

    def scale(self, outputs: Any) -> Any:
        """``outputs`` times the scale: a Tensor, or a list or tuple of them (nested ones too);
        backward through the result gives gradients ``scale`` times larger.

        >>> import dltutor as dt
        >>> scaler = GradScaler(init_scale=4.0)
        >>> scaler.scale(dt.tensor(1.5))
        tensor(6.)
        >>> scaler.scale([dt.tensor(1.0), (dt.tensor(2.0),)])
        [tensor(4.), (tensor(8.),)]
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            self._used = True
            return _scaled(outputs, self._scale)
        if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Iterable):
            raise ValueError(f"{OWNER}.scale: outputs must be a Tensor or an iterable of "
                             f"Tensors, got {type(outputs).__name__}")
        each = map(self.scale, outputs)
        # PyTorch gives back a list or tuple as one, and any other iterable as a lazy map.
        return type(outputs)(each) if isinstance(outputs, (list, tuple)) else each

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale and note whether any is inf or NaN.
        Call it before clipping or reading gradients (``step`` calls it otherwise), at most
        once per optimizer between two ``update()``.

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([0.0]); opt = optim.SGD([w], lr=0.1)
        >>> scaler = GradScaler(init_scale=256.0)
        >>> scaler.scale(3.0 * w.sum()).backward(); w.grad
        tensor([768.])
        >>> scaler.unscale_(opt); w.grad
        tensor([3.])
        """
        if not self._enabled:
            return
        self._require_scaled("unscale_")
        state = self._state_of(optimizer)
        if state["stage"] == UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update(). (step() unscales by itself when unscale_() was "
                               "not called: call it at most once per iteration.)")
        if state["stage"] == STEPPED:
            raise RuntimeError("unscale_() is being called after step(). (Unscale before the "
                               "step, or let step() do it; then call update().)")
        grads = _gradients_of(optimizer)
        # 1/scale in float64, then rounded to float32, as PyTorch (backoffs may reach 0).
        inv_scale = float32(1.0 / self._scale) if self._scale else math.inf
        state["found_inf"] = _unscale_and_check(grads, inv_scale)
        state["stage"] = UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless ``unscale_`` was called), then ``optimizer.step(*args, **kwargs)``
        and return what it returns, or skip it and return None when a gradient is inf or NaN.

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0]); opt = optim.SGD([w], lr=0.1)
        >>> scaler = GradScaler()
        >>> scaler.scale(w.sum() * float("inf")).backward()
        >>> scaler.step(opt); w.item(), opt.step_count        # skipped: w unchanged
        (1.0, 0)
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled. "
                               "Call scaler.scale(loss).backward(), then scaler.step(optimizer).")
        self._require_scaled("step")
        state = self._state_of(optimizer)
        if state["stage"] == STEPPED:
            raise RuntimeError("step() has already been called since the last update(). (Call "
                               "scaler.update() once per iteration, after every step.)")
        if state["stage"] == READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise RuntimeError("No inf checks were recorded for this optimizer: none of its "
                               "parameters has a gradient (call backward before step).")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adjust the scale at the end of the iteration: times ``backoff_factor`` if any step
        found inf/NaN, times ``growth_factor`` after ``growth_interval`` clean steps in a row;
        or set it to ``new_scale``. Every optimizer starts the next iteration READY.

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0]); opt = optim.SGD([w], lr=0.1)
        >>> scaler = GradScaler(init_scale=8.0)
        >>> scaler.scale(w.sum() * float("nan")).backward(); scaler.step(opt)
        >>> scaler.update(); scaler.get_scale()
        4.0
        >>> scaler.update(new_scale=1024.0); scaler.get_scale()
        1024.0
        """
        if not self._enabled:
            return
        self._require_scaled("update")
        if new_scale is not None:
            self._scale = self._new_scale_value(new_scale)
        else:
            checks_made = [state["found_inf"] for state in self._per_optimizer.values()
                           if state["found_inf"] is not None]
            if not checks_made:
                raise RuntimeError("No inf checks were recorded prior to update. Call "
                                   "scaler.step(optimizer) (or scaler.unscale_(optimizer)) after "
                                   "backward and before scaler.update().")
            self._adjust(found_inf=any(checks_made))
        self._per_optimizer = {}

    def _new_scale_value(self, new_scale: float | Tensor) -> float:
        """A number, or a one-element tensor that needs no gradient (PyTorch's rule)."""
        if isinstance(new_scale, Tensor):
            if new_scale.numel() != 1 or new_scale.requires_grad:
                raise ValueError(f"{OWNER}.update: new_scale must be a float or a one-element "
                                 f"tensor with requires_grad=False, got {new_scale!r}")
            new_scale = new_scale.item()
        return checked_scale(new_scale, "new_scale")

    def _adjust(self, found_inf: bool) -> None:
        """PyTorch's ``_amp_update_scale_``: products in float64, rounded to float32 once."""
        if found_inf:
            self._scale = float32(self._scale * self._backoff_factor)
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            grown = float32(self._scale * self._growth_factor)
            if grown != math.inf:             # PyTorch never grows the scale to inf
                self._scale = grown
            self._growth_tracker = 0

    def get_scale(self) -> float:
        """The current scale, a Python float (1.0 when disabled).

        >>> GradScaler().get_scale(), GradScaler(enabled=False).get_scale()
        (65536.0, 1.0)
        """
        return self._scale if self._enabled else 1.0

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False: every method is a pass-through).

        >>> GradScaler(enabled=False).is_enabled()
        False
        """
        return self._enabled

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` clean steps.
        >>> GradScaler(growth_factor=4).get_growth_factor()
        4.0
        """
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a step with inf or NaN.
        >>> GradScaler().get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        """The number of clean steps in a row after which the scale grows.
        >>> GradScaler().get_growth_interval()
        2000
        """
        return self._growth_interval

    # PyTorch's setters, with the constructor's checks: a refused value changes nothing.
    def set_growth_factor(self, new_factor: float) -> None:
        """Set ``growth_factor`` (a number > 1).
        >>> s = GradScaler(); s.set_growth_factor(4.0); s.get_growth_factor()
        4.0
        """
        self._growth_factor = check_growth_factor(new_factor)

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set ``backoff_factor`` (a number in (0, 1)).
        >>> s = GradScaler(); s.set_backoff_factor(0.25); s.get_backoff_factor()
        0.25
        """
        self._backoff_factor = check_backoff_factor(new_factor)

    def set_growth_interval(self, new_interval: int) -> None:
        """Set ``growth_interval`` (an integer >= 1); the clean steps already counted stay, up
        to the new interval less one (PyTorch keeps more, and then never grows the scale).
        >>> s = GradScaler(); s.set_growth_interval(50); s.get_growth_interval()
        50
        """
        self._growth_interval = check_growth_interval(new_interval)
        self._growth_tracker = min(self._growth_tracker, self._growth_interval - 1)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's five entries (an empty dict when disabled). Save it after ``update()``.

        >>> GradScaler(init_scale=8.0).state_dict()
        {'scale': 8.0, 'growth_factor': 2.0, 'backoff_factor': 0.5, 'growth_interval': 2000,
         '_growth_tracker': 0}
        """
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a ``state_dict``. Every entry is checked first: on a problem nothing changes.
        (A disabled scaler loads nothing.)

        >>> s = GradScaler(); s.load_state_dict(GradScaler(init_scale=8.0).state_dict())
        >>> s.get_scale()
        8.0
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        missing = [key for key in STATE_KEYS if key not in state_dict]
        if missing:
            raise MessageKeyError(f"{OWNER}.load_state_dict: the state dict has no {missing}; "
                                  f"a GradScaler's state_dict() has {list(STATE_KEYS)}")
        scale = checked_scale(state_dict["scale"], "scale")
        settings = (check_growth_factor(state_dict["growth_factor"]),
                    check_backoff_factor(state_dict["backoff_factor"]),
                    check_growth_interval(state_dict["growth_interval"]))
        tracker = growth_tracker(state_dict["_growth_tracker"], settings[2])
        self._scale, self._growth_tracker = scale, tracker
        self._growth_factor, self._backoff_factor, self._growth_interval = settings
