"""The stages of Optimizer.step(): what is copied, what a recorded step measures, and the decay
each parameter gets (Optimizer.decay_of), checked against what step() really does."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim
from dltutor.optim.report import NO_REPORT


def named(*values):
    return [(f"p{i}", nn.Parameter(np.array(v, dtype=np.float64))) for i, v in enumerate(values)]


# --- copies and scratch space ------------------------------------------------------------------
def test_plain_sgd_makes_no_scratch_arrays_and_leaves_the_gradient_alone():
    (name, w), = named([1.0, 2.0])
    opt = optim.SGD([(name, w)], lr=0.1)
    w.grad = dt.tensor(np.array([1.0, 1.0]))
    grad_array = w.grad.data
    opt.step()
    # Nothing clips, decays or negates the gradient: no copy of it, and SGD needs no room for
    # temporaries. (A private attribute, read here to pin down "scratch only when needed".)
    assert opt._scratch_arrays == {}
    assert w.grad.data is grad_array and w.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, weight_decay=0.1),
    lambda ps: optim.SGD(ps, lr=0.1, maximize=True),
    lambda ps: optim.SGD(ps, lr=0.1, grad_clip=optim.ClipGradByValue(0.5)),
    lambda ps: optim.Adam(ps, lr=0.1, grad_clip=optim.ClipGradByGlobalNorm(0.1)),
])
def test_a_gradient_that_a_stage_changes_is_copied_first(make):
    params = named([1.0, -2.0])
    opt = make(params)
    w = params[0][1]
    w.grad = dt.tensor(np.array([3.0, -4.0]))
    opt.step()
    assert w.grad.tolist() == [3.0, -4.0]


# --- what a recorded step measures ---------------------------------------------------------------
def recorded_step(opt, params, grads):
    before = [p.numpy().copy() for _, p in params]
    for (_, p), g in zip(params, grads):
        p.grad = dt.tensor(np.array(g))
    opt.record_steps = True
    opt.step()
    return before


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda ps: optim.Adam(ps, lr=0.1),
    lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.5),     # decoupled: p shrinks first
    lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.5,
                           apply_decay_param_fun=lambda name: name != "p1"),
    lambda ps: optim.RMSprop(ps, lr=0.1, momentum=0.5),
    lambda ps: optim.Adagrad(ps, lr=0.1),
    lambda ps: optim.SignSGD(ps, lr=0.1),                     # changes param.data itself
])
def test_a_recorded_update_is_new_minus_old_values_whoever_applied_it(make):
    params = named([1.0, -2.0], [0.5])
    opt = make(params)
    before = recorded_step(opt, params, [[0.3, -0.1], [2.0]])
    for record, (_, p), old in zip(opt.last_step, params, before):
        # Equal up to rounding: the step the base subtracted is not always bit for bit what
        # subtracting old values from new ones gives back.
        np.testing.assert_allclose(record.update, p.numpy() - old, rtol=1e-12, atol=1e-15)
        assert record.update_norm == pytest.approx(np.linalg.norm(p.numpy() - old), rel=1e-12)


def test_without_a_clip_the_clipped_norms_are_the_gradient_norms():
    params = named([3.0, 4.0])
    opt = optim.SGD(params, lr=0.1)
    recorded_step(opt, params, [[3.0, 4.0]])
    assert opt.last_step.clipped_sq is opt.last_step.grad_sq
    assert opt.last_step.clipped_grad_norms == [5.0]


def test_a_step_that_records_nothing_reports_nothing():
    params = named([1.0])
    opt = optim.SGD(params, lr=0.1)
    params[0][1].grad = dt.ones(1, dtype="float64")
    opt.step()
    assert len(opt.last_step) == 0 and opt.last_step is NO_REPORT


def test_a_rule_that_says_it_returns_its_step_must_return_it():
    class Broken(optim.Optimizer):
        returns_update = True

        def __init__(self, params):
            super().__init__(params, dict(lr=0.1))

        def update(self, param, grad, state, group, lr):
            param.data -= lr * grad

    params = named([1.0])
    params[0][1].grad = dt.ones(1, dtype="float64")
    with pytest.raises(TypeError, match="returned None.*returns_update = True"):
        Broken(params).step()


def test_a_rule_may_return_its_step_and_let_the_base_subtract_it():
    class PlainSGD(optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        def update(self, param, grad, state, group, lr):
            return lr * grad

    params = named([1.0, 2.0])
    opt = PlainSGD(params, lr=0.5)
    before = recorded_step(opt, params, [[1.0, -1.0]])
    assert params[0][1].tolist() == [0.5, 2.5]
    np.testing.assert_allclose(opt.last_step[0].update, params[0][1].numpy() - before[0])


# --- decay_of: the precedence, as a value ------------------------------------------------------
def test_a_parameter_regularizer_replaces_the_groups_coupled_decay():
    (_, w), (_, b) = params = named([1.0], [1.0])
    w.regularizer = optim.L1Decay(0.1)
    opt = optim.SGD(params, lr=0.1, weight_decay=0.01)
    assert opt.decay_of(w) == optim.Decay(optim.L1Decay(0.1), "parameter", 0.01, 0.0, False)
    assert opt.decay_of("p1") == optim.Decay(0.01, "group", None, 0.0, False)


def test_a_group_regularizer_is_coupled_for_every_optimizer():
    (_, w), = params = named([1.0])
    opt = optim.Adam([{"params": params, "weight_decay": optim.L2Decay(0.1)}])
    assert opt.decay_of(w) == optim.Decay(optim.L2Decay(0.1), "group", None, 0.0, False)


def test_adamw_decays_decoupled_besides_a_parameter_regularizer_unless_excluded():
    (_, w), (_, b) = params = named([1.0], [1.0])
    w.regularizer = optim.L2Decay(0.1)
    opt = optim.AdamW(params, weight_decay=0.2, apply_decay_param_fun=lambda n: n == "p0")
    assert opt.decay_of(w) == optim.Decay(optim.L2Decay(0.1), "parameter", None, 0.2, False)
    assert opt.decay_of(b) == optim.Decay(None, None, None, 0.0, True)


def test_no_decay_at_all_and_unknown_parameters():
    (_, w), = params = named([1.0])
    opt = optim.SGD(params, lr=0.1)
    assert opt.decay_of(w) == optim.Decay(None, None, None, 0.0, False)
    with pytest.raises(KeyError, match="no parameter 'nope'; its parameters are p0"):
        opt.decay_of("nope")
    with pytest.raises(KeyError):
        opt.decay_of(nn.Parameter([1.0]))


def test_a_multi_optimizer_asks_the_optimizer_that_holds_the_parameter():
    a, b = nn.Parameter([1.0]), nn.Parameter([1.0])
    both = optim.MultiOptimizer(optim.SGD([a], lr=0.1, weight_decay=0.1),
                                optim.AdamW([b], weight_decay=0.2))
    assert both.decay_of(a).coupled == 0.1 and both.decay_of(b).decoupled == 0.2
    with pytest.raises(KeyError, match="2 optimizers have a parameter named '#0'"):
        both.decay_of("#0")


@pytest.mark.parametrize("make, regularizer", [
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=0.3), None),
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=0.3), optim.L1Decay(0.2)),
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=optim.L1Decay(0.05)), optim.L2Decay(0.2)),
    (lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.3), optim.L2Decay(0.2)),
    (lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.3, apply_decay_param_fun=lambda n: 0),
     None),
])
def test_decay_of_says_what_a_zero_gradient_step_does(make, regularizer):
    # With a zero gradient, SGD moves p by lr * (coupled decay's gradient); AdamW's Adam step
    # is 0 unless a coupled decay feeds it, so only its decoupled shrink is left to check.
    (_, w), = params = named([2.0, -1.0])
    w.regularizer = regularizer
    opt = make(params)
    decay = opt.decay_of(w)
    old = w.numpy().copy()
    w.grad = dt.tensor(np.zeros(2))
    opt.step()
    lr = 0.1
    if isinstance(opt, optim.SGD):
        coupled = decay.coupled
        penalty = coupled.apply(old, np.zeros(2)) if isinstance(coupled, optim.Regularizer) \
            else coupled * old
        np.testing.assert_allclose(w.numpy(), old - lr * penalty)
    elif decay.coupled is None:
        np.testing.assert_allclose(w.numpy(), old * (1 - lr * decay.decoupled))
    else:      # decoupled shrink, then an Adam step of size lr against the coupled penalty
        shrunk = old * (1 - lr * decay.decoupled)
        np.testing.assert_allclose(w.numpy(), shrunk - lr * np.sign(old), rtol=1e-6)


# --- names of parameters passed without one ---------------------------------------------------
def unnamed_in_two_groups(make, **group_settings):
    """Four unnamed parameters, two per group: their names are '#0'..'#3' across groups."""
    params = [nn.Parameter(np.array([1.0, 2.0])) for _ in range(4)]
    opt = make([{"params": params[:2]}, {"params": params[2:], **group_settings}])
    for p in params:
        p.grad = dt.tensor(np.array([1.0, 1.0]))
    return opt, params


def test_a_decay_rule_sees_an_unnamed_parameter_by_its_position_across_groups():
    asked = []

    class AskingAdamW(optim.AdamW):        # a rule that decides by name, and says what it saw
        def decoupled_decay_applies(self, name):
            asked.append(name)
            return name != "#3"

    opt, params = unnamed_in_two_groups(lambda groups: AskingAdamW(groups, lr=0.1,
                                                                   weight_decay=0.5))
    opt.step()
    assert asked == ["#0", "#1", "#2", "#3"]
    assert opt.decay_of(params[3]).excluded and not opt.decay_of("#2").excluded


def test_a_nonfinite_gradient_of_an_unnamed_parameter_is_named_by_its_position():
    opt, params = unnamed_in_two_groups(lambda groups: optim.SGD(groups, lr=0.1))
    params[2].grad = dt.tensor(np.array([np.nan, 1.0]))
    with pytest.raises(optim.NonFiniteGradientError, match="'#2'"):
        opt.step()


def test_a_gradient_of_the_wrong_shape_is_named_by_its_position():
    opt, params = unnamed_in_two_groups(lambda groups: optim.SGD(groups, lr=0.1))
    params[3].grad = dt.tensor(np.array([1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"'#3' has shape \(3,\) but the parameter has shape \(2,\)"):
        opt.step()
    assert [p.tolist() for p in params] == [[1.0, 2.0]] * 4     # nothing was changed


def test_a_recorded_step_reports_unnamed_parameters_by_position():
    opt, params = unnamed_in_two_groups(lambda groups: optim.SGD(groups, lr=0.1))
    params[1].grad = None
    opt.record_steps = True
    opt.step()
    assert opt.last_step.names == ["#0", "#2", "#3"]
