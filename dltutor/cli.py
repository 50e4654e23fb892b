"""The ``dltutor`` command: the chapters for a learner who installed the kit with pip.

``pip install dltutor`` ships the chapters inside the package. Two commands put them to use::

    dltutor notebooks DIR      # copy the chapters into DIR, a folder you own
    dltutor lab [DIR]          # the same, then JupyterLab on DIR, opened at 00_welcome

``notebooks`` never overwrites your work: a chapter you changed stays as you left it (the
command says so), a chapter you deleted comes back, and a new one from a newer kit is added.
``lab`` takes the usual JupyterLab options after ``--`` and ``--lang zh`` opens the Chinese
edition (the kit then speaks Chinese).

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
import subprocess
import sys
from pathlib import Path

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


def lab_command(folder: Path, language: str, extra: list[str]) -> list[str]:
    """The JupyterLab command line that opens ``folder`` at its first chapter.

    >>> lab_command(Path("nb"), "zh", ["--no-browser"])[-2:]
    ['--LabApp.default_url=/lab/tree/zh/00_welcome.ipynb', '--no-browser']
    """
    start = "zh/00_welcome.ipynb" if language == "zh" else "00_welcome.ipynb"
    return [sys.executable, "-m", "jupyterlab", f"--notebook-dir={folder}",
            f"--LabApp.default_url=/lab/tree/{start}", *extra]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dltutor", description="The dltutor chapters: copy them to a folder of yours, "
                                    "and open them in JupyterLab.")
    commands = parser.add_subparsers(dest="command", required=True)
    copy = commands.add_parser("notebooks", help="copy the chapters into DIR (your edits stay)")
    copy.add_argument("folder", metavar="DIR")
    lab = commands.add_parser("lab", help="copy the chapters into DIR, then open JupyterLab")
    lab.add_argument("folder", metavar="DIR", nargs="?", default=DEFAULT_FOLDER,
                     help=f"the folder for the chapters (default: ./{DEFAULT_FOLDER})")
    lab.add_argument("--lang", choices=("en", "zh"), default=None,
                     help="zh opens the Chinese edition and makes the kit speak Chinese "
                          "(default: $DLTUTOR_LANG, else en)")
    lab.epilog = "Options for JupyterLab go after --, e.g. dltutor lab -- --no-browser --port 8889"
    return parser


def main(argv: list[str] | None = None) -> int:
    """``dltutor notebooks DIR`` or ``dltutor lab [DIR] [--lang zh] [-- JUPYTER OPTIONS]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    extra: list[str] = []
    if "--" in argv:                          # what follows -- is JupyterLab's
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    parser = _parser()
    args = parser.parse_args(argv)
    if extra and args.command != "lab":
        parser.error("options after -- are for JupyterLab: use them with dltutor lab")
    try:
        copy_notebooks(args.folder)
    except OSError as error:
        print(f"dltutor: {error}", file=sys.stderr)
        return 1
    if args.command == "notebooks":
        return 0
    language = args.lang or os.environ.get("DLTUTOR_LANG") or "en"
    env = {**os.environ, "DLTUTOR_LANG": language}
    print(f"Starting JupyterLab on {Path(args.folder).resolve()} (Ctrl-C stops it).", flush=True)
    return subprocess.call(lab_command(Path(args.folder).resolve(), language, extra), env=env)


if __name__ == "__main__":
    sys.exit(main())
