"""The exercises of chapter 05 (tying parameters).

>>> Q1.verdict({"matters_which_name": True}).message
'Exercise 05.1: not yet. net[2].weight and net[4].weight are one Parameter object: setting lr_mult through either name sets it on that one object.'
"""
from __future__ import annotations

from typing import Any

from ..i18n import sentence
from .answers import truth, type_name
from .checker import CheckResult, Exercise


def _which_name(matters_which_name: Any) -> CheckResult:
    matters_which_name = truth(matters_which_name)
    if matters_which_name is False:
        return None, ("A tied layer is one object under two names; dt.diagnose.explain_lr "
                      "shows the same effective lr for both.")
    if matters_which_name is True:
        return ("net[2].weight and net[4].weight are one Parameter object: setting lr_mult "
                "through either name sets it on that one object.")
    return "Answer True or False."


Q1 = Exercise(
    "05.1", names=("matters_which_name",),
    expects="True or False",
    check=_which_name,
    hints=("Check net[2].weight is net[4].weight.",
           "Set net[2].weight.lr_mult = 0.5 and read net[4].weight.lr_mult."),
    solution=("net[2].weight.lr_mult = 0.5\n"
              "matters_which_name = net[4].weight.lr_mult != 0.5      # False: one object"))


def _tie_load(tie_load_error: Any) -> CheckResult:
    name = type_name(tie_load_error)
    if name == "StateDictError":
        return None, ("dltutor refuses the load and changes nothing; PyTorch 2.13 copies both "
                      "keys into the one tensor, module by module, so the name the network "
                      "reaches last (4.weight) silently wins.")
    if name in ("None", "", "no error"):
        return ("Load it and see: dltutor refuses two different values for one tied "
                "parameter (PyTorch 2.13 would keep 4.weight's, the name it reaches last, "
                "without a word).")
    if name == "KeyError":
        return "Close: the error is a KeyError, but name its own class (type(err).__name__)."
    return sentence("{name!r}: catch the error and store type(err).", name=name)


Q2 = Exercise(
    "05.2", names=("tie_load_error",),
    expects="an exception class",
    check=_tie_load,
    hints=("state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}; change "
           "state['4.weight']; tied.load_state_dict(state).",),
    solution=("state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}\n"
              "state['4.weight'] = state['4.weight'] + 1\n"
              "try:\n"
              "    tied.load_state_dict(state)\n"
              "except Exception as err:\n"
              "    tie_load_error = type(err)          # StateDictError"))


def _transpose_shapes(shapes: Any) -> CheckResult:
    got = tuple(tuple(s) for s in shapes)
    if got == ((6, 4), (4, 6)):
        return None, ("The shapes differ, so the decoder cannot hold the same Parameter: use "
                      "F.linear(h, enc.weight.T) in a custom forward.")
    if got == ((4, 6), (6, 4)):
        return "A Linear's weight is (out_features, in_features): Linear(4, 6) holds a (6, 4)."
    return ("Give (enc.weight.shape, dec.weight.shape) for enc = nn.Linear(4, 6) and "
            "dec = nn.Linear(6, 4).")


Q3 = Exercise(
    "05.3", names=("shapes",),
    expects="two shapes",
    check=_transpose_shapes,
    hints=("Print nn.Linear(4, 6).weight.shape and nn.Linear(6, 4).weight.shape.",),
    solution=("from dltutor import nn\n"
              "enc, dec = nn.Linear(4, 6), nn.Linear(6, 4)\n"
              "shapes = (enc.weight.shape, dec.weight.shape)"))

EXERCISES = [Q1, Q2, Q3]
