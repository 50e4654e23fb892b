"""The optimizer base class: parameter groups, per-parameter settings, clipping, state, hooks.

Every optimizer in dltutor is this class plus its rule for one parameter. The base class does
what all rules share, in four stages, on every ``step()``:

1. ``_select``: the parameters whose ``.grad`` is not None (the others are frozen, or not
   reached by the loss), each as a :class:`ParamStep`: its gradient, its effective lr (the
   group's ``lr`` times ``lr_mult``) and its weight decay, chosen by Paddle's precedence
   (``decay_parts``). A gradient that clipping, decay or ``maximize`` will change
   is copied first: ``p.grad`` stays as backward left it;
2. ``_check_finite``: a gradient with NaN or Inf stops the step before anything changes
   (the ``nonfinite`` option: raise, the default; skip; or apply, as PyTorch does; see
   nonfinite.py). On a GPU the step is checked and gated on the device instead, and the host
   reads the answer one step later (device_step.py);
3. ``_clip``: ``grad_clip`` over those gradients (it leaves out ``need_clip=False``);
4. ``_update``: count each parameter's step, and apply the rule, ``update_param(p, state)``:
   SGD's (sgd.py) and Adam's (adam.py) are whole in their files, weight decay included, as in
   PyTorch's ``_single_tensor_sgd``; a rule written as ``update(param, grad, state, group,
   lr)`` gets the weight decay from the base's ``update_param``. With ``record_steps`` on,
   the step is then measured (report.py). On a GPU, SGD and Adam take the same step as one
   fused kernel per parameter (``fused_update``).

Reading what you pass as ``params`` is param_groups.py's job; checking a state dict before
loading it is checkpoint.py's.

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> opt = optim.SGD([{"params": net[0].parameters()},
...                  {"params": net[2].parameters(), "lr": 0.01}], lr=0.05)
>>> [(len(g["params"]), g["lr"]) for g in opt.param_groups]
[(2, 0.05), (2, 0.01)]
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, NamedTuple

from .. import backend as B
from .. import checks, host_reads
from ..autograd import Tensor, enable_grad, no_grad
from ..errors import MessageKeyError
from ..hooks import HookHandle
from .checkpoint import (OptimizerLoadResult, OptimizerStateError, load_fitting_state,
                         state_dict_of, state_problems)
from .decay import Decay, describe_decay
from .device_step import DeviceGate
from .nonfinite import NonFiniteGradientError, check_mode, nonfinite_names
from ..nn.utils.grads import clear_grads, zero_grads
from .param_groups import as_groups, make_group
from .regularizer import Regularizer
from .report import NO_REPORT, StepMeasurement, StepReport
from .settings import ParamGroup, check_group


def display_name(name: str | None, index: int) -> str:
    """A parameter's name in messages and reports: its own, or ``"#index"`` (its position in
    the optimizer, counted across groups) when it was passed without one.

    >>> display_name("0.weight", 3), display_name(None, 3)
    ('0.weight', '#3')
    """
    return name if name is not None else f"#{index}"


class ParamStep(NamedTuple):
    """One parameter in one ``step()``, as the base hands it to the rule (``update_param``).

    ``grad`` is the array to read: clipped, and the optimizer's own copy of ``p.grad`` when
    something writes into it (clipping, coupled decay, ``maximize``), else ``p.grad``'s array,
    which the rule must not change. ``lr`` is the group's lr times the parameter's ``lr_mult``.
    ``weight_decay`` is the coupled decay Paddle's precedence chose (``decay_parts``): the
    parameter's own regularizer, else the group's ``weight_decay`` (None for none);
    ``decoupled_decay`` is AdamW's (0.0 for none). ``name`` is None for a parameter passed
    without one, ``position`` its place in the optimizer (counted across groups).

    >>> from dltutor import nn
    >>> p = ParamStep(nn.Parameter([1.0]), None, {"lr": 0.1}, 0.05, 0.01, 0.0, "w", 0)
    >>> p.lr, p.weight_decay
    (0.05, 0.01)
    """

    param: Tensor
    grad: Any
    group: dict[str, Any]
    lr: float
    weight_decay: Regularizer | float | None
    decoupled_decay: float
    name: str | None
    position: int


def add_weight_decay(grad: Any, param: Any, decay: Regularizer | float, scratch: Any) -> Any:
    """Coupled weight decay, into ``grad`` in place: ``grad += decay * param`` for a number
    (L2, as PyTorch's ``weight_decay``), or the regularizer's gradient (``decay`` is what
    :meth:`Optimizer.decay_parts` chose). ``scratch`` is an array shaped like ``param`` for the
    product; ``grad`` must be the optimizer's own copy, never ``p.grad``'s array. Returns
    ``grad``.

    >>> import numpy as np
    >>> from dltutor import optim
    >>> grad, param = np.array([1.0, 1.0]), np.array([2.0, -2.0])
    >>> add_weight_decay(grad, param, 0.5, np.empty(2))
    array([2., 0.])
    >>> add_weight_decay(grad, param, optim.L1Decay(0.5), np.empty(2))
    array([ 2.5, -0.5])
    """
    if isinstance(decay, Regularizer):
        decay.add_to(param, grad, scratch)
    else:
        grad += B.get_array_module(grad).multiply(param, decay, out=scratch)
    return grad


class _Step:
    """The parameters one ``step()`` updates, one :class:`ParamStep` each, beside their
    gradients (the list the clip changes in place), and the measurement a recorded step keeps
    (None when ``record_steps`` is off: then nothing is measured) with ``steps``, what each
    rule returned."""

    __slots__ = ("params", "grads", "steps", "grad_sq", "measure", "gate")

    def __init__(self, recording: bool):
        self.params: list[ParamStep] = []
        self.grads: list[Any] = []
        self.steps: list[Any] = []
        self.grad_sq: list[float] | None = None   # each gradient's sum of squares, once taken
        self.measure = StepMeasurement() if recording else None
        self.gate: DeviceGate | None = None       # a step on a GPU: its check, on the device

    @property
    def names(self) -> list[str]:
        """Each parameter's name, ``"#index"`` (its position in the optimizer) when it has none:
        made only when asked (for an error or a report), not on every step."""
        return [display_name(p.name, p.position) for p in self.params]

    @property
    def tensors(self) -> list[Tensor]:
        return [p.param for p in self.params]


#: The ``no_grad()`` every step runs in, made once: it keeps the smallest networks' steps as
#: fast as before issue 51 (benchmarks/RESULTS.md). It keeps a stack of the modes it
#: replaced, so a step inside a step is fine.
_NO_GRAD = no_grad()


class Optimizer:
    """Base class of all optimizers (see the module docstring for what ``step`` does).

    ``params`` may be an iterable of Parameters, of ``(name, Parameter)`` pairs such as
    ``model.named_parameters()`` (names are then used in messages, in ``state_dict`` and by
    AdamW's ``apply_decay_param_fun``), or of group dicts ``{"params": ..., "lr": ...}`` whose
    missing keys fall back to the optimizer's defaults.

    To write your own optimizer, subclass it and override :meth:`update` (see ``SignSGD``).

    >>> import dltutor as dt
    >>> from dltutor import nn
    >>> class PlainSGD(Optimizer):
    ...     def __init__(self, params, lr):
    ...         super().__init__(params, dict(lr=lr))
    ...     def update(self, param, grad, state, group, lr):
    ...         return lr * grad                     # the step; the base subtracts it
    >>> w = nn.Parameter([1.0])
    >>> opt = PlainSGD([w], lr=0.5)
    >>> w.grad = dt.tensor([2.0]); opt.step(); w.item()
    0.0
    """

    #: How a number ``weight_decay`` acts: True adds ``weight_decay * p`` to the gradient
    #: (coupled L2); False shrinks the parameter before the update (decoupled, as in AdamW).
    coupled_weight_decay = True
    #: True when ``update`` returns the step it wants subtracted (the built-in rules do). A
    #: recorded step then measures the update from that array; otherwise it copies the
    #: parameter before ``update`` changes it, to measure the change.
    returns_update = False
    #: The state entries that carry past gradients forward (momentum-like): a parameter whose
    #: gradient is now zero still moves while they are non-zero. Each rule names its own;
    #: ``diagnose.why_not_updating`` asks here.
    momentum_state: tuple[str, ...] = ()

    def state_entries(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The arrays a parameter's state holds together once the rule has stepped it, for a
        parameter in ``group`` (``step`` aside). ``load_state_dict`` refuses a state that holds
        some of them but not all: the next ``step()`` would fail on the missing one. None here
        (SGD's ``momentum_buffer`` starts on its own when it is missing).

        >>> from dltutor import nn, optim
        >>> opt = optim.Adam([nn.Parameter([1.0])], amsgrad=True)
        >>> opt.state_entries(opt.param_groups[0])
        ('exp_avg', 'exp_avg_sq', 'max_exp_avg_sq')
        """
        return ()

    def __init__(self, params: Any, defaults: dict[str, Any], grad_clip: Any = None,
                 nonfinite: str = "raise"):
        self.nonfinite = check_mode(type(self).__name__, nonfinite)
        self.skipped_steps = 0          # steps that nonfinite="skip" left out
        self.defaults = dict(defaults)
        self.grad_clip = grad_clip
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.step_count = 0
        self.record_steps = False
        self.last_step = NO_REPORT
        self._last_check: host_reads.PendingCheck | None = None   # a GPU step's, unread
        # Reusable arrays shaped like a parameter, made the first time a stage needs one
        # (a gradient copy, room for temporaries): scratch space, not state.
        self._scratch_arrays: dict[Tensor, dict[str, Any]] = {}
        self._pre_hooks: list[Callable] = []
        self._post_hooks: list[Callable] = []
        groups = as_groups(params, type(self).__name__)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list: pass "
                             "model.parameters() or model.named_parameters() of a model that has "
                             "parameters")
        for group in groups:
            self.add_param_group(group)

    # -- groups ---------------------------------------------------------------------------------
    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyperparameters (others from the defaults).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter(dt.zeros(2))], lr=0.1)
        >>> opt.add_param_group({"params": [nn.Parameter(dt.zeros(3))], "lr": 0.5})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.5]
        """
        new = make_group(type(self).__name__, self.defaults, self.param_groups, group)
        check_group(self, new)             # the one check (settings.py), also at load and by hand
        self.param_groups.append(ParamGroup(new, self))

    def _check_group(self, group: dict[str, Any]) -> None:
        """Check one group's numbers (subclasses add their own checks). Keys, flags and names
        are checked before it by ``settings.check_group``, which calls it."""
        owner = type(self).__name__
        checks.non_negative(owner, "lr", group.get("lr"))
        decay = group.get("weight_decay", 0)
        if not isinstance(decay, Regularizer):
            checks.non_negative(owner, "weight_decay", decay, hint="or an L1Decay/L2Decay")

    def param_entries(self) -> Iterable[tuple[str, Tensor, dict[str, Any]]]:
        """Every parameter with its name and group, as (name, parameter, group) triples: the
        structured name, or ``"#i"`` by position. (Not ``named_parameters()``, which is Module's
        and yields pairs.)

        >>> from dltutor import nn, optim
        >>> [name for name, _, _ in optim.SGD(nn.Linear(2, 1).parameters(), 0.1).param_entries()]
        ['#0', '#1']
        """
        index = 0
        for group in self.param_groups:
            for param, name in zip(group["params"], group["param_names"]):
                yield display_name(name, index), param, group
                index += 1

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set the gradient of every parameter to None (the next backward starts afresh), as
        PyTorch does by default since 2.0; ``set_to_none=False`` fills each gradient with
        zeros instead (the same gradient tensor, as PyTorch).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0]); w.grad = dt.ones(1)
        >>> optim.SGD([w], lr=0.1).zero_grad(set_to_none=False); w.grad
        tensor([0.])
        >>> optim.SGD([w], lr=0.1).zero_grad(); w.grad is None
        True
        """
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Paddle's name for :meth:`zero_grad`, with Paddle's default: the gradients become
        zeros (``set_to_zero=False``: None, PyTorch's default).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0]); w.grad = dt.ones(1)
        >>> optim.SGD([w], lr=0.1).clear_grad(); w.grad
        tensor([0.])
        """
        clear_grads((param for _, param, _ in self.param_entries()), set_to_zero,
                    f"{type(self).__name__}.clear_grad")

    # -- what applies to one parameter ----------------------------------------------------------
    def effective_lr(self, param: Tensor, group: dict[str, Any]) -> float:
        """The learning rate that multiplies this parameter's update: group lr x lr_mult.

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0], lr_mult=0.5)
        >>> opt = optim.SGD([w], lr=0.1)
        >>> opt.effective_lr(w, opt.param_groups[0])
        0.05
        """
        # ``_lr_mult`` is what the property ``Parameter.lr_mult`` checked and stored; read
        # directly, as this runs for every parameter at every step (benchmarks/RESULTS.md).
        return group["lr"] * getattr(param, "_lr_mult", 1.0)

    def decoupled_decay_applies(self, name: str) -> bool:
        """The rule's say on whether the parameter called ``name`` gets the decoupled weight
        decay of an optimizer whose ``coupled_weight_decay`` is False: every parameter does
        here; AdamW asks its ``apply_decay_param_fun``. (To ask which decay a parameter gets,
        ask :meth:`decay_of`, which uses this.)

        >>> from dltutor import nn, optim
        >>> optim.AdamW([("w", nn.Parameter([1.0]))]).decoupled_decay_applies("w")
        True
        """
        return True

    def decay_of(self, param: Tensor | str) -> Decay:
        """Which weight decay ``step()`` gives ``param`` (a parameter of this optimizer, or its
        name here), and where it comes from. Paddle's precedence: a parameter's own
        ``regularizer`` replaces its group's coupled ``weight_decay``; AdamW's decoupled decay
        applies besides it, unless ``apply_decay_param_fun(name)`` is False.

        >>> from dltutor import nn, optim
        >>> w, b = nn.Parameter([1.0], regularizer=optim.L1Decay(0.1)), nn.Parameter([0.0])
        >>> opt = optim.SGD([("w", w), ("b", b)], lr=0.1, weight_decay=0.01)
        >>> opt.decay_of(w)
        Decay(coupled=L1Decay(0.1), source='parameter', replaced=0.01, decoupled=0.0,
              excluded=False)
        >>> opt.decay_of("b").coupled, opt.decay_of("b").source
        (0.01, 'group')
        """
        for name, candidate, group in self.param_entries():
            if candidate is param if isinstance(param, Tensor) else name == param:
                return describe_decay(self, name, candidate, group)
        raise MessageKeyError(f"{type(self).__name__} has no parameter {param!r}; its parameters "
                              "are " + ", ".join(name for name, _, _ in self.param_entries()))

    def decay_parts(self, name: str, param: Tensor | None,
                    group: dict[str, Any]) -> tuple[Regularizer | float | None, float]:
        """Paddle's precedence, the one function that decides a parameter's weight decay:
        ``(coupled, decoupled)`` for a parameter called ``name`` in ``group``, what ``step()``
        applies (decay.py's docstring states the rules), worked out on every step, so cheaply.
        ``param=None`` asks what the group gives a parameter with no regularizer of its own
        (``decay_of`` compares the two).

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0])
        >>> opt = optim.SGD([w], lr=0.1, weight_decay=0.01)
        >>> opt.decay_parts("#0", w, opt.param_groups[0])
        (0.01, 0.0)
        """
        own = getattr(param, "_regularizer", None)   # Parameter.regularizer's checked value
        group_decay = group.get("weight_decay", 0)
        if not group_decay:
            return own, 0.0
        if self.is_coupled(group_decay):           # the parameter's own one replaces it
            return (own if own is not None else group_decay), 0.0
        return own, float(group_decay) if self.decoupled_decay_applies(name) else 0.0

    def is_coupled(self, group_decay: Any) -> bool:
        """Whether a group's non-zero ``weight_decay`` is added to the gradient: a regularizer
        always is, a number unless this optimizer decouples it (``coupled_weight_decay = False``).

        >>> from dltutor import nn, optim
        >>> opt = optim.AdamW([nn.Parameter([1.0])])
        >>> opt.is_coupled(0.01), opt.is_coupled(optim.L2Decay(0.01))
        (False, True)
        """
        return isinstance(group_decay, Regularizer) or self.coupled_weight_decay

    def scratch(self, param: Tensor) -> Any:
        """An array shaped like ``param`` for an update's temporaries, reused every step (its
        values are whatever was left in it).

        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0, 2.0])
        >>> optim.SGD([w], lr=0.1).scratch(w).shape
        (2,)
        """
        return self._scratch_array(param, "scratch")

    def _grad_copy(self, param: Tensor) -> Any:
        """The optimizer's own array for a gradient that a stage changes (not ``p.grad``)."""
        return self._scratch_array(param, "grad")

    def _scratch_array(self, param: Tensor, use: str) -> Any:
        """The parameter's reusable array for ``use``: made on first use, and made again when
        ``param.data`` is replaced by another array (``to(device)``; ``set_value`` keeps it)."""
        arrays = self._scratch_arrays.get(param)
        data = param.data
        if arrays is None or arrays["data"] is not data:
            arrays = self._scratch_arrays[param] = {"data": data}
        array = arrays.get(use)
        if array is None:
            array = arrays[use] = B.get_array_module(data).empty_like(data)
        return array

    # -- one step --------------------------------------------------------------------------------
    def update_param(self, p: ParamStep, state: dict[str, Any]) -> Any:
        """The rule for one parameter ``p`` (a :class:`ParamStep`), with its ``state`` dict
        (``state["step"]`` already counted: 1 on the first step). Return the array to subtract
        from ``p.param`` (the base subtracts it), or change ``p.param.data`` yourself and return
        None (then set ``returns_update = False`` on the class).

        SGD and Adam override it with their whole rule. This one serves rules written as the
        shorter :meth:`update`: it applies the weight decay for them (coupled into the
        gradient, decoupled onto the parameter), then asks ``update`` for the step."""
        grad = p.grad
        if p.weight_decay is not None:       # g += weight_decay * p, or a regularizer's gradient
            add_weight_decay(grad, p.param.data, p.weight_decay, self.scratch(p.param))
        if p.decoupled_decay:                 # p *= 1 - lr * decoupled (AdamW's kind)
            p.param.data *= 1 - p.lr * p.decoupled_decay
        return self.update(p.param, grad, state, p.group, p.lr)

    def fused_update(self, p: ParamStep, state: dict[str, Any], refused: Any) -> bool:
        """On a GPU (``step()`` gates the step there: device_step.py), the rule's step for
        ``p`` as ONE fused kernel, gated by ``refused`` inside it; return False, before changing
        anything, where the rule has no kernel for this case (then ``update_param`` runs,
        between copies that put the old values back on a refused step).

        This base has none. SGD and Adam define one beside their ``update_param``, the same
        formula written for ``backend.run_fused``, and tests/optim/test_fused_steps.py holds
        the two to the same bits. (PyTorch's ``fused=True`` optimizers are the same idea.)"""
        return False

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> Any:
        """The short way to write a rule: override this (the base's ``update_param`` calls it
        after applying the weight decay).

        ``grad`` is a backend array, already clipped and regularized. Read it, never change it:
        when nothing needed clipping or decay it is ``p.grad``'s own array, which a step must
        leave as backward made it. ``state`` is this parameter's dict (``state["step"]`` is
        already counted: 1 on the first step), ``group`` its hyperparameters and ``lr`` its
        effective learning rate. ``self.scratch(param)`` is an array for temporaries.

        Return the array to subtract from the parameter (``return lr * grad`` is plain SGD)
        and the base subtracts it; with ``returns_update = True`` on the class, a recorded
        step measures the update from it for free. Or change ``param.data`` yourself and
        return None, as ``SignSGD`` does.
        """
        raise NotImplementedError(f"{type(self).__name__} must override update() (subclass it)")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient (see the module docstring for the order).

        ``closure``, as in PyTorch, is a function that clears the gradients, computes the loss,
        calls ``backward()`` and returns the loss: ``step`` calls it first (with gradients
        recorded) and returns its loss; without one, ``step`` returns None.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0, 2.0])
        >>> opt = optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()      # grad = 2w
        >>> opt.step()
        >>> w.data                        # w - 0.1 * 2w
        array([0.8, 1.6], dtype=float32)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> round(opt.step(closure).item(), 4)    # the loss before this step: 0.8**2 + 1.6**2
        3.2
        """
        if closure is not None and not callable(closure):
            raise TypeError(f"{type(self).__name__}.step: closure must be a function that "
                            "computes the loss and calls backward(), got "
                            f"{type(closure).__name__}")
        args = () if closure is None else (closure,)
        if self._pre_hooks:
            for hook in list(self._pre_hooks):   # (a copy: a hook may remove itself)
                hook(self, args, {})
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with _NO_GRAD:
            if self._last_check is not None:      # the last step's, on a GPU: read it now
                check, self._last_check = self._last_check, None
                host_reads.settle(through=check)
            todo = self._select()
            if self._check_finite(todo):
                self._clip(todo)
                self._update(todo)
                self.step_count += 1
                self.last_step = self._report(todo)
                if todo.gate is not None:
                    self._last_check = todo.gate.read_later(self, todo.names)
            else:
                self.skipped_steps += 1
                self.last_step = NO_REPORT
        if self._post_hooks:
            for hook in list(self._post_hooks):
                hook(self, args, {})
        return loss

    def _select(self) -> _Step:
        """Stage 1: the parameters with a gradient, each as a :class:`ParamStep` with its lr
        and its decay (Paddle's precedence: ``decay_parts``); copy a gradient that clipping,
        coupled decay or ``maximize`` will change (``p.grad`` must stay as it is).
        A write into a group is checked as it happens (settings.ParamGroup); an lr that got
        past that (a group replaced by a plain dict) is still refused here if it is NaN,
        infinite or < 0, before anything changes.
        (What a whole group shares is read once per group: this runs on every step.)"""
        todo = _Step(self.record_steps)
        clip = self.grad_clip
        selected, grads = todo.params, todo.grads
        index = -1
        for group_index, group in enumerate(self.param_groups):
            lr = group["lr"]
            if not (type(lr) in (float, int) and 0 <= lr < math.inf):   # the fast, common case
                checks.non_negative(type(self).__name__, f"param_groups[{group_index}]['lr']", lr)
            negate = group.get("maximize")
            group_decay = bool(group.get("weight_decay"))
            for param, name in zip(group["params"], group["param_names"]):
                index += 1
                grad_tensor = param.grad
                if grad_tensor is None:
                    continue
                grad = grad_tensor.data
                if grad.shape != param.data.shape:
                    raise self._grad_shape_error(name, index, param)
                if group_decay or getattr(param, "_regularizer", None) is not None:
                    coupled, decoupled = self.decay_parts(  # (only a decay rule asks for a name)
                        display_name(name, index) if group_decay else name, param, group)
                else:       # no decay in the group and none on the parameter: nothing to ask
                    coupled, decoupled = None, 0.0
                if negate:
                    grad = B.get_array_module(grad).negative(grad, out=self._grad_copy(param))
                elif coupled is not None or (clip is not None and clip.applies_to(param)):
                    copy = self._grad_copy(param)
                    copy[...] = grad
                    grad = copy
                # (tuple.__new__: ParamStep's own constructor is Python code, and this runs for
                # every parameter on every step)
                selected.append(tuple.__new__(ParamStep, (
                    param, grad, group, self.effective_lr(param, group), coupled, decoupled,
                    name, index)))
                grads.append(grad)
        return todo

    def _grad_shape_error(self, name: str | None, index: int, param: Tensor) -> ValueError:
        grad: Any = param.grad           # (there is one: its shape is what is wrong)
        return ValueError(f"{type(self).__name__}.step: the gradient of "
                          f"{display_name(name, index)!r} has shape "
                          f"{tuple(grad.shape)} but the parameter has shape "
                          f"{tuple(param.shape)}")

    def _check_finite(self, todo: _Step) -> bool:
        """Stage 2: whether the step may go on. Each gradient's sum of squares is NaN or Inf
        when a value is: then ``nonfinite="raise"`` raises NonFiniteGradientError naming the
        parameters, and ``"skip"`` answers False; nothing has changed yet either way. The
        sums are kept: the clip and the report take their norms from them."""
        if self.nonfinite == "apply" or not todo.grads:
            return True
        if todo.measure is None and not B.reads_are_free(todo.grads[0]):
            todo.gate = DeviceGate(todo.grads)     # a GPU: decided there, read later
            return True
        todo.grad_sq = B.sums_of_squares(todo.grads)
        if math.isfinite(sum(todo.grad_sq)):
            return True
        bad = nonfinite_names(todo.names, todo.grads, todo.grad_sq)
        if not bad:                          # only squares of huge finite values overflowed
            return True
        if self.nonfinite == "skip":
            return False
        raise NonFiniteGradientError(type(self).__name__, bad, self.step_count)

    def _clip(self, todo: _Step) -> None:
        """Stage 3: ``grad_clip`` changes the selected gradients in place. A recorded step
        measures them now, before decay changes them again."""
        if self.grad_clip is None or not todo.params:
            return
        self.grad_clip(todo.tensors, todo.grads, todo.grad_sq)
        if todo.measure is not None:
            todo.measure.clipped(todo.grads)

    def _update(self, todo: _Step) -> None:
        """Stage 4: count each parameter's step, then take the rule's step. A recorded step
        keeps the old values of a parameter the rule changes itself (decoupled decay, or a
        rule that returns no step) to measure the update."""
        measure, gate = todo.measure, todo.gate
        recording = measure is not None
        copy_all = recording and not self.returns_update
        for i, p in enumerate(todo.params):
            param = p.param
            state = self.state.get(param)
            if gate is not None:
                gate.note(param, state)
            if state is None:
                state = self.state[param] = {"step": 0}
            state["step"] += 1
            if gate is not None:
                if self.fused_update(p, state, gate.refused):
                    continue                      # one kernel, gated inside it
                kept = gate.keep(param, state)
            if measure is not None and (copy_all or p.decoupled_decay):
                measure.keep_old_values(i, param)
            step = self.update_param(p, state)
            if step is not None:
                param.data -= step
            if gate is not None:
                gate.restore(kept, param, state)
            if step is None and self.returns_update:
                raise TypeError(f"{type(self).__name__}.update returned None, but the class "
                                "says returns_update = True: return the step to subtract, or "
                                "set returns_update = False")
            if recording:     # (otherwise the step is freed now, not at the end of step())
                todo.steps.append(step)

    def _report(self, todo: _Step) -> StepReport:
        """Stage 4's end: the report of a recorded step (an empty one when nothing was
        recorded)."""
        if todo.measure is None:
            return NO_REPORT
        return todo.measure.report(todo.names, todo.tensors, [p.lr for p in todo.params],
                                   todo.steps, todo.grad_sq)

    # -- hooks -----------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` before every step (PyTorch's signature).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: print("step", o.step_count))
        >>> opt.step()
        step 0
        >>> handle.remove()
        """
        self._pre_hooks.append(hook)
        return HookHandle(self._pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` after every step. With
        ``optimizer.record_steps = True`` it can read ``optimizer.last_step``, a
        :class:`StepReport`: one :class:`StepRecord` per updated parameter (its gradient,
        update and lr).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0])
        >>> opt = optim.SGD([("w", w)], lr=0.1)
        >>> opt.record_steps = True
        >>> _ = opt.register_step_post_hook(lambda o, args, kwargs: print(o.last_step.names))
        >>> w.grad = dt.ones(1); opt.step()
        ['w']
        """
        self._post_hooks.append(hook)
        return HookHandle(self._post_hooks, hook)

    # -- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: per-parameter state and each group's hyperparameters,
        keyed by parameter name (by position where names are unknown). ``dt.save`` writes it.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> net = nn.Linear(2, 1)
        >>> opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
        >>> net(dt.ones(1, 2)).sum().backward(); opt.step()
        >>> sorted(opt.state_dict()["state"]["weight"])
        ['momentum_buffer', 'step']
        """
        return state_dict_of(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> OptimizerLoadResult:
        """Restore a ``state_dict``. Everything is checked first (optimizer class, groups,
        parameter names, every hyperparameter as the constructor checks it, every moment like
        a gradient: shape, dtype, finite values); on any problem nothing changes and one error
        lists them all. As in PyTorch, the loaded hyperparameters replace the group's, flags
        such as ``amsgrad`` included; the result says which (such as ``lr``) it replaced.

        >>> from dltutor import nn, optim
        >>> opt = optim.SGD([nn.Parameter([1.0])], lr=0.1)
        >>> saved = opt.state_dict()
        >>> opt.param_groups[0]["lr"] = 0.5
        >>> opt.load_state_dict(saved)
        OptimizerLoadResult(loaded values replaced the ones set in code: group 0 lr: 0.5 -> 0.1)
        """
        problems = state_problems(self, state_dict)
        if problems:
            raise OptimizerStateError(
                f"{type(self).__name__}.load_state_dict: the state does not fit this optimizer; "
                "nothing was changed.\n  " + "\n  ".join(problems))
        return load_fitting_state(self, state_dict)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            for key in sorted(k for k in group if k not in ("params", "param_names")):
                lines.append(f"    {key}: {group[key]}")
            lines.append(f"    params: {len(group['params'])}")
        return "\n".join(lines) + "\n)"
