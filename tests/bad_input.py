"""The bad-input battery's one assertion: refused, named, and nothing changed.

Every test in ``tests/*/test_bad_input.py`` is one hostile input. It says what must be raised,
which words the message must contain (the op, parameter, key or file it is about), and what
state must be left bit for bit as it was::

    refused(lambda: net.load_state_dict(bad), MessageKeyError, "0.weight", state=[net])

``snapshot`` turns the state into plain bytes, so "unchanged" means the same bits: a NaN that
was there stays the same NaN, and a float32 rounded differently counts as a change.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable

import numpy as np
import pytest

import dltutor as dt
from dltutor import backend as B
from dltutor import nn, optim
from dltutor.autograd.rng import generator


class GlobalGenerator:
    """The global generator's state, for ``refused(state=...)``: a refused call draws nothing."""

    def state_dict(self):
        return generator().bit_generator.state


def refused(call: Callable[[], Any], error: type[BaseException] | tuple, *names: str,
            state: Iterable[Any] = ()) -> BaseException:
    """Run ``call``; it must raise ``error`` with every one of ``names`` in its message
    (compared without case), and leave every object in ``state`` exactly as it was.
    Returns the exception, for any further check."""
    state = list(state)
    before = snapshot(state)
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for name in names:
        assert name.lower() in message.lower(), (
            f"the message does not name {name!r}:\n{type(info.value).__name__}: {message}")
    after = snapshot(state)
    assert after == before, _first_difference(before, after)
    return info.value


def snapshot(value: Any) -> Any:
    """Plain, comparable data holding every bit of ``value``'s state: tensors (data, grad,
    requires_grad), modules (parameters, buffers, training flags, hooks, submodule names),
    optimizers (groups and per-parameter state), schedulers, files (given as paths), and
    lists, tuples and dicts of those."""
    if isinstance(value, dt.Tensor):
        return ("tensor", _array(value.data), value.requires_grad,
                None if value.grad is None else _array(value.grad.data),
                getattr(value, "lr_mult", None), repr(getattr(value, "regularizer", None)),
                getattr(value, "need_clip", None))
    if isinstance(value, nn.Module):
        return ("module",
                [(name, snapshot(p)) for name, p in value.named_parameters(remove_duplicate=False)],
                [(name, snapshot(b)) for name, b in value.named_buffers()],
                [(name, type(m).__name__, m.training) for name, m in value.named_modules()],
                _plain(value.__dict__))
    if isinstance(value, optim.Optimizer):
        groups = [{k: (["param", id(p)] for p in v) if k == "params" else snapshot(v)
                   for k, v in group.items()} for group in value.param_groups]
        groups = [{k: list(v) if k == "params" else v for k, v in g.items()} for g in groups]
        state = sorted((id(p), snapshot(s)) for p, s in value.state.items())
        return ("optimizer", groups, state, snapshot(getattr(value, "grad_clip", None)))
    if isinstance(value, (str, os.PathLike)) and os.path.exists(value):
        with open(value, "rb") as file:
            return ("file", file.read())
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        return _array(value)
    if isinstance(value, dict):
        return ("dict", [(repr(k), snapshot(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [snapshot(v) for v in value])
    if isinstance(value, float):
        return ("float", np.float64(value).tobytes())
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return value
    if hasattr(value, "state_dict"):         # a scheduler, a clip object, a lab part
        return (type(value).__name__, snapshot(value.state_dict()), _plain(vars(value)))
    if hasattr(value, "__dict__"):
        return (type(value).__name__, _plain(vars(value)))
    return repr(value)


def _array(array: Any) -> tuple:
    array = B.to_numpy(array)
    return (str(array.dtype), array.shape, np.ascontiguousarray(array).tobytes())


def _plain(attributes: dict[str, Any]) -> list:
    """The plain-valued attributes of an object (numbers, strings, flags, hook counts), so that
    a half-set attribute shows up; tensors, modules and the like are snapshotted elsewhere."""
    out = []
    for key, value in sorted(attributes.items()):
        if value is None or isinstance(value, (bool, int, str)):
            out.append((key, value))
        elif isinstance(value, float):
            out.append((key, np.float64(value).tobytes()))
        elif isinstance(value, (list, tuple)) and all(
                v is None or isinstance(v, (bool, int, float, str)) for v in value):
            out.append((key, repr(value)))
        elif isinstance(value, dict) and key.endswith("hooks"):
            out.append((key, len(value)))
        elif isinstance(value, (dict, list)) and key in ("_modules", "_parameters", "_buffers"):
            out.append((key, list(value)))
    return out


def _first_difference(before: Any, after: Any, path: str = "state") -> str:
    """Where two snapshots first differ, for the assertion message."""
    if type(before) is not type(after):
        return f"{path} changed: {type(before).__name__} -> {type(after).__name__}"
    if isinstance(before, (list, tuple)):
        if len(before) != len(after):
            return f"{path} changed length: {len(before)} -> {len(after)}"
        for i, (b, a) in enumerate(zip(before, after)):
            if b != a:
                label = b[0] if isinstance(b, tuple) and b and isinstance(b[0], str) else i
                return _first_difference(b, a, f"{path}[{label!r}]")
    return f"{path} changed: {str(before)[:200]} -> {str(after)[:200]}"
