"""The teacher's class table (dltutor/exercises/classtable.py) and ``dltutor progress``."""
from __future__ import annotations

import csv

from dltutor.cli import main
from dltutor.exercises import all_exercises, record
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
