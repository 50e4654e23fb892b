"""HookHandle: what every ``register_*_hook`` returns, so a hook can be taken off again.

Tensors (gradient hooks), modules (forward hooks) and optimizers (step hooks) keep their hooks
in plain lists; a handle remembers the list and the hook.

>>> def hook(grad):
...     print("called")
>>> hooks = [hook]
>>> handle = HookHandle(hooks, hook)
>>> handle.remove(); hooks
[]
"""
from __future__ import annotations

from typing import Callable


class HookHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook off again."""

    def __init__(self, hooks: list, hook: Callable):
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        """Take the hook off (a second call does nothing)."""
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return
