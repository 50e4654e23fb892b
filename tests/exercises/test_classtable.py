"""The teacher's class table (dltutor/exercises/classtable.py) and ``dltutor progress``."""
from __future__ import annotations

import contextlib
import csv
import os
import tracemalloc

import pytest

from dltutor.cli import main
from dltutor.exercises import all_exercises, classtable, record
from dltutor.exercises.classtable import class_table, progress_files


def _home(tmp_path, name, *entries, folder="dltutor-notebooks"):
    """A student's home with a progress file in its chapters' folder."""
    chapters = tmp_path / name / folder
    chapters.mkdir(parents=True)
    for exercise_id, status, hints in entries:
        record.save_entry(chapters / record.FILE_NAME, exercise_id, status=status, hints=hints)
    return tmp_path / name


def test_each_cell_is_the_students_best_result(tmp_path):
    ana = _home(tmp_path, "ana", ("01.1", "correct", 0), ("01.1", "not yet", 0),
                ("01.2", "not yet", 2), ("01.3", "not attempted", 0))
    table = class_table([ana], ["01.1", "01.2", "01.3", "01.4"])
    (student,) = table.students
    assert student.name == "ana"
    cells = [tuple(table.cell(student, e)) for e in table.exercise_ids]
    assert cells == [("correct", 0), ("not yet", 2), ("not attempted", 0), ("not attempted", 0)]
    assert table.solved(student) == 1


def test_a_hint_without_a_check_counts_as_not_attempted(tmp_path):
    ben = tmp_path / "ben"
    ben.mkdir()
    record.save_entry(ben / record.FILE_NAME, "03.2", hints=1)
    table = class_table([ben], ["03.2"])
    assert tuple(table.cell(table.students[0], "03.2")) == ("not attempted", 1)


def test_files_are_found_near_the_home_only_and_merged(tmp_path):
    home = _home(tmp_path, "chen", ("02.1", "not yet", 1))
    (home / "copy").mkdir()                                        # a second copy of the chapters
    record.save_entry(home / "copy" / record.FILE_NAME, "02.1", status="correct", hints=0)
    deep = home / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    record.save_entry(deep / record.FILE_NAME, "02.2", status="correct", hints=0)
    hidden = home / ".local"
    hidden.mkdir()
    record.save_entry(hidden / record.FILE_NAME, "02.3", status="correct", hints=0)
    assert [p.parent.name for p in progress_files(home)] == ["copy", "dltutor-notebooks"]
    table = class_table([home], ["02.1", "02.2", "02.3"])
    student = table.students[0]
    assert tuple(table.cell(student, "02.1")) == ("correct", 1)     # solved in one copy
    assert table.cell(student, "02.2").status == "not attempted"     # too deep to search
    assert table.cell(student, "02.3").status == "not attempted"     # hidden folder


def test_the_command_prints_the_table_and_writes_csv_and_html(tmp_path, capsys):
    homes = [_home(tmp_path, "ana", ("01.1", "correct", 2)),
             _home(tmp_path, "ben", ("01.1", "not yet", 0)),
             tmp_path / "dora"]
    homes[2].mkdir()
    out = tmp_path / "report"
    assert main(["progress", *map(str, homes), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    header, first = printed.splitlines()[:2]
    assert header.split() == ["exercise", "ana", "ben", "dora"]
    assert first.split() == ["01.1", "✓", "2h", "✗", "·"]
    assert "no progress file found for: dora" in printed
    rows = list(csv.DictReader((out / "progress.csv").open(encoding="utf-8")))
    assert len(rows) == 3 * len(all_exercises())
    assert rows[0] == {"exercise": "01.1", "student": "ana", "status": "correct", "hints": "2",
                       "checks": "1"}
    page = (out / "progress.html").read_text(encoding="utf-8")
    assert page.count("<tr>") == len(all_exercises()) + 2 and "<th scope=\"col\">dora</th>" in page


def test_the_command_refuses_a_folder_that_is_not_there(tmp_path, capsys):
    assert main(["progress", str(tmp_path / "nobody"), "--out", str(tmp_path)]) == 1
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "progress.csv").exists()


def _ana_and_ben(tmp_path):
    return (_home(tmp_path, "ana", ("01.1", "correct", 0), ("01.2", "not yet", 1)),
            _home(tmp_path, "ben"))


def test_links_in_a_students_folder_are_not_followed(tmp_path):
    """A student's link to another student's home must not count her work as his, and a loop
    of links must cost nothing."""
    ana, ben = _ana_and_ben(tmp_path)
    (ben / "ana").symlink_to(ana, target_is_directory=True)
    (ben / "loop").symlink_to(ben, target_is_directory=True)
    (ben / "dltutor-notebooks" / record.FILE_NAME).symlink_to(
        ana / "dltutor-notebooks" / record.FILE_NAME)
    assert progress_files(ben) == []
    table = class_table([ben, ana], ["01.1"])
    assert [s.entries != {} for s in table.students] == [False, True]
    (problem,) = table.students[0].problems
    assert problem.endswith("dltutor-notebooks/.dltutor-progress.json: a symbolic link "
                            "(not followed)")


def test_the_search_looks_at_so_many_entries_at_most(tmp_path, monkeypatch):
    ana, ben = _ana_and_ben(tmp_path)
    monkeypatch.setattr(classtable, "MAX_ENTRIES", 50)
    for n in range(200):
        (ben / f"empty-{n}").mkdir()
    looked_at = []
    scandir = os.scandir

    def counting(folder):
        for entry in scandir(folder):
            looked_at.append(entry)
            yield entry

    monkeypatch.setattr(os, "scandir", lambda folder: contextlib.closing(counting(folder)))
    table = class_table([ana, ben], ["01.1"])
    assert table.students[0].problems == ()
    assert table.students[1].problems[0].startswith("not fully searched: more than 50 ")
    assert len(looked_at) <= 2 * 51


def test_each_file_counts_once_in_a_class(tmp_path, capsys):
    """A hard link to another student's file, or a home named twice: counted for the first."""
    ana, ben = _ana_and_ben(tmp_path)
    os.link(ana / "dltutor-notebooks" / record.FILE_NAME, ben / record.FILE_NAME)
    table = class_table([ana, ben, ana], ["01.1"])
    assert [table.cell(s, "01.1").status for s in table.students] == \
        ["correct", "not attempted", "not attempted"]
    assert table.students[0].entries["01.1"]["checks"] == 1
    assert table.students[1].notes == (f"{ben / record.FILE_NAME}: already counted for ana",)
    assert table.students[2].notes[0].endswith("already counted for ana")
    assert main(["progress", str(ana), str(ben), "--out", str(tmp_path / "out")]) == 0
    assert "ben: " in capsys.readouterr().out


def test_a_huge_file_is_not_read_whole(tmp_path):
    ana, ben = _ana_and_ben(tmp_path)
    with open(ben / record.FILE_NAME, "wb") as huge:
        huge.truncate(2 ** 31)                                 # 2 GiB, sparse: no disk used
    tracemalloc.start()
    try:
        table = class_table([ana, ben], ["01.1"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2 ** 20
    assert table.students[1].problems == (
        f"{ben / record.FILE_NAME}: larger than {record.MAX_BYTES:,} bytes",)


def test_files_that_cannot_be_read_are_named_and_the_rest_reported(tmp_path, capsys):
    """One student's bad file once stopped the whole report with a traceback and left
    progress.csv cut short. Now each is named, the others are reported, the exit status is 2,
    and nothing in a student's folder changes."""
    ana, ben = _ana_and_ben(tmp_path)
    damaged = {"ben": b'{"exercises": {"01.1": {"status": "corr',
               "carl": b'{"exercises": {"01.1": {"status": "correct", "checks": "many"}}}',
               "dora": b"[" * 100_000 + b"]" * 100_000}
    for name, content in damaged.items():
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / record.FILE_NAME).write_bytes(content)
    (tmp_path / "eve").mkdir()
    os.mkfifo(tmp_path / "eve" / record.FILE_NAME)
    (tmp_path / "fay" / record.FILE_NAME).mkdir(parents=True)
    names = ["ana", *damaged, "eve", "fay"]
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and not p.is_fifo()}
    out = tmp_path / "report"
    assert main(["progress", *(str(tmp_path / n) for n in names), "--out", str(out)]) == 2
    said = capsys.readouterr()
    rows = list(csv.DictReader((out / "progress.csv").open(encoding="utf-8")))
    assert len(rows) == len(names) * len(all_exercises())
    assert rows[0] == {"exercise": "01.1", "student": "ana", "status": "correct", "hints": "0",
                       "checks": "1"}
    problems = [line for line in said.err.splitlines() if "could not read all of" in line]
    assert [line.split("could not read all of ")[1].split("'s")[0] for line in problems] == \
        ["ben", "dora", "eve", "fay"]                   # carl's file is read: its entry dropped
    for reason in ("not valid JSON", "nested too deep", "not a regular file"):
        assert reason in said.err
    assert str(tmp_path / "ben" / record.FILE_NAME) in said.err
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and not p.is_fifo()
             and out not in p.parents}
    assert after == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_a_file_or_folder_without_permission_is_named(tmp_path):
    ana, ben = _ana_and_ben(tmp_path)
    record.save_entry(ben / record.FILE_NAME, "01.1", status="correct", hints=0)
    (ben / record.FILE_NAME).chmod(0)
    (ben / "dltutor-notebooks").chmod(0)
    try:
        table = class_table([ana, ben], ["01.1"])
    finally:
        (ben / record.FILE_NAME).chmod(0o644)
        (ben / "dltutor-notebooks").chmod(0o755)
    assert table.students[0].problems == ()
    assert sorted(table.students[1].problems) == [
        f"{ben / record.FILE_NAME}: permission denied",
        f"{ben / 'dltutor-notebooks'}: could not be searched (permission denied)"]


def test_a_file_swapped_while_being_read_is_named(tmp_path, monkeypatch):
    ana, _ = _ana_and_ben(tmp_path)
    real = classtable.search
    monkeypatch.setattr(classtable, "search", lambda folder: real(folder)._replace(
        files=[(path, (0, 0)) for path, _ in real(folder).files]))
    (student,) = class_table([ana], ["01.1"]).students
    assert student.entries == {} and student.problems[0].endswith("changed while the report "
                                                                  "read it")


def test_the_outputs_replace_a_planted_link_and_never_write_through_it(tmp_path):
    ana, _ = _ana_and_ben(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("the victim's file", encoding="utf-8")
    for name in ("progress.csv", "progress.html"):
        (out / name).symlink_to(victim)
    assert main(["progress", str(ana), "--out", str(out)]) == 0
    assert victim.read_text(encoding="utf-8") == "the victim's file"
    assert not (out / "progress.csv").is_symlink() and not (out / "progress.html").is_symlink()
    assert (out / "progress.csv").read_text(encoding="utf-8").startswith("exercise,student")


def test_a_failure_half_way_leaves_the_previous_outputs(tmp_path, monkeypatch):
    ana, ben = _ana_and_ben(tmp_path)
    table = class_table([ana, ben], ["01.1", "01.2"])
    table.write_csv(tmp_path / "progress.csv")
    before = (tmp_path / "progress.csv").read_text(encoding="utf-8")
    cells = []

    def fails_on_the_third(student, exercise_id):
        cells.append(exercise_id)
        if len(cells) == 3:
            raise OSError("disk full")
        return classtable.Cell("correct", 0)

    monkeypatch.setattr(table, "cell", fails_on_the_third)
    with pytest.raises(OSError):
        table.write_csv(tmp_path / "progress.csv")
    assert (tmp_path / "progress.csv").read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ana", "ben", "progress.csv"]


def test_the_command_says_1_when_it_cannot_write(tmp_path, capsys):
    ana, _ = _ana_and_ben(tmp_path)
    (tmp_path / "a file").write_text("", encoding="utf-8")
    assert main(["progress", str(ana), "--out", str(tmp_path / "a file")]) == 1
    assert "--out a folder you can write" in capsys.readouterr().err


NAMES = {"=HYPERLINK(\"x.example\")": "'=HYPERLINK(\"x.example\")", "+1": "'+1", "-1": "'-1",
         "@SUM(A1)": "'@SUM(A1)", "\t=1": "'=1", "gil\x1b[2J\u202eexe.txt": "gil[2Jexe.txt"}


def test_names_cannot_run_formulas_or_change_the_screen(tmp_path, capsys):
    """A student names their home: a formula must stay text in a spreadsheet, and an escape
    sequence or a right-to-left override must not reach the terminal or the page."""
    homes = [_home(tmp_path, name, ("01.1", "correct", 0)) for name in NAMES]
    out = tmp_path / "report"
    assert main(["progress", *map(str, homes), "--out", str(out)]) == 0
    with (out / "progress.csv").open(encoding="utf-8", newline="") as table:
        written = [row["student"] for row in csv.DictReader(table)][:len(NAMES)]
    assert written == list(NAMES.values())
    page = (out / "progress.html").read_text(encoding="utf-8")
    shown = capsys.readouterr().out
    for text in (shown, page, (out / "progress.csv").read_text(encoding="utf-8")):
        assert not any(c in text for c in "\x1b\u202e\t")
    assert "gil[2Jexe." in shown and "&quot;x.example&quot;" in page
