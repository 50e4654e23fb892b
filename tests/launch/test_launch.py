"""``dltutor lab`` as a newcomer meets it (dltutor/launch): the command it builds, and as root,
one address.

The command-line tests run the real command (``python -m dltutor.cli lab``) on a copy of the
notebooks and read what it prints; CI runs as root, so there the command proves that it starts
without the ``--allow-root`` JupyterLab would ask for. What the address it prints shows in
Chromium (the layout, a clean start, the editions' tabs) is tests/browser/test_launch.py's.
"""
from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from tornado.websocket import websocket_connect

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
    assert '"doc/workspaces/narrow" : "lab/workspaces/wide"' in page   # a layout each
    assert '"/tree/zh/00_welcome.zh.ipynb"' in page
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


def _token(address: str) -> str:
    return address.rsplit("token=", 1)[1]


def _status(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"}
                                     if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_token_is_on_no_command_line_and_no_page_without_it(chapters):
    """Every account can read every process's command line; the token must not be there, nor
    in a file the server hands out without it. --port 0 prints the port really used."""
    folder, env = chapters
    with dltutor_lab(folder, env, "token", "--port", "0") as (address, server):
        token, base = _token(address), address.split("/?")[0]
        assert not base.endswith(":0")
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                assert token.encode() not in cmdline.read_bytes(), cmdline
            except OSError:                              # a process that ended meanwhile
                continue
        assert _status(f"{base}/api/contents") == 403
        assert _status(f"{base}/api/contents", token) == 200
        for path in ("static/jupyter_server_config.json", "static/public/../"
                     "jupyter_server_config.json", "static/dltutor-start.html"):
            request = urllib.request.Request(f"{base}/{path}")
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    assert token.encode() not in answer.read(), path
            except urllib.error.HTTPError:
                pass


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or
                    not shutil.which("useradd"), reason="needs root to make a second account")
def test_another_account_on_the_machine_cannot_use_the_lab(chapters):
    """A second real account (useradd) on the same machine: without the token the server
    answers 403, and neither the server's environment nor its token file can be read."""
    folder, env = chapters
    other = f"dlt{secrets.token_hex(3)}x"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", other],
                   check=True)
    try:
        with dltutor_lab(folder, env, "other-account") as (address, server):
            base = address.split("/?")[0]
            server_pid = server.proc.pid
            config = next(Path(tempfile.gettempdir()).glob("dltutor-lab-*/"
                                                           "jupyter_server_config.json"))
            probe = (
                "import json, sys, urllib.request, urllib.error\n"
                "def status(url, token=None):\n"
                "    headers = {'Authorization': 'token ' + token} if token else {}\n"
                "    try:\n"
                "        return urllib.request.urlopen(urllib.request.Request(url, "
                "headers=headers), timeout=30).status\n"
                "    except urllib.error.HTTPError as error:\n"
                "        return error.code\n"
                "def read(path):\n"
                "    try:\n"
                "        open(path, 'rb').read(1)\n"
                "        return 'read'\n"
                "    except OSError as error:\n"
                "        return type(error).__name__\n"
                f"print(json.dumps([status({base + '/api/contents'!r}), "
                f"status({base + '/api/contents'!r}, {_token(address)!r}), "
                f"read('/proc/{server_pid}/environ'), read({str(config)!r})]))\n")
            done = subprocess.run(["/usr/bin/python3", "-I", "-c", probe], user=other,
                                  capture_output=True, text=True, timeout=60, cwd="/")
            assert done.returncode == 0, done.stderr
            # 200 with the token: the other account reaches the server, and only the token
            # lets anyone in
            assert json.loads(done.stdout) == [403, 200, "PermissionError", "PermissionError"]
    finally:
        subprocess.run(["userdel", other], check=False)


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_authors_files_are_not_listed_but_still_open(edition, chapters):
    """Issue 47: the file browser showed the authors' files beside the chapters. The server's
    listing of the root leaves them out in both editions (and zh/ in the English one); each
    still opens by its address. What the file browser shows is
    tests/browser/test_launch.py's."""
    folder, env = chapters
    options = ("--lang", "zh") if edition == "zh" else ()
    with dltutor_lab(folder, env, f"hidden-{edition}", *options) as (address, server):
        token, base = _token(address), address.split("/?")[0]
        with urllib.request.urlopen(f"{base}/api/contents?token={token}", timeout=30) as answer:
            listed = {item["name"] for item in json.load(answer)["content"]}
        assert "00_welcome.ipynb" in listed and "GLOSSARY.md" in listed, listed
        assert not listed & {"src", "AUTHORING.md", "SOURCES.md"}, listed
        assert ("zh" in listed) is (edition == "zh"), listed
        for hidden in ("api/contents/AUTHORING.md", "files/SOURCES.md", "api/contents/src",
                       "api/contents/zh"):
            assert _status(f"{base}/{hidden}", token) == 200, hidden


def run_in_kernel(address: str, code: str) -> str:
    """Start a kernel through the server's REST API, run ``code`` in it over its websocket (as
    a notebook does) and return what it printed."""
    token, base = _token(address), address.split("/?")[0]
    request = urllib.request.Request(f"{base}/api/kernels?token={token}", data=b"{}",
                                     method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        kernel = json.load(answer)["id"]

    async def execute() -> str:
        channels = await websocket_connect(
            f"ws{base[4:]}/api/kernels/{kernel}/channels?token={token}")
        asked = uuid.uuid4().hex
        channels.write_message(json.dumps({
            "header": {"msg_id": asked, "msg_type": "execute_request", "username": "test",
                       "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False}}))
        printed = []
        while True:
            message = json.loads(await asyncio.wait_for(channels.read_message(), 60))
            if message.get("parent_header", {}).get("msg_id") != asked:
                continue
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            # "idle" comes after the request's outputs (its reply, on another channel, may not)
            if message["msg_type"] == "status" and \
                    message["content"]["execution_state"] == "idle":
                channels.close()
                return "".join(printed)

    return asyncio.run(execute())


#: Code for a kernel: print how it talks with the server (read in its connection file) and its
#: process id.
KERNELS_TRANSPORT = ("import json, os; from ipykernel.connect import get_connection_file; "
                     "print(json.load(open(get_connection_file()))['transport'], os.getpid())")


def heeds_ctrl_c() -> None:
    """Ctrl-C's signal back to its usual effect, as in a terminal: a command started in the
    background (the test runner, say) starts with it ignored, and dltutor with it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def is_running(pid: int) -> bool:
    """Whether process ``pid`` runs (Linux's /proc; a process that ended but was not yet
    collected by its parent, a zombie, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("stop, temp", [("ctrl-c", "short"), ("sigterm", "short"),
                                        ("ctrl-c", "long")])
def test_a_sitting_leaves_a_quiet_log(stop, temp, chapters, tmp_path):
    """Issue 47: every kernel warned "Kernel is running over TCP without encryption" and a stop
    printed a critical-level line. A kernel that really runs code, then a stop as a learner
    does it (Ctrl-C in a terminal: SIGINT to dltutor and the server, whose input is that
    terminal) or as a service manager does (SIGTERM to dltutor alone): neither shows, and the
    kernel is stopped with the server. In a temporary folder whose path is too long for
    socket files the kernels use TCP, and their warning is left out of the log."""
    folder, env = chapters
    if temp == "long":
        env = dict(env, TMPDIR=str(tmp_path / ("long-" + "t" * 60)))
        Path(env["TMPDIR"]).mkdir()
    log_path = tmp_path / "lab.log"
    terminal, terminal_end = pty.openpty()    # the server asks about Ctrl-C only at a terminal
    with open(log_path, "wb") as log:
        lab = subprocess.Popen(
            [sys.executable, "-m", "dltutor.cli", "lab", str(folder), "--no-browser",
             "--port", "0"], cwd=folder.parent, env=env, stdin=terminal_end, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=heeds_ctrl_c)
    try:
        deadline = time.monotonic() + 120
        while not ADDRESS.search(log_path.read_text(encoding="utf-8")):
            assert lab.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.25)
        address = ADDRESS.search(log_path.read_text(encoding="utf-8")).group(0)
        transport, kernel = run_in_kernel(address, KERNELS_TRANSPORT).split()
        assert transport == ("ipc" if temp == "short" else "tcp")       # and the kernel ran
        if stop == "ctrl-c":
            os.killpg(lab.pid, signal.SIGINT)            # what the terminal does on Ctrl-C
        else:
            os.kill(lab.pid, signal.SIGTERM)
        assert lab.wait(timeout=60) == 0
        assert not is_running(int(kernel))                # the server stopped it on its way
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGKILL)
        os.close(terminal)
        os.close(terminal_end)
    said = log_path.read_text(encoding="utf-8")
    assert "without encryption" not in said, said
    assert not re.search(r"^\[C |CRITICAL", said, re.MULTILINE), said
    assert said.rstrip().endswith("Stopping JupyterLab ..."), said


def test_a_port_out_of_range_is_refused_in_one_line(capsys):
    from dltutor import cli

    for port in ("70000", "-1", "http"):
        with pytest.raises(SystemExit) as stop:
            cli.main(["lab", "--port", port])
        assert stop.value.code == 2
        said = capsys.readouterr().err
        assert "is not a port: give a number from 1 to 65535, or 0" in said
        assert "Traceback" not in said


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
