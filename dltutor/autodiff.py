"""MegEngine's ``GradManager`` (``megengine.autodiff``), over the kit's one backward.

MegEngine's tensors carry no ``requires_grad`` flag: a ``GradManager`` decides which tensors
get gradients (``attach``) and when the computation is recorded (``with gm:``). Seed 004 of
this kit trains that way::

    gm = GradManager().attach(model.parameters())
    with gm:
        loss = loss_fn(model(x), y)
        gm.backward(loss)          # .grad of the attached tensors only; ends the recording
    opt.step()
    opt.clear_grad()

Here it is a thin layer over ``loss.backward(inputs=...)``: attaching a tensor makes it
require grad (attaching *is* MegEngine's flag), and ``backward`` writes ``.grad`` of the
attached tensors only, adding to what is there (MegEngine accumulates too), then stops the
recording. Each behaviour is cited from MegEngine v1.13.4's grad_manager.py in
notebooks/SOURCES.md.

>>> import dltutor as dt
>>> from dltutor import nn
>>> from dltutor.autodiff import GradManager
>>> net = nn.Linear(2, 1)
>>> gm = GradManager().attach([net.weight])        # the bias is not attached
>>> with gm:
...     gm.backward(net(dt.ones(3, 2)).sum())
>>> net.weight.grad is not None, net.bias.grad is None
(True, True)
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .autograd import Tensor, ones_like


class GradManager:
    """Which tensors get gradients, and when a computation is recorded (MegEngine's API)."""

    def __init__(self) -> None:
        self._attached: list[Tensor] = []
        self._callbacks: dict[int, list[Callable]] = {}
        self._recording = False

    def attach(self, params: Iterable[Tensor] | Tensor,
               callbacks: Callable | Iterable[Callable] | None = None) -> "GradManager":
        """Give these tensors gradients from now on; returns the manager (so
        ``GradManager().attach(...)`` reads as in MegEngine). ``callbacks``: functions
        ``callback(param, grad) -> grad`` applied, in order, before a gradient is added to
        ``.grad``. Every item is checked before any is attached.

        >>> from dltutor import nn
        >>> w = nn.Parameter([1.0])
        >>> len(GradManager().attach(w).attached_tensors())
        1
        """
        params = [params] if isinstance(params, Tensor) else list(params)
        callbacks = [] if callbacks is None else (
            [callbacks] if callable(callbacks) else list(callbacks))
        for i, param in enumerate(params):
            if not isinstance(param, Tensor):
                raise TypeError(f"GradManager.attach: item {i} is a {type(param).__name__}, "
                                "not a tensor; pass model.parameters() or a list of tensors")
            if param.grad_fn is not None:
                raise ValueError(f"GradManager.attach: item {i} was computed by "
                                 f"{param.grad_fn.op_name}; attach the tensors you made (the "
                                 "parameters), before computing with them")
        for i, callback in enumerate(callbacks):
            if not callable(callback):
                raise TypeError(f"GradManager.attach: callback {i} is a "
                                f"{type(callback).__name__}; a callback is a function "
                                "callback(param, grad) -> grad")
        for param in params:
            if all(param is not seen for seen in self._attached):
                self._attached.append(param)
            param.requires_grad_(True)
            self._callbacks.setdefault(id(param), []).extend(callbacks)
        return self

    def attached_tensors(self) -> list[Tensor]:
        """The attached tensors, in the order they were attached."""
        return list(self._attached)

    def record(self) -> None:
        """Start recording (``with gm:`` calls it); refused while already recording, as in
        MegEngine (a ``with gm:`` inside another would end the outer one early)."""
        if self._recording:
            raise RuntimeError("GradManager.record: already recording; call backward (or "
                               "release) first, or leave the `with gm:` block")
        self._recording = True

    def release(self) -> None:
        """Stop recording (``backward`` and the end of ``with gm:`` call it)."""
        self._recording = False

    def __enter__(self) -> "GradManager":
        self.record()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def backward(self, y: Tensor, dy: Any = None) -> None:
        """Add the gradient of ``y`` to ``.grad`` of every attached tensor (only theirs), then
        stop recording. ``dy`` is the upstream gradient; without it, ones shaped like ``y``
        (MegEngine's default, also for a ``y`` with several elements).

        >>> import dltutor as dt
        >>> w = dt.tensor([2.0])
        >>> gm = GradManager().attach(w)
        >>> with gm:
        ...     gm.backward(w * w)
        >>> w.grad
        tensor([4.])
        """
        if not self._recording:
            raise RuntimeError("GradManager.backward: nothing is being recorded; compute the "
                               "loss and call backward inside `with gm:` (or after "
                               "gm.record()), once per recording")
        try:
            if not self._attached:
                return
            handles = [param.register_hook(_applying(callbacks, param))
                       for param in self._attached
                       for callbacks in [self._callbacks.get(id(param))] if callbacks]
            try:
                y.backward(ones_like(y) if dy is None else dy, inputs=self._attached)
            finally:
                for handle in handles:
                    handle.remove()
        finally:
            self.release()


def _applying(callbacks: list[Callable], param: Tensor) -> Callable:
    """A gradient hook that passes ``param``'s gradient through MegEngine-style callbacks."""
    def hook(grad: Tensor) -> Tensor:
        for callback in callbacks:
            grad = callback(param, grad)
        return grad
    return hook
