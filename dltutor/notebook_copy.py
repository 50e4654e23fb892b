"""The chapters a learner gets: found in the kit, copied into a folder of theirs, never outside it.

``dltutor notebooks DIR`` (and ``dltutor lab``) copy the chapters with :func:`copy_notebooks`.
It never overwrites a learner's work (a chapter they changed stays as they left it, one they
deleted comes back, a new one from a newer kit is added) and never writes outside DIR: a link
inside DIR (``DIR/zh -> /elsewhere``, or a chapter's name pointing at another file) is left
alone and named, never written through.

A class hub copies the chapters into each student's home when their server starts. It runs
this file as a script, as the student (``python -I notebook_copy.py HOME --private``): the
hub's own account never writes into a folder a student controls, and starting a bare Python
costs a few milliseconds, where importing the whole kit would cost half a CPU second per login.
That is why this module uses the standard library only and imports nothing of dltutor.

>>> import contextlib, io, tempfile
>>> with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
...     copied = copy_notebooks(folder)
>>> "00_welcome.ipynb" in [p.name for p in copied]
True
"""
from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

#: What a learner's folder gets: the chapters, the lab page, the Chinese edition, the index
#: and the glossary (not the sources in notebooks/src, which are for authors).
SHIPPED = ("*.ipynb", "FAQ.md", "GLOSSARY.md", "zh/*.ipynb", "zh/FAQ.md")
#: O_NOFOLLOW where the system has it: the last name of a path is never followed as a link.
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


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


def shipped_files(source: Path) -> list[Path]:
    """The chapters' files, relative to ``source``, in order.

    >>> Path("00_welcome.ipynb") in shipped_files(chapters_folder())
    True
    """
    return sorted({p.relative_to(source) for pattern in SHIPPED for p in source.glob(pattern)})


def link_on_the_way(target: Path, relative: Path) -> Path | None:
    """The first link among ``target/relative``'s folders and file (``target`` itself is the
    learner's choice and may be one), or None.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "zh").symlink_to(tempfile.mkdtemp())
    >>> link_on_the_way(folder, Path("zh/00_welcome.zh.ipynb")) == folder / "zh"
    True
    """
    path = target
    for part in relative.parts:
        path = path / part
        if path.is_symlink():
            return path
    return None


def _create(destination: Path, content: bytes) -> None:
    """Write a new file; fails if anything, a link included, is already at ``destination``."""
    handle = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
    except BaseException:
        destination.unlink(missing_ok=True)                # never leave half a chapter
        raise


def copy_notebooks(target: str | os.PathLike) -> list[Path]:
    """Copy the chapters into ``target`` (made if needed); a file that is already there and
    differs is kept as it is, a link is left alone. Returns the files copied; prints what it
    did.

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
    target.mkdir(parents=True, exist_ok=True)
    files = shipped_files(source)
    copied, kept, links = [], [], set()
    for relative in files:
        link = link_on_the_way(target, relative)
        if link is not None:
            links.add(link)
            continue
        destination, content = target / relative, (source / relative).read_bytes()
        if destination.exists():
            if destination.read_bytes() != content:
                kept.append(relative)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        _create(destination, content)
        copied.append(destination)
    for relative in kept:
        print(f"Kept your changed {relative} (delete it to get the original back).")
    for link in sorted(links):
        print(f"Left {link} alone: it is a link, and the chapters are copied only into "
              f"{target} itself (remove the link to get them).")
    if copied:
        print(f"Copied {len(copied)} files into {target}.")
    else:
        print(f"All {len(files)} chapters were already in {target}.")
    return copied


def keep_private(folder: Path) -> None:
    """Take away other accounts' access to ``folder`` (its group's stays as it is): a class
    hub's students must not read each other's work, and a new account's home is often
    readable by all.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> folder.chmod(0o755); keep_private(folder); oct(folder.stat().st_mode & 0o777)
    '0o750'
    """
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & 0o007:
        folder.chmod(mode & ~0o007)


def main(argv: list[str] | None = None) -> int:
    """``python notebook_copy.py DIR [--private]``: what a class hub runs as the student."""
    parser = argparse.ArgumentParser(description="Copy the dltutor chapters into DIR.")
    parser.add_argument("folder", metavar="DIR")
    parser.add_argument("--private", action="store_true",
                        help="also take away other accounts' access to DIR (a student's home)")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    try:
        copy_notebooks(folder)
        if args.private:
            keep_private(folder)
    except OSError as error:
        print(f"dltutor notebooks: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
