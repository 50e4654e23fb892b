"""The referee of dltutor.distributed: PyTorch's DistributedDataParallel in 2 processes (gloo,
on the CPU) against the kit's in 2 processes (mpiexec), on the same weights and data.

``ddp_torch_program.py`` (started with ``torch.multiprocessing.spawn``) and
``ddp_kit_program.py`` (started with ``mpiexec -n 2``) run the same scenarios; each process
writes what it saw. Each claim below is shown in PyTorch first, then the kit is held to it,
and where the numbers can agree they must agree to float32 rounding.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn

from claims import claim, row

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MPIEXEC = Path(sys.executable).parent / "mpiexec"     # the mpich wheel puts it beside python
LIMIT_S = 180                                         # each side's whole run, start to end
FLOAT32 = {"rtol": 1e-5, "atol": 1e-6}                # PyTorch and the kit sum in other orders


def run_bounded(command: list[str], cwd: Path) -> None:
    """Run ``command`` (which starts the processes) in a session of its own, within LIMIT_S;
    then make sure no process of that session is left, killing any that is."""
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths),    # this clone's dltutor
           "OMP_NUM_THREADS": "1"}                                # 2 processes on 2 cores
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"{command[0]} ran past {LIMIT_S} s (killed):\n{output}")
    left = _left_in_session(proc.pid)
    assert proc.returncode == 0, output
    assert not left, f"processes of {command} were still running after it ended (killed)"


def _left_in_session(session: int) -> bool:
    """Whether a process of ``session`` is alive, after a moment for the last to exit (they
    are then killed)."""
    for _ in range(50):
        try:
            os.killpg(session, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    os.killpg(session, signal.SIGKILL)
    return True


def write_inputs(path: Path) -> None:
    """The starting weights (dltutor's initialization, copied into PyTorch) and the data."""
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    rng = np.random.default_rng(0)
    np.savez(path, x=rng.standard_normal((24, 4)).astype(np.float32),
             y=rng.standard_normal((24, 2)).astype(np.float32),
             **{name: p.data for name, p in net.named_parameters()})


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    """``{"torch": [rank 0's, rank 1's], "kit": [...]}``: what each process of each side saw."""
    out = tmp_path_factory.mktemp("ddp")
    inputs = out / "inputs.npz"
    write_inputs(inputs)
    run_bounded([sys.executable, str(HERE / "ddp_torch_program.py"), str(inputs), str(out)], out)
    assert MPIEXEC.exists(), f"no {MPIEXEC}: reinstall the frameworks environment (make test)"
    run_bounded([str(MPIEXEC), "-n", "2", sys.executable, str(HERE / "ddp_kit_program.py"),
                 str(inputs), str(out)], out)
    return {side: [json.loads((out / f"{side}{rank}.json").read_text()) for rank in (0, 1)]
            for side in ("torch", "kit")}


def arrays(values):
    return [np.array(v, dtype=np.float64) for v in values]


def assert_close(ours, theirs, what):
    for i, (a, b) in enumerate(zip(arrays(ours), arrays(theirs), strict=True)):
        np.testing.assert_allclose(a, b, **FLOAT32, err_msg=f"{what}, tensor {i}")


@claim("torch-ddp-same-step")
def test_the_kits_data_parallel_steps_are_pytorchs(seen):
    for side in ("torch", "kit"):
        ranks = [r["training"] for r in seen[side]]
        assert [r["world"] for r in seen[side]] == [2, 2], side
        assert ranks[0]["rows"] == list(range(0, 24, 2)), side       # DistributedSampler's share
        assert ranks[1]["rows"] == list(range(1, 24, 2)), side
        assert [r["steps"] for r in ranks] == [3, 3], side
        assert ranks[0]["weights"] == ranks[1]["weights"], f"{side}: the replicas drifted apart"
    for rank in (0, 1):
        assert_close(seen["kit"][rank]["training"]["weights"],
                     seen["torch"][rank]["training"]["weights"], f"rank {rank}'s weights")


@claim("torch-ddp-broadcast-at-start")
def test_the_replicas_start_from_process_0s_parameters_and_buffers(seen):
    for side in ("torch", "kit"):
        ranks = [r["start_equal"] for r in seen[side]]
        assert ranks[0]["before"] != ranks[1]["before"], f"{side}: the starts were already equal"
        assert ranks[0]["after"] == ranks[1]["after"] == ranks[0]["before"], side


@row("torch-names-13", "average gradients, replicas start equal",
     "`torch.nn.parallel.DistributedDataParallel(model)`")
@claim("torch-ddp-averages-gradients")
def test_the_gradients_are_averaged_over_the_processes(seen):
    for side in ("torch", "kit"):
        ranks = [r["averaged"] for r in seen[side]]
        assert ranks[0]["ddp"] == ranks[1]["ddp"], side
        alone = [arrays(r["alone"]) for r in ranks]
        assert_close(ranks[0]["ddp"], [(a + b) / 2 for a, b in zip(*alone)], f"{side}: the mean")
        assert not np.allclose(arrays(ranks[0]["ddp"])[0], alone[0][0] + alone[1][0]), side
    assert_close(seen["kit"][0]["averaged"]["ddp"], seen["torch"][0]["averaged"]["ddp"],
                 "the averaged gradients")


@row("torch-names-13", "skip the all-reduce",
     "`torch.nn.parallel.DistributedDataParallel.no_sync`")
@claim("torch-ddp-no-sync")
def test_no_sync_accumulates_locally_and_the_next_backward_reduces_the_sum(seen):
    for side in ("torch", "kit"):
        ranks = [r["accumulated"] for r in seen[side]]
        for r in ranks:                      # inside no_sync: this process's own gradient
            assert_close(r["inside"], r["alone_first"], f"{side}: inside no_sync")
        assert ranks[0]["inside"] != ranks[1]["inside"], f"{side}: no_sync all-reduced"
        assert ranks[0]["after"] == ranks[1]["after"], side
        sums = [arrays(r["alone_sum"]) for r in ranks]
        assert_close(ranks[0]["after"], [(a + b) / 2 for a, b in zip(*sums)],
                     f"{side}: the mean of both micro-batches' sums")
    assert_close(seen["kit"][0]["accumulated"]["after"],
                 seen["torch"][0]["accumulated"]["after"], "the accumulated gradients")


# The words of PyTorch's error (torch/csrc/distributed/c10d/reducer.cpp) that the kit's
# message mirrors: what went wrong, and the switch that fixes it.
TORCH_WORDS = ("Expected to have finished reduction in the prior iteration",
               "parameters that were not used in producing loss", "find_unused_parameters=True")


@claim("torch-ddp-unused-parameter-error")
def test_an_unused_parameter_stops_the_next_forward(seen):
    for theirs, ours in zip(seen["torch"], seen["kit"]):
        refused = theirs["unused_refused"]
        assert refused["where"] == "forward 2", refused          # not the backward before it
        for words in TORCH_WORDS:
            assert words in refused["error"], words
        refused = ours["unused_refused"]
        assert refused["where"] == "forward 2", refused
        assert "did not reach the parameters ['unused.bias', 'unused.weight']" in refused["error"]
        assert "find_unused_parameters=True" in refused["error"]


@row("torch-names-13", "parameters a step does not use", "`find_unused_parameters=True`")
@claim("torch-ddp-find-unused-parameters")
def test_with_find_unused_parameters_an_unused_parameter_keeps_grad_none(seen):
    for side in ("torch", "kit"):
        for r in seen[side]:
            found = r["unused_found"]
            assert found["error"] is None and found["unused_grad"] is None, (side, found)
            assert found["used_grad"] == [[4.0, 4.0]], side   # two backwards of 2 each, averaged


@claim("torch-ddp-broadcast-buffers")
def test_buffers_are_process_0s_at_each_forward(seen):
    for side in ("torch", "kit"):
        ranks = [r["buffers"] for r in seen[side]]
        m = ranks[0]["momentum"]
        first = [m * np.array(r["batch_means"][0]) for r in ranks]
        for r, expected in zip(ranks, first):   # each process its own batch: not averaged
            np.testing.assert_allclose(r["running_mean"][0], expected, **FLOAT32)
        for r in ranks:                         # then every process starts from process 0's
            expected = (1 - m) * np.array(ranks[0]["running_mean"][0]) \
                + m * np.array(r["batch_means"][1])
            np.testing.assert_allclose(r["running_mean"][1], expected, **FLOAT32, err_msg=side)
    for rank in (0, 1):
        assert_close(seen["kit"][rank]["buffers"]["running_mean"],
                     seen["torch"][rank]["buffers"]["running_mean"], "running means")


@claim("torch-ddp-buffers-after-no-sync")
def test_after_a_forward_in_no_sync_pytorch_skips_the_buffer_broadcast_and_the_kit_does_not(seen):
    def second_running_means(side):
        """Rank 1's running mean after the synced forward, and the two things it could be:
        its own statistics updated, or process 0's (broadcast first) updated."""
        ranks = [r["buffers_after_no_sync"] for r in seen[side]]
        m, batch = ranks[1]["momentum"], np.array(ranks[1]["batch_means"][1])
        own, zeros = (np.array(r["running_mean"][0]) for r in (ranks[1], ranks[0]))
        return ranks[1]["running_mean"][1], (1 - m) * own + m * batch, (1 - m) * zeros + m * batch
    theirs, own, broadcast = second_running_means("torch")
    assert not np.allclose(own, broadcast)
    np.testing.assert_allclose(theirs, own, **FLOAT32)         # PyTorch: no broadcast this time
    ours, own, broadcast = second_running_means("kit")
    np.testing.assert_allclose(ours, broadcast, **FLOAT32)     # the kit: process 0's, every time
