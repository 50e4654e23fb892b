"""Chapter 13 (parameters across processes): its names table, cell by cell, and what it says of
Paddle's launcher. PyTorch runs in 2 gloo processes (ch13_torch_program.py), Paddle in 2
processes started by its own launcher (ch13_paddle_program.py), both on the CPU; the torch cells
of the DDP rows are proved by the DDP referee (test_distributed_referee.py) and the sampler's by
test_distributed_torch.py. MegEngine's cells are cited in notebooks/SOURCES.md."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from claims import claim, row
from test_distributed_referee import run_bounded

HERE = Path(__file__).resolve().parent
TABLE_TORCH, TABLE_PADDLE = "torch-names-13", "paddle-names-13"
LAUNCH = [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2"]


def launch(out: Path, program: Path, *args: str) -> None:
    """Paddle's launcher, 2 processes, logs in ``out / "logs"``."""
    run_bounded(LAUNCH + ["--log_dir", str(out / "logs"), str(program), *args], out)


@pytest.fixture(scope="module")
def torch_seen(tmp_path_factory):
    out = tmp_path_factory.mktemp("ch13_torch")
    run_bounded([sys.executable, str(HERE / "ch13_torch_program.py"), str(out)], out)
    return [json.loads((out / f"torch{rank}.json").read_text()) for rank in (0, 1)]


@pytest.fixture(scope="module")
def paddle_seen(tmp_path_factory):
    out = tmp_path_factory.mktemp("ch13_paddle")
    launch(out, HERE / "ch13_paddle_program.py", str(out))
    return [json.loads((out / f"paddle{rank}.json").read_text()) for rank in (0, 1)]


# --------------------------------------------------------------------------------- PyTorch

@row(TABLE_TORCH, "statistics of the whole batch",
     "`torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)` (GPU only)")
def test_torch_convert_sync_batchnorm_keeps_the_parameters_and_refuses_the_cpu(torch_seen):
    for seen in torch_seen:
        converted = seen["sync_batchnorm"]
        assert converted["type"] == "SyncBatchNorm" and converted["same_weight"]
        assert "SyncBatchNorm expected input tensor to be on GPU" in converted["cpu_error"]


@row(TABLE_TORCH, "shard the optimizer state (ZeRO-1)",
     "`torch.distributed.optim.ZeroRedundancyOptimizer(params, torch.optim.Adam)`")
def test_torch_zero_keeps_a_share_of_adams_state_in_each_process_and_consolidates_on_0(torch_seen):
    shares = [seen["zero"]["share_bytes"] for seen in torch_seen]
    whole = torch_seen[0]["zero"]["plain_bytes"]
    assert whole == 2 * 175 * 4                       # two float32 moments of 175 values
    assert sum(shares) == whole and all(share < whole * 0.6 for share in shares), shares
    assert torch_seen[0]["zero"]["consolidated_entries"] == torch_seen[0]["zero"]["parameters"]
    assert torch_seen[1]["zero"]["consolidated_entries"] is None


# ---------------------------------------------------------------------------------- Paddle

@row(TABLE_PADDLE, "average gradients, replicas start equal", "`paddle.DataParallel(model)`")
def test_paddle_data_parallel_broadcasts_rank_0s_weights_and_averages_gradients(paddle_seen):
    first, second = (seen["data_parallel"] for seen in paddle_seen)
    assert first["before"] != second["before"]                 # different seeds
    assert first["after"] == second["after"] == first["before"]
    assert first["averaged"] == second["averaged"] == [3.0, 3.0, 3.0]   # (2 + 4) / 2


@row(TABLE_PADDLE, "skip the all-reduce", "`paddle.DataParallel.no_sync`")
def test_paddle_no_sync_keeps_each_process_its_own_gradient(paddle_seen):
    assert [seen["data_parallel"]["no_sync"] for seen in paddle_seen] == [[2.0] * 3, [4.0] * 3]


@row(TABLE_PADDLE, "parameters a step does not use", "`find_unused_parameters=True`")
def test_paddle_find_unused_parameters_lets_a_head_go_unused(paddle_seen):
    for seen in paddle_seen:
        assert seen["unused"]["aux_grad_none"]
        assert seen["unused"]["main_grad"] == [3.0, 3.0, 3.0]


@row(TABLE_PADDLE, "each process its share of the data",
     "`paddle.io.DistributedBatchSampler(dataset, batch_size)`")
def test_paddle_distributed_batch_sampler_shares_the_data_out(paddle_seen):
    first, second = (seen["sampler"] for seen in paddle_seen)
    assert len(first) == len(second) == 5
    assert sorted(first + second) == list(range(10))


@row(TABLE_PADDLE, "statistics of the whole batch",
     "`paddle.nn.SyncBatchNorm.convert_sync_batchnorm(model)` (GPU only)")
def test_paddle_convert_sync_batchnorm_keeps_the_parameters_and_has_no_cpu_kernel(paddle_seen):
    for seen in paddle_seen:
        converted = seen["sync_batchnorm"]
        assert converted["type"] == "SyncBatchNorm" and converted["same_weight"]
        assert "`sync_batch_norm` is not registered" in converted["cpu_error"]


@row(TABLE_PADDLE, "shard the optimizer state (ZeRO-1)",
     "`paddle.distributed.sharding.group_sharded_parallel(model, opt, level=\"os\")` (GPU only)")
def test_paddle_group_sharded_parallel_shards_the_optimizer_state_on_gpus_only(paddle_seen):
    import inspect

    from paddle.distributed.sharding import group_sharded_parallel
    assert "os" in inspect.getdoc(group_sharded_parallel)     # "os" is its optimizer-state level
    for seen in paddle_seen:
        assert seen["sharding_on_cpu"] == "group_sharded_parallel only support gpu, xpu and " \
                                          "custom_device now"


@claim("paddle-launch-log-dir")
def test_paddle_launch_writes_a_log_per_process_and_names_the_one_that_failed(tmp_path):
    program = tmp_path / "train.py"
    program.write_text("import os\nrank = int(os.environ['PADDLE_TRAINER_ID'])\n"
                       "print('process', rank, 'starts')\n"
                       "if rank == 1:\n    raise ValueError('a bad sample in process 1')\n")
    with pytest.raises(AssertionError) as failed:            # the launcher exits with 1
        launch(tmp_path, program)
    assert "Container rank 1 status failed" in str(failed.value)
    assert f"log {tmp_path / 'logs'}/workerlog.1" in str(failed.value)
    logs = tmp_path / "logs"
    assert "process 0 starts" in (logs / "workerlog.0").read_text()
    assert "ValueError: a bad sample in process 1" in (logs / "workerlog.1").read_text()
