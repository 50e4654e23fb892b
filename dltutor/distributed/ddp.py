"""DistributedDataParallel: one model trained by N processes, each on its share of a batch.

Wrap the model, and train as usual: ``DistributedDataParallel(model)`` first copies process
0's parameters and buffers into every process (a broadcast: replicas must start equal), and
after each ``loss.backward()`` it averages every parameter's gradient over the processes (an
all-reduce of their sum, divided by N) before ``opt.step()`` reads it. Every process then takes
the same step, so the replicas stay equal: N processes with batch B take the step one process
would take with batch N x B (up to the order of the sums).

How it knows backward is over: each parameter's ``register_post_accumulate_grad_hook`` marks
it ready; when every parameter the forward pass used is ready, the gradients are averaged in
one all-reduce of all of them together (PyTorch cuts them into buckets; one bucket here).

* ``no_sync()``: inside it, backward only accumulates the local gradient (no all-reduce):
  gradient accumulation over micro-batches, with one all-reduce at the last.
* ``find_unused_parameters=True``: a parameter the forward pass did not use never gets a
  gradient; the wrapper then finds such parameters after each forward (a walk of the graph)
  and counts them ready. Without it, the next forward stops with an error naming them, as
  PyTorch's does, since the processes would wait for one another forever.

>>> import dltutor as dt, dltutor.distributed as dist
>>> from dltutor import nn
>>> dist.init_process_group("mpi")                   # one process: the average is the gradient
>>> model = DistributedDataParallel(nn.Linear(2, 1))
>>> model(dt.ones(4, 2)).sum().backward()
>>> model.module.bias.grad
tensor([4.])
>>> dist.destroy_process_group()
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from .. import backend as B
from ..autograd import Tensor, is_grad_enabled
from ..nn import Module
from .collectives import all_reduce, broadcast
from .process_group import get_world_size


class DistributedDataParallel(Module):
    """``module`` trained data-parallel (see the module docstring): call it as the module."""

    def __init__(self, module: Module, *, find_unused_parameters: bool = False,
                 broadcast_buffers: bool = True):
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an nn.Module, got "
                            f"{type(module).__name__}")
        super().__init__()
        self.module = module
        self.find_unused_parameters = bool(find_unused_parameters)
        self.broadcast_buffers = bool(broadcast_buffers)
        self._names = {id(p): name for name, p in module.named_parameters()
                       if p.requires_grad}
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._sync = True
        self._waiting: set[int] | None = None      # parameters this backward still owes
        self._started = False                      # a gradient of this iteration arrived
        self._skipped: set[int] = set()            # unreached, so skipped (find_unused_...)
        for tensor in list(module.parameters()) + list(module.buffers()):
            broadcast(tensor, src=0)               # every replica starts from process 0's
        for p in self._params:
            p.register_post_accumulate_grad_hook(self._mark_ready)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside: backward accumulates each process's own gradient, with no all-reduce."""
        previous, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = previous

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self._check_last_reduction()
        if self.broadcast_buffers:
            for buffer in self.module.buffers():     # BatchNorm's statistics: process 0's
                broadcast(buffer, src=0)
        out = self.module(*args, **kwargs)
        if self._sync and is_grad_enabled():
            self._waiting = set(self._names)
            self._started = False
            if self.find_unused_parameters:
                self._waiting &= _leaves_reached(out)
                self._skipped = set(self._names) - self._waiting
        return out

    @property
    def unreached_parameters(self) -> list[str]:
        """The names of the parameters the last iteration did not reach (read by
        ``dltutor.diagnose``): with ``find_unused_parameters`` those the last forward skipped;
        without it those the last backward left owing, which stop the next forward."""
        missing = self._skipped if self.find_unused_parameters else (
            self._waiting if self._started and self._waiting else set())
        return sorted(self._names[i] for i in missing)

    def _check_last_reduction(self) -> None:
        """Refuse a forward pass while the last backward still owes gradients."""
        if self._started and self._waiting:
            names = sorted(self._names[i] for i in self._waiting)
            raise RuntimeError(
                "DistributedDataParallel: the last backward did not reach the parameters "
                f"{names}, so their gradients were never averaged and the processes would wait "
                "for each other. Pass find_unused_parameters=True (costs a walk of the graph "
                "every step), or freeze them (requires_grad=False) before wrapping the model")

    def _mark_ready(self, param: Tensor) -> None:
        if self._waiting is None:
            return                                   # no_sync(), or not called through us
        self._started = True
        self._waiting.discard(id(param))
        if not self._waiting:
            self._waiting = None
            self._average_gradients()

    def _average_gradients(self) -> None:
        """One all-reduce of every gradient (and of which were used), then each divided by
        the number of processes. A parameter no process used keeps ``grad`` None."""
        used = np.array([p.grad is not None for p in self._params], dtype=np.float64)
        all_reduce(used)
        grads = [p.grad.data if p.grad is not None else B.get_array_module(p.data).zeros_like(
            p.data) for p in self._params]
        xp = B.get_array_module(grads[0])
        flat = xp.concatenate([g.ravel() for g in grads])
        all_reduce(flat)
        flat /= get_world_size()
        start = 0
        for p, g, count in zip(self._params, grads, used):
            piece = flat[start:start + g.size].reshape(g.shape)
            start += g.size
            if count:
                p.grad = Tensor(piece) if p.grad is None else p.grad
                p.grad.data[...] = piece


def _leaves_reached(outputs: Any) -> set[int]:
    """The ids of the leaves the graph behind ``outputs`` reaches (a tensor, or a tuple, list or
    dict of them)."""
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    stack = [t.grad_fn for t in (outputs if isinstance(outputs, (list, tuple)) else [outputs])
             if isinstance(t, Tensor) and t.grad_fn is not None]
    reached: set[int] = set()
    seen: set[int] = set()
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for t in fn.inputs or ():
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                reached.add(id(t))
    return reached
