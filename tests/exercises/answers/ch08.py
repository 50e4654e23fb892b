"""Chapter 08's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

CASES = {
    "08.1": ({"predicted_running_mean": [1.5, 2.25, 3.0]},
             [({"predicted_running_mean": [2.0, 3.0, 4.0]}, ["half of the way"]),
              ({"predicted_running_mean": [1.0, 1.5, 2.0]}, ["one pass"]),
              ({"predicted_running_mean": [1.5, 2.25]}, ["3 numbers"]),
              ({"predicted_running_mean": [[1.5, 2.25, 3.0]]}, ["3 numbers"])]),
    "08.2": ({"zero_branch_cause": "zero_grad"},
             [({"zero_branch_cause": "not_reached"}, ["does reach"]),
              ({"zero_branch_cause": None}, ["check.cause"])]),
    "08.3": ({"still_gets_gradient": "lr_mult"},
             [({"still_gets_gradient": "requires_grad"}, [".grad"]),
              ({"still_gets_gradient": "both"}, ["Answer"])]),
}

SELF_CONTAINED = {"08.2", "08.3"}
