"""Chapter 05's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch05.py)."""
from __future__ import annotations

from dltutor import nn
from dltutor.nn import StateDictError


def tie_load_error():
    """The error the chapter's solution catches: two values for the tied 2.weight / 4.weight."""
    shared = nn.Linear(8, 8)
    tied = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), shared, nn.ReLU(), shared)
    state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}
    state["4.weight"] = state["4.weight"] + 1
    try:
        tied.load_state_dict(state)
    except StateDictError as err:
        return err
    raise AssertionError("dltutor loaded two values into one tied parameter")


def tie_head(model):
    model.head.weight = model.embed.weight


def tie_head_by_copying(model):
    """The same numbers, but two objects."""
    model.head.weight.set_value(model.embed.weight.numpy())


def tie_head_by_sharing_the_layer(model):
    model.head = model.embed


CASES = {
    "05.1": ({"tie_head": tie_head},
             [({"tie_head": tie_head_by_copying}, ["two objects"]),
              ({"tie_head": tie_head_by_sharing_the_layer}, ["not the layers"]),
              ({"tie_head": lambda model: None}, ["very object"]),
              ({"tie_head": "head = embed"}, ["function"])]),
    "05.2": ({"tie_load_error": tie_load_error()},
             [({"tie_load_error": None}, ["refuses"]),
              ({"tie_load_error": StateDictError}, ["error object"]),
              ({"tie_load_error": "StateDictError"}, ["error object"]),
              ({"tie_load_error": KeyError("2.weight")}, ["another error"]),
              ({"tie_load_error": 3}, ["except Exception as err caught"])]),
    "05.3": ({"shapes": ((6, 4), (4, 6))},
             [({"shapes": ((4, 6), (6, 4))}, ["(out_features, in_features)"])]),
}

SELF_CONTAINED = {"05.1", "05.3"}
