"""Binder builds the learners' environment from binder/requirements.txt; check that it resolves
and works, in a fresh virtual environment (pip's download cache makes repeats quick).

What runs here: the install, ``pip check``, the kit's own smoke test inside that environment
(a lab trains), and that environment's JupyterLab server starting and answering with the
``python3`` kernel. The full browser test (tests/browser/test_browser.py) drives the same notebooks
against the project's .venv, which installs the same package; repeating it in a second
environment would double the CI time of the slowest test for no extra coverage.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def test_binder_files_name_the_kit_and_python_312():
    assert (BINDER / "requirements.txt").read_text().split() == ["-e", "."]
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.12"


def _python_for_binder() -> str:
    """Python 3.12 as runtime.txt asks, when the machine has a working one; else this Python."""
    candidate = shutil.which("python3.12")
    if candidate:
        probe = subprocess.run([candidate, "-c", "import venv"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    return sys.executable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    venv = tmp_path_factory.mktemp("binder") / "venv"
    subprocess.run([_python_for_binder(), "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", "-r",
                              str(BINDER / "requirements.txt")], cwd=ROOT, capture_output=True,
                             text=True, timeout=900)
    assert install.returncode == 0, f"pip install -r binder/requirements.txt failed:\n" \
                                    f"{install.stderr[-3000:]}"
    return venv


def test_binder_environment_has_no_broken_requirements(binder_env):
    check = subprocess.run([str(binder_env / "bin" / "python"), "-m", "pip", "check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_kit_works_in_the_binder_environment(binder_env):
    code = ("import anywidget, ipywidgets, jupyterlab, voila, dltutor as dt\n"
            "from dltutor.lab import demos\n"
            "lab = demos.moons_mlp()\n"
            "assert lab.run(20), lab.error\n"
            "print('ok', dt.__version__)")
    result = subprocess.run([str(binder_env / "bin" / "python"), "-c", code],
                            capture_output=True, text=True, timeout=300, cwd="/")
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stderr[-3000:]


def test_binder_jupyterlab_starts_with_the_python3_kernel(binder_env, tmp_path):
    port, token = _free_port(), "binder-smoke"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    server = subprocess.Popen(
        [str(binder_env / "bin" / "jupyter"), "lab", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root",
         f"--ServerApp.root_dir={ROOT / 'notebooks'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        url = f"http://127.0.0.1:{port}/api/kernelspecs?token={token}"
        deadline, answer = time.monotonic() + 90, None
        while time.monotonic() < deadline and answer is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    answer = json.load(response)
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.5)
        assert answer is not None, f"JupyterLab from the Binder environment did not answer:\n" \
                                   f"{server.stderr.read().decode()[-3000:] if server.poll() else ''}"
        assert "python3" in answer["kernelspecs"]
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
