"""Saving and loading weights and training state as safetensors files: ``save`` and ``load``.

Why safetensors and not pickle? ``torch.save`` and ``pickle.dump`` write a *program* that
rebuilds your objects, and loading a pickle runs that program: a checkpoint downloaded from the
internet can run any code on your machine. A safetensors file is just arrays and a JSON header
that says where each array starts and what its dtype and shape are, so loading one can only ever
give you arrays. Every safetensors reader (NumPy, PyTorch, JAX, Rust, ...) can open the files
written here; dltutor never reads or writes pickles.

>>> import os, tempfile
>>> import dltutor as dt
>>> from dltutor.io import save, load
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "weights.safetensors")
...     save({"0.weight": dt.ones(2, 3), "0.bias": dt.zeros(2)}, path)
...     state = load(path)
>>> state
{'0.weight': tensor([[1., 1., 1.],
        [1., 1., 1.]]), '0.bias': tensor([0., 0.])}

What goes into the file
-----------------------
``save`` takes a state dict (``{"0.weight": tensor, ...}``) or a nested structure of dicts,
lists and tuples whose leaves are tensors/arrays or plain values (``int``, ``float``, ``bool``,
``str``, ``None``), such as ``{"model": ..., "optimizer": ..., "epoch": 3}``.

* **Arrays** are stored as safetensors tensors. Each gets a flat key made from its path in the
  structure: the path's parts joined with ``"/"``, where a ``"~"`` inside a part is written
  ``"~0"`` and a ``"/"`` is written ``"~1"`` (the escaping of JSON pointers, RFC 6901). Dots are
  not special, so ``{"0.weight": w}`` is stored under ``"0.weight"`` and
  ``{"model": {"0.weight": w}}`` under ``"model/0.weight"``: other programs see familiar names.
  List positions and integer dict keys become their digits (``"optimizer/state/0/exp_avg"``).
* **Everything else** (the shape of the structure, the plain values and which key holds each
  array) is one JSON document stored in the safetensors metadata under the key ``"dltutor"``.
  Each value is a one-key object naming its type, so nothing is guessed when loading::

      {"version": 1, "tree": {"dict": [["model", {"dict": [["0.weight", {"tensor": "model/0.weight"}]]}],
                                       ["epoch", {"int": 3}],
                                       ["lr", {"float": 0.1}], ["best", {"float": "inf"}]]}}

  Dicts keep their order and may have ``str`` or ``int`` keys; lists and tuples stay lists and
  tuples; ints stay ints and floats stay floats (``inf``, ``-inf`` and ``nan`` are written as the
  strings ``"inf"``, ``"-inf"``, ``"nan"``, because strict JSON has no such numbers).
  Dict subclasses such as ``OrderedDict`` come back as plain dicts, NumPy scalars
  (``np.float32(0.5)``) as Python numbers, and Parameters as plain tensors: a checkpoint holds
  values, and ``model.load_state_dict`` copies them into the model's own Parameters.

A safetensors file written by another program (no ``"dltutor"`` metadata) loads as a flat dict
``name -> tensor``.
"""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from safetensors.numpy import save as serialize

from .files import CheckpointError, atomic_write, fspath, parse_json, read_safetensors
from .tree import SAVE_HINT, decode, encode, finish, to_tensors, type_name

__all__ = ["save", "load", "CheckpointError"]

#: The safetensors metadata key under which dltutor stores its JSON document.
METADATA_KEY = "dltutor"
#: The version of that JSON document; ``load`` refuses versions it does not know.
FORMAT_VERSION = 1


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write a state dict, or a nested dict of tensors and plain values, to a safetensors file.

    ``obj`` is a dict: typically ``model.state_dict()`` (names to tensors), or a checkpoint
    such as ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}``.
    Its values may be dltutor tensors (Parameters included), NumPy or CuPy arrays, ``int``,
    ``float``, ``bool``, ``str``, ``None``, and lists, tuples and dicts of those. Anything else
    (a whole Module, a function, an object array) raises ``TypeError`` naming where it is;
    a structure nested more than 100 levels deep, or one that contains itself, ``ValueError``.
    An empty path, a missing or unwritable folder, or a folder given as the path raises an
    error naming the path; in every case nothing is written.

    The format is safetensors, not pickle: a pickle can run arbitrary code when it is loaded,
    while a safetensors file is just arrays and a JSON header, safe to load from anywhere and
    readable by any safetensors library. See the module docstring for how keys are named.

    Saving is atomic: the file is written under a temporary name in the same folder, flushed to
    disk, and only then renamed onto ``path``. If anything fails (or the kernel dies) halfway,
    the previous file at ``path`` is still there, whole.

    >>> import os, tempfile
    >>> import dltutor as dt
    >>> from safetensors.numpy import load_file
    >>> from dltutor.io import save, load
    >>> checkpoint = {"model": {"0.weight": dt.ones(2, 2)}, "epoch": 3, "lr": 0.1}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "checkpoint.safetensors")
    ...     save(checkpoint, path)
    ...     print(list(load_file(path)))          # what any safetensors reader sees
    ...     print(load(path)["epoch"], load(path)["lr"])
    ['model/0.weight']
    3 0.1
    """
    path = fspath(path)
    if not isinstance(obj, dict):
        raise TypeError(f"save() takes a dict (a state dict or a nested checkpoint dict), got "
                        f"{type_name(obj)}. {SAVE_HINT}")
    tensors: dict[str, np.ndarray] = {}
    paths: dict[str, tuple] = {}
    tree = encode(obj, (), tensors, paths, set())
    document = json.dumps({"version": FORMAT_VERSION, "tree": tree}, allow_nan=False,
                          ensure_ascii=False)
    blob = serialize(tensors, metadata={METADATA_KEY: document})
    atomic_write(path, blob)


def load(path: str | os.PathLike, *, as_numpy: bool = False) -> Any:
    """Read a file written by :func:`save` (or any safetensors file) back.

    Returns the structure that was saved: the same dicts (in the same order), lists, tuples
    and plain values, with every array as a new dltutor tensor on the current backend
    (``dt.tensor`` semantics: the dtype is kept, ``requires_grad`` is False). With
    ``as_numpy=True`` the arrays stay NumPy arrays. A safetensors file from another program
    loads as a flat dict ``name -> tensor``.

    Loading never runs code from the file (that is the point of safetensors; a pickle would).
    The whole file is checked before anything is returned; a file that is empty, truncated,
    corrupt or not safetensors at all raises :class:`CheckpointError` naming it.

    To move one layer's weights into another layer of the same shape::

        dt.save(net[2].state_dict(), "last.safetensors")
        other.load_state_dict(dt.load("last.safetensors"))

    >>> import os, tempfile
    >>> import numpy as np
    >>> import dltutor as dt
    >>> from dltutor.io import save, load
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "layer.safetensors")
    ...     save({"weight": dt.tensor(np.eye(2)), "steps": np.int64(7)}, path)
    ...     state = load(path)
    ...     raw = load(path, as_numpy=True)
    >>> state["weight"].dtype, state["steps"], type(raw["weight"]).__name__
    (dtype('float64'), 7, 'ndarray')
    """
    path = fspath(path)
    if not isinstance(as_numpy, bool):
        raise TypeError(f"load(..., as_numpy=...) takes True or False, got {as_numpy!r}")
    arrays, metadata = read_safetensors(path)
    document = metadata.get(METADATA_KEY)
    if document is None:  # written by another program: a flat state dict
        return {key: finish(array, as_numpy) for key, array in arrays.items()}
    document = parse_json(document, path, "dltutor metadata")
    if not isinstance(document, dict) or "tree" not in document:
        raise CheckpointError(path, "corrupt dltutor metadata: no 'tree' entry")
    version = document.get("version")
    if type(version) is not int or version != FORMAT_VERSION:   # (True == 1 in Python)
        if type(version) is int and version > FORMAT_VERSION:
            raise CheckpointError(path, f"written by a newer dltutor (format version {version}; "
                                        f"this one reads version {FORMAT_VERSION}); upgrade dltutor")
        raise CheckpointError(path, f"corrupt dltutor metadata: unknown format version {version!r}")
    used: set[str] = set()
    # First rebuild the structure with NumPy arrays, checking every node; only then convert.
    structure = decode(document["tree"], arrays, used, path)
    unused = [key for key in arrays if key not in used]
    if unused:
        raise CheckpointError(path, f"corrupt dltutor metadata: the file holds tensors the "
                                    f"structure does not mention: {unused[:5]}")
    if not isinstance(structure, dict):
        raise CheckpointError(path, "corrupt dltutor metadata: the top level is not a dict")
    return to_tensors(structure, as_numpy)
