"""A teacher's view of a class: every student's progress file gathered into one table.

On a class hub each student's home holds the chapters and, beside them, the progress file the
exercises write (record.py). ``dltutor progress DIR [DIR ...]`` (one DIR per student) reads
them and prints a table, one row per exercise (its id and title) and one column per student,
and writes the same table as ``progress.csv`` (one line per exercise and student) and
``progress.html``. The words and titles follow the kit's language; the CSV's statuses stay
English words, for a spreadsheet's filters.

A cell is the student's best result so far: correct once it has been correct, else the last
check's "not yet", else "not attempted" (never checked, or checked with the blank still in).
A student whose folder holds no progress file at all is not mixed up with one who attempted
nothing: each of their cells is "no progress file" (– in the table).

A column is named after the learner the student's files record (the hub's user name, see
record.py), which says who checked better than a folder's name does. The folder's name is used
instead when the files record no learner, when a student's files record different ones (a note
names them), or when the name would not tell students apart: another student's files record
the same learner (on a shared account, or with files copied from a friend) or it is another
student's column name. ``Student.folder`` always holds the folder's name, and the CSV has both.

The students' folders are theirs to fill, so nothing in them is trusted. The search (homes.py)
follows no symbolic link (a link to another student's home does not make her work his) and
looks at a bounded number of entries; a file is read without following a link, only when it is a
regular file, and at most record.MAX_BYTES of it; a file two students share (a hard link, a
folder named twice) counts once. Nothing in a student's folder is changed. A file that cannot
be read is named, with why, in the student's ``problems``, and the rest of the class is still
reported. The outputs are written whole, to a new file renamed over the old one.

>>> import os, tempfile
>>> from dltutor.exercises import record
>>> home = tempfile.mkdtemp(prefix="ana-")
>>> record.save_entry(os.path.join(home, record.FILE_NAME), "01.1", status="not yet", hints=2)
True
>>> table = class_table([home], ["01.1", "01.2"])
>>> table.cell(table.students[0], "01.1")
Cell(status='not yet', hints=2)
>>> table.cell(table.students[0], "01.2").status
'not attempted'
>>> class_table([tempfile.mkdtemp()], ["01.1"]).students[0].missing     # no progress file
True
"""
from __future__ import annotations

import csv
import functools
import html
import io
import os
from collections import Counter
from pathlib import Path
from typing import Iterable, NamedTuple

from ..diagnose.report import pad_to_width, text_width
from ..i18n import get_language, text
from . import record
from .homes import printable, search
from .view import LOOKS, Look

#: A cell's status when the student's folder holds no progress file (CSV: these words).
NO_FILE = "no progress file"
SYMBOLS = {"correct": "✓", "not yet": "✗", "not attempted": "·", NO_FILE: "–"}
#: The HTML colours of NO_FILE: a darker grey than "not attempted"'s, so that such a column
#: stands out as a whole (see _html_cell).
NO_FILE_LOOK = Look("–", "#6e7781", "#eaeef2", "#57606a")
#: How many columns of the terminal table an exercise's title, and a student's name, take at
#: most.
TITLE_WIDTH = 36
NAME_WIDTH = 20


class Cell(NamedTuple):
    """One student's standing on one exercise: status and hints taken."""

    status: str
    hints: int


class Student(NamedTuple):
    """A student's column: its name (see the top of this module) and what their progress files
    recorded; ``problems``: what could not be read or searched (so the column may be
    incomplete), ``notes``: what was left out or decided on purpose (a file already counted
    for another student); ``folder``: the folder's name; ``learner``: the one learner their
    files record ("" when none or several); ``files``: how many progress files were found."""

    name: str
    entries: dict
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    folder: str = ""
    learner: str = ""
    files: int = 0

    @property
    def missing(self) -> bool:
        """True when the folder was searched whole and holds no progress file."""
        return self.files == 0 and not self.problems


class ClassTable:
    """The class's progress: :meth:`cell` for one student and exercise, :meth:`text`,
    :meth:`write_csv` and :meth:`write_html` for the whole table."""

    def __init__(self, students: list[Student], exercise_ids: list[str]):
        self.students, self.exercise_ids = students, exercise_ids

    def cell(self, student: Student, exercise_id: str) -> Cell:
        if student.missing:
            return Cell(NO_FILE, 0)
        entry = student.entries.get(exercise_id)
        if entry is None:
            return Cell("not attempted", 0)
        if entry.get("solved") or entry["status"] == "correct":
            status = "correct"
        elif entry["status"] == "not yet":
            status = "not yet"
        else:
            status = "not attempted"
        return Cell(status, int(entry.get("hints", 0)))

    def solved(self, student: Student) -> int:
        return sum(self.cell(student, e).status == "correct" for e in self.exercise_ids)

    def title(self, exercise_id: str) -> str:
        """The exercise's title in the kit's language ("" for an id the kit does not know)."""
        return _titles(get_language()).get(exercise_id, "")

    def total(self, student: Student) -> str:
        """The student's line under the table: how many correct, "no file", or a ! when not
        every file could be read (the column may miss what those files hold)."""
        if student.missing:
            return text("classtable.no_file")
        mark = " !" if student.problems else ""
        return f"{self.solved(student)}/{len(self.exercise_ids)}{mark}"

    def text(self) -> str:
        """The table for a terminal: each exercise's id and title (cut to TITLE_WIDTH columns),
        then a symbol per student (✓ correct, ✗ not yet, · not attempted, – no progress file)
        and the hints taken after it. A student's column is as wide as the longest name, 10 to
        NAME_WIDTH columns (a longer name is cut: "jupyter-" homes stay told apart)."""
        longest = max((text_width(s.name) for s in self.students), default=0)
        name_width = min(max(longest, 10), NAME_WIDTH)
        width, first = name_width + 2, 6 + TITLE_WIDTH + 2
        lines = [pad_to_width(text("classtable.exercise"), first) + "".join(
            pad_to_width(_cut(s.name, name_width), width) for s in self.students)]
        for exercise_id in self.exercise_ids:
            cells = []
            for student in self.students:
                cell = self.cell(student, exercise_id)
                hints = f" {cell.hints}h" if cell.hints else ""
                cells.append((SYMBOLS[cell.status] + hints).ljust(width))
            row = f"{exercise_id:<6}{_cut(self.title(exercise_id), TITLE_WIDTH)}"
            lines.append(pad_to_width(row, first) + "".join(cells))
        lines.append(pad_to_width(text("classtable.correct"), first) + "".join(
            pad_to_width(self.total(s), width) for s in self.students))
        lines.append(text("classtable.legend"))
        return "\n".join(line.rstrip() for line in lines)

    def csv_text(self) -> str:
        """One line per exercise and student: exercise, title, student, folder, status (in
        English: correct, not yet, not attempted, no progress file), hints, checks."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["exercise", "title", "student", "folder", "status", "hints", "checks"])
        for exercise_id in self.exercise_ids:
            title = spreadsheet_text(self.title(exercise_id))
            for student in self.students:
                cell = self.cell(student, exercise_id)
                checks = int(student.entries.get(exercise_id, {}).get("checks", 0))
                writer.writerow([exercise_id, title, spreadsheet_text(student.name),
                                 spreadsheet_text(student.folder), cell.status, cell.hints,
                                 checks])
        return out.getvalue()

    def write_csv(self, path: str | os.PathLike) -> None:
        """The table as CSV (see :meth:`csv_text`), written whole or not at all."""
        record.write_atomically(path, self.csv_text())

    def html(self) -> str:
        """One HTML page: the table in the verdicts' colours, with symbols and words so that it
        reads without colour too."""
        head = "".join(f'<th scope="col" title="{html.escape(s.folder)}">'
                       f"{html.escape(s.name)}</th>" for s in self.students)
        body = []
        for exercise_id in self.exercise_ids:
            cells = "".join(_html_cell(self.cell(s, exercise_id)) for s in self.students)
            body.append(f'<tr><th scope="row">{exercise_id}</th>'
                        f'<td class="title">{html.escape(self.title(exercise_id))}</td>'
                        f"{cells}</tr>")
        totals = "".join(f"<td>{html.escape(self.total(s))}</td>" for s in self.students)
        summary = text("classtable.html_summary", students=len(self.students),
                       exercises=len(self.exercise_ids))
        return (f'<!DOCTYPE html>\n<html lang="{get_language()}"><head><meta charset="utf-8">'
                f"<title>{html.escape(text('classtable.html_title'))}</title><style>"
                "body{font-family:system-ui,sans-serif;font-size:14px;margin:16px}"
                "table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:3px 8px;"
                "text-align:center;white-space:nowrap}td.title{text-align:left}"
                "thead th{position:sticky;top:0;z-index:1;background:#fff}"
                "tfoot td{font-weight:bold}"
                "</style></head><body>"
                f"<h1>{html.escape(text('classtable.html_heading'))}</h1>"
                f"<p>{html.escape(summary)}</p>"
                f'<table><thead><tr><th scope="col">{html.escape(text("classtable.exercise"))}'
                f'</th><th scope="col">{html.escape(text("classtable.title"))}</th>{head}'
                f'</tr></thead><tbody>{"".join(body)}</tbody><tfoot><tr>'
                f'<th scope="row" colspan="2">{html.escape(text("classtable.correct"))}</th>'
                f"{totals}</tr></tfoot></table></body></html>\n")

    def write_html(self, path: str | os.PathLike) -> None:
        """The page of :meth:`html`, written whole or not at all."""
        record.write_atomically(path, self.html())


@functools.lru_cache(maxsize=None)
def _titles(language: str) -> dict[str, str]:
    """Every exercise's title in ``language`` (the kit's language now), by id."""
    from . import all_exercises         # here: the package imports the chapters, not us

    return {exercise.id: exercise.shown_title() for exercise in all_exercises()}


def _html_cell(cell: Cell) -> str:
    look = NO_FILE_LOOK if cell.status == NO_FILE else LOOKS[cell.status]
    word = text("classtable.status_no_file" if cell.status == NO_FILE
                else "exercise.status." + cell.status)
    hints = f"<sup>{cell.hints}</sup>" if cell.hints else ""
    return (f'<td title="{html.escape(word)}" style="background:{look.background};'
            f'color:{look.ink}">{SYMBOLS[cell.status]}{hints}</td>')


def _cut(name: str, width: int) -> str:
    """``name`` cut to ``width`` columns of a monospace font (a Chinese character takes two),
    with … where it was cut.

    >>> _cut("Which way of freezing still computes gradients", 20), _cut("乘以 0 的分支", 8)
    ('Which way of freezi…', '乘以 0…')
    """
    if text_width(name) <= width:
        return name
    while text_width(name) > width - 1:
        name = name[:-1]
    return name.rstrip() + "…"


def spreadsheet_text(cell: str) -> str:
    r"""A text cell for a CSV file that a spreadsheet shows as text, never runs as a formula:
    one starting with = + - @, a tab or a carriage return gets a leading ' (OWASP's advice).

    >>> spreadsheet_text("=HYPERLINK(\"http://x\")"), spreadsheet_text("ana")
    ('\'=HYPERLINK("http://x")', 'ana')
    """
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


def merged_entries(tables: Iterable[dict]) -> dict:
    """One student's entries from all their progress files (two copies of the chapters): per
    exercise, solved if solved in either, the most hints, the checks added up.

    >>> one = {"01.1": {"status": "correct", "hints": 1, "checks": 2, "solved": True}}
    >>> two = {"01.1": {"status": "not yet", "hints": 3, "checks": 1, "solved": False}}
    >>> merged = merged_entries([one, two])["01.1"]
    >>> merged["solved"], merged["hints"], merged["checks"]
    (True, 3, 3)
    """
    merged: dict = {}
    for entries in tables:
        for exercise_id, entry in entries.items():
            if exercise_id not in merged:
                merged[exercise_id] = dict(entry)
                continue
            have = merged[exercise_id]
            have["solved"] = bool(have.get("solved")) or bool(entry.get("solved"))
            have["hints"] = max(int(have.get("hints", 0)), int(entry.get("hints", 0)))
            have["checks"] = int(have.get("checks", 0)) + int(entry.get("checks", 0))
            if entry.get("updated", "") > have.get("updated", ""):
                have["status"], have["updated"] = entry["status"], entry.get("updated", "")
    return merged


def class_table(folders: Iterable[str | os.PathLike], exercise_ids: list[str]) -> ClassTable:
    """The table of the students whose folders are ``folders``, each named as the top of this
    module says. A folder named here may be a link (the teacher chose it); below it, no link is
    followed. ``folders`` may be any iterable (the command passes a progress bar's)."""
    counted: dict[tuple[int, int], str] = {}     # (device, inode) -> the student it counted for
    students = [_student(Path(folder).expanduser().resolve(), counted) for folder in folders]
    return ClassTable(named(students), exercise_ids)


def named(students: list[Student]) -> list[Student]:
    """The students with their columns' names: the learner their files record when that tells
    them apart (see the top of this module), else their folder's name.

    >>> ana = Student("home-1", {}, folder="home-1", learner="ana", files=1)
    >>> twins = [Student(f"home-{n}", {}, folder=f"home-{n}", learner="jovyan", files=1)
    ...          for n in (2, 3)]
    >>> [student.name for student in named([ana, *twins])]
    ['ana', 'home-2', 'home-3']
    """
    learners = Counter(student.learner for student in students if student.learner)
    unnamed = {student.folder for student in students
               if not student.learner or learners[student.learner] > 1}
    return [student._replace(name=student.learner)
            if student.learner and learners[student.learner] == 1
            and student.learner not in unnamed else student
            for student in students]


def _student(home: Path, counted: dict[tuple[int, int], str]) -> Student:
    """One student's column: their files read (only read), each file counted once in a class."""
    folder = printable(home.name or str(home)) or "(no name)"
    for _ in range(2):                  # a kernel saving meanwhile replaces its file (a new
        found = search(home)            # inode): search once more before calling it a problem
        readings, problems, changed = _read_all(found.files)
        if not changed:
            break
    tables, notes, learners = [], [], set()
    for shown, identity, entries, learner in readings:
        if identity in counted:
            notes.append(text("progress.why.counted", path=shown, name=counted[identity]))
        else:
            counted[identity] = folder
            tables.append(entries)
            learners |= {learner} if learner else set()
    if len(learners) > 1:               # two copies of the chapters checked by two people
        notes.append(text("progress.why.learners", learners=", ".join(sorted(learners))))
    learner = learners.pop() if len(learners) == 1 else ""
    return Student(folder, merged_entries(tables), tuple(found.problems + problems),
                   tuple(notes), folder=folder, learner=learner,
                   files=len(found.files))


def _read_all(files: list[tuple[Path, tuple[int, int]]]) -> tuple[list, list[str], bool]:
    """Each file's entries, as (path to show, (device, inode), entries, learner); the
    problems; and whether a file was not the one the search found (gone, or another file)."""
    readings, problems, changed = [], [], False
    for path, identity in files:
        shown = printable(str(path))
        try:
            entries, learner, info = record.read_progress(path, follow_links=False)
        except FileNotFoundError:
            problems.append(text("progress.why.gone", path=shown))
            changed = True
            continue
        except record.ProgressFileError as error:
            problems.append(f"{shown}: {error}")
            continue
        if (info.st_dev, info.st_ino) != identity:   # replaced, or a folder on its path was
            problems.append(text("progress.why.changed", path=shown))  # swapped for a link
            changed = True
        else:
            readings.append((shown, identity, entries, printable(learner)))
    return readings, problems, changed
