"""Chapter 04's exercises answer back (the checks are in ``tests/exercise_checks.py``)."""
from __future__ import annotations

from dltutor.nn import StateDictError
from exercise_checks import chapter_tests

CASES = {
    "04.1": ({"matters_which_name": False},
             [({"matters_which_name": True}, ["one Parameter object"]),
              ({"matters_which_name": "net[2]"}, ["True or False"])]),
    "04.2": ({"tie_load_error": StateDictError},
             [({"tie_load_error": None}, ["refuses"]), ({"tie_load_error": KeyError}, ["Close"])]),
    "04.3": ({"shapes": ((6, 4), (4, 6))},
             [({"shapes": ((4, 6), (6, 4))}, ["(out_features, in_features)"])]),
}

SELF_CONTAINED = {"04.3"}

globals().update(chapter_tests("04", CASES, SELF_CONTAINED))
