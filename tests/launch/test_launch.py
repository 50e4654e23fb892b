"""``dltutor lab`` as a newcomer meets it (dltutor/launch): the command it builds, and as root,
one address.

The command-line tests run the real command (``python -m dltutor.cli lab``) on a copy of the
notebooks and read what it prints; CI runs as root, so there the command proves that it starts
without the ``--allow-root`` JupyterLab would ask for. What the address it prints shows in
Chromium (the layout, a clean start, the editions' tabs) is tests/browser/test_launch.py's.
"""
from __future__ import annotations

import os
import time
import urllib.request
from pathlib import Path

import pytest

from browser_helpers import ADDRESS, copy_notebooks, dltutor_lab, isolated_env
from dltutor.launch import LabSettings, lab_command, write_start_page

PHONE = {"width": 412, "height": 860}
LAPTOP = {"width": 1280, "height": 800}


# -- the command line it builds ----------------------------------------------------------------
@pytest.mark.parametrize("root", [True, False])
def test_the_command_allows_root_exactly_when_it_runs_as_root(root, tmp_path):
    command = lab_command(Path("nb"), LabSettings(port=8888, token="t", root=root), tmp_path)
    assert ("--allow-root" in command) is root


def test_the_address_names_this_machine_when_listening_everywhere():
    assert LabSettings(port=9000, token="abc", ip="0.0.0.0").url() == \
        "http://127.0.0.1:9000/?token=abc"


def test_the_start_page_picks_simple_mode_below_the_narrow_width(tmp_path):
    page = write_start_page(tmp_path, "zh/00_welcome.zh.ipynb").read_text(encoding="utf-8")
    assert '"(max-width: 760px)"' in page
    assert '"doc" : "lab") + "/tree/zh/00_welcome.zh.ipynb"' in page
    assert "{{" not in page


# -- the real command ------------------------------------------------------------------------------
@pytest.fixture
def chapters(tmp_path) -> tuple[Path, dict[str, str]]:
    return copy_notebooks(tmp_path / "notebooks"), isolated_env(tmp_path / "jupyter")


def test_dltutor_lab_starts_as_root_and_prints_one_address(chapters):
    folder, env = chapters
    with dltutor_lab(folder, env, "cli") as (address, server):
        with urllib.request.urlopen(address, timeout=30) as answer:      # follows redirects
            assert answer.status == 200
            assert b"location.replace" in answer.read()                  # the start page
        time.sleep(2)                                  # room for late log lines to show up
        printed = [line for line in server.log_tail(20_000).splitlines() if line.strip()]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        print("ran as root, without --allow-root from the caller")
    assert len(ADDRESS.findall("\n".join(printed))) == 1
    chatter = [line for line in printed if line.startswith(("[I ", "[W ")) or "Warning" in line]
    assert chatter == [], chatter
    assert len(printed) <= 5, printed       # starting, ready, the address, how to stop


def test_the_language_follows_the_notebook_not_the_server(tmp_path, monkeypatch):
    """`dltutor lab --lang zh` opens the Chinese edition but leaves the kernels' language alone:
    English chapters opened from that JupyterLab answer in English (the Chinese ones switch in
    their first cell)."""
    from dltutor import cli

    served = {}
    monkeypatch.delenv("DLTUTOR_LANG", raising=False)
    monkeypatch.setattr(cli, "serve", lambda folder, **kwargs: served.update(kwargs) or 0)
    assert cli.main(["lab", str(tmp_path / "chapters"), "--lang", "zh", "--no-browser"]) == 0
    assert served["start"] == "zh/00_welcome.zh.ipynb"
    assert "DLTUTOR_LANG" not in (served.get("env") or {})
