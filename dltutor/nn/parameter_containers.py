"""ParameterList and ParameterDict: parameters kept in a list or a dict, and still registered.

A module finds its parameters among its attributes. A plain Python list of Parameters is an
attribute like any other, so the module never looks inside it: ``parameters()`` skips it, the
optimizer never updates it, the state dict never saves it. These two containers are modules
whose parameters are registered, named by position (``"0"``, ``"1"``, ...) or by key, as in
PyTorch.

>>> import dltutor as dt
>>> from dltutor import nn
>>> class Scales(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.plain = [nn.Parameter(dt.ones(2))]               # invisible
...         self.scales = nn.ParameterList([dt.ones(2), dt.ones(3)])
>>> [name for name, _ in Scales().named_parameters()]
['scales.0', 'scales.1']
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from ..errors import MessageKeyError
from .module import Module
from .parameter import Parameter


class MissingKeyError(MessageKeyError, AttributeError):
    """A ParameterDict has no such key: a KeyError, as for a dict, and an AttributeError,
    which is what PyTorch's ``ParameterDict[key]`` raises, so code written for either works.

    >>> issubclass(MissingKeyError, KeyError) and issubclass(MissingKeyError, AttributeError)
    True
    """


def as_parameter(value: Any, where: str) -> Parameter:
    """``value`` as a Parameter: a Parameter stays itself, a Tensor becomes a Parameter that
    shares its memory (as ``torch.nn.Parameter(t)`` does), an array a Parameter holding a copy.
    Anything else is refused, naming ``where`` it was going.

    >>> import numpy as np
    >>> as_parameter(np.zeros(2), "ParameterList item 0").shape
    (2,)
    >>> as_parameter([1.0, 2.0], "ParameterList item 0")
    Traceback (most recent call last):
    ...
    TypeError: ParameterList item 0 is a list, not a tensor: a ParameterList or ParameterDict
    holds parameters, so give it nn.Parameter(...), a tensor (dt.tensor([1.0, 2.0])) or an array
    """
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor) or B.backend_of(value) is not None:
        return Parameter(value)
    advice = {type(None): "; leave the entry out instead of storing None"}.get(type(value), "")
    if isinstance(value, Module):
        advice = "; modules go into nn.ModuleList or nn.ModuleDict"
    example = "dt.tensor([1.0, 2.0])"
    raise TypeError(f"{where} is a {type(value).__name__}, not a tensor: a ParameterList or "
                    f"ParameterDict holds parameters, so give it nn.Parameter(...), a tensor "
                    f"({example}) or an array{advice}")


def _position(index: Any, length: int) -> int:
    """``index`` (an int, negatives from the end) as a position in a list of ``length``."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"ParameterList indices are integers or slices, got {index!r} of type "
                        f"{type(index).__name__}; for parameters by name use nn.ParameterDict")
    if not -length <= index < length:
        raise IndexError(f"ParameterList index {index} is out of range: it holds {length} "
                         f"parameter(s); add one with append()")
    return int(index) % length


class ParameterList(Module):
    """A list of parameters that a module registers, named ``"0"``, ``"1"``, ... in order.

    Tensors and arrays given to it become Parameters (a Tensor's memory is shared, as in
    PyTorch). Unlike PyTorch, which keeps any other object as a plain attribute, it refuses
    anything that is not a tensor or an array, so a mistake shows at once.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> plist = nn.ParameterList([dt.zeros(2), nn.Parameter(dt.ones(3))])
    >>> plist.append(dt.ones(1, 4))
    ParameterList(
      (0): Parameter(shape=(2,))
      (1): Parameter(shape=(3,))
      (2): Parameter(shape=(1, 4))
    )
    >>> len(plist), plist[-1].shape, [name for name, _ in plist.named_parameters()]
    (3, (1, 4), ['0', '1', '2'])
    """

    def __init__(self, values: Iterable[Any] | None = None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, index: int | slice) -> Any:
        values = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(values[index])       # the same Parameter objects
        return values[_position(index, len(values))]

    def __setitem__(self, index: int, value: Any) -> None:
        name = str(_position(index, len(self)))
        self.register_parameter(name, as_parameter(value, f"ParameterList item {name}"))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(list(self._parameters.values()))

    def __iadd__(self, values: Iterable[Any]) -> "ParameterList":
        return self.extend(values)

    def append(self, value: Any) -> "ParameterList":
        """Add one parameter at the end (a tensor or array is made a Parameter)."""
        name = str(len(self))
        self.register_parameter(name, as_parameter(value, f"ParameterList item {name}"))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Add several parameters at the end; all are checked first, so a bad one adds none.

        >>> from dltutor import nn
        >>> import dltutor as dt
        >>> plist = nn.ParameterList([dt.ones(2)])
        >>> plist.extend([dt.ones(3), "oops"])
        Traceback (most recent call last):
        ...
        TypeError: ParameterList item 2 is a str, not a tensor: a ParameterList or
        ParameterDict holds parameters, so give it nn.Parameter(...), a tensor
        (dt.tensor([1.0, 2.0])) or an array
        >>> len(plist)
        1
        """
        if isinstance(values, (Tensor, str, Mapping)) or B.backend_of(values) is not None \
                or not isinstance(values, Iterable):
            raise TypeError(f"ParameterList.extend takes a list of parameters or tensors, got "
                            f"one {type(values).__name__}; to add a single one use append()")
        start = len(self)
        params = [as_parameter(value, f"ParameterList item {start + i}")
                  for i, value in enumerate(values)]
        for param in params:
            self.append(param)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a ParameterList is not called: it only holds parameters. Use them "
                           "in the forward() of the module that owns it "
                           "(for p in self.params: ...)")


class ParameterDict(Module):
    """A dict of parameters that a module registers, named by their keys, in insertion order.

    As in PyTorch, a plain ``dict`` given to the constructor or to ``update`` is added in
    sorted key order (an ``OrderedDict``, a ParameterDict or a list of pairs keeps its order),
    and tensors and arrays become Parameters. Keys are strings without dots.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> pdict = nn.ParameterDict({"scale": dt.ones(3), "shift": dt.zeros(3)})
    >>> pdict["gate"] = dt.zeros(1)
    >>> list(pdict.keys()), "gate" in pdict, pdict["scale"].shape
    (['scale', 'shift', 'gate'], True, (3,))
    >>> pdict["gain"]
    Traceback (most recent call last):
    ...
    dltutor.nn.parameter_containers.MissingKeyError: ParameterDict has no parameter 'gain';
    it has: scale, shift, gate
    """

    def __init__(self, parameters: Any = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def _missing(self, key: Any) -> MissingKeyError:
        return MissingKeyError(f"ParameterDict has no parameter {key!r}; it has: "
                               f"{', '.join(self._parameters) or 'none'}")

    def __getitem__(self, key: str) -> Parameter:
        if key not in self._parameters:
            raise self._missing(key)
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys are strings (they become the parameters' "
                            f"names), got {key!r} of type {type(key).__name__}")
        self.register_parameter(key, as_parameter(value, f"ParameterDict[{key!r}]"))

    def __delitem__(self, key: str) -> None:
        if key not in self._parameters:
            raise self._missing(key)
        del self._parameters[key]

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._parameters))

    def keys(self) -> Iterable[str]:
        """The keys, in order."""
        return self._parameters.keys()

    def values(self) -> Iterable[Parameter]:
        """The parameters, in key order."""
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Parameter]]:
        """(key, parameter) pairs, in order."""
        return self._parameters.items()

    def get(self, key: str, default: Any = None) -> Any:
        """The parameter under ``key``, or ``default`` when there is none."""
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Parameter:
        """Remove the parameter under ``key`` and return it."""
        value = self[key]
        del self[key]
        return value

    def update(self, parameters: Any) -> None:
        """Add or replace entries from a mapping or from (key, value) pairs; everything is
        checked first, so a bad entry adds nothing. A plain ``dict`` goes in sorted key order,
        as in PyTorch.

        >>> import dltutor as dt
        >>> from dltutor import nn
        >>> pdict = nn.ParameterDict()
        >>> pdict.update({"b": dt.ones(1), "a": dt.ones(1)})
        >>> list(pdict)
        ['a', 'b']
        """
        pairs = self._pairs(parameters)
        for key, _ in pairs:
            if not isinstance(key, str):
                raise TypeError(f"ParameterDict keys are strings (they become the parameters' "
                                f"names), got {key!r} of type {type(key).__name__}")
        checked = [(key, as_parameter(value, f"ParameterDict[{key!r}]")) for key, value in pairs]
        for key, param in checked:
            self[key] = param

    @staticmethod
    def _pairs(parameters: Any) -> list[tuple[Any, Any]]:
        """The (key, value) pairs of ``parameters``, in the order PyTorch adds them."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            return list(parameters.items())
        if isinstance(parameters, Mapping):
            return sorted(parameters.items(), key=lambda item: str(item[0]))
        if isinstance(parameters, (str, Tensor)) or not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict takes a dict or a list of (key, value) pairs, got "
                            f"{type(parameters).__name__}")
        pairs = list(parameters)
        for j, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"ParameterDict: element {j} should be a (key, value) pair, "
                                 f"got {pair!r}")
        return [tuple(pair) for pair in pairs]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a ParameterDict is not called: it only holds parameters. Use them "
                           "in the forward() of the module that owns it "
                           "(self.params['scale'])")
