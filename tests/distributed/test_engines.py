"""A notebook starts its own MPI engines, runs %%px cells in them and stops them, and what it
shows is the same on every run (rank order, no progress bars, no log lines)."""
from __future__ import annotations

import nbclient
import nbformat

from dltutor.distributed.engines import mpiexec_command

CELLS = [
    "import dltutor.distributed as dist\nengines = dist.start_engines(2)\nengines",
    "%%px\nimport time, random\nimport dltutor as dt\nimport dltutor.distributed as dist\n"
    "time.sleep(random.random() * 0.2)          # finish in any order\n"
    "dist.init_process_group('mpi')\nt = dt.tensor([dist.get_rank() + 1.0])\n"
    "dist.all_reduce(t)\nprint('rank', dist.get_rank(), t)",
    "engines.stop()\nengines",
]


def shown(cell) -> str:
    return "".join(o.get("text") or o.get("data", {}).get("text/plain", "")
                   for o in cell.get("outputs", []))


def run_once() -> list[str]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    return [shown(cell) for cell in notebook.cells]


def test_a_notebook_drives_two_mpi_processes_with_the_same_output_every_time():
    assert mpiexec_command()                       # the kit's environment has MPI
    first, second = run_once(), run_once()
    assert first == second
    assert first[0] == "Engines(2 MPI processes, ranks 0-1)"
    assert first[1] == "[stdout:0] \nrank 0 tensor([3.])\n[stdout:1] \nrank 1 tensor([3.])\n"
    assert first[2] == "Engines(2 MPI processes, stopped)"
