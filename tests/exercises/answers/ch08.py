"""Chapter 08's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

def freeze_block(model, name):
    model.get_submodule(name).requires_grad_(False)


def freeze_by_prefix(model, name):
    """Catches "10." and "11." too when name is "1"."""
    for n, p in model.named_parameters():
        if n.startswith(name):
            p.requires_grad_(False)


def freeze_with_lr_mult(model, name):
    for p in model.get_submodule(name).parameters():
        p.lr_mult = 0.0


def freeze_first_parameter_only(model, name):
    next(iter(model.get_submodule(name).parameters())).requires_grad_(False)


CASES = {
    "08.1": ({"predicted_running_mean": [1.5, 2.25, 3.0]},
             [({"predicted_running_mean": [2.0, 3.0, 4.0]}, ["half of the way"]),
              ({"predicted_running_mean": [1.0, 1.5, 2.0]}, ["one pass"]),
              ({"predicted_running_mean": [1.5, 2.25]}, ["3 numbers"]),
              ({"predicted_running_mean": [[1.5, 2.25]]}, ["3 numbers"])]),
    "08.2": ({"zero_branch_cause": "zero_grad"},
             [({"zero_branch_cause": "not_reached"}, ["does reach"]),
              ({"zero_branch_cause": None}, ["check.cause"])]),
    "08.3": ({"still_gets_gradient": "lr_mult"},
             [({"still_gets_gradient": "requires_grad"}, [".grad"]),
              ({"still_gets_gradient": "both"}, ["Answer"])]),
    "08.4": ({"freeze_block": freeze_block},
             [({"freeze_block": freeze_by_prefix}, ["10.weight", "outside block '1'"]),
              ({"freeze_block": freeze_with_lr_mult}, ["still computes its gradient"]),
              ({"freeze_block": freeze_first_parameter_only}, ["1.bias", "still moved"]),
              ({"freeze_block": "encoder"}, ["function"])]),
}

SELF_CONTAINED = {"08.2", "08.3", "08.4"}
