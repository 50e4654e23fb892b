"""Loading a state dict into a module: everything is checked before anything is copied.

``Module.load_state_dict`` (:class:`StateDictLoading`, which Module inherits) calls
:func:`check_state_dict` first; only when everything fits does it copy a single value, so a
failing load changes nothing.

Loading converts each value to the dtype of the parameter or buffer it goes into. A conversion
that only rounds is allowed, as PyTorch's ``copy_`` does it: float64 weights into a float32
model, a float underflowing to 0, a large int64 into float32, a bool as 0/1, a NaN or an
infinity into a float (a value is data). A conversion that would change a value is refused,
naming the key (:func:`cast_problem`): a finite number too large for the dtype (it would become
inf), and anything an integer or bool cannot hold (NaN, inf, a fraction, a number out of the
integer's range, a negative into an unsigned type, a bool that is not 0 or 1). PyTorch copies
all of these without a word (NaN into an int64 counter becomes -9223372036854775808).

>>> from dltutor import nn
>>> a = nn.Linear(2, 3)
>>> try:
...     a.load_state_dict({"weight": a.weight.numpy()})
... except StateDictError as err:
...     print(str(err).splitlines()[1])
  missing keys (in the model, not in the state dict): 'bias'
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .. import backend as B
from ..autograd import Tensor, no_grad
from ..autograd.dtypes import cast_problem
from ..errors import MessageKeyError
from .parameter import is_uninitialized


class LoadResult(NamedTuple):
    """What ``load_state_dict`` returns: the keys that were missing and the ones it ignored."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class StateDictError(MessageKeyError):
    """``load_state_dict`` found keys or shapes that do not fit; nothing was changed."""


class StateDictLoading:
    """Module's ``load_state_dict`` (a mixin: :class:`~dltutor.nn.Module` inherits it,
    nothing else does)."""

    if TYPE_CHECKING:                    # what the method below uses of Module
        def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict[str, Tensor]: ...

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> LoadResult:
        """Copy values into the parameters and buffers, in place (so ties and optimizers keep
        working). Everything is checked first: missing keys, unexpected keys, shape mismatches
        and values the target's dtype cannot hold (1e300 into float32, NaN into an int buffer:
        see :mod:`dltutor.nn.state_dict`) are reported together; on any error nothing changes.

        ``strict=False`` loads the keys that match and returns the ones that did not;
        a shape mismatch is an error either way, and so are two names of one tied parameter
        with different values (one would silently overwrite the other).

        >>> from dltutor import nn
        >>> a, b = nn.Linear(2, 3), nn.Linear(2, 3)
        >>> b.load_state_dict(a.state_dict())
        LoadResult(missing_keys=[], unexpected_keys=[])
        >>> bool((a.weight == b.weight).all())
        True
        """
        own = self.state_dict(keep_vars=True)
        missing, unexpected = check_state_dict(type(self).__name__, own, state_dict, strict)
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    value = state_dict[key]
                    value = value.data if isinstance(value, Tensor) else value
                    if is_uninitialized(target):      # a lazy layer takes the loaded shape
                        target.materialize(tuple(value.shape))
                    target.data[...] = (B.backend_of(target.data) or B.NUMPY).asarray(
                        value, dtype=target.dtype)
        return LoadResult(missing, unexpected)


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
    mismatched = [(heading, f"{key!r}: {text}") for key, target in own.items()
                  if key in state_dict
                  for heading, text in [_value_problem(state_dict[key], target)] if heading]
    conflicts = [] if mismatched else _tied_conflicts(own, state_dict)
    if mismatched or conflicts or (strict and (missing or unexpected)):
        raise StateDictError(_load_report(owner, missing, unexpected, mismatched, strict,
                                          conflicts))
    return missing, unexpected


_UNUSABLE, _SHAPES = "values that cannot be loaded", "shape mismatches"
_CASTS = "values the model's dtype cannot hold (nothing is converted silently)"


def _value_problem(value: Any, target: Any) -> tuple[str | None, str]:
    """(the report's heading, what is wrong) when ``value`` cannot be copied into ``target``,
    else (None, ""): it must be a tensor or an array of real numbers, shaped like the target.

    >>> from dltutor import nn
    >>> _value_problem(np.array(["a", "b"]), nn.Parameter([1.0, 2.0]))
    ('values that cannot be loaded', 'holds <U1 values, not numbers (a tensor holds bool, int or float)')
    >>> _value_problem([1.0, 2.0], nn.Parameter([1.0, 2.0]))
    ('values that cannot be loaded', 'is a list, not a tensor or an array')
    """
    data = value.data if isinstance(value, Tensor) else value
    if getattr(data, "shape", None) is None or getattr(data, "dtype", None) is None:
        return _UNUSABLE, f"is a {type(value).__name__}, not a tensor or an array"
    if data.dtype.kind not in "biuf":
        return _UNUSABLE, (f"holds {data.dtype} values, not numbers (a tensor holds bool, int "
                           "or float)")
    if is_uninitialized(target):      # a lazy layer's parameter: the known sizes must agree
        if not target.fits(tuple(data.shape)):
            return _SHAPES, (f"model {target.template} (a lazy layer's parameter; None is not "
                             f"known yet), state dict {tuple(data.shape)}")
    elif tuple(data.shape) != tuple(target.shape):
        return _SHAPES, f"model {tuple(target.shape)}, state dict {tuple(data.shape)}"
    # A lazy parameter has no dtype yet: load_state_dict materializes it as float32.
    dtype = np.dtype(np.float32) if is_uninitialized(target) else target.dtype
    problem = cast_problem(data, dtype)
    return (_CASTS, problem) if problem else (None, "")


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


def _load_report(owner: str, missing: list[str], unexpected: list[str],
                 mismatched: list[tuple[str, str]],
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
    for heading in (_UNUSABLE, _SHAPES, _CASTS):
        found = [text for kind, text in mismatched if kind == heading]
        if found:
            lines.append(f"  {heading}: " + "; ".join(found))
    if any(kind == _CASTS for kind, _ in mismatched):
        lines.append("If the checkpoint comes from a model of a wider dtype, load it into one "
                     "of that dtype (model.double()); otherwise change those values yourself "
                     "first, if that is what you mean (np.nan_to_num, np.clip, np.round).")
    if strict and (missing or unexpected):
        lines.append("Compare the names with model.state_dict().keys(); strict=False loads the "
                     "keys that match.")
    return "\n".join(lines)
