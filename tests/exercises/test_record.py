"""A learner's progress file (dltutor/exercises/record.py): written on every check and hint,
atomically, never in a check's way, and read back so that progress() survives a restart."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import filelock
import pytest

from dltutor.exercises import Exercise, ____, record

ROOT = Path(__file__).resolve().parents[2]


def _exercise() -> Exercise:
    return Exercise("99.1", names=("answer",), expects="ch03.q1.expects",      # "a number"
                    check=lambda answer: None if answer == 42 else "not 42",
                    hints=("ch03.q1.hint1", "ch03.q1.hint2"), solution="answer = 42")


@pytest.fixture
def progress_file(tmp_path, monkeypatch):
    """This test's progress file: record.the_file() is chosen once per kernel, so reset it."""
    path = tmp_path / record.FILE_NAME
    monkeypatch.setenv("DLTUTOR_PROGRESS", str(path))
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    return path


def test_a_check_and_a_hint_are_written(progress_file, capsys):
    exercise = _exercise()
    answer = 41
    exercise.hint()
    exercise.check()
    entry = record.load(progress_file)["99.1"]
    assert (entry["status"], entry["hints"], entry["checks"], entry["solved"]) == \
        ("not yet", 1, 1, False)
    answer = 42
    exercise.check()
    answer = 40                                                            # noqa: F841 - read by check()
    exercise.check()                   # wrong again after being right: still counted as solved
    entry = record.load(progress_file)["99.1"]
    assert (entry["status"], entry["checks"], entry["solved"]) == ("not yet", 3, True)
    document = json.loads(progress_file.read_text(encoding="utf-8"))
    assert document["version"] == 1 and set(document) == {"version", "learner", "exercises"}


def test_a_blank_answer_is_recorded_as_not_attempted(progress_file, capsys):
    answer = ____                                                          # noqa: F841 - read by check()
    _exercise().check()
    assert record.load(progress_file)["99.1"]["status"] == "not attempted"


def test_an_unwritable_place_never_stops_a_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DLTUTOR_PROGRESS", str(tmp_path / "no such folder" / record.FILE_NAME))
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    answer = 42                                                            # noqa: F841 - read by check()
    _exercise().check()
    assert "Exercise 99.1: correct." in capsys.readouterr().out
    assert not (tmp_path / "no such folder").exists()


def test_off_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DLTUTOR_PROGRESS", "off")
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    answer = 42                                                            # noqa: F841 - read by check()
    _exercise().check()
    assert list(tmp_path.iterdir()) == []


DAMAGED = {
    "a brace missing": b'{"exercises": {"99.1": {"status": "corr',
    "a list": b"[1, 2]",
    "no exercises table": b'{"version": 1, "exercises": []}',
    "not UTF-8": b'{"exercises": {"99.1": {"status": "\xff"}}}',
    "too large": b'{"exercises": {}}' + b" " * record.MAX_BYTES,
}


def _kept(folder: Path) -> list[Path]:
    return sorted(folder.glob(record.FILE_NAME + ".damaged-*"))


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_file_is_kept_aside_and_a_new_one_started(progress_file, content, capsys):
    progress_file.write_bytes(content)
    assert record.load(progress_file) == {}
    (kept,) = _kept(progress_file.parent)
    assert kept.read_bytes() == content and not progress_file.exists()
    note = capsys.readouterr().err
    assert note.count(kept.name) == 1 and len(note.splitlines()) == 1
    assert record.save_entry(progress_file, "99.1", status="correct", hints=0)
    assert list(record.load(progress_file)) == ["99.1"]
    assert _kept(progress_file.parent) == [kept] and kept.read_bytes() == content
    assert capsys.readouterr().err == ""                       # the note is printed once


def test_a_damaged_file_found_while_saving_is_kept_too(progress_file, capsys):
    for attempt in range(2):              # two in the same second: the first one stays
        progress_file.write_bytes(b"{" * (attempt + 1))
        assert record.save_entry(progress_file, "99.1", status="not yet", hints=0)
    assert [p.read_bytes() for p in _kept(progress_file.parent)] in ([b"{", b"{{"],
                                                                     [b"{{", b"{"])
    assert record.load(progress_file)["99.1"]["checks"] == 1
    assert len(capsys.readouterr().err.splitlines()) == 2


def test_entries_the_kit_cannot_use_are_dropped_but_the_file_stays(progress_file, capsys):
    progress_file.write_text('{"exercises": {"99.1": {"status": "great"}, '
                             '"99.2": {"status": "correct", "checks": "many"}, '
                             '"99.3": {"status": "not yet", "hints": 1}}}', encoding="utf-8")
    assert list(record.load(progress_file)) == ["99.3"]
    assert _kept(progress_file.parent) == [] and capsys.readouterr().err == ""
    assert record.save_entry(progress_file, "99.2", status="correct", hints=0)
    assert record.load(progress_file)["99.2"]["checks"] == 1


@pytest.mark.parametrize("where, error", [(json, MemoryError), (json, ValueError),
                                          (json, RecursionError), (os, OSError), (os, MemoryError)])
def test_no_error_while_reading_reaches_the_learner(progress_file, monkeypatch, where, error):
    record.save_entry(progress_file, "99.1", status="correct", hints=0)

    def fail(*args, **kwargs):
        raise error("while reading")

    monkeypatch.setattr(where, "loads" if where is json else "read", fail)
    assert record.load(progress_file) == {}
    assert record.save_entry(progress_file, "99.2", status="correct", hints=0) in (True, False)


def test_a_file_that_cannot_be_read_is_left_as_it_is(progress_file):
    progress_file.mkdir()                                  # not a regular file
    assert record.load(progress_file) == {}
    assert record.save_entry(progress_file, "99.1", status="correct", hints=0) is False
    assert progress_file.is_dir() and _kept(progress_file.parent) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_a_file_without_permission_is_left_as_it_is(progress_file):
    record.save_entry(progress_file, "99.1", status="correct", hints=0)
    progress_file.chmod(0)
    try:
        assert record.load(progress_file) == {}
        assert record.save_entry(progress_file, "99.2", status="correct", hints=0) is False
    finally:
        progress_file.chmod(0o644)
    assert list(record.load(progress_file)) == ["99.1"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_the_file_is_as_readable_as_the_umask_allows(progress_file, umask, mode):
    """On a hub, a teacher in the students' group reads their files only when the file's mode
    follows the umask (mkstemp's files were 0o600 whatever the umask)."""
    before = os.umask(umask)
    try:
        record.save_entry(progress_file, "99.1", status="correct", hints=0)
    finally:
        os.umask(before)
    assert progress_file.stat().st_mode & 0o777 == mode


def test_a_kernel_that_holds_the_lock_too_long_leaves_progress_in_memory(
        progress_file, monkeypatch, capsys):
    monkeypatch.setattr(record, "LOCK_SECONDS", 0.2)
    with filelock.FileLock(f"{progress_file}.lock"):
        answer = 42                                                    # noqa: F841 - read by check()
        _exercise().check()
        assert record.save_entry(progress_file, "99.1", status="correct", hints=0) is False
    assert "Exercise 99.1: correct." in capsys.readouterr().out
    assert not progress_file.exists()


def test_the_file_is_replaced_whole_and_no_temporary_file_stays(progress_file, monkeypatch):
    record.save_entry(progress_file, "99.1", status="not yet", hints=0)
    before = progress_file.read_text(encoding="utf-8")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)             # the rename fails: the old file stays
    assert record.save_entry(progress_file, "99.1", status="correct", hints=0) is False
    assert progress_file.read_text(encoding="utf-8") == before
    assert {p.name for p in progress_file.parent.iterdir()} <= {record.FILE_NAME,
                                                                 record.FILE_NAME + ".lock"}


def _environment(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DLTUTOR_PROGRESS"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, **changes}


def _run(code: str, folder: Path, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=_environment(**env),
                          check=True, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def test_progress_survives_a_restart(tmp_path):
    """Two Python processes in the learner's folder, as a kernel and the kernel after a
    restart: the second sees the first one's checks and hints."""
    _run("from dltutor import exercises\n"
         "ex = exercises.chapter('03')\n"
         "conv_bound = 0.1155\n"
         "ex.q1.check()\n"
         "tanh_gain = 1.0\n"
         "ex.q3.check()\n"
         "ex.q2.hint()\n", tmp_path)
    assert (tmp_path / record.FILE_NAME).is_file()
    after = _run("from dltutor import exercises\n"
                 "rows = dict(exercises.progress().rows)\n"
                 "print(rows['03.1'], rows['03.3'], rows['03.2'], rows['01.1'])\n"
                 "exercises.chapter('03').q2.hint()\n", tmp_path)
    assert after.splitlines()[0] == "correct not yet not checked not checked"
    assert after.splitlines()[1].startswith("Hint 2 of 2 for exercise 03.2")   # not hint 1 again


def test_a_file_nested_too_deep_does_not_stop_the_import(tmp_path):
    """json recurses once per level: a file 100,000 levels deep raised RecursionError out of
    ``import dltutor``."""
    nested = tmp_path / record.FILE_NAME
    nested.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    said = _run("import dltutor, dltutor.exercises\n"
                "print(dict(dltutor.exercises.progress().rows)['01.1'])\n", tmp_path,
                DLTUTOR_PROGRESS=str(nested))
    assert "not checked" in said and "was damaged" in said
    assert len(_kept(tmp_path)) == 1 and not nested.exists()


def test_a_fifo_is_not_waited_for_and_not_replaced(tmp_path):
    """Reading a FIFO waits for a writer that never comes; the import must not hang."""
    fifo = tmp_path / record.FILE_NAME
    os.mkfifo(fifo)
    said = _run("from dltutor.exercises import record\n"
                "print(record.load(record.the_file()),\n"
                "      record.save_entry(record.the_file(), '01.1', status='correct'))\n",
                tmp_path, DLTUTOR_PROGRESS=str(fifo))
    assert said.splitlines()[-1] == "{} False"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _kept(tmp_path) == []


WRITER = """
import os, sys, time
from dltutor.exercises import record
path, me, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
open(path + ".ready-" + me, "w").close()
while not os.path.exists(path + ".go"):       # start together, after the slow import
    time.sleep(0.005)
saved = 0
for n in range(rounds):
    saved += record.save_entry(path, "99.0", status="correct" if n % 2 else "not yet")
    saved += record.save_entry(path, "99." + me, status="not yet", hints=n)
print(saved)
"""


def test_kernels_writing_at_once_lose_no_check(tmp_path):
    """Two notebooks of one learner check at the same moment: each check is counted (without
    the lock, each kernel wrote back what it had read, and about half were lost)."""
    path, kernels, rounds = tmp_path / record.FILE_NAME, 3, 150
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(k + 1),
                                 str(rounds)], env=_environment(DLTUTOR_PROGRESS="off"),
                                stdout=subprocess.PIPE, text=True) for k in range(kernels)]
    while len(list(tmp_path.glob("*.ready-*"))) < kernels:
        assert all(w.poll() is None for w in writers), "a writer stopped before starting"
        time.sleep(0.01)
    (tmp_path / (record.FILE_NAME + ".go")).touch()
    saved = [int(w.communicate(timeout=300)[0]) for w in writers]
    assert saved == [2 * rounds] * kernels                  # no check waited past the lock
    entries = record.load(path)
    assert entries["99.0"]["checks"] == kernels * rounds
    for k in range(kernels):
        assert (entries[f"99.{k + 1}"]["checks"], entries[f"99.{k + 1}"]["hints"]) == \
            (rounds, rounds - 1)


def test_the_learner_is_the_hubs_user_when_a_hub_started_the_server(tmp_path, monkeypatch):
    """On Zero to JupyterHub every student's container runs as the system user jovyan: the
    file records the hub's user name (JUPYTERHUB_USER), which the class table names them by."""
    path = tmp_path / record.FILE_NAME
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    record.save_entry(path, "01.1", status="correct")
    assert json.loads(path.read_text(encoding="utf-8"))["learner"] == "ana"
    assert record.read_progress(path)[:2] == (record.load(path), "ana")
    monkeypatch.delenv("JUPYTERHUB_USER")                  # no hub: the system user's name
    monkeypatch.setattr(record.getpass, "getuser", lambda: "jovyan")
    record.save_entry(path, "01.1", status="correct")
    assert json.loads(path.read_text(encoding="utf-8"))["learner"] == "jovyan"
