"""Module: the building block of networks, and the owner of their parameters.

A module registers every :class:`Parameter`, buffer and submodule you assign to it, in the order
you assign them, and names them with dots: the bias of the first layer of a Sequential is
``"0.bias"``. Everything about parameter management starts from those names.

>>> from dltutor import nn
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias', '2.weight', '2.bias']
>>> net[2].state_dict()['bias'].shape
(1,)
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from ..autograd import Tensor
from ..autograd.function import make_tensor
from ..errors import MessageKeyError
from ..hooks import HookHandle
from .paddle_module import PaddleModuleNames
from .parameter import Parameter, is_uninitialized
from .placement import ModulePlacement
from .state_dict import StateDictLoading
from .utils.grads import zero_grads


_KINDS = {"_parameters": "a parameter", "_buffers": "a buffer", "_modules": "a submodule"}


def _check_name(kind: str, name: Any, owner: "Module", store: str) -> None:
    """Refuse a name that cannot be registered in ``owner``'s ``store``: not a string, empty,
    dotted, a method's name, or already held by something else (PyTorch: "attribute 'x'
    already exists"); re-registering the same kind under its own name is fine."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a string, got {type(name).__name__}")
    if name == "" or "." in name:
        raise MessageKeyError(f"{kind} name {name!r} is not allowed: it must be non-empty and "
                              "contain no '.', because dots separate the levels of a structured "
                              "name")
    if hasattr(type(owner), name):
        raise MessageKeyError(f"{kind} name {name!r} would hide the method or attribute "
                              f"{type(owner).__name__}.{name}; choose another name")
    holder = next((label for other, label in _KINDS.items()
                   if other != store and name in owner.__dict__.get(other, {})), None)
    if holder is None and name in owner.__dict__:
        holder = "a plain attribute"
    if holder is not None:
        raise MessageKeyError(f"attribute {name!r} already exists: {type(owner).__name__}.{name} "
                              f"is {holder}, and registering {kind} {name!r} would silently "
                              f"replace it. Choose another name, or `del module.{name}` first")


class Module(ModulePlacement, StateDictLoading, PaddleModuleNames):
    """Base class of every layer and network. Three pieces of it have their own files, and
    Module inherits them: moving it (``to``, ``double``, ``float``) is placement.py, loading
    a state dict state_dict.py, Paddle's spellings of its methods (``clear_gradients``...)
    paddle_module.py.

    Subclass it, create parameters and submodules in ``__init__`` (after
    ``super().__init__()``), and compute the output in ``forward``:

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> class Scale(nn.Module):
    ...     def __init__(self, n):
    ...         super().__init__()
    ...         self.gain = nn.Parameter(dt.ones(n))
    ...     def forward(self, x):
    ...         return x * self.gain
    >>> Scale(3)(dt.tensor([1.0, 2.0, 3.0]))
    tensor([1., 2., 3.], grad_fn=<MulBackward>)
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "training", True)

    # -- computing ------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output. Every subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward() (subclass it)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_hook(self, hook: Callable[["Module", tuple, Any], Any]) -> HookHandle:
        """Call ``hook(module, inputs, output)`` after every forward; it may return a new output.

        >>> from dltutor import nn
        >>> import dltutor as dt
        >>> layer = nn.ReLU()
        >>> seen = []
        >>> handle = layer.register_forward_hook(lambda m, inputs, out: seen.append(out.shape))
        >>> _ = layer(dt.ones(2, 3)); handle.remove(); _ = layer(dt.ones(1))
        >>> seen
        [(2, 3)]
        """
        self._forward_hooks.append(hook)
        return HookHandle(self._forward_hooks, hook)

    # -- registration ---------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__ and isinstance(value, (Parameter, Module)):
            raise AttributeError(f"cannot assign {type(value).__name__} {name!r} before "
                                 f"Module.__init__(): call super().__init__() first in "
                                 f"{type(self).__name__}.__init__")
        params, buffers, modules = (self.__dict__.get(k) for k in
                                    ("_parameters", "_buffers", "_modules"))
        if isinstance(value, Parameter):
            self._forget(name, keep="_parameters")
            params[name] = value  # type: ignore[index]  # set by __init__, checked above
        elif isinstance(value, Module):
            self._forget(name, keep="_modules")
            modules[name] = value  # type: ignore[index]  # set by __init__, checked above
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to parameter {name!r} of "
                                f"{type(self).__name__}: assign an nn.Parameter, or change its "
                                f"values with {name}.set_value(...)")
            params[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"buffer {name!r} must be a Tensor or None, got "
                                f"{type(value).__name__}")
            buffers[name] = value
        elif modules is not None and name in modules and value is None:
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str | None = None) -> None:
        """Drop ``name`` from every registry but ``keep`` and from the plain attributes.

        The registry that gets the new value keeps its entry, so replacing a parameter keeps
        its place in ``named_parameters()`` and ``state_dict()`` (as in PyTorch).
        """
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                self.__dict__[store].pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        known = [n for store in ("_parameters", "_buffers", "_modules") for n in d.get(store, ())]
        hint = f"; it has: {', '.join(known)}" if known else ""
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}{hint}")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` under ``name`` (same as assigning ``self.name = param``).

        >>> from dltutor import nn
        >>> m = nn.Module(); m.register_parameter("w", nn.Parameter([1.0]))
        >>> list(m.state_dict())
        ['w']
        """
        _check_name("parameter", name, self, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter({name!r}) needs an nn.Parameter or None, got "
                            f"{type(param).__name__}")
        self._forget(name, keep="_parameters")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not learned (BatchNorm's running mean).

        Buffers are saved in the state dict (unless ``persistent=False``) and moved by ``to``,
        but optimizers never see them.

        >>> import dltutor as dt
        >>> from dltutor import nn
        >>> m = nn.Module(); m.register_buffer("count", dt.zeros(1))
        >>> list(m.state_dict()), list(m.parameters())
        (['count'], [])
        """
        _check_name("buffer", name, self, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"buffer {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self._forget(name, keep="_buffers")
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register a submodule under ``name``; names may contain spaces (``"block 0"``).

        >>> from dltutor import nn
        >>> net = nn.Sequential()
        >>> net.add_module("block 0", nn.Linear(2, 2))
        >>> [n for n, _ in net.named_parameters()]
        ['block 0.weight', 'block 0.bias']
        """
        _check_name("module", name, self, "_modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module({name!r}) needs a Module, got {type(module).__name__}")
        self._forget(name, keep="_modules")
        self._modules[name] = module

    # -- walking the tree -----------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The direct submodules with their names."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        """The direct submodules."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """Every module in the tree, this one first (named ``""``), depth first.

        >>> from dltutor import nn
        >>> [name for name, _ in nn.Sequential(nn.Linear(1, 1), nn.ReLU()).named_modules()]
        ['', '0', '1']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = f"{prefix}.{name}" if prefix else name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        """Every module in the tree, this one first."""
        for _, module in self.named_modules():
            yield module

    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its structured name. A tied parameter appears once, under the
        first name it was reached by, unless ``remove_duplicate=False``.

        >>> from dltutor import nn
        >>> shared = nn.Linear(2, 2)
        >>> net = nn.Sequential(shared, nn.ReLU(), shared)
        >>> [n for n, _ in net.named_parameters()]
        ['0.weight', '0.bias']
        >>> [n for n, _ in net.named_parameters(remove_duplicate=False)]
        ['0.weight', '0.bias', '2.weight', '2.bias']
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (each tied one once).

        >>> from dltutor import nn
        >>> sum(p.numel() for p in nn.Linear(3, 2).parameters())
        8
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Every buffer with its structured name."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> "Module":
        """The submodule at a dotted path (``""`` is this module).

        >>> from dltutor import nn
        >>> net = nn.Sequential(nn.Sequential(nn.Linear(1, 2)))
        >>> net.get_submodule("0.0")
        Linear(in_features=1, out_features=2, bias=True)
        """
        module = self
        if target == "":
            return module
        walked: list[str] = []
        for part in target.split("."):
            children = module.__dict__["_modules"]
            if part not in children or children[part] is None:
                where = ".".join(walked) or "the root"
                raise AttributeError(f"no submodule {part!r} in {where} "
                                     f"({type(module).__name__}); it has: "
                                     f"{', '.join(children) or 'no submodules'}")
            module = children[part]
            walked.append(part)
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path such as ``"0.bias"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        params = module.__dict__["_parameters"]
        if params.get(name) is None:
            raise AttributeError(f"{type(module).__name__} at {module_path or 'the root'!r} has no "
                                 f"parameter {name!r}; it has: {', '.join(params) or 'none'}")
        return params[name]

    # -- state -----------------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict[str, Tensor]:
        """Every parameter and persistent buffer by name, tied parameters under EVERY alias.

        Values are detached tensors sharing memory with the parameters (``keep_vars=True``
        gives the Parameter objects themselves).

        >>> from dltutor import nn
        >>> list(nn.BatchNorm1d(3).state_dict())
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        state: dict[str, Tensor] = {}
        for module_prefix, module in self.named_modules(prefix=prefix, remove_duplicate=False):
            dot = f"{module_prefix}." if module_prefix else ""
            for name, param in module._parameters.items():
                if param is not None:
                    # A lazy layer's parameter with no values yet goes in as itself (PyTorch
                    # lists it too); saving it or loading into it is what needs values.
                    keep = keep_vars or is_uninitialized(param)
                    state[dot + name] = param if keep else make_tensor(param.data)
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    state[dot + name] = buffer if keep_vars else make_tensor(buffer.data)
        return state

    # -- modes and bulk changes ----------------------------------------------------------------
    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on this one.

        The usual way to initialize a whole network:

        >>> from dltutor import nn
        >>> from dltutor.nn import init
        >>> def init_linear(m):
        ...     if isinstance(m, nn.Linear):
        ...         init.constant_(m.weight, 1.0)
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(init_linear)
        >>> net[0].weight.tolist()
        [[1.0, 1.0], [1.0, 1.0]]
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def train(self, mode: bool = True) -> "Module":
        """Switch this module and every submodule to training mode (or evaluation with False)."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        """Switch to evaluation mode: Dropout off, BatchNorm uses its running statistics."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's gradient to None (the next backward starts afresh), or fill
        it with zeros (``set_to_none=False``), as ``Optimizer.zero_grad``.

        >>> import dltutor as dt
        >>> from dltutor import nn
        >>> layer = nn.Linear(2, 1); layer(dt.ones(1, 2)).sum().backward()
        >>> layer.zero_grad(); layer.weight.grad is None
        True
        """
        zero_grads(self.parameters(), set_to_none)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Switch gradients of every parameter on or off (False freezes the module).

        >>> from dltutor import nn
        >>> layer = nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in layer.parameters()]
        [False, False]
        """
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # -- printing --------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's line in ``repr`` (layers set it)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, param in self._parameters.items():
            if param is not None and not self.extra_repr():
                lines.append(f"({name}): Parameter(shape={tuple(param.shape)})")
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


#: Paddle's name for :class:`Module`: the same class object, so ``nn.Layer is nn.Module`` and
#: a subclass of either is a subclass of both.
Layer = Module
