"""The teacher's class table (dltutor/exercises/classtable.py) and ``dltutor progress``."""
from __future__ import annotations

import contextlib
import csv
import io
import os
import subprocess
import sys
import tracemalloc
from unittest import mock

import pytest

from dltutor.cli import main
from dltutor.diagnose.report import text_width
from dltutor.exercises import all_exercises, classtable, homes, record
from dltutor.exercises.classtable import class_table
from dltutor.exercises.homes import progress_files


def _home(tmp_path, name, *entries, folder="dltutor-notebooks", learner=None):
    """A student's home with a progress file in its chapters' folder, saved by the learner
    ``learner`` (by default the home's name, as on a hub: jupyter-ana's home is ana's)."""
    chapters = tmp_path / name / folder
    chapters.mkdir(parents=True)
    with mock.patch.dict(os.environ, {"JUPYTERHUB_USER": name if learner is None else learner}):
        for exercise_id, status, hints in entries:
            record.save_entry(chapters / record.FILE_NAME, exercise_id, status=status,
                              hints=hints)
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
    assert main(["progress", *map(str, homes), "--out", str(out)]) == 3     # dora: no file
    printed = capsys.readouterr().out
    header, first = printed.splitlines()[:2]
    assert header.split() == ["exercise", "ana", "ben", "dora"]
    assert first.split() == ["01.1", "A", "tensor", "that", "can", "require", "gradients",
                             "✓", "2h", "✗", "–"]
    rows = list(csv.DictReader((out / "progress.csv").open(encoding="utf-8")))
    assert len(rows) == 3 * len(all_exercises())
    assert rows[0] == {"exercise": "01.1", "title": "A tensor that can require gradients",
                       "student": "ana", "folder": "ana", "status": "correct", "hints": "2",
                       "checks": "1"}
    page = (out / "progress.html").read_text(encoding="utf-8")
    assert page.count("<tr>") == len(all_exercises()) + 2 and ">dora</th>" in page


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
    monkeypatch.setattr(homes, "MAX_ENTRIES", 50)
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
    assert (rows[0]["student"], rows[0]["status"]) == ("ana", "correct")
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
    real = homes.search
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
    assert (out / "progress.csv").read_text(encoding="utf-8").startswith("exercise,title,")


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
    assert "gil[2Jexe.txt" in shown and "&quot;x.example&quot;" in page    # whole: 13 wide


def test_students_are_named_after_the_learner_their_files_record(tmp_path, capsys):
    """Issue 47: columns were named after the folders, not the learners. The recorded learner
    names a column when it tells the students apart; else the folder does, and says why."""
    homes = [_home(tmp_path, "jupyter-ana", ("01.1", "correct", 0), learner="ana"),
             _home(tmp_path, "claim-1", ("01.1", "not yet", 0), learner="jovyan"),
             _home(tmp_path, "claim-2", ("01.1", "correct", 0), learner="jovyan"),
             _home(tmp_path, "eve", ("01.1", "correct", 0), learner="claim-1"),  # a folder's
             _home(tmp_path, "fay", ("01.1", "correct", 0), learner="")]         # name; none
    copy = homes[4] / "friends-copy"                           # two learners in one folder
    copy.mkdir()
    with mock.patch.dict(os.environ, {"JUPYTERHUB_USER": "gus"}):
        record.save_entry(copy / record.FILE_NAME, "01.2", status="correct")
    with mock.patch.dict(os.environ, {"JUPYTERHUB_USER": "fay"}):
        record.save_entry(homes[4] / "dltutor-notebooks" / record.FILE_NAME, "01.2",
                          status="not yet")
    table = class_table(homes, ["01.1"])
    assert [(s.name, s.folder, s.learner) for s in table.students] == [
        ("ana", "jupyter-ana", "ana"), ("claim-1", "claim-1", "jovyan"),
        ("claim-2", "claim-2", "jovyan"), ("eve", "eve", "claim-1"), ("fay", "fay", "")]
    assert table.students[4].notes == ("the files record different learners (fay, gus): "
                                       "named after the folder",)
    out = tmp_path / "report"
    assert main(["progress", *map(str, homes), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.split()[:6] == ["exercise", "ana", "claim-1", "claim-2", "eve", "fay"]
    assert ("2 students' files record the same learner, jovyan: their columns are named after "
            "their folders") in printed
    rows = list(csv.DictReader((out / "progress.csv").open(encoding="utf-8")))
    assert (rows[0]["student"], rows[0]["folder"]) == ("ana", "jupyter-ana")


def test_each_exercise_is_shown_with_its_title_in_the_kits_language(tmp_path, capsys,
                                                                    monkeypatch):
    """Issue 47: a 51-row table of bare ids ("08.3"). Each row has the exercise's title, in
    --lang's language, else $DLTUTOR_LANG's (as dltutor lab chooses)."""
    ana = _home(tmp_path, "ana", ("08.3", "correct", 1))
    out = tmp_path / "report"
    assert main(["progress", str(ana), "--out", str(out)]) == 0
    english = capsys.readouterr().out.splitlines()
    assert "08.3  Which freeze still gets a gradient    ✓ 1h" in english
    assert "09.1  Per-tensor clipping in an optimizer   ·" in english
    monkeypatch.setenv("DLTUTOR_LANG", "zh_CN.UTF-8")
    for chinese_please in ([], ["--lang", "zh"]):
        assert main(["progress", str(ana), "--out", str(out), *chinese_please]) == 0
        chinese = capsys.readouterr().out.splitlines()
        assert chinese[0].split() == ["练习", "ana"]
        (row,) = [line for line in chinese if line.startswith("08.3  哪种冻结方式仍会计算梯度 ")]
        ticked = row.index("✓")                     # under ana: a Chinese character is 2 wide
        assert row.endswith("✓ 1h") and text_width(row[:ticked]) == english[0].index("ana")
        assert chinese[-1].startswith("已写入 ")
    page = (out / "progress.html").read_text(encoding="utf-8")
    assert '<html lang="zh">' in page and "<td class=\"title\">哪种冻结方式仍会计算梯度</td>" in page
    rows = list(csv.DictReader((out / "progress.csv").open(encoding="utf-8")))
    assert (rows[0]["title"], rows[0]["status"]) == ("能求梯度的张量", "not attempted")
    assert main(["progress", str(ana), "--out", str(out), "--lang", "en"]) == 0
    assert capsys.readouterr().out.splitlines() == english


def _progress(*arguments, cwd):
    """The real command, as a teacher runs it: its exit status, stdout and stderr."""
    done = subprocess.run([sys.executable, "-m", "dltutor.cli", "progress", *map(str, arguments)],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DLTUTOR_LANG": "en"})
    return done.returncode, done.stdout, done.stderr


def test_each_exit_status_of_the_command(tmp_path):
    """0 all read; 1 nothing written (a wrong option too: argparse's own 2 would read as
    "unreadable"); 2 some files unreadable; 3 some folders without a progress file, marked
    – in the table. 2 wins over 3."""
    ana = _home(tmp_path, "ana", ("01.1", "correct", 0))
    (tmp_path / "dora").mkdir()                                  # no progress file
    (tmp_path / "ben").mkdir()
    (tmp_path / "ben" / record.FILE_NAME).write_text("{", encoding="utf-8")   # damaged
    out = tmp_path / "report"
    assert _progress(ana, "--out", out, cwd=tmp_path)[0] == 0
    for wrong in ([tmp_path / "nobody"], ["--no-such-option", ana], [], ["--lang", "fr", ana]):
        status, printed, said = _progress(*wrong, "--out", out, cwd=tmp_path)
        assert (status, printed) == (1, ""), wrong
    status, printed, said = _progress(ana, tmp_path / "dora", "--out", out, cwd=tmp_path)
    assert status == 3
    assert "dltutor progress: no progress file found for: dora" in said
    lines = printed.splitlines()
    assert lines[1].endswith("✓           –") and lines[-3].split()[-3:] == [
        f"1/{len(all_exercises())}", "no", "file"]
    assert "–" in lines[-2]                                               # the legend says so
    assert _progress(ana, tmp_path / "ben", tmp_path / "dora", "--out", out,
                     cwd=tmp_path)[0] == 2
    status, printed, _ = _progress(ana, tmp_path / "ben", "--out", out, cwd=tmp_path)
    assert status == 2 and printed.splitlines()[-3].split()[-2:] == [f"0/{len(all_exercises())}", "!"]
    page = (out / "progress.html").read_text(encoding="utf-8")
    assert f"<td>0/{len(all_exercises())} !</td>" in page


class FakeTerminal(io.StringIO):
    """stderr as a terminal would be: the progress bar's condition."""

    def isatty(self):
        return True


def test_a_progress_bar_for_a_large_class_goes_to_a_terminals_stderr_only(tmp_path,
                                                                            monkeypatch):
    """Issue 47: a class of 200 homes gave no sign of life. Many students and a terminal:
    a bar on stderr; the table on stdout stays exactly the same (a pipe, a CSV redirect)."""
    from dltutor import cli

    homes = [_home(tmp_path, f"s{n:03d}", ("01.1", "correct", n % 3))
             for n in range(cli.PROGRESS_BAR_FROM)]
    runs = {}
    for terminal in (False, True):
        stdout, stderr = io.StringIO(), FakeTerminal() if terminal else io.StringIO()
        monkeypatch.setattr(sys, "stdout", stdout)
        monkeypatch.setattr(sys, "stderr", stderr)
        assert main(["progress", *map(str, homes), "--out", str(tmp_path / "out")]) == 0
        runs[terminal] = stdout.getvalue(), stderr.getvalue()
    monkeypatch.undo()
    assert runs[True][0] == runs[False][0] and runs[True][0].startswith("exercise")
    assert runs[False][1] == ""
    assert runs[True][1].startswith("\rreading the students' folders:   0%")
    assert f"0/{cli.PROGRESS_BAR_FROM} " in runs[True][1]
    status, printed, said = _progress(*homes, "--out", tmp_path / "out", cwd=tmp_path)
    assert (status, said) == (0, "") and printed == runs[False][0]        # a pipe: no bar


def test_why_a_file_was_not_read_is_said_in_the_reports_language(tmp_path, capsys):
    """Issue 48: `dltutor progress --lang zh` said its reasons in English ("not valid JSON")."""
    ana, ben = _ana_and_ben(tmp_path)
    (ben / record.FILE_NAME).write_bytes(b'{"exercises": {"01.1": {"status": "corr')
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / record.FILE_NAME).mkdir()
    homes = [str(ana), str(ben), str(tmp_path / "eve")]
    assert main(["progress", *homes, "--out", str(tmp_path / "report"), "--lang", "zh"]) == 2
    said = capsys.readouterr().err
    assert "不是有效的 JSON" in said and "不是普通文件" in said
    assert "not valid JSON" not in said and "not a regular file" not in said
