"""Chapter 05's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

from dltutor.nn import StateDictError

CASES = {
    "05.1": ({"matters_which_name": False},
             [({"matters_which_name": True}, ["one Parameter object"]),
              ({"matters_which_name": "net[2]"}, ["True or False"])]),
    "05.2": ({"tie_load_error": StateDictError},
             [({"tie_load_error": None}, ["refuses"]), ({"tie_load_error": KeyError}, ["Close"])]),
    "05.3": ({"shapes": ((6, 4), (4, 6))},
             [({"shapes": ((4, 6), (6, 4))}, ["(out_features, in_features)"])]),
}

SELF_CONTAINED = {"05.3"}
