"""Recorder: per-parameter traces of a training run, for plots and for the live lab.

A :class:`Recorder` hooks into an optimizer's ``step()`` and, on every ``every``-th step,
records for each parameter (or each layer):

==================== =========================================================================
``param_norm``       L2 norm of the parameter after the step
``grad_norm``        L2 norm of its gradient as backward left it
``clipped_grad_norm`` the same after the optimizer's ``grad_clip`` (equal when not clipped)
``update_norm``      L2 norm of the change the step made
``update_ratio``     ``update_norm / param_norm``: around 1e-3 is the usual healthy range
``lr``               effective learning rate (group lr x lr_mult)
``frozen``           1.0 when the step did not change it (no gradient, or lr 0)
==================== =========================================================================

and per step the ``loss`` (if you pass it to :meth:`Recorder.log_loss`), the
``global_grad_norm`` and the ``clip_scale`` the clip object applied.

Everything lives in arrays allocated once (``capacity`` rows): after that many records the
oldest are overwritten, so memory does not grow however long you train.

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> from dltutor.nn import functional as F
>>> _ = dt.manual_seed(0)
>>> net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
>>> opt = optim.SGD(net.parameters(), lr=0.1)
>>> rec = Recorder(net, opt)
>>> for _ in range(3):
...     opt.zero_grad()
...     loss = F.cross_entropy(net(dt.randn(8, 2)), dt.randint(0, 2, (8,)))
...     loss.backward()
...     rec.log_loss(loss)
...     opt.step()
>>> rec.names
['0.weight', '0.bias', '2.weight', '2.bias']
>>> rec.series("grad_norm", "0.weight").shape, rec.steps.tolist()
((3,), [0, 1, 2])
"""
from __future__ import annotations

import math
import operator
import struct
from typing import Any, Sequence

import numpy as np

from . import backend as B
from .diagnose.adapters import adapter_for
from .diagnose.adapters.steps import FrameworkSteps

#: Series recorded for each parameter (or layer) on every recorded step.
PARAM_SERIES = ("param_norm", "grad_norm", "clipped_grad_norm", "update_norm", "update_ratio",
                "lr", "frozen")
#: Series recorded once per recorded step.
STEP_SERIES = ("loss", "global_grad_norm", "clip_scale")
# What a record stores, in the order of the StepReport fields grad_sq, update_sq, param_sq,
# clipped_sq and lrs: the norms are stored squared (square roots are taken when read, in one
# NumPy call, and a layer's squares simply add). update_ratio, frozen and global_grad_norm are
# worked out when read too, so that recording a step (every step, in the hot loop) does as
# little as possible.
_STORED = ("grad_norm", "update_norm", "param_norm", "clipped_grad_norm", "lr")
_SQUARED = ("grad_norm", "update_norm", "param_norm", "clipped_grad_norm")


class Recorder:
    """Record per-parameter (``by="parameter"``) or per-layer (``by="layer"``) traces of the
    steps of ``optimizer`` on ``model``. See the module docstring for the series.

    ``every``: record one step in ``every``. ``capacity``: how many records to keep.
    ``histograms_every``: also keep histograms of parameter and gradient values every that
    many records (0: never), at most ``histogram_capacity`` of them, with ``bins`` bins.

    >>> from dltutor import nn, optim
    >>> net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    >>> rec = Recorder(net, optim.SGD(net.parameters(), lr=0.1), by="layer")
    >>> rec.names, rec.param_names
    (['0', '2'], ['0.weight', '0.bias', '2.weight', '2.bias'])
    """

    def __init__(self, model: Any, optimizer: Any, every: int = 1, capacity: int = 2000,
                 by: str = "parameter", histograms_every: int = 0, bins: int = 30,
                 histogram_capacity: int = 50):
        if by not in ("parameter", "layer"):
            raise ValueError(f"Recorder: by must be 'parameter' or 'layer', got {by!r}")
        for name, value in (("every", every), ("capacity", capacity)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"Recorder: {name} must be an integer >= 1, got {value!r}")
        self.model, self.optimizer, self.by = model, optimizer, by
        self.every, self.capacity = every, capacity
        self.histograms_every, self.bins = histograms_every, bins
        self.histogram_capacity = histogram_capacity
        self._adapter = adapter = adapter_for(model, optimizer)
        # each parameter once, under its first name (PyTorch and Paddle say it the same way)
        named = list(model.named_parameters())
        self._param_names = [name for name, _ in named]
        self._params = [p for _, p in named]
        self.names = self._param_names if by == "parameter" else _layer_names(self._param_names)
        self._column = ({n: i for i, n in enumerate(self.names)} if by == "parameter" else
                        {n: self.names.index(_layer_of(n)) for n in self._param_names})
        width = len(self.names)
        # One row per record: step number, loss, clip scale, then each stored series for every
        # name, so that recording a step is a single assignment. The rest are views of it.
        self._records = np.full((capacity, 3 + len(_STORED) * width), np.nan)
        self._step_numbers, self._loss, self._clip_scale = self._records[:, :3].T
        self._table = self._records[:, 3:].reshape(capacity, len(_STORED), width)
        # A record arrives as Python floats; struct packs them straight into the row's memory,
        # several times cheaper than NumPy converting a list (this runs on every step).
        self._row_packer = struct.Struct(f"{self._records.shape[1]}d")
        self.count = 0                  # records made so far (may exceed capacity)
        self.histograms: list[dict[str, Any]] = []
        self._pending_loss = math.nan
        self._recording = False
        self._handles = []
        if adapter.framework != "dltutor":    # PyTorch, Paddle: measured around their step
            self._optimizers: list[Any] = []
            self._handles.append(FrameworkSteps(adapter, self._params, optimizer, every,
                                                self._write_framework_step))
            return
        self._optimizers = getattr(optimizer, "optimizers", [optimizer])
        # Whether a step's report can become a row as it is (checked again on every write).
        self._one_report_per_row = by == "parameter" and len(self._optimizers) == 1
        for opt in self._optimizers:
            self._handles.append(opt.register_step_pre_hook(self._before_step))
            self._handles.append(opt.register_step_post_hook(self._after_step))

    # -- recording -----------------------------------------------------------------------------
    def log_loss(self, loss: Any) -> None:
        """Give the loss of the coming step (a tensor or a number) so it is recorded with it."""
        self._pending_loss = float(loss.item() if hasattr(loss, "item") else loss)

    def _before_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        # Ask the optimizer for per-parameter records only on the steps we keep. Never switch
        # them off here: another Recorder on this optimizer may want this step.
        self._recording = optimizer.step_count % self.every == 0
        if self._recording:
            optimizer.record_steps = True

    def _after_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        optimizer.record_steps = False
        if self._recording and optimizer is self._optimizers[-1]:
            self._write(optimizer.step_count - 1)

    def _write(self, step: int) -> None:
        report = self._optimizers[0].last_step
        if (self._one_report_per_row and len(report.params) == len(self._params)
                and all(map(operator.is_, report.params, self._params))):
            # The usual case: one optimizer updated every parameter, in the model's order, so
            # its report's fields are the row as they are (see _STORED).
            values: Sequence[float] = (*report.grad_sq, *report.update_sq, *report.param_sq,
                                       *report.clipped_sq, *report.lrs)
        else:
            values = self._row()
        self._pack(step, self._last_clip_scale(), values)

    def _write_framework_step(self, step: int, per_param: list) -> None:
        """A PyTorch or Paddle step, measured by its FrameworkSteps (no clip scale: the
        framework does not say one)."""
        self._pack(step, math.nan, self._columns(per_param))

    def _pack(self, step: int, clip_scale: float, values: Any) -> None:
        offset = self._row_packer.size * (self.count % self.capacity)   # in bytes
        self._row_packer.pack_into(self._records,  # type: ignore[arg-type]  # ndarray: a buffer
                                   offset, step, self._pending_loss, clip_scale, *values)
        self._pending_loss = math.nan
        self.count += 1
        if self.histograms_every and (self.count - 1) % self.histograms_every == 0:
            self._histogram(step)

    def _row(self) -> list[float]:
        """The stored values of a record (see _STORED), from the optimizers' reports.

        A parameter the step did not update (no gradient) gets its parameter norm, zero
        gradient and update norms, and the lr it would have had.
        """
        entries = {}                                 # id(param) -> (report, its index there)
        for report in (opt.last_step for opt in self._optimizers):
            for index, param in enumerate(report.params):
                entries[id(param)] = (report, index)
        per_param: list[tuple[tuple[float, ...], float]] = []
        idle_lrs = None                                # made once, if a parameter needs it
        for param in self._params:
            found = entries.get(id(param))
            if found is None:
                idle_lrs = self._effective_lrs() if idle_lrs is None else idle_lrs
                per_param.append(((0.0, 0.0, B.sums_of_squares([param.data])[0], 0.0),
                                  idle_lrs.get(id(param), math.nan)))
            else:
                report, i = found
                per_param.append(((report.grad_sq[i], report.update_sq[i], report.param_sq[i],
                                   report.clipped_sq[i]), report.lrs[i]))
        return self._columns(per_param)

    def _columns(self, per_param: list[tuple[tuple[float, ...], float]]) -> list[float]:
        """A record's stored values from each parameter's (squared norms, lr), in the model's
        order: a layer's squared norms are the sums of its parameters' and its lr is the
        largest of theirs."""
        width = len(self.names)
        squares_of = [[0.0] * width for _ in _SQUARED]
        lrs = [math.nan] * width
        for name, (squares, lr) in zip(self._param_names, per_param):
            col = self._column[name]
            for kind, value in enumerate(squares):
                squares_of[kind][col] += value
            lrs[col] = lr if math.isnan(lrs[col]) else max(lrs[col], lr)
        return [x for series in squares_of + [lrs] for x in series]

    def _effective_lrs(self) -> dict[int, float]:
        """id(parameter) -> the effective lr its optimizer would give it now."""
        return {id(p): opt.effective_lr(p, group)
                for opt in self._optimizers for _, p, group in opt.param_entries()}

    def _last_clip_scale(self) -> float:
        """The smallest scale a clip object applied in this step (1.0: nothing was clipped)."""
        smallest = 1.0
        for opt in self._optimizers:
            clip = opt.grad_clip
            if clip is not None and clip.last_scale is not None and clip.last_scale < smallest:
                smallest = clip.last_scale
        return smallest

    def _histogram(self, step: int) -> None:
        entry: dict[str, Any] = {"step": step, "params": {}, "grads": {}}
        for name, param in zip(self._param_names, self._params):
            entry["params"][name] = np.histogram(self._adapter.values(param), bins=self.bins)
            grad = self._adapter.grad(param)
            if grad is not None:
                entry["grads"][name] = np.histogram(grad, bins=self.bins)
        self.histograms.append(entry)
        if len(self.histograms) > self.histogram_capacity:
            del self.histograms[0]

    # -- reading -------------------------------------------------------------------------------
    def _order(self) -> np.ndarray:
        """Row indices of the kept records, oldest first (the ring buffer unrolled)."""
        if self.count <= self.capacity:
            return np.arange(self.count)
        start = self.count % self.capacity
        return np.concatenate([np.arange(start, self.capacity), np.arange(start)])

    @property
    def param_names(self) -> list[str]:
        """The recorded parameters' names, in the model's order. For ``by="parameter"`` they
        are :attr:`names`; for ``by="layer"`` the names are the layers and these their
        parameters (histograms are kept per parameter)."""
        return list(self._param_names)

    @property
    def steps(self) -> np.ndarray:
        """The optimizer step number of each kept record, oldest first."""
        return self._step_numbers[self._order()].astype(np.int64)

    def series(self, kind: str, name: str | None = None) -> np.ndarray:
        """One series as a NumPy array aligned with :attr:`steps`.

        Per-parameter kinds (``PARAM_SERIES``) need ``name``, or give a 2-D array with one
        column per name; per-step kinds (``STEP_SERIES``) take no name.
        """
        rows = self._order()
        if kind in STEP_SERIES:
            return self._step_values(kind, rows)
        table = self._values(kind, rows)
        if name is None:
            return table
        if name not in self.names:
            raise KeyError(f"Recorder has no {self.by} {name!r}; it records: "
                           f"{', '.join(self.names)}")
        return table[:, self.names.index(name)].copy()

    def frozen_runs(self, name: str) -> list[tuple[int, int]]:
        """The stretches of kept records in which ``name`` was frozen (its step changed
        nothing), as ``(first, last)`` positions in :attr:`steps`, both included.

        >>> import dltutor as dt
        >>> from dltutor import nn, optim
        >>> net = nn.Linear(2, 1)
        >>> opt = optim.SGD(net.parameters(), lr=0.1)
        >>> rec = Recorder(net, opt)
        >>> for step in range(6):
        ...     opt.zero_grad()
        ...     if step not in (1, 2, 5):              # no backward: no gradient, no update
        ...         net(dt.ones(1, 2)).sum().backward()
        ...     opt.step()
        >>> rec.frozen_runs("weight")
        [(1, 2), (5, 5)]
        """
        frozen = (self.series("frozen", name) == 1.0).astype(np.int8)
        # +1 where a run starts, -1 just after it ends (padding closes runs at either end)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], frozen, [0]])))
        return [(int(first), int(stop) - 1) for first, stop in zip(edges[::2], edges[1::2])]

    def latest(self, kind: str) -> dict[str, float]:
        """The most recent value of a per-parameter series for every name."""
        if self.count == 0:
            return {}
        values = self._values(kind, np.array([(self.count - 1) % self.capacity]))[0]
        return {name: float(values[i]) for i, name in enumerate(self.names)}

    def _values(self, kind: str, rows: np.ndarray) -> np.ndarray:
        """A per-name series at ``rows`` of the table: one row per record, one column per name."""
        if kind in _SQUARED:
            return np.sqrt(self._table[rows, _STORED.index(kind)])
        if kind in _STORED:
            return self._table[rows, _STORED.index(kind)]     # indexing with an array copies
        if kind == "update_ratio":                             # 0 where the parameter norm is 0
            update, param = self._values("update_norm", rows), self._values("param_norm", rows)
            with np.errstate(all="ignore"):                    # inf / inf after a divergence
                return np.divide(update, param, out=np.zeros_like(update), where=param > 0)
        if kind == "frozen":                                   # the step did not change it
            return (self._values("update_norm", rows) == 0).astype(float)
        raise KeyError(f"Recorder has no series {kind!r}; per {self.by}: "
                       f"{', '.join(PARAM_SERIES)}; per step: {', '.join(STEP_SERIES)}")

    def _step_values(self, kind: str, rows: np.ndarray) -> np.ndarray:
        if kind == "loss":
            return self._loss[rows]
        if kind == "clip_scale":
            return self._clip_scale[rows]
        # global_grad_norm: the squared norms of every name add up
        return np.sqrt(self._table[rows, _STORED.index("grad_norm")].sum(axis=1))

    def to_dataframe(self) -> Any:
        """All kept records as a pandas DataFrame in long form (one row per step and name).

        Needs pandas (``pip install pandas``); everything else works without it.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Recorder.to_dataframe needs pandas: pip install pandas "
                              "(or read the NumPy arrays with recorder.series(...))") from None
        rows, steps = self._order(), self.steps
        per_name = {kind: self._values(kind, rows) for kind in PARAM_SERIES}
        per_step = {kind: self._step_values(kind, rows) for kind in STEP_SERIES}
        frames = []
        for i, name in enumerate(self.names):
            frame = {"step": steps, self.by: name}
            frame.update({kind: values[:, i] for kind, values in per_name.items()})
            frame.update(per_step)
            frames.append(pd.DataFrame(frame))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def clear(self) -> None:
        """Forget every record (the hooks stay attached)."""
        self._records[...] = np.nan
        self.count = 0
        self.histograms = []

    def detach(self) -> None:
        """Remove the optimizer hooks: nothing more is recorded (what was kept stays)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for opt in self._optimizers:
            opt.record_steps = False

    def __repr__(self) -> str:
        return (f"Recorder({len(self.names)} {self.by}s, {min(self.count, self.capacity)} of "
                f"{self.count} records kept, every {self.every} step(s))")


def _layer_of(param_name: str) -> str:
    """``"0.block 1.2.weight"`` -> ``"0.block 1.2"`` (the module that owns the parameter)."""
    return param_name.rpartition(".")[0]


def _layer_names(param_names: list[str]) -> list[str]:
    names: list[str] = []
    for name in param_names:
        layer = _layer_of(name)
        if layer not in names:
            names.append(layer)
    return names
