"""Paddle's spellings on Module: ``add_sublayer``, ``create_parameter``, ``set_state_dict``,
``clear_gradients``.

Paddle calls a module a ``Layer`` (``nn.Layer is nn.Module`` here) and names a few of its
methods its own way, with its own defaults. Each one here is a few lines over the PyTorch-named
method of :class:`~dltutor.nn.Module` that does the work, so Module's file shows PyTorch's API
and this one shows what Paddle changes. Module inherits them:

>>> from dltutor import nn
>>> issubclass(nn.Module, PaddleModuleNames)
True
>>> [name for name in vars(PaddleModuleNames) if not name.startswith("_")]
['add_sublayer', 'create_parameter', 'set_state_dict', 'clear_gradients']
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, TypeVar

from .paddle_names import new_parameter
from .parameter import Parameter
from .state_dict import LoadResult
from .utils.grads import clear_grads

#: Whatever module ``add_sublayer`` is given, it returns (module.py imports this file, so
#: naming Module here would make a cycle).
Sublayer = TypeVar("Sublayer")


class PaddleModuleNames:
    """Paddle's names for Module's methods (a mixin: :class:`~dltutor.nn.Module` inherits it,
    nothing else does)."""

    if TYPE_CHECKING:                    # what the methods below use of Module
        def add_module(self, name: str, module: Any) -> None: ...

        def load_state_dict(self, state_dict: dict[str, Any],
                            strict: bool = True) -> LoadResult: ...

        def parameters(self, recurse: bool = True) -> Iterator[Parameter]: ...

    def add_sublayer(self, name: str, sublayer: Sublayer) -> Sublayer:
        """Paddle's name for :meth:`add_module`; returns ``sublayer``, as Paddle does.

        >>> from dltutor import nn
        >>> net = nn.Layer()
        >>> fc = nn.Linear(2, 2)
        >>> net.add_sublayer("fc", fc) is fc, net.fc is fc
        (True, True)
        """
        self.add_module(name, sublayer)
        return sublayer

    def create_parameter(self, shape: Any, attr: Any = None, dtype: Any = None,
                         is_bias: bool = False,
                         default_initializer: Any = None) -> Parameter | None:
        """Paddle's ``Layer.create_parameter``, in Paddle's argument order: a NEW Parameter of
        ``shape``, described by ``attr`` (an :class:`~dltutor.nn.ParamAttr`) and filled by its
        initializer, else ``default_initializer``, else Paddle's default: ``XavierUniform``
        for a weight, zeros for a bias (``is_bias=True``). ``dtype`` defaults to float32.

        As in Paddle it is NOT registered: assign it (``self.w = ...``) to make it part of
        the module.

        >>> from dltutor import nn
        >>> m = nn.Layer()
        >>> w = m.create_parameter([3, 4])
        >>> list(m.parameters()), w.shape
        ([], (3, 4))
        >>> m.w = w; [name for name, _ in m.named_parameters()]
        ['w']
        """
        return new_parameter(type(self).__name__, shape, attr, dtype, is_bias,
                             default_initializer)

    def set_state_dict(self, state_dict: dict[str, Any],
                       use_structured_name: bool = True) -> tuple[list[str], list[str]]:
        """Paddle's name for ``load_state_dict(state_dict, strict=False)``: Paddle loads the
        keys that match and returns ``(missing_keys, unexpected_keys)``, a tuple of two lists
        (not a LoadResult). Paddle skips a value of the wrong shape with a warning; here a
        shape mismatch is refused and nothing changes, as in ``load_state_dict``.

        >>> from dltutor import nn
        >>> a, b = nn.Linear(2, 3), nn.Linear(2, 3, bias=False)
        >>> a.set_state_dict(b.state_dict())
        (['bias'], [])
        """
        if use_structured_name is not True:
            raise ValueError(f"{type(self).__name__}.set_state_dict: use_structured_name="
                             f"{use_structured_name!r} is not supported: dltutor parameters have "
                             "only structured names ('fc.weight'); leave it True")
        result = self.load_state_dict(state_dict, strict=False)
        return list(result.missing_keys), list(result.unexpected_keys)

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """Paddle's name for :meth:`zero_grad`, with Paddle's default: zeros, not None.

        >>> import dltutor as dt
        >>> from dltutor import nn
        >>> layer = nn.Linear(2, 1); layer(dt.ones(1, 2)).sum().backward()
        >>> layer.clear_gradients(); layer.bias.grad
        tensor([0.])
        """
        clear_grads(self.parameters(), set_to_zero, f"{type(self).__name__}.clear_gradients")
