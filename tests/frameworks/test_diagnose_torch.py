"""dltutor's diagnostics on real PyTorch models (dltutor/diagnose/adapters/torch_adapter.py).

Each cause why_not_updating can name is set up in PyTorch, and the verdict is checked twice:
against what PyTorch's own ``step()`` then does to the parameter (moves or not), and against
what the same setup written in dltutor says. summary's table for a PyTorch model is compared
with dltutor's, column by column, where PyTorch has the idea.
"""
from __future__ import annotations

import pytest
import torch

from dltutor import diagnose, nn, optim

from claims import claim
from diagnose_cases import X, dltutor_case



def torch_net() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))


def dltutor_net() -> nn.Sequential:
    """The same network in dltutor, with the PyTorch one's weights."""
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    net.load_state_dict({k: v.detach().numpy() for k, v in torch_net().state_dict().items()})
    return net


def moves(param: torch.Tensor, step) -> bool:
    """Whether running ``step()`` changes ``param`` (PyTorch's own answer)."""
    before = param.detach().clone()
    step()
    return not torch.equal(before, param.detach())


def case_loss(net: torch.nn.Sequential, x: torch.Tensor, cause: str) -> torch.Tensor:
    """The loss torch_case backpropagates for ``cause``: one that never uses layer 2
    (not_reached), one whose gradient is zero (zero_grad, and the moves_by_ causes, where only
    momentum or weight decay moves a weight), or the plain sum."""
    if cause == "not_reached":
        return net[0](x).sum()
    if cause in ("zero_grad", "moves_by_momentum", "moves_by_weight_decay"):
        return (net(x) * 0).sum()
    return net(x).sum()


def torch_case(cause: str):
    """(net, optimizer, name, loss) set up in PyTorch so that ``name`` suffers ``cause``;
    backward has run except for not_reached, whose loss is kept for the check."""
    net = torch_net()
    x = torch.from_numpy(X)
    name, params, kwargs = "0.weight", list(net.named_parameters()), {}
    if cause == "requires_grad_false":
        net[0].weight.requires_grad_(False)
    elif cause == "not_in_optimizer":
        params = [(n, p) for n, p in params if n != "0.weight"]
    elif cause == "lr_zero":
        params = [{"params": [p for n, p in params if n == "0.weight"], "lr": 0.0},
                  {"params": [p for n, p in params if n != "0.weight"]}]
    elif cause == "not_reached":
        name = "2.weight"
    elif cause in ("moves_by_momentum", "moves_by_weight_decay"):
        kwargs = {"momentum": 0.9} if cause == "moves_by_momentum" else {"weight_decay": 0.5}
    opt = torch.optim.SGD(params, lr=0.1, **kwargs)
    if cause == "moves_by_momentum":          # one real step fills the momentum buffer
        net(x).sum().backward()
        opt.step()
        opt.zero_grad()
    loss = case_loss(net, x, cause)
    kept = loss if cause == "not_reached" else None
    if cause != "not_reached":
        loss.backward()
    return net, opt, name, kept


CAUSES = ["requires_grad_false", "not_in_optimizer", "lr_zero", "not_reached", "zero_grad",
          "moves_by_momentum", "moves_by_weight_decay"]
MOVES = {"moves_by_momentum": True, "moves_by_weight_decay": True}


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("cause", CAUSES)
def test_each_verdict_on_a_pytorch_model_is_what_pytorch_then_does(cause):
    net, opt, name, loss = torch_case(cause)
    check = diagnose.why_not_updating(net, opt, name, loss)
    assert check.cause == cause, check
    if cause == "not_reached":
        loss.backward()
    param = dict(net.named_parameters())[name]
    assert moves(param, opt.step) is MOVES.get(cause, False)
    assert check.will_move is MOVES.get(cause, False)


@claim("torch-diagnose-verdicts")
@pytest.mark.parametrize("cause", CAUSES)
def test_the_pytorch_verdict_is_dltutors_for_the_same_setup(cause):
    ours = diagnose.why_not_updating(*dltutor_case(cause))
    theirs = diagnose.why_not_updating(*torch_case(cause))
    assert theirs.cause == ours.cause
    checks_ours = {r["key"]: r["status"] for r in ours.rows}
    checks_theirs = {r["key"]: r["status"] for r in theirs.rows}
    # the clipping row is the one PyTorch cannot answer (its optimizers hold no clip)
    checks_ours.pop("clipping"), checks_theirs.pop("clipping")
    assert checks_theirs == checks_ours


@claim("torch-diagnose-verdicts")
def test_summary_of_a_pytorch_model_matches_dltutors_where_pytorch_has_the_idea():
    tnet, dnet = torch_net(), dltutor_net()
    tnet[2].bias.requires_grad_(False)
    dnet[2].bias.requires_grad_(False)
    theirs = diagnose.summary(tnet, torch.optim.SGD(tnet.named_parameters(), lr=0.1))
    ours = diagnose.summary(dnet, optim.SGD(dnet.named_parameters(), lr=0.1))
    shared = ["name", "shape", "count", "dtype", "requires_grad", "group", "effective_lr",
              "tied_to"]
    assert [{k: r[k] for k in shared} for r in theirs.rows] == \
           [{k: r[k] for k in shared} for r in ours.rows]
    assert theirs.totals == ours.totals
    # what PyTorch has no idea of is left blank, not guessed: its parameters and groups have
    # no lr multiplier, regularizer or clip flag
    assert not any(hasattr(tnet[0].weight, a) for a in ("lr_mult", "regularizer", "need_clip"))
    group = torch.optim.SGD(tnet.parameters(), lr=0.1).param_groups[0]
    assert not {"lr_mult", "regularizer", "grad_clip"} & set(group)
    assert {(r["lr_mult"], r["regularizer"], r["need_clip"]) for r in theirs.rows} == \
           {(None, None, None)}


@claim("torch-diagnose-verdicts")
def test_a_tied_pytorch_layer_is_one_parameter_under_two_names():
    shared = torch.nn.Linear(3, 3)
    net = torch.nn.Sequential(shared, torch.nn.ReLU(), shared)
    assert diagnose.ties(net).groups == [["0.weight", "2.weight"], ["0.bias", "2.bias"]]
    # PyTorch refuses the same parameter in two groups, so "given twice" cannot happen there
    with pytest.raises(ValueError, match="more than one parameter group"):
        torch.optim.SGD([{"params": net[0].parameters()}, {"params": net[2].parameters()}],
                        lr=0.1)
    summary = diagnose.summary(net, torch.optim.SGD(net.parameters(), lr=0.1))
    assert summary.totals["tensors"] == 2 and summary.totals["names"] == 4


@claim("torch-no-clip-in-optimizer")
def test_pytorch_optimizers_hold_no_clip_so_the_report_says_it_cannot_see_one():
    import inspect
    assert "grad_clip" not in inspect.signature(torch.optim.SGD).parameters
    net = torch_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net(torch.from_numpy(X)).sum().backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-9)      # clipped in the loop
    row = next(r for r in diagnose.why_not_updating(net, opt, "0.weight").rows
               if r["key"] == "clipping")
    assert row["status"] == "n/a" and "clip_grad_norm_" in row["answer"]


@claim("torch-diagnose-verdicts")
def test_explain_lr_reads_pytorchs_scheduler_and_decay():
    net = torch_net()
    opt = torch.optim.AdamW([{"params": net[0].parameters(), "lr": 0.1},
                             {"params": net[2].parameters()}], lr=0.01, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    net(torch.from_numpy(X)).sum().backward()
    opt.step()
    scheduler.step()
    explanation = diagnose.explain_lr(opt, net[0].weight)
    assert explanation.group_lr == opt.param_groups[0]["lr"] == pytest.approx(0.05)
    assert explanation.initial_lr == 0.1 and explanation.scheduler_factor == pytest.approx(0.5)
    assert explanation.lr_mult is None and explanation.effective_lr == pytest.approx(0.05)
    assert explanation.decay_kinds == ["decoupled"] and explanation.decay_coeff == 0.05


@claim("torch-diagnose-verdicts")
def test_the_recorder_traces_a_pytorch_loop_through_its_step_hooks():
    from dltutor.trace import Recorder
    net = torch_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = Recorder(net, opt)
    x = torch.from_numpy(X)
    before = [p.detach().clone() for p in net.parameters()]
    for _ in range(3):
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        rec.log_loss(loss)
        grad_norm = float(net[0].weight.grad.norm())
        opt.step()
    assert rec.steps.tolist() == [0, 1, 2] and rec.names == ["0.weight", "0.bias", "2.weight",
                                                            "2.bias"]
    assert rec.series("grad_norm", "0.weight")[-1] == pytest.approx(grad_norm, rel=1e-5)
    assert rec.series("lr", "0.weight").tolist() == [0.1] * 3
    assert rec.series("loss")[-1] == pytest.approx(float(loss), rel=1e-6)
    first_update = rec.series("update_norm", "2.bias")[0]
    assert first_update > 0 and rec.series("frozen", "2.bias").tolist() == [0.0] * 3
    rec.detach()
    opt.step()                                   # no longer recorded
    assert rec.count == 3 and len(before) == 4
    import matplotlib
    matplotlib.use("Agg")
    from dltutor import plot                     # the kit's plots draw a PyTorch run too
    for artists in (plot.traces(rec, "grad_norm"), plot.update_ratio(rec), plot.loss(rec)):
        lines = [artist for artist in artists if hasattr(artist, "get_ydata")]
        assert any(len(line.get_ydata()) == 3 for line in lines)


def test_import_dltutor_and_its_diagnostics_never_import_a_framework():
    import subprocess
    import sys
    code = ("import sys, dltutor as dt; from dltutor import diagnose, nn, optim, trace; "
            "net = nn.Linear(2, 1); diagnose.summary(net, optim.SGD(net.parameters(), lr=0.1)); "
            "print(sorted({'torch', 'paddle'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@claim("torch-diagnose-verdicts")
def test_a_gradient_hook_that_zeroes_every_gradient_and_a_buffer_and_no_backward_yet():
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                              torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    assert diagnose.why_not_updating(net, opt, "0.weight").cause == "no_grad"
    net[0].weight.register_hook(lambda grad: grad * 0)          # zeroed on every backward
    net(torch.from_numpy(X)).sum().backward()
    assert diagnose.why_not_updating(net, opt, "0.weight").cause == "zero_grad"
    before = net[0].weight.detach().clone()
    opt.step()
    assert torch.equal(before, net[0].weight.detach())
    buffer = diagnose.why_not_updating(net, opt, "1.running_mean")
    assert buffer.cause == "not_a_parameter"
    assert "running_mean" not in dict(net.named_parameters())
