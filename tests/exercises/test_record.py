"""A learner's progress file (dltutor/exercises/record.py): written on every check and hint,
atomically, never in a check's way, and read back so that progress() survives a restart."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dltutor.exercises import Exercise, ____, record

ROOT = Path(__file__).resolve().parents[2]


def _exercise() -> Exercise:
    return Exercise("99.1", names=("answer",), expects="a number",
                    check=lambda answer: None if answer == 42 else "not 42",
                    hints=("A number.", "Six times seven."), solution="answer = 42")


@pytest.fixture
def progress_file(tmp_path, monkeypatch):
    """This test's progress file: record.the_file() is chosen once per kernel, so reset it."""
    path = tmp_path / record.FILE_NAME
    monkeypatch.setenv("DLTUTOR_PROGRESS", str(path))
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    return path


def test_a_check_and_a_hint_are_written(progress_file, capsys):
    exercise = _exercise()
    answer = 41                                                            # noqa: F841
    exercise.hint()
    exercise.check()
    entry = record.load(progress_file)["99.1"]
    assert (entry["status"], entry["hints"], entry["checks"], entry["solved"]) == \
        ("not yet", 1, 1, False)
    answer = 42                                                            # noqa: F841
    exercise.check()
    answer = 40                                                            # noqa: F841
    exercise.check()                   # wrong again after being right: still counted as solved
    entry = record.load(progress_file)["99.1"]
    assert (entry["status"], entry["checks"], entry["solved"]) == ("not yet", 3, True)
    document = json.loads(progress_file.read_text(encoding="utf-8"))
    assert document["version"] == 1 and set(document) == {"version", "learner", "exercises"}


def test_a_blank_answer_is_recorded_as_not_attempted(progress_file, capsys):
    answer = ____                                                          # noqa: F841
    _exercise().check()
    assert record.load(progress_file)["99.1"]["status"] == "not attempted"


def test_an_unwritable_place_never_stops_a_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DLTUTOR_PROGRESS", str(tmp_path / "no such folder" / record.FILE_NAME))
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    answer = 42                                                            # noqa: F841
    _exercise().check()
    assert "Exercise 99.1: correct." in capsys.readouterr().out
    assert not (tmp_path / "no such folder").exists()


def test_off_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DLTUTOR_PROGRESS", "off")
    monkeypatch.setattr(record, "_chosen", record._UNSET)
    answer = 42                                                            # noqa: F841
    _exercise().check()
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_file_is_ignored_and_then_replaced(progress_file):
    progress_file.write_text('{"exercises": {"99.1": {"status": "corr', encoding="utf-8")
    assert record.load(progress_file) == {}
    assert record.save_entry(progress_file, "99.1", status="correct", hints=0)
    assert record.load(progress_file)["99.1"]["status"] == "correct"
    progress_file.write_text('{"exercises": {"99.1": {"status": "great"}}}', encoding="utf-8")
    assert record.load(progress_file) == {}              # a status the kit does not know


def test_the_file_is_replaced_whole_and_no_temporary_file_stays(progress_file, monkeypatch):
    record.save_entry(progress_file, "99.1", status="not yet", hints=0)
    before = progress_file.read_text(encoding="utf-8")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)             # the rename fails: the old file stays
    assert record.save_entry(progress_file, "99.1", status="correct", hints=0) is False
    assert progress_file.read_text(encoding="utf-8") == before
    assert [p.name for p in progress_file.parent.iterdir()] == [record.FILE_NAME]


def _run(code: str, folder: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DLTUTOR_PROGRESS"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, check=True,
                          capture_output=True, text=True, timeout=120)
    return done.stdout


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
