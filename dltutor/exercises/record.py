"""Progress that lasts: each check and hint is written to one small JSON file per learner.

The file, ``.dltutor-progress.json``, sits in the folder the notebook runs in (a learner's copy
of the chapters; on a class hub, inside the student's home). It is read back when the exercises
are imported, so ``progress()`` survives a kernel restart, and a teacher's
``dltutor progress DIR ...`` reads it (see :mod:`dltutor.exercises.classtable`).

* Writing never gets in a check's way: the new file is written beside the old one and renamed
  over it (a reader never sees half a file); if the folder cannot be written, the verdict is
  shown anyway and progress stays in memory.
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
import getpass
import json
import os
import tempfile
from pathlib import Path
from typing import Any

#: The name of a learner's progress file, in the folder the notebooks run in.
FILE_NAME = ".dltutor-progress.json"
#: The statuses a progress file may hold for an exercise, best first.
STATUSES = ("correct", "not yet", "not attempted", "not checked")
_VERSION = 1


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


def load(path: str | os.PathLike | None) -> dict[str, dict[str, Any]]:
    """The exercises recorded in the file at ``path`` (``{"01.1": {"status": ..., "hints": ...,
    "checks": ..., "updated": ...}}``); an empty dict when there is no file or it cannot be read
    (a damaged file is left as it is and ignored, never raised on a learner)."""
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    exercises = data.get("exercises") if isinstance(data, dict) else None
    if not isinstance(exercises, dict):
        return {}
    return {str(key): entry for key, entry in exercises.items() if _valid(entry)}


def _valid(entry: Any) -> bool:
    return (isinstance(entry, dict) and entry.get("status") in STATUSES
            and isinstance(entry.get("hints", 0), int))


def save_entry(path: str | os.PathLike | None, exercise_id: str, **changes: Any) -> bool:
    """Update one exercise's entry (``status``, ``hints``) in the file at ``path``, counting a
    check when ``status`` is given; True when the file was written. Never raises: a folder that
    cannot be written leaves progress in memory only."""
    if path is None:
        return False
    entries = load(path)
    entry = entries.setdefault(exercise_id, {"status": "not checked", "hints": 0, "checks": 0,
                                             "solved": False})
    if "status" in changes:
        entry["checks"] = int(entry.get("checks", 0)) + 1
        entry["solved"] = bool(entry.get("solved")) or changes["status"] == "correct"
    entry.update(changes)
    entry["updated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    document = {"version": _VERSION, "learner": _learner(), "exercises": entries}
    try:
        _write_atomically(Path(path), json.dumps(document, indent=1, sort_keys=True))
    except OSError:
        return False
    return True


def _learner() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in some containers
        return ""


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path`` and rename it over ``path``: a reader sees
    the old file or the new one, never a half-written one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
