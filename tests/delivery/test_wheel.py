"""One install command: the wheel ships the chapters, and its ``dltutor`` command works.

The test builds the wheel from this checkout, installs it into a fresh virtual environment
and runs the installed command there: ``dltutor notebooks DIR`` (copies the chapters, keeps a
learner's edits) and ``dltutor lab DIR --no-browser`` (serves JupyterLab on them, as root in CI; the test
waits until the server answers, then stops it). The fresh environment takes the kit from the
wheel and only its dependencies (NumPy, JupyterLab, ...) from the test environment, through a
``.pth`` file, so that the test needs no network and stays quick.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import sysconfig
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    (built,) = out.glob("dltutor-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; returns its ``bin`` folder."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
                   check=True, capture_output=True)
    # The dependencies come from this environment (not the kit: the .pth adds a path, and the
    # editable install's own .pth inside it is not read from there).
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    Path(site.stdout.strip(), "test-dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    return env_dir / "bin"


def test_the_wheel_carries_the_chapters_but_not_their_sources(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("00_welcome.ipynb", "12_live_lab.ipynb", "lab.ipynb", "FAQ.md", "GLOSSARY.md",
                 "zh/00_welcome.zh.ipynb", "zh/FAQ.md"):
        assert f"dltutor/chapters/{name}" in names, name
    assert not [n for n in names if "/src/" in n or n.endswith("AUTHORING.md")]
    assert any(n.endswith("entry_points.txt") for n in names)


def test_the_wheel_installs_the_labs_voila_template(wheel, installed):
    # lab.ipynb names the template in its metadata; Voilà finds it under <prefix>/share/jupyter.
    template = "share/jupyter/voila/templates/dltutor"
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(f".data/data/{template}/index.html.j2") for n in names)
    assert (installed.parent / template / "conf.json").exists()


def test_dltutor_notebooks_copies_the_chapters_and_keeps_edits(installed, tmp_path):
    folder = tmp_path / "my chapters"

    def run():
        return subprocess.run([str(installed / "dltutor"), "notebooks", str(folder)],
                              capture_output=True, text=True, check=True, cwd=tmp_path)

    first = run()
    assert "Copied" in first.stdout
    welcome = folder / "00_welcome.ipynb"
    assert welcome.exists() and (folder / "zh" / "lab.zh.ipynb").exists()
    welcome.write_text("my notes", encoding="utf-8")        # the learner's edit
    (folder / "01_tensors_autograd.ipynb").unlink()           # and a deleted chapter
    second = run()
    assert "Kept your changed 00_welcome.ipynb" in second.stdout
    assert welcome.read_text(encoding="utf-8") == "my notes"
    assert (folder / "01_tensors_autograd.ipynb").exists()
    where = subprocess.run([str(installed / "python"), "-c",
                            "import dltutor.cli as c; print(c.chapters_folder())"],
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "site-packages" in where.stdout                  # the wheel's copy, not this clone


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dltutor_lab_serves_jupyterlab_on_the_chapters(installed, tmp_path):
    # No --allow-root: run as root (CI), the command must say it to JupyterLab itself.
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    args = [str(installed / "dltutor"), "lab", str(tmp_path / "chapters"), "--no-browser",
            "--port", str(_free_port())]
    server = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        printed = []
        for line in server.stdout:            # up to the address it prints once it is ready
            printed.append(line)
            if "?token=" in line:
                break
        address = printed[-1].strip() if printed and "?token=" in printed[-1] else None
        assert address, "".join(printed)
        url = address.replace("/?", "/api/contents/00_welcome.ipynb?")
        with urllib.request.urlopen(url, timeout=30) as response:
            answer = response.read()
        assert b'"name": "00_welcome.ipynb"' in answer or b'"name":"00_welcome.ipynb"' in answer
        assert (tmp_path / "chapters" / "00_welcome.ipynb").exists()
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
