"""Regularizers (Paddle's ``L1Decay`` and ``L2Decay``): penalties added to a gradient.

Set one on a parameter (``p.regularizer = L2Decay(1e-4)``) or as a group's ``weight_decay``.
A parameter's own regularizer replaces the optimizer's for that parameter, as in Paddle.

>>> import numpy as np
>>> L2Decay(0.1).apply(np.array([2.0, -4.0]), np.zeros(2))
array([ 0.2, -0.4])
>>> L1Decay(0.1).apply(np.array([2.0, -4.0]), np.zeros(2))
array([ 0.1, -0.1])
"""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .. import checks


class Regularizer:
    """Base class: ``apply(param, grad)`` returns ``grad`` plus the penalty's gradient;
    ``add_to(param, grad, tmp)`` does the same in place (the optimizers use it). A subclass
    defines ``penalty_grad``.

    >>> import numpy as np
    >>> class Toward(Regularizer):
    ...     "Pull every weight toward 1: penalty coeff / 2 * sum((p - 1)**2)."
    ...     def penalty_grad(self, param, out):
    ...         np.subtract(param, 1.0, out=out)
    ...         out *= self.coeff
    ...         return out
    >>> Toward(0.5).apply(np.array([3.0]), np.zeros(1))
    array([1.])
    """

    name = "regularizer"

    def __init__(self, coeff: float = 0.0):
        self.coeff = float(checks.non_negative(type(self).__name__, "coeff", coeff))

    def penalty_grad(self, param: Any, out: Any) -> Any:  # pragma: no cover - abstract
        """Write the penalty's gradient for ``param`` into ``out`` and return it."""
        raise NotImplementedError(f"{type(self).__name__} must define penalty_grad (subclass it)")

    def apply(self, param: Any, grad: Any) -> Any:
        """``grad`` plus the penalty's gradient, as a new array."""
        return grad + self.penalty_grad(param, B.get_array_module(param).empty_like(param))

    def add_to(self, param: Any, grad: Any, tmp: Any) -> None:
        """Add the penalty's gradient to ``grad`` in place, using ``tmp`` as scratch space."""
        grad += self.penalty_grad(param, tmp)

    def to_state(self) -> dict[str, Any]:
        """A plain dict for checkpoints."""
        return {"regularizer": type(self).__name__, "coeff": self.coeff}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.coeff == other.coeff

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.coeff:g})"


class L2Decay(Regularizer):
    """Penalty ``coeff / 2 * sum(p**2)``: adds ``coeff * p`` to the gradient (weight decay).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0], regularizer=L2Decay(1e-4))
    >>> w.regularizer
    L2Decay(0.0001)
    """

    def penalty_grad(self, param: Any, out: Any) -> Any:
        return B.get_array_module(param).multiply(param, self.coeff, out=out)


class L1Decay(Regularizer):
    """Penalty ``coeff * sum(|p|)``: adds ``coeff * sign(p)`` to the gradient (pushes weights
    to exactly zero, making them sparse).

    >>> L1Decay(0.01)
    L1Decay(0.01)
    """

    def penalty_grad(self, param: Any, out: Any) -> Any:
        xp = B.get_array_module(param)
        xp.sign(param, out=out)
        out *= self.coeff
        return out


def regularizer_from_state(state: dict[str, Any]) -> Regularizer:
    """Rebuild a regularizer saved by :meth:`Regularizer.to_state`; its ``coeff`` is checked as
    the constructor checks it.

    >>> regularizer_from_state(L1Decay(0.01).to_state())
    L1Decay(0.01)
    >>> regularizer_from_state({"regularizer": "L2Decay"})
    Traceback (most recent call last):
    ...
    ValueError: the saved regularizer L2Decay has no 'coeff' (its strength); a saved one looks
    like {'regularizer': 'L2Decay', 'coeff': 0.0001}
    """
    kinds = {"L1Decay": L1Decay, "L2Decay": L2Decay}
    kind = state.get("regularizer")
    if kind not in kinds:
        raise ValueError(f"unknown regularizer {kind!r} in a checkpoint; known: {sorted(kinds)}")
    if "coeff" not in state:
        raise ValueError(f"the saved regularizer {kind} has no 'coeff' (its strength); a saved "
                         f"one looks like {{'regularizer': '{kind}', 'coeff': 0.0001}}")
    return kinds[kind](state["coeff"])
