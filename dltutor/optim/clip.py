"""Paddle's clip objects, handed to an optimizer: ``ClipGradByGlobalNorm``, ``ClipGradByNorm``,
``ClipGradByValue``. Give one to an optimizer as ``grad_clip=`` and it clips inside every
``step()``. A clip object says which parameters it applies to (:meth:`GradClip.applies_to`:
not those with ``need_clip=False``), and the optimizer and the diagnose reports ask it. Each
records what it did last: ``last_total_norm`` (global norm before), ``last_clipped_norm``
(after) and ``last_scale``. PyTorch's clipping functions (``clip_grad_norm_``,
``clip_grad_value_``) are in :mod:`dltutor.nn.utils`, as in PyTorch.

>>> import numpy as np
>>> from dltutor import nn
>>> clip = ClipGradByGlobalNorm(1.0)
>>> grads = clip([nn.Parameter([0.0, 0.0])], [np.array([3.0, 4.0])])
>>> grads[0], clip.last_scale
(array([0.6, 0.8]), 0.2)
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import backend as B
from .. import checks
from ..autograd import Tensor
from ..nn.utils.norms import l2_norms


class GradClip:
    """Base class of the clip objects an optimizer takes as ``grad_clip=``.

    Calling it with the parameters and their gradient arrays clips the arrays IN PLACE (the
    optimizer hands it its own copies, never ``p.grad``), returns them, and records
    ``last_total_norm``, ``last_clipped_norm`` and ``last_scale`` (after / before; 1.0 when
    nothing was clipped). Parameters with ``need_clip=False`` are neither counted nor changed.
    On a GPU the built-in clips read nothing on the host: the norms stay on the device (one
    array, not a list of floats), and the ``last_*`` values are read when you ask for them.
    :meth:`predict_scales` says what a call would do, without doing it.

    A subclass defines :meth:`clip`; one whose rule multiplies each gradient by a factor may
    also define ``_scales`` (the factors, from the norms), which :meth:`predict_scales` then
    uses instead of clipping copies.

    >>> import math, numpy as np
    >>> from dltutor import nn
    >>> class ClipToSign(GradClip):
    ...     "Keep only the sign of every gradient value."
    ...     def clip(self, grads, norms):
    ...         for g in grads:
    ...             np.sign(g, out=g)
    ...         return math.sqrt(sum(float((g * g).sum()) for g in grads))
    >>> grads = [np.array([3.0, -4.0])]
    >>> [round(s, 4) for s in ClipToSign().predict_scales([nn.Parameter([0.0, 0.0])], grads)]
    [0.2828]
    """

    def __init__(self) -> None:
        # The global norm before and after the last call: floats, or device scalars on a GPU.
        self._last_norms: tuple[Any, Any] | None = None

    def __call__(self, params: list[Tensor], grads: list[Any],
                 squares: list[float] | None = None) -> list[Any]:
        # squares: each gradient's sum of squares, when the optimizer already took them
        indices = [i for i, p in enumerate(params) if self.applies_to(p)]
        chosen = [grads[i] for i in indices]
        norms = (norms_of(chosen) if squares is None else
                 [math.sqrt(squares[i]) for i in indices])
        before = joint_norm(norms)
        self._last_norms = before, self.clip(chosen, norms)
        return grads

    @property
    def last_total_norm(self) -> float | None:
        """The global norm of the gradients the last call clipped, before it (None: no call)."""
        return None if self._last_norms is None else float(self._last_norms[0])

    @property
    def last_clipped_norm(self) -> float | None:
        """Their global norm after the last call (None: no call yet)."""
        return None if self._last_norms is None else float(self._last_norms[1])

    @property
    def last_scale(self) -> float | None:
        """After over before (1.0 when nothing was clipped; None: no call yet)."""
        if self._last_norms is None:
            return None
        before, after = (float(norm) for norm in self._last_norms)
        # min(): rounding can make "after" a hair larger than "before" when nothing was clipped
        return min(1.0, after / before) if before > 0 else 1.0

    def applies_to(self, param: Any) -> bool:
        """Whether this clip changes (and counts) ``param``'s gradient: Paddle's rule, every
        parameter but those with ``need_clip=False``. The one place the rule is written: the
        optimizer and the diagnose reports ask here.

        >>> from dltutor import nn
        >>> ClipGradByNorm(1.0).applies_to(nn.Parameter([0.0], need_clip=False))
        False
        """
        return bool(getattr(param, "need_clip", True))

    def clip(self, grads: list[Any], norms: list[float]) -> float:  # pragma: no cover
        """Clip ``grads`` in place (``norms`` are their L2 norms); return the global norm after."""
        raise NotImplementedError(f"{type(self).__name__} must define clip (subclass it)")

    def predict_scales(self, params: Sequence[Tensor],
                       grads: Sequence[Any] | None = None) -> list[float | None]:
        """The factor by which calling this clip would change the L2 norm of each parameter's
        gradient, changing nothing: 1.0 for a gradient it leaves alone (``need_clip=False``,
        or small enough), None for a parameter without a gradient. (A zero gradient gets the
        factor a scaling clip would multiply it by, 1.0 from the others.) ``grads`` are the
        gradient arrays (default: each parameter's ``.grad``, as ``step()`` would clip them).

        >>> import numpy as np
        >>> from dltutor import nn
        >>> a, b = nn.Parameter([0.0, 0.0]), nn.Parameter([0.0])
        >>> grads = [np.array([3.0, 4.0]), np.array([0.5])]
        >>> ClipGradByNorm(1.0).predict_scales([a, b], grads), grads[0]
        ([0.2, 1.0], array([3., 4.]))
        >>> ClipGradByGlobalNorm(1.0).predict_scales([a, b])     # no .grad yet
        [None, None]
        """
        if grads is None:
            grads = [None if p.grad is None else p.grad.data for p in params]
        chosen = [i for i, (p, g) in enumerate(zip(params, grads))
                  if g is not None and self.applies_to(p)]
        chosen_grads = [grads[i] for i in chosen]
        scales: list[float | None] = [None if g is None else 1.0 for g in grads]
        for i, scale in zip(chosen, self._scales(chosen_grads, l2_norms(chosen_grads))):
            scales[i] = scale
        return scales

    def _scales(self, grads: list[Any], norms: list[float]) -> list[float]:
        """Each gradient's norm after :meth:`clip` over its norm before, found by clipping
        copies: right for any clip rule (a subclass that scales gives a closed form)."""
        copies = [g.copy() for g in grads]
        self.clip(copies, list(norms))
        return [after / before if before > 0 else 1.0
                for before, after in zip(norms, l2_norms(copies))]


def norms_of(grads: list[Any]) -> Any:
    """The L2 norm of each gradient: Python floats, or on a GPU one device array (reading
    each norm on the host would make it wait for the device).

    >>> import numpy as np
    >>> norms_of([np.array([3.0, 4.0]), np.array([1.0])])
    [5.0, 1.0]
    """
    if not grads or B.reads_are_free(grads[0]):
        return l2_norms(grads)
    xp = B.get_array_module(grads[0])
    return xp.sqrt(xp.stack([xp.vdot(g, g) for g in grads]))


def joint_norm(norms: Any) -> Any:
    """The L2 norm of all the gradients together, from their norms (a list of floats, or a
    device array: then a device scalar).

    >>> joint_norm([3.0, 4.0])
    5.0
    """
    if isinstance(norms, list):
        return math.sqrt(sum(n * n for n in norms))
    return B.get_array_module(norms).sqrt(norms @ norms)


def _is_one(scale: Any) -> bool:
    """Whether a clip's factor is known to be 1.0 (a factor on a device is not looked at: it
    is applied)."""
    return isinstance(scale, float) and scale == 1.0


class ClipGradByGlobalNorm(GradClip):
    """Paddle's global-norm clipping: all gradients are scaled by
    ``clip_norm / max(global_norm, clip_norm)``, so their joint norm is at most ``clip_norm``
    and their directions are kept.

    >>> import numpy as np
    >>> clip = ClipGradByGlobalNorm(1.0)
    >>> from dltutor import nn
    >>> grads = [np.array([3.0, 4.0])]
    >>> _ = clip([nn.Parameter([0.0, 0.0])], grads)
    >>> grads[0], clip.last_total_norm, clip.last_scale
    (array([0.6, 0.8]), 5.0, 0.2)
    """

    def __init__(self, clip_norm: float):
        super().__init__()
        self.clip_norm = float(checks.positive("ClipGradByGlobalNorm", "clip_norm", clip_norm))

    def clip(self, grads: list[Any], norms: Any) -> Any:
        total = joint_norm(norms)
        scale = self._global_scale(total)
        if not _is_one(scale):
            for g in grads:
                g *= scale
        return total * scale

    def _scales(self, grads: list[Any], norms: list[float]) -> list[float]:
        return [self._global_scale(joint_norm(norms))] * len(norms)

    def _global_scale(self, total: Any) -> Any:
        """The one factor every gradient is multiplied by, given their global norm (a float,
        or a device scalar on a GPU)."""
        if isinstance(total, float):
            return self.clip_norm / max(total, self.clip_norm)
        return self.clip_norm / B.get_array_module(total).maximum(total, self.clip_norm)

    def __repr__(self) -> str:
        return f"ClipGradByGlobalNorm(clip_norm={self.clip_norm:g})"


class ClipGradByNorm(GradClip):
    """Paddle's per-tensor clipping: each gradient whose own L2 norm exceeds ``clip_norm`` is
    scaled down to that norm; the others are left alone.

    >>> import numpy as np
    >>> from dltutor import nn
    >>> out = ClipGradByNorm(1.0)([nn.Parameter([0.0, 0.0]), nn.Parameter([0.0])],
    ...                           [np.array([3.0, 4.0]), np.array([0.5])])
    >>> out
    [array([0.6, 0.8]), array([0.5])]
    """

    def __init__(self, clip_norm: float):
        super().__init__()
        self.clip_norm = float(checks.positive("ClipGradByNorm", "clip_norm", clip_norm))

    def clip(self, grads: list[Any], norms: Any) -> Any:
        scales = self._scales(grads, norms)
        for i, g in enumerate(grads):
            if not _is_one(scales[i]):
                g *= scales[i]
        if isinstance(norms, list):              # each norm is now at most clip_norm
            return joint_norm([min(norm, self.clip_norm) for norm in norms])
        return joint_norm(B.get_array_module(norms).minimum(norms, self.clip_norm))

    def _scales(self, grads: list[Any], norms: Any) -> Any:
        if isinstance(norms, list):
            return [self.clip_norm / norm if norm > self.clip_norm else 1.0 for norm in norms]
        xp = B.get_array_module(norms)           # on a GPU: the same rule, on the device
        return xp.where(norms > self.clip_norm, self.clip_norm / xp.maximum(norms, self.clip_norm),
                        1.0)

    def __repr__(self) -> str:
        return f"ClipGradByNorm(clip_norm={self.clip_norm:g})"


class ClipGradByValue(GradClip):
    """Paddle's value clipping: clamp every gradient value to ``[min, max]`` (``min``
    defaults to ``-max``).

    >>> import numpy as np
    >>> from dltutor import nn
    >>> ClipGradByValue(1.0)([nn.Parameter([0.0, 0.0])], [np.array([-3.0, 0.5])])
    [array([-1. ,  0.5])]
    """

    def __init__(self, max: float, min: float | None = None):  # (Paddle's names)
        super().__init__()
        if min is None:         # the range [-max, max]: max is a threshold, and must be > 0
            self.max = float(checks.positive("ClipGradByValue", "max", max))
            self.min = -self.max
        else:                   # any range [min, max] that leaves room between its ends
            self.min = float(checks.number("ClipGradByValue", "min", min))
            self.max = float(checks.number("ClipGradByValue", "max", max))
            if self.min >= self.max:
                raise ValueError(f"ClipGradByValue: min must be less than max, got "
                                 f"min={self.min:g}, max={self.max:g}")

    def clip(self, grads: list[Any], norms: Any) -> Any:
        for g in grads:
            B.get_array_module(g).clip(g, self.min, self.max, out=g)
        if grads and not B.reads_are_free(grads[0]):
            return joint_norm(norms_of(grads))         # on a GPU: a device scalar
        return math.sqrt(sum(B.sums_of_squares(grads)))

    def __repr__(self) -> str:
        return f"ClipGradByValue(max={self.max:g}, min={self.min:g})"
