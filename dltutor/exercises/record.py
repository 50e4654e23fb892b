"""Progress that lasts: each check and hint is written to one small JSON file per learner.

The file, ``.dltutor-progress.json``, sits in the folder the notebook runs in (a learner's copy
of the chapters; on a class hub, inside the student's home). It is read back when the exercises
are imported, so ``progress()`` survives a kernel restart, and a teacher's
``dltutor progress DIR ...`` reads it (see :mod:`dltutor.exercises.classtable`).

* Writing never gets in a check's way: if the folder cannot be written, the verdict is shown
  anyway and progress stays in memory.
* Two kernels of one learner (two notebooks open) take turns: each reads, updates and writes
  the file while holding a lock on ``.dltutor-progress.json.lock`` beside it, so neither
  loses the other's checks. The new file is written beside the old one and renamed over it:
  a reader never sees half a file.
* A damaged file (not JSON, not a progress file, far too large) is never overwritten: it is
  renamed to ``.dltutor-progress.json.damaged-<date>-<time>``, kept, and named in a one-line
  note; the next check starts a new file. A file that cannot be read at all (no permission,
  not a regular file) is left as it is, and progress stays in memory.
* ``DLTUTOR_PROGRESS`` names another file, or ``off`` keeps progress in memory only (the tests
  set it, so that running the notebooks writes nothing into the repository).

>>> import json, os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, FILE_NAME)
>>> save_entry(path, "01.1", status="correct", hints=1)
True
>>> entry = load(path)["01.1"]
>>> entry["status"], entry["hints"], entry["checks"], entry["solved"]
('correct', 1, 1, True)
"""
from __future__ import annotations

import datetime
import errno
import getpass
import json
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any

import filelock

from ..i18n import text

#: The name of a learner's progress file, in the folder the notebooks run in.
FILE_NAME = ".dltutor-progress.json"
#: The statuses a progress file may hold for an exercise, best first.
STATUSES = ("correct", "not yet", "not attempted", "not checked")
#: The largest progress file read (1 MB): a real one is a few KB, so a larger one is not one,
#: and reading no more than this keeps a huge file from costing memory.
MAX_BYTES = 1_000_000
#: Seconds a check waits for another kernel that is writing the same file; after that, this
#: check's progress stays in memory rather than keep the learner waiting.
LOCK_SECONDS = 5.0
_VERSION = 1


class ProgressFileError(Exception):
    """A progress file that cannot be used; the message says why, in a few words."""


class UnreadableFile(ProgressFileError):
    """The file cannot be read: no permission, not a regular file, an error of the disk."""


class DamagedFile(ProgressFileError):
    """The file was read, but it is not a progress file: not JSON, the wrong shape, too large."""


def default_path() -> str | None:
    """Where this learner's progress goes: ``DLTUTOR_PROGRESS``, or the file in the current
    folder; None when ``DLTUTOR_PROGRESS=off``."""
    chosen = os.environ.get("DLTUTOR_PROGRESS", "").strip()
    if chosen.lower() == "off":
        return None
    return chosen or os.path.join(os.getcwd(), FILE_NAME)


def the_file() -> str | None:
    """This kernel's progress file, chosen when the exercises are first imported (a chapter
    that changes the working folder later does not move it)."""
    global _chosen
    if _chosen is _UNSET:
        _chosen = default_path()
    return _chosen


_UNSET = object()
_chosen: Any = _UNSET


# -- reading: shared with the teacher's class table, which must never change a file -----------
def read_bounded(path: str | os.PathLike, limit: int = MAX_BYTES, *,
                 follow_links: bool = True) -> tuple[bytes, os.stat_result]:
    """The first ``limit + 1`` bytes at most of the regular file at ``path`` (more than
    ``limit`` of them: the file is too large), and the file's status (``st_dev``, ``st_ino``
    tell one file from another). Raises FileNotFoundError when there is no file, and
    UnreadableFile for anything but a readable regular file; with ``follow_links=False`` a
    symbolic link is refused too.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ten bytes")
    >>> with open(path, "wb") as out:
    ...     _ = out.write(b"0123456789")
    >>> read_bounded(path, limit=4)[0]
    b'01234'
    """
    # O_NONBLOCK: opening a FIFO must not wait for a writer that never comes (fstat then
    # refuses it, as it refuses a device); it changes nothing for a regular file.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise UnreadableFile(_why(error)) from error
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(text("progress.why.not_regular"))
        return _read_up_to(handle, limit + 1), info
    except OSError as error:
        raise UnreadableFile(_why(error)) from error
    finally:
        os.close(handle)


def _read_up_to(handle: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = os.read(handle, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _why(error: OSError) -> str:
    if error.errno == errno.ELOOP:      # what O_NOFOLLOW answers for a link
        return "a symbolic link (not followed)"
    return (error.strerror or str(error)).lower()


def parse_entries(data: bytes, limit: int = MAX_BYTES) -> dict[str, dict[str, Any]]:
    """The exercises recorded in a progress file's bytes; raises DamagedFile when they are not
    a progress file. Entries the kit cannot use (an unknown status) are left out.

    >>> parse_entries(b'{"exercises": {"01.1": {"status": "correct", "hints": 0}}}')
    {'01.1': {'status': 'correct', 'hints': 0}}
    >>> parse_entries(b'{"exercises": {"01.1": {"status": "corr')
    Traceback (most recent call last):
    ...
    dltutor.exercises.record.DamagedFile: not valid JSON
    """
    return parse_progress(data, limit)[0]


#: The longest learner name read from a file: a user name is short, and a student's file
#: must not put a page of text into a teacher's table.
MAX_LEARNER = 64


def parse_progress(data: bytes, limit: int = MAX_BYTES) -> tuple[dict[str, dict[str, Any]], str]:
    """A progress file's entries (see :func:`parse_entries`) and the learner it records ("" when
    it records none, or something that is not a name of at most MAX_LEARNER characters).

    >>> parse_progress(b'{"learner": "ana", "exercises": {}}')
    ({}, 'ana')
    >>> parse_progress(b'{"learner": ["not", "a", "name"], "exercises": {}}')
    ({}, '')
    """
    if len(data) > limit:
        raise DamagedFile(text("progress.why.too_large", limit=limit))
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedFile(text("progress.why.not_utf8")) from None
    except RecursionError:             # "[[[[...": json recurses once per level
        raise DamagedFile(text("progress.why.too_deep")) from None
    except ValueError:
        raise DamagedFile(text("progress.why.not_json")) from None
    exercises = document.get("exercises") if isinstance(document, dict) else None
    if not isinstance(exercises, dict):
        raise DamagedFile(text("progress.why.no_table"))
    learner = document.get("learner", "")
    if not isinstance(learner, str) or len(learner) > MAX_LEARNER:
        learner = ""
    return {key: entry for key, entry in exercises.items() if _valid(entry)}, learner.strip()


def _valid(entry: Any) -> bool:
    """An entry the kit can use: a known status, whole counts, the right kinds of values."""
    def count(key: str) -> bool:
        value = entry.get(key, 0)
        return isinstance(value, int) and value >= 0

    return (isinstance(entry, dict) and entry.get("status") in STATUSES
            and count("hints") and count("checks")
            and isinstance(entry.get("solved", False), bool)
            and isinstance(entry.get("updated", ""), str))


def read_entries(path: str | os.PathLike, *,
                 follow_links: bool = True) -> tuple[dict[str, dict[str, Any]], os.stat_result]:
    """The entries of the progress file at ``path`` and its status, reading it only (see
    :func:`read_bounded` and :func:`parse_entries` for what it raises)."""
    entries, _, info = read_progress(path, follow_links=follow_links)
    return entries, info


def read_progress(path: str | os.PathLike, *, follow_links: bool = True
                  ) -> tuple[dict[str, dict[str, Any]], str, os.stat_result]:
    """:func:`read_entries`, with the learner the file records between entries and status."""
    try:
        data, info = read_bounded(path, follow_links=follow_links)
        return (*parse_progress(data), info)
    except MemoryError:
        raise UnreadableFile(text("progress.why.no_memory")) from None


# -- the learner's side: reading back, and saving each check -------------------------------
def load(path: str | os.PathLike | None) -> dict[str, dict[str, Any]]:
    """The exercises recorded in the file at ``path`` (``{"01.1": {"status": ..., "hints": ...,
    "checks": ..., "updated": ...}}``); an empty dict when there is no file or it cannot be read.
    Never raises on a learner: a damaged file is renamed aside and kept (see the top of this
    module), one that cannot be read is left as it is.

    >>> load(None)
    {}
    """
    if path is None:
        return {}
    try:
        return read_entries(path)[0]
    except DamagedFile:
        try:
            with _lock(path):          # another kernel may have just replaced it: read again
                return _entries_to_update(path) or {}
        except (OSError, filelock.Timeout):   # no lock, or a folder we cannot write: leave it
            return {}
    except (OSError, ProgressFileError):
        return {}


def save_entry(path: str | os.PathLike | None, exercise_id: str, **changes: Any) -> bool:
    """Update one exercise's entry (``status``, ``hints``) in the file at ``path``, counting a
    check when ``status`` is given; True when the file was written. Never raises: a folder that
    cannot be written, a file that cannot be read, or another kernel holding the lock for more
    than LOCK_SECONDS leave this progress in memory only.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), FILE_NAME)
    >>> save_entry(path, "01.2", hints=1), load(path)["01.2"]["checks"]
    (True, 0)
    """
    if path is None:
        return False
    try:
        with _lock(path):
            entries = _entries_to_update(path)
            if entries is None:
                return False
            _update(entries, exercise_id, changes)
            document = {"version": _VERSION, "learner": _learner(), "exercises": entries}
            write_atomically(path, json.dumps(document, indent=1, sort_keys=True))
    except (OSError, filelock.Timeout):   # Timeout: another kernel kept the lock
        return False
    return True


def _lock(path: str | os.PathLike) -> filelock.FileLock:
    """The lock every kernel takes before reading a progress file to change it."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):       # FileLock would make the folder: that is not ours to do
        raise FileNotFoundError(f"no folder {folder} for the progress file")
    return filelock.FileLock(f"{os.fspath(path)}.lock", timeout=LOCK_SECONDS)


def _entries_to_update(path: str | os.PathLike) -> dict[str, dict[str, Any]] | None:
    """The entries to update, read while holding the lock: none yet when there is no file, or
    when it was damaged (then it is renamed aside first); None when it cannot be read, so that
    it is never overwritten."""
    try:
        return read_entries(path)[0]
    except FileNotFoundError:
        return {}
    except DamagedFile:
        _set_aside(path)
        return {}
    except (OSError, UnreadableFile):
        return None


def _set_aside(path: str | os.PathLike) -> None:
    """Rename a damaged progress file to a name of its own, and tell the learner once."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    kept = f"{os.fspath(path)}.damaged-{stamp}"
    number = 1
    while os.path.lexists(kept):        # never over an earlier one (the lock keeps our own
        number += 1                     # kernels from taking the same name meanwhile)
        kept = f"{os.fspath(path)}.damaged-{stamp}-{number}"
    os.rename(path, kept)
    print(text("exercise.progress_damaged", path=os.fspath(path), kept=os.path.basename(kept)),
          file=sys.stderr)


def _update(entries: dict, exercise_id: str, changes: dict[str, Any]) -> None:
    entry = entries.setdefault(exercise_id, {"status": "not checked", "hints": 0, "checks": 0,
                                             "solved": False})
    if "status" in changes:
        entry["checks"] = int(entry.get("checks", 0)) + 1
        entry["solved"] = bool(entry.get("solved")) or changes["status"] == "correct"
    entry.update(changes)
    entry["updated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _learner() -> str:
    """Who is checking: the hub's user name when a JupyterHub started this server (on Zero to
    JupyterHub every student's container runs as the same system user, jovyan), else the system
    user's; "" when there is neither."""
    hub_user = os.environ.get("JUPYTERHUB_USER", "").strip()
    if hub_user:
        return hub_user
    try:
        return getpass.getuser()
    except Exception:  # no user name in some containers
        return ""


def write_atomically(path: str | os.PathLike, content: str) -> None:
    """Write ``content`` to a new file beside ``path`` and rename it over ``path``: a reader
    sees the old file or the new one, never half of one, and a link someone planted at
    ``path`` is replaced, never written through. The new file's mode is what the umask allows
    (``rw-r--r--`` under the usual umask 022), like any file the user makes.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
    >>> write_atomically(path, "one\\n"); open(path).read()
    'one\\n'
    """
    path = Path(path)
    temporary, handle = _new_file_beside(path)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(content)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _new_file_beside(path: Path) -> tuple[Path, int]:
    """A new file of a name no one has used, opened for writing. O_EXCL: never an existing
    file or a planted link; mode 0o666 so that the kernel applies the umask (mkstemp's 0o600
    would hide a learner's progress from the teacher)."""
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temporary = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a temporary file beside {path}")
