"""ties(model): the groups of names that share one parameter object."""
from __future__ import annotations

from typing import Any, Iterator

from ..i18n import text
from .adapters import adapter_for
from .report import cell_text, Report


class Ties(Report):
    """What :func:`ties` returns: ``.groups`` (a list of lists of names) and ``.rows``.

    It is also a sequence of those groups: ``len(t)``, ``for names in t``.

    >>> from dltutor import nn
    >>> len(ties(nn.Linear(2, 2)))
    0
    """

    columns = ["names", "shape", "count"]

    def __init__(self, groups: list[list[str]], rows: list[dict[str, Any]], title: str):
        self.groups, self.rows, self.title = groups, rows, title
        self.empty_text = text("diagnose.ties.empty")

    def _cells(self) -> list[list[str]]:
        return [[" = ".join(r["names"]), cell_text(r["shape"]), cell_text(r["count"])] for r in self.rows]

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self) -> Iterator[list[str]]:
        return iter(self.groups)

    def to_dict(self) -> dict[str, Any]:
        """``{"groups": [[names...], ...]}``."""
        return {"groups": [list(g) for g in self.groups]}


def ties(model: Any) -> Ties:
    """Which names in this model are one and the same parameter object?

    Returns the groups of two or more names that share a parameter, in the order the
    parameters are first reached. Each group is one tensor: it is stored once, counted once,
    updated once per step, and its gradient is the sum over every place it is used.

    >>> from dltutor import nn
    >>> shared = nn.Linear(3, 3)
    >>> net = nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(3, 1))
    >>> t = ties(net)
    >>> t.groups
    [['0.weight', '2.weight'], ['0.bias', '2.bias']]
    >>> t
    tied parameters of Sequential
      names                 shape   count
      -----                 -----   -----
      0.weight = 2.weight   (3, 3)  9
      0.bias = 2.bias       (3,)    3
    """
    adapter = adapter_for(model)
    names_of: dict[int, list[str]] = {}
    objects: dict[int, Any] = {}
    for name, p in adapter.named_parameters(model):
        names_of.setdefault(id(p), []).append(name)
        objects[id(p)] = p
    tied = [(objects[key], names) for key, names in names_of.items() if len(names) > 1]
    groups = [names for _, names in tied]
    rows = [{"names": list(names), "shape": adapter.shape(p), "count": adapter.count(p)}
            for p, names in tied]
    return Ties(groups, rows, text("diagnose.ties.title", model=type(model).__name__))
