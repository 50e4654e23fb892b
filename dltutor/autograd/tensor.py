"""Tensor: an array with an optional gradient, and every operator and method learners use on it.

A Tensor holds a backend array (``t.data``, NumPy or CuPy) and, when it was computed from
tensors that require gradients, the :class:`~dltutor.autograd.function.Function` that made it
(``t.grad_fn``). ``t.backward()`` walks those functions from the output back to the leaves
(see :mod:`dltutor.autograd.engine`) and adds each leaf's gradient into its ``.grad``.

Every operator and method is declared here, in the class. Most are the op itself
(``exp = ops.exp``: ``t.exp()`` is ``dt.exp(t)``); the few that are more say why.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""
from __future__ import annotations

import builtins  # (inside class Tensor, `float` is the method t.float())
import operator
import weakref
from numbers import Real
from typing import Any, Callable, Iterable, overload

import numpy as np
from numpy.typing import DTypeLike

from .. import backend as B
from .. import devices, host_reads
from ..hooks import HookHandle
from . import engine, fills, ops
from .arrays import Array
from .dtypes import to_array
from .function import (Function, init_tensor, is_grad_enabled, make_tensor,
                       register_tensor_class)
from .ops.arithmetic import Add, Mul
from .ops.operands import Operand
from .placement import Device, to_targets
from .printing import tensor_text

#: A gradient hook: called with the gradient, returns None (keep it) or a replacement.
GradHook = Callable[["Tensor"], object]

# The dtypes a printed tensor does not name (as PyTorch, whose default float is float32).
_DEFAULT_DTYPES = (np.float32, np.int64, np.bool_)


class ElementCount(int):
    """``t.size`` is the number of elements, as in NumPy; calling it, ``t.size()``, gives the
    shape, as in PyTorch.

    >>> import dltutor as dt
    >>> t = dt.zeros(2, 3)
    >>> t.size, t.size(), t.size(1)
    (6, (2, 3), 3)
    """

    shape: tuple[int, ...]

    def __new__(cls, count: int, shape: tuple[int, ...]):
        obj = super().__new__(cls, count)
        obj.shape = shape
        return obj

    @overload
    def __call__(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def __call__(self, dim: int) -> int: ...

    def __call__(self, dim: int | None = None) -> int | tuple[int, ...]:
        return self.shape if dim is None else self.shape[dim]


class Tensor:
    """An array with an optional gradient, the value every dltutor op takes and returns.

    Make one with :func:`dltutor.tensor` (which copies its data); ``t.data`` is the backend
    array, ``t.grad`` the accumulated gradient (a Tensor, or None before any backward).

    >>> import dltutor as dt
    >>> t = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> t.shape, t.dtype, t.requires_grad, t.grad is None
    ((2, 2), dtype('float32'), True, True)
    """

    __slots__ = ("data", "grad", "requires_grad", "_fn", "_hooks", "__weakref__")
    # The slots' types, for mypy (init_tensor in function.py fills them; no class attribute here)
    data: Array                      # the backend array: NumPy's or CuPy's (see arrays.py)
    grad: Tensor | None
    requires_grad: bool
    _fn: Function | None             # the op that made this tensor, None for a leaf
    _hooks: list[GradHook] | None
    __array_priority__ = 1000  # so ``ndarray + Tensor`` defers to Tensor.__radd__

    def __init__(self, data: Any, dtype: DTypeLike | None = None, requires_grad: bool = False):
        init_tensor(self, to_array(data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    # -- what it is -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints."""
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        """The element type (``dt.float32`` unless asked otherwise)."""
        return self.data.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.data.ndim

    @property
    def size(self) -> ElementCount:
        """Number of elements (NumPy's ``size``); call it, ``t.size()``, for PyTorch's shape."""
        return ElementCount(self.data.size, self.data.shape)

    def numel(self) -> int:
        """Number of elements.

        >>> import dltutor as dt
        >>> dt.zeros(2, 3).numel()
        6
        """
        return int(self.data.size)

    def dim(self) -> int:
        """Number of dimensions (PyTorch's spelling of ``ndim``)."""
        return self.data.ndim

    @property
    def device(self) -> str:
        """``"cpu"`` for NumPy arrays, ``"gpu"`` for CuPy arrays."""
        backend = B.backend_of(self.data)
        return backend.device if backend is not None else "cpu"

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by you (not by an op that records gradients)."""
        return self._fn is None

    @property
    def grad_fn(self) -> Function | None:
        """The op that made this tensor, or None for a leaf."""
        return self._fn

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor (a scalar); use .item() to read its value")
        return self.data.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- reading values -------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory on the CPU, copies from the GPU).

        >>> import dltutor as dt
        >>> dt.tensor([1, 2]).numpy()
        array([1, 2])
        """
        host_reads.settle()          # checks a GPU step left: the host reads now anyway
        return B.to_numpy(self.data)

    def item(self) -> builtins.float | int | bool:
        """The single value of a one-element tensor as a Python number.

        >>> import dltutor as dt
        >>> dt.tensor([2.5]).item()
        2.5
        """
        if self.data.size != 1:
            raise ValueError(f"item() needs a tensor with exactly one element; this one has shape "
                             f"{tuple(self.shape)} ({self.data.size} elements). Index it first or "
                             f"use .tolist().")
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor with {self.data.size} elements is "
                             "ambiguous; use .any() or .all()")
        return bool(self.item())

    def all(self) -> bool:
        """True when every element is true (non-zero)."""
        host_reads.settle()
        return bool(self.data.all())

    def any(self) -> bool:
        """True when some element is true (non-zero)."""
        host_reads.settle()
        return bool(self.data.any())

    def __format__(self, spec: str) -> str:
        """A one-element tensor formats as its number, so ``f"{loss:.3f}"`` works as in
        PyTorch; a larger tensor takes no format spec (format ``t.numpy()`` instead).

        >>> import dltutor as dt
        >>> f"{dt.tensor(2.0) / 3:.3f}"
        '0.667'
        """
        if not spec:
            return str(self)
        if self.data.size != 1:
            raise TypeError(f"a format spec ({spec!r}) needs a one-element tensor; this one has "
                            f"shape {tuple(self.shape)}: format t.item() or t.numpy() instead")
        return format(self.item(), spec)

    def __repr__(self) -> str:
        # PyTorch's layout (printing.py); what follows the values, in PyTorch's order.
        values = self.numpy()
        suffixes = []
        if self.device != "cpu":
            suffixes.append(f"device={self.device!r}")
        if values.size == 0 and values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if self.dtype not in ((np.float32,) if values.size == 0 else _DEFAULT_DTYPES):
            suffixes.append(f"dtype={self.dtype}")
        if self._fn is not None:
            suffixes.append(f"grad_fn={self._fn!r}")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        return tensor_text(values, suffixes)

    # -- gradients ------------------------------------------------------------------------------
    def requires_grad_(self, flag: bool = True) -> "Tensor":
        """Switch gradient tracking of a leaf on or off, in place; returns the tensor.

        >>> import dltutor as dt
        >>> dt.zeros(2).requires_grad_().requires_grad
        True
        """
        if not self.is_leaf and not flag:
            raise RuntimeError("requires_grad_(False) works on leaf tensors only; use .detach() "
                               "to get a copy of an intermediate result without a graph")
        if flag and self.data.dtype.kind not in "fc":
            raise TypeError(f"only floating-point tensors can require gradients; this one is "
                            f"{self.data.dtype}. Make it with dtype=dt.float32.")
        self.requires_grad = bool(flag)
        return self

    @property
    def stop_gradient(self) -> bool:
        """Paddle's name for ``not requires_grad`` (Paddle's tensors start with True, its
        parameters with False, exactly as ``requires_grad`` here). Setting it calls
        :meth:`requires_grad_` with the opposite, so the same rules apply.

        >>> import dltutor as dt
        >>> t = dt.zeros(2)
        >>> t.stop_gradient
        True
        >>> t.stop_gradient = False; t.requires_grad
        True
        """
        return not self.requires_grad

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        # Paddle declares it a bool; a 0/1 or "False" would be read the wrong way round.
        if not isinstance(value, bool):
            raise TypeError(f"stop_gradient must be True or False, got {value!r}")
        self.requires_grad_(not value)

    def detach(self) -> "Tensor":
        """The same values with no graph: gradients stop here (shares memory with ``self``).

        >>> import dltutor as dt
        >>> a = dt.ones(2, requires_grad=True)
        >>> (a * 2).detach().requires_grad
        False
        """
        return make_tensor(self.data)

    def retain_grad(self) -> None:
        """Keep ``.grad`` on an intermediate (non-leaf) tensor after backward.

        >>> import dltutor as dt
        >>> x = dt.ones(2, requires_grad=True)
        >>> h = x * 3
        >>> h.retain_grad()
        >>> h.sum().backward()
        >>> h.grad
        tensor([1., 1.])
        """
        if self._fn is not None:
            self._fn.retained = weakref.ref(self)
        elif not self.requires_grad:
            raise RuntimeError("retain_grad() on a tensor that does not require grad")

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]) -> HookHandle:
        """Call ``hook(tensor)`` after backward has added this leaf's gradient into ``.grad``
        (PyTorch's name): the moment data-parallel training averages it across processes.

        >>> import dltutor as dt
        >>> w = dt.ones(2, requires_grad=True)
        >>> handle = w.register_post_accumulate_grad_hook(lambda t: print(t.grad))
        >>> (w * 3).sum().backward()
        tensor([3., 3.])
        >>> handle.remove()
        """
        if not self.requires_grad or self._fn is not None:
            raise RuntimeError("register_post_accumulate_grad_hook needs a leaf that requires "
                               "grad (a parameter): only a leaf's .grad is accumulated")
        hooks = engine.post_accumulate_hooks(self)
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def register_hook(self, hook: GradHook) -> HookHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a tensor to use instead of ``grad``. For a tensor used in several
        places it fires once, with the sum. Returns a handle whose ``remove()`` takes it off.

        >>> import dltutor as dt
        >>> w = dt.ones(2, requires_grad=True)
        >>> handle = w.register_hook(lambda g: g * 10)
        >>> (w * w).sum().backward()
        >>> w.grad
        tensor([20., 20.])
        >>> handle.remove()
        """
        if not self.requires_grad:
            raise RuntimeError("register_hook on a tensor that does not require grad: its "
                               "gradient is never computed")
        if self._fn is None:  # a leaf keeps its own hooks; an op's output keeps them on the op
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self._fn.hooks is None:
                self._fn.hooks = []
            hooks = self._fn.hooks
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def backward(self, grad: Any = None, retain_graph: bool = False,
                 inputs: Tensor | Iterable[Tensor] | None = None) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        ``grad`` is the upstream gradient (needed unless the tensor has one element).
        Leaf gradients add up across calls; call ``zero_grad()`` between steps. ``inputs``
        (leaf tensors), as in PyTorch, limits which ``.grad`` are written: the others stay as
        they were.

        >>> import dltutor as dt
        >>> a, b = dt.ones(2, requires_grad=True), dt.ones(2, requires_grad=True)
        >>> (a * b * 3).sum().backward(inputs=[a])
        >>> a.grad, b.grad
        (tensor([3., 3.]), None)
        """
        engine.backward(self, grad, retain_graph, inputs)

    def zero_grad(self) -> None:
        """Forget this tensor's gradient (set it to None)."""
        self.grad = None

    # -- devices and dtypes ---------------------------------------------------------------------
    def to(self, *targets: Any, device: Device | None = None, dtype: DTypeLike | None = None,
           non_blocking: bool = False) -> "Tensor":
        """The tensor on another device, as another dtype, or both, as in PyTorch:
        ``t.to(device)``, ``t.to(dt.float64)``, ``t.to(device, dt.float64)``,
        ``t.to(device=..., dtype=...)``; itself if nothing changes. A device is a
        ``dt.device``, ``"cpu"``, ``"cuda"`` (``"cuda:0"``, ``"gpu"``); ``non_blocking`` is
        accepted and means nothing here (copies to and from the GPU are synchronous).

        Gradients flow back through the move or the cast.

        >>> import dltutor as dt
        >>> dt.ones(2).to("cpu").device, dt.ones(2).to(dt.float64).dtype
        ('cpu', dtype('float64'))
        >>> dt.ones(2).to(dt.device("cpu"), dt.float64).dtype
        dtype('float64')
        """
        device, dtype = to_targets(targets, device, dtype)
        result = self
        if device is not None:
            result = ops.to_backend(result, devices.backend_for(device))
        if dtype is not None:
            result = ops.cast(result, dtype)
        return result

    def cuda(self) -> "Tensor":
        """The tensor on the GPU (PyTorch's ``t.cuda()``; ``t.to("cuda")``).

        >>> import dltutor as dt
        >>> dt.ones(1).cuda().device if dt.cuda.is_available() else "gpu"
        'gpu'
        """
        return self.to("cuda")

    def cpu(self) -> "Tensor":
        """The tensor on the CPU (a NumPy array)."""
        return self.to("cpu")

    def float(self) -> "Tensor":
        """The tensor as float32."""
        return ops.cast(self, "float32")

    def double(self) -> "Tensor":
        """The tensor as float64."""
        return ops.cast(self, "float64")

    def long(self) -> "Tensor":
        """The tensor as int64 (class labels, indices)."""
        return ops.cast(self, "int64")

    def astype(self, dtype: DTypeLike) -> "Tensor":
        """The tensor converted to ``dtype`` (NumPy's spelling; PyTorch says ``.to(dtype)``)."""
        return ops.cast(self, dtype)

    def type(self, dtype: DTypeLike | None = None) -> str | Tensor:
        """With a dtype, the tensor converted to it; without, the dtype's name (PyTorch
        returns a class name such as ``'torch.FloatTensor'`` there).

        >>> import dltutor as dt
        >>> t = dt.tensor([1, 2])
        >>> t.type(), t.type(dt.float32)
        ('int64', tensor([1., 2.]))
        """
        if dtype is None:
            return str(self.dtype)
        return ops.cast(self, dtype)

    # -- filling in place (PyTorch's t.zero_(), t.fill_(v), t.normal_(), t.uniform_()) ---------
    def zero_(self) -> "Tensor":
        """Set every element to 0, in place; returns the tensor (``w.grad.zero_()``).

        >>> import dltutor as dt
        >>> dt.ones(2).zero_()
        tensor([0., 0.])
        """
        return self.fill_(0)

    def fill_(self, value: Any) -> "Tensor":
        """Set every element to ``value``, in place; returns the tensor.

        Like every in-place change, it is refused on a tensor that requires grad unless you are
        inside ``with dt.no_grad():`` (initializing a parameter: ``nn.init.constant_(p, v)``).

        >>> import dltutor as dt
        >>> dt.zeros(2, 2).fill_(7)
        tensor([[7., 7.],
                [7., 7.]])
        """
        if isinstance(value, Tensor) and value.data.size == 1:
            value = value.item()
        if isinstance(value, (Tensor, list, tuple)) or np.ndim(value) != 0:
            raise ValueError(f"fill_ takes one value, got {type(value).__name__} of shape "
                             f"{np.shape(value.numpy() if isinstance(value, Tensor) else value)};"
                             " to copy several values use t[...] = values")
        if not isinstance(value, (Real, np.number, np.bool_)):   # None would become NaN
            raise _write_error("t.fill_(value)", self.data, value)
        self._check_in_place("fill_")
        self.data[...] = value
        return self

    def copy_(self, src: Any, non_blocking: bool = False) -> "Tensor":
        """Copy ``src``'s values into this tensor, in place, as PyTorch's ``copy_``: broadcast
        to this shape, converted to this dtype and device; returns the tensor. Refused on a
        tensor that requires grad unless inside ``with dt.no_grad():`` (``non_blocking`` is
        accepted and means nothing here).

        >>> import dltutor as dt
        >>> dt.zeros(2, 2).copy_(dt.tensor([1.0, 2.0]))
        tensor([[1., 2.],
                [1., 2.]])
        """
        self._check_in_place("copy_")
        values = src.data if isinstance(src, Tensor) else src
        if isinstance(values, (str, bytes)) or values is None:
            raise _write_error("t.copy_(src)", self.data, values)
        values = (B.backend_of(self.data) or B.NUMPY).asarray(values)
        try:
            self.data[...] = values
        except (TypeError, ValueError):   # NumPy checks before it writes: nothing changed
            raise _write_error("t.copy_(src)", self.data, values) from None
        return self

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *,
                generator: np.random.Generator | None = None) -> "Tensor":
        """Fill with normal random numbers, in place: the same as
        ``nn.init.normal_(t, mean, std)`` (which the chapters use for parameters).

        >>> import dltutor as dt
        >>> _ = dt.manual_seed(0)
        >>> dt.zeros(1000).normal_(0, 0.01).std() < 0.02
        tensor(True)
        """
        self._check_in_place("normal_")
        return fills.normal_fill(self, mean, std, generator)

    def uniform_(self, a: builtins.float = 0.0, b: builtins.float = 1.0, *,
                 generator: np.random.Generator | None = None) -> "Tensor":
        """Fill with uniform random numbers from ``[a, b)``, in place: the same as
        ``nn.init.uniform_(t, a, b)``.

        >>> import dltutor as dt
        >>> bool(dt.zeros(100).uniform_(-1, 1).abs().max() <= 1)
        True
        """
        self._check_in_place("uniform_")
        return fills.uniform_fill(self, a, b, generator)

    def _check_in_place(self, method: str) -> None:
        """Refuse an in-place fill of a tensor that requires grad while gradients are recorded,
        as PyTorch does ("a leaf Variable that requires grad is being used in an in-place
        operation"): the graph could no longer tell which values it saw."""
        if self.requires_grad and is_grad_enabled():
            init = {"fill_": "constant_", "copy_": None}.get(method, method)
            hint = f"initialize parameters with nn.init (nn.init.{init}(p, ...)), or do it" \
                if init else "do it"
            raise RuntimeError(
                f"t.{method}(...) on a tensor that requires grad would change values a recorded "
                f"computation may need; {hint} inside `with dt.no_grad():`")

    # -- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: Operand) -> "Tensor":
        # Two tensors of one dtype (every training loop's case) need no promote(): skip it.
        if isinstance(other, Tensor) and other.data.dtype is self.data.dtype:
            return Add().apply(self, other)
        return ops.add(self, other)

    def __mul__(self, other: Operand) -> "Tensor":
        if isinstance(other, Tensor) and other.data.dtype is self.data.dtype:
            return Mul().apply(self, other)
        return ops.mul(self, other)

    def __radd__(self, other: Operand) -> "Tensor":
        return ops.add(other, self)

    def __rmul__(self, other: Operand) -> "Tensor":
        return ops.mul(other, self)

    def __rsub__(self, other: Operand) -> "Tensor":
        return ops.sub(other, self)

    def __rtruediv__(self, other: Operand) -> "Tensor":
        return ops.div(other, self)

    def __rpow__(self, other: Operand) -> "Tensor":
        return ops.pow(ops.as_tensor(other, self), self)

    def __rmatmul__(self, other: Operand) -> "Tensor":
        return ops.matmul(other, self)

    def __pos__(self) -> "Tensor":
        return self

    __sub__ = ops.sub
    __truediv__ = ops.div
    __pow__ = ops.pow
    __matmul__ = ops.matmul
    __neg__ = ops.neg
    __abs__ = ops.abs

    # ``t += x`` and friends change ``t.data`` in place (same object, as in PyTorch).
    def _in_place(op: str,  # type: ignore[misc]  # no self: makes the methods below
                  compute: Callable) -> Callable:
        def method(self: "Tensor", other: Operand) -> "Tensor":
            records = is_grad_enabled() and (
                self.requires_grad or (isinstance(other, Tensor) and other.requires_grad))
            if records:  # it would overwrite values backward still needs
                raise RuntimeError(
                    f"in-place {op} on a tensor in a recorded computation would change values "
                    f"backward needs; write `t = t {op[0]} x` instead, or update parameters "
                    "inside `with dt.no_grad():`")
            value = other.data if isinstance(other, Tensor) else other
            try:
                if isinstance(value, (str, bytes)):  # NumPy would parse "1.5" as a number
                    raise TypeError
                compute(self.data, value)
            except (TypeError, ValueError):   # NumPy checks before it writes: nothing changed
                raise _write_error(f"t {op} x", self.data, value) from None
            return self

        method.__name__ = f"in-place {op}"
        return method

    __iadd__ = _in_place("+=", operator.iadd)
    __isub__ = _in_place("-=", operator.isub)
    __imul__ = _in_place("*=", operator.imul)
    __itruediv__ = _in_place("/=", operator.itruediv)
    del _in_place

    # Comparisons give boolean tensors without gradients; tensors are hashed by identity.
    def __lt__(self, other: Operand) -> "Tensor":
        return ops.compare(self, other, "__lt__")

    def __le__(self, other: Operand) -> "Tensor":
        return ops.compare(self, other, "__le__")

    def __gt__(self, other: Operand) -> "Tensor":
        return ops.compare(self, other, "__gt__")

    def __ge__(self, other: Operand) -> "Tensor":
        return ops.compare(self, other, "__ge__")

    def __eq__(self, other: Operand) -> "Tensor":  # type: ignore[override]
        return ops.compare(self, other, "__eq__")

    def __ne__(self, other: Operand) -> "Tensor":  # type: ignore[override]
        return ops.compare(self, other, "__ne__")

    __hash__ = object.__hash__

    # -- indexing -------------------------------------------------------------------------------
    __getitem__ = ops.getitem

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "assigning into a tensor that requires grad would change values backward needs; "
                "do it inside `with dt.no_grad():` (or use p.set_value(...) for parameters)")
        value = value.data if isinstance(value, Tensor) else value
        selected = ops.index_arrays(index, self.data)
        try:
            if isinstance(value, (str, bytes)):      # NumPy would parse "1.5" as a number
                raise TypeError
            self.data[selected] = value
        except (TypeError, ValueError):       # NumPy checks before it writes: nothing changed
            raise _write_error("t[index] = value", self.data[selected], value) from None

    # -- elementwise math (each is the op of the same name: t.exp() is dt.exp(t)) --------------
    exp = ops.exp
    log = ops.log
    sqrt = ops.sqrt
    abs = ops.abs
    tanh = ops.tanh
    sigmoid = ops.sigmoid
    relu = ops.relu
    leaky_relu = ops.leaky_relu
    clip = ops.clip
    clamp = ops.clip
    clone = ops.clone
    pow = ops.pow
    maximum = ops.maximum
    minimum = ops.minimum
    matmul = ops.matmul

    # -- reductions -----------------------------------------------------------------------------
    sum = ops.sum
    mean = ops.mean
    max = ops.max
    min = ops.min
    amax = ops.amax
    amin = ops.amin
    var = ops.var
    std = ops.std
    logsumexp = ops.logsumexp
    norm = ops.norm
    argmax = ops.argmax
    argmin = ops.argmin
    softmax = ops.softmax
    log_softmax = ops.log_softmax

    # -- shapes ---------------------------------------------------------------------------------
    reshape = ops.reshape
    view = ops.reshape
    flatten = ops.flatten
    permute = ops.permute
    transpose = ops.transpose
    unsqueeze = ops.unsqueeze
    squeeze = ops.squeeze
    expand = ops.expand
    broadcast_to = ops.broadcast_to

    @property
    def T(self) -> "Tensor":
        """The tensor with its dimensions reversed (the transpose of a matrix)."""
        return ops.permute(self, tuple(reversed(range(self.ndim))))


register_tensor_class(Tensor)


def _write_error(what: str, target: Array, value: Any) -> Exception:
    """Why ``value`` could not be written into ``target`` in place (the target is unchanged):
    it is not a number, or its shape does not broadcast to the target's."""
    kind = getattr(value, "dtype", None)
    if kind is None:
        kind = np.asarray(value).dtype if isinstance(value, (list, tuple)) else np.dtype(object)
        if isinstance(value, (bool, int, float)):
            kind = np.dtype(type(value))
    if kind.kind not in "biuf":
        return TypeError(f"{what}: cannot write a {type(value).__name__} ({value!r:.40}) into a "
                         f"{target.dtype} tensor; use numbers or a Tensor")
    if kind.kind == "f" and target.dtype.kind != "f":
        return TypeError(f"{what}: cannot write {kind} values into a {target.dtype} tensor in "
                         "place (they would be truncated); convert the tensor with .float() first")
    shape = tuple(np.shape(value))
    return ValueError(f"{what}: a value of shape {shape} does not broadcast into the shape "
                      f"{tuple(target.shape)} it is written to (trailing dimensions must be equal "
                      "or 1); the tensor is unchanged")

__all__ = ["Tensor", "ElementCount"]
