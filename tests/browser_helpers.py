"""Helpers for the browser tests (tests/browser) and the launcher's (tests/launch): find
Chromium, start and stop a Jupyter server (JupyterLab, Voilà or ``dltutor lab``) in a temporary
copy of the notebooks, and read the lab's status line in the page.

Nothing here downloads a browser: the tests drive Debian's Chromium (``apt-get install
chromium``, found at /usr/bin/chromium, or wherever ``DLTUTOR_CHROMIUM`` points) through
Python Playwright.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
INSTALL_HINT = ("the browser tests need Chromium: run `apt-get install chromium` (Debian/Ubuntu; "
                "it lands in /usr/bin/chromium) or point DLTUTOR_CHROMIUM at a Chromium binary")
ADDRESS = re.compile(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+")   # what `dltutor lab` prints
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def find_chromium() -> str | None:
    """The Chromium binary to drive, or None."""
    candidates = [os.environ.get("DLTUTOR_CHROMIUM"), "/usr/bin/chromium",
                  shutil.which("chromium"), shutil.which("chromium-browser")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(home: Path) -> dict[str, str]:
    """Environment for a Jupyter server whose config, settings, workspaces and runtime files
    live under ``home`` (so nothing of the user's setup leaks in, and nothing leaks out).

    JupyterLab's settings: no news or update checks, no autosave, no dialogs on kernel start.
    """
    env = dict(os.environ)
    dirs = {name: home / name for name in ("config", "data", "runtime", "settings",
                                           "workspaces")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    settings = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            {"windowingMode": "none"},   # every cell stays in the page, so widgets are findable
    }
    for name, value in settings.items():
        path = dirs["settings"] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    env.update({
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "DLTUTOR_QUICK": "1",
        "PYTHONUNBUFFERED": "1",
    })
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_TOKEN", None)
    return env


def copy_notebooks(target: Path) -> Path:
    """A temporary copy of the notebooks folder (the .ipynb files and what they read), so
    JupyterLab's saving never touches the committed notebooks."""
    shutil.copytree(ROOT / "notebooks", target,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return target


class Server:
    """A Jupyter server subprocess in its own process group, logging to ``log_path``."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], log_path: Path):
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_until_up(self, url: str, timeout: float = 60.0) -> None:
        """Poll ``url`` until it answers (any HTTP status below 500), at most ``timeout``."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}; see "
                                   f"{self.log_path}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status < 500:
                        return
            except urllib.error.HTTPError as err:
                if err.code < 500:
                    return
                last = err
            except OSError as err:
                last = err
            time.sleep(0.25)
        raise TimeoutError(f"no answer from {url} within {timeout:.0f} s ({last}); see "
                           f"{self.log_path}:\n{self.log_tail()}")

    def wait_for_port(self, port: int, timeout: float = 60.0) -> None:
        """Wait until the server accepts connections on ``port`` (for Voilà, where a GET of a
        page would execute the notebook), at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}; see "
                                   f"{self.log_path}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2):
                    return
            except OSError:
                time.sleep(0.25)
        raise TimeoutError(f"nothing listens on port {port} after {timeout:.0f} s; see "
                           f"{self.log_path}:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        self._log.flush()
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (the server shuts its kernels down), then SIGKILL to its process group."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        self._log.close()


def start_voila(notebook: str, folder: Path, env: dict[str, str],
                log_name: str) -> tuple[Server, str]:
    """Voilà serving ``notebook`` (a path inside ``folder``) on 127.0.0.1 with a test token,
    once it accepts connections; returns the server (stop it) and the address to open."""
    port, token = free_port(), "dltutor-test-token"
    server = Server(["voila", notebook, "--no-browser", f"--port={port}",
                     "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", f"--token={token}",
                     "--show_tracebacks=True"],
                    cwd=folder, env=env, log_path=ARTIFACTS / log_name)
    try:
        server.wait_for_port(port)
    except BaseException:
        server.stop()
        raise
    return server, f"http://127.0.0.1:{port}/?token={token}"


def open_lab_page(page: Any, address: str) -> None:
    """Open a Voilà lab page and wait for its controls (a page load runs the notebook)."""
    page.goto(address, timeout=90_000, wait_until="commit")
    page.wait_for_selector(".dltutor-play", timeout=90_000)


def wait_for_kernel_idle(page: Any, timeout: float = 60.0) -> None:
    """Wait until JupyterLab's status bar says the notebook's kernel is connected and idle
    ("Python 3 (ipykernel) | Idle"); the toolbar's execution indicator says "idle" even
    while there is no kernel yet."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(
               e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim()))""",
        timeout=timeout * 1000)


def jupyterlab_run_all(page: Any, done_selector: str, timeout: float = 60.0,
                       attempts: int = 3) -> None:
    """Run > Run All Cells from the menu bar, until ``done_selector`` shows up. If the run did
    not start (every code cell still unnumbered a few seconds later: the kernel was not
    ready after all), try again, at most ``attempts`` times."""
    first_prompt = ".jp-CodeCell .jp-InputPrompt"
    for attempt in range(attempts):
        wait_for_kernel_idle(page)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        clicked = time.monotonic()
        while time.monotonic() - clicked < timeout:
            if page.locator(done_selector).count():
                page.wait_for_selector(done_selector, state="visible", timeout=10_000)
                return
            prompt = page.locator(first_prompt).first.text_content() or ""
            if time.monotonic() - clicked > 5 and prompt.strip() in ("[ ]:", ""):
                print(f"Run All did not start (attempt {attempt + 1}); trying again")
                break
            page.wait_for_timeout(250)
        else:
            raise AssertionError(f"Run All Cells: {done_selector} did not appear within "
                                 f"{timeout:.0f} s")
    raise AssertionError(f"Run All Cells did not run the notebook in {attempts} attempts")


def status(page: Any) -> dict[str, str]:
    """The data attributes of the lab's status line in the page (empty if not there yet)."""
    return page.evaluate("""() => {
        const el = document.querySelector('.dltutor-status');
        if (!el) return {};
        const out = {};
        for (const a of el.attributes) if (a.name.startsWith('data-')) out[a.name] = a.value;
        return out;
    }""")


def wait_for_status(page: Any, predicate: Callable[[dict[str, str]], bool], what: str,
                    timeout: float = 20.0, poll: float = 0.1) -> dict[str, str]:
    """Poll the status line until ``predicate(attributes)`` holds; fail saying ``what``."""
    deadline = time.monotonic() + timeout
    attrs: dict[str, str] = {}
    while time.monotonic() < deadline:
        attrs = status(page)
        if attrs and predicate(attrs):
            return attrs
        page.wait_for_timeout(int(poll * 1000))
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; status: {attrs}")


def page_report(page: Any) -> str:
    """What the page shows of the notebook: each code cell's prompt, the start of its
    source and any error or stderr output (JupyterLab), or the error text (Voilà)."""
    return page.evaluate("""() => {
        const lines = [];
        for (const cell of document.querySelectorAll('.jp-CodeCell')) {
            const prompt = cell.querySelector('.jp-InputPrompt');
            const source = cell.querySelector('.jp-InputArea-editor');
            lines.push((prompt ? prompt.textContent.trim() : '?') + ' ' +
                       (source ? source.textContent.slice(0, 60).replace(/\\s+/g, ' ') : ''));
            for (const out of cell.querySelectorAll(
                    '[data-mime-type="application/vnd.jupyter.stderr"], .jp-RenderedText[data-mime-type*="error"]'))
                lines.push('    ! ' + out.textContent.slice(0, 2000));
        }
        for (const el of document.querySelectorAll('.jp-Dialog, .jp-toast-content, .error'))
            lines.push('[dialog/error] ' + el.textContent.slice(0, 1000));
        const status = document.querySelector('.dltutor-status');
        if (status) lines.push('[status] ' + status.outerHTML.slice(0, 3000));
        return lines.join('\\n');
    }""")


def save_failure(page: Any, name: str, servers: list[Server]) -> None:
    """A screenshot, what the page shows and the server logs in test-artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    if page is not None:
        try:
            page.screenshot(path=str(ARTIFACTS / f"{name}-failure.png"), full_page=True)
            (ARTIFACTS / f"{name}-failure-page.txt").write_text(page_report(page))
        except Exception as err:  # best effort; the original failure matters
            print(f"could not save the page: {err}")
    for server in servers:
        try:
            shutil.copy(server.log_path, ARTIFACTS / f"{name}-failure-{server.log_path.name}")
        except OSError:
            pass


# -- `dltutor lab` (tests/launch, tests/browser/test_launch.py) -------------------------------
@contextlib.contextmanager
def dltutor_lab(folder: Path, env: dict[str, str], name: str,
                *options: str) -> Iterator[tuple[str, Server]]:
    """Run ``dltutor lab FOLDER`` (never with --allow-root); yield the address it printed."""
    server = Server(["dltutor.cli", "lab", str(folder), "--no-browser",
                     "--port", str(free_port()), *options],
                    cwd=folder.parent, env=env, log_path=ARTIFACTS / f"launch-{name}.log")
    try:
        deadline = time.monotonic() + 120
        while not ADDRESS.search(server.log_tail()):
            assert server.proc.poll() is None, f"dltutor lab stopped:\n{server.log_tail()}"
            assert time.monotonic() < deadline, f"no address in 120 s:\n{server.log_tail()}"
            time.sleep(0.25)
        yield ADDRESS.search(server.log_tail()).group(0), server
    finally:
        server.stop(timeout=30)
