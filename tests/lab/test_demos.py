"""Every lab demo shows its effect for every seed, not only for the default one.

A demo is a teaching claim ("clipping rescues this network"); if it held only for seed 0, a
learner who changes the seed, or whose CPU rounds differently, would see the opposite. Each
test runs the demo for five seeds and asserts the claim with a margin (the margins are the
worst case over seeds 0-9 when the demo was designed, and over the CPU variants that
``tests/notebooks/test_every_machine.py`` runs).
"""
from __future__ import annotations

import numpy as np
import pytest

from dltutor.lab import demos

SEEDS = range(5)


@pytest.mark.parametrize("seed", SEEDS)
def test_exploding_gradients_blow_up_without_clipping(seed):
    lab = demos.exploding_gradients(seed=seed)
    assert not lab.run(100)                                  # it stops with an error...
    assert isinstance(lab.error, FloatingPointError)
    assert lab.steps_done < 10                               # ...within the first few steps (4-6)
    assert lab.recorder.series("global_grad_norm")[0] > 20   # the first gradient is already huge


@pytest.mark.parametrize("seed", SEEDS)
def test_global_norm_clipping_rescues_the_exploding_network(seed):
    lab = demos.exploding_gradients(seed=seed)
    lab.set_clip("global_norm", 1.0)
    assert lab.run(300)
    rec = lab.recorder
    scale = rec.series("clip_scale")
    after = np.sqrt((rec.series("clipped_grad_norm") ** 2).sum(axis=1))
    assert scale[0] < 0.05                                   # the first steps are cut hard...
    assert np.all(after <= 1.0 * (1 + 1e-5))                 # ...to the threshold, never above
    assert lab.accuracy() > 0.95                             # and it learns (0.99-1.0 seen)


@pytest.mark.parametrize("seed", SEEDS)
def test_moons_mlp_learns_the_moons(seed):
    lab = demos.moons_mlp(seed=seed)
    assert lab.run(200)
    assert lab.accuracy() > 0.9                              # 0.94-1.0 seen


@pytest.mark.parametrize("seed", SEEDS)
def test_tied_mlp_learns_with_one_shared_layer(seed):
    lab = demos.tied_mlp(seed=seed)
    assert lab.model[2] is lab.model[4]
    assert lab.run(200)
    assert lab.accuracy() > 0.8                              # 0.89-1.0 seen


@pytest.mark.parametrize("seed", SEEDS)
def test_freezing_the_tied_layer_stops_both_of_its_uses(seed):
    lab = demos.tied_mlp(seed=seed)
    lab.step(20)
    shared = lab.model[2].weight.numpy().copy()
    lab.freeze("2")                                          # one layer in the list ...
    lab.step(20)
    assert np.array_equal(lab.model[2].weight.numpy(), shared)
    assert lab.model[4].weight is lab.model[2].weight        # ... and both uses are it
    assert np.all(lab.recorder.series("grad_norm", "2")[20:] == 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_digits_mlp_learns_the_digits(seed):
    lab = demos.digits_mlp(seed=seed)
    assert lab.run(100)
    assert lab.accuracy() > 0.8                              # 0.83-0.88 seen


def steps_to(lab, target, limit=4000, every=25):
    """Train until the accuracy reaches ``target``; the steps it took."""
    while lab.accuracy() < target:
        assert lab.steps_done < limit, f"never reached {target:.0%}"
        lab.step(every)
    return lab.steps_done


@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_layers_lr_multiplier_decides_how_fast_the_spirals_are_learned(seed):
    base = steps_to(demos.spirals_mlp(seed=seed), 0.9)
    boosted = demos.spirals_mlp(seed=seed)
    boosted.set_lr_mult("0", 10)
    assert steps_to(boosted, 0.9) <= 0.7 * base          # 1.65-2.4x fewer steps seen
    stalled, plain = demos.spirals_mlp(seed=seed), demos.spirals_mlp(seed=seed)
    stalled.set_lr_mult("0", 0)
    stalled.step(base)
    plain.step(base)
    assert stalled.accuracy() <= plain.accuracy() - 0.05   # 0.08-0.29 below seen


@pytest.mark.parametrize("seed", SEEDS)
def test_freezing_pretrained_layers_keeps_what_they_knew(seed):
    frozen, free = demos.pretrained_features(seed=seed), demos.pretrained_features(seed=seed)
    knew = frozen.state()["watch"]["digits, pretrained head"]
    assert knew > 0.97                                      # pretrained: 0.987-0.999 seen
    frozen.freeze("0.0")
    frozen.freeze("0.2")
    frozen.step(200)
    free.step(200)
    assert frozen.state()["watch"]["digits, pretrained head"] == knew   # not one bit changed
    assert frozen.accuracy() > 0.88                         # the new head learned parity (0.90-0.98)
    assert free.state()["watch"]["digits, pretrained head"] < knew - 0.1  # forgot (to 0.48-0.82)
    assert free.accuracy() > 0.95                           # while parity got better (0.98-1.0)
