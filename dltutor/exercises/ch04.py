"""The exercises of chapter 04 (setting parameter values: pretrained vectors, lazy layers).

>>> Q1.verdict({"changed_rows": []}).message
'Exercise 04.1: not yet. Nothing changed? from_pretrained freezes by default: pass freeze=False so the table trains.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..autograd import no_grad, randn
from ..i18n import sentence
from .answers import called
from .checker import CheckResult, Exercise


def _changed_rows(changed_rows: Any) -> CheckResult:
    got = {int(i) for i in changed_rows}
    if got == {0, 2}:
        return None, "The gradient of an embedding is zero in every row that was not looked up."
    if len(got) == 6:
        return ("Only the looked-up rows get a gradient; the others have gradient 0 and plain "
                "SGD leaves them exactly as they were.")
    if not got:
        return ("Nothing changed? from_pretrained freezes by default: pass freeze=False so the "
                "table trains.")
    return sentence("{rows}: which rows did the batch look up?", rows=sorted(got))


Q1 = Exercise(
    "04.1", names=("changed_rows",),
    title="The rows an embedding step changes",
    expects="a set or list of row numbers",
    check=_changed_rows,
    hints=("table = nn.Embedding.from_pretrained(vectors, freeze=False) for a (6, 4) array of "
           "vectors; one SGD step on table(dt.tensor([0, 2])).sum().",
           "Compare table.weight.numpy() before and after: rows where anything differs."),
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
        return "load_known_rows should be a function of (table, vocab, vectors, word_id)."
    for seed in range(4):
        vocab, vectors, word_id = _vocabulary(seed)
        table = nn.Embedding(len(vocab), vectors.shape[1])
        weight, start = table.weight, table.weight.numpy().copy()
        _, failure = called("load_known_rows", load_known_rows, table, vocab, vectors, word_id)
        if failure:
            return failure
        if table.weight is not weight:
            return ("The table's weight is a new object now: an optimizer made before still "
                    "holds the old one. Copy the rows into the weight in place.")
        now = table.weight.numpy()
        known = [(row, word) for row, word in enumerate(vocab) if word in word_id]
        for row, word in known:                  # the known words first: the main idea
            if not np.array_equal(now[row], vectors[word_id[word]]):
                return sentence("Row {row} is {word!r}: it should hold the file's vector "
                                "number {index} (look it up with word_id).",
                                row=row, word=word, index=word_id[word])
        for row, word in enumerate(vocab):
            if word not in word_id and not np.array_equal(now[row], start[row]):
                return sentence("Row {row} is {word!r}, a word the file does not know: leave "
                                "its random start as it was.", row=row, word=word)
        if not table.weight.requires_grad:
            return "The table no longer trains: copy the rows in without changing requires_grad."
    return None


Q2 = Exercise(
    "04.2", names=("load_known_rows",),
    title="Write load_known_rows",
    expects="a function of (table, vocab, vectors, word_id)",
    check=_load_known_rows,
    hints=("Row i of the table is the word vocab[i]; its vector, when the file has one, is "
           "vectors[word_id[vocab[i]]].",
           "Assign into table.weight[rows] inside `with dt.no_grad():`, as the chapter does "
           "for my_vocab."),
    solution=("def load_known_rows(table, vocab, vectors, word_id):\n"
              "    known = [i for i, word in enumerate(vocab) if word in word_id]\n"
              "    with dt.no_grad():\n"
              "        table.weight[known] = vectors[[word_id[vocab[i]] for i in known]]"))


def _load_paddle_linear(load_paddle_linear: Any) -> CheckResult:
    if not callable(load_paddle_linear):
        return "load_paddle_linear should be a function of (fc, weight, bias)."
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
            return ("The layer holds new parameter objects now: an optimizer made before still "
                    "holds the old ones. Copy the values in with set_value.")
        x = randn(2, n_in)
        with no_grad():
            out = fc(x).numpy()
        if not np.allclose(out, x.numpy() @ weight + bias, atol=1e-5):
            if np.allclose(fc.weight.numpy(), weight, atol=1e-6):
                return ("The square layer took the Paddle weight as it is: Paddle computes "
                        "x @ W, dltutor x @ W.T, so transpose it.")
            return sentence("A Linear({n_in}, {n_out}) given Paddle's weight and bias should "
                            "compute x @ weight + bias.", n_in=n_in, n_out=n_out)
    return None


Q3 = Exercise(
    "04.3", names=("load_paddle_linear",),
    title="Write load_paddle_linear",
    expects="a function of (fc, weight, bias)",
    check=_load_paddle_linear,
    hints=("Paddle stores a Linear weight as (in_features, out_features); fc.weight has shape "
           "(out_features, in_features).",
           "fc.weight.set_value(weight.T); fc.bias.set_value(bias)"),
    solution=("def load_paddle_linear(fc, weight, bias):\n"
              "    fc.weight.set_value(weight.T)\n"
              "    fc.bias.set_value(bias)"))


EXERCISES = [Q1, Q2, Q3]
