"""dltutor.diagnose: every cause of "why is my parameter not updating?" planted on purpose,
the summary and tie reports on tied nets, and the lr derivation of explain_lr.

Where a report claims that a parameter will or will not move, the test also takes an optimizer
step and checks the claim against the parameter's values.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import dltutor as dt
from dltutor import diagnose as D
from dltutor import nn, optim
from dltutor.optim import lr_scheduler


# --- helpers -----------------------------------------------------------------------------------
def make_net(act=None):
    dt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), act or nn.Tanh(), nn.Linear(4, 2))


def data():
    dt.manual_seed(1)
    return dt.randn(5, 3)


def moved(param, step):
    before = param.numpy().copy()
    step()
    return not np.array_equal(before, param.numpy())


def row(check, name):
    return next(r for r in check.rows if r["check"] == name)


def assert_aligned(report):
    """Every line of the table part starts each column at the header's column start."""
    lines = repr(report).splitlines()
    headers = report._headers()
    head = next(i for i, line in enumerate(lines) if line.split() == headers)
    starts = [m.start() for m in re.finditer(r"\S+", lines[head])]
    assert len(starts) == len(headers)
    cells = report._cells()
    assert lines[head + 1].split() == ["-" * len(h) for h in headers]
    assert [m.start() for m in re.finditer(r"\S+", lines[head + 1])] == starts
    for line, row_cells in zip(lines[head + 2:], cells):
        for start, cell in zip(starts, row_cells):
            assert line[start:start + len(cell)] == cell, (line, cell)
            assert start == starts[0] or line[start - 2:start] == "  "
    assert len(lines) >= head + 2 + len(cells)


# --- why_not_updating: one planted cause per test ----------------------------------------------
def test_healthy_parameter_should_update():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    loss = net(data()).sum()
    check = D.why_not_updating(net, opt, "0.weight", loss=loss)
    loss.backward()
    check_after = D.why_not_updating(net, opt, "0.weight")
    assert check.cause is None and check_after.cause is None
    assert check_after.verdict.startswith("should update")
    assert "in the optimizer" in check_after.verdict and check_after.will_move is True
    assert row(check, "reached from the loss?")["answer"] == "yes"
    assert [r["status"] for r in check_after.rows][:3] == ["ok", "ok", "ok"]
    assert moved(net[0].weight, opt.step)


def test_not_in_optimizer():
    net = make_net()
    opt = optim.SGD(net[2].named_parameters(prefix="2"), lr=0.1)
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "not_in_optimizer" and check.will_move is False
    assert check.verdict.startswith("not updating because: it is not in the optimizer")
    assert check.rows[0]["status"] == "problem"
    assert not moved(net[0].weight, opt.step)


def test_not_in_optimizer_names_a_replaced_object():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net[0].weight = nn.Parameter(dt.zeros(4, 3))       # replaced after building the optimizer
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "not_in_optimizer"
    assert "ANOTHER object named '0.weight'" in check.rows[0]["answer"]


def test_requires_grad_false():
    net = make_net()
    net[0].requires_grad_(False)
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "requires_grad_false"
    assert check.verdict == "not updating because: requires_grad is False (frozen)"
    assert not moved(net[0].weight, opt.step)


def test_grad_none_when_not_used_in_the_loss():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net[0](data()).sum().backward()                    # layer 2 is never used
    check = D.why_not_updating(net, opt, "2.weight")
    assert check.cause == "no_grad"
    assert row(check, "gradient")["answer"].startswith("None")
    assert not moved(net[2].weight, opt.step)


def test_zero_grad_dead_relu():
    net = make_net(nn.ReLU())
    net[0].bias.set_value(np.full(4, -100.0))          # every unit dead
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "zero_grad" and check.will_move is False
    assert row(check, "gradient")["answer"].startswith("all zeros")
    assert not moved(net[0].weight, opt.step)


def test_zero_grad_adamw_decay_excluded_first_step():
    net = make_net()
    opt = optim.AdamW(net.named_parameters(), lr=0.1, weight_decay=0.5,
                      apply_decay_param_fun=lambda name: not name.startswith("0."))
    (net(data()) * 0).sum().backward()                 # multiplied by zero
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "zero_grad"
    assert "apply_decay_param_fun" in row(check, "weight decay with a zero gradient")["answer"]
    assert not moved(net[0].weight, opt.step)


def test_detach_upstream_is_not_reached():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    h = net[1](net[0](data())).detach()                # cut here: layer 0 is upstream
    loss = net[2](h).sum()
    check = D.why_not_updating(net, opt, "0.weight", loss=loss)
    assert check.cause == "not_reached"
    assert row(check, "reached from the loss?")["answer"].startswith("no")
    assert D.why_not_updating(net, opt, "2.weight", loss=loss).cause is None
    loss.backward(retain_graph=True)
    assert D.why_not_updating(net, opt, "0.weight", loss=loss).cause == "not_reached"
    assert not moved(net[0].weight, opt.step)


def test_graph_freed_by_backward_cannot_tell():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    loss = net(data()).sum()
    loss.backward()
    check = D.why_not_updating(net, opt, "0.weight", loss=loss)
    r = row(check, "reached from the loss?")
    assert r["status"] == "unknown"
    assert r["answer"] == ("cannot tell: graph freed by backward; pass the loss before calling "
                           "backward, or use retain_graph=True")
    assert check.cause is None


def test_group_lr_zero():
    net = make_net()
    opt = optim.SGD([{"params": net[0].named_parameters(prefix="0"), "lr": 0.0},
                     {"params": net[2].named_parameters(prefix="2")}], lr=0.1)
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "0.bias")
    assert check.cause == "lr_zero"
    assert "group's lr is 0" in check.verdict
    assert not moved(net[0].bias, opt.step)


def test_lr_mult_zero():
    net = make_net()
    net[2].weight.lr_mult = 0.0
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "2.weight")
    assert check.cause == "lr_mult_zero"
    assert "lr_mult is 0" in check.verdict
    assert not moved(net[2].weight, opt.step)


def test_clipped_to_near_zero_by_global_norm():
    net = make_net()
    clip = optim.ClipGradByGlobalNorm(1e-6)
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=clip)
    net(data()).sum().backward()
    before = net[0].weight.numpy().copy()
    opt.step()
    assert clip.last_scale < D.CLIPPED_SCALE
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "clipped_to_zero"
    assert "last step's scale" in row(check, "clipping")["answer"]
    assert np.abs(net[0].weight.numpy() - before).max() < 1e-6


def test_clipped_to_near_zero_by_value_before_any_step():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=optim.ClipGradByValue(1e-9))
    net(data()).sum().backward()
    assert D.why_not_updating(net, opt, "0.weight").cause == "clipped_to_zero"


def test_need_clip_false_is_not_clipped():
    net = make_net()
    net[0].weight.need_clip = False
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=optim.ClipGradByGlobalNorm(1e-6))
    net(data()).sum().backward()
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause is None and "need_clip=False" in row(check, "clipping")["answer"]


def test_momentum_moves_a_zero_grad_parameter():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    net(data()).sum().backward()
    opt.step()
    opt.zero_grad()
    (net(data()) * 0).sum().backward()                 # gradient is zero, not None
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "moves_by_momentum" and check.will_move is True
    answer = row(check, "momentum with a zero gradient")["answer"]
    assert answer.startswith("will still move: momentum buffer non-zero")
    assert row(check, "gradient")["status"] == "warning"
    assert moved(net[0].weight, opt.step)


def test_adam_exp_avg_moves_a_zero_grad_parameter():
    net = make_net()
    opt = optim.Adam(net.named_parameters(), lr=0.1)
    net(data()).sum().backward()
    opt.step()
    opt.zero_grad()
    (net(data()) * 0).sum().backward()
    check = D.why_not_updating(net, opt, "2.bias")
    assert check.cause == "moves_by_momentum" and "exp_avg" in check.verdict
    assert moved(net[2].bias, opt.step)


def test_weight_decay_moves_a_zero_grad_parameter():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, weight_decay=0.1)
    (net(data()) * 0).sum().backward()
    check = D.why_not_updating(net, opt, "0.weight")
    assert check.cause == "moves_by_weight_decay" and check.will_move is True
    answer = row(check, "weight decay with a zero gradient")["answer"]
    assert answer.startswith("will still move: weight decay applies")
    assert moved(net[0].weight, opt.step)


def test_batchnorm_stats_frozen_by_eval():
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net.eval()
    check = D.why_not_updating(net, opt, "1.running_mean")
    assert check.cause == "bn_stats_frozen" and "eval mode" in check.verdict
    assert row(check, "a parameter?")["answer"].startswith("no: a buffer")
    assert not moved(net[1].running_mean, lambda: net(data()))


def test_batchnorm_stats_frozen_by_use_global_stats():
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2, use_global_stats=True))
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    check = D.why_not_updating(net, opt, "1.running_var")
    assert check.cause == "bn_stats_frozen" and "use_global_stats=True" in check.verdict
    assert not moved(net[1].running_var, lambda: net(data()))


def test_batchnorm_stats_update_in_training():
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    check = D.why_not_updating(net, None, "1.running_mean")
    assert check.cause is None and check.verdict.startswith("should update")
    assert moved(net[1].running_mean, lambda: net(data()))


def test_plain_buffer_is_not_a_parameter():
    net = make_net()
    net[0].register_buffer("counter", dt.zeros(1))
    check = D.why_not_updating(net, None, "0.counter")
    assert check.cause == "not_a_parameter"


def test_unknown_name_lists_close_matches():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    with pytest.raises(KeyError) as info:
        D.why_not_updating(net, opt, "0.weigth")
    assert "Did you mean: '0.weight'" in str(info.value)


def test_tied_alias_is_found_in_the_optimizer():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.Tanh(), shared)
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net(dt.ones(1, 2)).sum().backward()
    check = D.why_not_updating(net, opt, "2.weight")
    assert check.cause is None
    assert check.rows[0]["answer"] == "yes: group 0 as '0.weight'"


# --- summary -------------------------------------------------------------------------------------
def tied_net():
    shared = nn.Linear(3, 3)
    return nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(3, 1))


def test_summary_tied_net_rows_and_totals():
    net = tied_net()
    net[3].requires_grad_(False)
    s = D.summary(net)
    assert [r["name"] for r in s.rows] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                           "3.weight", "3.bias"]
    assert s.rows[0]["tied_to"] == ["2.weight"] and s.rows[3]["tied_to"] == ["0.bias"]
    assert s.rows[4]["tied_to"] == []
    assert s.rows[0]["shape"] == (3, 3) and s.rows[0]["count"] == 9
    assert s.rows[0]["dtype"] == "float32" and s.rows[0]["regularizer"] is None
    assert s.totals == {"tensors": 4, "names": 6, "total": 16, "trainable": 12, "frozen": 4}
    assert "group" not in s.rows[0]
    assert "total: 16 parameters in 4 tensor(s)" in repr(s)
    assert s.to_dict()["totals"]["total"] == 16
    assert_aligned(s)


def test_summary_with_optimizer_groups_lr_mult_and_scheduler():
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1), nn.Linear(1, 1))
    net[2].weight.lr_mult = 2.0
    net[2].bias.regularizer = optim.L1Decay(0.01)
    opt = optim.SGD([{"params": net[0].named_parameters(prefix="0")},
                     {"params": net[2].named_parameters(prefix="2"), "lr": 0.1}], lr=0.5)
    sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    sched.step()
    s = D.summary(net, opt)
    by = {r["name"]: r for r in s.rows}
    assert by["0.weight"]["group"] == 0 and by["0.weight"]["effective_lr"] == pytest.approx(0.05)
    assert by["2.weight"]["group"] == 1 and by["2.weight"]["effective_lr"] == pytest.approx(0.02)
    assert by["2.bias"]["regularizer"] == "L1Decay(0.01)"
    assert by["3.weight"]["group"] is None and by["3.weight"]["effective_lr"] is None
    assert s.totals["not_in_optimizer"] == 2
    text = repr(s)
    assert "not in the optimizer (never updated): 2" in text
    assert re.search(r"3\.weight .* -\s+-\s+-$", text, re.M)
    assert_aligned(s)


def test_summary_multi_optimizer_uses_global_group_indices():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    multi = optim.MultiOptimizer(
        optim.SGD([{"params": net[0].weight}, {"params": net[0].bias, "lr": 0.2}], lr=0.1),
        optim.Adam(net[1].parameters(), lr=0.01))
    s = D.summary(net, multi)
    assert [r["group"] for r in s.rows] == [0, 1, 2, 2]
    assert [r["optimizer"] for r in s.rows] == ["0 SGD", "0 SGD", "1 Adam", "1 Adam"]
    assert multi.param_groups[s.rows[1]["group"]]["lr"] == s.rows[1]["effective_lr"] == 0.2
    assert_aligned(s)


# --- explain_lr ----------------------------------------------------------------------------------
def test_explain_lr_plain_sgd():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    e = D.explain_lr(opt, "0.weight")
    assert (e.group, e.group_lr, e.lr_mult, e.effective_lr) == (0, 0.1, 1.0, 0.1)
    assert e.decay == "none" and e.decay_kinds == [] and e.clipped is False
    assert e.scheduler_factor is None and e.status == "trainable" and e.frozen is False
    assert repr(e).splitlines() == [
        "0.weight",
        "  group 0 lr      0.1",
        "  x lr_mult       1.0",
        "  = effective lr  0.1",
        "  decay           none",
        "  clipping        none (SGD has no grad_clip)",
        "  status          trainable"]
    assert D.explain_lr(opt, net[0].weight).name == "0.weight"   # the Parameter itself works


def test_explain_lr_param_regularizer_replaces_group_decay():
    net = make_net()
    net[2].weight.regularizer = optim.L2Decay(1e-4)
    opt = optim.SGD(net.named_parameters(), lr=0.1, weight_decay=0.01)
    e = D.explain_lr(opt, "2.weight")
    assert e.decay_kinds == ["param_regularizer"] and e.decay_coeff == 1e-4
    assert e.decay == ("L2Decay(0.0001) from the parameter (replaces group 0's weight_decay "
                       "0.01)")
    other = D.explain_lr(opt, "2.bias")
    assert other.decay_kinds == ["coupled_l2"] and other.decay_coeff == 0.01


def test_explain_lr_group_regularizer_object():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, weight_decay=optim.L1Decay(0.5))
    e = D.explain_lr(opt, "0.bias")
    assert e.decay_kinds == ["group_regularizer"] and "L1Decay(0.5)" in e.decay


def test_explain_lr_adamw_decoupled_and_excluded():
    net = make_net()
    opt = optim.AdamW(net.named_parameters(), lr=0.01, weight_decay=0.05,
                      apply_decay_param_fun=lambda name: not name.endswith("bias"))
    w, b = D.explain_lr(opt, "0.weight"), D.explain_lr(opt, "0.bias")
    assert w.decay_kinds == ["decoupled"] and w.decay_coeff == 0.05
    assert "decoupled weight decay 0.05" in w.decay
    assert b.decay_kinds == ["decoupled_excluded"]
    assert "apply_decay_param_fun('0.bias') is False" in b.decay


def test_explain_lr_need_clip_false():
    net = make_net()
    net[0].bias.need_clip = False
    opt = optim.SGD(net.named_parameters(), lr=0.1, grad_clip=optim.ClipGradByNorm(1.0))
    assert D.explain_lr(opt, "0.bias").clipped is False
    assert D.explain_lr(opt, "0.bias").to_dict()["clip"] is None
    assert "excluded: need_clip=False" in repr(D.explain_lr(opt, "0.bias"))
    weight = D.explain_lr(opt, "0.weight")
    assert weight.clipped is True and weight.clip == "ClipGradByNorm(clip_norm=1)"


def test_explain_lr_scheduler_factor_matches_the_issue_example():
    net = make_net()
    net[2].weight.lr_mult = 2.0
    net[2].weight.regularizer = optim.L2Decay(1e-4)
    opt = optim.SGD([{"params": net[0].named_parameters(prefix="0")},
                     {"params": net[2].named_parameters(prefix="2"), "lr": 0.1}],
                    lr=0.5, weight_decay=0.01, grad_clip=optim.ClipGradByGlobalNorm(1.0))
    sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    sched.step()
    e = D.explain_lr(opt, "2.weight")
    assert e.initial_lr == 0.1 and e.scheduler_factor == pytest.approx(0.1)
    assert e.effective_lr == pytest.approx(0.02)
    lines = repr(e).splitlines()
    assert lines[:4] == ["2.weight",
                         "  group 1 lr      0.01  (initial 0.1 x scheduler factor 0.1)",
                         "  x lr_mult       2.0",
                         "  = effective lr  0.02"]
    assert lines[5] == "  clipping        ClipGradByGlobalNorm(clip_norm=1) (need_clip=True)"
    for line in lines[1:]:                             # every value starts in column 18
        assert line[16:18] == "  " and line[18] != " ", line


def test_explain_lr_frozen_status():
    net = make_net()
    net[0].weight.requires_grad_(False)
    net[0].bias.lr_mult = 0.0
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    assert D.explain_lr(opt, "0.weight").status.startswith("frozen: requires_grad=False")
    assert D.explain_lr(opt, "0.bias").status == "frozen: lr_mult=0"
    opt.param_groups[0]["lr"] = 0.0
    assert "group 0 lr is 0" in D.explain_lr(opt, "2.bias").status


def test_explain_lr_unknown_name():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    with pytest.raises(KeyError) as info:
        D.explain_lr(opt, "2.wieght")
    message = str(info.value)
    assert "Did you mean: '2.weight'" in message
    assert "Its names: '0.weight', '0.bias', '2.weight', '2.bias'" in message


def test_explain_lr_unnamed_and_multi():
    net = make_net()
    opt = optim.SGD(net.parameters(), lr=0.1)
    assert D.explain_lr(opt, "#2").effective_lr == 0.1
    with pytest.raises(KeyError, match="named_parameters"):
        D.explain_lr(opt, "0.weight")
    multi = optim.MultiOptimizer(optim.SGD(net[0].parameters(), lr=0.1),
                                 optim.Adam(net[2].parameters(), lr=0.01))
    with pytest.raises(KeyError, match="opt0/#0"):
        D.explain_lr(multi, "#0")
    e = D.explain_lr(multi, "opt1/#0")
    assert (e.group, e.optimizer, e.effective_lr) == (1, "Adam", 0.01)


# --- ties and printing -----------------------------------------------------------------------
def test_ties_groups():
    t = D.ties(tied_net())
    assert t.groups == [["0.weight", "2.weight"], ["0.bias", "2.bias"]]
    assert len(t) == 2 and t.rows[0]["count"] == 9
    assert_aligned(t)
    assert D.ties(make_net()).groups == []
    assert "no tied parameters" in repr(D.ties(make_net()))


def test_html_has_a_table_and_escapes_names():
    layer = nn.Linear(2, 2)
    net = nn.Sequential()
    net.add_module("<b>&", layer)
    net.add_module("again", layer)
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    net(dt.ones(1, 2)).sum().backward()
    reports = [D.summary(net, opt), D.ties(net), D.explain_lr(opt, "<b>&.weight"),
               D.why_not_updating(net, opt, "again.bias")]
    for report in reports:
        page = report._repr_html_()
        assert "<table>" in page and "</table>" in page
        assert "<b>&." not in page and "again.<" not in page
        assert "&lt;b&gt;&amp;" in page


def test_html_draws_no_empty_code_box_for_an_empty_cell():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1)
    explanation = D.explain_lr(opt, "0.weight")
    assert any(not row["note"] for row in explanation.rows)       # there are empty cells
    page = explanation._repr_html_()
    assert "<code></code>" not in page and "<code>0.1</code>" in page


def test_reprs_are_aligned():
    net = make_net()
    opt = optim.SGD(net.named_parameters(), lr=0.1, momentum=0.9)
    net(data()).sum().backward()
    assert_aligned(D.summary(net, opt))
    check = D.why_not_updating(net, opt, "0.bias")
    assert_aligned(check)
    assert repr(check).splitlines()[-1] == "verdict: " + check.verdict
    assert check.to_dict()["cause"] is None
