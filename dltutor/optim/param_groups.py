"""Reading what a learner hands an optimizer: Parameters, ``(name, Parameter)`` pairs or group
dicts, checked for the mistakes that would otherwise pass in silence (a parameter listed twice,
two parameters with one name, a tensor computed by an op).

>>> from dltutor import nn
>>> net = nn.Linear(2, 1)
>>> [sorted(group) for group in as_groups(net.named_parameters(), "SGD")]
[['params']]
>>> split_names(net.named_parameters(), "SGD")[1]
['weight', 'bias']
"""
from __future__ import annotations

from typing import Any

from ..autograd import Tensor

#: Keys every group may carry besides the optimizer's hyperparameters.
STRUCTURAL_KEYS = ("params", "param_names", "initial_lr")


def as_groups(params: Any, owner: str) -> list[dict[str, Any]]:
    """The group dicts in ``params``: the dicts themselves, or one group holding all of it.

    >>> as_groups([{"params": [], "lr": 0.1}], "SGD")
    [{'params': [], 'lr': 0.1}]
    """
    if isinstance(params, Tensor):
        raise TypeError(f"{owner} needs an iterable of parameters, got a single tensor; wrap it "
                        "in a list: [param]")
    if isinstance(params, dict):
        return [params]
    items = list(params)
    if items and all(isinstance(item, dict) for item in items):
        return items
    return [{"params": items}] if items else []


def make_group(owner: str, defaults: dict[str, Any], groups: list[dict[str, Any]],
               group: Any) -> dict[str, Any]:
    """The group dict ``add_param_group`` adds: the given hyperparameters, the others from
    ``defaults``, ``params`` and ``param_names`` as lists (names None where unknown). Its keys
    and values are checked afterwards, by ``settings.check_group``.

    >>> from dltutor import nn
    >>> new = make_group("SGD", {"lr": 0.1, "momentum": 0.0}, [],
    ...                  {"params": [("w", nn.Parameter([1.0]))], "lr": 0.5})
    >>> new["lr"], new["momentum"], new["param_names"]
    (0.5, 0.0, ['w'])
    """
    if not isinstance(group, dict) or "params" not in group:
        raise TypeError("a parameter group is a dict with a 'params' entry, e.g. "
                        "{'params': model.parameters(), 'lr': 0.01}")
    params, names = split_names(group["params"], owner)
    if "param_names" in group:
        names = list(group["param_names"])
    check_new_params(owner, groups, params, names)
    new = {k: v for k, v in group.items() if k not in ("params", "param_names")}
    for key, value in defaults.items():
        new.setdefault(key, value)
    new["params"] = params
    new["param_names"] = names
    return new


def split_names(params: Any, owner: str) -> tuple[list[Tensor], list[str | None]]:
    """The parameters and their names (None where none was given) from Parameters or
    ``(name, Parameter)`` pairs.

    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> split_names([w], "SGD")[1], split_names([("w", w)], "SGD")[1]
    ([None], ['w'])
    """
    if isinstance(params, Tensor):
        params = [params]
    out, names = [], []
    for item in params:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            name, param = item
        else:
            name, param = None, item
        if not isinstance(param, Tensor):
            raise TypeError(f"{owner} can only optimize tensors (nn.Parameter); got "
                            f"{type(param).__name__}")
        out.append(param)
        names.append(name)
    return out, names


def check_new_params(owner: str, groups: list[dict[str, Any]], params: list[Tensor],
                     names: list[str | None]) -> None:
    """Refuse parameters that cannot join ``groups``: a computed tensor, a parameter already in
    a group (or twice in this one), a name already taken.

    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> check_new_params("SGD", [], [w, w], ["w", "w"])
    Traceback (most recent call last):
    ...
    ValueError: SGD: 'w' appears twice; each parameter may be in one group only. (PyTorch only
    warns here and then updates it twice per step.) A tied parameter is one object: list it once.
    """
    seen = {id(p): n for g in groups for p, n in zip(g["params"], g["param_names"])}
    taken = {n for g in groups for n in g["param_names"] if n is not None}
    for index, (param, name) in enumerate(zip(params, names)):
        if not param.is_leaf:
            raise ValueError(f"{owner} can only optimize leaf tensors (made by you, not "
                             f"computed); {_describe(name, index, param)} is the result of an op")
        if id(param) in seen:
            first = seen[id(param)]
            also = f" (already added as {first!r})" if first is not None and first != name else ""
            raise ValueError(
                f"{owner}: {_describe(name, index, param)} appears twice{also}; each parameter "
                "may be in one group only. (PyTorch only warns here and then updates it twice "
                "per step.) A tied parameter is one object: list it once.")
        seen[id(param)] = name
        if name is not None:
            if name in taken:
                raise ValueError(f"{owner}: two parameters are both named {name!r}; give the "
                                 "models different prefixes, e.g. "
                                 "model.named_parameters(prefix='encoder')")
            taken.add(name)


def _describe(name: str | None, index: int, param: Tensor) -> str:
    return repr(name) if name is not None else f"parameter #{index} with shape {tuple(param.shape)}"
