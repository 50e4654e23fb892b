"""The non-finite check of a step on a GPU: decided on the device, read one step later.

On the CPU, ``step()`` looks at the gradients first and refuses a step with a NaN or Inf
before it changes anything (nonfinite.py). On a GPU that look would be a read on the host,
which makes the host wait for the GPU every step. So there the step asks the device instead,
as PyTorch's AMP GradScaler does with its ``found_inf``:

1. :class:`DeviceGate` computes, on the device, whether each gradient is finite, and from
   that ``refused``: one device boolean for the whole step;
2. the rule runs on every parameter as usual, and then every array it changed (the parameter
   and its state: momentum buffers, moments) is put back where ``refused`` holds: a refused
   step changes no value, and the host never had to know. A rule with a fused kernel (SGD,
   Adam, AdamW) gates inside it instead, with :func:`write_unless_refused`: the old values
   are still in the kernel's registers, so nothing is copied or put back;
3. the flags travel to the host while the GPU works on (``host_reads``); when the host next
   reads anyway (the loss printed, the next ``step()``), :meth:`DeviceGate.settle` looks at
   them: for a refused step it takes back what the host counted (``step_count``, each
   ``state["step"]``, state first made in that step) and raises NonFiniteGradientError naming
   the parameters (``nonfinite="raise"``) or counts ``skipped_steps`` (``"skip"``).

So on a GPU the error comes one read later than on the CPU, and says so; the parameters are
the same either way.

>>> import numpy as np
>>> gate = DeviceGate([np.array([1.0]), np.array([np.nan])])
>>> bool(gate.refused), gate.finite_each
(True, array([ True, False]))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .. import backend as B
from .. import host_reads
from .nonfinite import NonFiniteGradientError

if TYPE_CHECKING:
    from ..autograd import Tensor


class Counting(Protocol):
    """What :meth:`DeviceGate.settle` takes back from the optimizer (optimizer.py's
    Optimizer, named by what it has: this file is read by it, and does not read it)."""

    step_count: int
    skipped_steps: int
    nonfinite: str
    state: dict[Any, dict[str, Any]]


class DeviceGate:
    """One step's non-finite check, kept on the device (see the module docstring).

    ``finite_each`` holds one device boolean per gradient, ``refused`` whether any is False;
    :meth:`note` comes before the rule for each parameter, and :meth:`keep` and :meth:`restore`
    surround a rule without a fused kernel.

    >>> import numpy as np
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0, 2.0])
    >>> gate = DeviceGate([np.array([np.inf, 0.0])])
    >>> gate.note(w, None); kept = gate.keep(w, None)
    >>> w.data -= 0.5                               # the rule's step
    >>> gate.restore(kept, w, {}); w.data           # refused: put back
    array([1., 2.], dtype=float32)
    """

    def __init__(self, grads: list[Any]):
        xp = B.get_array_module(grads[0])
        self.xp = xp
        self.finite_each = xp.stack([xp.isfinite(g).all() for g in grads])
        self.refused = ~self.finite_each.all()
        # Per parameter, what the host must take back if the step was refused: the parameter
        # and the keys its state had before (None: the step made its state).
        self.undo: list[tuple[Tensor, set[str] | None]] = []

    def note(self, param: Tensor, state: dict[str, Any] | None) -> None:
        """Before the rule runs: what the host takes back for ``param`` if the step is refused
        (its state's keys; ``state`` None: the step makes its state)."""
        self.undo.append((param, None if state is None else set(state)))

    def keep(self, param: Tensor, state: dict[str, Any] | None) -> dict[str | None, Any]:
        """Copies of the parameter's values (key None) and of its state's arrays, taken before
        a rule without a fused kernel changes them (``state`` None: it has none yet)."""
        data = param.data
        kept: dict[str | None, Any] = {None: data.copy()}
        for key, value in (state or {}).items():
            if isinstance(value, type(data)):
                kept[key] = value.copy()
        return kept

    def restore(self, kept: dict[str | None, Any], param: Tensor, state: dict[str, Any]) -> None:
        """Where the step is refused, put every kept array back (into the current arrays:
        a rule may have made new ones). Nothing is read on the host."""
        for key, old in kept.items():
            now = param.data if key is None else state.get(key)
            if now is not None:
                self.xp.copyto(now, old, where=self.refused)

    def read_later(self, optimizer: Counting, names: list[str]) -> host_reads.PendingCheck:
        """Start the flags on their way to the host; :meth:`settle` runs when they are read."""
        step = optimizer.step_count - 1          # the steps taken before this one
        return host_reads.defer(host_reads.start_read(self.finite_each),
                                lambda finite: self.settle(optimizer, names, step, finite))

    def settle(self, optimizer: Counting, names: list[str], step: int,
               finite: np.ndarray) -> None:
        """The host's part, once the flags have arrived: nothing to do for a finite step;
        for a refused one, take back the counts and raise or count it as skipped."""
        if finite.all():
            return
        optimizer.step_count -= 1
        for param, keys in self.undo:
            state = optimizer.state.get(param)
            if state is None:
                continue
            if keys is None:                     # the refused step made this state
                del optimizer.state[param]
                continue
            state["step"] -= 1
            for key in [key for key in state if key not in keys]:
                del state[key]
        if optimizer.nonfinite == "skip":
            optimizer.skipped_steps += 1
            return
        bad = [name for name, ok in zip(names, finite) if not ok]
        raise NonFiniteGradientError(type(optimizer).__name__, bad, step, on_device=True)


def write_unless_refused(xp: Any, target: Any, value: Any, refused: Any) -> None:
    """Inside a fused kernel (backend.py's ``fused``): ``target[...] = value``, except where
    ``refused`` (the step's device boolean) holds; ``refused`` None: the step is not gated.

    >>> import numpy as np
    >>> param = np.array([1.0, 2.0])
    >>> write_unless_refused(np, param, param - 0.5, np.array(True)); param
    array([1., 2.])
    >>> write_unless_refused(np, param, param - 0.5, None); param
    array([0.5, 1.5])
    """
    target[...] = value if refused is None else xp.where(refused, target, value)
