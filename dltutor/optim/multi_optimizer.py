"""MultiOptimizer: several optimizers driven as one (one step, one zero_grad, one state dict)."""
from __future__ import annotations

from typing import Any

from ..autograd import Tensor
from .checkpoint import OptimizerStateError, state_problems
from .decay import Decay
from .optimizer import Optimizer


class MultiOptimizer:
    """Several optimizers driven as one: one ``step()``, one ``zero_grad()``, one state dict.

    Use it to give different parameters different optimizers (SGD for the convolutions, Adam
    for the rest). A parameter may belong to only one of them.

    >>> from dltutor import nn, optim
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    >>> both = MultiOptimizer(optim.SGD(net[0].parameters(), lr=0.1),
    ...                       optim.Adam(net[1].parameters()))
    >>> len(both.param_groups)
    2
    """

    def __init__(self, *optimizers: Optimizer):
        if not optimizers:
            raise ValueError("MultiOptimizer needs at least one optimizer")
        owner: dict[int, int] = {}
        for index, opt in enumerate(optimizers):
            for name, param, _ in opt.param_entries():
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

    def decay_of(self, param: Tensor | str) -> Decay:
        """:meth:`Optimizer.decay_of` asked of the optimizer that holds ``param`` (a
        parameter, or a name that only one of the optimizers uses).

        >>> from dltutor import nn, optim
        >>> a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
        >>> both = MultiOptimizer(optim.SGD([("a", a)], lr=0.1, weight_decay=0.1),
        ...                       optim.AdamW([("b", b)], weight_decay=0.2))
        >>> both.decay_of("a").coupled, both.decay_of(b).decoupled
        (0.1, 0.2)
        """
        holders = [opt for opt in self.optimizers for name, candidate, _ in opt.param_entries()
                   if (candidate is param if isinstance(param, Tensor) else name == param)]
        if len(holders) > 1:
            raise KeyError(f"MultiOptimizer: {len(holders)} optimizers have a parameter named "
                           f"{param!r}; pass the parameter itself")
        if not holders:
            raise KeyError(f"MultiOptimizer: no optimizer has the parameter {param!r}")
        return holders[0].decay_of(param)

    def step(self, closure: Any = None) -> Any:
        """Step every optimizer; a ``closure`` (see ``Optimizer.step``) runs once, first, and
        its loss is returned."""
        loss = self.optimizers[0].step(closure) if self.optimizers else None
        for opt in self.optimizers[1:]:
            opt.step()
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every optimizer's parameters (see ``Optimizer.zero_grad``)."""
        for opt in self.optimizers:
            opt.zero_grad(set_to_none)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Paddle's name for :meth:`zero_grad`, with Paddle's default: zeros, not None.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
        >>> a.grad, b.grad = dt.ones(1), dt.ones(1)
        >>> MultiOptimizer(optim.SGD([a], lr=0.1), optim.Adam([b])).clear_grad(set_to_zero=False)
        >>> a.grad is None and b.grad is None
        True
        """
        for opt in self.optimizers:
            opt.clear_grad(set_to_zero)

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
                    for p in state_problems(opt, s)]
        if problems:
            raise OptimizerStateError("MultiOptimizer.load_state_dict: nothing was changed.\n  "
                                      + "\n  ".join(problems))
        return [opt.load_state_dict(s) for opt, s in zip(self.optimizers, states)]

    def __repr__(self) -> str:
        return "MultiOptimizer(" + ", ".join(type(o).__name__ for o in self.optimizers) + ")"
