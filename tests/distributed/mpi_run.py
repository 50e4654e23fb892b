"""Run a test program in real MPI processes and read what each one saw.

Each program under tests/distributed takes an output folder (and maybe more arguments) and
writes ``rank<N>.json`` there from every process; the test then compares the processes.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dltutor.distributed.engines import mpiexec_command


def run_ranks(program: str | Path, out: Path, *args: str, processes: int = 2,
              timeout: float = 120) -> list[dict]:
    """Start ``program`` in ``processes`` MPI processes (bounded by ``timeout``), then return
    each rank's ``rank<N>.json`` from ``out``, rank 0 first."""
    command = [mpiexec_command(), "-n", str(processes), sys.executable, str(program), str(out),
               *args]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stdout + run.stderr
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(processes)]
