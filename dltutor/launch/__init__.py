"""Starting the kit's JupyterLab: one clear address to open, a quiet log, a clean start.

``dltutor lab`` (and ``make lab``, which calls it) starts JupyterLab through :func:`serve`.
What a newcomer would otherwise trip over, and what this module does about it:

* **Root.** Containers and cloud notebooks run as root, and JupyterLab refuses root unless
  told ``--allow-root``; :func:`lab_command` says it when the process is root.
* **The address.** JupyterLab prints some 25 log lines with the address among them. Here the
  server's log is kept to errors, and once the server answers, one line gives the address
  (with a token made for this start) and, where there is a screen, a browser opens it.
* **The token stays secret.** Every account on a machine can read every process's command
  line (``ps``), so the login token is never on it: it goes into a configuration file, mode
  0600, in this start's own folder (mode 0700), removed when the server stops.
* **A clean start.** JupyterLab reopens every tab of its last session, one kernel each. Each
  start gets a fresh workspace folder (removed when the server stops), so only the first
  chapter opens.
* **A phone.** The address leads to a small start page (``start.html``) that opens JupyterLab's
  simple mode (one document, no side panels) on a narrow screen and the full layout on a
  wide one, each in a workspace of its own (JupyterLab saves the layout in the workspace, and
  a phone's would close or stretch the desktop's file browser); ``settings/overrides.json``
  keeps the "Jupyter news" question from covering the notebook.
* **A quiet log.** Over TCP every kernel warns that its messages are not encrypted; the
  kernels talk over socket files in this start's private folder instead (IPC, what Jupyter
  recommends for a server on one's own machine); where their paths would be too long (a long
  temporary folder) or on Windows they keep TCP, and the log leaves their warning out. A
  normal stop (Ctrl-C) shows the kit's "stopping" line, not the server's critical-level
  notice that it was told to stop.
* **The file browser** lists the chapters, not the authors' files (:func:`hidden_names`);
  a hidden file still opens by its address.

>>> command = lab_command(Path("nb"), LabSettings(port=8890, token="t", root=True),
...                       Path("/tmp/start"))
>>> "--allow-root" in command, "--ServerApp.port=8890" in command
(True, True)
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import webbrowser
from pathlib import Path
from typing import Iterator

from ..i18n import text
from .quiet import kernel_transport, start_server

HERE = Path(__file__).resolve().parent
#: Below this width (CSS pixels) the start page picks JupyterLab's simple mode.
NARROW_SCREEN = 760
#: Ports tried from the one asked for, as JupyterLab itself does when one is taken.
PORT_TRIES = 50
#: Seconds the server has to stop its kernels and itself after Ctrl-C before it is told again.
STOP_GRACE = 20
START_PAGE = "dltutor-start.html"
#: The server's configuration file holding its login token (never on its command line).
TOKEN_CONFIG = "jupyter_server_config.json"
#: The folder of this start's files that the server hands out without a token (the start
#: page); the token's file sits beside it, never inside.
PUBLIC = "public"
#: The folder of this start's runtime files: the kernels' connection and socket files.
RUNTIME = "runtime"
#: The server: JupyterLab, with its deprecation notices (about its own options, not the
#: learner's business) and its notices that it was asked to stop (quiet.hide_stop_notices)
#: silenced. The filter goes in after Voilà's import, which turns traitlets' notices back on.
#: The kernels are other processes: see quiet.kernel_transport for their warning about TCP.
SERVER = ("import warnings, voila; "
          "warnings.filterwarnings('ignore', category=DeprecationWarning); "
          "from dltutor.launch.quiet import hide_stop_notices; hide_stop_notices(); "
          "from jupyterlab.labapp import main; main()")
#: The authors' files beside the chapters (the chapters' sources, the writing guide, the
#: sources' list): not what a learner opens, so the file browser leaves them out.
AUTHORS_FILES = ("src", "AUTHORING.md", "SOURCES.md")
#: The folder of the Chinese edition; the English edition's file browser leaves it out.
CHINESE_FOLDER = "zh"


def reachable_host(ip: str) -> str:
    """The address a browser on this machine uses for a server listening on ``ip``: listening
    everywhere (``0.0.0.0``) includes this machine itself.

    >>> reachable_host("0.0.0.0"), reachable_host("10.0.0.5")
    ('127.0.0.1', '10.0.0.5')
    """
    return "127.0.0.1" if ip in ("0.0.0.0", "", "*") else ip


@dataclasses.dataclass
class LabSettings:
    """Where and how the server listens: ``ip``, ``port``, the login ``token``, whether the
    process is ``root``, and the notebook ``start`` opens on.

    >>> LabSettings(port=8888, token="abc").url()
    'http://127.0.0.1:8888/?token=abc'
    """

    port: int
    token: str
    ip: str = "127.0.0.1"
    root: bool = False
    start: str = "00_welcome.ipynb"

    def url(self) -> str:
        """The address to open: the server's root, which leads to the start page."""
        return f"http://{reachable_host(self.ip)}:{self.port}/?token={self.token}"


def hidden_names(start: str) -> list[str]:
    """The names (globs) the learner's file browser leaves out when the lab opens at ``start``:
    the authors' files, and in the English edition the Chinese one's folder (``make lab-zh``
    opens that edition).

    >>> hidden_names("00_welcome.ipynb")[-4:]
    ['src', 'AUTHORING.md', 'SOURCES.md', 'zh']
    >>> "zh" in hidden_names("zh/00_welcome.zh.ipynb"), "__pycache__" in hidden_names("x")
    (False, True)
    """
    # Naming hidden files replaces Jupyter's own list (__pycache__, *.pyc, ...): keep it first,
    # read from jupyter_server so that it follows the installed version.
    from jupyter_server.services.contents.manager import ContentsManager
    other_edition = [] if Path(start).parts[0] == CHINESE_FOLDER else [CHINESE_FOLDER]
    return [*ContentsManager().hide_globs, *AUTHORS_FILES, *other_edition]


def lab_command(folder: Path, settings: LabSettings, start_dir: Path) -> list[str]:
    """The JupyterLab command line for ``folder``; ``start_dir`` holds this start's start page,
    workspaces and runtime files (see the module docstring for why each option is there).

    >>> command = lab_command(Path("nb"), LabSettings(port=8888, token="t"), Path("/tmp/s"))
    >>> [option for option in command if "default_url" in option]
    ['--LabApp.default_url=/static/dltutor-start.html']
    >>> "--ContentsManager.hide_globs=SOURCES.md" in command
    True
    """
    command = [
        sys.executable, "-c", SERVER,
        f"--notebook-dir={folder}",
        f"--ServerApp.ip={settings.ip}", f"--ServerApp.port={settings.port}",
        "--ServerApp.port_retries=0",                 # the address printed must be the real one
        f"--config={start_dir / TOKEN_CONFIG}",       # the token (write_token_config)
        "--ServerApp.open_browser=False",             # serve() opens it, once the server answers
        "--ServerApp.answer_yes=True",                # Ctrl-C stops it without a question
        "--ServerApp.log_level=ERROR", "--LabApp.log_level=ERROR",
        f"--ServerApp.extra_static_paths={start_dir / PUBLIC}",
        f"--LabApp.default_url=/static/{START_PAGE}",
        f"--LabApp.workspaces_dir={start_dir / 'workspaces'}",
        f"--LabApp.app_settings_dir={HERE / 'settings'}",
        f"--KernelManager.transport={kernel_transport(start_dir / RUNTIME)}",
        *[f"--ContentsManager.hide_globs={name}" for name in hidden_names(settings.start)],
    ]
    if settings.root:
        command.append("--allow-root")
    return command


def write_start_page(start_dir: Path, start: str) -> Path:
    """The start page for notebook ``start`` (a path inside the folder), in ``start_dir``'s
    public folder.

    >>> import tempfile
    >>> page = write_start_page(Path(tempfile.mkdtemp()), "zh/00_welcome.zh.ipynb")
    >>> said = page.read_text()
    >>> page.parent.name == PUBLIC and "doc/workspaces" in said and "zh/00_welcome.zh.ipynb" in said
    True
    """
    page = (HERE / "start.html").read_text(encoding="utf-8")
    page = page.replace("{{START}}", urllib.parse.quote(start)).replace(
        "{{NARROW}}", str(NARROW_SCREEN))
    target = start_dir / PUBLIC / START_PAGE
    target.parent.mkdir(exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def write_token_config(start_dir: Path, token: str) -> Path:
    """The server's login token in a file only this account can read, in ``start_dir``.

    >>> import json, stat, tempfile
    >>> config = write_token_config(Path(tempfile.mkdtemp()), "abc")
    >>> json.loads(config.read_text())["IdentityProvider"]["token"]
    'abc'
    >>> oct(stat.S_IMODE(config.stat().st_mode))
    '0o600'
    """
    target = start_dir / TOKEN_CONFIG
    handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump({"IdentityProvider": {"token": token}}, out)
    return target


def free_port(ip: str, first: int) -> int:
    """The first port from ``first`` on that nothing listens on at ``ip``; for ``first`` 0,
    a port the system picks (so the address printed has the real port).

    >>> 1024 <= free_port("127.0.0.1", 8888) < 8888 + PORT_TRIES
    True
    >>> free_port("127.0.0.1", 0) > 0
    True
    """
    if first == 0:
        with socket.socket() as probe:
            probe.bind((ip if ip not in ("", "*") else "0.0.0.0", 0))
            return probe.getsockname()[1]
    for port in range(first, first + PORT_TRIES):
        with socket.socket() as probe:
            try:
                probe.bind((ip if ip not in ("", "*") else "0.0.0.0", port))
            except OSError:
                continue
            return port
    raise OSError(f"dltutor lab: ports {first} to {first + PORT_TRIES - 1} are all taken; "
                  f"choose another with --port")


def has_display() -> bool:
    """Whether a browser can be opened here (a desktop, not a container or an ssh session)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _wait_until_listening(server: subprocess.Popen, ip: str, port: int, timeout: float) -> bool:
    """True once the server accepts connections; False when it stopped or ``timeout`` passed."""
    host = reachable_host(ip)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.25)
    return False


@contextlib.contextmanager
def _stop_with(server: subprocess.Popen) -> Iterator[None]:
    """Stop ``server`` cleanly when this process is stopped: Ctrl-C reaches both (the server,
    told ``answer_yes``, shuts its kernels down without asking, and is left to finish that),
    a SIGTERM sent to this process alone is passed on, and the server never outlives it."""
    def terminate(signum: int, frame: object) -> None:
        server.terminate()                   # on SIGTERM the server stops its kernels too
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except KeyboardInterrupt:
        print(text("launch.stopping"), flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        _wait_for_the_stop(server)


def _wait_for_the_stop(server: subprocess.Popen) -> None:
    """Wait while ``server`` stops its kernels and itself; after STOP_GRACE seconds (the stop
    reached this process alone) tell it to stop, and after 30 more end it. A second Ctrl-C
    meanwhile would cut the kernels' shutdown short, so it is ignored here."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    finally:
        signal.signal(signal.SIGINT, previous)


def serve(folder: Path, *, start: str, port: int = 8888, ip: str = "127.0.0.1",
          browser: bool | None = None, extra: list[str] | None = None,
          env: dict[str, str] | None = None) -> int:
    """Run JupyterLab on ``folder``, opened at ``start``, until Ctrl-C; returns its exit code.

    ``browser``: open a browser tab (default: when there is a display). ``extra``: further
    JupyterLab options. ``env``: the environment of the server and its kernels (default:
    this process's); their runtime files (kernels' connection and socket files) go into this
    start's private folder.
    """
    settings = LabSettings(port=free_port(ip, port), token=secrets.token_urlsafe(18), ip=ip,
                           root=hasattr(os, "geteuid") and os.geteuid() == 0, start=start)
    start_dir = Path(tempfile.mkdtemp(prefix="dltutor-lab-"))
    log_copy = None
    try:
        write_start_page(start_dir, start)
        write_token_config(start_dir, settings.token)
        (start_dir / RUNTIME).mkdir(mode=0o700)
        server_env = dict(os.environ if env is None else env,
                          JUPYTER_RUNTIME_DIR=str(start_dir / RUNTIME))
        command = lab_command(folder, settings, start_dir) + list(extra or [])
        print(text("launch.starting", folder=folder), flush=True)
        server, log_copy = start_server(command, server_env,
                                         kernel_transport(start_dir / RUNTIME))
        with _stop_with(server):
            if _wait_until_listening(server, ip, settings.port, timeout=120):
                print(text("launch.ready", url=settings.url()), flush=True)
                if browser if browser is not None else has_display():
                    webbrowser.open(settings.url())
            return server.wait()
        return 0                                      # stopped at the learner's request
    finally:
        if log_copy is not None:
            log_copy.join(timeout=5)                  # the server's last lines, passed on
        shutil.rmtree(start_dir, ignore_errors=True)

