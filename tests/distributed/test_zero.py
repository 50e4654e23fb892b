"""ZeroRedundancyOptimizer in 1, 2 and 4 real processes (mpiexec), against a plain optimizer in
this one: the same weights bit for bit, the state shared out (measured), a checkpoint
consolidated with 2 processes that resumes bit for bit on 1 and on 4; then its refusals.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dltutor as dt
import dltutor.distributed as dist
from dltutor import nn, optim

sys.path.insert(0, str(Path(__file__).parent))
from mpi_run import run_ranks
import zero_program  # the program's own model, data and settings, for the lone process

WORLDS = (1, 2, 4)


def run_program(processes, out, checkpoint=None):
    extra = [str(checkpoint)] if checkpoint else []
    return run_ranks(zero_program.__file__, out, *extra, processes=processes)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """What each process saw, by world size. The 2-process run writes the checkpoint that the
    1- and 4-process runs resume from."""
    folders = {n: tmp_path_factory.mktemp(f"zero{n}") for n in WORLDS}
    seen = {2: run_program(2, folders[2])}
    checkpoint = folders[2] / "checkpoint.safetensors"
    for n in (1, 4):
        seen[n] = run_program(n, folders[n], checkpoint)
    seen["checkpoint"] = checkpoint
    return seen


def plain(kind, steps=zero_program.STEPS):
    """The plain optimizer in this one process: the model and the optimizer after ``steps``."""
    net = zero_program.model()
    rule, settings = zero_program.OPTIMIZERS[kind]
    opt = rule(net.named_parameters(), **settings)
    zero_program.train(net, opt, steps)
    return net, opt


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_the_weights_are_a_plain_optimizers_bit_for_bit(runs, world, kind):
    expected = zero_program.weights(plain(kind)[0])
    for r in runs[world]:
        assert r[kind]["weights"] == expected, f"process {r['rank']} of {world}"


def test_the_parameters_are_shared_out_by_pytorchs_rule(runs):
    sizes = [[int(p.data.size) for p in zero_program.model().parameters()]]
    names = [name for name, _ in zero_program.model().named_parameters()]
    for world in WORLDS:
        for r in runs[world]:
            assert list(r["sgd"]["owners"].values()) == dist.zero.assign_ranks(sizes, world)[0]
    # by hand: the four 36-value weights first, one each, then the 6s to the lightest in turn
    assert dict(zip(names, runs[4][0]["sgd"]["owners"].values())) == {
        "0.weight": 0, "2.weight": 1, "4.weight": 2, "6.weight": 3, "0.bias": 0, "2.bias": 1,
        "4.bias": 2, "6.bias": 3, "8.weight": 0, "8.bias": 1}


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_the_state_exists_once_and_each_processs_share_shrinks(runs, kind):
    whole = runs[1][0][kind]["plain_state_bytes"]
    assert whole == (175 if kind == "sgd" else 2 * 175) * 8       # float64 momentum / moments
    largest = {}
    for world in WORLDS:
        shares = [r[kind]["state_bytes"] for r in runs[world]]
        assert sum(shares) == whole, f"{world} processes hold {shares}"
        largest[world] = max(shares)
    assert largest[1] > largest[2] > largest[4]
    assert largest[4] <= whole / 4 * 1.1 and largest[2] <= whole / 2 * 1.1


def test_the_checkpoint_consolidated_on_process_0_is_the_plain_optimizers(runs):
    saved = dt.load(runs["checkpoint"])["optimizer"]
    expected = plain("adam")[1].state_dict()
    assert saved["param_groups"] == expected["param_groups"]
    assert (saved["step_count"], saved["skipped_steps"]) == (expected["step_count"], 0)
    assert list(saved["state"]) == list(expected["state"])
    for key, entry in expected["state"].items():
        assert sorted(saved["state"][key]) == sorted(entry)
        for name, value in entry.items():
            assert np.array_equal(np.asarray(saved["state"][key][name]), np.asarray(value)), \
                f"{key} {name}"


@pytest.mark.parametrize("world", [1, 4])
def test_a_checkpoint_from_2_processes_resumes_bit_for_bit_on_another_number(runs, world):
    expected = zero_program.weights(plain("adam", 2 * zero_program.STEPS)[0])
    for r in runs[world]:
        assert r["resumed"]["lr"] == 0.01, "the saved lr did not replace the one in code"
        assert r["resumed"]["weights"] == expected, f"process {r['rank']} of {world}"


@pytest.mark.parametrize("world", [1, 4])
def test_after_loading_each_process_keeps_only_its_share(runs, world):
    shares = [r["resumed"]["loaded_state_bytes"] for r in runs[world]]
    assert sum(shares) == 2 * 175 * 8 and max(shares) <= 2 * 175 * 8 / world * 1.1


@pytest.mark.parametrize("world", WORLDS)
def test_a_nan_in_one_processs_share_skips_the_step_in_every_process(runs, world):
    assert runs[world][0]["nan"]["owner"] == (0 if world == 1 else 1)
    for r in runs[world]:
        assert r["nan"] == {**r["nan"], "unchanged": True, "skipped": 1}


def test_state_dict_without_consolidating_there_says_what_to_call(runs):
    message = runs[2][1]["unconsolidated_error"]
    assert "process 1 holds only its share" in message
    assert "consolidate_state_dict(to=1)" in message


@pytest.mark.parametrize("world", WORLDS)
def test_with_ddp_it_takes_a_plain_optimizers_step(runs, world):
    assert all(r["ddp_same"] for r in runs[world])


# -- in this one process ----------------------------------------------------------------------
@pytest.fixture
def world_of_one():
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def one_layer():
    dt.manual_seed(0)
    return nn.Linear(3, 2)


def test_an_optimizer_made_already_is_refused_with_what_to_pass(world_of_one):
    layer = one_layer()
    with pytest.raises(TypeError, match="pass the class and its settings"):
        dist.ZeroRedundancyOptimizer(layer.parameters(), optim.SGD(layer.parameters(), lr=0.1))


def test_a_global_norm_clip_is_refused(world_of_one):
    with pytest.raises(ValueError, match="clip_grad_norm_"):
        dist.ZeroRedundancyOptimizer(one_layer().parameters(), optim.SGD, lr=0.1,
                                     grad_clip=optim.ClipGradByGlobalNorm(1.0))


def test_a_nonfinite_gradient_stops_or_skips_the_step_before_anything_changes(world_of_one):
    for mode in ("raise", "skip"):
        net = one_layer()
        before = zero_program.weights(net)
        opt = dist.ZeroRedundancyOptimizer(net.named_parameters(), optim.Adam, nonfinite=mode)
        net(dt.ones(2, 3)).sum().backward()
        net.bias.grad.data[0] = np.nan
        if mode == "raise":
            with pytest.raises(optim.NonFiniteGradientError, match="'bias'"):
                opt.step()
        else:
            opt.step()
            assert opt.optim.skipped_steps == 1
        assert zero_program.weights(net) == before and opt.optim.state == {}


def test_an_lr_written_into_param_groups_is_the_one_used(world_of_one):
    net = one_layer()
    opt = dist.ZeroRedundancyOptimizer(net.parameters(), optim.SGD, lr=0.1)
    opt.param_groups[0]["lr"] = 0.0                  # as a scheduler writes it
    before = zero_program.weights(net)
    net(dt.ones(2, 3)).sum().backward()
    opt.step()
    assert zero_program.weights(net) == before


def test_a_state_that_does_not_fit_changes_nothing(world_of_one):
    net = one_layer()
    opt = dist.ZeroRedundancyOptimizer(net.named_parameters(), optim.SGD, lr=0.1, momentum=0.9)
    net(dt.ones(2, 3)).sum().backward()
    opt.step()
    opt.consolidate_state_dict()
    saved = opt.state_dict()
    saved["state"]["weight"]["momentum_buffer"] = dt.zeros(5)
    momentum = opt.optim.state[net.weight]["momentum_buffer"].copy()
    with pytest.raises(optim.OptimizerStateError, match="shape"):
        opt.load_state_dict(saved)
    assert np.array_equal(opt.optim.state[net.weight]["momentum_buffer"], momentum)


def test_an_added_group_is_shared_out_and_stepped(world_of_one):
    first, second = one_layer(), one_layer()
    opt = dist.ZeroRedundancyOptimizer(first.parameters(), optim.SGD, lr=0.1)
    opt.add_param_group({"params": second.parameters(), "lr": 0.5})
    assert [g["lr"] for g in opt.optim.param_groups] == [0.1, 0.5]
    assert opt.rank_of(second.weight) == 0
    before = second.bias.data.copy()
    second(dt.ones(1, 3)).sum().backward()
    opt.step()
    np.testing.assert_allclose(second.bias.data, before - 0.5)
