"""Are the replicas one model? check_replicas, and the diagnostics of a model trained
data-parallel, in 2 real processes (mpiexec), plus the same diagnostics in one process.

``replica_program.py`` runs each scenario in both processes and writes what each saw: both
must give the same answer (a diagnose call with check_replicas=True is a collective).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import dltutor as dt
import dltutor.distributed as dist
from dltutor import diagnose, i18n, nn, optim

from .mpi_run import run_ranks

PROGRAM = Path(__file__).parent / "replica_program.py"


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What process 0 and process 1 saw (the processes are started and ended here)."""
    return run_ranks(PROGRAM, tmp_path_factory.mktemp("replicas"))


def test_both_processes_give_the_same_answers(ranks):
    for r in ranks:    # the one thing that differs: a gradient that was never averaged
        del r["unfrozen"]["rows"]["gradient"], r["unfrozen"]["summary_text"]
    for scenario in ("replicas", "unfrozen", "edited", "skipped", "stops"):
        assert ranks[0][scenario] == ranks[1][scenario], scenario


def test_replicas_are_equal_after_ddp_steps(ranks):
    after = ranks[0]["replicas"]["after_steps"]
    assert after == {"equal": True, "compared": 4, "world_size": 2, "rows": []}


def test_a_parameter_changed_by_hand_on_rank_1_is_named(ranks):
    seen = ranks[0]["replicas"]
    assert seen["edited"]["rows"] == [{"name": "module.2.weight", "ranks": [1],
                                       "max_abs_diff": [0.5]}]
    assert "module.2.weight: rank 1 (largest |difference| 0.5)" in seen["edited_text"]
    assert "1 of 4 tensors differ" in seen["edited_text"]
    assert "<code>module.2.weight: rank 1" in seen["edited_html"]
    assert seen["buffer"]["rows"] == [{"name": "running_mean", "ranks": [1],
                                       "max_abs_diff": [1.0]}]


def test_models_that_are_not_replicas_are_refused_in_every_process(ranks):
    for r in ranks:
        assert "ranks [1] has other tensors" in r["replicas"]["refused"]


def test_a_parameter_unfrozen_after_wrapping_is_outside_the_reducer_and_drifts(ranks):
    seen = ranks[0]["unfrozen"]
    assert seen["cause"] == "outside_reducer" and seen["will_move"] is True
    assert seen["verdict"].startswith("updates, but differently in each process")
    assert seen["rows"]["in_reducer"][0] == "problem"
    assert seen["rows"]["replicas"][0] == "problem"          # and it did drift
    assert "module.0.weight: rank 1" in seen["rows"]["replicas"][1]
    assert seen["inner_cause"] is None                        # layer 2 is in the reducer
    assert seen["inner_rows"]["in_reducer"] == seen["inner_rows"]["replicas"] == "ok"
    assert seen["in_reducer"] == [False, False, True, True]
    lines = seen["summary_lines"]
    assert "2 of 4 parameter names in the reducer" in lines[0]
    assert lines[1].endswith("module.0.weight, module.0.bias")
    assert [line.split(":")[0].strip() for line in lines[3:]] == ["module.0.weight",
                                                                  "module.0.bias"]


def test_a_parameter_that_differs_across_replicas_is_named_only_when_asked(ranks):
    cause, verdict = ranks[0]["edited"]["edited"]
    assert cause == "differs_across_replicas"
    assert "module.0.bias: rank 1 (largest |difference| 0.25)" in verdict
    assert ranks[0]["edited"]["untouched"] is None
    not_asked = ranks[0]["edited"]["not_asked"]
    assert not_asked["replicas"] == "n/a" and not_asked["in_reducer"] == "ok"


def test_a_parameter_the_forward_did_not_reach(ranks):
    skipped, stops = ranks[0]["skipped"], ranks[0]["stops"]
    assert skipped["before"]["ddp_reached"] == stops["before"]["ddp_reached"] == "ok"
    assert skipped["cause"] == "unreached_skipped" and skipped["used_cause"] is None
    assert "find_unused_parameters=True" in skipped["verdict"]
    assert stops["cause"] == "unreached_stops" and "next forward stops" in stops["verdict"]
    assert stops["used_cause"] == "not_averaged"        # its gradient was not averaged either
    assert skipped["summary_lines"][1].endswith("module.unused.weight, module.unused.bias")
    assert "the next forward stops" in stops["summary_lines"][1]


# ------------------------------------------------------------------------------------------------
# In this one process (a world of one)
# ------------------------------------------------------------------------------------------------
@pytest.fixture()
def group():
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def test_a_model_not_trained_data_parallel_keeps_its_checklist(group):
    net = nn.Linear(2, 1)
    opt = optim.SGD(net.parameters(), lr=0.1)
    keys = [r["key"] for r in diagnose.why_not_updating(net, opt, "weight").rows]
    assert "in_reducer" not in keys and "replicas" not in keys
    assert diagnose.summary(net).to_dict()["data_parallel"] == []
    asked = diagnose.why_not_updating(net, opt, "weight", check_replicas=True)
    assert asked.rows[-1]["key"] == "replicas" and asked.rows[-1]["status"] == "ok"


def test_the_module_inside_a_ddp_is_found_through_its_parameters(group):
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    net[0].requires_grad_(False)
    ddp = dist.DistributedDataParallel(net)
    net[0].requires_grad_(True)
    ddp(dt.ones(1, 2)).sum().backward()
    check = diagnose.why_not_updating(net, None, "0.bias")
    assert check.cause == "outside_reducer"
    assert [row["in_reducer"] for row in diagnose.summary(net).rows] == [False, False, True,
                                                                         True]


def test_the_reports_speak_chinese(group):
    ddp = dist.DistributedDataParallel(nn.Linear(2, 1))
    ddp(dt.ones(1, 2)).sum().backward()
    with i18n.use_language("zh"):
        check = diagnose.why_not_updating(ddp, None, "module.bias", check_replicas=True)
        report = repr(dist.check_replicas(ddp))
    assert "在 DDP 的 reducer 里" in repr(check) and "字节完全相同" in repr(check)
    assert report.startswith("副本：")


def test_check_replicas_needs_a_module_and_a_group():
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.check_replicas(nn.Linear(2, 1))
    dist.init_process_group("mpi")
    try:
        with pytest.raises(TypeError, match="nn.Module"):
            dist.check_replicas({"weight": dt.ones(2)})
    finally:
        dist.destroy_process_group()
