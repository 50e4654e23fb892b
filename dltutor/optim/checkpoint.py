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

import math
from dataclasses import dataclass
from typing import Any

import numpy as np  # noqa: F401  (the doctests below use np)

from .. import backend as B
from ..autograd import Tensor
from ..autograd.dtypes import cast_problem
from ..autograd.function import make_tensor
from .regularizer import Regularizer, regularizer_from_state
from .settings import check_group


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
    ...     optim.SGD([nn.Parameter([1.0])], lr=0.1).load_state_dict({"param_groups": [],
    ...                                                               "state": {}})
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
    """Every reason ``state_dict`` cannot be loaded into ``optimizer`` (empty: it fits). Each
    group's hyperparameters go through the optimizer's one check (settings.check_group) as
    they will be after the load: the loaded values win, as in PyTorch, flags included.

    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
    >>> state_problems(opt, opt.state_dict())
    []
    >>> for problem in state_problems(optim.Adam(opt.param_groups[0]["params"]),
    ...                               opt.state_dict()):
    ...     print(problem)
    it was saved from a SGD, this is a Adam
    group 0: Adam: unknown hyperparameter(s) 'momentum', 'dampening', 'nesterov' in a
    parameter group; Adam knows amsgrad, betas, eps, lr, maximize, weight_decay
    """
    if not isinstance(state_dict, dict) or "param_groups" not in state_dict \
            or not isinstance(state_dict.get("state", {}), dict):
        return ["expected a dict made by optimizer.state_dict() (with 'param_groups' and "
                "'state')"]
    if "state" not in state_dict:
        return ["it has no 'state' (the per-parameter state: momentum, moments, step counts); "
                "a dict saved from optimizer.state_dict() always has one"]
    problems = counter_problems(state_dict)
    own_class, saved_class = type(optimizer).__name__, state_dict.get("optimizer")
    if saved_class is not None and saved_class != own_class:
        problems.append(f"it was saved from a {saved_class}, this is a {own_class}")
    groups = state_dict["param_groups"]
    shape_problem = groups_shape_problem(groups)
    if shape_problem:
        return problems + [shape_problem]
    if len(groups) != len(optimizer.param_groups):
        problems.append(f"it has {len(groups)} parameter group(s), this optimizer has "
                        f"{len(optimizer.param_groups)}")
        return problems
    keys = iter(state_keys(optimizer))
    by_key: dict[Any, Any] = {}
    group_of: dict[Any, Any] = {}
    for index, (group, saved) in enumerate(zip(optimizer.param_groups, groups)):
        own = [next(keys) for _ in group["params"]]
        theirs = list(saved["params"])
        missing = [k for k in own if k not in theirs]
        unexpected = [k for k in theirs if k not in own]
        if missing:
            problems.append(f"group {index}: missing parameters {missing}")
        if unexpected:
            problems.append(f"group {index}: unexpected parameters {unexpected}")
        group_problems = hyperparameter_problems(optimizer, index, group, saved)
        problems += group_problems
        by_key.update(zip(own, group["params"]))
        # The state must fit the group as it will be after the load (its flags win); a group
        # refused above is judged by the optimizer's own.
        group_of.update(dict.fromkeys(own, group if group_problems else
                                      loaded_group(group, saved)))
    for key, entry in state_dict["state"].items():
        param = by_key.get(key)
        if param is None:
            problems.append(f"state for unknown parameter {key!r}")
        elif not isinstance(entry, dict):
            problems.append(f"the state of {key!r} is a {type(entry).__name__}, not a dict")
        else:
            arrays = rule_arrays(optimizer, group_of[key])
            problems += [f"state {name!r} of {key!r} {problem}" for name, value in entry.items()
                         for problem in [entry_problem(name, value, param, name in arrays)]
                         if problem]
            problems += missing_entry_problems(optimizer, key, entry, group_of[key])
    return problems


def groups_shape_problem(groups: Any) -> str | None:
    """What is wrong with a state dict's ``param_groups`` as a container, or None: it must be
    a list of dicts, each with a ``params`` list (of parameter names or positions).

    >>> groups_shape_problem(5)
    "'param_groups' is a int; it must be a list of group dicts, as optimizer.state_dict() makes"
    >>> groups_shape_problem([{"params": "w"}])
    "group 0: 'params' is a str; it must be a list of parameter names or positions"
    """
    if not isinstance(groups, (list, tuple)):
        return (f"'param_groups' is a {type(groups).__name__}; it must be a list of group "
                "dicts, as optimizer.state_dict() makes")
    for index, saved in enumerate(groups):
        if not isinstance(saved, dict):
            return f"group {index} is a {type(saved).__name__}, not a dict"
        if not isinstance(saved.get("params"), (list, tuple)):
            return (f"group {index}: 'params' is a {type(saved.get('params')).__name__}; it "
                    "must be a list of parameter names or positions")
    return None


def loaded_group(group: dict[str, Any], saved: dict[str, Any]) -> dict[str, Any]:
    """What ``group`` will hold once ``saved`` is loaded into it (a new dict; nothing changes).

    >>> loaded_group({"params": [], "lr": 0.1, "betas": (0.9, 0.99)},
    ...              {"params": [0], "lr": 0.5, "betas": [0.8, 0.9]})
    {'params': [], 'lr': 0.5, 'betas': (0.8, 0.9)}
    """
    candidate = dict(group)
    candidate.update({key: value if key == "param_names" else hyper_from_state(value)
                      for key, value in saved.items() if key != "params"})
    return candidate


def rule_arrays(optimizer: Any, group: dict[str, Any]) -> set[str]:
    """The state entries that the optimizer's rule uses as arrays shaped like the parameter.

    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1, momentum=0.9)
    >>> rule_arrays(opt, opt.param_groups[0])
    {'momentum_buffer'}
    """
    return set(optimizer.state_entries(group)) | set(optimizer.momentum_state)


def missing_entry_problems(optimizer: Any, key: Any, entry: dict[str, Any],
                           group: dict[str, Any]) -> list[str]:
    """A parameter's state that holds some of the rule's arrays but not all of them (Adam's
    ``exp_avg`` without ``exp_avg_sq``): the next ``step()`` would stop on the missing one.

    >>> from dltutor import nn, optim
    >>> opt = optim.Adam([nn.Parameter([1.0])])
    >>> missing_entry_problems(opt, 0, {"step": 1, "exp_avg": np.zeros(1)}, opt.param_groups[0])
    ["the state of 0 has 'exp_avg' but not 'exp_avg_sq' (Adam keeps them together)"]
    """
    needed = optimizer.state_entries(group)
    present = [name for name in needed if name in entry]
    missing = [name for name in needed if name not in entry]
    if not present or not missing:
        return []
    has, lacks = (", ".join(repr(n) for n in names) for names in (present, missing))
    return [f"the state of {key!r} has {has} but not {lacks} "
            f"({type(optimizer).__name__} keeps them together)"]


def counter_problems(state_dict: dict[str, Any]) -> list[str]:
    """The optimizer-wide counters (``step_count``, ``skipped_steps``) must be integers >= 0.

    >>> counter_problems({"step_count": 2.5})
    ["'step_count' is 2.5; it must be an integer >= 0"]
    """
    return [f"{key!r} is {state_dict[key]!r}; it must be an integer >= 0"
            for key in ("step_count", "skipped_steps")
            if key in state_dict and not is_count(state_dict[key])]


def is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 0 (an int, or a 0-d array holding one, as
    PyTorch saves Adam's ``step``).

    >>> is_count(3), is_count(np.array(3.0)), is_count(-1), is_count(True), is_count("3")
    (True, True, False, False, False)
    """
    if isinstance(value, Tensor):
        value = value.data
    if isinstance(value, (bool, str, bytes)) or getattr(value, "shape", ()) != ():
        return False
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number >= 0 and number.is_integer()


def entry_problem(name: str, value: Any, param: Tensor, array: bool = False) -> str | None:
    """What is wrong with one value of a parameter's saved state, or None. It is checked like
    a gradient: an array must be shaped like the parameter, hold floating-point numbers, all
    finite and within the parameter's dtype (1e300 would become inf in float32); ``step`` is a
    count. A plain number is allowed (finite) where the rule keeps no array (``array`` False).

    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0, 2.0])
    >>> entry_problem("momentum_buffer", np.array(["a", "b"]), w)
    'holds <U1 values, not numbers'
    >>> entry_problem("exp_avg", np.array([0.0, np.nan]), w)
    'holds NaN or Inf; a saved moment must be finite (a NaN gradient would have been refused)'
    """
    if name == "step":
        return None if is_count(value) else f"is {value!r}; it must be an integer >= 0"
    if isinstance(value, Tensor):
        value = value.data
    if not hasattr(value, "shape"):
        if not array and isinstance(value, (int, float)) and not isinstance(value, bool):
            return None if math.isfinite(value) else f"is {value!r}; it must be finite"
        return (f"is a {type(value).__name__}; it must be an array shaped like the parameter "
                f"{tuple(param.shape)}")
    if value.dtype.kind != "f":
        kind = "real floating-point numbers" if value.dtype.kind in "biuc" else "numbers"
        return f"holds {value.dtype} values, not {kind}"
    if tuple(value.shape) != tuple(param.shape):
        return f"has shape {tuple(value.shape)}, the parameter has shape {tuple(param.shape)}"
    return value_problem(value, param)


def value_problem(value: Any, param: Tensor) -> str | None:
    """NaN or Inf in a saved array, or a value the parameter's dtype cannot hold, or None.

    >>> from dltutor import nn
    >>> value_problem(np.array([1e300]), nn.Parameter([1.0]))
    'holds 1e+300, which float32 cannot hold (it would become inf)'
    """
    xp = B.get_array_module(value)
    if value.size == 0:
        return None
    if not bool(xp.isfinite(value).all()):
        return ("holds NaN or Inf; a saved moment must be finite (a NaN gradient would have "
                "been refused)")
    return cast_problem(value, param.dtype) or None


def hyperparameter_problems(optimizer: Any, index: int, group: dict[str, Any],
                            saved: dict[str, Any]) -> list[str]:
    """Group ``index``'s saved hyperparameters checked by the one check the constructor, a
    write by hand and ``add_param_group`` run (settings.check_group), before any is loaded.

    >>> from dltutor import nn, optim
    >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
    >>> hyperparameter_problems(opt, 0, opt.param_groups[0], {"lr": float("nan")})
    ['group 0: SGD: lr must be a number >= 0, got nan']
    >>> hyperparameter_problems(opt, 0, opt.param_groups[0], {"maximize": "no"})
    ["group 0: SGD: maximize must be True or False, got 'no'"]
    """
    try:
        check_group(optimizer, loaded_group(group, saved))
    except (TypeError, ValueError) as error:
        return [f"group {index}: {error}"]
    return []


def state_dict_of(optimizer: Any) -> dict[str, Any]:
    """``optimizer.state_dict()``: per-parameter state (arrays as tensors) and each group's
    hyperparameters, keyed by parameter name, by position where names are unknown.

    >>> from dltutor import nn, optim
    >>> sorted(state_dict_of(optim.SGD([("w", nn.Parameter([1.0]))], lr=0.1)))
    ['optimizer', 'param_groups', 'skipped_steps', 'state', 'step_count']
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
            "skipped_steps": optimizer.skipped_steps, "state": state, "param_groups": groups}


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
    by_key = dict(zip(state_keys(optimizer),
                      [param for group in optimizer.param_groups for param in group["params"]]))
    for index, (group, saved) in enumerate(zip(optimizer.param_groups,
                                               state_dict["param_groups"])):
        for key, value in saved.items():
            if key == "params":
                continue
            value = hyper_from_state(value)
            if key in group and not same_value(group[key], value):
                changed[f"group {index} {key}"] = (group[key], value)
        # Checked as a whole already: written at once (one at a time, a write could pass
        # through a combination the check refuses, such as nesterov before momentum).
        new = loaded_group(group, saved)
        getattr(group, "replace_checked", group.update)(new)
    optimizer.state = {}           # matched by key (name): not by position in the group

    for key, entry in state_dict["state"].items():
        param = by_key[key]
        backend = B.backend_of(param.data) or B.NUMPY
        optimizer.state[param] = {
            k: (backend.asarray(v.data if isinstance(v, Tensor) else v, dtype=param.dtype)
                if hasattr(v, "shape") else v)
            for k, v in entry.items()}
    optimizer.step_count = int(state_dict.get("step_count", 0))
    optimizer.skipped_steps = int(state_dict.get("skipped_steps", 0))
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
    except Exception:  # (e.g. comparing arrays raises: then they differ)
        return a is b
