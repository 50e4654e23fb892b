"""Ends a notebook's MPI engines when the notebook's kernel ends, however it ends.

``start_engines`` runs this file as a process of its own, in a session of its own (so that a
signal to the kernel's process group does not reach it), writes one line per process it
started (``pid start-time``) to its standard input and keeps that pipe open. The pipe reaches
its end when the kernel closes it (``Engines.stop()``) or when the kernel is gone: a clean exit,
an error, a restart, or SIGKILL, which runs no ``atexit`` but still closes a dead process's
files. Then this process ends every listed process still running and everything they started
(the controller's helpers, mpiexec's proxy, the engines and their nannies): SIGTERM first,
SIGKILL for whatever is still there after a grace period. It runs alone (``python
engine_watchdog.py``, never imported by the kit), so it needs only the standard library and
psutil, and starts quickly.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Iterable

import psutil

#: Seconds a process gets after SIGTERM to end by itself before it gets SIGKILL.
GRACE_S = 5.0


def listed_processes(lines: Iterable[str]) -> list[psutil.Process]:
    """The processes named by ``pid start-time`` lines, read until the pipe ends; one whose pid
    now belongs to a newer process (a different start time) is left alone.

    >>> import os
    >>> me = psutil.Process()
    >>> [p.pid for p in listed_processes([f"{me.pid} {me.create_time()}", "1 0.5"])] == [os.getpid()]
    True
    """
    processes = []
    for line in lines:
        pid, started = line.split()
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(int(pid))
            if process.create_time() == float(started):
                processes.append(process)
    return processes


def with_descendants(processes: list[psutil.Process]) -> list[psutil.Process]:
    """``processes`` still running and every process they started, each once.

    >>> with_descendants([psutil.Process()]) == [psutil.Process()]
    True
    """
    found: dict[int, psutil.Process] = {}
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running():        # False when the pid now belongs to another process
                for member in [process, *process.children(recursive=True)]:
                    found.setdefault(member.pid, member)
    return list(found.values())


def end(processes: list[psutil.Process], grace_s: float = GRACE_S) -> None:
    """SIGTERM to each, then SIGKILL to those still running ``grace_s`` seconds later."""
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, still_running = psutil.wait_procs(processes, timeout=grace_s)
    for process in still_running:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(still_running, timeout=grace_s)


if __name__ == "__main__":
    end(with_descendants(listed_processes(sys.stdin)))
