"""Function: one differentiable op, and how calling it records the graph that backward walks.

Calling a Function on tensors runs its ``forward`` on their arrays and wraps the result in a
new Tensor. When gradients are being recorded and an input requires one, the new tensor is
linked to the Function (``t.grad_fn``), which keeps its inputs (``fn.inputs``):
``engine.backward`` later follows those links from the loss back to the leaves.

**The contract between an op and the engine** (engine.py keeps the engine's side of it):

* ``forward(*arrays)`` gets its inputs' arrays and returns one array. What its backward will
  need (arrays, numbers, shapes) it saves on ``self`` as ordinary attributes, which live in
  the instance ``__dict__``; the input tensors are already in ``self.inputs``.
* ``backward(grad)`` returns one gradient per input, or None for an input that needs none
  (``self.inputs[i].requires_grad`` tells). Neither pass writes into an array it was handed:
  ``a + b`` gives one gradient array to both inputs, and a hook may keep ``grad``.
* The shape rule: a gradient only has to broadcast to its input's shape. The engine sums it
  down to that shape and checks it in ONE place (``engine.reduce_to_shape``); an op never
  reduces a broadcast itself. An op whose gradients have its inputs' shapes by construction
  says so with ``grad_shapes_exact = True``, and the engine skips that step for it.
* When the engine frees: right after an op's ``backward`` returns (unless
  ``retain_graph=True``) it sets ``self.inputs = ()`` and clears ``self.__dict__``, so
  everything the op saved is gone and a second backward through it is an error. The engine
  reads ``grad_shapes_exact`` before that, since an op may set it on itself in forward.
* Scratch arrays an op borrowed from :mod:`~dltutor.autograd.workspace` (the convolution's
  patch matrix) are listed in ``self.borrowed``; when the engine frees the op it gives them
  back to the pool for the next step, so the op must not hand them to anyone else.

Two global switches change what a call does. ``no_grad()`` stops the recording (evaluation,
changing parameters by hand); ``detect_anomaly()`` checks every result for NaN and Inf and
names the first op that made one.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0], requires_grad=True)
>>> y = x * 3
>>> y.grad_fn, y.grad_fn.inputs[0] is x
(<MulBackward>, True)
>>> with dt.no_grad():
...     (x * 3).grad_fn is None
True
>>> mul = y.grad_fn
>>> sorted(vars(mul))                   # what Mul saved for its backward
['a', 'b']
>>> y.sum().backward()
>>> vars(mul), mul.inputs               # freed by the engine once its backward ran
({}, ())
"""
from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .. import backend as B
from .arrays import Array

if TYPE_CHECKING:                       # never imported here: tensor.py registers its class
    from typing_extensions import TypeIs  # (typing's own from Python 3.13)
    from .tensor import GradHook, Tensor

# -- Switch 1: recording gradients ------------------------------------------------------------
_grad_enabled = True


def is_grad_enabled() -> bool:
    """True unless inside ``dt.no_grad()``.

    >>> import dltutor as dt
    >>> with dt.no_grad():
    ...     dt.is_grad_enabled()
    False
    """
    return _grad_enabled


class GradMode:
    """Context manager (and decorator) that switches gradient recording on or off, and
    restores the previous setting on the way out (also after an error)."""

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
            with GradMode(self.enabled):
                return func(*args, **kwargs)

        wrapper.__name__ = getattr(func, "__name__", "wrapper")
        wrapper.__doc__ = func.__doc__
        return wrapper


class set_grad_enabled(GradMode):  # PyTorch's name, used as a function
    """Switch gradient recording on (True) or off (False) now, as PyTorch's
    ``torch.set_grad_enabled``; used in a ``with`` block it restores the previous setting at
    the end. (``dt.no_grad()`` is the usual way; this one takes the mode as a value, handy as
    ``with dt.set_grad_enabled(training):``.)

    >>> import dltutor as dt
    >>> with dt.set_grad_enabled(False):
    ...     dt.is_grad_enabled()
    False
    >>> dt.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        global _grad_enabled
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be True or False, got {mode!r}")
        super().__init__(mode)
        self._previous.append(_grad_enabled)   # set now: a plain call switches it too
        _grad_enabled = mode

    def __enter__(self) -> None:
        pass                                    # already set in __init__


def no_grad() -> GradMode:
    """Compute without recording a graph: results have ``requires_grad=False``.

    Use it for evaluation and for changing parameters by hand.

    >>> import dltutor as dt
    >>> w = dt.ones(2, requires_grad=True)
    >>> with dt.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """
    return GradMode(False)


def enable_grad() -> GradMode:
    """Switch recording back on inside a ``no_grad`` block.

    >>> import dltutor as dt
    >>> with dt.no_grad(), dt.enable_grad():
    ...     dt.is_grad_enabled()
    True
    """
    return GradMode(True)


# -- Switch 2: anomaly detection --------------------------------------------------------------
_anomaly_enabled = False


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


def is_anomaly_enabled() -> bool:
    """True inside ``dt.detect_anomaly()``."""
    return _anomaly_enabled


def is_finite(array: Array) -> bool:
    """True when a float array holds no NaN or Inf (integer arrays always are)."""
    if array.dtype.kind not in "fc":
        return True
    return bool(B.get_array_module(array).isfinite(array).all())


def anomaly_error(fn: Function, where: str, bad: Array, inputs: Sequence[Tensor]) -> AnomalyError:
    """The error that names ``fn`` as the op whose ``where`` ("forward"/"backward") pass
    produced the non-finite array ``bad``, and says whether its inputs were already bad."""
    xp = B.get_array_module(bad)
    kind = "nan" if bool(xp.isnan(bad).any()) else "inf" if bool((bad == xp.inf).any()) else "-inf"
    shapes = ", ".join(str(tuple(t.shape)) for t in inputs)
    lines = [f"{fn.op_name} produced {kind} in its {where} pass (output shape {tuple(bad.shape)}).",
             f"  inputs: {shapes}"]
    already = [i for i, t in enumerate(inputs) if not is_finite(t.data)]
    if already:
        lines.append(f"  inputs {already} already held NaN/Inf: look further upstream.")
    elif where == "forward":
        lines.append("  its inputs were all finite, so this op is where it started "
                     "(log of 0, division by 0, exp overflow, a too-large learning rate...).")
    return AnomalyError("\n".join(lines))


# -- Making tensors ---------------------------------------------------------------------------
# Ops make Tensors, and Tensor's operators call the ops, so the ops cannot import the Tensor
# class without an import cycle. tensor.py registers the class here once, when it is imported,
# and the engine, the ops and the rest of the kit make tensors through make_tensor().
_tensor_class: type = object


def register_tensor_class(cls: type) -> None:
    """Make ``cls`` the class of the tensors ops return (tensor.py calls this once)."""
    global _tensor_class
    _tensor_class = cls


def is_tensor(value: object) -> TypeIs[Tensor]:
    """True for a Tensor (a Parameter too).

    >>> import dltutor as dt
    >>> is_tensor(dt.ones(1)), is_tensor([1.0])
    (True, False)
    """
    return isinstance(value, _tensor_class)


def init_tensor(t: Tensor, data: Array, requires_grad: bool = False,
                fn: Function | None = None) -> None:
    """Give ``t`` every field a Tensor has (``Tensor()``, ``Parameter`` and :func:`make_tensor`
    come here; ``Function.apply`` writes the same list out, as every op runs it)."""
    t.data = data
    t.grad = None
    t.requires_grad = requires_grad
    t._fn = fn
    t._hooks = None


def make_tensor(data: Array, requires_grad: bool = False, fn: Function | None = None) -> Tensor:
    """A Tensor around the backend array ``data``, without copying or checking it (the kit's
    own fast path; learners use ``dt.tensor``, which copies and checks).

    >>> import numpy as np
    >>> t = make_tensor(np.ones(2))
    >>> t, t.requires_grad
    (tensor([1., 1.], dtype=float64), False)
    """
    t: Tensor = object.__new__(_tensor_class)  # skips Tensor.__init__, which copies and checks
    # init_tensor's fields written out: every gradient comes here (benchmarks/RESULTS.md)
    t.data = data
    t.grad = t._hooks = None
    t.requires_grad = requires_grad
    t._fn = fn
    return t


# -- Function ---------------------------------------------------------------------------------
# The backend of every array class: an op's output must be one of them (a NumPy scalar is not).
_ARRAY_TYPES = B.BACKEND_BY_ARRAY_TYPE

# Every recorded op gets the next number. An op's inputs were made before it, so they always
# have smaller numbers: running the pending ops largest number first is a topological order.
_next_seq = itertools.count().__next__


class Function:
    """One differentiable operation, with its forward and backward on raw backend arrays.

    Subclasses implement ``forward(*arrays) -> Array`` and ``backward(grad) -> tuple``, under
    the contract at the top of this module (what to save, when the engine frees it, the shape
    rule). Calling the instance on tensors runs forward and records the graph:

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

    # The engine's fields, set when the op is recorded, live in slots (fast: an op that saves
    # nothing, like Add, needs no instance dict). What an op saves goes in the instance dict.
    __slots__ = ("inputs", "seq", "pending", "hooks", "retained", "__dict__")
    inputs: tuple[Tensor, ...]          # the input tensors; () once backward freed this part
    seq: int                            # creation number: larger means made later (_next_seq)
    pending: Array | None               # the output's gradient summed so far during backward
    hooks: list[GradHook] | None        # gradient hooks registered on the output tensor
    retained: Callable[[], Tensor | None] | None  # a weakref to the output, if retain_grad()

    #: The name learners call the op by, when it is not the class name in snake_case.
    name: str | None = None
    #: True when ``backward`` returns every gradient in its input's shape by construction
    #: (an elementwise op of one input, ``linear``...): nothing was broadcast, so the engine
    #: skips :func:`~dltutor.autograd.engine.reduce_to_shape` and its shape check, which cost
    #: more than a small op's arithmetic. An op may take it back for one call by setting it
    #: False on itself in forward (``linear`` does, for a bias of an unusual shape).
    #: tests/autograd/test_grad_shapes.py holds every op that says so to it; an op of yours
    #: is checked by the engine, as the default says.
    grad_shapes_exact = False

    def forward(self, *arrays: Any) -> Array:  # pragma: no cover - abstract (Any: each op names
        # its own one to three arrays, and mypy lets an override choose its arity only then)
        raise NotImplementedError(f"{type(self).__name__} must implement forward (subclass it)")

    def backward(self, grad: Array) -> tuple[Array | None, ...]:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement backward (subclass it)")

    @property
    def op_name(self) -> str:
        """The name learners call the op by (``MSELoss`` -> ``mse_loss``, ``Matmul`` -> ``matmul``)."""
        if self.name is not None:
            return self.name
        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", type(self).__name__)
        return words.lower()

    def apply(self, *inputs: Tensor) -> Tensor:
        """Run the op on ``inputs`` (Tensors) and record it: ``Double().apply(x)``, or just
        ``Double()(x)``, which is the same method."""
        # Unpacked by count for one to three inputs (linear has three), not with a list: this
        # line runs for every op of every step (benchmarks/RESULTS.md, issue 51).
        try:
            n = len(inputs)
            if n == 2:
                out = self.forward(inputs[0].data, inputs[1].data)
            elif n == 1:
                out = self.forward(inputs[0].data)
            elif n == 3:
                out = self.forward(inputs[0].data, inputs[1].data, inputs[2].data)
            else:
                out = self.forward(*[t.data for t in inputs])
        except AttributeError:          # free when nothing is raised; name a non-Tensor input
            for t in inputs:
                if not is_tensor(t):
                    raise TypeError(f"{self.op_name} expects Tensors; got a "
                                    f"{type(t).__name__}: wrap numbers and arrays with "
                                    "dt.tensor(...)") from None
            raise
        if out.__class__ not in _ARRAY_TYPES:
            out = _as_array(out, inputs)
        if _anomaly_enabled and not is_finite(out):
            raise anomaly_error(self, "forward", out, inputs)
        # make_tensor(out), written out because every op runs it; init_tensor lists the same
        # fields, and tests/autograd/test_tensor_api.py checks that both set every one.
        result: Tensor = object.__new__(_tensor_class)
        result.data = out
        result.grad = result._hooks = None
        if _grad_enabled:
            for t in inputs:
                if t.requires_grad:     # record: backward will need this op and its inputs
                    self.inputs = inputs
                    self.seq = _next_seq()
                    self.pending = self.hooks = self.retained = None
                    result.requires_grad = True
                    result._fn = self
                    return result
        result.requires_grad = False
        result._fn = None
        return result

    __call__ = apply

    @property
    def released(self) -> bool:
        """True once backward has run through this op and freed what it saved."""
        return not self.inputs

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"


def _as_array(value: object, inputs: Sequence[Tensor]) -> Array:
    """NumPy turns 0-d results into scalars; turn them back into arrays of the inputs' backend."""
    like = inputs[0].data if inputs else None
    backend = B.backend_of(like) or B.current()
    if isinstance(value, np.generic) and backend is not B.NUMPY:
        raise TypeError(f"an op returned a NumPy scalar under the {backend.name} backend")
    return backend.xp.asarray(value)
