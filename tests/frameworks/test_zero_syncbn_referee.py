"""The referee of dltutor.distributed's ZeroRedundancyOptimizer and SyncBatchNorm.

ZeroRedundancyOptimizer: ``zero_torch_program.py`` (4 processes started with
``torch.multiprocessing.spawn``, gloo, groups of 1, 2 and 4 of them) and ``zero_kit_program.py``
(``mpiexec -n 2``) share out the same parameters and take the same steps on the same weights.
PyTorch's partition is read from its own object (``_param_to_rank``), never imitated here.

SyncBatchNorm: what PyTorch's does on the CPU (this environment's build), in this process
(no process group) and in the program (groups of 1 and 2 processes), held against the kit's.
"""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn

from claims import claim
from test_distributed_referee import FLOAT32, HERE, MPIEXEC, run_bounded, write_inputs

# Groups of parameter shapes. "ties" has equal sizes (the earlier first, to the lowest rank);
# "groups" two parameter groups (the counts carry from the first to the second); "few" fewer
# parameters than 4 processes (two processes own none).
CASES = {"mlp": [[[8, 4], [8], [2, 8], [2]]],
         "ties": [[[3], [5], [5], [1], [8], [2], [2]]],
         "groups": [[[10], [1], [4]], [[7], [7], [3], [2]]],
         "few": [[[2], [3]]]}
SIZES = (1, 2, 4)


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    """``{"torch": [rank 0's, rank 1's], "kit": [...]}``: what each process of each side saw."""
    out = tmp_path_factory.mktemp("zero")
    inputs, cases = out / "inputs.npz", out / "cases.json"
    write_inputs(inputs)
    cases.write_text(json.dumps(CASES))
    run_bounded([sys.executable, str(HERE / "zero_torch_program.py"), str(inputs), str(cases),
                 str(out)], out)
    assert MPIEXEC.exists(), f"no {MPIEXEC}: reinstall the frameworks environment (make test)"
    run_bounded([str(MPIEXEC), "-n", "2", sys.executable, str(HERE / "zero_kit_program.py"),
                 str(inputs), str(cases), str(out)], out)
    return {side: [json.loads((out / f"{side}{rank}.json").read_text()) for rank in (0, 1)]
            for side in ("torch", "kit")}


def numels(shapes):
    return [[int(np.prod(shape)) for shape in group] for group in shapes]


@claim("torch-zero-partition")
def test_the_kit_shares_the_parameters_out_as_pytorch_does(seen):
    torch_partitions = seen["torch"][0]["partitions"]
    for name, shapes in CASES.items():
        for size in SIZES:
            theirs = torch_partitions[name][str(size)]
            assert dist.zero.assign_ranks(numels(shapes), size) == theirs, (name, size)
        for rank in (0, 1):                 # the kit's object on 2 processes: the same owners
            assert seen["kit"][rank]["partitions"][name]["2"] == \
                torch_partitions[name]["2"], (name, rank)
    assert torch_partitions["ties"]["2"] == [[0, 1, 1, 1, 0, 1, 0]]   # 8;5,5;3;2,2;1
    assert torch_partitions["groups"]["2"] == [[0, 1, 1], [1, 0, 1, 1]]  # counts carry over
    assert torch_partitions["few"]["4"] == [[1, 0]]                  # 2 and 3 own nothing


def arrays(values):
    return [np.array(v, dtype=np.float64) for v in values]


def assert_close(ours, theirs, what):
    for i, (a, b) in enumerate(zip(arrays(ours), arrays(theirs), strict=True)):
        np.testing.assert_allclose(a, b, **FLOAT32, err_msg=f"{what}, tensor {i}")


@claim("torch-zero-same-steps")
def test_three_sharded_steps_end_on_pytorchs_weights(seen):
    for kind in ("sgd", "adam"):
        for side in ("torch", "kit"):
            ranks = [r[kind] for r in seen[side]]
            assert ranks[0]["weights"] == ranks[1]["weights"], f"{side} {kind}: replicas apart"
            assert_close(ranks[0]["weights"], ranks[0]["plain_weights"], f"{side} {kind}")
            held = [r["local_state_entries"] for r in ranks]   # each process: its share only
            assert sum(held) == 4 and 0 < min(held), (side, kind, held)
        assert_close(seen["kit"][0][kind]["weights"], seen["torch"][0][kind]["weights"],
                     f"{kind}: the kit's weights")


def tensors_in_order(state):
    """``{entry key: [each parameter's value, in the parameters' order]}`` of a state dict's
    tensors (PyTorch keys the parameters 0, 1, ..., the kit by their names)."""
    entries = list(state.values())
    return {key: [entry[key] for entry in entries] for key in entries[0]
            if isinstance(entries[0][key], list)}


@claim("torch-zero-consolidated-state-dict")
def test_the_consolidated_state_has_the_plain_optimizers_layout(seen):
    for kind, moments in (("sgd", {"momentum_buffer"}), ("adam", {"exp_avg", "exp_avg_sq"})):
        for side in ("torch", "kit"):
            rank0 = seen[side][0][kind]
            assert rank0["consolidated"] == rank0["plain"], f"{side} {kind}"   # keys and values
            assert "consolidated" not in seen[side][1][kind]
        theirs = tensors_in_order(seen["torch"][0][kind]["consolidated"]["state"])
        ours = tensors_in_order(seen["kit"][0][kind]["consolidated"]["state"])
        assert set(theirs) == set(ours) == moments, (theirs.keys(), ours.keys())
        for key in moments:
            assert_close(ours[key], theirs[key], f"{kind}: {key}")
    assert list(seen["torch"][0]["adam"]["consolidated"]["state"]) == ["0", "1", "2", "3"]


# -- SyncBatchNorm ----------------------------------------------------------------------------

def torch_model():
    """A BatchNorm1d and a BatchNorm2d (only converted, never run)."""
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                               torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2))


def kit_model():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(),
                         nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))


KEPT = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def converted(model, sync_class):
    """Convert ``model``; for each of its two BatchNorms: the new type, whether every
    parameter and buffer is the same object, and the train/eval mode."""
    model[4].eval()
    before = [model[i] for i in (1, 4)]
    model = sync_class.convert_sync_batchnorm(model)
    return [(type(model[i]).__name__, all(getattr(model[i], k) is getattr(old, k) for k in KEPT),
             model[i].training) for i, old in zip((1, 4), before)]


@claim("torch-syncbn-convert")
def test_convert_sync_batchnorm_swaps_the_layers_and_keeps_their_tensors():
    expected = [("SyncBatchNorm", True, True), ("SyncBatchNorm", True, False)]
    assert converted(torch_model(), torch.nn.SyncBatchNorm) == expected
    assert converted(kit_model(), dist.SyncBatchNorm) == expected


X = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)


def torch_forwards(layer):
    """Two training forwards, then one in evaluation, and the running statistics."""
    x = torch.from_numpy(X)
    outs = [layer(x), layer(2 * x + 1), layer.eval()(x)]
    return [o.detach().numpy() for o in outs] + [layer.running_mean.numpy(),
                                                 layer.running_var.numpy()]


def kit_forwards(layer):
    x = dt.tensor(X)
    outs = [layer(x), layer(2 * x + 1), layer.eval()(x)]
    return [o.detach().numpy() for o in outs] + [layer.running_mean.numpy(),
                                                 layer.running_var.numpy()]


@claim("torch-syncbn-batchnorm-without-group")
def test_without_a_process_group_or_in_evaluation_syncbatchnorm_is_batchnorm(seen):
    assert not torch.distributed.is_initialized() and not dist.is_initialized()
    theirs = torch_forwards(torch.nn.SyncBatchNorm(3))
    for a, b in zip(theirs, torch_forwards(torch.nn.BatchNorm1d(3)), strict=True):
        np.testing.assert_array_equal(a, b)
    for size in ("1", "2"):                       # in a group: evaluation takes no collective
        assert seen["torch"][0]["sync_bn"][size]["eval_same"], size
    ours = kit_forwards(dist.SyncBatchNorm(3))
    for a, b in zip(ours, kit_forwards(nn.BatchNorm1d(3)), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32)


@claim("torch-syncbn-refuses-cpu")
def test_pytorchs_syncbatchnorm_refuses_a_cpu_input_in_training_in_any_group(seen):
    """So on the CPU nothing of PyTorch's synced statistics can be run: the kit's are held to
    one BatchNorm given every process's batch (tests/distributed/test_sync_batchnorm.py)."""
    for size in ("1", "2"):                       # even a group of one process
        error = seen["torch"][0]["sync_bn"][size]["training_error"]
        assert error.startswith("SyncBatchNorm expected input tensor to be on GPU"), error
    assert seen["torch"][1]["sync_bn"]["2"]["training_error"].startswith("SyncBatchNorm expected")
