"""The file side of checkpoints: writing one atomically, and reading a safetensors file back
only after checking its whole layout, so that an empty, truncated, corrupt or foreign file
fails with a :class:`CheckpointError` naming it and nothing half-read is returned.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "x.bin")
...     atomic_write(path, b"hello")
...     open(path, "rb").read()
b'hello'
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from typing import Any

import numpy as np

# The safetensors dtype names NumPy can hold.
SAFETENSORS_DTYPE_NAMES = {"BOOL": "bool", "I8": "int8", "I16": "int16", "I32": "int32",
                           "I64": "int64", "U8": "uint8", "U16": "uint16", "U32": "uint32",
                           "U64": "uint64", "F16": "float16", "F32": "float32", "F64": "float64"}
# safetensors refuses headers above 100 MB; a larger length field means "not a safetensors file".
_MAX_HEADER_BYTES = 100_000_000


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


def fspath(path: Any) -> str:
    """``path`` (a str, bytes or os.PathLike) as a str, or a TypeError that says what it got."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise ValueError("the path is empty (''); give a file name such as 'model.safetensors'")
    if "\x00" in path:
        raise ValueError(f"the path {path!r} contains a NUL character ('\\x00'), which no "
                         "file name can hold; check how the path was built")
    return path


def atomic_write(path: str, blob: bytes) -> None:
    """Write ``blob`` to a temporary file next to ``path``, fsync it, then rename it onto ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise NotADirectoryError(f"cannot save to {path!r}: {folder!r} is a file, not a folder; "
                                 "choose another file name or folder")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot save to {path!r}: the folder {folder!r} does not exist; "
                                "create it first (os.makedirs(folder, exist_ok=True))")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save to {path!r}: it is a folder; give a file name such "
                                "as 'model.safetensors'")
    try:
        temp, fd = _create_temp(folder, os.path.basename(path))
    except OSError as exc:
        raise _cannot_write(path, folder, exc) from exc
    try:
        with os.fdopen(fd, "wb") as file:
            _write_all(file, blob)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.replace(temp, path)
        except (IsADirectoryError, PermissionError) as exc:
            raise _cannot_write(path, folder, exc) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(folder)


def _cannot_write(path: str, folder: str, exc: OSError) -> OSError:
    """The same kind of OSError as ``exc``, saying which path could not be written and why."""
    return type(exc)(exc.errno, f"cannot save to {path!r}: could not write a file in the folder "
                                f"{folder!r} ({exc.strerror or exc}); nothing was written there. "
                                "Save into a folder you can write to, such as your home folder")


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


def read_safetensors(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every array in the file (in header order) and its metadata, after checking the layout.

    Only a regular file is opened (a pipe or a device could block or never end), and only its
    header is read whole, after checking its length against the file's real size: a header
    that claims more data than the file holds is refused before anything is allocated. The
    tensors are then copied one by one out of safetensors' memory map of the file, so loading
    takes the memory of the tensors themselves, not of the file twice over.
    """
    with _open_regular_file(path) as file:
        header, metadata = _read_header(file, os.fstat(file.fileno()).st_size, path)
        arrays = _read_tensors(_reopenable(file.fileno(), path), header, path)
    return arrays, metadata


def _read_header(file: Any, size: int, path: str) -> tuple[dict, dict[str, str]]:
    """The header's tensor entries (checked) and its metadata, reading only the header."""
    if size == 0:
        raise CheckpointError(path, "the file is empty (0 bytes)")
    if size < 8:
        raise CheckpointError(path, f"truncated or not a safetensors file: it has only {size} "
                                    "bytes, fewer than the 8-byte header length it starts with")
    start = file.read(9)                    # the header length, and the header's first byte
    header_len = int.from_bytes(start[:8], "little")
    if header_len > _MAX_HEADER_BYTES or header_len < 2 or (size > 8 and start[8:9] != b"{"):
        raise CheckpointError(path, _not_safetensors(start))
    if 8 + header_len > size:
        raise CheckpointError(path, f"truncated: header says {header_len} bytes but file has "
                                    f"{size - 8} after the 8-byte length (the save was cut off, "
                                    "or the copy is incomplete)")
    header = parse_json(start[8:] + file.read(header_len - 1), path, "safetensors header")
    if not isinstance(header, dict):
        raise CheckpointError(path, "corrupt safetensors header: not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise CheckpointError(path, "corrupt safetensors header: '__metadata__' must be an "
                                    "object whose values are strings")
    for key, info in header.items():
        problem = _entry_problem(info)
        if problem:
            raise CheckpointError(path, f"corrupt safetensors header: the entry for {key!r} "
                                        f"{problem}: {info!r:.200}")
        if info["dtype"] not in SAFETENSORS_DTYPE_NAMES:
            raise CheckpointError(path, f"the tensor {key!r} has dtype {info['dtype']!r}, which "
                                        "NumPy cannot hold (bfloat16 and float8 weights need "
                                        "PyTorch or JAX)")
    body = size - 8 - header_len
    end = max((info["data_offsets"][1] for info in header.values()), default=0)
    if end > body:
        raise CheckpointError(path, f"truncated: header says the tensor data is {end} bytes but "
                                    f"file has {body} after the header (the save was cut off, or "
                                    "the copy is incomplete)")
    return header, {str(k): v for k, v in metadata.items()}


def _read_tensors(source: str, header: dict, path: str) -> dict[str, np.ndarray]:
    """Each tensor of ``header``, copied out of safetensors' lazy view of the file ``source``."""
    from safetensors import safe_open

    try:   # safetensors checks the offsets against the shapes, overlaps and the file's size
        with safe_open(source, framework="np") as file:
            return {key: file.get_tensor(key) for key in header}
    except Exception as exc:
        raise CheckpointError(path, f"corrupt safetensors file: {exc}") from None


def _open_regular_file(path: str) -> Any:
    """``path`` opened for reading in binary, if it is a regular file (or a link to one).

    Anything else is refused at once, naming ``path``: a folder, a missing file, and a pipe,
    a device or a socket (reading /dev/zero never ends; opening a FIFO waits for a writer).
    The file is opened without waiting (O_NONBLOCK) and checked again once open, in case
    something else was put under its name in between.
    """
    try:
        _refuse_unless_regular(path, os.stat(path))
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"cannot load {path!r}: no such file (the current "
                                              f"folder is {os.getcwd()!r}); check the name, or "
                                              "write the file first with dt.save(obj, path)"
                                ) from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        _refuse_unless_regular(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _refuse_unless_regular(path: str, info: os.stat_result) -> None:
    """Raise, naming ``path``, unless ``info`` (its stat) is a regular file's."""
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"cannot load {path!r}: it is a folder; give the "
                                              "path of a .safetensors file inside it")
    kind = next((name for test, name in _SPECIAL_FILES if test(info.st_mode)), "special file")
    raise CheckpointError(path, f"it is a {kind}, not a regular file. dt.load reads only "
                                "regular files (such as a .safetensors file written by dt.save): "
                                "reading a pipe or a device could wait for ever or never end")


_SPECIAL_FILES = [(stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                  (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")]


def _reopenable(fd: int, path: str) -> str:
    """A name safetensors can open that means the file already open as ``fd``: /dev/fd/N where
    the system has it (so a file put under ``path`` since it was checked is not read), else
    ``path`` (Windows, which has no FIFOs or devices under file names)."""
    alias = f"/dev/fd/{fd}"
    return alias if os.path.exists(alias) else path


def parse_json(text: bytes | str, path: str, what: str) -> Any:
    """``text`` parsed as JSON, or a CheckpointError naming ``path`` (nesting deep enough to
    exhaust Python's recursion is corruption too: no file dltutor writes comes near it)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, object_pairs_hook=_unique_keys)
    except ValueError as exc:
        raise CheckpointError(path, f"corrupt {what}: not valid JSON ({exc})") from None
    except RecursionError:
        raise CheckpointError(path, f"corrupt {what}: its JSON is nested too deeply to "
                                    "read") from None


def _unique_keys(pairs: list) -> dict:
    """A JSON object as a dict, refusing a key given twice (which one would a reader take?)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])
        raise ValueError(f"the key {twice!r} appears twice in one object")
    return out


def _is_count(value: Any) -> bool:
    """A JSON integer >= 0 (not true/false, not 4.0, not "4")."""
    return type(value) is int and value >= 0


def _entry_problem(info: Any) -> str:
    """What is wrong with one tensor's header entry, or "" when its fields are well formed.
    (That the offsets fit the shape, and the tensors do not overlap, safetensors checks.)"""
    if not isinstance(info, dict):
        return "is not an object"
    missing = [k for k in ("dtype", "shape", "data_offsets") if k not in info]
    if missing:
        return f"has no {missing[0]!r}"
    if not isinstance(info["dtype"], str):
        return "has a dtype that is not a string"
    shape = info["shape"]
    if not isinstance(shape, list) or not all(_is_count(n) for n in shape):
        return "has a shape that is not a list of integers >= 0"
    offsets = info["data_offsets"]
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))):
        return "has data_offsets that are not two integers >= 0"
    if offsets[0] > offsets[1]:
        return "has data_offsets that end before they start"
    return ""


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
