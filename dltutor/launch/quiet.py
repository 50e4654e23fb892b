"""A quiet log for ``dltutor lab``: the kernels talk without a warning, a normal stop without
an alarm.

* **The kernels' transport.** Over TCP every kernel warns that its messages are not encrypted
  (13 times in one sitting). Jupyter's advice for a server on one's own machine is IPC: the
  kernels talk over socket files, here in the start's private folder (:func:`kernel_transport`).
  A socket file's path has a length limit; where it would not fit (a long temporary folder) or
  on Windows the kernels keep TCP, and :func:`start_server` leaves their warning out of the log.
* **The stop.** Ctrl-C is a normal stop, which the kit announces itself; the server's
  critical-level notice that it was asked to stop is left out (:func:`hide_stop_notices`).

>>> kernel_transport(Path("/tmp") / ("x" * 80))
'tcp'
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import IO

#: The longest path a socket file may have (AF_UNIX's sun_path less its closing zero byte):
#: 107 bytes on Linux, 103 on macOS and the BSDs.
SOCKET_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
#: The longest socket file name a kernel makes: its connection file's name (the kernel's id, a
#: UUID) with "-ipc-" and a channel number (1 to 5, more after restarts) after it.
LONGEST_SOCKET_NAME = f"kernel-{uuid.UUID(int=0)}-ipc-999"
#: The start of ipykernel's warning that a kernel talks over TCP (see
#: pass_on_all_but_the_tcp_warning).
TCP_WARNING = b"Kernel is running over TCP without encryption"


def hide_stop_notices() -> None:
    """Leave out the server's critical-level notices that it was asked to stop (Ctrl-C, or a
    SIGTERM from ``dltutor lab``): a normal stop, which the kit announces itself. They are
    told apart by the function that logs them, as their text is translated.

    >>> hide_stop_notices()
    >>> [type(rule).__name__ for rule in logging.getLogger("ServerApp").filters]
    ['_HideStopNotices']
    """
    server_log = logging.getLogger("ServerApp")
    if not any(isinstance(rule, _HideStopNotices) for rule in server_log.filters):
        server_log.addFilter(_HideStopNotices())


class _HideStopNotices(logging.Filter):
    """Drops the records of jupyter_server's ServerApp._confirm_exit ("Shutting down...",
    after Ctrl-C with answer_yes) and ServerApp._signal_stop ("received signal 15,
    stopping")."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.CRITICAL and
                    record.funcName in ("_confirm_exit", "_signal_stop"))


def kernel_transport(runtime_dir: Path) -> str:
    """How the kernels and the server talk: ``"ipc"`` (socket files in ``runtime_dir``, which
    only this account can reach) where the socket files' paths fit, else ``"tcp"`` (Windows,
    or a temporary folder with a long path).

    >>> usual = "tcp" if os.name == "nt" else "ipc"
    >>> kernel_transport(Path("/tmp/dltutor-lab-x/runtime")) == usual
    True
    >>> kernel_transport(Path("/tmp") / ("x" * 80))
    'tcp'
    """
    longest = runtime_dir / LONGEST_SOCKET_NAME
    fits = len(os.fsencode(longest)) <= SOCKET_PATH_MAX
    return "ipc" if fits and os.name != "nt" else "tcp"


def start_server(command: list[str], env: dict[str, str],
                  transport: str) -> tuple[subprocess.Popen, threading.Thread | None]:
    """Start the server; where its kernels use TCP, its error output (and its kernels', which
    they share) is passed on by a thread (returned) that leaves out their TCP warning.

    >>> server, log_copy = start_server([sys.executable, "-c", "pass"], dict(os.environ), "ipc")
    >>> server.wait(), log_copy
    (0, None)
    """
    if transport != "tcp":
        return subprocess.Popen(command, env=env), None
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    log_copy = threading.Thread(target=pass_on_all_but_the_tcp_warning,
                                args=(server.stderr, sys.stderr), daemon=True)
    log_copy.start()
    return server, log_copy


def pass_on_all_but_the_tcp_warning(source: IO[bytes], target: IO[str]) -> None:
    r"""Copy ``source``'s lines to ``target`` as they come, less the kernels' warning that they
    talk over TCP without encryption (used where they cannot use socket files, see
    :func:`kernel_transport`). The warning is about a risk the kit's lab does not run: the
    kernels listen on this machine only, their messages are signed with a key that only this
    account can read, and reading another's traffic on this machine takes its administrator.

    >>> import io
    >>> said = io.StringIO()
    >>> pass_on_all_but_the_tcp_warning(io.BytesIO(
    ...     b"[IPKernelApp] WARNING | Kernel is running over TCP without encryption. ...\n"
    ...     b"[E 12:00 ServerApp] a real error\n"), said)
    >>> said.getvalue()
    '[E 12:00 ServerApp] a real error\n'
    """
    for line in iter(source.readline, b""):
        if TCP_WARNING not in line:
            target.write(line.decode(errors="replace"))
            target.flush()
