"""One check per optimizer setting, wherever the value comes from.

A group's hyperparameters reach an optimizer four ways: the constructor, ``add_param_group``,
``load_state_dict`` and a write by hand (``opt.param_groups[0]["lr"] = 0.01``, which is what a
scheduler does too). All four run :func:`check_group`: the keys must be the optimizer's, the
flags (``maximize``, ``nesterov``, ``amsgrad``, ...) real bools, ``param_names`` one name per
parameter, and the numbers whatever the optimizer's own ``_check_group`` asks.

A write by hand is checked because every group is a :class:`ParamGroup`: a ``dict`` (PyTorch's
API: ``param_groups`` is a list of dicts) that checks what is written into it, before it
changes. The check runs when a value is set, never in ``step()``.

>>> from dltutor import nn, optim
>>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
>>> opt.param_groups[0]["nesterov"] = "yes"
Traceback (most recent call last):
...
TypeError: param_groups[0]['nesterov'] = 'yes' refused: SGD: nesterov must be True or False,
got 'yes'
>>> opt.param_groups[0]["lr"] = 0.05; opt.param_groups[0]["lr"]
0.05
"""
from __future__ import annotations

from typing import Any

from .. import checks
from .param_groups import STRUCTURAL_KEYS

#: Hyperparameters that are switches: True or False, never "no" (a non-empty string is true in
#: Python, so ``maximize="no"`` would climb the loss) nor 0/1. PyTorch's own flags are here too.
FLAGS = ("maximize", "nesterov", "amsgrad", "centered", "foreach", "capturable",
         "differentiable", "fused")

#: Why a rule that divides by ``sqrt(v) + eps`` needs ``eps > 0``.
EPS_HINT = "with a zero gradient and eps 0 the update is 0/0 = NaN"


def check_eps(owner: str, value: Any) -> Any:
    """``value`` if it is a finite number > 0: the ``eps`` of Adam, AdamW, RMSprop and Adagrad,
    which divide by ``sqrt(v) + eps``. PyTorch accepts ``eps=0``, and then an entry whose
    gradient has always been zero becomes 0/0 = NaN; dltutor refuses it.

    >>> check_eps("Adam", 1e-8)
    1e-08
    >>> check_eps("Adam", 0.0)
    Traceback (most recent call last):
    ...
    ValueError: Adam: eps must be a number > 0, got 0.0 (with a zero gradient and eps 0 the
    update is 0/0 = NaN)
    """
    return checks.positive(owner, "eps", value, hint=EPS_HINT)


def check_group(optimizer: Any, group: dict[str, Any]) -> None:
    """The one check of a whole group for ``optimizer``: known keys, real-bool flags,
    ``param_names`` that fit ``params``, then the optimizer's own ``_check_group`` (numbers in
    range). Raises ValueError or TypeError naming the optimizer, the key and the value.

    >>> from dltutor import nn, optim
    >>> opt = optim.Adam([nn.Parameter([1.0])])
    >>> check_group(opt, dict(opt.param_groups[0], amsgrad="no"))
    Traceback (most recent call last):
    ...
    TypeError: Adam: amsgrad must be True or False, got 'no'
    """
    owner = type(optimizer).__name__
    unknown = [k for k in group if k not in optimizer.defaults and k not in STRUCTURAL_KEYS]
    if unknown:
        raise ValueError(f"{owner}: unknown hyperparameter(s) {', '.join(map(repr, unknown))} "
                         f"in a parameter group; {owner} knows "
                         f"{', '.join(sorted(optimizer.defaults))}")
    for key in FLAGS:
        if key in group:
            checks.flag(owner, key, group[key])
    if "param_names" in group and "params" in group:
        check_param_names(owner, group["param_names"], len(group["params"]))
    optimizer._check_group(group)


def check_param_names(owner: str, names: Any, count: int) -> list[Any]:
    """``names`` if it is a list with one entry per parameter of the group (``count``), each a
    string (or None for a parameter given without a name), no name twice.

    >>> check_param_names("SGD", ["w", None], 2)
    ['w', None]
    >>> check_param_names("SGD", ["w"], 2)
    Traceback (most recent call last):
    ...
    ValueError: SGD: param_names must be a list of 2 names (one per parameter of the group),
    got ['w']
    """
    ok = isinstance(names, list) and len(names) == count and all(
        name is None or isinstance(name, str) for name in names)
    if not ok:
        raise ValueError(f"{owner}: param_names must be a list of {count} names (one per "
                         f"parameter of the group), got {names!r}")
    given = [name for name in names if name is not None]
    if len(set(given)) != len(given):
        raise ValueError(f"{owner}: param_names {names!r} holds a name twice; each parameter "
                         "needs its own")
    return names


class ParamGroup(dict):
    """One of ``optimizer.param_groups``: a plain dict for reading (``group["lr"]``, as in
    PyTorch) whose writes (``group[key] = value``, ``update``, ``setdefault``) are checked by
    :func:`check_group` first; a refused write changes nothing.

    >>> from dltutor import nn, optim
    >>> opt = optim.Adam([nn.Parameter([1.0])])
    >>> group = opt.param_groups[0]
    >>> isinstance(group, dict)
    True
    >>> group["eps"] = 0.0
    Traceback (most recent call last):
    ...
    ValueError: param_groups[0]['eps'] = 0.0 refused: Adam: eps must be a number > 0, got 0.0
    (with a zero gradient and eps 0 the update is 0/0 = NaN)
    >>> group["eps"]
    1e-08
    """

    __slots__ = ("_optimizer",)

    def __init__(self, values: dict[str, Any], optimizer: Any):
        super().__init__(values)
        self._optimizer = optimizer

    def __setitem__(self, key: str, value: Any) -> None:
        self._check({key: value})
        dict.__setitem__(self, key, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        new = dict(*args, **kwargs)
        self._check(new)
        dict.update(self, new)

    def __ior__(self, other: Any) -> "ParamGroup":  # type: ignore[misc]  # dict's | stays
        self.update(other)
        return self

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def replace_checked(self, values: dict[str, Any]) -> None:
        """Write ``values`` that :func:`check_group` has already passed as a whole (a load):
        one at a time they could pass through a state the check refuses."""
        dict.update(self, values)

    def __reduce__(self) -> tuple:
        # copy.deepcopy(optimizer) and pickle: rebuild with the values, without re-checking.
        return (_rebuild, (dict(self), self._optimizer))

    def _check(self, new: dict[str, Any]) -> None:
        changed = {k: v for k, v in new.items() if k not in self or self[k] is not v}
        if not changed:
            return
        try:
            check_group(self._optimizer, {**self, **changed})
        except (TypeError, ValueError) as error:
            where = ", ".join(f"param_groups[{self._index()}][{k!r}] = {v!r}"
                              for k, v in changed.items())
            raise type(error)(f"{where} refused: {error}") from None

    def _index(self) -> Any:
        groups = getattr(self._optimizer, "param_groups", [])
        return next((i for i, group in enumerate(groups) if group is self), "?")


def _rebuild(values: dict[str, Any], optimizer: Any) -> ParamGroup:
    group = ParamGroup({}, optimizer)
    dict.update(group, values)
    return group
