"""GradClip.predict_scales: what a clip object would do to a set of gradients, said before it
does it, for every clip class (and for a new one that defines only clip)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dltutor as dt
from dltutor import nn, optim

GRADS = [np.array([3.0, 4.0]), np.array([0.3]), np.array([-12.0, 5.0, 0.0]), np.zeros(2)]


class ClipToSign(optim.GradClip):
    """A clip with no closed form in the base class: every value becomes its sign."""

    def clip(self, grads, norms):
        for g in grads:
            np.sign(g, out=g)
        return math.sqrt(sum(float((g * g).sum()) for g in grads))

    def __repr__(self):     # a test id: the same in every pytest-xdist worker
        return "ClipToSign()"


CLIPS = [optim.ClipGradByGlobalNorm(2.0), optim.ClipGradByNorm(1.0), optim.ClipGradByValue(1.0),
         optim.ClipGradByValue(0.5, min=-2.0), ClipToSign()]


def params_for(grads, need_clip=None):
    params = [nn.Parameter(np.zeros_like(g)) for g in grads]
    for p, flag in zip(params, need_clip or [True] * len(params)):
        p.need_clip = flag
    return params


@pytest.mark.parametrize("clip", CLIPS, ids=repr)
@pytest.mark.parametrize("need_clip", [None, [True, False, True, True]])
def test_the_predicted_scales_are_what_clipping_does_to_each_norm(clip, need_clip):
    params = params_for(GRADS, need_clip)
    grads = [g.copy() for g in GRADS]
    predicted = clip.predict_scales(params, grads)
    assert all(np.array_equal(g, g0) for g, g0 in zip(grads, GRADS))    # nothing changed
    clip(params, grads)
    for before, after, scale in zip(GRADS, grads, predicted):
        norm = np.linalg.norm(before)
        if norm > 0:    # (a zero gradient stays zero: its scale is the clip's factor, or 1.0)
            assert scale == pytest.approx(np.linalg.norm(after) / norm, rel=1e-12)


def test_a_parameter_left_out_of_clipping_keeps_scale_one_and_is_not_counted():
    clip = optim.ClipGradByGlobalNorm(1.0)
    params = params_for([np.array([3.0, 4.0]), np.array([100.0])], need_clip=[True, False])
    assert clip.predict_scales(params, [np.array([3.0, 4.0]), np.array([100.0])]) == [0.2, 1.0]


def test_scales_are_exact_for_the_scaling_clips():
    params = params_for(GRADS)
    total = math.sqrt(3.0 ** 2 + 4.0 ** 2 + 0.3 ** 2 + 12.0 ** 2 + 5.0 ** 2)
    assert optim.ClipGradByGlobalNorm(2.0).predict_scales(params, GRADS) == [2.0 / total] * 4
    assert optim.ClipGradByNorm(1.0).predict_scales(params, GRADS) == \
        [0.2, 1.0, 1.0 / 13.0, 1.0]


def test_without_grads_it_reads_each_parameters_gradient_and_skips_those_without_one():
    a, b, c = nn.Parameter([0.0, 0.0]), nn.Parameter([0.0]), nn.Parameter([0.0])
    a.grad, c.grad = dt.tensor([3.0, 4.0]), dt.tensor([0.1])
    assert optim.ClipGradByNorm(1.0).predict_scales([a, b, c]) == [pytest.approx(0.2), None, 1.0]
    assert a.grad.tolist() == [3.0, 4.0]


def test_an_infinite_gradient_is_predicted_to_be_scaled_to_zero_as_clipping_does():
    params = params_for([np.array([np.inf]), np.array([1.0])])
    assert optim.ClipGradByGlobalNorm(1.0).predict_scales(params, [np.array([np.inf]),
                                                                   np.array([1.0])]) == [0.0, 0.0]


def test_the_prediction_matches_the_scale_an_optimizer_step_records():
    w = nn.Parameter([0.0, 0.0])
    w.grad = dt.tensor([30.0, 40.0])
    clip = optim.ClipGradByGlobalNorm(5.0)
    predicted = clip.predict_scales([w])
    optim.SGD([w], lr=0.1, grad_clip=clip).step()
    assert predicted == [pytest.approx(clip.last_scale)] == [pytest.approx(0.1)]
