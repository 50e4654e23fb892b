"""The engines end with their notebook, however it ends: a cell that raises after
start_engines (nbval, Run All), or the kernel killed with SIGKILL (no clean-up code runs in it);
and a start that fails leaves nothing running.

Each notebook records the kernel's descendants (pid and start time) right after start_engines;
once the notebook is over, every one of them must end (the test polls, with a generous bound:
it asserts what ends, never how fast). Whatever is still running at the end is killed, so a
failing test leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import json
import time

import nbclient
import nbformat
import psutil
import pytest

from dltutor.distributed.engine_watchdog import end, with_descendants
from dltutor.distributed.engines import start_engines

START = "import dltutor.distributed as dist\nengines = dist.start_engines(2)"
RECORD = ("import json, psutil\nprint(json.dumps([[p.pid, p.create_time(), p.cmdline()] "
          "for p in psutil.Process().children(recursive=True)]))")
#: How long the test waits for the processes to end before it calls them left behind.
PATIENCE_S = 120


def run_until_it_fails(last_cell: str, leftovers: list[psutil.Process]) -> list[str]:
    """Run START, RECORD and ``last_cell`` (which ends the notebook badly) with nbclient; put
    the processes the kernel had started that still run into ``leftovers``; return the
    command lines of all it had started, as RECORD saw them."""
    cells = [nbformat.v4.new_code_cell(code) for code in (START, RECORD, last_cell)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    failed = (nbclient.exceptions.CellExecutionError, nbclient.exceptions.DeadKernelError)
    with pytest.raises(failed):
        nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    recorded = json.loads(notebook.cells[1].outputs[0]["text"])
    for pid, started, _ in recorded:
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(pid)
            if process.create_time() == started:    # not a newer process given the same pid
                leftovers.append(process)
    return [" ".join(command) for _, _, command in recorded]


def still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``processes`` (and what they started) still running after at most PATIENCE_S."""
    deadline = time.monotonic() + PATIENCE_S
    while with_descendants(processes) and time.monotonic() < deadline:
        time.sleep(1)
    return with_descendants(processes)


@pytest.fixture
def leftovers():
    """A list the test fills with the processes it found; whatever of them still runs at the
    end is ended, pass or fail."""
    found: list[psutil.Process] = []
    yield found
    end(with_descendants(found), grace_s=2)


def names(processes: list[psutil.Process]) -> list[str]:
    """Who they are: pid and command line, for the failure's message."""
    named = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            named.append(f"{process.pid} {' '.join(process.cmdline())}")
    return named


def test_the_engines_end_when_a_cell_after_start_engines_raises(leftovers):
    started = run_until_it_fails("raise RuntimeError('a cell that fails')", leftovers)
    assert any(command.endswith("python -m ipyparallel.engine --mpi") for command in started)
    assert names(still_running(leftovers)) == []


def test_the_engines_end_when_the_kernel_is_killed(leftovers):
    started = run_until_it_fails("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                                 leftovers)
    assert any(command.endswith("python -m ipyparallel.engine --mpi") for command in started)
    assert names(still_running(leftovers)) == []


def test_a_start_that_fails_leaves_nothing_running(leftovers):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(TimeoutError, match=r"(?s)start_engines: .*What the engines printed:"
                                           r".*dist.start_engines\(2, timeout=300\)"):
        start_engines(2, timeout=0.01)             # no engine registers that fast
    leftovers += [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert names(still_running(leftovers)) == []
