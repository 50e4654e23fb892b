"""SGD: stochastic gradient descent with PyTorch's momentum, dampening, Nesterov and coupled
weight decay, the whole rule in :meth:`SGD.update_param`; on a GPU the same formula as one
fused kernel, :func:`sgd_kernel`."""
from __future__ import annotations

from typing import Any

from .. import backend as B
from .. import checks
from .device_step import write_unless_refused
from .optimizer import Optimizer, ParamStep, add_weight_decay
from .regularizer import Regularizer


class SGD(Optimizer):
    """Stochastic gradient descent, with PyTorch's momentum, dampening and Nesterov.

    With momentum ``mu``: ``buf = g`` on the first step, then ``buf = mu*buf + (1-dampening)*g``;
    the step uses ``g + mu*buf`` (Nesterov) or ``buf``; then ``p -= lr * step``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * 1.0).sum().backward(); opt.step()
    >>> round(w.item(), 4)      # 1 - 0.1*1 - 0.1*(0.9*1 + 1)
    0.71
    """

    returns_update = True
    momentum_state = ("momentum_buffer",)

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: Any = 0.0, nesterov: bool = False,
                 maximize: bool = False, grad_clip: Any = None,
                 nonfinite: str = "raise"):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults, grad_clip, nonfinite)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name = type(self).__name__           # a subclass's errors name the subclass
        checks.non_negative(name, "momentum", group["momentum"])
        checks.non_negative(name, "dampening", group["dampening"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"{name}: Nesterov momentum needs momentum > 0 and dampening = 0, "
                             f"got momentum={group['momentum']}, dampening={group['dampening']}")

    def update_param(self, p: ParamStep, state: dict[str, Any]) -> Any:
        """SGD's step for one parameter ``p``, as PyTorch's ``_single_tensor_sgd``::

            g = g + weight_decay * param                  # coupled weight decay
            buf = g                                       # momentum > 0: on the first step
            buf = momentum * buf + (1 - dampening) * g    # momentum > 0: on later steps
            g = g + momentum * buf if nesterov else buf   # momentum > 0
            return lr * g                                 # the base subtracts it from param

        ``p.lr`` is this parameter's lr (the group's times its ``lr_mult``); ``p.weight_decay``
        the decay Paddle's precedence chose for it (``decay_parts``): its own regularizer, else the
        group's ``weight_decay``. ``p.grad`` is already clipped (and negated for ``maximize``).
        """
        group, grad = p.group, p.grad
        if p.weight_decay is not None:   # in place: the base gave the rule its own copy of g
            grad = add_weight_decay(grad, p.param.data, p.weight_decay, self.scratch(p.param))
        momentum, dampening = group["momentum"], group["dampening"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:                  # the first step starts the buffer at g
                buf = state["momentum_buffer"] = grad.copy()
            else:                            # buf = momentum * buf + (1 - dampening) * g
                buf *= momentum
                buf += (1 - dampening) * grad if dampening else grad  # no copy of g for 1 * g
            grad = grad + momentum * buf if group["nesterov"] else buf
        return p.lr * grad

    def fused_update(self, p: ParamStep, state: dict[str, Any], refused: Any) -> bool:
        """:meth:`update_param`'s step as one kernel (:func:`sgd_kernel`), on a GPU. A
        regularizer object (L1Decay, your own) has no kernel: then False, nothing changed."""
        if isinstance(p.weight_decay, Regularizer):
            return False
        group, param = p.group, p.param.data
        momentum, dampening = group["momentum"], group["dampening"]
        buf = state.get("momentum_buffer")
        if momentum and buf is None:   # the first step: buf = 0 * momentum + 1 * g = g exactly
            buf = state["momentum_buffer"] = B.get_array_module(param).zeros_like(param)
            dampening = 0.0
        B.run_fused(sgd_kernel, param, p.grad, buf if momentum else None, refused, p.lr,
                    p.weight_decay, momentum, 1 - dampening,
                    momentum if group["nesterov"] else None)
        return True


def sgd_kernel(xp: Any, param: Any, grad: Any, buf: Any, refused: Any, lr: float,
               weight_decay: float | None, momentum: float, undamped: float,
               nesterov: float | None) -> None:
    """:meth:`SGD.update_param` and the base's ``param -= step``, as one elementwise formula
    (``backend.run_fused``: one kernel on a GPU), in the same order of operations, so the
    same bits. None switches a part off: ``weight_decay``, ``buf`` (no momentum),
    ``nesterov`` (else it is the momentum). ``refused`` gates the writes (device_step.py).

    >>> import numpy as np
    >>> param, buf = np.array([1.0]), np.array([0.0])
    >>> sgd_kernel(np, param, np.array([1.0]), buf, None, 0.1, None, 0.9, 1.0, None)
    >>> param, buf                                   # first step: buf = g, p -= 0.1 * buf
    (array([0.9]), array([1.]))
    """
    g = grad if weight_decay is None else grad + param * weight_decay
    if buf is not None:
        new_buf = buf * momentum + g * undamped      # buf = momentum * buf + (1 - dampening) * g
        g = new_buf if nesterov is None else g + nesterov * new_buf
        write_unless_refused(xp, buf, new_buf, refused)
    write_unless_refused(xp, param, param - lr * g, refused)
