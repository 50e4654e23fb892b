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
progress.csv and progress.html (``--out FOLDER``).

>>> import contextlib, io, tempfile
>>> with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
...     copied = copy_notebooks(folder)
>>> "00_welcome.ipynb" in [p.name for p in copied]
True
"""
from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sys
from pathlib import Path

from .i18n import language_code, use_language
from .launch import serve

#: What a learner's folder gets: the chapters, the lab page, the Chinese edition, the index
#: and the glossary (not the sources in notebooks/src, which are for authors).
_SHIPPED = ("*.ipynb", "FAQ.md", "GLOSSARY.md", "zh/*.ipynb", "zh/FAQ.md")
DEFAULT_FOLDER = "dltutor-notebooks"


def chapters_folder() -> Path:
    """Where the chapters are: inside the installed package (``dltutor/chapters``), or, in a
    clone of the repository, its ``notebooks`` folder.

    >>> (chapters_folder() / "00_welcome.ipynb").exists()
    True
    """
    packaged = Path(__file__).resolve().parent / "chapters"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "notebooks"


def copy_notebooks(target: str | os.PathLike) -> list[Path]:
    """Copy the chapters into ``target`` (made if needed); a file that is already there and
    differs is kept as it is. Returns the files copied; prints what it did.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = copy_notebooks(folder)                                   # doctest: +ELLIPSIS
    Copied ... into ...
    >>> (Path(folder) / "00_welcome.ipynb").write_text("my notes")
    8
    >>> copy_notebooks(folder)                                       # doctest: +ELLIPSIS
    Kept your changed 00_welcome.ipynb (delete it to get the original back).
    All ... chapters were already in ...
    []
    """
    source, target = chapters_folder(), Path(target).expanduser()
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"dltutor notebooks: {target} is a file; give a folder to copy "
                                 f"the chapters into")
    files = sorted({p for pattern in _SHIPPED for p in source.glob(pattern)})
    copied, kept = [], []
    for path in files:
        relative = path.relative_to(source)
        destination = target / relative
        if destination.exists():
            if not filecmp.cmp(path, destination, shallow=False):
                kept.append(relative)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        copied.append(destination)
    for relative in kept:
        print(f"Kept your changed {relative} (delete it to get the original back).")
    if copied:
        print(f"Copied {len(copied)} files into {target}.")
    else:
        print(f"All {len(files)} chapters were already in {target}.")
    return copied


def start_notebook(language: str) -> str:
    """The chapter JupyterLab opens on: the welcome chapter of the language's edition.

    >>> start_notebook("zh")
    'zh/00_welcome.zh.ipynb'
    """
    return "zh/00_welcome.zh.ipynb" if language == "zh" else "00_welcome.ipynb"


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
    lab.add_argument("--port", type=int, default=8888,
                     help="the port to serve on (default 8888, or the next free one)")
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
    return parser


def class_progress(folders: list[str], out: str) -> int:
    """``dltutor progress DIR ...``: print the class table, write it as CSV and HTML."""
    from .exercises import all_exercises
    from .exercises.classtable import class_table

    missing = [f for f in folders if not Path(f).expanduser().is_dir()]
    if missing:
        print(f"dltutor progress: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    table = class_table(folders, [e.id for e in all_exercises()])
    print(table.text())
    target = Path(out).expanduser()
    try:
        target.mkdir(parents=True, exist_ok=True)
        table.write_csv(target / "progress.csv")
        table.write_html(target / "progress.html")
    except OSError as error:
        print(f"dltutor progress: {error}", file=sys.stderr)
        return 1
    empty = [s.name for s in table.students if not s.entries]
    if empty:
        print(f"no progress file found for: {', '.join(empty)}")
    print(f"wrote {target / 'progress.csv'} and {target / 'progress.html'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``dltutor notebooks DIR``, ``dltutor lab [DIR] [--lang zh] [-- JUPYTER OPTIONS]`` or
    ``dltutor progress DIR [DIR ...] [--out FOLDER]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    extra: list[str] = []
    if "--" in argv:                          # what follows -- is JupyterLab's
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    parser = _parser()
    args = parser.parse_args(argv)
    if extra and args.command != "lab":
        parser.error("options after -- are for JupyterLab: use them with dltutor lab")
    if args.command == "progress":
        return class_progress(args.folders, args.out)
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
