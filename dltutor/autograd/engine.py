"""The backward engine: from a loss back to every leaf that requires a gradient.

``loss.backward()`` calls :func:`backward`. It runs each recorded op's ``backward`` once every
op that used the op's output has passed its gradient back (newest op first), without
recursion, so a chain of any length works, and frees what each op saved as soon as its
backward has run (the contract between ops and this engine is written once, at the top of
function.py). Three rules keep it easy to trust:

* Broadcast gradients are reduced to each input's shape by ONE function,
  :func:`reduce_to_shape`, which also checks every gradient against its tensor's shape. The
  engine calls it for each gradient, except from the ops whose backward returns its inputs'
  shapes by construction (``grad_shapes_exact``: elementwise ops of one input, ``linear``
  unless its bias broadcast in an unusual shape); a test holds them to it.
* A leaf's gradients from all its uses are summed before its hooks run and before they are
  added to ``.grad`` (so a hook on a tied parameter fires once, with the sum).
* The engine never changes a gradient array in place: an op's backward may hand the same array
  to two inputs (``a + b`` does), so writing into one would silently change the other.

>>> import dltutor as dt
>>> x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4., 6.])
"""
from __future__ import annotations

import weakref
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from .. import backend as B
from . import workspace
from .arrays import Array
from .function import Function, anomaly_error, is_anomaly_enabled, is_finite, is_tensor, make_tensor

if TYPE_CHECKING:                       # never imported here: tensor.py calls this module
    from .tensor import GradHook, Tensor


def backward(root: Tensor, grad: Any = None, retain_graph: bool = False,
             inputs: Tensor | Iterable[Tensor] | None = None) -> None:
    """Backpropagate from the tensor ``root`` (what ``root.backward(grad)`` does).

    ``grad`` (a Tensor, an array, numbers: anything ``dt.tensor`` takes) is the gradient of
    something with respect to ``root``; without it, ``root``
    must have one element (a loss) and the gradient is 1. ``inputs``: the leaves whose
    ``.grad`` may be written (None: every leaf that requires grad).
    """
    keep = None if inputs is None else _kept_leaves(inputs)
    if not root.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: none of the "
                           "tensors it was computed from had requires_grad=True (or it was "
                           "computed under dt.no_grad() or from .detach()).")
    seed = _root_gradient(root, grad)
    root_fn = root._fn
    if root_fn is None:  # backward on a leaf: its gradient is the seed itself
        if keep is not None and id(root) not in keep:
            return
        if root._hooks:
            seed = _run_hooks(root._hooks, seed, root.shape)
        _write_grads([(root, seed)])
        return
    if not root_fn.inputs:
        raise _freed_graph_error(root_fn)
    _backward_pass(root_fn, seed, retain_graph, keep)


def reduce_to_shape(grad: Array, shape: tuple[int, ...], fn: Function) -> Array:
    """Sum a broadcast gradient back to an input's shape: the ONE place this happens.

    Leading dimensions the input did not have are summed away, and so are dimensions where
    the input had size 1 and the gradient does not.

    >>> g = np.ones((4, 3))
    >>> reduce_to_shape(g, (1, 3), fn=None)        # a (1, 3) input broadcast to (4, 3)
    array([[4., 4., 4.]])
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


#: Hooks that run after a leaf's ``.grad`` is written (``register_post_accumulate_grad_hook``),
#: by ``id`` of the leaf (a tensor's ``==`` compares values, so it cannot be a key); an entry
#: goes when its tensor does. Empty in most programs: the backward pass looks at it once.
POST_ACCUMULATE_HOOKS: dict[int, list] = {}


def post_accumulate_hooks(t: Any) -> list:
    """The list of ``t``'s post-accumulate hooks, made (and tied to ``t``'s life) on first use."""
    hooks = POST_ACCUMULATE_HOOKS.get(id(t))
    if hooks is None:
        hooks = POST_ACCUMULATE_HOOKS[id(t)] = []
        weakref.finalize(t, POST_ACCUMULATE_HOOKS.pop, id(t), None)
    return hooks


# Gradients of leaves up to this many elements are collected during a backward pass and
# summed in one call at the end: for small arrays the cost of each NumPy call is overhead,
# not arithmetic. Larger ones are added as they arrive, so memory stays bounded.
COLLECT_MAX_SIZE = 4096


# inf/nan arise silently, as in PyTorch: dt.detect_anomaly() is the tool to find them.
@B.float_errors_ignored
def _backward_pass(root_fn: Function, seed: Array, retain_graph: bool,
                   keep: set[int] | None = None) -> None:
    """The loop of :func:`backward`: run every pending op, newest first. No ``.grad`` is
    written until every gradient is known and every hook has run: a hook or an op that fails
    halfway leaves every ``.grad`` as it was. With ``keep`` (ids of leaves), only those
    leaves' ``.grad`` are written (and only their hooks run)."""
    check_finite = is_anomaly_enabled()
    leaf_grads: dict[Tensor, list] = {}  # leaf -> [leaf, grad, more grads...]
    retained: list[tuple[Tensor, Array]] = []  # (non-leaf tensor with retain_grad(), its gradient)
    root_fn.pending = seed
    # Pending ops wait in a max-heap of (-seq, op): the op made last runs first, so by the
    # time an op runs, every op that used its output has passed its gradient back.
    # In a chain, the one op that becomes pending is also the newest, so it skips the heap.
    ready: list[tuple[int, Function]] = []
    fn: Function | None = root_fn
    while fn is not None:
        g: Array = fn.pending  # type: ignore[assignment]  # a pending op's gradient is set
        fn.pending = None
        inputs = fn.inputs
        if fn.hooks:
            g = _run_hooks(fn.hooks, g, g.shape)
        if fn.retained is not None:
            out = fn.retained()
            if out is not None:
                retained.append((out, g))
        grads = fn.backward(g)
        exact = fn.grad_shapes_exact    # (read before the op's own attributes are freed)
        if not retain_graph:  # free what the op saved: nothing needs it any more
            fn.inputs = ()
            saved = fn.__dict__
            if saved:                     # (many ops, like add, save nothing)
                if "borrowed" in saved:   # scratch arrays the op borrowed for this step
                    workspace.give_back(saved["borrowed"])
                saved.clear()
        newest = None
        for t, gi in zip(inputs, grads):
            if gi is None or not t.requires_grad:
                continue
            if not exact and gi.shape != t.data.shape:
                gi = reduce_to_shape(gi, t.data.shape, fn)
            if check_finite and not is_finite(gi):
                raise anomaly_error(fn, "backward", gi, inputs)
            child = t._fn
            if child is None:
                entry = leaf_grads.get(t)
                if entry is None:
                    leaf_grads[t] = [t, gi]
                elif gi.size <= COLLECT_MAX_SIZE:
                    entry.append(gi)
                else:
                    entry[1] = entry[1] + gi
            elif child.pending is None:  # first gradient for this op: it is now pending
                if not child.inputs:
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

    if keep is not None:
        retained = []           # (non-leaf tensors are not among the inputs: see _kept_leaves)
    for entry in leaf_grads.values():
        t = entry[0]
        if keep is not None and id(t) not in keep:
            continue
        g = entry[1] if len(entry) == 2 else _sum_collected(entry[1:])
        if t._hooks:
            g = _run_hooks(t._hooks, g, t.data.shape)
        retained.append((t, g))
    _write_grads(retained)          # every gradient is known: only now write them
    if POST_ACCUMULATE_HOOKS:
        _run_post_accumulate_hooks([t for t, _ in retained])


def _run_post_accumulate_hooks(written: list) -> None:
    """Call each ``register_post_accumulate_grad_hook`` hook of the leaves whose ``.grad``
    was just written, with the leaf (its ``.grad`` complete)."""
    for t in written:
        for hook in list(POST_ACCUMULATE_HOOKS.get(id(t), ())):
            hook(t)


def _kept_leaves(inputs: Tensor | Iterable[Tensor]) -> set[int]:
    """The ids of the ``inputs=`` leaves of ``backward``, checked: each a tensor that is a leaf
    (made by you, not by an op) and requires grad."""
    if is_tensor(inputs):
        inputs = [inputs]
    inputs = list(inputs)
    for i, t in enumerate(inputs):
        if not is_tensor(t):
            raise TypeError(f"backward(inputs=...): item {i} is a {type(t).__name__}, not a "
                            "Tensor; pass the parameters whose .grad you want")
        if t.grad_fn is not None:
            raise ValueError(f"backward(inputs=...): item {i} was computed by {t.grad_fn.op_name}"
                             "; dltutor writes .grad of leaves only (parameters, tensors you "
                             "made). Use retain_grad() on it and a plain backward()")
        if not t.requires_grad:
            raise ValueError(f"backward(inputs=...): item {i} does not require grad, so no "
                             "gradient reaches it; call requires_grad_() on it first")
    return {id(t) for t in inputs}


def _root_gradient(root: Tensor, grad: Any) -> Array:
    if grad is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward() without a gradient needs a one-element tensor such as a loss; this "
                f"one has shape {tuple(root.shape)}. Reduce it first (.sum() or .mean()) or pass "
                f"grad= with shape {tuple(root.shape)}.")
        data = root.data
        seed = B.get_array_module(data).empty(data.shape, dtype=data.dtype)
        seed.fill(1)        # (not ones(), which is Python code over these two C calls)
        return seed
    data = grad.data if is_tensor(grad) else (B.backend_of(root.data) or B.NUMPY).asarray(grad)
    if data.shape != root.shape:
        raise RuntimeError(f"backward(grad=...): grad has shape {tuple(data.shape)} but the tensor "
                           f"has shape {tuple(root.shape)}")
    return data.astype(root.dtype, copy=False)


def _freed_graph_error(fn: Function) -> RuntimeError:
    return RuntimeError(
        f"backward through the graph a second time: the graph of {fn.op_name} was freed by the "
        "first backward. Pass retain_graph=True to the first backward() if you need two, or "
        "recompute the forward pass.")


def as_array(grad: Array | np.generic) -> Array:
    """``grad`` as an array: NumPy turns a 0-d result into a scalar (``np.float32``), and a
    gradient must stay an array (``t.grad.zero_()``, ``t.grad += 1`` write into it).

    >>> type(as_array(np.float32(2.0))).__name__, type(as_array(np.ones(2))).__name__
    ('ndarray', 'ndarray')
    """
    return np.asarray(grad) if isinstance(grad, np.generic) else grad


def _run_hooks(hooks: list[GradHook], grad: Array, shape: tuple[int, ...]) -> Array:
    """Pass ``grad`` through each hook; a hook returns None (keep it) or the new gradient."""
    for hook in list(hooks):
        result = hook(make_tensor(as_array(grad)))
        if result is None:
            continue
        new: Any = result.data if is_tensor(result) else result   # what the hook gave: checked
        name = getattr(hook, "__qualname__", type(hook).__name__)
        if not hasattr(new, "shape") or getattr(new, "dtype", np.dtype(object)).kind not in "biuf":
            raise TypeError(f"gradient hook {name} returned a {type(result).__name__}; a hook "
                            "returns None (keep the gradient) or a Tensor shaped like it. "
                            "No .grad was changed")
        if new.shape != shape:
            raise RuntimeError(f"gradient hook {name} returned shape {tuple(new.shape)}; the "
                               f"gradient has shape {tuple(shape)}. No .grad was changed")
        grad = new
    return grad


def _write_grads(pairs: Sequence[tuple[Tensor, Array]]) -> None:
    """Add each ``(tensor, grad)``'s gradient into ``tensor.grad`` (in the tensor's dtype),
    without writing into any existing array. (One call for all of them: a function call per
    parameter cost more than the work.)"""
    for t, grad in pairs:
        if grad.dtype != t.data.dtype:
            grad = grad.astype(t.data.dtype)
        if t.grad is not None:
            grad = t.grad.data + grad
        grad = as_array(grad)
        if t.grad is None:
            t.grad = make_tensor(grad)
        else:
            t.grad.data = grad


def _sum_collected(grads: list[Array]) -> Array:
    first = grads[0]
    if len(grads) > 4 and first.ndim > 0:
        # One concatenate and one sum, both in C (np.stack would loop in Python).
        joined = B.get_array_module(first).concatenate(grads)
        return joined.reshape((len(grads),) + first.shape).sum(axis=0)
    total = grads[0] + grads[1]
    for g in grads[2:]:
        total += g  # ``total`` is a fresh array, so adding in place is safe
    return total
