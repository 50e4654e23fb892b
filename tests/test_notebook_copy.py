"""`dltutor notebooks DIR` (dltutor/notebook_copy.py): the chapters arrive, a learner's edits
stay, and nothing is ever written outside DIR, whatever links DIR holds."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dltutor.cli import main
from dltutor.notebook_copy import __file__ as COPY_SCRIPT
from dltutor.notebook_copy import chapters_folder, copy_notebooks, shipped_files


def everything_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_links_inside_the_folder_are_never_written_through(tmp_path, capsys):
    target, outside = tmp_path / "chapters", tmp_path / "outside"
    target.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (target / "zh").symlink_to(outside)                              # a folder elsewhere
    (target / "00_welcome.ipynb").symlink_to(outside / "new-file")   # a dangling link
    (target / "01_tensors_autograd.ipynb").symlink_to(outside / "keep.txt")    # a link to a file
    assert main(["notebooks", str(target)]) == 0
    assert everything_in(outside) == {"keep.txt": b"mine"}           # nothing written there
    said = capsys.readouterr().out
    for name in ("zh", "00_welcome.ipynb", "01_tensors_autograd.ipynb"):
        assert f"Left {target / name} alone: it is a link" in said
    copied = {p for p in shipped_files(chapters_folder()) if p.parts[0] != "zh"} - \
        {Path("00_welcome.ipynb"), Path("01_tensors_autograd.ipynb")}
    assert all((target / p).is_file() and not (target / p).is_symlink() for p in copied)


def test_a_changed_chapter_is_kept_and_a_deleted_one_comes_back(tmp_path, capsys):
    copy_notebooks(tmp_path)
    (tmp_path / "02_parameter_access.ipynb").unlink(missing_ok=True)
    first = sorted(tmp_path.glob("0*.ipynb"))[0]
    first.write_text("my notes")
    copied = copy_notebooks(tmp_path)
    assert first.read_text() == "my notes"
    assert f"Kept your changed {first.name}" in capsys.readouterr().out
    assert all(p.exists() for p in copied)


def test_the_hubs_copy_runs_as_a_bare_script_and_closes_the_home(tmp_path):
    """What the class hub runs as the student: the file alone, in an isolated Python (no
    dltutor import, nothing from the current folder)."""
    home = tmp_path / "ana"
    home.mkdir()
    home.chmod(0o755)
    done = subprocess.run([sys.executable, "-I", COPY_SCRIPT, str(home), "--private"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (home / "00_welcome.ipynb").exists()
    assert oct(home.stat().st_mode & 0o777) == "0o750"


def test_a_file_where_the_folder_should_be_is_refused(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["notebooks", str(tmp_path / "file")]) == 1
    assert "is a file" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_folder_that_cannot_be_written_says_so(tmp_path, capsys):
    tmp_path.chmod(0o500)
    try:
        assert main(["notebooks", str(tmp_path / "chapters")]) == 1
    finally:
        tmp_path.chmod(0o700)
    assert "dltutor" in capsys.readouterr().err
