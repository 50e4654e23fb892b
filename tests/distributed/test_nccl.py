"""init_process_group("nccl"): the collectives on GPUs by NCCL through CuPy.

No GPU is needed for most of this: nccl_program.py runs in 2 real MPI processes against the
FAKE CuPy and NCCL of fake_cupy_nccl.py, which records every call and carries the bytes at the
given pointers by MPI. That checks what dltutor asks of NCCL (who makes the unique id, each
communicator's arguments, the types and ops, the counts) and that the answers equal the MPI
path's; test_two_processes_on_real_gpus does it on real GPUs (DLTUTOR_TEST_CUPY=1).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
import dltutor.distributed as dist
from dltutor import backend as B

sys.path.insert(0, str(Path(__file__).parent))
from mpi_run import run_ranks
import fake_cupy_nccl as fake
import nccl_program

NCCL_TYPE = {"float32": fake.NCCL_FLOAT32, "float64": fake.NCCL_FLOAT64}
# AVG is NCCL's sum, divided afterwards by dltutor (as on the MPI path)
NCCL_OP = {"SUM": fake.NCCL_SUM, "AVG": fake.NCCL_SUM, "MAX": fake.NCCL_MAX,
           "MIN": fake.NCCL_MIN, "PRODUCT": fake.NCCL_PROD}


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What process 0 and process 1 saw on the fake GPUs."""
    return run_ranks(nccl_program.__file__, tmp_path_factory.mktemp("nccl"), timeout=180)


def test_rank_0_alone_makes_the_unique_id_and_every_rank_joins_with_it(ranks):
    for rank, seen in enumerate(ranks):
        setup = seen["working"]["setup"]
        assert [name for name, _ in setup] == (
            ["Device.use", "get_unique_id", "NcclCommunicator"] if rank == 0
            else ["Device.use", "NcclCommunicator"])
        assert setup[0][1] == {"id": rank}           # its rank on this machine, of 2 GPUs
        made_by_rank_0 = [1] * 128                   # (the fake's id says who made it)
        assert setup[-1][1] == {"ndev": 2, "commId": made_by_rank_0, "rank": rank}
        assert seen["working"]["backend"] == "nccl"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", nccl_program.OPS)
def test_each_op_is_nccls_on_the_gpu_array_and_equals_the_mpi_path(ranks, dtype, op):
    inputs = np.array([[rank + 1.5, -2.0 * rank, 3.0 + rank] for rank in (0, 1)], dtype)
    expected = {"SUM": inputs.sum(0), "AVG": inputs.sum(0) / 2, "MAX": inputs.max(0),
                "MIN": inputs.min(0), "PRODUCT": inputs.prod(0)}[op]
    for seen in ranks:
        case = seen["working"]["reductions"][f"{dtype} {op}"]
        assert case["calls"] == [["allReduce", {"in_place": True, "count": 3,
                                                "datatype": NCCL_TYPE[dtype],
                                                "op": NCCL_OP[op], "stream": 7}]]
        assert case["nccl"] == case["mpi"], "NCCL's bytes differ from MPI's"
        assert case["host_calls"] == 0, "a host array went to NCCL"
        np.testing.assert_array_equal(np.array(case["values"], dtype), expected)


def test_broadcast_and_all_gather_carry_bytes_and_strided_views_are_written_back(ranks):
    uint8 = fake.NCCL_UINT8
    for rank, seen in enumerate(ranks):
        copies = seen["working"]["copies"]
        assert copies["whole"] == [10.0, 1.0]                      # process 1's
        assert copies["whole_calls"] == [["bcast", {"count": 8, "datatype": uint8, "root": 1,
                                                    "stream": 7}]]
        mine = (np.arange(6.0) * (rank + 1)).tolist()
        assert copies["backing"] == [0.0, mine[1], 2.0, mine[3], 4.0, mine[5]]
        assert copies["backing_calls"][0][1]["count"] == 3 * 8     # the 3 strided values
        assert copies["counts"] == [3, 10]
        assert copies["counts_calls"][0][1]["datatype"] == fake.NCCL_INT64
        assert copies["gathered"] == [[0.0, 0.5], [1.0, 1.5]]
        assert copies["gathered_on"] == ["ndarray", "ndarray"]    # moved to the host tensors
        assert copies["gather_calls"] == [["allGather", {"count": 8, "datatype": uint8,
                                                         "stream": 7}]]


def test_what_an_nccl_group_refuses_names_the_tensors_backend_or_gpu(ranks):
    for rank, seen in enumerate(ranks):
        said = seen["working"]["refusals"]
        assert said["cpu_tensor"].startswith("TypeError: all_reduce: the tensor is on the cpu "
                                             "(backend 'numpy')")
        assert ".to('gpu')" in said["cpu_tensor"] and "'mpi'" in said["cpu_tensor"]
        assert "NCCL cannot add bool values" in said["bool"]
        assert said["other_gpu"].startswith(
            f"ValueError: broadcast: the array is on GPU {1 - rank}, but this process's NCCL "
            f"communicator is on GPU {rank}")


def test_data_parallel_training_needs_no_change(ranks):
    """DDP, the replica check and gather_object go through the collectives: the gradients by
    NCCL (one all-reduce a step), the used-flags, fingerprints and objects by MPI."""
    first, second = (seen["working"] for seen in ranks)
    for seen in (first, second):
        assert seen["data_parallel"]["step_calls"] == ["allReduce"]
        assert seen["data_parallel"]["on_gpu"] == ["FakeGpuArray", "FakeGpuArray"]
        assert seen["data_parallel"]["replicas_equal"]
        assert seen["last_call"] == "destroy"
    assert first["data_parallel"]["weights"] == second["data_parallel"]["weights"]
    assert first["objects"] == [{"rank": 0}, {"rank": 1}] and second["objects"] is None


def test_a_missing_piece_stops_every_process_and_says_what_to_do(ranks):
    first, second = ranks
    for case in ("no_cupy", "no_nccl", "no_gpu", "more_processes_than_gpus"):
        assert first[case] == second[case], f"{case}: the processes were told different things"
    assert "pip install cupy-cuda12x" in first["no_cupy"]
    assert "pip install nvidia-nccl-cu12" in first["no_nccl"]
    assert "no usable GPU" in first["no_gpu"] and "nvidia-smi" in first["no_gpu"]
    shared = first["more_processes_than_gpus"]
    assert "ranks [0, 1] share GPU 0000:01:00.0" in shared and "mpiexec -n 1" in shared
    for said in (first[case] for case in ("no_cupy", "no_nccl", "no_gpu")):
        assert said.startswith("GPUUnavailableError: process 0: ") and "'mpi'" in said


def test_a_launcher_that_gives_each_process_its_own_gpu_is_followed(ranks):
    """One GPU visible to each (CUDA_VISIBLE_DEVICES), a different one: both take their
    device 0, the local rank modulo 1, and NCCL is set up."""
    for seen in ranks:
        assert seen["own_gpu_each"] == {"uses": [0]}


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_nccl_without_cupy_says_what_to_install_and_leaves_no_group():
    with pytest.raises(B.GPUUnavailableError, match="pip install cupy-cuda12x"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()


def test_an_unknown_backend_names_both():
    with pytest.raises(ValueError, match=r"one of \('mpi', 'nccl'\), got 'gloo'"):
        dist.init_process_group("gloo")


def test_an_mpi_group_carries_a_gpu_array_through_the_host():
    """In an "mpi" group nothing goes to NCCL, whatever the array (here the fake's)."""
    fake.install()
    try:
        dist.init_process_group("mpi")
        values = dt.tensor(fake.on_gpu([1.0, 2.0]))
        dist.all_reduce(values, dist.ReduceOp.AVG)
        assert values.tolist() == [1.0, 2.0] and fake.calls == []
    finally:
        dist.destroy_process_group()
        fake.uninstall()


@pytest.mark.skipif(os.environ.get("DLTUTOR_TEST_CUPY") != "1",
                    reason="needs CuPy, NCCL and a GPU: run with DLTUTOR_TEST_CUPY=1")
def test_two_processes_on_real_gpus(tmp_path):
    import cupy
    first, second = run_ranks(nccl_program.__file__, tmp_path, "gpu", timeout=300)
    if cupy.cuda.runtime.getDeviceCount() < 2:
        # NCCL cannot put two processes on one GPU; dltutor says so before NCCL is asked
        assert "share GPU" in first["error"] and first == second, first
        pytest.skip("one GPU: 2 processes need 2 GPUs for NCCL (the refusal was checked)")
    assert first == second, "the processes ended with different values"
    assert first["sum"] == [3.0, 4.0] and first["avg"] == [1.5, 2.0]
    assert first["broadcast"] == [10.0] and first["gathered"] == [[0.5], [1.5]]
    assert first["replicas_equal"]


def test_gather_object_checks_the_list_before_anything_travels():
    """(ZeRO's consolidate_state_dict gathers through it; tests/distributed/test_zero.py.)"""
    dist.init_process_group("mpi")
    try:
        with pytest.raises(ValueError, match="object_gather_list must be a list of 1 entries"):
            dist.gather_object({"step": 1}, [None, None])
        with pytest.raises(ValueError, match="dst=1 is not a rank of this group"):
            dist.gather_object({"step": 1}, [None], dst=1)
    finally:
        dist.destroy_process_group()
