"""Containers: Sequential, ModuleList and ModuleDict.

>>> from dltutor import nn
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> len(net), net[-1]
(3, Linear(in_features=8, out_features=1, bias=True))
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

import numpy as np

from ..errors import MessageKeyError
from .module import Module


def _position(index: Any, length: int, what: str) -> int:
    """``index`` as a position in a container of ``length`` modules (negatives from the end)."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"{what} indices are integers or slices, got {index!r} of type "
                        f"{type(index).__name__}; a named child is reached as an attribute or "
                        "with dict(model.named_children())[name]")
    if not -length <= index < length:
        raise IndexError(f"{what} index {index} is out of range: it holds {length} module(s)")
    return index % length


def _check_modules(what: str, modules: list) -> None:
    """Refuse a list that holds anything but Modules, before any of it is added."""
    for i, module in enumerate(modules):
        if not isinstance(module, Module):
            raise TypeError(f"{what}: item {i} is a {type(module).__name__}, not a Module "
                            "(layers such as nn.Linear(2, 3) are Modules; functions are not)")


class Sequential(Module):
    """Modules applied one after another; the output of each is the input of the next.

    Children are named ``"0"``, ``"1"``, ... unless you name them with ``add_module``.
    ``net[i]`` is the i-th module by position, ``net[1:]`` a Sequential of the rest.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    >>> net(dt.ones(5, 2)).shape
    (5, 3)
    """

    def __init__(self, *modules: Module | dict[str, Module]):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, layer in enumerate(modules):
                self.add_module(str(i), layer)  # type: ignore[arg-type]  # it refuses a dict

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index: int | slice) -> Module:
        items = list(self._modules.items())
        if isinstance(index, slice):
            return type(self)(dict(items[index]))
        return items[_position(index, len(items), type(self).__name__)][1]

    def __setitem__(self, index: int, module: Module) -> None:
        name = list(self._modules)[_position(index, len(self), type(self).__name__)]
        self.add_module(name, module)

    def __delitem__(self, index: int) -> None:
        name = list(self._modules)[_position(index, len(self), type(self).__name__)]
        del self._modules[name]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        """Add a module at the end (named by its position)."""
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters are registered (a plain Python list would hide them).

    >>> from dltutor import nn
    >>> blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(blocks.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        values = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(values[index])
        return values[_position(index, len(values), "ModuleList")]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(str(_position(index, len(self), "ModuleList")), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "ModuleList":
        """Add a module at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Add several modules at the end (all checked first: a bad one adds none)."""
        modules = list(modules)
        _check_modules("ModuleList.extend", modules)
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position ``index`` (later ones are renumbered)."""
        _check_modules("ModuleList.insert", [module])
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"ModuleList.insert: index must be an integer, got {index!r}")
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        self.extend(values)


class ModuleDict(Module):
    """A dict of modules whose parameters are registered, in insertion order.

    >>> from dltutor import nn
    >>> heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
    >>> [n for n, _ in heads.named_parameters()][:2]
    ['cls.weight', 'cls.bias']
    """

    def __init__(self, modules: dict[str, Module] | None = None):
        super().__init__()
        for name, module in (modules or {}).items():
            self[name] = module

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise MessageKeyError(f"ModuleDict has no module {key!r}; it has: "
                           f"{', '.join(self._modules) or 'none'}")
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Iterable[str]:
        """The names."""
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules."""
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """(name, module) pairs."""
        return self._modules.items()
