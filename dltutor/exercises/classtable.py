"""A teacher's view of a class: every student's progress file gathered into one table.

On a class hub each student's home holds the chapters and, beside them, the progress file the
exercises write (record.py). ``dltutor progress DIR [DIR ...]`` (one DIR per student) reads
them and prints a table, one row per exercise and one column per student, and writes the same
table as ``progress.csv`` (one line per exercise and student) and ``progress.html``.

A cell is the student's best result so far: correct once it has been correct, else the last
check's "not yet", else "not attempted" (never checked, or checked with the blank still in).

The students' folders are theirs to fill, so nothing in them is trusted. The search follows no
symbolic link (a link to another student's home does not make her work his) and looks at
MAX_ENTRIES folder entries at most; a file is read without following a link, only when it is a
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
"""
from __future__ import annotations

import csv
import html
import io
import os
import stat
import unicodedata
from pathlib import Path
from typing import Iterable, NamedTuple

from . import record
from .view import LOOKS

#: How deep below a student's folder the progress file is looked for (the home itself, the
#: chapters' folder in it, one more level): a home holds much else that need not be walked.
SEARCH_DEPTH = 3
#: How many folder entries the search looks at in one student's folder, at most: a home holds
#: a few hundred near the top, and a student with a million empty folders must not stall the
#: report (the student is then reported as not fully searched).
MAX_ENTRIES = 10_000
SYMBOLS = {"correct": "✓", "not yet": "✗", "not attempted": "·"}


class Cell(NamedTuple):
    """One student's standing on one exercise: status and hints taken."""

    status: str
    hints: int


class Student(NamedTuple):
    """A student's column: a name (their folder's) and what their progress files recorded;
    ``problems``: what could not be read or searched (so the column may be incomplete),
    ``notes``: what was left out on purpose (a file already counted for another student)."""

    name: str
    entries: dict
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class ClassTable:
    """The class's progress: :meth:`cell` for one student and exercise, :meth:`text`,
    :meth:`write_csv` and :meth:`write_html` for the whole table."""

    def __init__(self, students: list[Student], exercise_ids: list[str]):
        self.students, self.exercise_ids = students, exercise_ids

    def cell(self, student: Student, exercise_id: str) -> Cell:
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

    def text(self) -> str:
        """The table for a terminal: a symbol per cell (✓ correct, ✗ not yet, · not attempted)
        and the hints taken after it; the students' names are cut to 10 characters."""
        width = 12
        head = "exercise".ljust(9) + "".join(s.name[:10].ljust(width) for s in self.students)
        lines = [head]
        for exercise_id in self.exercise_ids:
            cells = []
            for student in self.students:
                cell = self.cell(student, exercise_id)
                hints = f" {cell.hints}h" if cell.hints else ""
                cells.append((SYMBOLS[cell.status] + hints).ljust(width))
            lines.append(exercise_id.ljust(9) + "".join(cells))
        lines.append("correct".ljust(9) + "".join(
            f"{self.solved(s)}/{len(self.exercise_ids)}".ljust(width) for s in self.students))
        lines.append("✓ correct  ✗ not yet  · not attempted;  2h: two hints taken")
        return "\n".join(line.rstrip() for line in lines)

    def csv_text(self) -> str:
        """One line per exercise and student: exercise, student, status, hints, checks."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["exercise", "student", "status", "hints", "checks"])
        for exercise_id in self.exercise_ids:
            for student in self.students:
                cell = self.cell(student, exercise_id)
                checks = int(student.entries.get(exercise_id, {}).get("checks", 0))
                writer.writerow([exercise_id, spreadsheet_text(student.name), cell.status,
                                 cell.hints, checks])
        return out.getvalue()

    def write_csv(self, path: str | os.PathLike) -> None:
        """The table as CSV (see :meth:`csv_text`), written whole or not at all."""
        record.write_atomically(path, self.csv_text())

    def html(self) -> str:
        """One HTML page: the table in the verdicts' colours, with symbols and words so that it
        reads without colour too."""
        head = "".join(f'<th scope="col">{html.escape(s.name)}</th>' for s in self.students)
        body = []
        for exercise_id in self.exercise_ids:
            cells = "".join(_html_cell(self.cell(s, exercise_id)) for s in self.students)
            body.append(f'<tr><th scope="row">{exercise_id}</th>{cells}</tr>')
        totals = "".join(f"<td>{self.solved(s)} / {len(self.exercise_ids)}</td>"
                         for s in self.students)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<title>dltutor: class progress</title><style>"
                "body{font-family:system-ui,sans-serif;font-size:14px;margin:16px}"
                "table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:3px 8px;"
                "text-align:center;white-space:nowrap}thead th{position:sticky;top:0;"
                "background:#fff}tfoot td{font-weight:bold}</style></head><body>"
                f"<h1>Class progress</h1><p>{len(self.students)} students, "
                f"{len(self.exercise_ids)} exercises. ✓ correct, ✗ not yet, · not attempted; "
                "the number after a symbol is the hints taken.</p>"
                f'<table><thead><tr><th scope="col">exercise</th>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody><tfoot><tr><th scope="row">correct</th>'
                f"{totals}</tr></tfoot></table></body></html>\n")

    def write_html(self, path: str | os.PathLike) -> None:
        """The page of :meth:`html`, written whole or not at all."""
        record.write_atomically(path, self.html())


def _html_cell(cell: Cell) -> str:
    look = LOOKS[cell.status]
    hints = f"<sup>{cell.hints}</sup>" if cell.hints else ""
    return (f'<td title="{cell.status}" style="background:{look.background};color:{look.ink}">'
            f"{SYMBOLS[cell.status]}{hints}</td>")


#: The kinds of character a name loses (Unicode categories): control, format (U+202E turns the
#: text after it around), surrogate (an undecodable byte of a file name), line and paragraph
#: separators.
HIDDEN_KINDS = ("Cc", "Cf", "Cs", "Zl", "Zp")


def printable(name: str) -> str:
    r"""``name`` without the characters that can change what a terminal or a page shows
    (HIDDEN_KINDS: an escape sequence, a new line, a right-to-left override, ...).

    >>> printable("ana\x1b[2J\u202etxt.exe\n")
    'ana[2Jtxt.exe'
    """
    return "".join(c for c in name if unicodedata.category(c) not in HIDDEN_KINDS)


def spreadsheet_text(cell: str) -> str:
    r"""A text cell for a CSV file that a spreadsheet shows as text, never runs as a formula:
    one starting with = + - @, a tab or a carriage return gets a leading ' (OWASP's advice).

    >>> spreadsheet_text("=HYPERLINK(\"http://x\")"), spreadsheet_text("ana")
    ('\'=HYPERLINK("http://x")', 'ana')
    """
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


class Found(NamedTuple):
    """A search's result: the progress files with the (device, inode) each had when found,
    and what could not be searched."""

    files: list[tuple[Path, tuple[int, int]]]
    problems: list[str]


def search(folder: str | os.PathLike) -> Found:
    """The progress files in ``folder`` and up to SEARCH_DEPTH levels below it. Hidden folders
    (.ipynb_checkpoints, .local) are not searched, links are not followed, and the search stops
    after MAX_ENTRIES entries (a problem says so).

    >>> import tempfile
    >>> home = tempfile.mkdtemp()
    >>> os.symlink(home, os.path.join(home, "loop"))       # a link is not followed
    >>> search(home)
    Found(files=[], problems=[])
    """
    files, problems, level, seen = [], [], [Path(folder)], 0
    for depth in range(SEARCH_DEPTH + 1):
        below = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > MAX_ENTRIES:
                            problems.append(f"not fully searched: more than {MAX_ENTRIES:,} "
                                            f"files and folders in {printable(str(folder))}")
                            return Found(sorted(files), problems)
                        _place(entry, depth, files, below, problems)
            except OSError as error:    # a folder the teacher cannot read: say so, go on
                problems.append(f"{printable(str(directory))}: could not be searched "
                                f"({(error.strerror or str(error)).lower()})")
        level = sorted(below)
    return Found(sorted(files), problems)


def _place(entry: os.DirEntry, depth: int, files: list, below: list, problems: list) -> None:
    """Put one folder entry where it belongs: a progress file, a folder to search, or neither."""
    if entry.name == record.FILE_NAME:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:                 # gone since the folder was listed
            return
        if stat.S_ISLNK(info.st_mode):
            problems.append(f"{printable(entry.path)}: a symbolic link (not followed)")
        else:
            files.append((Path(entry.path), (info.st_dev, info.st_ino)))
    elif (depth < SEARCH_DEPTH and not entry.name.startswith(".")
          and entry.is_dir(follow_symlinks=False)):
        below.append(Path(entry.path))


def progress_files(folder: str | os.PathLike) -> list[Path]:
    """The progress files :func:`search` finds in ``folder``."""
    return [path for path, _ in search(folder).files]


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
    """The table of the students whose folders are ``folders`` (a student is named after their
    folder: on a hub, the home's name is the user's). A folder named here may be a link (the
    teacher chose it); below it, no link is followed."""
    counted: dict[tuple[int, int], str] = {}     # (device, inode) -> the student it counted for
    students = [_student(Path(folder).expanduser().resolve(), counted) for folder in folders]
    return ClassTable(students, exercise_ids)


def _student(home: Path, counted: dict[tuple[int, int], str]) -> Student:
    """One student's column: their files read (only read), each file counted once in a class."""
    name = printable(home.name or str(home)) or "(no name)"
    for _ in range(2):                  # a kernel saving meanwhile replaces its file (a new
        found = search(home)            # inode): search once more before calling it a problem
        readings, problems, changed = _read_all(found.files)
        if not changed:
            break
    tables, notes = [], []
    for shown, identity, entries in readings:
        if identity in counted:
            notes.append(f"{shown}: already counted for {counted[identity]}")
        else:
            counted[identity] = name
            tables.append(entries)
    return Student(name, merged_entries(tables), tuple(found.problems + problems), tuple(notes))


def _read_all(files: list[tuple[Path, tuple[int, int]]]) -> tuple[list, list[str], bool]:
    """Each file's entries, as (path to show, (device, inode), entries); the problems; and
    whether a file was not the one the search found (gone, or another file now)."""
    readings, problems, changed = [], [], False
    for path, identity in files:
        shown = printable(str(path))
        try:
            entries, info = record.read_entries(path, follow_links=False)
        except FileNotFoundError:
            problems.append(f"{shown}: gone before it could be read")
            changed = True
            continue
        except record.ProgressFileError as error:
            problems.append(f"{shown}: {error}")
            continue
        if (info.st_dev, info.st_ino) != identity:   # replaced, or a folder on its path was
            problems.append(f"{shown}: changed while the report read it")  # swapped for a link
            changed = True
        else:
            readings.append((shown, identity, entries))
    return readings, problems, changed
