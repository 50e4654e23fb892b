"""Chapter 04's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch04.py)."""
from __future__ import annotations

import numpy as np

import dltutor as dt
from dltutor import nn


def load_known_rows(table, vocab, vectors, word_id):
    known = [i for i, word in enumerate(vocab) if word in word_id]
    with dt.no_grad():
        table.weight[known] = vectors[[word_id[vocab[i]] for i in known]]


def known_rows_by_position(table, vocab, vectors, word_id):
    """Copies vector i into row i, as if the file and the vocabulary had one order."""
    with dt.no_grad():
        table.weight[...] = vectors


def known_rows_into_a_new_parameter(table, vocab, vectors, word_id):
    values = table.weight.numpy().copy()
    for i, word in enumerate(vocab):
        if word in word_id:
            values[i] = vectors[word_id[word]]
    table.weight = nn.Parameter(values)


def known_rows_and_zeros(table, vocab, vectors, word_id):
    values = np.zeros(table.weight.shape, dtype=np.float32)
    for i, word in enumerate(vocab):
        if word in word_id:
            values[i] = vectors[word_id[word]]
    table.weight.set_value(values)


def load_paddle_linear(fc, weight, bias):
    fc.weight.set_value(weight.T)
    fc.bias.set_value(bias)


def paddle_linear_untransposed(fc, weight, bias):
    fc.weight.set_value(weight)
    fc.bias.set_value(bias)


def paddle_linear_as_new_parameters(fc, weight, bias):
    fc.weight = nn.Parameter(weight.T.copy())
    fc.bias = nn.Parameter(bias.copy())


CASES = {
    "04.1": ({"changed_rows": [2, 0]},
             [({"changed_rows": range(6)}, ["looked-up"]),
              ({"changed_rows": []}, ["freeze=False"])]),
    "04.2": ({"load_known_rows": load_known_rows},
             [({"load_known_rows": known_rows_by_position}, ["word_id"]),
              ({"load_known_rows": known_rows_into_a_new_parameter}, ["new object"]),
              ({"load_known_rows": known_rows_and_zeros}, ["does not know"]),
              ({"load_known_rows": "vectors"}, ["function"])]),
    "04.3": ({"load_paddle_linear": load_paddle_linear},
             [({"load_paddle_linear": paddle_linear_untransposed}, ["raised ValueError"]),
              ({"load_paddle_linear": paddle_linear_as_new_parameters}, ["new parameter objects"]),
              ({"load_paddle_linear": None}, ["function"])]),
}

SELF_CONTAINED = {"04.1", "04.2", "04.3"}
