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
``frozen``           1.0 when the step did not update it (no gradient, or lr 0)
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
from typing import Any

import numpy as np

from . import backend as B
from .optim.clip import l2_norm

#: Series recorded for each parameter (or layer) on every recorded step.
PARAM_SERIES = ("param_norm", "grad_norm", "clipped_grad_norm", "update_norm", "update_ratio",
                "lr", "frozen")
#: Series recorded once per recorded step.
STEP_SERIES = ("loss", "global_grad_norm", "clip_scale")


class Recorder:
    """Record per-parameter (``by="parameter"``) or per-layer (``by="layer"``) traces of the
    steps of ``optimizer`` on ``model``. See the module docstring for the series.

    ``every``: record one step in ``every``. ``capacity``: how many records to keep.
    ``histograms_every``: also keep histograms of parameter and gradient values every that
    many records (0: never), at most ``histogram_capacity`` of them, with ``bins`` bins.
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
        self._param_names = [name for name, _ in model.named_parameters()]
        self._params = [p for _, p in model.named_parameters()]
        self.names = self._param_names if by == "parameter" else _layer_names(self._param_names)
        self._column = ({n: i for i, n in enumerate(self.names)} if by == "parameter" else
                        {n: self.names.index(_layer_of(n)) for n in self._param_names})
        width = len(self.names)
        # One table: record x series kind x name, so a record is written in one assignment.
        self._table = np.full((capacity, len(PARAM_SERIES), width), np.nan)
        self._per_step = {kind: np.full(capacity, np.nan) for kind in STEP_SERIES}
        self._step_numbers = np.zeros(capacity, dtype=np.int64)
        self.count = 0                  # records made so far (may exceed capacity)
        self.histograms: list[dict[str, Any]] = []
        self._pending_loss = math.nan
        self._recording = False
        self._optimizers = getattr(optimizer, "optimizers", [optimizer])
        self._handles = []
        for opt in self._optimizers:
            self._handles.append(opt.register_step_pre_hook(self._before_step))
            self._handles.append(opt.register_step_post_hook(self._after_step))

    # -- recording -----------------------------------------------------------------------------
    def log_loss(self, loss: Any) -> None:
        """Give the loss of the coming step (a tensor or a number) so it is recorded with it."""
        self._pending_loss = float(loss.item() if hasattr(loss, "item") else loss)

    def _before_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        # Ask the optimizer for per-parameter records only on the steps we keep.
        self._recording = optimizer.step_count % self.every == 0
        optimizer.record_steps = self._recording

    def _after_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        optimizer.record_steps = False
        if not self._recording or optimizer is not self._optimizers[-1]:
            return
        records = {id(r.param): r for opt in self._optimizers for r in opt.last_step}
        self._write(optimizer.step_count - 1, records)

    def _write(self, step: int, records: dict[int, Any]) -> None:
        row = self.count % self.capacity
        if self.by == "layer":
            self._table[row] = self._layer_rows(records)
        else:  # one list per series, in PARAM_SERIES order, one value per parameter
            p_norm, g_norm, c_norm, u_norm, ratio, lr, frozen = ([] for _ in PARAM_SERIES)
            for param in self._params:
                r = records.get(id(param))
                if r is None:        # no gradient: this parameter was not updated
                    p_norm.append(l2_norm(param.data))
                    g_norm.append(0.0), c_norm.append(0.0), u_norm.append(0.0)
                    ratio.append(0.0), lr.append(self._lr_of(param)), frozen.append(1.0)
                    continue
                p_norm.append(r.param_norm), g_norm.append(r.grad_norm)
                c_norm.append(r.clipped_grad_norm), u_norm.append(r.update_norm)
                ratio.append(r.update_norm / r.param_norm if r.param_norm > 0 else 0.0)
                lr.append(r.lr), frozen.append(0.0 if r.update_norm > 0 else 1.0)
            self._table[row] = [p_norm, g_norm, c_norm, u_norm, ratio, lr, frozen]
        self._per_step["loss"][row] = self._pending_loss
        self._per_step["global_grad_norm"][row] = math.sqrt(
            sum(r.grad_norm * r.grad_norm for r in records.values()))
        self._per_step["clip_scale"][row] = self._clip_scale()
        self._step_numbers[row] = step
        self._pending_loss = math.nan
        self.count += 1
        if self.histograms_every and (self.count - 1) % self.histograms_every == 0:
            self._histogram(step)

    def _layer_rows(self, records: dict[int, Any]) -> list[list[float]]:
        """The series of each layer: norms add in squares over its parameters, the lr is the
        largest, and a layer is frozen when none of its parameters moved."""
        width = len(self.names)
        sq = [[0.0] * width for _ in range(4)]   # param, grad, clipped grad, update
        lrs, moved = [math.nan] * width, [False] * width
        for name, param in zip(self._param_names, self._params):
            col, r = self._column[name], records.get(id(param))
            if r is None:
                values = (l2_norm(param.data), 0.0, 0.0, 0.0)
                lr = self._lr_of(param)
            else:
                values = (r.param_norm, r.grad_norm, r.clipped_grad_norm, r.update_norm)
                lr, moved[col] = r.lr, moved[col] or r.update_norm > 0
            for i, value in enumerate(values):
                sq[i][col] += value * value
            lrs[col] = lr if math.isnan(lrs[col]) else max(lrs[col], lr)
        norms = [[math.sqrt(x) for x in row] for row in sq]
        ratio = [u / p if p > 0 else 0.0 for u, p in zip(norms[3], norms[0])]
        return norms + [ratio, lrs, [0.0 if m else 1.0 for m in moved]]

    def _lr_of(self, param: Any) -> float:
        """Effective lr of a parameter that got no update (NaN when not in the optimizer)."""
        for opt in self._optimizers:
            for _, p, group in opt.named_params():
                if p is param:
                    return opt.effective_lr(p, group)
        return math.nan

    def _clip_scale(self) -> float:
        scales = [opt.grad_clip.last_scale for opt in self._optimizers
                  if getattr(opt, "grad_clip", None) is not None
                  and opt.grad_clip.last_scale is not None]
        return min(scales) if scales else 1.0

    def _histogram(self, step: int) -> None:
        entry: dict[str, Any] = {"step": step, "params": {}, "grads": {}}
        for name, param in zip(self._param_names, self._params):
            entry["params"][name] = np.histogram(B.to_numpy(param.data), bins=self.bins)
            if param.grad is not None:
                entry["grads"][name] = np.histogram(B.to_numpy(param.grad.data), bins=self.bins)
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
    def steps(self) -> np.ndarray:
        """The optimizer step number of each kept record, oldest first."""
        return self._step_numbers[self._order()]

    def series(self, kind: str, name: str | None = None) -> np.ndarray:
        """One series as a NumPy array aligned with :attr:`steps`.

        Per-parameter kinds (``PARAM_SERIES``) need ``name``, or give a 2-D array with one
        column per name; per-step kinds (``STEP_SERIES``) take no name.
        """
        order = self._order()
        if kind in STEP_SERIES:
            return self._per_step[kind][order].copy()
        if kind not in PARAM_SERIES:
            raise KeyError(f"Recorder has no series {kind!r}; per {self.by}: "
                           f"{', '.join(PARAM_SERIES)}; per step: {', '.join(STEP_SERIES)}")
        table = self._table[order, PARAM_SERIES.index(kind)]
        if name is None:
            return table.copy()
        if name not in self.names:
            raise KeyError(f"Recorder has no {self.by} {name!r}; it records: "
                           f"{', '.join(self.names)}")
        return table[:, self.names.index(name)].copy()

    def latest(self, kind: str) -> dict[str, float]:
        """The most recent value of a per-parameter series for every name."""
        if self.count == 0:
            return {}
        row = (self.count - 1) % self.capacity
        values = self._table[row, PARAM_SERIES.index(kind)]
        return {name: float(values[i]) for i, name in enumerate(self.names)}

    def to_dataframe(self) -> Any:
        """All kept records as a pandas DataFrame in long form (one row per step and name).

        Needs pandas (``pip install pandas``); everything else works without it.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Recorder.to_dataframe needs pandas: pip install pandas "
                              "(or read the NumPy arrays with recorder.series(...))") from None
        order, steps = self._order(), self.steps
        frames = []
        for i, name in enumerate(self.names):
            frame = {"step": steps, self.by: name}
            frame.update({kind: self._table[order, k, i] for k, kind in enumerate(PARAM_SERIES)})
            frame.update({kind: self._per_step[kind][order] for kind in STEP_SERIES})
            frames.append(pd.DataFrame(frame))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def clear(self) -> None:
        """Forget every record (the hooks stay attached)."""
        self._table[...] = np.nan
        for table in self._per_step.values():
            table[...] = np.nan
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
