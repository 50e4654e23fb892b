"""The exercises of chapter 05 (tying parameters).

>>> Q1.verdict({"tie_head": lambda model: None}).message
'Exercise 05.1: not yet. model.head.weight should be the very object model.embed.weight.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..autograd import tanh, tensor
from ..i18n import sentence
from .answers import called, type_name
from .checker import CheckResult, Exercise


class _LanguageModel(nn.Module):
    """A model shaped like the chapter's TinyLM, for fresh vocabulary sizes and widths."""

    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, tokens: Any) -> Any:
        return self.head(tanh(self.mix(self.embed(tokens))))


def _tie_head(tie_head: Any) -> CheckResult:
    if not callable(tie_head):
        return "tie_head should be a function that takes a model."
    for vocab_size, dim in ((50, 4), (7, 16), (300, 8)):
        model = _LanguageModel(vocab_size, dim)
        untied = sum(p.numel() for p in model.parameters())
        _, failure = called("tie_head", tie_head, model)
        if failure:
            return failure
        if not isinstance(model.head, nn.Linear) or not isinstance(model.embed, nn.Embedding):
            return ("model.head and model.embed should stay a Linear layer and an Embedding: "
                    "tie their weight parameter, not the layers.")
        if model.head.weight is not model.embed.weight:
            if np.array_equal(model.head.weight.numpy(), model.embed.weight.numpy()):
                return ("The two weights hold the same numbers but are two objects: the first "
                        "step pulls them apart. Assign the Parameter itself.")
            return "model.head.weight should be the very object model.embed.weight."
        tokens = tensor([1, 3, 5]) if vocab_size > 5 else tensor([1, 3])
        if model(tokens).shape != (len(tokens), vocab_size):
            return "model(tokens) should still give one score per word of the vocabulary."
        if sum(p.numel() for p in model.parameters()) != untied - vocab_size * dim:
            return sentence("Tied, the model should hold {n} numbers fewer (vocab x dim).",
                            n=vocab_size * dim)
    return None


Q1 = Exercise(
    "05.1", names=("tie_head",),
    title="Write tie_head",
    expects="a function that takes a model",
    check=_tie_head,
    hints=("TinyLM above ties in its __init__; here the model exists already.",
           "model.head.weight = model.embed.weight: both are (vocab, dim)."),
    solution=("def tie_head(model):\n"
              "    model.head.weight = model.embed.weight"))


def _tie_load(tie_load_error: Any) -> CheckResult:
    if tie_load_error is None:
        return ("Load it and see: dltutor refuses two different values for one tied "
                "parameter (PyTorch 2.13 would keep 4.weight's, the name it reaches last, "
                "without a word).")
    if isinstance(tie_load_error, (type, str)):
        return sentence("{name!r} names a kind of error: store the error object itself, "
                        "caught with except Exception as err: tie_load_error = err.",
                        name=type_name(tie_load_error))
    if not isinstance(tie_load_error, BaseException):
        return "tie_load_error should be what except Exception as err caught from tied.load_state_dict(state)."
    message = str(tie_load_error)
    if type(tie_load_error).__name__ != "StateDictError" or "tied parameters" not in message:
        return ("That is another error: change only state['4.weight'] (both names must stay in "
                "the state dict), then call tied.load_state_dict(state).")
    return None, ("dltutor refuses the load, names the two keys and changes nothing; PyTorch "
                  "2.13 copies both keys into the one tensor, module by module, so the name the "
                  "network reaches last (4.weight) silently wins.")


Q2 = Exercise(
    "05.2", names=("tie_load_error",),
    title="Loading two values into tied weights",
    expects="the error object caught",
    check=_tie_load,
    hints=("state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}; change "
           "state['4.weight']; tied.load_state_dict(state) inside try / except Exception as "
           "err.",),
    solution=("state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}\n"
              "state['4.weight'] = state['4.weight'] + 1\n"
              "try:\n"
              "    tied.load_state_dict(state)\n"
              "except Exception as err:\n"
              "    tie_load_error = err          # a StateDictError"))


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
    title="An encoder's weight in its decoder",
    expects="two shapes",
    check=_transpose_shapes,
    hints=("Print nn.Linear(4, 6).weight.shape and nn.Linear(6, 4).weight.shape.",),
    solution=("from dltutor import nn\n"
              "enc, dec = nn.Linear(4, 6), nn.Linear(6, 4)\n"
              "shapes = (enc.weight.shape, dec.weight.shape)"))

EXERCISES = [Q1, Q2, Q3]
