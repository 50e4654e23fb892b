"""What ``Optimizer.load_state_dict`` checks before it changes anything, what it returns, and how
hyperparameters that are objects (a regularizer) travel in a state dict.

A failed load changes nothing: :func:`state_problems` lists every way a state dict does not fit
an optimizer (class, groups, parameter names, hyperparameter names, shapes), and only an empty
list lets the load begin.

>>> from dltutor import nn, optim
>>> opt = optim.SGD([("w", nn.Parameter([1.0]))], lr=0.1)
>>> state_problems(opt, {"param_groups": [{"params": ["v"]}], "state": {}})
["group 0: missing parameters ['w']", "group 0: unexpected parameters ['v']"]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import backend as B
from ..autograd import Tensor
from ..autograd.function import make_tensor
from .param_groups import STRUCTURAL_KEYS
from .regularizer import Regularizer, regularizer_from_state


@dataclass
class OptimizerLoadResult:
    """What ``Optimizer.load_state_dict`` changed: hyperparameters whose loaded value differs
    from the one the optimizer had (``{"group 0 lr": (old, new)}``).

    >>> OptimizerLoadResult({"group 0 lr": (0.1, 0.05)})
    OptimizerLoadResult(loaded values replaced the ones set in code: group 0 lr: 0.1 -> 0.05)
    """

    changed: dict

    def __repr__(self) -> str:
        if not self.changed:
            return "OptimizerLoadResult(no hyperparameter changed)"
        parts = [f"{key}: {old!r} -> {new!r}" for key, (old, new) in self.changed.items()]
        return "OptimizerLoadResult(loaded values replaced the ones set in code: " + \
            "; ".join(parts) + ")"


class OptimizerStateError(ValueError):
    """``load_state_dict`` found a state that does not fit; nothing was changed.

    >>> from dltutor import nn, optim
    >>> try:
    ...     optim.SGD([nn.Parameter([1.0])], lr=0.1).load_state_dict({"param_groups": []})
    ... except OptimizerStateError as error:
    ...     print(str(error).splitlines()[-1])
      it has 0 parameter group(s), this optimizer has 1
    """


def state_keys(optimizer: Any) -> list[Any]:
    """The key of each parameter in a state dict: its name, or its position when unnamed.

    >>> from dltutor import nn, optim
    >>> state_keys(optim.SGD([nn.Parameter([1.0]), nn.Parameter([2.0])], lr=0.1))
    [0, 1]
    """
    names = [name for group in optimizer.param_groups for name in group["param_names"]]
    return [name if name is not None else index for index, name in enumerate(names)]


def state_problems(optimizer: Any, state_dict: Any) -> list[str]:
    """Every reason ``state_dict`` cannot be loaded into ``optimizer`` (empty: it fits).

    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
    >>> state_problems(opt, opt.state_dict())
    []
    >>> for problem in state_problems(optim.Adam(opt.param_groups[0]["params"]),
    ...                               opt.state_dict()):
    ...     print(problem)
    it was saved from a SGD, this is a Adam
    group 0: unknown hyperparameters ['momentum', 'dampening', 'nesterov']
    """
    if not isinstance(state_dict, dict) or "param_groups" not in state_dict:
        return ["expected a dict made by optimizer.state_dict() (with 'param_groups' and "
                "'state')"]
    problems = []
    own_class, saved_class = type(optimizer).__name__, state_dict.get("optimizer")
    if saved_class is not None and saved_class != own_class:
        problems.append(f"it was saved from a {saved_class}, this is a {own_class}")
    groups = state_dict["param_groups"]
    if len(groups) != len(optimizer.param_groups):
        problems.append(f"it has {len(groups)} parameter group(s), this optimizer has "
                        f"{len(optimizer.param_groups)}")
        return problems
    keys = iter(state_keys(optimizer))
    by_key = {}
    allowed = set(optimizer.defaults) | set(STRUCTURAL_KEYS)
    for index, (group, saved) in enumerate(zip(optimizer.param_groups, groups)):
        own = [next(keys) for _ in group["params"]]
        theirs = list(saved.get("params", []))
        missing = [k for k in own if k not in theirs]
        unexpected = [k for k in theirs if k not in own]
        if missing:
            problems.append(f"group {index}: missing parameters {missing}")
        if unexpected:
            problems.append(f"group {index}: unexpected parameters {unexpected}")
        unknown = [k for k in saved if k not in allowed]
        if unknown:
            problems.append(f"group {index}: unknown hyperparameters {unknown}")
        by_key.update(zip(own, group["params"]))
    for key, entry in state_dict.get("state", {}).items():
        param = by_key.get(key)
        if param is None:
            problems.append(f"state for unknown parameter {key!r}")
            continue
        for name, value in entry.items():
            shape = getattr(value, "shape", None)
            if shape is not None and tuple(shape) not in (tuple(param.shape), ()):
                problems.append(f"state {name!r} of {key!r} has shape {tuple(shape)}, the "
                                f"parameter has shape {tuple(param.shape)}")
    return problems


def state_dict_of(optimizer: Any) -> dict[str, Any]:
    """``optimizer.state_dict()``: per-parameter state (arrays as tensors) and each group's
    hyperparameters, keyed by parameter name, by position where names are unknown.

    >>> from dltutor import nn, optim
    >>> sorted(state_dict_of(optim.SGD([("w", nn.Parameter([1.0]))], lr=0.1)))
    ['optimizer', 'param_groups', 'state', 'step_count']
    """
    keys = iter(state_keys(optimizer))
    groups, state = [], {}
    for group in optimizer.param_groups:
        saved = {k: hyper_to_state(v) for k, v in group.items()
                 if k not in ("params", "param_names")}
        saved["params"] = []
        for param in group["params"]:
            key = next(keys)
            saved["params"].append(key)
            if param in optimizer.state:
                state[key] = {k: (make_tensor(v, False, None) if hasattr(v, "shape") else v)
                              for k, v in optimizer.state[param].items()}
        groups.append(saved)
    return {"optimizer": type(optimizer).__name__, "step_count": optimizer.step_count,
            "state": state, "param_groups": groups}


def load_fitting_state(optimizer: Any, state_dict: dict[str, Any]) -> OptimizerLoadResult:
    """Load a state dict that :func:`state_problems` found nothing wrong with: hyperparameters,
    per-parameter state (as arrays of each parameter's backend and dtype), step count.

    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
    >>> saved = opt.state_dict(); saved["step_count"] = 7
    >>> load_fitting_state(opt, saved), opt.step_count
    (OptimizerLoadResult(no hyperparameter changed), 7)
    """
    changed: dict[str, tuple] = {}
    by_key = {}
    for index, (group, saved) in enumerate(zip(optimizer.param_groups,
                                               state_dict["param_groups"])):
        for key, value in saved.items():
            if key == "params":
                continue
            value = hyper_from_state(value)
            if key in group and not same_value(group[key], value):
                changed[f"group {index} {key}"] = (group[key], value)
            group[key] = value
        by_key.update(zip(saved["params"], group["params"]))
    optimizer.state = {}
    for key, entry in state_dict["state"].items():
        param = by_key[key]
        backend = B.backend_of(param.data)
        optimizer.state[param] = {
            k: (backend.asarray(v.data if isinstance(v, Tensor) else v, dtype=param.dtype)
                if hasattr(v, "shape") else v)
            for k, v in entry.items()}
    optimizer.step_count = int(state_dict.get("step_count", 0))
    return OptimizerLoadResult(changed)


def hyper_to_state(value: Any) -> Any:
    """A hyperparameter as a state dict holds it (a regularizer becomes a plain dict).

    >>> from dltutor import optim
    >>> hyper_to_state(optim.L2Decay(0.1)), hyper_to_state(0.1)
    ({'regularizer': 'L2Decay', 'coeff': 0.1}, 0.1)
    """
    if isinstance(value, Regularizer):
        return value.to_state()
    return value


def hyper_from_state(value: Any) -> Any:
    """The hyperparameter :func:`hyper_to_state` saved (a list, such as betas, as a tuple).

    >>> hyper_from_state({'regularizer': 'L2Decay', 'coeff': 0.1}), hyper_from_state([0.9, 0.99])
    (L2Decay(0.1), (0.9, 0.99))
    """
    if isinstance(value, dict) and "regularizer" in value:
        return regularizer_from_state(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def same_value(a: Any, b: Any) -> bool:
    """Whether two hyperparameter values are equal (identity for values that cannot say).

    >>> same_value(0.1, 0.1), same_value((0.9, 0.99), (0.9, 0.999))
    (True, False)
    """
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - e.g. comparing arrays
        return a is b
