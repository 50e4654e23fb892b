"""How a tensor prints: PyTorch's layout, so that a printed tensor reads the same in both.

NumPy and PyTorch print the same numbers differently (NumPy drops trailing zeros, ``0.    ``;
PyTorch keeps four decimals, ``0.0000``). A learner comparing the kit with PyTorch line by line
should see the same text, so ``repr(tensor)`` follows PyTorch's rules, written out here:

* **One format for the whole tensor**, chosen from its finite nonzero values: whole numbers
  print as ``2.``; otherwise four decimals, ``0.1235``; scientific, ``1.2346e-05``, when the
  largest is over 1e8, the smallest under 1e-4, or they are more than 1000 apart. Zeros, NaN
  and inf print in that format too (``0.0000``, ``nan``).
* **One width**: every entry is right-aligned to the widest finite nonzero one.
* **Rows of at most 80 characters**, continued under the first entry; a nested tensor puts
  one blank line fewer between its blocks than it has dimensions.
* **Over 1000 elements, only the first and last three** of each dimension, with ``...``.
* **Then what is not the default** (the device; the dtype unless float32, int64 or bool; the
  ``grad_fn`` or ``requires_grad=True``), on the last line while it fits in 80 characters.
  ``Tensor.__repr__`` decides which; an empty tensor also names its size unless it is 1-D,
  and its dtype unless float32.

>>> import numpy as np
>>> tensor_text(np.array([0.0, 1.123456, 12.358], dtype=np.float32))
'tensor([ 0.0000,  1.1235, 12.3580])'
>>> tensor_text(np.array([1e-5, 1.0]), ["dtype=float64"])
'tensor([1.0000e-05, 1.0000e+00], dtype=float64)'
>>> tensor_text(np.array([[1.0, -2.0], [3.0, 4.0]], dtype=np.float32))
'tensor([[ 1., -2.],\\n        [ 3.,  4.]])'
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

LINE_WIDTH = 80     # characters a row may take
THRESHOLD = 1000    # more elements than this: print only the edges
EDGE_ITEMS = 3      # how many entries at each edge of a summarized dimension
DECIMALS = 4


class EntryFormat:
    """The one format and width every entry of a tensor is printed with (see the module
    docstring), chosen from ``values``, a flat NumPy array of the entries that will print."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.whole_numbers, self.scientific, self.width = True, False, 1
        if not self.floating:      # integers and bools: as Python writes them
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        shown = values[np.isfinite(values) & (values != 0)]
        if not shown.size:         # only zeros, NaN and inf: "0.", "nan"
            return
        magnitudes = np.abs(shown.astype(np.float64))
        smallest, largest = magnitudes.min(), magnitudes.max()
        self.whole_numbers = bool((shown == np.ceil(shown)).all())
        with np.errstate(over="ignore"):          # 1e300 / 1e-300 is inf: scientific, quietly
            spread = largest / smallest
        self.scientific = bool(spread > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4)
        self.width = max(len(self.text(v)) for v in shown.tolist())

    def text(self, value: float) -> str:
        """``value`` in this format, not yet padded to the width."""
        if not self.floating:
            return str(value)
        if self.scientific:
            return f"{value:.{DECIMALS}e}"
        if self.whole_numbers:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{DECIMALS}f}"

    def entry(self, value: float) -> str:
        """``value`` formatted and right-aligned to the width."""
        return self.text(value).rjust(self.width)


def _edges(values: np.ndarray) -> np.ndarray:
    """The entries a summarized tensor shows: the first and last EDGE_ITEMS of every dimension
    (the format is chosen from these only, as PyTorch does)."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGE_ITEMS:
        values = np.concatenate([values[:EDGE_ITEMS], values[-EDGE_ITEMS:]])
    if values.ndim == 1:
        return values
    return np.stack([_edges(row) for row in values])


def _vector(values: np.ndarray, indent: int, summarize: bool, fmt: EntryFormat) -> str:
    per_line = max(1, (LINE_WIDTH - indent) // (fmt.width + 2))     # ", " after each entry
    if summarize and values.shape[0] > 2 * EDGE_ITEMS:
        entries = ([fmt.entry(v) for v in values[:EDGE_ITEMS].tolist()] + [" ..."]
                   + [fmt.entry(v) for v in values[-EDGE_ITEMS:].tolist()])
    else:
        entries = [fmt.entry(v) for v in values.tolist()]
    lines = [", ".join(entries[i:i + per_line]) for i in range(0, len(entries), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, fmt: EntryFormat) -> str:
    if values.ndim == 0:
        return fmt.entry(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    rows: Sequence[int | None] = range(values.shape[0])
    if summarize and values.shape[0] > 2 * EDGE_ITEMS:
        rows = [*range(EDGE_ITEMS), None, *range(values.shape[0] - EDGE_ITEMS, values.shape[0])]
    parts = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _with_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """``text`` followed by each suffix, on the last line while it fits in LINE_WIDTH."""
    pieces = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINE_WIDTH:
            pieces.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(pieces) + ")"


def tensor_text(values: np.ndarray, suffixes: Sequence[str] = (), prefix: str = "tensor(") -> str:
    """How a tensor holding ``values`` (a NumPy array) prints, with ``suffixes`` (such as
    ``"dtype=float64"``, ``"requires_grad=True"``) after the values.

    >>> import numpy as np
    >>> tensor_text(np.arange(3), ["requires_grad=True"], prefix="Parameter(")
    'Parameter([0, 1, 2], requires_grad=True)'
    """
    indent = len(prefix)
    if values.size == 0:
        return _with_suffixes(prefix + "[]", suffixes, indent)
    summarize = values.size > THRESHOLD
    fmt = EntryFormat((_edges(values) if summarize else values).reshape(-1))
    return _with_suffixes(prefix + _nested(values, indent, summarize, fmt), suffixes, indent)
