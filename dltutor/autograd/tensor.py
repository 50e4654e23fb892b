"""Tensor, Function and the backward engine.

A :class:`Tensor` holds a backend array (``t.data``) and, when it was computed from tensors that
require gradients, the :class:`Function` that made it (``t.grad_fn``). Calling ``backward()`` walks
those functions from the output back to the leaves, without recursion, and adds each leaf's
gradient into its ``.grad``.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])

Two rules keep the engine easy to trust:

* Broadcast gradients are reduced to each input's shape in one place (:func:`_reduce_to_shape`),
  never inside an op, and every gradient is checked against its tensor's shape there.
* The engine never changes a gradient array in place. An op's backward may hand the same array
  to two inputs (``a + b`` does), so writing into one would silently change the other.
"""
from __future__ import annotations

import itertools
import re
from heapq import heappop, heappush
import weakref
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .. import backend as B

# ---------------------------------------------------------------------------------------------
# Global switches: gradient recording and anomaly detection.
# ---------------------------------------------------------------------------------------------
_grad_enabled = True
_anomaly_enabled = False


def is_grad_enabled() -> bool:
    """True unless inside ``dt.no_grad()``.

    >>> import dltutor as dt
    >>> with dt.no_grad():
    ...     dt.is_grad_enabled()
    False
    """
    return _grad_enabled


class _GradMode:
    """Context manager (and decorator) that switches gradient recording on or off."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        global _grad_enabled
        self._previous.append(_grad_enabled)
        _grad_enabled = self.enabled

    def __exit__(self, *exc_info: object) -> None:
        global _grad_enabled
        _grad_enabled = self._previous.pop()

    def __call__(self, func: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _GradMode(self.enabled):
                return func(*args, **kwargs)

        wrapper.__name__ = getattr(func, "__name__", "wrapper")
        wrapper.__doc__ = func.__doc__
        return wrapper


def no_grad() -> _GradMode:
    """Compute without recording a graph: results have ``requires_grad=False``.

    Use it for evaluation and for changing parameters by hand.

    >>> import dltutor as dt
    >>> w = dt.ones(2, requires_grad=True)
    >>> with dt.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """
    return _GradMode(False)


def enable_grad() -> _GradMode:
    """Switch recording back on inside a ``no_grad`` block.

    >>> import dltutor as dt
    >>> with dt.no_grad(), dt.enable_grad():
    ...     dt.is_grad_enabled()
    True
    """
    return _GradMode(True)


class AnomalyError(FloatingPointError):
    """Raised inside ``dt.detect_anomaly()`` by the first op that produces NaN or Inf."""


class detect_anomaly:
    """Raise at the first op whose forward or backward produces NaN or Inf.

    The error names the op, the shapes of its inputs and which of them already held
    non-finite values, which is how you find where a NaN loss started.

    >>> import dltutor as dt
    >>> x = dt.tensor([0.0, 1.0], requires_grad=True)
    >>> with dt.detect_anomaly():
    ...     try:
    ...         dt.log(x).sum()
    ...     except dt.AnomalyError as e:
    ...         print(str(e).splitlines()[0])
    log produced -inf in its forward pass (output shape (2,)).
    """

    def __enter__(self) -> "detect_anomaly":
        global _anomaly_enabled
        self._previous = _anomaly_enabled
        _anomaly_enabled = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _anomaly_enabled
        _anomaly_enabled = self._previous


def _describe_bad(array: Any) -> str:
    xp = B.get_array_module(array)
    if bool(xp.isnan(array).any()):
        return "nan"
    if bool((array == xp.inf).any()):
        return "inf"
    return "-inf"


def _is_finite(array: Any) -> bool:
    if array.dtype.kind not in "fc":
        return True
    return bool(B.get_array_module(array).isfinite(array).all())


def _anomaly_report(fn: "Function", where: str, bad: Any, inputs: Sequence["Tensor"]) -> AnomalyError:
    shapes = ", ".join(str(tuple(t.shape)) for t in inputs)
    lines = [f"{fn.op_name} produced {_describe_bad(bad)} in its {where} pass "
             f"(output shape {tuple(bad.shape)})."]
    lines.append(f"  inputs: {shapes}")
    already = [i for i, t in enumerate(inputs) if not _is_finite(t.data)]
    if already:
        lines.append(f"  inputs {already} already held NaN/Inf: look further upstream.")
    elif where == "forward":
        lines.append("  its inputs were all finite, so this op is where it started "
                     "(log of 0, division by 0, exp overflow, a too-large learning rate...).")
    return AnomalyError("\n".join(lines))


# Classes of the registered backends' arrays (the registry's own dict, so it stays current).
_ARRAY_TYPES = B._by_array_type

# Every recorded op gets the next number. An op's inputs were made before it, so they always
# have smaller numbers: running the pending ops largest number first is a topological order.
_next_seq = itertools.count().__next__

# ---------------------------------------------------------------------------------------------
# Function: one differentiable op.
# ---------------------------------------------------------------------------------------------
class Function:
    """One differentiable operation, with its forward and backward on raw backend arrays.

    Subclasses implement

    * ``forward(*arrays) -> array``: compute the result; store what backward needs on ``self``.
    * ``backward(grad) -> tuple``: one gradient per input, each an array broadcastable to that
      input's shape (the engine reduces it), or None where no gradient is needed.
      ``self.inputs[i].requires_grad`` tells whether input ``i`` needs one.

    Calling the instance on tensors runs forward and records the graph:

    >>> import dltutor as dt
    >>> class Double(Function):
    ...     def forward(self, x):
    ...         return x * 2
    ...     def backward(self, grad):
    ...         return (grad * 2,)
    >>> x = dt.tensor([1.0, 3.0], requires_grad=True)
    >>> Double()(x).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    # The engine's own fields live in slots (fast, and an op that saves nothing, like Add,
    # never needs an instance dict). They are set when the op is recorded in a graph:
    #   inputs    the input tensors (None once backward has freed this part of the graph)
    #   seq       creation number: larger means made later (see _next_seq)
    #   pending   gradient of the output summed so far during backward
    #   hooks     gradient hooks registered on the output tensor
    #   retained  weakref to the output when retain_grad() was called
    # What an op saves for its backward goes in the instance dict, as ordinary attributes.
    __slots__ = ("inputs", "seq", "pending", "hooks", "retained", "__dict__")

    def forward(self, *arrays: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement forward (subclass it)")

    def backward(self, grad: Any) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement backward (subclass it)")

    #: The name learners call the op by, when it is not the class name in snake_case.
    name: str | None = None

    @property
    def op_name(self) -> str:
        """The name learners call the op by (``MSELoss`` -> ``mse_loss``, ``Matmul`` -> ``matmul``)."""
        if self.name is not None:
            return self.name
        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", type(self).__name__)
        return words.lower()

    def __call__(self, *inputs: "Tensor") -> "Tensor":
        # Unpacked by hand for one and two inputs: this line runs for every op of every step.
        if len(inputs) == 2:
            out = self.forward(inputs[0].data, inputs[1].data)
        elif len(inputs) == 1:
            out = self.forward(inputs[0].data)
        else:
            out = self.forward(*[t.data for t in inputs])
        if out.__class__ not in _ARRAY_TYPES:
            out = _as_array(out, inputs)
        if _anomaly_enabled and not _is_finite(out):
            raise _anomaly_report(self, "forward", out, inputs)
        result = _new(Tensor)  # _make(out, ...), inlined: this runs for every op
        result.data = out
        result.grad = result._hooks = None
        if _grad_enabled:
            for t in inputs:
                if t.requires_grad:
                    self.inputs = inputs
                    self.seq = _next_seq()
                    self.pending = self.hooks = self.retained = None
                    result.requires_grad = True
                    result._fn = self
                    return result
        result.requires_grad = False
        result._fn = None
        return result

    @property
    def released(self) -> bool:
        """True once backward has run through this op and freed what it saved."""
        return self.inputs is None

    def release(self) -> None:
        """Drop the inputs and everything forward saved, once backward no longer needs them."""
        self.inputs = None
        self.__dict__.clear()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"


def _as_array(value: Any, inputs: Sequence["Tensor"]) -> Any:
    """NumPy turns 0-d results into scalars; turn them back into arrays of the inputs' backend."""
    like = inputs[0].data if inputs else None
    backend = B.backend_of(like) or B.current()
    if isinstance(value, np.generic) and backend is not B.NUMPY:
        raise TypeError(f"an op returned a NumPy scalar under the {backend.name} backend")
    return backend.xp.asarray(value)


# ---------------------------------------------------------------------------------------------
# Tensor
# ---------------------------------------------------------------------------------------------
class _Size(int):
    """``t.size`` is the element count, as in NumPy; ``t.size()`` gives the shape, as in PyTorch."""

    def __new__(cls, count: int, shape: tuple[int, ...]):
        obj = super().__new__(cls, count)
        obj.shape = shape
        return obj

    def __call__(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]


class Tensor:
    """An array with an optional gradient, the value every dltutor op takes and returns.

    Make one with :func:`dltutor.tensor`; ``t.data`` is the backend array (NumPy or CuPy),
    ``t.grad`` the accumulated gradient (a Tensor, or None before any backward).

    >>> import dltutor as dt
    >>> t = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> t.shape, t.dtype, t.requires_grad, t.grad is None
    ((2, 2), dtype('float32'), True, True)
    """

    __slots__ = ("data", "grad", "requires_grad", "_fn", "_hooks", "__weakref__")
    __array_priority__ = 1000  # so ``ndarray + Tensor`` defers to Tensor.__radd__

    def __init__(self, data: Any, dtype: Any = None, requires_grad: bool = False):
        from .creation import _to_array  # late import: creation imports this module

        self.data = _to_array(data, dtype)
        self.grad = None
        self._fn = None
        self._hooks = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _from_array(cls, array: Any, requires_grad: bool = False) -> "Tensor":
        """Wrap a backend array without copying (for the kit's own creation functions)."""
        t = _make(array, False, None)
        if requires_grad:
            t.requires_grad_(True)
        return t

    # -- what it is -------------------------------------------------------------------------
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
    def size(self) -> _Size:
        """Number of elements (NumPy's ``size``); call it, ``t.size()``, for PyTorch's shape."""
        return _Size(self.data.size, self.data.shape)

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

    # -- reading values ---------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory on the CPU, copies from the GPU).

        >>> import dltutor as dt
        >>> dt.tensor([1, 2]).numpy()
        array([1, 2])
        """
        return B.to_numpy(self.data)

    def item(self) -> Any:
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

    def __repr__(self) -> str:
        return _format_tensor(self)

    # -- gradients --------------------------------------------------------------------------
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

    def detach(self) -> "Tensor":
        """The same values with no graph: gradients stop here (shares memory with ``self``).

        >>> import dltutor as dt
        >>> a = dt.ones(2, requires_grad=True)
        >>> (a * 2).detach().requires_grad
        False
        """
        return _make(self.data, False, None)

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

    def register_hook(self, hook: Callable[["Tensor"], Any]) -> "HookHandle":
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
        owner = self._fn if self._fn is not None else self
        if owner is self:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if owner.hooks is None:
                owner.hooks = []
            hooks = owner.hooks
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        ``grad`` is the upstream gradient (needed unless the tensor has one element).
        Leaf gradients add up across calls; call ``zero_grad()`` between steps.
        """
        backward(self, grad, retain_graph)

    def zero_grad(self) -> None:
        """Forget this tensor's gradient (set it to None)."""
        self.grad = None

    # -- moving -----------------------------------------------------------------------------
    def to(self, device: str) -> "Tensor":
        """The tensor on another device (``"cpu"`` or ``"gpu"``); itself if already there.

        Gradients flow back through the move.

        >>> import dltutor as dt
        >>> dt.ones(2).to("cpu").device
        'cpu'
        """
        from .ops import to_backend

        return to_backend(self, B.get(device))

    def cpu(self) -> "Tensor":
        """The tensor on the CPU (a NumPy array)."""
        return self.to("cpu")

    __hash__ = object.__hash__  # tensors are compared elementwise but hashed by identity


class HookHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook off again."""

    def __init__(self, hooks: list, hook: Callable):
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        """Take the hook off (a second call does nothing)."""
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return


_new = object.__new__


def _make(data: Any, requires_grad: bool, fn: Function | None) -> Tensor:
    """Build a Tensor around an array without any checks (the ops' fast path)."""
    t = _new(Tensor)
    t.data = data
    t.grad = None
    t.requires_grad = requires_grad
    t._fn = fn
    t._hooks = None
    return t


def _format_tensor(t: Tensor) -> str:
    array = t.numpy()
    body = np.array2string(array, separator=", ", prefix="tensor(", precision=4,
                           suppress_small=False, threshold=1000, edgeitems=3)
    extras = []
    if array.dtype not in (np.float32, np.int64, np.bool_):
        extras.append(f"dtype={array.dtype}")
    if t.device != "cpu":
        extras.append(f"device={t.device!r}")
    if t._fn is not None:
        extras.append(f"grad_fn={t._fn!r}")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


# ---------------------------------------------------------------------------------------------
# The backward engine
# ---------------------------------------------------------------------------------------------
def _reduce_to_shape(grad: Any, shape: tuple[int, ...], fn: Function) -> Any:
    """Sum a broadcast gradient back to an input's shape: the ONE place this happens.

    Leading dimensions the input did not have are summed away, and so are dimensions where
    the input had size 1 and the gradient does not.
    """
    extra = grad.ndim - len(shape)
    if extra >= 0:
        axes = tuple(range(extra)) + tuple(
            extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
        if axes:
            grad = grad.sum(axis=axes, keepdims=True)
        if grad.size == int(np.prod(shape, dtype=np.int64)):
            grad = grad.reshape(shape)
    if grad.shape != shape:
        raise RuntimeError(f"{fn.op_name}: backward produced a gradient of shape "
                           f"{tuple(grad.shape)} for an input of shape {tuple(shape)}; "
                           "this is a bug in the op's backward")
    return grad


def _root_gradient(root: Tensor, grad: Any) -> Any:
    if grad is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward() without a gradient needs a one-element tensor such as a loss; this "
                f"one has shape {tuple(root.shape)}. Reduce it first (.sum() or .mean()) or pass "
                f"grad= with shape {tuple(root.shape)}.")
        return B.get_array_module(root.data).ones_like(root.data)
    data = grad.data if isinstance(grad, Tensor) else B.backend_of(root.data).asarray(grad)
    if data.shape != root.shape:
        raise RuntimeError(f"backward(grad=...): grad has shape {tuple(data.shape)} but the tensor "
                           f"has shape {tuple(root.shape)}")
    return data.astype(root.dtype, copy=False)


def _freed_graph_error(fn: Function) -> RuntimeError:
    return RuntimeError(
        f"backward through the graph a second time: the graph of {fn.op_name} was freed by the "
        "first backward. Pass retain_graph=True to the first backward() if you need two, or "
        "recompute the forward pass.")


def _run_hooks(hooks: list, grad: Any, shape: tuple[int, ...]) -> Any:
    for hook in list(hooks):
        result = hook(_make(grad, False, None))
        if result is not None:
            new = result.data if isinstance(result, Tensor) else result
            if new.shape != shape:
                raise RuntimeError(f"a gradient hook returned shape {tuple(new.shape)}; the "
                                   f"gradient has shape {tuple(shape)}")
            grad = new
    return grad


def _accumulate(t: Tensor, grad: Any) -> None:
    """Add ``grad`` into ``t.grad`` without writing into any existing array."""
    if grad.dtype != t.data.dtype:
        grad = grad.astype(t.data.dtype)
    if t.grad is None:
        t.grad = _make(grad, False, None)
    else:
        t.grad.data = t.grad.data + grad


# Gradients of leaves up to this many elements are collected during a backward pass and
# summed in one call at the end: for small arrays the cost of each NumPy call is overhead,
# not arithmetic. Larger ones are added as they arrive, so memory stays bounded.
_COLLECT_MAX_SIZE = 4096


def _sum_collected(grads: list) -> Any:
    first = grads[0]
    if len(grads) > 4 and first.ndim > 0:
        # One concatenate and one sum, both in C (np.stack would loop in Python).
        joined = B.get_array_module(first).concatenate(grads)
        return joined.reshape((len(grads),) + first.shape).sum(axis=0)
    total = grads[0] + grads[1]
    for g in grads[2:]:
        total += g  # ``total`` is a fresh array, so adding in place is safe
    return total


def backward(root: Tensor, grad: Any = None, retain_graph: bool = False) -> None:
    """Backpropagate from ``root``: the engine behind ``Tensor.backward``.

    Iterative: each function runs once all the functions that use its output have passed their
    gradient back (ops run newest first), so chains of any length work without recursion.
    A leaf's gradients from all its uses are summed before its hooks run and before they are
    added to ``.grad``.
    """
    if not root.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: none of the "
                           "tensors it was computed from had requires_grad=True (or it was "
                           "computed under dt.no_grad() or from .detach()).")
    seed = _root_gradient(root, grad)
    root_fn = root._fn
    if root_fn is None:  # backward on a leaf: its gradient is the seed itself
        if root._hooks:
            seed = _run_hooks(root._hooks, seed, root.shape)
        _accumulate(root, seed)
        return

    if root_fn.inputs is None:
        raise _freed_graph_error(root_fn)
    # inf/nan arise silently, as in PyTorch: dt.detect_anomaly() is the tool to find them.
    with B.ignore_float_errors(seed):
        _backward_pass(root_fn, seed, retain_graph)


def _backward_pass(root_fn: Function, seed: Any, retain_graph: bool) -> None:
    """The loop of :func:`backward`: run every pending op, newest first."""
    leaf_grads: dict[Tensor, list] = {}  # leaf -> [leaf, grad, more grads...]
    root_fn.pending = seed
    # Pending ops wait in a max-heap of (-seq, op): the op made last runs first, so by the
    # time an op runs, every op that used its output has passed its gradient back.
    # In a chain, the one op that becomes pending is also the newest, so it skips the heap.
    ready: list = []
    fn = root_fn
    while fn is not None:
        g = fn.pending
        fn.pending = None
        inputs = fn.inputs
        if fn.hooks:
            g = _run_hooks(fn.hooks, g, g.shape)
        if fn.retained is not None:
            out = fn.retained()
            if out is not None:
                _accumulate(out, g)
        grads = fn.backward(g)
        if not retain_graph:
            fn.inputs = None  # Function.release, inlined on this hot path
            fn.__dict__.clear()
        newest = None
        for t, gi in zip(inputs, grads):
            if gi is None or not t.requires_grad:
                continue
            if gi.shape != t.data.shape:
                gi = _reduce_to_shape(gi, t.data.shape, fn)
            if _anomaly_enabled and not _is_finite(gi):
                raise _anomaly_report(fn, "backward", gi, inputs)
            child = t._fn
            if child is None:
                entry = leaf_grads.get(t)
                if entry is None:
                    leaf_grads[t] = [t, gi]
                elif gi.size <= _COLLECT_MAX_SIZE:
                    entry.append(gi)
                else:
                    entry[1] = entry[1] + gi
            elif child.pending is None:  # first gradient for this op: it is now pending
                if child.inputs is None:
                    raise _freed_graph_error(child)
                child.pending = gi
                if newest is not None:
                    heappush(ready, (-newest.seq, newest))
                newest = child
            else:
                child.pending = child.pending + gi
        if newest is not None and (not ready or newest.seq > -ready[0][0]):
            fn = newest
        else:
            if newest is not None:
                heappush(ready, (-newest.seq, newest))
            fn = heappop(ready)[1] if ready else None

    for entry in leaf_grads.values():
        t = entry[0]
        g = entry[1] if len(entry) == 2 else _sum_collected(entry[1:])
        if t._hooks:
            g = _run_hooks(t._hooks, g, t.data.shape)
        _accumulate(t, g)


def tensors_of(values: Iterable[Any]) -> list[Tensor]:
    """The Tensor objects among ``values`` (helper for ops that take lists)."""
    return [v for v in values if isinstance(v, Tensor)]
