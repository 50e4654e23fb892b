"""The exercises of chapter 05 (tying parameters).

>>> Q1.verdict({"tie_head": lambda model: None}).message
'Exercise 05.1: not yet. model.head.weight should be the very object model.embed.weight.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..autograd import tanh, tensor
from ..i18n import text
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
        return text("ch05.tie_head_function_takes")
    for vocab_size, dim in ((50, 4), (7, 16), (300, 8)):
        model = _LanguageModel(vocab_size, dim)
        untied = sum(p.numel() for p in model.parameters())
        _, failure = called("tie_head", tie_head, model)
        if failure:
            return failure
        if not isinstance(model.head, nn.Linear) or not isinstance(model.embed, nn.Embedding):
            return text("ch05.model_head_model_embed")
        if model.head.weight is not model.embed.weight:
            if np.array_equal(model.head.weight.numpy(), model.embed.weight.numpy()):
                return text("ch05.two_weights_hold_same")
            return text("ch05.model_head_weight_very")
        tokens = tensor([1, 3, 5]) if vocab_size > 5 else tensor([1, 3])
        if model(tokens).shape != (len(tokens), vocab_size):
            return text("ch05.model_tokens_still_give")
        if sum(p.numel() for p in model.parameters()) != untied - vocab_size * dim:
            return text("ch05.tied_model_hold_numbers", n=vocab_size * dim)
    return None


Q1 = Exercise(
    "05.1", names=("tie_head",),
    title="ch05.q1.title",
    expects="ch05.q1.expects",
    check=_tie_head,
    hints=("ch05.q1.hint1", "ch05.q1.hint2"),
    solution=("def tie_head(model):\n"
              "    model.head.weight = model.embed.weight"))


def _tie_load(tie_load_error: Any) -> CheckResult:
    if tie_load_error is None:
        return text("ch05.load_see_dltutor_refuses")
    if isinstance(tie_load_error, (type, str)):
        return text("ch05.names_kind_error_store", name=type_name(tie_load_error))
    if not isinstance(tie_load_error, BaseException):
        return text("ch05.tie_load_error_what")
    message = str(tie_load_error)
    if type(tie_load_error).__name__ != "StateDictError" or "tied parameters" not in message:
        return text("ch05.another_error_change_only")
    return None, text("ch05.dltutor_refuses_load_names")


Q2 = Exercise(
    "05.2", names=("tie_load_error",),
    title="ch05.q2.title",
    expects="ch05.q2.expects",
    check=_tie_load,
    hints=("ch05.q2.hint1",),
    solution=("state = {k: v.numpy().copy() for k, v in tied.state_dict().items()}\n"
              "state['4.weight'] = state['4.weight'] + 1\n"
              "try:\n"
              "    tied.load_state_dict(state)\n"
              "except Exception as err:\n"
              "    tie_load_error = err          # a StateDictError"))


def _transpose_shapes(shapes: Any) -> CheckResult:
    got = tuple(tuple(s) for s in shapes)
    if got == ((6, 4), (4, 6)):
        return None, text("ch05.shapes_differ_decoder_cannot")
    if got == ((4, 6), (6, 4)):
        return text("ch05.linear_weight_out_features")
    return text("ch05.give_enc_weight_shape")


Q3 = Exercise(
    "05.3", names=("shapes",),
    title="ch05.q3.title",
    expects="ch05.q3.expects",
    check=_transpose_shapes,
    hints=("ch05.q3.hint1",),
    solution=("from dltutor import nn\n"
              "enc, dec = nn.Linear(4, 6), nn.Linear(6, 4)\n"
              "shapes = (enc.weight.shape, dec.weight.shape)"))

EXERCISES = [Q1, Q2, Q3]
