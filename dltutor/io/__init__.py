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
``save`` takes what ``torch.save`` takes in a course: one tensor (``dt.save(x, path)``), a list
or tuple of tensors (``dt.save([x, y], path)``), a state dict (``{"0.weight": tensor, ...}``),
or a nested structure of dicts, lists and tuples whose leaves are tensors/arrays or plain values
(``int``, ``float``, ``bool``, ``str``, ``None``), such as ``{"model": ..., "optimizer": ...,
"epoch": 3}``. ``load`` gives back the same kind of object: a tensor, a list, a tuple or a dict.
A plain value on its own (``dt.save(3, path)``) is refused: in a file a value needs a name, so
put it in a dict (``dt.save({"epoch": 3}, path)``).

* **Arrays** are stored as safetensors tensors. Each gets a flat key made from its path in the
  structure: the path's parts joined with ``"/"``, where a ``"~"`` inside a part is written
  ``"~0"`` and a ``"/"`` is written ``"~1"`` (the escaping of JSON pointers, RFC 6901). Dots are
  not special, so ``{"0.weight": w}`` is stored under ``"0.weight"`` and
  ``{"model": {"0.weight": w}}`` under ``"model/0.weight"``: other programs see familiar names.
  List positions and integer dict keys become their digits (``"optimizer/state/0/exp_avg"``;
  ``dt.save([x, y], path)`` stores ``"0"`` and ``"1"``). A tensor saved on its own has no path,
  so ``dt.save(x, path)`` stores it under the key ``"tensor"``.
* **Everything else** (the shape of the structure, the plain values and which key holds each
  array) is one JSON document stored in the safetensors metadata under the key ``"dltutor"``.
  Each value is a one-key object naming its type, so nothing is guessed when loading::

      {"version": 1, "tree": {"dict": [["model", {"dict": [["0.weight", {"tensor": "model/0.weight"}]]}],
                                       ["epoch", {"int": 3}],
                                       ["lr", {"float": 0.1}], ["best", {"float": "inf"}]]}}

  (``dt.save(x, path)`` writes the tree ``{"tensor": "tensor"}``, ``dt.save([x, y], path)``
  the tree ``{"list": [{"tensor": "0"}, {"tensor": "1"}]}``.)
  Dicts keep their order and may have ``str`` or ``int`` keys; lists and tuples stay lists and
  tuples; ints stay ints and floats stay floats (``inf``, ``-inf`` and ``nan`` are written as the
  strings ``"inf"``, ``"-inf"``, ``"nan"``, because strict JSON has no such numbers).
  Dict subclasses such as ``OrderedDict`` come back as plain dicts, NumPy scalars
  (``np.float32(0.5)``) as Python numbers, and Parameters as plain tensors: a checkpoint holds
  values, and ``model.load_state_dict`` copies them into the model's own Parameters.

A safetensors file written by another program (no ``"dltutor"`` metadata) loads as a flat dict
``name -> tensor``.

``load`` takes PyTorch's keywords too: ``weights_only=True`` (every load here is weights-only:
nothing is ever unpickled) and ``map_location="cpu"``, ``"gpu"``, ``"cuda"`` or ``"cuda:0"``
(the backend the tensors are made on).
"""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from safetensors.numpy import save as serialize

from .. import backend as B
from .. import devices
from .files import CheckpointError, atomic_write, fspath, parse_json, read_safetensors
from .tree import decode, encode, finish, to_tensors, type_name

__all__ = ["save", "load", "CheckpointError"]

#: The safetensors metadata key under which dltutor stores its JSON document.
METADATA_KEY = "dltutor"
#: The version of that JSON document; ``load`` refuses versions it does not know.
FORMAT_VERSION = 1
#: What may stand at the top of a file (the kind of the tree's root node): one tensor, or a
#: dict, list or tuple. A plain value on its own is refused.
TOP_LEVEL_KINDS = ("tensor", "dict", "list", "tuple")
#: The devices ``load(..., map_location=...)`` accepts (dt.device's names), and the backend
#: device each one means. dltutor uses at most one GPU, so "cuda" and "cuda:0" both mean "gpu".
MAP_LOCATIONS = {name: "cpu" if kind == "cpu" else "gpu"
                 for name, (kind, _) in devices.DEVICE_NAMES.items()}


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write a tensor, a list/tuple of tensors, a state dict or a checkpoint to a safetensors file.

    ``obj`` is what ``torch.save`` takes in a course: one tensor (``dt.save(x, path)``), a
    list or tuple of them (``dt.save([x, y], path)``), a state dict (``model.state_dict()``,
    names to tensors), or a checkpoint such as
    ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}``.
    The values inside may be dltutor tensors (Parameters included), NumPy or CuPy arrays,
    ``int``, ``float``, ``bool``, ``str``, ``None``, and lists, tuples and dicts of those.
    Anything else raises ``TypeError`` naming where it is and what to save instead (a whole
    Module: ``model.state_dict()``; an optimizer: ``opt.state_dict()``), and so does a plain
    value on its own (put it in a dict: ``dt.save({"epoch": 3}, path)``); a structure nested
    more than 100 levels deep, or one that contains itself, ``ValueError``.
    An empty path, a missing or unwritable folder, or a folder given as the path raises an
    error naming the path; in every case nothing is written.

    The format is safetensors, not pickle: a pickle can run arbitrary code when it is loaded,
    while a safetensors file is just arrays and a JSON header, safe to load from anywhere and
    readable by any safetensors library. See the module docstring for how keys are named (a
    tensor saved on its own is stored under the key ``"tensor"``).

    Saving is atomic: the file is written under a temporary name in the same folder, flushed to
    disk, and only then renamed onto ``path``. If anything fails (or the kernel dies) halfway,
    the previous file at ``path`` is still there, whole.

    >>> import os, tempfile
    >>> import dltutor as dt
    >>> from safetensors.numpy import load_file
    >>> from dltutor.io import save, load
    >>> x, y = dt.arange(4), dt.zeros(4)
    >>> checkpoint = {"model": {"0.weight": dt.ones(2, 2)}, "epoch": 3, "lr": 0.1}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "x-file")
    ...     save(x, path)
    ...     print(load(path), list(load_file(path)))
    ...     save([x, y], path)
    ...     x2, y2 = load(path)
    ...     save(checkpoint, path)
    ...     print(list(load_file(path)))          # what any safetensors reader sees
    ...     print(load(path)["epoch"], load(path)["lr"])
    tensor([0, 1, 2, 3]) ['tensor']
    ['model/0.weight']
    3 0.1
    >>> y2
    tensor([0., 0., 0., 0.])
    """
    if isinstance(obj, (str, os.PathLike)) and not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"save(obj, path) takes the object first and the path second, as "
                        f"torch.save does: dt.save(x, 'x-file'); got the path {obj!r} first")
    path = fspath(path)
    tensors: dict[str, np.ndarray] = {}
    paths: dict[str, tuple] = {}
    tree = encode(obj, (), tensors, paths, set())
    if next(iter(tree)) not in TOP_LEVEL_KINDS:
        raise TypeError(f"save(obj, path) takes a tensor, an array, or a list, tuple or dict of "
                        f"them, got {obj!r:.40} ({type_name(obj)}). In a file a value needs a "
                        "name: put it in a dict, as in dt.save({'epoch': 3, 'lr': 0.1}, path)")
    document = json.dumps({"version": FORMAT_VERSION, "tree": tree}, allow_nan=False,
                          ensure_ascii=False)
    blob = serialize(tensors, metadata={METADATA_KEY: document})
    atomic_write(path, blob)


def load(path: str | os.PathLike, *, as_numpy: bool = False, weights_only: bool | None = True,
         map_location: Any = None) -> Any:
    """Read a file written by :func:`save` (or any safetensors file) back.

    Returns the object that was saved: a tensor for ``dt.save(x, path)``, and otherwise the
    same dicts (in the same order), lists, tuples and plain values, with every array as a new
    dltutor tensor (``dt.tensor`` semantics: the dtype is kept, ``requires_grad`` is False).
    With ``as_numpy=True`` the arrays stay NumPy arrays. A safetensors file from another
    program loads as a flat dict ``name -> tensor``.

    The keywords of ``torch.load`` work as in PyTorch, so code from a PyTorch course runs:

    * ``weights_only``: ``True`` (the default) or ``None``. Loading here is *always*
      weights-only: the file holds only arrays and plain values, and nothing is unpickled, so
      ``weights_only=False`` (PyTorch's way to unpickle any object) raises ``ValueError``.
    * ``map_location``: the device the tensors are made on: ``"cpu"``, ``"gpu"`` (``"cuda"`` and
      ``"cuda:0"`` mean the same), a ``dt.device``, or ``None`` for the current backend. ``"gpu"``
      without CuPy or a GPU raises the backend's ``GPUUnavailableError``. PyTorch's dicts and
      functions are refused: dltutor has the CPU and at most one GPU, so a name says it all.

    Every argument is checked before the file is read. Loading never runs code from the file
    (that is the point of safetensors; a pickle would). The whole file is checked before
    anything is returned; a file that is empty, truncated, corrupt or not safetensors at all
    raises :class:`CheckpointError` naming it, and so does anything but a regular file (a
    named pipe, a device such as /dev/zero), at once, without reading from it. Only the
    header is read whole (after checking its length against the file's size); each tensor is
    then copied out of a memory map of the file, so a load takes the memory of its tensors.

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
    ...     state = load(path, weights_only=True, map_location="cpu")
    ...     raw = load(path, as_numpy=True)
    >>> state["weight"].dtype, state["weight"].device, state["steps"], type(raw["weight"]).__name__
    (dtype('float64'), 'cpu', 7, 'ndarray')
    """
    path = fspath(path)
    if not isinstance(as_numpy, bool):
        raise TypeError(f"load(..., as_numpy=...) takes True or False, got {as_numpy!r}")
    _check_weights_only(weights_only)
    backend = _backend_for(map_location, as_numpy)
    arrays, metadata = read_safetensors(path)
    document = metadata.get(METADATA_KEY)
    if document is None:  # written by another program: a flat state dict
        return {key: finish(array, backend) for key, array in arrays.items()}
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
    if not isinstance(structure, (np.ndarray, dict, list, tuple)):
        raise CheckpointError(path, "corrupt dltutor metadata: the top level is a plain value "
                                    "(dltutor saves a tensor, a list, a tuple or a dict)")
    unused = [key for key in arrays if key not in used]
    if unused:
        raise CheckpointError(path, f"corrupt dltutor metadata: the file holds tensors the "
                                    f"structure does not mention: {unused[:5]}")
    return to_tensors(structure, backend)


def _check_weights_only(weights_only: Any) -> None:
    """Accept PyTorch's ``weights_only=True`` (or None); explain why False means nothing here."""
    if weights_only is None or weights_only is True:
        return
    if weights_only is False:
        raise ValueError("load(..., weights_only=False) asks, as in PyTorch, to unpickle any "
                         "Python object in the file, which can run code from it. dltutor never "
                         "unpickles: its files hold only arrays and plain values (numbers, "
                         "strings, lists, dicts), so every load is weights-only and there is "
                         "nothing more to load. Leave weights_only out, or pass True")
    raise TypeError(f"load(..., weights_only=...) takes True or None (every load is "
                    f"weights-only), got {weights_only!r}")


def _device_of(map_location: Any) -> str:
    """The device ("cpu" or "gpu") a ``map_location`` names, or an error saying what is accepted."""
    accepted = "None (the current backend), " + ", ".join(map(repr, MAP_LOCATIONS))
    if isinstance(map_location, devices.device):     # dt.device("cuda"), as PyTorch's
        map_location = str(map_location)
    if not isinstance(map_location, str):
        raise TypeError(f"load(..., map_location=...) takes a device name: {accepted}; got a "
                        f"{type_name(map_location)}. PyTorch's dicts and functions move tensors "
                        "between GPUs; dltutor has the CPU and at most one GPU, so a name is all "
                        "it needs")
    if map_location not in MAP_LOCATIONS:
        raise ValueError(f"load(..., map_location={map_location!r}): unknown device; choose "
                         f"{accepted} (dltutor uses at most one GPU, so 'cuda' and 'cuda:0' "
                         "both mean 'gpu')")
    return MAP_LOCATIONS[map_location]


def _backend_for(map_location: str | None, as_numpy: bool) -> B.Backend | None:
    """The backend loaded tensors are made on (the current one, or the one ``map_location``
    names), or None to keep NumPy arrays. Asking for the GPU without CuPy raises the backend's
    own GPUUnavailableError, before any file is read."""
    device = None if map_location is None else _device_of(map_location)
    if as_numpy:
        if device == "gpu":
            raise ValueError(f"load(..., as_numpy=True, map_location={map_location!r}): as_numpy "
                             "gives NumPy arrays, which live on the CPU; leave out as_numpy to "
                             "get tensors on the GPU, or leave out map_location")
        return None
    return B.current() if device is None else B.get(device)
