"""Which weight decay a parameter gets in ``step()``, and where it comes from.

The precedence (Paddle's, with PyTorch's two kinds of decay):

* a parameter's own ``regularizer`` (L1Decay, L2Decay) replaces its group's *coupled*
  ``weight_decay`` for that parameter;
* coupled decay is added to the gradient before the update: a regularizer's gradient, or for a
  number ``c``, ``g += c * p`` (L2). A group's regularizer is always coupled, and so is a
  number for every optimizer whose ``coupled_weight_decay`` is True;
* AdamW's number ``weight_decay`` is *decoupled*: ``p *= 1 - lr * weight_decay`` before its
  update, besides any regularizer of the parameter, and only where
  ``apply_decay_param_fun(name)`` (if given) says True.

``Optimizer.decay_of(param)`` answers with a :class:`Decay`; ``step()`` applies
``Optimizer.decay_parts``, the one function that holds these rules (optimizer.py).

>>> from dltutor import nn, optim
>>> w = nn.Parameter([1.0], regularizer=optim.L2Decay(0.1))
>>> optim.AdamW([("w", w)], weight_decay=0.01).decay_of(w)
Decay(coupled=L2Decay(0.1), source='parameter', replaced=None, decoupled=0.01, excluded=False)
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ..autograd import Tensor
from .regularizer import Regularizer


class Decay(NamedTuple):
    """The weight decay ``step()`` gives one parameter, and where it comes from (what
    ``Optimizer.decay_of`` answers).

    ``coupled`` is added to the gradient before the update: a Regularizer, a number ``c``
    (``g += c * p``) or None; ``source`` says whose it is: ``"parameter"`` (its
    ``regularizer``), ``"group"`` (the group's ``weight_decay``) or None. ``replaced`` is the
    group's coupled ``weight_decay`` that the parameter's own regularizer replaces (None if it
    replaces nothing). ``decoupled`` is AdamW's coefficient (``p *= 1 - lr * decoupled`` before
    the update; 0.0 for none) and ``excluded`` is True when the group has one but
    ``apply_decay_param_fun`` said no for this parameter.

    >>> Decay(coupled=0.01, source="group", replaced=None, decoupled=0.0, excluded=False)
    Decay(coupled=0.01, source='group', replaced=None, decoupled=0.0, excluded=False)
    """

    coupled: Regularizer | float | None
    source: str | None
    replaced: Regularizer | float | None
    decoupled: float
    excluded: bool


def describe_decay(optimizer: Any, name: str, param: Tensor, group: dict[str, Any]) -> Decay:
    """``optimizer.decay_parts`` with where each part comes from, as a :class:`Decay`. The
    rules are decay_parts' alone: asked again without the parameter (``param=None``), it says
    what the group by itself gives, and the difference is what the parameter's own
    regularizer did.

    >>> from dltutor import nn, optim
    >>> w = nn.Parameter([1.0])
    >>> opt = optim.AdamW([("w", w)], weight_decay=0.01, apply_decay_param_fun=lambda n: False)
    >>> describe_decay(opt, "w", w, opt.param_groups[0]).excluded
    True
    """
    coupled, decoupled = optimizer.decay_parts(name, param, group)
    group_coupled, _ = optimizer.decay_parts(name, None, group)
    own = getattr(param, "regularizer", None)
    # The group has a decay, decay_parts did not couple it, and this parameter got none of
    # it: apply_decay_param_fun left the parameter out.
    excluded = bool(group.get("weight_decay")) and group_coupled is None and not decoupled
    return Decay(coupled=coupled,
                 source="parameter" if own is not None else
                 "group" if coupled is not None else None,
                 replaced=group_coupled if own is not None else None,
                 decoupled=decoupled,
                 excluded=excluded)

