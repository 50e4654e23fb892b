"""Loss functions: ``cross_entropy`` (log-softmax and the negative log-likelihood of integer
labels, fused) and ``mse_loss``, each with PyTorch's ``reduction=`` ("mean", "sum", "none").

Each is one :class:`Function` whose backward is written out by hand (checked against finite
differences in the tests): faster, and easier to read, than a chain of small ops.

>>> import dltutor as dt
>>> logits = dt.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
>>> loss = cross_entropy(logits, dt.tensor([0]))
>>> round(loss.item(), 4)
0.2413
>>> loss.backward()
>>> [round(v, 4) for v in logits.grad.tolist()[0]]     # softmax minus the one-hot label
[-0.2144, 0.1753, 0.0391]
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import DTypeLike

from ... import backend as B
from ... import host_reads
from ..arrays import Array
from ..function import Function, is_tensor
from .elementwise import abs, sigmoid_of  # the op, not the builtin
from .operands import Operand, as_tensor
from .shape import permute, reshape

if TYPE_CHECKING:                       # never imported: tensor.py imports the ops
    from ..tensor import Tensor

get_array_module = B.get_array_module

_REDUCTIONS = ("mean", "sum", "none")


def check_reduction(op: str, reduction: str) -> None:
    """Refuse a ``reduction`` other than PyTorch's three, naming the loss ``op``.

    >>> check_reduction("mse_loss", "avg")
    Traceback (most recent call last):
    ...
    ValueError: mse_loss: reduction must be one of ('mean', 'sum', 'none'), got 'avg'
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


class CrossEntropy(Function):
    """Softmax + negative log-likelihood of integer labels, fused and stable.

    ``valid`` is a mask of the labels that count (None when no label is ``ignore_index``,
    which skips the masking work on the usual path). On a GPU it is always given, as weights
    of the logits' dtype: 1 counts, 0 is ignored, NaN is a label out of range (see
    ``_labels_checked_later``).
    """

    grad_shapes_exact = True

    def __init__(self, labels: Array, reduction: str, valid: Array | None):
        self.labels, self.reduction, self.valid = labels, reduction, valid

    def forward(self, logits: Array) -> Array:
        xp = get_array_module(logits)
        shifted = logits - logits.max(axis=1, keepdims=True)     # so that exp cannot overflow
        self.softmax = xp.exp(shifted)
        sums = self.softmax.sum(axis=1, keepdims=True)
        self.softmax /= sums                                      # kept for backward
        self.rows = xp.arange(logits.shape[0])
        # The log-probability of each label: its shifted logit minus the log of its row's sum.
        picked = shifted[self.rows, self.labels] - xp.log(sums[:, 0])
        if self.valid is not None:
            picked *= self.valid
        if self.reduction == "none":
            return -picked
        # The arithmetic is done on the sum, a NumPy scalar; asarray makes the result the 0-d
        # array an op returns, in the logits' dtype.
        if self.reduction == "sum":
            return xp.asarray(-picked.sum(), dtype=logits.dtype)
        if self.valid is not None and not B.reads_are_free(logits):
            self.count = self.valid.sum()      # on a GPU: stays there (0 labels: 0/0, NaN)
            with B.ignore_float_errors(logits):
                return xp.asarray(picked.sum() / -self.count, dtype=logits.dtype)
        # A Python int: dividing a float32 sum by a NumPy int64 scalar would give float64.
        self.count = logits.shape[0] if self.valid is None else int(self.valid.sum())
        mean = picked.sum() / -self.count if self.count else xp.nan   # (no label: NaN)
        return xp.asarray(mean, dtype=logits.dtype)

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        # d loss / d logits = (softmax - one-hot labels) * each row's weight: the upstream
        # gradient (per row for "none"), / count for "mean", 0 for an ignored label.
        weight = g / self.count if self.reduction == "mean" else g
        if self.valid is not None:
            weight = weight * self.valid
        grad = self.softmax * (weight[:, None] if weight.ndim else weight)
        grad[self.rows, self.labels] -= weight
        return (grad,)


def _check_label_kind(labels: Array, n: int, classes: int) -> None:
    """Refuse labels that are not integers, or not one per row (their dtype and shape, which
    the host knows without reading a value)."""
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: labels must be integer class indices (got {labels.dtype});"
                        " make them with dt.tensor(labels, dtype=dt.int64)")
    if labels.shape != (n,):
        raise ValueError(f"cross_entropy: logits of shape ({n}, {classes}) need labels of shape "
                         f"({n},), got {tuple(labels.shape)}")


def _check_labels(labels: Array, n: int, classes: int, ignore_index: int) -> Array | None:
    """Check the labels; return the mask of labels that count, or None if all of them do."""
    _check_label_kind(labels, n, classes)
    if n == 0 or int(_as_unsigned(labels).max()) < classes:
        return None  # the usual case, found with one cheap reduction
    valid = labels != ignore_index
    used = labels[valid]
    if used.size and (int(used.min()) < 0 or int(used.max()) >= classes):
        bad = int(used.min()) if int(used.min()) < 0 else int(used.max())
        raise ValueError(f"cross_entropy: label {bad} is out of range for {classes} classes "
                         f"(labels must be in 0..{classes - 1})")
    return valid


def _labels_checked_later(labels: Array, n: int, classes: int, ignore_index: int,
                          dtype: DTypeLike) -> tuple[Array, Array]:
    """On a GPU, where reading a label would make the host wait: the labels to look up (0 for
    the ignored and the bad ones) and each row's weight (1 counts, 0 ignored, NaN for a label
    out of range). A bad label makes the loss and every gradient NaN, so the optimizer refuses
    the step; the ValueError naming it comes at the host's next read (host_reads)."""
    _check_label_kind(labels, n, classes)
    xp = get_array_module(labels)
    counted = labels != ignore_index
    usable = (labels >= 0) & (labels < classes)
    bad = counted & ~usable
    weights = xp.where(bad, xp.nan, counted).astype(dtype)
    first_bad = xp.take(labels, bad.argmax()) if n else xp.zeros((), labels.dtype)
    answer = xp.stack([bad.any().astype(np.int64), first_bad.astype(np.int64)])

    def refuse_a_bad_label(found: np.ndarray) -> None:
        if found[0]:
            raise ValueError(f"cross_entropy: label {found[1]} is out of range for {classes} "
                             f"classes (labels must be in 0..{classes - 1}; found on the "
                             "device, read after the op)")
    host_reads.defer(host_reads.start_read(answer), refuse_a_bad_label)
    return xp.where(usable, labels, 0), weights


def _as_unsigned(labels: Array) -> Array:
    """The same bits read as unsigned integers: a negative label becomes a huge number, so
    one ``max()`` checks both ends of the range (unsigned labels are returned as they are).

    >>> import numpy as np
    >>> bool(_as_unsigned(np.array([-1, 2])).max() > 2)
    True
    """
    if labels.dtype.kind == "u":
        return labels
    return labels.view(_UNSIGNED[labels.dtype.itemsize])


# The unsigned dtype of each integer size (a dtype object: ``view("u8")`` parses the string).
_UNSIGNED = {np.dtype(t).itemsize: np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def cross_entropy(logits: Tensor, labels: Operand, reduction: str = "mean",
                  ignore_index: int = -100) -> Tensor:
    """Cross-entropy between raw scores ``logits`` (N, C) and integer ``labels`` (N,).

    Applies log-softmax itself (pass raw scores, not probabilities). ``reduction`` is
    ``"mean"`` (over labels that are not ``ignore_index``), ``"sum"`` or ``"none"``.
    Extra dimensions (N, C, d1, ...) with labels (N, d1, ...) work as in PyTorch.

    >>> import dltutor as dt
    >>> round(cross_entropy(dt.zeros(2, 4), dt.tensor([1, 3])).item(), 4)   # log(4)
    1.3863
    """
    check_reduction("cross_entropy", reduction)
    label_data = labels.data if is_tensor(labels) else as_tensor(labels, logits).data
    shape = logits.data.shape
    if len(shape) < 2:
        raise ValueError(f"cross_entropy: logits must have shape (N, C), got {tuple(shape)}")
    if len(shape) > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        order = (0,) + tuple(range(2, len(shape))) + (1,)
        logits = reshape(permute(logits, order), -1, shape[1])
        label_data = label_data.reshape(-1)
    n, classes = logits.data.shape
    if not B.reads_are_free(logits.data):
        label_data, weights = _labels_checked_later(label_data, n, classes, ignore_index,
                                                    logits.data.dtype)
        return CrossEntropy(label_data, reduction, weights).apply(logits)
    valid = _check_labels(label_data, n, classes, ignore_index)
    if valid is not None:  # ignored rows look up class 0, then count for nothing
        label_data = get_array_module(label_data).where(valid, label_data, 0)
    return CrossEntropy(label_data, reduction, valid).apply(logits)


class MSELoss(Function):
    """Squared error ``(a - b)**2``, reduced by ``mean``, ``sum`` or ``none``: the gradient is
    ``2 * (a - b) * g`` (divided by the count for ``mean``) for ``a``, its negative for ``b``."""

    def __init__(self, reduction: str):
        self.reduction = reduction

    def forward(self, a: Array, b: Array) -> Array:
        self.diff = a - b
        squares = self.diff * self.diff
        if self.reduction == "none":
            return squares
        self.count = squares.size
        total = squares.sum(keepdims=True).reshape(())
        if self.reduction == "mean":
            # in place: ``total / count`` of a 0-d array is a NumPy scalar. The mean of no
            # elements is NaN, silently, as in PyTorch.
            if self.count:
                total /= self.count
            else:
                total[...] = get_array_module(total).nan
        return total

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        # (An empty input's mean is NaN and its gradient empty: no division by its count 0.)
        scale = 2 / self.count if self.reduction == "mean" and self.count else 2
        g = g * scale
        # The target's gradient only when it needs one (a target seldom does): 2 * (b - a) * g
        # as PyTorch writes it, with b - a taken as 0 - diff. (-ga would be -(+0.0 * g) where
        # a == b: a zero of the wrong sign, printed "-0." where PyTorch prints "0.", or the
        # other way round.)
        gb = (0 - self.diff) * g if self.inputs[1].requires_grad else None
        return self.diff * g, gb


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error ``mean((input - target) ** 2)``.

    Shapes that differ are broadcast, as in PyTorch, with a warning: (5, 1) against (5,)
    compares every prediction with every target, which is almost never what you want.

    >>> import dltutor as dt
    >>> mse_loss(dt.tensor([1.0, 3.0]), dt.tensor([0.0, 0.0]))
    tensor(5.)
    """
    check_reduction("mse_loss", reduction)
    target = as_tensor(target, input)
    if target.shape != input.shape:
        warnings.warn(f"mse_loss: input shape {tuple(input.shape)} and target shape "
                      f"{tuple(target.shape)} differ and will be broadcast; reshape one of them "
                      "if that is not what you meant", UserWarning, stacklevel=2)
    return MSELoss(reduction).apply(input, target)


def _reduce(op: str, losses: Tensor, reduction: str) -> Tensor:
    """``losses`` (one per element) reduced as ``reduction`` says."""
    check_reduction(op, reduction)
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error ``mean(|input - target|)`` (PyTorch's ``l1_loss``), built from
    ``abs`` and ``mean``, so its gradient is ``sign(input - target) / n``.

    >>> import dltutor as dt
    >>> l1_loss(dt.tensor([1.0, -3.0]), dt.tensor([0.0, 0.0]))
    tensor(2.)
    """
    check_reduction("l1_loss", reduction)
    return _reduce("l1_loss", abs(input - as_tensor(target, input, "l1_loss")), reduction)


class BCEWithLogits(Function):
    """Binary cross-entropy of logits ``x`` against targets ``y``, element by element, as
    PyTorch computes it: ``(1 - y) * x - log_sigmoid(x)`` with
    ``log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))``, which never overflows ``exp``, never
    takes the log of 0, and keeps a tiny loss's digits (log1p). The gradient is
    ``sigmoid(x) - y`` for ``x`` and ``-x`` for ``y``, written out: built from ops, the kinks
    of ``min`` and ``|x|`` at 0 would take their subgradient 0 there and give ``-y`` at
    ``x = 0`` (a zero-initialized output layer's first step) instead of ``0.5 - y``."""

    name = "binary_cross_entropy_with_logits"

    def forward(self, x: Array, y: Array) -> Array:
        xp = get_array_module(x)
        self.x, self.y = x, y
        log_sigmoid = xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))
        with B.ignore_float_errors(x):        # (1 - y) * x of an inf logit, as in PyTorch
            return (1 - y) * x - log_sigmoid

    def backward(self, g: Array) -> tuple[Array | None, ...]:
        gx = (sigmoid_of(self.x) - self.y) * g
        # The target's gradient only when it needs one (a target seldom does).
        return gx, (-self.x * g if self.inputs[1].requires_grad else None)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of raw scores ``input`` against targets in [0, 1], with the
    sigmoid inside (see :class:`BCEWithLogits` for the formula, PyTorch's).

    >>> import dltutor as dt
    >>> x = dt.tensor([0.0, 40.0], requires_grad=True)
    >>> binary_cross_entropy_with_logits(x, dt.tensor([1.0, 1.0]), reduction="none")
    tensor([6.9315e-01, 4.2484e-18], grad_fn=<BCEWithLogitsBackward>)
    >>> binary_cross_entropy_with_logits(x, dt.tensor([1.0, 1.0])).backward()
    >>> x.grad                            # (sigmoid(x) - y) / 2
    tensor([-0.2500,  0.0000])
    """
    check_reduction("binary_cross_entropy_with_logits", reduction)
    y = as_tensor(target, input, "binary_cross_entropy_with_logits")
    if y.shape != input.shape:      # PyTorch refuses too: (N, 1) against (N,) would give (N, N)
        raise ValueError(f"binary_cross_entropy_with_logits: the target's shape "
                         f"{tuple(y.shape)} must be the input's {tuple(input.shape)} (one "
                         "target per logit); reshape one of them")
    return _reduce("binary_cross_entropy_with_logits", BCEWithLogits().apply(input, y), reduction)
