"""Several processes from one notebook: MPI engines that run the cells marked ``%%px``.

A notebook is one process, and data-parallel training needs several. ipyparallel, Jupyter's
way to run one program on several processes, starts N *engines* under ``mpiexec`` (so they
form one MPI world, as ``mpiexec -n N python train.py`` would) and gives the notebook the
``%%px`` cell magic: a cell that starts with ``%%px`` runs in every engine at once, and each
engine's output is shown under ``[stdout:rank]``, in rank order.

    engines = dist.start_engines(2)      # in a plain cell: two processes, ranks 0 and 1
    %%px                                 # (first line of the next cell)
    import dltutor.distributed as dist
    dist.init_process_group("mpi")
    print(dist.get_rank(), dist.get_world_size())
    engines.stop()                       # in a plain cell, at the end

``start_engines`` starts them quietly (no progress bars, no log lines: a notebook's stored
outputs must not depend on timing), uses the ``mpiexec`` of the kit's own environment, and sets
``%%px`` to show each engine's output once it has finished, in rank order.

The engines end with their notebook, however it ends: ``engines.stop()``, an error, a kernel
restart, or the kernel killed (SIGKILL runs no clean-up code in the kernel, so a watchdog
process, ``engine_watchdog.py``, ends what ``start_engines`` started once the kernel is gone).
They are private on a shared machine (a class hub): the controller speaks to the notebook and
the engines only over CurveZMQ, encrypted with a key that lives in the student's own files,
so another account on the machine can neither send them code nor read their outputs, and
nothing they start listens beyond 127.0.0.1 (classroom/README.md says what protects each port).
"""
from __future__ import annotations

import contextlib
import io
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..i18n import get_language
from .mpi_collectives import INSTALL_HINT


def mpiexec_command() -> str:
    """The ``mpiexec`` to start engines with: the one beside this Python (where
    installing the kit puts MPICH's), else the first on PATH.

    >>> Path(mpiexec_command()).name.startswith("mpiexec")
    True
    """
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(f"no mpiexec beside {sys.executable} or on PATH; install MPI "
                                f"with: {INSTALL_HINT}")
    return found


def engines_mpiexec_command() -> str:
    """The ``mpiexec`` that starts the engines: MPICH's ``mpiexec.gforker`` beside this Python
    when there is one, else :func:`mpiexec_command`. The engines always run on this machine,
    and gforker starts processes here only, with no network port; hydra's ``mpiexec`` listens
    on every interface for its proxies and takes a connection from anyone, a way for another
    account (or another machine) to end a student's engines.

    >>> Path(engines_mpiexec_command()).name.startswith("mpiexec")
    True
    """
    gforker = Path(sys.executable).parent / "mpiexec.gforker"
    return str(gforker) if gforker.exists() else mpiexec_command()


class Engines:
    """N running MPI engines (what :func:`start_engines` returns); ``stop()`` ends them."""

    def __init__(self, cluster: Any, client: Any, watchdog: subprocess.Popen):
        self.cluster, self.client, self.watchdog = cluster, client, watchdog

    @property
    def count(self) -> int:
        return len(self.client.ids)

    def stop(self) -> None:
        """End the engines and their controller (quietly; a second call does nothing)."""
        if self.cluster is None:
            return
        with _quiet():
            self.client.close()
            self.cluster.stop_cluster_sync()
        self.cluster = None
        _dismiss(self.watchdog)     # it ends anything the cluster's own stop left running

    def __repr__(self) -> str:
        state = "stopped" if self.cluster is None else f"ranks 0-{self.count - 1}"
        return f"Engines({self.count} MPI processes, {state})"


def start_engines(n: int = 2, timeout: float = 120) -> Engines:
    """Start ``n`` MPI engines and point ``%%px`` at them (see the module docstring)."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"start_engines: n must be a whole number >= 1, got {n!r}")
    try:
        import ipyparallel as ipp  # (imported when first asked: `import dltutor` stays light)
    except ImportError as exc:
        raise ImportError(f"start_engines needs ipyparallel ({exc}), which the kit's own "
                          "install brings; install it with: pip install ipyparallel") from None
    already_running = {p.pid for p in _children()}
    watchdog = _start_watchdog()
    with _quiet():
        # CurveZMQ: the controller's sockets on 127.0.0.1 answer only a client that holds its
        # key, which is in this account's connection files (see classroom/README.md)
        cluster = ipp.Cluster(engines="mpi", n=n, log_level=logging.ERROR,
                              controller_args=["--IPController.enable_curve=True"])
        cluster.config.MPILauncher.mpi_cmd = [engines_mpiexec_command()]
        # MPI's own transport (UCX) listens on loopback only: the ranks are all on this machine
        cluster.config.MPILauncher.environment = {"UCX_NET_DEVICES": "lo"}
        try:
            cluster.start_cluster_sync()
            _watch(watchdog, already_running)   # the controller and mpiexec, with all they start
            client = _connect(cluster, n, timeout)
        except BaseException as exc:            # (a timeout, an interrupt): leave nothing behind
            printed = _engines_output(cluster)  # (read before stopping: the stop removes it)
            with contextlib.suppress(Exception):
                cluster.stop_cluster_sync()
            _dismiss(watchdog)
            if isinstance(exc, TimeoutError):
                raise TimeoutError(
                    f"start_engines: {exc}. What the engines printed:\n{printed or '(nothing)'}"
                    f"\nStart fewer engines, or give them longer: "
                    f"dist.start_engines({n}, timeout=300)") from None
            raise
    _settle_px_output()
    return Engines(cluster, client, watchdog)


def _engines_output(cluster: Any) -> str:
    """The last lines the engines wrote to their log (mpiexec's and theirs), for an error."""
    with contextlib.suppress(Exception):
        lines = "".join(launcher.get_output() for launcher in cluster.engines.values())
        return "\n".join(lines.strip().splitlines()[-20:])
    return ""


def _connect(cluster: Any, n: int, timeout: float) -> Any:
    """A client of ``cluster`` once its ``n`` engines are up, ``%%px`` pointed at them and
    each speaking the notebook's language (its diagnostics, its exercises' texts)."""
    client = cluster.connect_client_sync()
    client.wait_for_engines(n, timeout=timeout, interactive=False)
    client[:].activate()                 # registers %%px for this notebook
    client[:].execute(f"import dltutor; dltutor.set_language({get_language()!r})", block=True)
    return client


def _start_watchdog() -> subprocess.Popen:
    """The process that ends the engines once this one is gone (see engine_watchdog.py): in a
    session of its own, so that what stops this kernel's process group leaves it running."""
    script = Path(__file__).with_name("engine_watchdog.py")
    return subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, text=True)


def _watch(watchdog: subprocess.Popen, already_running: set[int]) -> None:
    """Tell the watchdog every process started since ``already_running`` was taken (pid and
    start time: a pid the system hands out again later names another process)."""
    assert watchdog.stdin is not None
    not_ours = already_running | {watchdog.pid}
    for process in _children():
        if process.pid not in not_ours:
            watchdog.stdin.write(f"{process.pid} {process.create_time()}\n")
    watchdog.stdin.flush()


def _children() -> list[Any]:
    """This process's descendants, as psutil sees them (psutil is imported here, when engines
    start: it takes longer to import than the rest of ``dltutor.distributed``)."""
    import psutil
    return psutil.Process().children(recursive=True)


def _dismiss(watchdog: subprocess.Popen) -> None:
    """Close the watchdog's pipe (it then ends whatever is left) and wait for it to finish."""
    assert watchdog.stdin is not None
    watchdog.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        watchdog.wait(timeout=60)


def _settle_px_output() -> None:
    """``%%px`` waits for every engine and shows their output in rank order, never a progress bar
    (both would make stored outputs depend on timing). Outside IPython: nothing to set."""
    from IPython import get_ipython
    shell = get_ipython()
    if shell is not None:
        shell.run_line_magic("pxconfig", "--block --no-stream --progress-after -1")


@contextlib.contextmanager
def _quiet() -> Any:
    """Hide what ipyparallel prints while starting and stopping (progress, pids, logs)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield
