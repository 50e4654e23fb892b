"""The ``dltutor`` command: the chapters for a learner who installed the kit with pip.

``pip install dltutor`` ships the chapters inside the package. Two commands put them to use,
and a third is a teacher's::

    dltutor notebooks DIR      # copy the chapters into DIR, a folder you own
    dltutor lab [DIR]          # the same, then JupyterLab on DIR, opened at 00_welcome
    dltutor progress DIR ...   # a class's exercise progress, one DIR per student's home

``notebooks`` never overwrites your work: a chapter you changed stays as you left it (the
command says so), a chapter you deleted comes back, and a new one from a newer kit is added.
``lab`` prints one address to open (and opens a browser where there is a screen; see
:mod:`dltutor.launch`), takes ``--port``, ``--ip`` and ``--no-browser``, further JupyterLab
options after ``--``, and ``--lang zh`` opens the Chinese edition. The language follows the
notebook, not the server: each Chinese chapter switches the kit to Chinese in its first cell,
and an English chapter opened from the same JupyterLab answers in English. ``make lab`` in a
clone runs ``dltutor lab notebooks``: the clone's own chapters, served where they are.
``progress`` prints the class table of dltutor.exercises.classtable and writes it as
progress.csv and progress.html (``--out FOLDER``), in the language of ``--lang`` (as ``lab``:
default $DLTUTOR_LANG, else English).

>>> import contextlib, io, tempfile
>>> with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
...     copied = copy_notebooks(folder)
>>> "00_welcome.ipynb" in [p.name for p in copied]
True
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .i18n import language_code, text, use_language
from .launch import serve
from .notebook_copy import chapters_folder, copy_notebooks

if TYPE_CHECKING:                         # the class table is imported only when it is used
    from .exercises.classtable import ClassTable

__all__ = ["main", "copy_notebooks", "chapters_folder", "start_notebook", "port_number"]

DEFAULT_FOLDER = "dltutor-notebooks"
#: ``dltutor progress``'s exit statuses (see class_progress).
ALL_READ, NOTHING_WRITTEN, SOME_UNREADABLE, SOME_WITHOUT_FILE = 0, 1, 2, 3
#: From how many students on ``dltutor progress`` shows a progress bar (on stderr, and only
#: when stderr is a terminal): a few homes are read before a bar would be seen.
PROGRESS_BAR_FROM = 20


def start_notebook(language: str) -> str:
    """The chapter JupyterLab opens on: the welcome chapter of the language's edition.

    >>> start_notebook("zh")
    'zh/00_welcome.zh.ipynb'
    """
    return "zh/00_welcome.zh.ipynb" if language == "zh" else "00_welcome.ipynb"


def port_number(value: str) -> int:
    """``--port``: a TCP port, 1 to 65535, or 0 for any free one (the address printed then has
    the port the server really got).

    >>> port_number("8888"), port_number("0")
    (8888, 0)
    >>> port_number("70000")                                        # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 70000 is not a port: give a number from 1 to 65535, or 0 ...
    """
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give a number from 1 to "
                                         f"65535, or 0 for any free port")
    return port


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dltutor", description="The dltutor chapters: copy them to a folder of yours, "
                                    "open them in JupyterLab, and see a class's progress.")
    commands = parser.add_subparsers(dest="command", required=True)
    copy = commands.add_parser("notebooks", help="copy the chapters into DIR (your edits stay)")
    copy.add_argument("folder", metavar="DIR")
    lab = commands.add_parser("lab", help="copy the chapters into DIR, then open JupyterLab")
    lab.add_argument("folder", metavar="DIR", nargs="?", default=DEFAULT_FOLDER,
                     help=f"the folder for the chapters (default: ./{DEFAULT_FOLDER})")
    lab.add_argument("--lang", choices=("en", "zh"), default=None,
                     help="zh opens the Chinese edition and makes the kit speak Chinese "
                          "(default: $DLTUTOR_LANG, else en)")
    lab.add_argument("--port", type=port_number, default=8888,
                     help="the port to serve on (default 8888, or the next free one; "
                          "0: any free port)")
    lab.add_argument("--ip", default="127.0.0.1",
                     help="the address to listen on (default 127.0.0.1, this machine only; "
                          "0.0.0.0 in a container whose port you publish)")
    lab.add_argument("--no-browser", action="store_true",
                     help="do not open a browser (one opens by default where there is a screen)")
    lab.epilog = ("Further options for JupyterLab go after --, e.g. "
                  "dltutor lab -- --ServerApp.log_level=INFO")
    progress = commands.add_parser(
        "progress", help="a class's exercise progress: one DIR per student (their home)")
    progress.add_argument("folders", metavar="DIR", nargs="+")
    progress.add_argument("--out", metavar="FOLDER", default=".",
                          help="where progress.csv and progress.html go (default: here)")
    progress.add_argument("--lang", choices=("en", "zh"), default=None,
                          help="the language of the table and the exercises' titles "
                               "(default: $DLTUTOR_LANG, else en)")
    progress.epilog = ("Exit status: 0 when every student's progress file was read; 1 when "
                       "nothing was written (a wrong option, a DIR that is not a folder, an "
                       "--out that cannot be written); 2 when the table was written but some "
                       "students' files could not be read (each named, with why, on stderr); "
                       "3 when it was written and every file read, but some students' folders "
                       "hold no progress file (– in the table, named on stderr).")
    return parser


def class_progress(folders: list[str], out: str, language: str | None = None) -> int:
    """``dltutor progress DIR ...``: print the class table, write it as progress.csv and
    progress.html in the folder ``out``, and name each student whose files could not all be
    read, with why and which file, and each whose folder holds none (see
    dltutor.exercises.classtable). ``language``: "en" or "zh" (default: $DLTUTOR_LANG, else
    English).

    The exit status: 0 (ALL_READ) when every student's progress file was read; 1
    (NOTHING_WRITTEN) when nothing could be written (a DIR that is not a folder, an output
    folder that cannot be written; a wrong option too, see main); 2 (SOME_UNREADABLE) when the
    table was written but some students' files could not be read (their columns may miss what
    those files hold; the rest of the class is whole); 3 (SOME_WITHOUT_FILE) when the table was
    written and every file was read, but some students' folders hold no progress file. 2 wins
    over 3: a file that exists but cannot be read needs the teacher first.

    >>> import contextlib, io, tempfile
    >>> said = io.StringIO()
    >>> with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
    ...     status = class_progress([tempfile.mkdtemp()], out=tempfile.mkdtemp())
    >>> status                                     # the student's folder holds no progress file
    3
    """
    language = language or language_code(os.environ.get("DLTUTOR_LANG", "")) or "en"
    with use_language(language):
        return _class_progress(folders, Path(out).expanduser())


def _class_progress(folders: list[str], target: Path) -> int:
    from .exercises import all_exercises
    from .exercises.classtable import class_table

    missing = [f for f in folders if not Path(f).expanduser().is_dir()]
    if missing:
        print(text("progress.not_folder", folders=", ".join(missing)), file=sys.stderr)
        return NOTHING_WRITTEN
    table = class_table(_with_progress_bar(folders), [e.id for e in all_exercises()])
    print(table.text())
    try:
        target.mkdir(parents=True, exist_ok=True)
        table.write_csv(target / "progress.csv")
        table.write_html(target / "progress.html")
    except OSError as error:
        print(text("progress.cannot_write", target=target, error=error), file=sys.stderr)
        return NOTHING_WRITTEN
    _say_what_was_not_read(table)
    print(text("progress.wrote", csv=target / "progress.csv", html=target / "progress.html"))
    if any(student.problems for student in table.students):
        return SOME_UNREADABLE
    return SOME_WITHOUT_FILE if any(s.missing for s in table.students) else ALL_READ


def _with_progress_bar(folders: list[str]) -> Iterable[str]:
    """``folders``, counted on a progress bar on stderr when there are many and stderr is a
    terminal (never in a pipe, a CSV redirect or a test: stdout is the table only)."""
    from tqdm import tqdm

    shown = len(folders) >= PROGRESS_BAR_FROM and sys.stderr.isatty()
    return tqdm(folders, desc=text("progress.bar"), unit=text("progress.bar_unit"),
                file=sys.stderr, disable=not shown, leave=False)


def _say_what_was_not_read(table: ClassTable) -> None:
    """The notes and the learners recorded by several students' files (stdout: the columns'
    names), and on stderr each file that could not be read and each student whose folder
    holds no progress file."""
    for student in table.students:
        for note in student.notes:
            print(text("progress.note", name=student.name, note=note))
    learners = Counter(student.learner for student in table.students if student.learner)
    for learner, count in sorted(learners.items()):
        if count > 1:
            print(text("progress.shared_learner", count=count, learner=learner))
    for student in table.students:
        for problem in student.problems:        # a column that may be incomplete: say why
            print(text("progress.unreadable", name=student.name, problem=problem),
                  file=sys.stderr)
    without_file = [s.name for s in table.students if s.missing]
    if without_file:
        print(text("progress.no_file", names=", ".join(without_file)), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """``dltutor notebooks DIR``, ``dltutor lab [DIR] [--lang zh] [-- JUPYTER OPTIONS]`` or
    ``dltutor progress DIR [DIR ...] [--out FOLDER]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    extra: list[str] = []
    if "--" in argv:                          # what follows -- is JupyterLab's
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        # argparse stops a wrong option with 2, which for progress means "some files could not
        # be read": a wrong option writes nothing, so progress says 1 (NOTHING_WRITTEN).
        if argv[:1] == ["progress"] and stop.code == 2:
            return NOTHING_WRITTEN
        raise
    if extra and args.command != "lab":
        parser.error("options after -- are for JupyterLab: use them with dltutor lab")
    if args.command == "progress":
        return class_progress(args.folders, args.out, args.lang)
    folder = Path(args.folder).expanduser().resolve()
    if folder != chapters_folder().resolve():     # make lab serves the clone's own chapters
        try:
            copy_notebooks(folder)
        except OSError as error:
            print(f"dltutor: {error}", file=sys.stderr)
            return 1
    if args.command == "notebooks":
        return 0
    language = args.lang or language_code(os.environ.get("DLTUTOR_LANG", "")) or "en"
    with use_language(language):
        try:
            return serve(folder, start=start_notebook(language), port=args.port, ip=args.ip,
                         browser=False if args.no_browser else None, extra=extra)
        except OSError as error:
            print(f"dltutor: {error}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
