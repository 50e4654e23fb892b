"""Finding the progress files in students' homes, trusting nothing in them (classtable.py's
reading of a class).

A home is the student's to fill: the search follows no symbolic link, skips hidden folders,
goes SEARCH_DEPTH levels down and looks at MAX_ENTRIES entries at most, and a name it reports
is made :func:`printable` first (a file name can hold a terminal's escape sequence).

>>> import tempfile
>>> progress_files(tempfile.mkdtemp())
[]
"""
from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path
from typing import NamedTuple

from ..i18n import text
from . import record

#: How deep below a student's folder the progress file is looked for (the home itself, the
#: chapters' folder in it, one more level): a home holds much else that need not be walked.
SEARCH_DEPTH = 3
#: How many folder entries the search looks at in one student's folder, at most: a home holds
#: a few hundred near the top, and a student with a million empty folders must not stall the
#: report (the student is then reported as not fully searched).
MAX_ENTRIES = 10_000

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
    files: list[tuple[Path, tuple[int, int]]] = []
    problems: list[str] = []
    level, seen = [Path(folder)], 0
    for depth in range(SEARCH_DEPTH + 1):
        below: list[Path] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > MAX_ENTRIES:
                            problems.append(text("progress.why.too_many", limit=MAX_ENTRIES,
                                                 folder=printable(str(folder))))
                            return Found(sorted(files), problems)
                        _place(entry, depth, files, below, problems)
            except OSError as error:    # a folder the teacher cannot read: say so, go on
                problems.append(text("progress.why.not_searched",
                                     folder=printable(str(directory)),
                                     error=(error.strerror or str(error)).lower()))
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
            problems.append(text("progress.why.link", path=printable(entry.path)))
        else:
            files.append((Path(entry.path), (info.st_dev, info.st_ino)))
    elif (depth < SEARCH_DEPTH and not entry.name.startswith(".")
          and entry.is_dir(follow_symlinks=False)):
        below.append(Path(entry.path))


def progress_files(folder: str | os.PathLike) -> list[Path]:
    """The progress files :func:`search` finds in ``folder``."""
    return [path for path, _ in search(folder).files]
