"""dltutor's diagnostics on real Paddle models (dltutor/diagnose/adapters/paddle_adapter.py).

As for PyTorch (test_diagnose_torch.py): each cause why_not_updating can name is set up in
Paddle and the verdict is checked against what Paddle's own ``step()`` then does, and against
dltutor's verdict for the same setup. Paddle has the per-parameter ideas PyTorch lacks
(ParamAttr's learning rate, regularizer and need_clip; a clip inside the optimizer), so its
summary is compared with dltutor's on every column but the optimizer's names.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import diagnose, nn, optim

from claims import claim
from diagnose_cases import X, dltutor_case

CAUSES = ["requires_grad_false", "not_in_optimizer", "lr_zero", "lr_mult_zero", "not_reached",
          "zero_grad", "clipped_to_zero", "moves_by_momentum", "moves_by_weight_decay"]
MOVES = {"moves_by_momentum": True, "moves_by_weight_decay": True}


def paddle_net(paddle, lr_mult: float = 1.0):
    paddle.seed(0)
    first = paddle.nn.Linear(3, 4, weight_attr=paddle.ParamAttr(learning_rate=lr_mult))
    return paddle.nn.Sequential(first, paddle.nn.ReLU(), paddle.nn.Linear(4, 1))


def paddle_case(paddle, cause: str):
    """(net, optimizer, name, loss) in Paddle so that ``name`` suffers ``cause``."""
    net = paddle_net(paddle, lr_mult=0.0 if cause == "lr_mult_zero" else 1.0)
    x = paddle.to_tensor(X)
    name, first = "0.weight", net[0].weight
    others = [p for p in net.parameters() if p is not first]
    params, kwargs, kind = net.parameters(), {}, paddle.optimizer.SGD
    if cause == "requires_grad_false":
        first.stop_gradient = True
    elif cause == "not_in_optimizer":
        params = others
    elif cause == "lr_zero":
        params = [{"params": [first], "learning_rate": 0.0}, {"params": others}]
    elif cause == "clipped_to_zero":
        kwargs = {"grad_clip": paddle.nn.ClipGradByGlobalNorm(clip_norm=1e-9)}
    elif cause == "moves_by_momentum":
        kind, kwargs = paddle.optimizer.Momentum, {"momentum": 0.9}
    elif cause == "moves_by_weight_decay":
        kwargs = {"weight_decay": 0.5}
    opt = kind(learning_rate=0.1, parameters=params, **kwargs)
    if cause == "moves_by_momentum":            # one real step fills the velocity
        net(x).sum().backward()
        opt.step()
        opt.clear_grad()
    if cause == "not_reached":
        x.stop_gradient = False
        return net, opt, "2.weight", net[0](x).sum()
    scale = 0.0 if cause in ("zero_grad", "moves_by_momentum", "moves_by_weight_decay") else 1.0
    (net(x) * scale).sum().backward()
    return net, opt, name, None


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("cause", CAUSES)
def test_each_verdict_on_a_paddle_model_is_what_paddle_then_does(paddle, cause):
    net, opt, name, loss = paddle_case(paddle, cause)
    check = diagnose.why_not_updating(net, opt, name, loss)
    assert check.cause == cause, check
    if cause == "not_reached":
        loss.backward()
    param = dict(net.named_parameters())[name]
    before = param.numpy().copy()
    opt.step()
    change = np.abs(param.numpy() - before).max()
    if cause == "clipped_to_zero":      # a billionth of its step: in float32, not at all
        assert float(change) < 1e-6
    else:
        assert bool(change > 0) is MOVES.get(cause, False)
    assert check.will_move is MOVES.get(cause, False)


@claim("paddle-diagnose-verdicts")
@pytest.mark.parametrize("cause", CAUSES)
def test_the_paddle_verdict_is_dltutors_for_the_same_setup(paddle, cause):
    ours = diagnose.why_not_updating(*dltutor_case(cause))
    theirs = diagnose.why_not_updating(*paddle_case(paddle, cause))
    assert theirs.cause == ours.cause
    statuses = [{r["key"]: r["status"] for r in check.rows} for check in (ours, theirs)]
    assert statuses[1] == statuses[0]


@claim("paddle-diagnose-verdicts")
def test_the_predicted_clip_scale_is_what_paddles_clip_applies(paddle):
    net = paddle_net(paddle)
    clip = paddle.nn.ClipGradByGlobalNorm(clip_norm=0.5)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters(), grad_clip=clip)
    net(paddle.to_tensor(X)).sum().backward()
    pairs = [(p, p.grad) for p in net.parameters()]
    clipped = clip(pairs)
    scale = float(np.linalg.norm(clipped[0][1].numpy()) / np.linalg.norm(pairs[0][1].numpy()))
    row = next(r for r in diagnose.why_not_updating(net, opt, "0.weight").rows
               if r["key"] == "clipping")
    assert f"{scale:.2g}" in row["answer"]


@claim("paddle-diagnose-verdicts")
def test_summary_of_a_paddle_model_reads_paramattr_and_the_optimizers_decay(paddle):
    net = paddle_net(paddle, lr_mult=0.5)
    net[2].weight.regularizer = paddle.regularizer.L1Decay(0.01)
    net[2].bias.need_clip = False
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters(), weight_decay=0.05)
    rows = {r["name"]: r for r in diagnose.summary(net, opt).rows}
    assert rows["0.weight"]["lr_mult"] == 0.5 and rows["0.weight"]["effective_lr"] == 0.05
    assert rows["2.weight"]["regularizer"] == "L1Decay(0.01)"
    assert rows["2.bias"]["need_clip"] is False and rows["0.bias"]["need_clip"] is True
    explanation = diagnose.explain_lr(opt, net[2].weight)
    assert explanation.decay_kinds == ["param_regularizer"]      # it replaces the group's L2
    assert explanation.decay_coeff == 0.01
    assert diagnose.explain_lr(opt, net[0].bias).decay_kinds == ["group_regularizer"]


@claim("paddle-diagnose-verdicts")
def test_adamw_exclusion_and_a_group_scale_in_paddle(paddle):
    net = paddle_net(paddle)
    opt = paddle.optimizer.AdamW(
        learning_rate=0.1, weight_decay=0.01,
        parameters=[{"params": net[0].parameters(), "learning_rate": 0.5},
                    {"params": net[2].parameters()}],
        apply_decay_param_fun=lambda name: "b_" not in name)
    weight = diagnose.explain_lr(opt, net[0].weight)
    assert weight.group_lr == pytest.approx(0.05) and weight.decay_kinds == ["decoupled"]
    assert diagnose.explain_lr(opt, net[0].bias).decay_kinds == ["decoupled_excluded"]


@claim("paddle-diagnose-verdicts")
def test_the_recorder_traces_a_paddle_loop_through_a_wrapped_step(paddle):
    from dltutor.trace import Recorder
    net = paddle_net(paddle)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    rec = Recorder(net, opt, by="layer")
    x = paddle.to_tensor(X)
    for _ in range(3):
        opt.clear_grad()
        loss = (net(x) ** 2).mean()
        loss.backward()
        grad_sq = sum(float((p.grad ** 2).sum()) for p in net[0].parameters())
        before = net[2].weight.numpy().copy()
        opt.step()
    assert rec.names == ["0", "2"] and rec.steps.tolist() == [0, 1, 2]
    assert rec.series("grad_norm", "0")[-1] == pytest.approx(grad_sq ** 0.5, rel=1e-5)
    assert rec.series("update_norm", "2")[-1] > np.linalg.norm(net[2].weight.numpy() - before)
    rec.detach()
    assert "step" not in vars(opt)               # Paddle's own step is back


@claim("paddle-diagnose-verdicts")
def test_a_shared_paddle_layer_is_one_parameter_under_two_names(paddle):
    shared = paddle.nn.Linear(3, 3)
    net = paddle.nn.Sequential(shared, paddle.nn.ReLU(), shared)
    assert diagnose.ties(net).groups == [["0.weight", "2.weight"], ["0.bias", "2.bias"]]
    # Paddle's parameters() gives each shared parameter once, so the optimizer holds it once
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    assert len(opt._parameter_list) == 2
    summary = diagnose.summary(net, opt)
    assert summary.totals["tensors"] == 2 and summary.totals["names"] == 4
    assert [r["tied_to"] for r in summary.rows] == [["2.weight"], ["2.bias"], ["0.weight"],
                                                   ["0.bias"]]


@claim("paddle-diagnose-verdicts")
def test_summary_of_a_paddle_model_matches_dltutors_for_the_same_setup(paddle):
    pnet = paddle_net(paddle, lr_mult=0.5)
    pnet[2].bias.stop_gradient = True
    ours_net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    ours_net[0].weight.lr_mult = 0.5
    ours_net[2].bias.requires_grad_(False)
    theirs = diagnose.summary(pnet, paddle.optimizer.SGD(learning_rate=0.1,
                                                         parameters=pnet.parameters()))
    ours = diagnose.summary(ours_net, optim.SGD(ours_net.parameters(), lr=0.1))
    columns = [c for c in ours.columns if c != "shape"]
    assert [{k: r[k] for k in columns} for r in theirs.rows] == \
           [{k: r[k] for k in columns} for r in ours.rows]
    assert theirs.totals == ours.totals
    # the one difference is real: Paddle stores a Linear weight as (in, out) (chapter 04)
    assert [r["shape"] for r in theirs.rows] == [r["shape"][::-1] for r in ours.rows]


@claim("paddle-diagnose-verdicts")
def test_the_verdicts_speak_chinese_for_a_paddle_model_too(paddle):
    net, opt, name, _ = paddle_case(paddle, "lr_mult_zero")
    dt.set_language("zh")
    try:
        verdict = diagnose.why_not_updating(net, opt, name).verdict
    finally:
        dt.set_language("en")
    assert verdict.startswith("不会更新，原因是它的 lr_mult 为 0"), verdict


@claim("paddle-diagnose-verdicts")
def test_a_paddle_gradient_hook_that_zeroes_every_gradient_and_a_buffer(paddle):
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.BatchNorm1D(4),
                               paddle.nn.Linear(4, 1))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    assert diagnose.why_not_updating(net, opt, "0.weight").cause == "no_grad"
    net[0].weight.register_hook(lambda grad: grad * 0)
    net(paddle.to_tensor(X)).sum().backward()
    assert diagnose.why_not_updating(net, opt, "0.weight").cause == "zero_grad"
    before = net[0].weight.numpy().copy()
    opt.step()
    assert np.array_equal(before, net[0].weight.numpy())
    # Paddle keeps BatchNorm's running mean as a parameter that never gets a gradient
    # (stop_gradient=True), where PyTorch keeps a buffer: the verdict follows Paddle
    assert net[1]._mean.stop_gradient and "1._mean" in dict(net.named_parameters())
    assert diagnose.why_not_updating(net, opt, "1._mean").cause == "requires_grad_false"
