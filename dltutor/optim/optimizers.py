"""SGD, Adam, AdamW, RMSprop, Adagrad (each exactly PyTorch's update rule), SignSGD (a small
custom optimizer to learn from) and MultiOptimizer.

Each optimizer is only its :meth:`~Optimizer.update`: the base class has already skipped
parameters without gradients, clipped, added regularization and worked out the effective lr.
Updates change ``param.data`` and the state in place; they never change ``grad``.

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> w = nn.Parameter([1.0])
>>> opt = optim.Adam([w], lr=0.1)
>>> (w * 3).sum().backward(); opt.step()
>>> round(w.item(), 4)          # Adam's first step moves by about lr, whatever the gradient
0.9
"""
from __future__ import annotations

import math
from typing import Any, Callable

from .. import backend as B
from .. import checks
from ..autograd.tensor import Tensor
from .optimizer import Optimizer
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

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: Any = 0.0, nesterov: bool = False,
                 maximize: bool = False, grad_clip: Any = None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults, grad_clip)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.non_negative("SGD", "momentum", group["momentum"])
        checks.non_negative("SGD", "dampening", group["dampening"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got "
                             f"momentum={group['momentum']}, dampening={group['dampening']}")

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        xp = B.get_array_module(grad)
        tmp = self.scratch(param)        # scratch space: the update allocates nothing
        momentum, dampening = group["momentum"], group["dampening"]
        direction = grad
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:                 # the first step starts the buffer at g
                buf = state["momentum_buffer"] = grad.copy()
            else:                           # buf = momentum * buf + (1 - dampening) * g
                buf *= momentum
                if dampening:
                    xp.multiply(grad, 1 - dampening, out=tmp)
                    buf += tmp
                else:
                    buf += grad
            if group["nesterov"]:           # g + momentum * buf
                xp.multiply(buf, momentum, out=tmp)
                tmp += grad
                direction = tmp
            else:
                direction = buf
        xp.multiply(direction, lr, out=tmp)  # p -= lr * direction
        param.data -= tmp
        return tmp


class Adam(Optimizer):
    """Adam (PyTorch's rule): bias-corrected moving averages of the gradient and its square.

    ``weight_decay`` is coupled L2 (added to the gradient); for decoupled decay use AdamW.
    ``amsgrad=True`` divides by the running maximum of the second moment instead.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = Adam([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 6)
    0.99
    """

    returns_update = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: Any = 0.0, amsgrad: bool = False,
                 maximize: bool = False, grad_clip: Any = None):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults, grad_clip)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name = type(self).__name__
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            checks.probability(name, f"betas[{i}]", beta)
        checks.non_negative(name, "eps", group["eps"])

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        xp = B.get_array_module(param.data)
        beta1, beta2 = group["betas"]
        if "exp_avg" not in state:
            state["exp_avg"] = xp.zeros_like(param.data)
            state["exp_avg_sq"] = xp.zeros_like(param.data)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(param.data)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        tmp = self.scratch(param)        # scratch space: the update allocates nothing
        step = state["step"]
        exp_avg *= beta1                    # m = beta1 * m + (1 - beta1) * g
        xp.multiply(grad, 1 - beta1, out=tmp)
        exp_avg += tmp
        exp_avg_sq *= beta2                 # v = beta2 * v + (1 - beta2) * g * g
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - beta2
        exp_avg_sq += tmp
        second = exp_avg_sq
        if group["amsgrad"]:                # use the largest v seen so far
            second = state["max_exp_avg_sq"]
            xp.maximum(second, exp_avg_sq, out=second)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        xp.sqrt(second, out=tmp)            # denom = sqrt(v) / sqrt(1 - beta2^t) + eps
        tmp /= bias_correction2_sqrt
        tmp += group["eps"]
        xp.divide(exp_avg, tmp, out=tmp)    # p -= lr / (1 - beta1^t) * m / denom
        tmp *= lr / bias_correction1
        param.data -= tmp
        return tmp


class AdamW(Adam):
    """Adam with decoupled weight decay (PyTorch's AdamW): first ``p *= 1 - lr * weight_decay``,
    then the Adam step without L2 in the gradient.

    ``apply_decay_param_fun(name) -> bool`` (Paddle) chooses which parameters decay, by their
    structured name (e.g. skip biases: ``lambda name: not name.endswith("bias")``); it needs
    the optimizer to be given names, e.g. ``model.named_parameters()``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> net = nn.Linear(2, 1)
    >>> opt = AdamW(net.named_parameters(), lr=0.1, weight_decay=0.5,
    ...             apply_decay_param_fun=lambda name: name != "bias")
    >>> opt.decays("weight"), opt.decays("bias")
    (True, False)
    """

    coupled_weight_decay = False
    returns_update = False  # the decay happens outside the Adam delta

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2,
                 apply_decay_param_fun: Callable[[str], bool] | None = None,
                 amsgrad: bool = False, maximize: bool = False, grad_clip: Any = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize, grad_clip)
        self.apply_decay_param_fun = apply_decay_param_fun
        if apply_decay_param_fun is not None:
            unnamed = [n for n, _, _ in self.named_params() if n.startswith("#")]
            if unnamed:
                raise ValueError("AdamW: apply_decay_param_fun is called with parameter names, but "
                                 "this optimizer was given parameters without names; pass "
                                 "model.named_parameters()")
        self._decay_by_name: dict[str, bool] = {}

    def decays(self, name: str) -> bool:
        """Whether the parameter called ``name`` gets the decoupled weight decay."""
        if self.apply_decay_param_fun is None:
            return True
        if name not in self._decay_by_name:
            self._decay_by_name[name] = bool(self.apply_decay_param_fun(name))
        return self._decay_by_name[name]

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        if isinstance(group["weight_decay"], Regularizer):
            raise ValueError("AdamW: weight_decay is the decoupled decay coefficient (a number); "
                             "set an L1Decay/L2Decay on a parameter as its regularizer instead")

    def step(self) -> None:
        # apply_decay_param_fun asks by name; update() is given the parameter, so look the
        # names up once per step (the groups may have changed since the last one).
        if self.apply_decay_param_fun is not None:
            self._names = {id(p): n for n, p, _ in self.named_params()}
        super().step()

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        decay = group["weight_decay"]
        if decay and (self.apply_decay_param_fun is None or self.decays(self._names[id(param)])):
            param.data *= 1 - lr * decay
        return super().update(param, grad, state, group, lr)


class RMSprop(Optimizer):
    """RMSprop (PyTorch's rule): divide by a moving root-mean-square of recent gradients.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)          # 1 - 0.01 * 2 / sqrt(0.01 * 4)
    0.9
    """

    returns_update = True

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: Any = 0.0, momentum: float = 0.0, centered: bool = False,
                 maximize: bool = False, grad_clip: Any = None):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults, grad_clip)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.between("RMSprop", "alpha", group["alpha"], 0, 1)
        checks.non_negative("RMSprop", "eps", group["eps"])
        checks.non_negative("RMSprop", "momentum", group["momentum"])

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        xp = B.get_array_module(param.data)
        alpha = group["alpha"]
        if "square_avg" not in state:
            state["square_avg"] = xp.zeros_like(param.data)
            if group["momentum"] > 0:
                state["momentum_buffer"] = xp.zeros_like(param.data)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(param.data)
        square_avg = state["square_avg"]
        tmp = self.scratch(param)
        square_avg *= alpha                 # E[g^2] = alpha * E[g^2] + (1 - alpha) * g^2
        xp.multiply(grad, grad, out=tmp)
        tmp *= 1 - alpha
        square_avg += tmp
        if group["centered"]:               # subtract E[g]^2: divide by a standard deviation
            grad_avg = state["grad_avg"]
            grad_avg *= alpha
            xp.multiply(grad, 1 - alpha, out=tmp)
            grad_avg += tmp
            xp.multiply(grad_avg, grad_avg, out=tmp)
            xp.subtract(square_avg, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)
        else:
            xp.sqrt(square_avg, out=tmp)
        tmp += group["eps"]
        xp.divide(grad, tmp, out=tmp)       # g / avg
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += tmp
            xp.multiply(buf, lr, out=tmp)
        else:
            tmp *= lr
        param.data -= tmp
        return tmp


class Adagrad(Optimizer):
    """Adagrad (PyTorch's rule): divide by the root of the sum of all past squared gradients,
    so often-updated parameters slow down. ``lr_decay`` shrinks the lr as ``lr / (1 + (t-1)*decay)``.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0])
    >>> opt = Adagrad([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)          # 1 - 0.1 * 2 / sqrt(4)
    0.9
    """

    returns_update = True

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: Any = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False, grad_clip: Any = None):
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps,
                        maximize=maximize)
        super().__init__(params, defaults, grad_clip)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        checks.non_negative("Adagrad", "lr_decay", group["lr_decay"])
        checks.non_negative("Adagrad", "initial_accumulator_value",
                            group["initial_accumulator_value"])
        checks.non_negative("Adagrad", "eps", group["eps"])

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        xp = B.get_array_module(param.data)
        if "sum" not in state:
            state["sum"] = xp.full(param.shape, group["initial_accumulator_value"],
                                   dtype=param.dtype)
        tmp = self.scratch(param)
        clr = lr / (1 + (state["step"] - 1) * group["lr_decay"])
        xp.multiply(grad, grad, out=tmp)    # sum += g^2
        state["sum"] += tmp
        xp.sqrt(state["sum"], out=tmp)      # p -= clr * g / (sqrt(sum) + eps)
        tmp += group["eps"]
        xp.divide(grad, tmp, out=tmp)
        tmp *= clr
        param.data -= tmp
        return tmp


class SignSGD(Optimizer):
    """A custom optimizer in six lines: step by the SIGN of the gradient, ``p -= lr * sign(g)``.

    It shows what writing your own optimizer takes here: subclass ``Optimizer``, pass your
    hyperparameters as ``defaults``, and override ``update``. Groups, lr multipliers,
    regularizers, clipping, hooks and checkpoints all work without another line.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> w = nn.Parameter([1.0, 1.0])
    >>> opt = SignSGD([w], lr=0.1)
    >>> (w * dt.tensor([5.0, -0.01])).sum().backward(); opt.step()
    >>> w
    Parameter(shape=(2,), dtype=float32)
    tensor([0.9, 1.1], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: Any = 0.0,
                 grad_clip: Any = None):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay), grad_clip)

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        param.data -= lr * B.get_array_module(grad).sign(grad)


class MultiOptimizer:
    """Several optimizers driven as one: one ``step()``, one ``zero_grad()``, one state dict.

    Use it to give different parameters different optimizers (SGD for the convolutions, Adam
    for the rest). A parameter may belong to only one of them.

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    >>> both = MultiOptimizer(SGD(net[0].parameters(), lr=0.1), Adam(net[1].parameters()))
    >>> len(both.param_groups)
    2
    """

    def __init__(self, *optimizers: Optimizer):
        if not optimizers:
            raise ValueError("MultiOptimizer needs at least one optimizer")
        owner: dict[int, int] = {}
        for index, opt in enumerate(optimizers):
            for name, param, _ in opt.named_params():
                if id(param) in owner:
                    raise ValueError(f"MultiOptimizer: parameter {name!r} is in optimizer "
                                     f"{owner[id(param)]} and optimizer {index}; give each "
                                     "parameter to one optimizer only")
                owner[id(param)] = index
        self.optimizers = list(optimizers)

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The groups of all optimizers, in order (schedulers can drive them)."""
        return [group for opt in self.optimizers for group in opt.param_groups]

    def step(self) -> None:
        """Step every optimizer."""
        for opt in self.optimizers:
            opt.step()

    def zero_grad(self) -> None:
        """Clear the gradients of every optimizer's parameters."""
        for opt in self.optimizers:
            opt.zero_grad()

    def state_dict(self) -> dict[str, Any]:
        """One state dict holding each optimizer's."""
        return {"optimizers": [opt.state_dict() for opt in self.optimizers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> list:
        """Restore every optimizer; checks all of them before changing any."""
        states = state_dict.get("optimizers", [])
        if len(states) != len(self.optimizers):
            raise ValueError(f"MultiOptimizer.load_state_dict: the state has {len(states)} "
                             f"optimizer(s), this MultiOptimizer has {len(self.optimizers)}")
        problems = [f"optimizer {i}: {p}" for i, (opt, s) in enumerate(zip(self.optimizers, states))
                    for p in opt._check_state(s)]
        if problems:
            from .optimizer import OptimizerStateError

            raise OptimizerStateError("MultiOptimizer.load_state_dict: nothing was changed.\n  "
                                      + "\n  ".join(problems))
        return [opt.load_state_dict(s) for opt, s in zip(self.optimizers, states)]

    def __repr__(self) -> str:
        return "MultiOptimizer(" + ", ".join(type(o).__name__ for o in self.optimizers) + ")"
