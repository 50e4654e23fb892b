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

import contextlib
import json
import math
import os
import secrets
from typing import Any

import numpy as np

from . import backend as B
from .autograd.tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

#: The safetensors metadata key under which dltutor stores its JSON document.
METADATA_KEY = "dltutor"
#: The version of that JSON document; ``load`` refuses versions it does not know.
FORMAT_VERSION = 1

# The dtypes every safetensors reader understands and NumPy can hold.
_SAVABLE_DTYPES = frozenset(np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64"))
_SAFETENSORS_DTYPE_NAMES = {"BOOL": "bool", "I8": "int8", "I16": "int16", "I32": "int32",
                            "I64": "int64", "U8": "uint8", "U16": "uint16", "U32": "uint32",
                            "U64": "uint64", "F16": "float16", "F32": "float32", "F64": "float64"}
# safetensors refuses headers above 100 MB; a larger length field means "not a safetensors file".
_MAX_HEADER_BYTES = 100_000_000
_SAVE_HINT = ("Save the model's weights instead of the model: dt.save(model.state_dict(), path) "
              "(and opt.state_dict() for an optimizer).")


class CheckpointError(ValueError):
    """A file that cannot be loaded: not a safetensors file, truncated, or corrupt.

    ``err.path`` is the file. Nothing is returned from a file that fails any check.

    >>> import os, tempfile
    >>> from dltutor.io import load, CheckpointError
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "notes.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("these are not weights")
    ...     try:
    ...         load(path)
    ...     except CheckpointError as err:
    ...         print(str(err).split(": ", 1)[1])
    not a safetensors file (a safetensors file starts with an 8-byte header length followed by a JSON header '{...}')
    """

    def __init__(self, path: str, problem: str):
        super().__init__(f"cannot load {path!r}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self) -> tuple:  # so the error survives pickling between processes
        return type(self), (self.path, self.problem)


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------
def save(obj: Any, path: str | os.PathLike) -> None:
    """Write a state dict, or a nested dict of tensors and plain values, to a safetensors file.

    ``obj`` is a dict: typically ``model.state_dict()`` (names to tensors), or a checkpoint
    such as ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}``.
    Its values may be dltutor tensors (Parameters included), NumPy or CuPy arrays, ``int``,
    ``float``, ``bool``, ``str``, ``None``, and lists, tuples and dicts of those. Anything else
    (a whole Module, a function, an object array) raises ``TypeError`` naming where it is.

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
    path = _fspath(path)
    if not isinstance(obj, dict):
        raise TypeError(f"save() takes a dict (a state dict or a nested checkpoint dict), got "
                        f"{_type_name(obj)}. {_SAVE_HINT}")
    tensors: dict[str, np.ndarray] = {}
    paths: dict[str, tuple] = {}
    tree = _encode(obj, (), tensors, paths, set())
    document = json.dumps({"version": FORMAT_VERSION, "tree": tree}, allow_nan=False,
                          ensure_ascii=False)
    from safetensors.numpy import save as serialize

    blob = serialize(tensors, metadata={METADATA_KEY: document})
    _atomic_write(path, blob)


def _encode(value: Any, path: tuple, tensors: dict, paths: dict, active: set) -> dict:
    """The JSON node for ``value``; arrays found on the way go into ``tensors``."""
    array = _as_numpy(value, path)
    if array is not None:
        key = "/".join(_escape(str(part)) for part in path)
        if key == "__metadata__":
            raise ValueError(f"cannot save {_show(path)}: '__metadata__' is reserved by the "
                             "safetensors format; rename this entry")
        if key in paths:
            raise ValueError(f"cannot save both {_show(paths[key])} and {_show(path)}: both would "
                             f"be stored under the key {key!r} (an int key and the same number "
                             "as a str key); use one kind of key")
        tensors[key] = array
        paths[key] = path
        return {"tensor": key}
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            raise ValueError(f"cannot save {_show(path)}: it contains itself")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                items = []
                for k, v in value.items():
                    if isinstance(k, bool) or not isinstance(k, (str, int)):
                        raise TypeError(f"cannot save {_show(path)}: dict keys must be str or int, "
                                        f"got the key {k!r} ({_type_name(k)})")
                    k = str(k) if isinstance(k, str) else int(k)
                    items.append([k, _encode(v, path + (k,), tensors, paths, active)])
                return {"dict": items}
            kind = "tuple" if isinstance(value, tuple) else "list"
            return {kind: [_encode(v, path + (i,), tensors, paths, active)
                           for i, v in enumerate(value)]}
        finally:
            active.discard(id(value))
    if isinstance(value, np.generic):  # NumPy scalars are stored as Python scalars
        scalar = value.item()
        if isinstance(scalar, (bool, int, float, str)):
            value = scalar
    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": int(value)}
    if isinstance(value, float):
        value = float(value)
        if math.isnan(value):
            return {"float": "nan"}
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        return {"float": value}
    if isinstance(value, str):
        return {"str": str(value)}
    raise TypeError(f"cannot save {_show(path)}: a {_type_name(value)} is not a tensor, an array "
                    f"or a plain value (int, float, bool, str, None, or a list/tuple/dict of "
                    f"them). {_SAVE_HINT}")


def _as_numpy(value: Any, path: tuple) -> np.ndarray | None:
    """``value`` as a contiguous little-endian NumPy array, or None when it is not an array."""
    if isinstance(value, Tensor):
        array = B.to_numpy(value.data)
    elif B.backend_of(value) is not None:
        array = B.to_numpy(value)
    elif type(value).__module__.split(".")[0] == "cupy" and hasattr(value, "get"):
        array = value.get()  # a CuPy array made before dltutor's GPU backend was switched on
    else:
        return None
    array = np.asarray(array)
    if type(array) is not np.ndarray:  # an ndarray subclass (a marker, a matrix)
        array = array.view(np.ndarray)
    if array.dtype.newbyteorder("=") not in _SAVABLE_DTYPES:
        raise TypeError(f"cannot save {_show(path)}: an array of dtype {array.dtype} cannot go "
                        "into a safetensors file; use a bool, int or float dtype (object arrays "
                        f"hold Python objects, not numbers). {_SAVE_HINT}")
    array = array.astype(array.dtype.newbyteorder("<"), copy=False)
    # (not np.ascontiguousarray: it turns a 0-d array into shape (1,))
    return array if array.flags.c_contiguous else array.copy(order="C")


def _escape(part: str) -> str:
    """One path part as it appears in a flat key (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return part.replace("~", "~0").replace("/", "~1")


def _show(path: tuple) -> str:
    """A path as the Python expression that reaches it, e.g. ``obj['model']['0.weight']``."""
    return "obj" + "".join(f"[{part!r}]" for part in path)


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _fspath(path: Any) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"path must be a str or os.PathLike, got {_type_name(path)}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return path


def _atomic_write(path: str, blob: bytes) -> None:
    """Write ``blob`` to a temporary file next to ``path``, fsync it, then rename it onto ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot save to {path!r}: the folder {folder!r} does not exist; "
                                "create it first (os.makedirs(folder, exist_ok=True))")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save to {path!r}: it is a folder; give a file name such "
                                "as 'model.safetensors'")
    temp, fd = _create_temp(folder, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as file:
            _write_all(file, blob)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(folder)


def _create_temp(folder: str, name: str) -> tuple[str, int]:
    """A new, empty, uniquely named hidden file in ``folder`` (permissions follow the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return temp, os.open(temp, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file in {folder!r}")  # pragma: no cover


def _write_all(file: Any, blob: bytes) -> None:
    file.write(blob)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------
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
    path = _fspath(path)
    arrays, metadata = _read_safetensors(path)
    document = metadata.get(METADATA_KEY)
    if document is None:  # written by another program: a flat state dict
        return {key: _finish(array, as_numpy) for key, array in arrays.items()}
    try:
        document = json.loads(document)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(path, f"corrupt dltutor metadata: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or "tree" not in document:
        raise CheckpointError(path, "corrupt dltutor metadata: no 'tree' entry")
    version = document.get("version")
    if version != FORMAT_VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise CheckpointError(path, f"written by a newer dltutor (format version {version}; "
                                        f"this one reads version {FORMAT_VERSION}); upgrade dltutor")
        raise CheckpointError(path, f"corrupt dltutor metadata: unknown format version {version!r}")
    used: set[str] = set()
    # First rebuild the structure with NumPy arrays, checking every node; only then convert.
    structure = _decode(document["tree"], arrays, used, path)
    unused = [key for key in arrays if key not in used]
    if unused:
        raise CheckpointError(path, f"corrupt dltutor metadata: the file holds tensors the "
                                    f"structure does not mention: {unused[:5]}")
    if not isinstance(structure, dict):
        raise CheckpointError(path, "corrupt dltutor metadata: the top level is not a dict")
    return _convert(structure, as_numpy)


def _read_safetensors(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every array in the file (in header order) and its metadata, after checking the layout."""
    import errno

    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, f"No such file (the current folder is "
                                              f"{os.getcwd()!r})", path)
    with open(path, "rb") as file:
        data = file.read()
    size = len(data)
    if size == 0:
        raise CheckpointError(path, "the file is empty (0 bytes)")
    if size < 8:
        raise CheckpointError(path, f"truncated or not a safetensors file: it has only {size} "
                                    "bytes, fewer than the 8-byte header length it starts with")
    header_len = int.from_bytes(data[:8], "little")
    if header_len > _MAX_HEADER_BYTES or header_len < 2 or (size > 8 and data[8:9] != b"{"):
        raise CheckpointError(path, _not_safetensors(data))
    if 8 + header_len > size:
        raise CheckpointError(path, f"truncated: header says {header_len} bytes but file has "
                                    f"{size - 8} after the 8-byte length (the save was cut off, "
                                    "or the copy is incomplete)")
    try:
        header = json.loads(data[8:8 + header_len].decode("utf-8"))
    except ValueError as exc:
        raise CheckpointError(path, f"corrupt safetensors header: not valid JSON ({exc})") from None
    if not isinstance(header, dict):
        raise CheckpointError(path, "corrupt safetensors header: not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise CheckpointError(path, "corrupt safetensors header: '__metadata__' is not an object")
    body = size - 8 - header_len
    end = 0
    for key, info in header.items():
        try:
            start, stop = info["data_offsets"]
            dtype = info["dtype"]
            end = max(end, int(stop))
        except (TypeError, KeyError, ValueError):
            raise CheckpointError(path, f"corrupt safetensors header: bad entry for {key!r}: "
                                        f"{info!r}") from None
        if dtype not in _SAFETENSORS_DTYPE_NAMES:
            raise CheckpointError(path, f"the tensor {key!r} has dtype {dtype}, which NumPy cannot "
                                        "hold (bfloat16 and float8 weights need PyTorch or JAX)")
    if end > body:
        raise CheckpointError(path, f"truncated: header says the tensor data is {end} bytes but "
                                    f"file has {body} after the header (the save was cut off, or "
                                    "the copy is incomplete)")
    from safetensors.numpy import load as deserialize

    try:
        loaded = deserialize(data)
    except Exception as exc:  # safetensors checks offsets, shapes and overlaps
        raise CheckpointError(path, f"corrupt safetensors file: {exc}") from None
    arrays = {key: loaded[key] for key in header}
    return arrays, {str(k): v for k, v in metadata.items()}


def _not_safetensors(data: bytes) -> str:
    """Why ``data`` is not a safetensors file, recognising the usual suspects."""
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return ("not a safetensors file: it looks like a pickle (for example from pickle.dump or "
                "an old torch.save). dltutor never loads pickles, because loading one can run "
                "arbitrary code")
    if data[:4] == b"PK\x03\x04":
        return ("not a safetensors file: it is a zip archive (torch.save writes these). Convert "
                "it once in PyTorch with safetensors.torch.save_file(state_dict, "
                "'model.safetensors')")
    return ("not a safetensors file (a safetensors file starts with an 8-byte header length "
            "followed by a JSON header '{...}')")


def _decode(node: Any, arrays: dict, used: set, path: str) -> Any:
    """The value a metadata node stands for (arrays still NumPy); raises on anything malformed."""
    if not isinstance(node, dict) or len(node) != 1:
        raise CheckpointError(path, f"corrupt dltutor metadata: bad node {node!r:.80}")
    (kind, body), = node.items()
    if kind == "tensor":
        if body not in arrays:
            raise CheckpointError(path, f"corrupt dltutor metadata: the tensor {body!r} is "
                                        "missing from the file")
        used.add(body)
        return arrays[body]
    if kind == "dict" and isinstance(body, list):
        out = {}
        for item in body:
            if (not isinstance(item, list) or len(item) != 2 or isinstance(item[0], bool)
                    or not isinstance(item[0], (str, int))):
                raise CheckpointError(path, f"corrupt dltutor metadata: bad dict item {item!r:.80}")
            out[item[0]] = _decode(item[1], arrays, used, path)
        return out
    if kind in ("list", "tuple") and isinstance(body, list):
        values = [_decode(item, arrays, used, path) for item in body]
        return tuple(values) if kind == "tuple" else values
    if kind == "none" and body is None:
        return None
    if kind == "bool" and isinstance(body, bool):
        return body
    if kind == "int" and isinstance(body, int) and not isinstance(body, bool):
        return body
    if kind == "float":
        if isinstance(body, str) and body in ("inf", "-inf", "nan"):
            return float(body)
        if isinstance(body, (int, float)) and not isinstance(body, bool):
            return float(body)
    if kind == "str" and isinstance(body, str):
        return body
    raise CheckpointError(path, f"corrupt dltutor metadata: bad node {node!r:.80}")


def _convert(value: Any, as_numpy: bool) -> Any:
    if isinstance(value, np.ndarray):
        return _finish(value, as_numpy)
    if isinstance(value, dict):
        return {k: _convert(v, as_numpy) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v, as_numpy) for v in value]
    if isinstance(value, tuple):
        return tuple(_convert(v, as_numpy) for v in value)
    return value


def _finish(array: np.ndarray, as_numpy: bool) -> Any:
    if not array.flags.writeable:
        array = array.copy()
    if as_numpy:
        return array
    # What dt.tensor(array) gives (same dtype, requires_grad False, current backend), without
    # a second copy on the CPU: the array is already the file's own fresh copy.
    return Tensor._from_array(B.current().asarray(array))
