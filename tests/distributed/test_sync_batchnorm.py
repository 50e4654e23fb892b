"""SyncBatchNorm: 2 real processes (mpiexec) each with half a batch, against one BatchNorm
given the whole batch in this process; its gradient by finite differences; its conversion.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn

from gradcheck import gradcheck

sys.path.insert(0, str(Path(__file__).parent))
from mpi_run import run_ranks
import sync_bn_program  # the program's own data and layer, for the lone process

CLOSE = {"rtol": 1e-12, "atol": 1e-13}          # float64: only the order of the sums differs


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What process 0 and process 1 saw (the processes are started and ended here)."""
    return run_ranks(sync_bn_program.__file__, tmp_path_factory.mktemp("syncbn"))


@pytest.fixture
def world_of_one():
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def whole_batch(kind):
    """One BatchNorm, one process, the whole batch: the step SyncBatchNorm must reproduce."""
    x, upstream = sync_bn_program.data(kind)
    bn = sync_bn_program.batchnorm(kind)
    inputs, out = sync_bn_program.train_step(bn, x, upstream)
    bn.eval()
    with dt.no_grad():
        evaluated = bn(dt.tensor(x))
    return {"out": out.numpy(), "x_grad": inputs.grad.numpy(), "weight_grad": bn.weight.grad.numpy(),
            "bias_grad": bn.bias.grad.numpy(), "running_mean": bn.running_mean.numpy(),
            "running_var": bn.running_var.numpy(), "eval_out": evaluated.numpy()}


def joined(ranks, kind, key):
    """The processes' rows put back together in order (process 0 had the first half)."""
    return np.concatenate([np.array(r[kind][key]) for r in ranks])


@pytest.mark.parametrize("kind", ["1d", "2d"])
def test_two_processes_with_half_the_batch_normalize_as_one_with_all_of_it(ranks, kind):
    alone = whole_batch(kind)
    assert [r[kind]["type"] for r in ranks] == ["SyncBatchNorm"] * 2
    np.testing.assert_allclose(joined(ranks, kind, "out"), alone["out"], **CLOSE)
    for r in ranks:
        assert r[kind]["batches"] == 1
        for key in ("running_mean", "running_var"):
            np.testing.assert_allclose(r[kind][key], alone[key], **CLOSE, err_msg=key)


@pytest.mark.parametrize("kind", ["1d", "2d"])
def test_the_gradients_are_the_whole_batchs(ranks, kind):
    alone = whole_batch(kind)
    np.testing.assert_allclose(joined(ranks, kind, "x_grad"), alone["x_grad"], **CLOSE)
    for r in ranks:
        for key in ("weight_grad", "bias_grad"):
            np.testing.assert_allclose(r[kind][key], alone[key], **CLOSE, err_msg=key)


@pytest.mark.parametrize("kind", ["1d", "2d"])
def test_evaluation_uses_the_running_statistics_and_no_collective(ranks, kind):
    alone = whole_batch(kind)
    assert [r[kind]["eval_collectives"] for r in ranks] == [0, 0]
    np.testing.assert_allclose(joined(ranks, kind, "eval_out"), alone["eval_out"], **CLOSE)


@pytest.mark.parametrize("kind", ["1d", "2d"])
def test_evaluation_with_the_batchs_statistics_uses_each_processs_own(ranks, kind):
    """As PyTorch's, which syncs only in training (an evaluation loop may run different
    numbers of batches in different processes: a collective there could wait forever)."""
    x, _ = sync_bn_program.data(kind)
    for rank, r in enumerate(ranks):
        assert r[kind]["own_stats_collectives"] == 0
        bn = sync_bn_program.batchnorm(kind)
        bn.use_global_stats = False
        rows = slice(rank * len(x) // 2, (rank + 1) * len(x) // 2)
        np.testing.assert_allclose(r[kind]["own_stats_out"], bn.eval()(dt.tensor(x[rows])).numpy(),
                                   **CLOSE)


def test_with_ddp_two_processes_train_as_one_with_the_whole_batch(ranks):
    alone = sync_bn_program.train(sync_bn_program.network(), slice(None))
    for r in ranks:
        for ours, lone in zip(r["ddp"]["weights"], alone.parameters()):
            np.testing.assert_allclose(ours, lone.numpy(), **CLOSE)
        np.testing.assert_allclose(r["ddp"]["running_var"], alone[1].running_var.numpy(),
                                   **CLOSE)


@pytest.mark.parametrize("shape", [(5, 3), (3, 2, 2, 2)])
def test_the_hand_written_backward_matches_finite_differences(world_of_one, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 2 + 0.5
    weight, bias = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    gradcheck(lambda x, w, b: dist.sync_norm_op.sync_batch_norm(x, None, None, w, b,
                                                                training=True), x, weight, bias)


def test_in_one_process_it_is_batchnorm(world_of_one):
    x = dt.tensor(np.random.default_rng(1).standard_normal((6, 4, 3)))
    plain, sync = nn.BatchNorm1d(4), dist.SyncBatchNorm(4)
    np.testing.assert_allclose(sync(x).numpy(), plain(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(sync.running_var.numpy(), plain.running_var.numpy(), rtol=1e-6)


def test_before_init_process_group_it_is_batchnorm():
    assert not dist.is_initialized()
    x = dt.tensor(np.random.default_rng(2).standard_normal((6, 2)))
    plain, sync = nn.BatchNorm1d(2), dist.SyncBatchNorm(2)
    np.testing.assert_array_equal(sync(x).numpy(), plain(x).numpy())
    np.testing.assert_array_equal(sync.running_var.numpy(), plain.running_var.numpy())


def test_conversion_keeps_parameters_buffers_settings_and_mode():
    inner = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, eps=1e-3, momentum=None))
    net = nn.Sequential(inner, nn.Flatten(), nn.BatchNorm1d(8, affine=False).eval())
    keys = list(net.state_dict())
    params = [id(p) for p in net.parameters()]
    buffers = [id(b) for b in net.buffers()]
    converted = dist.SyncBatchNorm.convert_sync_batchnorm(net)
    assert converted is net
    assert [type(m).__name__ for m in net.modules()].count("SyncBatchNorm") == 2
    assert not any(type(m).__name__.startswith("BatchNorm") for m in net.modules())
    assert [id(p) for p in net.parameters()] == params
    assert [id(b) for b in net.buffers()] == buffers
    assert (inner[1].eps, inner[1].momentum, inner[1].training) == (1e-3, None, True)
    assert (net[2].affine, net[2].weight, net[2].training) == (False, None, False)
    assert list(net.state_dict()) == keys
    alone = dist.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3))
    assert isinstance(alone, dist.SyncBatchNorm)


def test_a_single_value_per_channel_is_refused_before_the_statistics_change(world_of_one):
    bn = dist.SyncBatchNorm(2)
    with pytest.raises(ValueError, match="more than one value per channel"):
        bn(dt.ones(1, 2))
    assert bn.running_mean.tolist() == [0.0, 0.0] and int(bn.num_batches_tracked.item()) == 0
