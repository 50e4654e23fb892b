"""The exercises of chapter 04 (setting parameter values: pretrained vectors, lazy layers).

>>> Q1.verdict({"changed_rows": []}).message
'Exercise 04.1: not yet. Nothing changed? from_pretrained freezes by default: pass freeze=False so the table trains.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..autograd import no_grad, randn
from ..i18n import text
from .answers import called
from .checker import CheckResult, Exercise


def _changed_rows(changed_rows: Any) -> CheckResult:
    got = {int(i) for i in changed_rows}
    if got == {0, 2}:
        return None, text("ch04.gradient_embedding_zero_every")
    if len(got) == 6:
        return text("ch04.only_looked_up_rows")
    if not got:
        return text("ch04.nothing_changed_from_pretrained")
    return text("ch04.which_rows_did_batch", rows=sorted(got))


Q1 = Exercise(
    "04.1", names=("changed_rows",),
    title="ch04.q1.title",
    expects="ch04.q1.expects",
    check=_changed_rows,
    hints=("ch04.q1.hint1", "ch04.q1.hint2"),
    solution=("from dltutor import nn, optim\n"
              "vectors = np.arange(24, dtype=np.float32).reshape(6, 4)\n"
              "table = nn.Embedding.from_pretrained(vectors, freeze=False)\n"
              "opt = optim.SGD(table.parameters(), lr=0.1)\n"
              "table(dt.tensor([0, 2])).sum().backward()\n"
              "opt.step()\n"
              "changed_rows = {i for i in range(6) if not np.array_equal(table.weight.numpy()[i], "
              "vectors[i])}"))



# Fresh vocabularies for 04.2: each check draws its own words, order and vector size, so an
# answer that works only for the chapter's six words does not pass.
WORDS = ("the", "cat", "sat", "on", "mat", "dog", "ran", "a", "red", "ball")


def _vocabulary(seed: int) -> tuple[list[str], np.ndarray, dict[str, int]]:
    rng = np.random.default_rng(seed)
    file_words = [str(w) for w in rng.choice(WORDS, size=6, replace=False)]
    vectors = rng.normal(size=(6, int(rng.integers(2, 6)))).astype(np.float32)
    vocab = ["<unk>"] + [str(w) for w in rng.choice(WORDS, size=5, replace=False)]
    return vocab, vectors, {word: i for i, word in enumerate(file_words)}


def _load_known_rows(load_known_rows: Any) -> CheckResult:
    if not callable(load_known_rows):
        return text("ch04.load_known_rows_function")
    for seed in range(4):
        vocab, vectors, word_id = _vocabulary(seed)
        table = nn.Embedding(len(vocab), vectors.shape[1])
        weight, start = table.weight, table.weight.numpy().copy()
        _, failure = called("load_known_rows", load_known_rows, table, vocab, vectors, word_id)
        if failure:
            return failure
        if table.weight is not weight:
            return text("ch04.table_weight_new_object")
        now = table.weight.numpy()
        known = [(row, word) for row, word in enumerate(vocab) if word in word_id]
        for row, word in known:                  # the known words first: the main idea
            if not np.array_equal(now[row], vectors[word_id[word]]):
                return text("ch04.row_hold_file_vector", row=row, word=word, index=word_id[word])
        for row, word in enumerate(vocab):
            if word not in word_id and not np.array_equal(now[row], start[row]):
                return text("ch04.row_word_file_does", row=row, word=word)
        if not table.weight.requires_grad:
            return text("ch04.table_no_longer_trains")
    return None


Q2 = Exercise(
    "04.2", names=("load_known_rows",),
    title="ch04.q2.title",
    expects="ch04.q2.expects",
    check=_load_known_rows,
    hints=("ch04.q2.hint1", "ch04.q2.hint2"),
    solution=("def load_known_rows(table, vocab, vectors, word_id):\n"
              "    known = [i for i, word in enumerate(vocab) if word in word_id]\n"
              "    with dt.no_grad():\n"
              "        table.weight[known] = vectors[[word_id[vocab[i]] for i in known]]"))


def _load_paddle_linear(load_paddle_linear: Any) -> CheckResult:
    if not callable(load_paddle_linear):
        return text("ch04.load_paddle_linear_function")
    rng = np.random.default_rng(4)
    for n_in, n_out in ((3, 5), (6, 2), (4, 4)):      # (4, 4): a square weight fits either way
        fc = nn.Linear(n_in, n_out)
        weight = rng.normal(size=(n_in, n_out)).astype(np.float32)   # Paddle's (in, out)
        bias = rng.normal(size=n_out).astype(np.float32)
        objects = (fc.weight, fc.bias)
        _, failure = called("load_paddle_linear", load_paddle_linear, fc, weight, bias)
        if failure:
            return failure
        if fc.weight is not objects[0] or fc.bias is not objects[1]:
            return text("ch04.layer_holds_new_parameter")
        x = randn(2, n_in)
        with no_grad():
            out = fc(x).numpy()
        if not np.allclose(out, x.numpy() @ weight + bias, atol=1e-5):
            if np.allclose(fc.weight.numpy(), weight, atol=1e-6):
                return text("ch04.square_layer_took_paddle")
            return text("ch04.linear_given_paddle_weight", n_in=n_in, n_out=n_out)
    return None


Q3 = Exercise(
    "04.3", names=("load_paddle_linear",),
    title="ch04.q3.title",
    expects="ch04.q3.expects",
    check=_load_paddle_linear,
    hints=("ch04.q3.hint1", "ch04.q3.hint2"),
    solution=("def load_paddle_linear(fc, weight, bias):\n"
              "    fc.weight.set_value(weight.T)\n"
              "    fc.bias.set_value(bias)"))


EXERCISES = [Q1, Q2, Q3]
