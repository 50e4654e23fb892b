"""Are the replicas still one model? ``check_replicas(model)`` compares every parameter and
buffer of ``model`` across the processes, in one call.

Data-parallel training keeps N copies of one model, one per process, and relies on every copy
taking the same step. A parameter outside DistributedDataParallel's reducer, a buffer changed
in one process, or a hand edit on one rank breaks that silently: the loss still falls, but the
processes now train N different models. This check finds it.

Every process must call it (it is a collective). Each process hashes the bytes of each of its
tensors (an exact fingerprint, 8 bytes a tensor), the fingerprints are gathered from every
process, and only a tensor whose fingerprints differ is gathered in full, to say by how much
it differs. Process 0 is the reference, as it is for the broadcast that makes replicas equal.

>>> import dltutor.distributed as dist
>>> from dltutor import nn
>>> dist.init_process_group("mpi")                   # a world of one: always equal
>>> report = dist.check_replicas(nn.Linear(2, 1))
>>> report.equal, report.differing
(True, [])
>>> report
replicas: 2 tensors compared across 1 process(es): all equal
>>> dist.destroy_process_group()
"""
from __future__ import annotations

import hashlib
import html
from typing import Any

import numpy as np

from .. import backend as B
from ..i18n import text
from ..nn import Module
from .collectives import all_gather
from .process_group import get_world_size


class ReplicaReport:
    """What :func:`check_replicas` found: ``.rows`` (one dict per tensor that differs: its
    ``name``, the ``ranks`` whose values differ from process 0's and, for each of them, the
    ``max_abs_diff`` to process 0's values), ``.equal``, ``.differing`` (the names) and
    ``.compared`` (how many tensors were compared)."""

    def __init__(self, rows: list[dict[str, Any]], compared: int, world_size: int):
        self.rows, self.compared, self.world_size = rows, compared, world_size

    @property
    def equal(self) -> bool:
        """Whether every tensor is the same, bit for bit, in every process."""
        return not self.rows

    @property
    def differing(self) -> list[str]:
        """The names of the tensors that differ somewhere."""
        return [row["name"] for row in self.rows]

    def lines(self) -> list[str]:
        """The report as lines of text: a headline, then one line per differing tensor."""
        if self.equal:
            return [text("distributed.replicas.equal", count=self.compared,
                         world=self.world_size)]
        head = text("distributed.replicas.differ", count=len(self.rows), compared=self.compared,
                    world=self.world_size)
        return [head] + ["  " + self.row_text(row) for row in self.rows]

    @staticmethod
    def row_text(row: dict[str, Any]) -> str:
        """One differing tensor in words: its name, the ranks, the largest difference each."""
        differences = ", ".join(text("distributed.replicas.rank_diff", rank=rank, diff=f"{d:.4g}")
                                for rank, d in zip(row["ranks"], row["max_abs_diff"]))
        return text("distributed.replicas.row", name=row["name"], differences=differences)

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        head, *rows = self.lines()
        colour = "" if self.equal else ' style="color:#b00020"'
        items = "".join(f"<li><code>{html.escape(line.strip())}</code></li>" for line in rows)
        return (f'<div class="dltutor-replicas"><p{colour}>{html.escape(head)}</p>'
                + (f"<ul>{items}</ul>" if items else "") + "</div>")

    def to_dict(self) -> dict[str, Any]:
        """The report as plain Python data."""
        return {"equal": self.equal, "compared": self.compared, "world_size": self.world_size,
                "rows": [dict(row) for row in self.rows]}


def check_replicas(model: Module) -> ReplicaReport:
    """Compare every parameter and buffer of ``model`` across the processes (every process must
    call this: it is a collective), and report each tensor that differs, where and by how much.

    Tensors are named as ``model.named_parameters()`` and ``model.named_buffers()`` name them
    (a DistributedDataParallel's start with ``module.``). The comparison is exact: a tensor
    counts as equal only when its bytes are the same in every process.

    >>> import dltutor.distributed as dist
    >>> from dltutor import nn
    >>> dist.init_process_group("mpi")
    >>> dist.check_replicas(nn.BatchNorm1d(2)).compared       # weight, bias and 3 buffers
    5
    >>> dist.destroy_process_group()
    """
    if not isinstance(model, Module):
        raise TypeError(f"check_replicas compares an nn.Module's tensors, got "
                        f"{type(model).__name__}")
    named = _named_tensors(model)
    world = get_world_size()
    _check_same_layout(named, world)
    prints = np.array([_fingerprint(array) for _, array in named], dtype=np.uint64)
    gathered = [np.empty_like(prints) for _ in range(world)]
    all_gather(gathered, prints)
    rows = [_compare(name, array, world) for (name, array), *column in
            zip(named, *gathered) if len(set(column)) > 1]
    return ReplicaReport(rows, len(named), world)


def _named_tensors(model: Module) -> list[tuple[str, np.ndarray]]:
    """Each parameter and buffer by name, as a contiguous NumPy array (a GPU's comes to the
    host), in the order ``named_parameters`` then ``named_buffers`` give them."""
    pairs = list(model.named_parameters()) + list(model.named_buffers())
    return [(name, np.ascontiguousarray(B.to_numpy(t.data))) for name, t in pairs]


def _fingerprint(array: np.ndarray) -> int:
    """An exact fingerprint of ``array``: 8 bytes of the BLAKE2 hash of its dtype, shape and
    bytes (two arrays with one fingerprint are, in practice, equal)."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(array.tobytes())
    return int.from_bytes(digest.digest(), "little")


def _check_same_layout(named: list[tuple[str, np.ndarray]], world: int) -> None:
    """Refuse, in every process alike, models whose tensors differ in name, shape or dtype:
    their fingerprints could not be lined up (and the full gathers would not match)."""
    layout = "|".join(f"{name}:{array.dtype.str}{array.shape}" for name, array in named)
    mine = np.array([_fingerprint(np.frombuffer(layout.encode(), dtype=np.uint8))],
                    dtype=np.uint64)
    layouts = [np.empty_like(mine) for _ in range(world)]
    all_gather(layouts, mine)
    others = [rank for rank, theirs in enumerate(layouts) if theirs[0] != layouts[0][0]]
    if others:
        raise ValueError(f"check_replicas: the model on ranks {others} has other tensors (names, "
                         "shapes or dtypes) than on rank 0, so they are not replicas of one model; "
                         "build the same model in every process")


def _compare(name: str, array: np.ndarray, world: int) -> dict[str, Any]:
    """Gather the whole of one differing tensor and measure each rank against rank 0."""
    values = [np.empty_like(array) for _ in range(world)]
    all_gather(values, array)
    reference = values[0].astype(np.float64)
    ranks, diffs = [], []
    for rank, theirs in enumerate(values[1:], start=1):
        if theirs.tobytes() != values[0].tobytes():
            ranks.append(rank)
            diffs.append(_largest_difference(reference, theirs.astype(np.float64)))
    return {"name": name, "ranks": ranks, "max_abs_diff": diffs}


def _largest_difference(reference: np.ndarray, other: np.ndarray) -> float:
    """The largest ``|other - reference|``, NaN where only one side is NaN (an empty tensor: 0)."""
    with np.errstate(invalid="ignore"):
        gap = np.abs(other - reference)
    both_nan = np.isnan(reference) & np.isnan(other)
    gap = np.where(both_nan, 0.0, gap)
    return float(np.max(gap)) if gap.size else 0.0

