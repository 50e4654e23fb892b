"""Checking a state dict against a module before anything is loaded into it.

``Module.load_state_dict`` calls :func:`check_state_dict` first; only when everything fits does
it copy a single value, so a failing load changes nothing.

>>> from dltutor import nn
>>> a = nn.Linear(2, 3)
>>> try:
...     a.load_state_dict({"weight": a.weight.numpy()})
... except StateDictError as err:
...     print(str(err).splitlines()[1])
  missing keys (in the model, not in the state dict): 'bias'
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from ..errors import MessageKeyError


class LoadResult(NamedTuple):
    """What ``load_state_dict`` returns: the keys that were missing and the ones it ignored."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class StateDictError(MessageKeyError):
    """``load_state_dict`` found keys or shapes that do not fit; nothing was changed."""


def check_state_dict(owner: str, own: dict[str, Any], state_dict: Any,
                     strict: bool) -> tuple[list[str], list[str]]:
    """Check ``state_dict`` against a module's own entries ``own`` (its ``state_dict(keep_vars=
    True)``); return the missing and unexpected keys, or raise one StateDictError that lists
    every problem: missing and unexpected keys (when ``strict``), shape mismatches, and tied
    aliases given different values."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"load_state_dict expects a dict of name -> tensor, got "
                        f"{type(state_dict).__name__}")
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    mismatched = []
    for key, target in own.items():
        if key in state_dict:
            shape = _shape_of(state_dict[key])
            if shape != tuple(target.shape):
                mismatched.append(f"{key!r}: model {tuple(target.shape)}, state dict {shape}")
    conflicts = [] if mismatched else _tied_conflicts(own, state_dict)
    if mismatched or conflicts or (strict and (missing or unexpected)):
        raise StateDictError(_load_report(owner, missing, unexpected, mismatched, strict,
                                          conflicts))
    return missing, unexpected


def _shape_of(value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    if shape is None:
        raise TypeError(f"state dict values must be tensors or arrays, got {type(value).__name__}")
    return tuple(shape)


def _tied_conflicts(own: dict[str, Any], state_dict: dict[str, Any]) -> list[str]:
    """Aliases of one tied parameter that the state dict gives different values.

    Loading copies each key in turn, so one alias would silently overwrite the other (PyTorch
    keeps the last one); here it is an error instead.
    """
    aliases: dict[int, list[str]] = {}
    for key, target in own.items():
        if key in state_dict:
            aliases.setdefault(id(target), []).append(key)
    conflicts = []
    for keys in aliases.values():
        first = _as_numpy(state_dict[keys[0]])
        for other in keys[1:]:
            if not np.array_equal(first, _as_numpy(state_dict[other]), equal_nan=True):
                conflicts.append(f"{keys[0]!r} and {other!r}")
    return conflicts


def _as_numpy(value: Any) -> np.ndarray:
    return B.to_numpy(value.data if isinstance(value, Tensor) else value)


def _load_report(owner: str, missing: list[str], unexpected: list[str], mismatched: list[str],
                 strict: bool, conflicts: list[str]) -> str:
    lines = [f"load_state_dict: the state dict does not fit this {owner}; nothing was changed."]
    if conflicts:
        lines.append("  tied parameters with different values in the state dict: "
                     + "; ".join(conflicts) + ". The model shares one parameter under these "
                     "names, so one value would overwrite the other. Make them equal in the "
                     "state dict (e.g. state[second] = state[first]), or load into a model "
                     "built without the tie.")
    if missing and strict:
        lines.append("  missing keys (in the model, not in the state dict): "
                     + ", ".join(repr(k) for k in missing))
    if unexpected and strict:
        lines.append("  unexpected keys (in the state dict, not in the model): "
                     + ", ".join(repr(k) for k in unexpected))
    if mismatched:
        lines.append("  shape mismatches: " + "; ".join(mismatched))
    if strict and (missing or unexpected):
        lines.append("Compare the names with model.state_dict().keys(); strict=False loads the "
                     "keys that match.")
    return "\n".join(lines)
