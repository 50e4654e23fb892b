"""Data-parallel training in 2 real processes (mpiexec, MPICH), against one process alone.

``mpi_program.py`` runs every scenario in both processes (the collectives, DistributedSampler,
DistributedDataParallel with no_sync and find_unused_parameters) and writes what each saw;
here the two are compared with each other and with the same work done by this one process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.distributed.engines import mpiexec_command

sys.path.insert(0, str(Path(__file__).parent))
from mpi_run import run_ranks
import mpi_program

MPIEXEC = mpiexec_command()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What process 0 and process 1 saw (the processes are started and ended here)."""
    return run_ranks(mpi_program.__file__, tmp_path_factory.mktemp("mpi"), timeout=180)


def alone(steps=3, micro_batches=None):
    """The same training in one process, on the whole batch (or summing micro-batches)."""
    dt.manual_seed(0)
    net = mpi_program.model()
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = mpi_program.data()
    for _ in range(steps):
        opt.zero_grad()
        for rows in micro_batches or [np.arange(len(x))]:
            loss = nn.functional.mse_loss(net(dt.tensor(x[rows])), dt.tensor(y[rows]))
            # each process's gradient is averaged over the 2 processes
            (loss * (1.0 / 2 if micro_batches else 1.0)).backward()
        opt.step()
    return [p.data for p in net.parameters()]


def test_the_processes_are_two_and_start_equal(ranks):
    assert [r["world"] for r in ranks] == [2, 2] and [r["rank"] for r in ranks] == [0, 1]
    assert ranks[1]["start_equal"]["differed"], "process 1 did start from other weights"
    assert ranks[0]["start_equal"]["weights"] == ranks[1]["start_equal"]["weights"]


def test_two_processes_with_half_the_batch_take_one_processs_step(ranks):
    assert ranks[0]["training"]["rows"] == [0, 2, 4, 6]
    assert ranks[1]["training"]["rows"] == [1, 3, 5, 7]
    assert ranks[0]["training"]["weights"] == ranks[1]["training"]["weights"]
    for ours, lone in zip(ranks[0]["training"]["weights"], alone()):
        np.testing.assert_allclose(np.array(ours), lone, rtol=1e-12, atol=1e-14)


def test_no_sync_accumulates_with_one_all_reduce_a_step(ranks):
    accumulated = ranks[0]["accumulated"]
    assert accumulated["weights"] == ranks[1]["accumulated"]["weights"]
    assert accumulated["all_reduces"] == ranks[0]["training"]["all_reduces"] == 3 * 2
    micro = [np.array([0, 2]), np.array([4, 6]), np.array([1, 3]), np.array([5, 7])]
    for ours, lone in zip(accumulated["weights"], alone(micro_batches=micro)):
        np.testing.assert_allclose(np.array(ours), lone, rtol=1e-12, atol=1e-14)


def test_an_unused_parameter_stops_the_next_forward_unless_found(ranks):
    for r in ranks:
        assert "['unused.bias', 'unused.weight']" in r["unused_refused"]["error"]
        assert "find_unused_parameters=True" in r["unused_refused"]["error"]
        found = r["unused_found"]
        assert found["error"] is None and found["unused_grad"] is None
        assert found["used_grad"] == [[4.0, 4.0]]   # two steps' gradients (2 each), averaged


def test_the_collectives(ranks):
    for r in ranks:
        assert r["collectives"] == {"sum": [3.0, 10.0], "max": [1.0], "avg": [0.5],
                                    "broadcast": [6.0], "gathered": [[0.0], [2.0]]}


def test_the_sampler_gives_each_process_its_own_share_each_epoch(ranks):
    shares = [r["sampler"]["epochs"] for r in ranks]
    for epoch in (0, 1):
        assert sorted(shares[0][epoch] + shares[1][epoch]) == list(range(10))
    assert shares[0][0] != shares[0][1], "set_epoch changed nothing"
    assert [r["sampler"]["batches"] for r in ranks] == [3, 3]


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readmes_program_trains_in_two_processes(readme, tmp_path):
    text = (Path(__file__).resolve().parents[2] / readme).read_text(encoding="utf-8")
    program = next(block for block in text.split("```python\n")[1:]
                   if block.startswith("# train.py")).split("```")[0]
    (tmp_path / "train.py").write_text(program)
    run = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "train.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    losses = [float(line.split()[-1]) for line in run.stdout.splitlines()
              if line.startswith("epoch")]
    assert len(losses) == 5, run.stdout              # printed once, by process 0
    assert losses[-1] < losses[0], f"the loss did not fall: {losses}"
