"""The optimizer base class: parameter groups, per-parameter settings, clipping, state, hooks.

Every optimizer in dltutor is this class plus one method, :meth:`Optimizer.update`, that changes
one parameter given its (clipped, regularized) gradient and its effective learning rate. The
base class does everything else, in this order, on every ``step()``:

1. skip parameters whose ``.grad`` is None (frozen, or not reached by the loss); where a
   gradient will be changed below, work on the optimizer's own copy (``p.grad`` never changes);
2. clip them with ``grad_clip`` (parameters with ``need_clip=False`` are left out);
3. add regularization: the parameter's own ``regularizer`` if it has one, otherwise the
   group's coupled ``weight_decay`` (``g += weight_decay * p``);
4. effective lr = the group's ``lr`` times the parameter's ``lr_mult``;
5. ``update(param, grad, state, group, lr)``, and count the step.

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
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .. import backend as B
from .. import checks
from ..autograd.tensor import HookHandle, Tensor, _make, no_grad
from .norms import sums_of_squares
from .regularizer import Regularizer, regularizer_from_state

# Keys every group may carry besides the optimizer's hyperparameters.
_STRUCTURAL_KEYS = ("params", "param_names", "initial_lr")


class StepRecord:
    """What one ``step()`` did to one parameter: one entry of a :class:`StepReport`.

    Norms are L2 norms, as Python floats: ``grad_norm`` of ``p.grad`` as backward left it,
    ``clipped_grad_norm`` after ``grad_clip`` (equal when nothing clipped it), ``update_norm``
    of the change the step made and ``param_norm`` of the parameter after it; ``lr`` is the
    effective learning rate. ``update`` (new minus old values) is computed when you ask for it,
    in a post-step hook: the array behind it is reused by the next step.
    """

    __slots__ = ("name", "param", "grad_norm", "clipped_grad_norm", "update_norm", "param_norm",
                 "lr", "_subtracted")

    def __init__(self, name: str, param: Tensor, grad_norm: float, clipped_grad_norm: float,
                 update_norm: float, param_norm: float, lr: float, subtracted: Any):
        self.name, self.param, self.lr = name, param, lr
        self.grad_norm, self.clipped_grad_norm = grad_norm, clipped_grad_norm
        self.update_norm, self.param_norm = update_norm, param_norm
        self._subtracted = subtracted  # old minus new: what the update took away

    @property
    def update(self) -> Any:
        """New minus old values of the parameter (a new array)."""
        return -self._subtracted

    def __repr__(self) -> str:
        return (f"StepRecord({self.name!r}, grad_norm={self.grad_norm:.4g}, "
                f"clipped_grad_norm={self.clipped_grad_norm:.4g}, lr={self.lr:.4g}, "
                f"update_norm={self.update_norm:.4g}, param_norm={self.param_norm:.4g})")


class StepReport:
    """What the last ``step()`` did, one entry per updated parameter (``optimizer.last_step``).

    Read it as a list of :class:`StepRecord` (``for record in opt.last_step``), or by column:
    ``names``, ``params``, ``grad_norms``, ``clipped_grad_norms``, ``update_norms``,
    ``param_norms`` and ``lrs`` are lists in the same order. Empty unless ``record_steps`` was
    True.

    What the step measured is kept as squared norms (``squares``: every gradient's, then every
    update's, then every parameter's; ``clipped_squares``: the clipped gradients', or None when
    no clip ran). A Recorder stores those as they are, so a traced step takes no square roots
    and makes no object per parameter; the norm columns and StepRecords are made when read.

    >>> import dltutor as dt
    >>> from dltutor import nn, optim
    >>> w = nn.Parameter([3.0, 4.0])
    >>> opt = optim.SGD([("w", w)], lr=0.1)
    >>> opt.record_steps = True
    >>> w.grad = dt.tensor([3.0, 4.0]); opt.step()
    >>> report = opt.last_step
    >>> report.names, report.grad_norms, [round(n, 6) for n in report.update_norms]
    (['w'], [5.0], [0.5])
    >>> report.squares[0], report[0].lr
    (25.0, 0.1)
    """

    __slots__ = ("names", "params", "squares", "clipped_squares", "lrs", "_subtracted")

    def __init__(self, names: Sequence[str], params: Sequence[Tensor], squares: Sequence[float],
                 clipped_squares: Sequence[float] | None, lrs: Sequence[float],
                 subtracted: Sequence[Any]):
        self.names, self.params, self.lrs = names, params, lrs
        self.squares, self.clipped_squares = squares, clipped_squares
        self._subtracted = subtracted  # per parameter: old minus new values

    @classmethod
    def empty(cls) -> "StepReport":
        """The report of a step that recorded nothing (one shared, unchangeable object)."""
        return _EMPTY_REPORT

    def _norms(self, block: int) -> list[float]:
        """Square roots of one block of ``squares`` (0 gradients, 1 updates, 2 parameters)."""
        count = len(self.params)
        return [math.sqrt(x) for x in self.squares[block * count:(block + 1) * count]]

    @property
    def grad_norms(self) -> list[float]:
        """L2 norm of each ``p.grad`` as backward left it."""
        return self._norms(0)

    @property
    def update_norms(self) -> list[float]:
        """L2 norm of the change the step made to each parameter."""
        return self._norms(1)

    @property
    def param_norms(self) -> list[float]:
        """L2 norm of each parameter after the step."""
        return self._norms(2)

    @property
    def clipped_grad_norms(self) -> list[float]:
        """L2 norm of each gradient after ``grad_clip`` (the gradient's when nothing clipped)."""
        if self.clipped_squares is None:
            return self.grad_norms
        return [math.sqrt(x) for x in self.clipped_squares]

    def __len__(self) -> int:
        return len(self.params)

    def __getitem__(self, index: int) -> StepRecord:
        count = len(self.params)
        index = range(count)[index]  # a negative index counts from the end
        grad, update, param = (math.sqrt(self.squares[block * count + index]) for block in range(3))
        clipped = grad if self.clipped_squares is None else math.sqrt(self.clipped_squares[index])
        return StepRecord(self.names[index], self.params[index], grad, clipped, update, param,
                          self.lrs[index], self._subtracted[index])

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return "StepReport([" + ", ".join(repr(record) for record in self) + "])"


_EMPTY_REPORT = StepReport((), (), (), None, (), ())


@dataclass
class OptimizerLoadResult:
    """What ``Optimizer.load_state_dict`` changed: hyperparameters whose loaded value differs
    from the one the optimizer had (``{"group 0 lr": (old, new)}``)."""

    changed: dict

    def __repr__(self) -> str:
        if not self.changed:
            return "OptimizerLoadResult(no hyperparameter changed)"
        parts = [f"{key}: {old!r} -> {new!r}" for key, (old, new) in self.changed.items()]
        return "OptimizerLoadResult(loaded values replaced the ones set in code: " + \
            "; ".join(parts) + ")"


class OptimizerStateError(ValueError):
    """``load_state_dict`` found a state that does not fit; nothing was changed."""


def _is_param(value: Any) -> bool:
    return isinstance(value, Tensor)


def _describe(name: str | None, index: int, param: Tensor) -> str:
    return repr(name) if name is not None else f"parameter #{index} with shape {tuple(param.shape)}"


class Optimizer:
    """Base class of all optimizers (see the module docstring for what ``step`` does).

    ``params`` may be an iterable of Parameters, of ``(name, Parameter)`` pairs such as
    ``model.named_parameters()`` (names are then used in messages, in ``state_dict`` and by
    AdamW's ``apply_decay_param_fun``), or of group dicts ``{"params": ..., "lr": ...}`` whose
    missing keys fall back to the optimizer's defaults.

    To write your own optimizer, subclass it and override :meth:`update` (see ``SignSGD``).
    """

    #: Whether a float ``weight_decay`` is added to the gradient (AdamW's is not: it is decoupled).
    coupled_weight_decay = True
    #: Whether ``update`` returns the array it subtracted from the parameter (the built-in
    #: optimizers do); if not, a recorded step copies the parameter to measure the update.
    returns_update = False

    def __init__(self, params: Any, defaults: dict[str, Any], grad_clip: Any = None):
        self.defaults = dict(defaults)
        self.grad_clip = grad_clip
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.step_count = 0
        self.record_steps = False
        self.last_step = StepReport.empty()
        # Per parameter, two reusable arrays shaped like it ("work": the gradient being
        # clipped and regularized; "tmp": room for temporaries), so a step allocates nothing.
        # They are scratch space, not state: state_dict does not save them.
        self._buffers: dict[Tensor, list] = {}
        self._pre_hooks: list[Callable] = []
        self._post_hooks: list[Callable] = []
        groups = _as_groups(params, type(self).__name__)
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
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError("a parameter group is a dict with a 'params' entry, e.g. "
                            "{'params': model.parameters(), 'lr': 0.01}")
        params, names = _split_names(group["params"], type(self).__name__)
        allowed = set(self.defaults) | set(_STRUCTURAL_KEYS)
        unknown = [k for k in group if k not in allowed]
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown hyperparameter(s) "
                             f"{', '.join(map(repr, unknown))} in a parameter group; "
                             f"{type(self).__name__} knows {', '.join(sorted(self.defaults))}")
        if "param_names" in group:
            names = list(group["param_names"])
        self._check_new_params(params, names)
        new = {k: v for k, v in group.items() if k not in ("params", "param_names")}
        for key, value in self.defaults.items():
            new.setdefault(key, value)
        self._check_group(new)
        new["params"] = params
        new["param_names"] = names
        self.param_groups.append(new)

    def _check_new_params(self, params: list[Tensor], names: list[str | None]) -> None:
        seen = {id(p): n for g in self.param_groups for p, n in zip(g["params"], g["param_names"])}
        taken = {n for g in self.param_groups for n in g["param_names"] if n is not None}
        for index, (param, name) in enumerate(zip(params, names)):
            if not param.is_leaf:
                raise ValueError(f"{type(self).__name__} can only optimize leaf tensors (made by "
                                 f"you, not computed); {_describe(name, index, param)} is the "
                                 "result of an op")
            if id(param) in seen:
                first = seen[id(param)]
                also = f" (already added as {first!r})" if first is not None and first != name else ""
                raise ValueError(
                    f"{type(self).__name__}: {_describe(name, index, param)} appears twice{also}; "
                    "each parameter may be in one group only. (PyTorch only warns here and then "
                    "updates it twice per step.) A tied parameter is one object: list it once.")
            seen[id(param)] = name
            if name is not None:
                if name in taken:
                    raise ValueError(f"{type(self).__name__}: two parameters are both named "
                                     f"{name!r}; give the models different prefixes, e.g. "
                                     "model.named_parameters(prefix='encoder')")
                taken.add(name)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Check one group's hyperparameters (subclasses add their own checks)."""
        owner = type(self).__name__
        checks.non_negative(owner, "lr", group.get("lr"))
        decay = group.get("weight_decay", 0)
        if not isinstance(decay, Regularizer):
            checks.non_negative(owner, "weight_decay", decay, hint="or an L1Decay/L2Decay")

    def named_params(self) -> Iterable[tuple[str, Tensor, dict[str, Any]]]:
        """Every (name, parameter, group): the structured name, or ``"#i"`` by position."""
        index = 0
        for group in self.param_groups:
            for param, name in zip(group["params"], group["param_names"]):
                yield (name if name is not None else f"#{index}"), param, group
                index += 1

    # -- one step --------------------------------------------------------------------------------
    def zero_grad(self) -> None:
        """Set the gradient of every parameter to None (the next backward starts afresh)."""
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None

    def effective_lr(self, param: Tensor, group: dict[str, Any]) -> float:
        """The learning rate that multiplies this parameter's update: group lr x lr_mult."""
        return group["lr"] * getattr(param, "lr_mult", 1.0)

    def _ready_buffers(self, param: Tensor) -> list:
        """The parameter's [work, scratch, data] list: two arrays shaped like it, remade when
        ``param.data`` is replaced by another array (``set_value`` keeps it, ``to`` does not)."""
        pair = self._buffers.get(param)
        data = param.data
        if pair is None or pair[2] is not data:  # new, or param.data was replaced (moved)
            xp = B.get_array_module(data)
            pair = self._buffers[param] = [xp.empty_like(data), xp.empty_like(data), data]
        return pair

    def scratch(self, param: Tensor) -> Any:
        """An array shaped like ``param`` for an update's temporaries, reused every step."""
        return self._buffers[param][1]

    def decay_for(self, param: Tensor, group: dict[str, Any]) -> Any:
        """The regularization this parameter gets: its own regularizer, else the group's
        ``weight_decay`` (a Regularizer, or a number meaning coupled L2), else None."""
        own = getattr(param, "regularizer", None)
        if own is not None:
            return own
        decay = group.get("weight_decay", 0)
        if isinstance(decay, Regularizer) or (decay and self.coupled_weight_decay):
            return decay
        return None

    def regularize(self, param: Tensor, grad: Any, decay: Any) -> None:
        """Add ``decay`` (from :meth:`decay_for`) to ``grad`` in place."""
        tmp = self.scratch(param)
        if isinstance(decay, Regularizer):
            decay.add_to(param.data, grad, tmp)
        else:
            B.get_array_module(grad).multiply(param.data, decay, out=tmp)
            grad += tmp

    def update(self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any],
               lr: float) -> None:
        """Change ``param.data`` in place. Override this to write an optimizer.

        ``grad`` is a backend array, already clipped and regularized. Read it, never change it:
        when nothing needed clipping or decay it is ``p.grad``'s own array, which a step must
        leave as backward made it. ``state`` is this parameter's dict (``state["step"]`` is
        already counted: 1 on the first step), ``group`` its hyperparameters and ``lr`` its
        effective learning rate. ``self.scratch(param)`` is an array for temporaries.

        Set the class attribute ``returns_update = True`` and return the array you subtracted
        (``param.data -= delta; return delta``) to let a Recorder measure the update for free.
        """
        raise NotImplementedError(f"{type(self).__name__} must override update() (subclass it)")

    def step(self) -> None:
        """Update every parameter that has a gradient (see the module docstring for the order).

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> w = nn.Parameter([1.0, 2.0])
        >>> opt = optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()      # grad = 2w
        >>> opt.step()
        >>> w.data                        # w - 0.1 * 2w
        array([0.8, 1.6], dtype=float32)
        """
        for hook in list(self._pre_hooks):
            hook(self, (), {})
        with no_grad():
            clip = self.grad_clip
            active, grads = [], []
            for name, param, group in self.named_params():
                if param.grad is None:
                    continue
                grad = param.grad.data
                if grad.shape != param.data.shape:
                    raise ValueError(f"{type(self).__name__}.step: the gradient of {name!r} has "
                                     f"shape {tuple(grad.shape)} but the parameter has shape "
                                     f"{tuple(param.shape)}")
                work = self._ready_buffers(param)[0]
                decay = self.decay_for(param, group)
                if group.get("maximize"):
                    B.get_array_module(grad).negative(grad, out=work)
                    grad = work
                elif clip is not None or decay is not None:
                    work[...] = grad  # our own copy: clipping and decay change it, p.grad stays
                    grad = work
                active.append((name, param, group, decay))
                grads.append(grad)
            recording = self.record_steps
            if clip is not None and active:
                clip([entry[1] for entry in active], grads)
            # p.grad is never changed by a step, so its norm (before clipping) is taken with
            # the others at the end; the clipped gradients are measured now, before any decay.
            clipped_squares = sums_of_squares(grads) if recording and clip is not None else None
            lrs, subtracted = [], []
            update = self._measured_update if recording and not self.returns_update else \
                self.update
            for (name, param, group, decay), grad in zip(active, grads):
                if decay is not None:
                    self.regularize(param, grad, decay)
                lr = self.effective_lr(param, group)
                state = self.state.get(param)
                if state is None:
                    state = self.state[param] = {"step": 0}
                state["step"] += 1
                if recording:
                    lrs.append(lr)
                    subtracted.append(update(param, grad, state, group, lr))
                else:
                    update(param, grad, state, group, lr)
            self.last_step = (self._report(active, clipped_squares, lrs, subtracted)
                              if recording else StepReport.empty())
            self.step_count += 1
        for hook in list(self._post_hooks):
            hook(self, (), {})

    def _measured_update(self, param: Tensor, grad: Any, state: dict[str, Any],
                         group: dict[str, Any], lr: float) -> Any:
        """Run an ``update`` that does not return what it subtracted, and measure it: old
        minus new values."""
        before = param.data.copy()
        self.update(param, grad, state, group, lr)
        before -= param.data
        return before

    @staticmethod
    def _report(active: list, clipped_squares: list[float] | None, lrs: list[float],
                subtracted: list[Any]) -> StepReport:
        """The StepReport of a recorded step. The squared norms are taken in one batch after
        all updates: for small arrays the cost of a call is most of the work of a norm."""
        names, params = [entry[0] for entry in active], [entry[1] for entry in active]
        measured = [param.grad.data for param in params]
        measured += subtracted
        measured += [param.data for param in params]
        return StepReport(names, params, sums_of_squares(measured), clipped_squares, lrs,
                          subtracted)

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
        update and lr)."""
        self._post_hooks.append(hook)
        return HookHandle(self._post_hooks, hook)

    # -- checkpoints -----------------------------------------------------------------------------
    def _keys(self) -> list[Any]:
        """The key of each parameter in state_dict: its name, or its position when unnamed."""
        return [name if name is not None else index
                for index, (name, _, _) in enumerate(
                    (n, p, g) for g in self.param_groups for p, n in zip(g["params"], g["param_names"]))]

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
        keys = iter(self._keys())
        groups, state = [], {}
        for group in self.param_groups:
            saved = {k: _hyper_to_state(v) for k, v in group.items()
                     if k not in ("params", "param_names")}
            saved["params"] = []
            for param in group["params"]:
                key = next(keys)
                saved["params"].append(key)
                if param in self.state:
                    state[key] = {k: (_make(v, False, None) if hasattr(v, "shape") else v)
                                  for k, v in self.state[param].items()}
            groups.append(saved)
        return {"optimizer": type(self).__name__, "step_count": self.step_count,
                "state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> OptimizerLoadResult:
        """Restore a ``state_dict``. Everything is checked first (optimizer class, number of
        groups, parameter names, shapes, hyperparameter names); on any problem nothing changes
        and one error lists them all. The result says which hyperparameters (such as ``lr``)
        the loaded values replaced.
        """
        problems = self._check_state(state_dict)
        if problems:
            raise OptimizerStateError(
                f"{type(self).__name__}.load_state_dict: the state does not fit this optimizer; "
                "nothing was changed.\n  " + "\n  ".join(problems))
        changed: dict[str, tuple] = {}
        by_key = {}
        for index, (group, saved) in enumerate(zip(self.param_groups, state_dict["param_groups"])):
            for key, value in saved.items():
                if key == "params":
                    continue
                value = _hyper_from_state(value)
                if key in group and not _same(group[key], value):
                    changed[f"group {index} {key}"] = (group[key], value)
                group[key] = value
            by_key.update(zip(saved["params"], group["params"]))
        self.state = {}
        for key, entry in state_dict["state"].items():
            param = by_key[key]
            backend = B.backend_of(param.data)
            self.state[param] = {
                k: (backend.asarray(v.data if isinstance(v, Tensor) else v, dtype=param.dtype)
                    if hasattr(v, "shape") else v)
                for k, v in entry.items()}
        self.step_count = int(state_dict.get("step_count", 0))
        return OptimizerLoadResult(changed)

    def _check_state(self, state_dict: Any) -> list[str]:
        if not isinstance(state_dict, dict) or "param_groups" not in state_dict:
            return ["expected a dict made by optimizer.state_dict() (with 'param_groups' and "
                    "'state')"]
        problems = []
        saved_class = state_dict.get("optimizer")
        if saved_class is not None and saved_class != type(self).__name__:
            problems.append(f"it was saved from a {saved_class}, this is a {type(self).__name__}")
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            problems.append(f"it has {len(groups)} parameter group(s), this optimizer has "
                            f"{len(self.param_groups)}")
            return problems
        keys = iter(self._keys())
        by_key = {}
        allowed = set(self.defaults) | set(_STRUCTURAL_KEYS)
        for index, (group, saved) in enumerate(zip(self.param_groups, groups)):
            own = [next(keys) for _ in group["params"]]
            theirs = list(saved.get("params", []))
            missing = [k for k in own if k not in theirs]
            unexpected = [k for k in theirs if k not in own]
            if missing:
                problems.append(f"group {index}: missing parameters {missing}")
            if unexpected:
                problems.append(f"group {index}: unexpected parameters {unexpected}")
            unknown = [k for k in saved if k not in allowed]
            if unknown:
                problems.append(f"group {index}: unknown hyperparameters {unknown}")
            by_key.update(zip(own, group["params"]))
        for key, entry in state_dict.get("state", {}).items():
            param = by_key.get(key)
            if param is None:
                problems.append(f"state for unknown parameter {key!r}")
                continue
            for name, value in entry.items():
                shape = getattr(value, "shape", None)
                if shape is not None and tuple(shape) != tuple(param.shape) and \
                        tuple(shape) != ():
                    problems.append(f"state {name!r} of {key!r} has shape {tuple(shape)}, the "
                                    f"parameter has shape {tuple(param.shape)}")
        return problems

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            for key in sorted(k for k in group if k not in ("params", "param_names")):
                lines.append(f"    {key}: {group[key]}")
            lines.append(f"    params: {len(group['params'])}")
        return "\n".join(lines) + "\n)"


def _as_groups(params: Any, owner: str) -> list[dict[str, Any]]:
    if isinstance(params, Tensor):
        raise TypeError(f"{owner} needs an iterable of parameters, got a single tensor; wrap it "
                        "in a list: [param]")
    if isinstance(params, dict):
        return [params]
    items = list(params)
    if items and all(isinstance(item, dict) for item in items):
        return items
    return [{"params": items}] if items else []


def _split_names(params: Any, owner: str) -> tuple[list[Tensor], list[str | None]]:
    """Parameters and their names from Parameters or (name, Parameter) pairs."""
    if isinstance(params, Tensor):
        params = [params]
    out, names = [], []
    for item in params:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            name, param = item
        else:
            name, param = None, item
        if not _is_param(param):
            raise TypeError(f"{owner} can only optimize tensors (nn.Parameter); got "
                            f"{type(param).__name__}")
        out.append(param)
        names.append(name)
    return out, names


def _hyper_to_state(value: Any) -> Any:
    if isinstance(value, Regularizer):
        return value.to_state()
    return value


def _hyper_from_state(value: Any) -> Any:
    if isinstance(value, dict) and "regularizer" in value:
        return regularizer_from_state(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - e.g. comparing arrays
        return a is b
