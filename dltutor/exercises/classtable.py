"""A teacher's view of a class: every student's progress file gathered into one table.

On a class hub each student's home holds the chapters and, beside them, the progress file the
exercises write (record.py). ``dltutor progress DIR [DIR ...]`` (one DIR per student) reads
them and prints a table, one row per exercise and one column per student, and writes the same
table as ``progress.csv`` (one line per exercise and student) and ``progress.html``.

A cell is the student's best result so far: correct once it has been correct, else the last
check's "not yet", else "not attempted" (never checked, or checked with the blank still in).

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
import os
from pathlib import Path
from typing import Iterable, NamedTuple

from . import record
from .view import LOOKS

#: How deep below a student's folder the progress file is looked for (the home itself, the
#: chapters' folder in it, one more level): a home holds much else that need not be walked.
SEARCH_DEPTH = 3
SYMBOLS = {"correct": "✓", "not yet": "✗", "not attempted": "·"}


class Cell(NamedTuple):
    """One student's standing on one exercise: status and hints taken."""

    status: str
    hints: int


class Student(NamedTuple):
    """A student's column: a name (their folder's) and what their progress files recorded."""

    name: str
    entries: dict


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

    def write_csv(self, path: str | os.PathLike) -> None:
        """One line per exercise and student: exercise, student, status, hints, checks."""
        with open(path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["exercise", "student", "status", "hints", "checks"])
            for exercise_id in self.exercise_ids:
                for student in self.students:
                    cell = self.cell(student, exercise_id)
                    checks = int(student.entries.get(exercise_id, {}).get("checks", 0))
                    writer.writerow([exercise_id, student.name, cell.status, cell.hints, checks])

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
        Path(path).write_text(self.html(), encoding="utf-8")


def _html_cell(cell: Cell) -> str:
    look = LOOKS[cell.status]
    hints = f"<sup>{cell.hints}</sup>" if cell.hints else ""
    return (f'<td title="{cell.status}" style="background:{look.background};color:{look.ink}">'
            f"{SYMBOLS[cell.status]}{hints}</td>")


def progress_files(folder: str | os.PathLike) -> list[Path]:
    """The progress files in ``folder`` and up to SEARCH_DEPTH levels below it (hidden
    folders, such as .ipynb_checkpoints or .local, are not searched)."""
    found, level = [], [Path(folder)]
    for _ in range(SEARCH_DEPTH + 1):
        below = []
        for directory in level:
            candidate = directory / record.FILE_NAME
            if candidate.is_file():
                found.append(candidate)
            try:
                below.extend(p for p in directory.iterdir()
                             if p.is_dir() and not p.name.startswith("."))
            except OSError:             # a folder the teacher cannot read: skip it
                continue
        level = below
    return sorted(found)


def merged_entries(files: Iterable[Path]) -> dict:
    """One student's entries from all their progress files (two copies of the chapters): per
    exercise, solved if solved in either, the most hints, the checks added up."""
    merged: dict = {}
    for path in files:
        for exercise_id, entry in record.load(path).items():
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
    folder: on a hub, the home's name is the user's)."""
    students = []
    for folder in folders:
        path = Path(folder).expanduser()
        name = path.resolve().name or str(path)
        students.append(Student(name, merged_entries(progress_files(path))))
    return ClassTable(students, exercise_ids)
