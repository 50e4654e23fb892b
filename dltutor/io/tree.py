"""The structure side of checkpoints: a nested structure of dicts, lists, tuples, arrays and
plain values becomes flat arrays (for the safetensors body) plus one JSON document (for its
metadata), and back. The format is described in :mod:`dltutor.io`.

>>> import numpy as np
>>> tensors = {}
>>> encode({"w": np.ones(2, dtype=np.float32), "epoch": 3}, (), tensors, {}, set())
{'dict': [['w', {'tensor': 'w'}], ['epoch', {'int': 3}]]}
>>> list(tensors)
['w']
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import backend as B
from ..autograd import Tensor
from ..autograd.function import make_tensor
from ..nn.module import Module
from ..optim.optimizer import Optimizer
from .files import CheckpointError

# The dtypes every safetensors reader understands and NumPy can hold.
_SAVABLE_DTYPES = frozenset(np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64"))
#: The flat key of a tensor saved on its own (``dt.save(x, path)``). Every other array's key is
#: made from its path in the structure; a lone tensor has no path, so it gets this name.
SINGLE_TENSOR_KEY = "tensor"


#: How deeply dicts, lists and tuples may nest in a checkpoint. A real one nests 4 or 5 levels;
#: the limit keeps saving and loading far from Python's recursion limit (about 1000 frames).
MAX_DEPTH = 100


def encode(value: Any, path: tuple, tensors: dict, paths: dict, active: set) -> dict:
    """The JSON node for ``value`` at ``path``; arrays found on the way go into ``tensors``
    (``paths`` and ``active`` catch two values on one key, and structures that contain
    themselves)."""
    if len(path) > MAX_DEPTH:
        raise ValueError(f"cannot save {_show(path[:3])}...: dicts, lists and tuples are nested "
                         f"more than {MAX_DEPTH} levels deep; a checkpoint needs a few levels "
                         "(model, optimizer, plain values), so flatten the structure")
    array = _as_numpy(value, path)
    if array is not None:
        key = flat_key(path)
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
                                        f"got the key {k!r} ({type_name(k)})")
                    k = str(k) if isinstance(k, str) else int(k)
                    items.append([k, encode(v, path + (k,), tensors, paths, active)])
                return {"dict": items}
            kind = "tuple" if isinstance(value, tuple) else "list"
            return {kind: [encode(v, path + (i,), tensors, paths, active)
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
    raise TypeError(f"cannot save {_show(path)}: a {type_name(value)} is not a tensor, an array "
                    f"or a plain value (int, float, bool, str, None, or a list/tuple/dict of "
                    f"them). {save_hint(value)}")


def save_hint(value: Any) -> str:
    """What to save instead of ``value``, matched to what it is.

    >>> from dltutor import nn
    >>> "model.state_dict()" in save_hint(nn.Linear(2, 2))
    True
    >>> save_hint(print)
    'Convert it to one of these first, or leave it out.'
    """
    if isinstance(value, Module):
        return ("A model cannot be saved, only its weights: put model.state_dict() in its place "
                "(dt.save(model.state_dict(), path)), and later load them into a model built "
                "the same way with model.load_state_dict(dt.load(path)).")
    if isinstance(value, Optimizer):
        return ("An optimizer cannot be saved, only its state: put opt.state_dict() in its place "
                "(dt.save(opt.state_dict(), path)), and later load it into an optimizer made "
                "the same way with opt.load_state_dict(dt.load(path)).")
    if callable(getattr(value, "state_dict", None)):  # a scheduler, a MultiOptimizer, ...
        return (f"A {type(value).__name__} cannot be saved, only its state: put its "
                "state_dict() in its place, and restore it later with load_state_dict(...).")
    if isinstance(value, (set, frozenset)):  # sets have no order, so files do not hold them
        return "Save sorted(s) or list(s) instead, and make it a set again after loading."
    return "Convert it to one of these first, or leave it out."


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
                        "into a safetensors file; convert it to a bool, int or float dtype "
                        "(object arrays hold Python objects, not numbers)")
    array = array.astype(array.dtype.newbyteorder("<"), copy=False)
    # (not np.ascontiguousarray: it turns a 0-d array into shape (1,))
    return array if array.flags.c_contiguous else array.copy(order="C")


def flat_key(path: tuple) -> str:
    """The safetensors key of the array at ``path`` in the saved structure.

    >>> flat_key(("model", "0.weight")), flat_key(("optimizer", "state", 0)), flat_key(())
    ('model/0.weight', 'optimizer/state/0', 'tensor')
    """
    if not path:
        return SINGLE_TENSOR_KEY
    return "/".join(_escape(str(part)) for part in path)


def _escape(part: str) -> str:
    """One path part as it appears in a flat key (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return part.replace("~", "~0").replace("/", "~1")


def _show(path: tuple) -> str:
    """A path as the Python expression that reaches it, e.g. ``obj['model']['0.weight']``."""
    return "obj" + "".join(f"[{part!r}]" for part in path)


def type_name(value: Any) -> str:
    """A value's type as error messages name it: ``int``, ``numpy.ndarray``.

    >>> import numpy as np
    >>> type_name(3), type_name(np.zeros(1))
    ('int', 'numpy.ndarray')
    """
    cls = type(value)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def decode(node: Any, arrays: dict, used: set, path: str, depth: int = 0) -> Any:
    """The value a metadata node stands for (arrays still NumPy); raises on anything malformed.
    Each tensor may be named once: save never shares one between two places, and a file that
    did would load two tensors sharing memory (changing one would change the other)."""
    if not isinstance(node, dict) or len(node) != 1:
        raise CheckpointError(path, f"corrupt dltutor metadata: bad node {node!r:.80}")
    if depth > MAX_DEPTH:
        raise CheckpointError(path, f"corrupt dltutor metadata: nested more than {MAX_DEPTH} "
                                    "levels deep (dltutor never saves such a structure)")
    (kind, body), = node.items()
    if kind == "tensor":
        if not isinstance(body, str) or body not in arrays:
            raise CheckpointError(path, f"corrupt dltutor metadata: the tensor {body!r:.80} is "
                                        "missing from the file")
        if body in used:
            raise CheckpointError(path, f"corrupt dltutor metadata: the tensor {body!r} is named "
                                        "twice in the structure")
        used.add(body)
        return arrays[body]
    if kind == "dict" and isinstance(body, list):
        out = {}
        for item in body:
            if (not isinstance(item, list) or len(item) != 2 or isinstance(item[0], bool)
                    or not isinstance(item[0], (str, int))):
                raise CheckpointError(path, f"corrupt dltutor metadata: bad dict item {item!r:.80}")
            out[item[0]] = decode(item[1], arrays, used, path, depth + 1)
        return out
    if kind in ("list", "tuple") and isinstance(body, list):
        values = [decode(item, arrays, used, path, depth + 1) for item in body]
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


def to_tensors(value: Any, backend: B.Backend | None) -> Any:
    """The decoded structure with every array as a new tensor on ``backend`` (None: kept NumPy)."""
    if isinstance(value, np.ndarray):
        return finish(value, backend)
    if isinstance(value, dict):
        return {k: to_tensors(v, backend) for k, v in value.items()}
    if isinstance(value, list):
        return [to_tensors(v, backend) for v in value]
    if isinstance(value, tuple):
        return tuple(to_tensors(v, backend) for v in value)
    return value


def finish(array: np.ndarray, backend: B.Backend | None) -> Any:
    """One loaded array as a new tensor on ``backend``, or a writable NumPy array when None."""
    if not array.flags.writeable:
        array = array.copy()
    if backend is None:
        return array
    # What dt.tensor(array) gives (same dtype, requires_grad False), without a second copy on
    # the CPU: the array is already the file's own fresh copy.
    return make_tensor(backend.asarray(array))
