"""Bad input to dltutor.data (loaders, data sets, collate, the toy data sets): refused, named,
and nothing changed (``refused`` of tests/bad_input.py: the call must raise ``error``, the
message must name the function, argument or key, and every object in ``state`` must be
bit-identical afterwards)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dltutor import data
from dltutor.data import DataLoader, TensorDataset, default_collate

from bad_input import GlobalGenerator, refused

NAN, INF = math.nan, math.inf


# -- data -----------------------------------------------------------------------------------------
@pytest.fixture
def ds():
    return TensorDataset(np.arange(12, dtype=np.float32).reshape(6, 2), np.arange(6) % 2)


@pytest.mark.parametrize("kwargs, error, names", [
    ({"batch_size": 0}, ValueError, ["DataLoader", "batch_size", "0"]),
    ({"batch_size": -1}, ValueError, ["batch_size", "-1"]),
    ({"batch_size": 1.5}, ValueError, ["batch_size", "1.5"]),
    ({"batch_size": True}, ValueError, ["batch_size", "True"]),
    ({"batch_size": "2"}, ValueError, ["batch_size", "'2'"]),
    ({"shuffle": "no"}, TypeError, ["shuffle", "True or False", "'no'"]),
    ({"shuffle": 1}, TypeError, ["shuffle", "1"]),
    ({"drop_last": "False"}, TypeError, ["drop_last", "'False'"]),
    ({"num_workers": -1}, ValueError, ["num_workers", "-1"]),
    ({"num_workers": 1.5}, ValueError, ["num_workers", "1.5"]),
    ({"prefetch_factor": True}, ValueError, ["prefetch_factor", "True"]),
    ({"collate_fn": 5}, TypeError, ["collate_fn", "5"]),
    ({"seed": -1}, ValueError, ["seed", "-1"]),
    ({"seed": "x"}, ValueError, ["seed", "'x'"]),
])
def test_a_data_loader_refuses_bad_arguments_when_it_is_made(ds, kwargs, error, names):
    refused(lambda: DataLoader(ds, **kwargs), error, *names, state=[ds.arrays])


@pytest.mark.parametrize("call, names", [
    (lambda loader: loader.order("x"), ["epoch", "'x'"]),
    (lambda loader: loader.order(-1), ["epoch", "-1"]),
    (lambda loader: loader.set_epoch(1.5), ["epoch", "1.5"]),
])
def test_a_bad_epoch_changes_nothing_in_the_loader(ds, call, names):
    loader = DataLoader(ds, batch_size=2, shuffle=True, seed=0)
    next(iter(loader))
    refused(lambda: call(loader), ValueError, *names, state=[loader])


@pytest.mark.parametrize("arrays, error, names", [
    ((np.zeros((6, 2)), np.zeros(4)), ValueError, ["lengths [6, 4]"]),
    ((["a", "b"],), TypeError, ["argument 0", "<U1"]),
    ((np.zeros(2), np.array(["a", "b"])), TypeError, ["argument 1", "<U1"]),
    ((np.array([1j, 2j]),), TypeError, ["argument 0", "complex128"]),
    ((np.array([b"a", b"b"]),), TypeError, ["argument 0", "S1"]),
    ((np.array([np.datetime64("2020")] * 2),), TypeError, ["argument 0", "datetime64"]),
    (([[1, 2], [3]],), ValueError, ["argument 0", "different lengths"]),
])
def test_a_tensor_dataset_holds_rows_of_numbers(arrays, error, names):
    refused(lambda: TensorDataset(*arrays), error, "TensorDataset", *names)


@pytest.mark.parametrize("index, error, names", [
    (6, IndexError, ["6", "6 samples"]),
    (-7, IndexError, ["-7", "6 samples"]),
    (np.int64(100), IndexError, ["100", "6 samples"]),
    ("a", TypeError, ["'a'", "integers"]),
    (1.0, TypeError, ["1.0", "integers"]),
])
def test_indexing_a_data_set_out_of_range_says_how_long_it_is(ds, index, error, names):
    refused(lambda: ds[index], error, "TensorDataset", *names, state=[ds.arrays])


@pytest.mark.parametrize("samples, names", [
    ([np.array(["a"]), np.array(["b"])], ["<U1"]),
    ([np.complex128(1j), np.complex128(2j)], ["complex128"]),
    ([2**70, 1], ["too large for int64"]),
])
def test_collate_never_makes_a_tensor_of_strings_or_complex_numbers(samples, names):
    refused(lambda: default_collate(samples), TypeError, "cannot batch", *names)


class ShortDataset(data.Dataset):
    """Says it has 5 samples and has 3: a bug in the data set, not in the loader."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return [1.0, 2.0, 3.0][i]


def test_a_data_set_whose_len_and_getitem_disagree_is_named():
    loader = DataLoader(ShortDataset(), batch_size=5)
    refused(lambda: list(loader), IndexError, "ShortDataset[3]", "5 samples", "disagree")


@pytest.mark.parametrize("make, kwargs, error, names", [
    (data.make_moons, {"n": 0}, ValueError, ["n", "0"]),
    (data.make_moons, {"n": -5}, ValueError, ["n", "-5"]),
    (data.make_moons, {"noise": -1}, ValueError, ["noise", "-1"]),
    (data.make_moons, {"noise": NAN}, ValueError, ["noise", "nan"]),
    (data.make_moons, {"seed": -1}, ValueError, ["seed", "-1"]),
    (data.make_moons, {"seed": "x"}, TypeError, ["seed", "'x'"]),
    (data.make_moons, {"seed": 1.5}, TypeError, ["seed", "1.5"]),
    (data.make_moons, {"seed": 2**40}, ValueError, ["seed", "2**32"]),
    (data.make_circles, {"factor": 2}, ValueError, ["factor", "2"]),
    (data.make_circles, {"noise": INF}, ValueError, ["noise", "inf"]),
    (data.make_spirals, {"noise": NAN}, ValueError, ["noise", "nan"]),
    (data.make_spirals, {"seed": "x"}, TypeError, ["seed", "'x'"]),
    (data.make_spirals, {"arms": 1}, ValueError, ["arms", "1"]),
    (data.make_sine, {"low": 3, "high": -3}, ValueError, ["low", "high", "-3"]),
    (data.make_sine, {"low": NAN}, ValueError, ["low", "nan"]),
    (data.make_sine, {"high": -INF}, ValueError, ["high", "inf"]),
    (data.make_sine, {"noise": -1}, ValueError, ["noise", "-1"]),
    (data.make_tokens, {"seed": -1}, ValueError, ["seed", "-1"]),
    (data.make_tokens, {"n": 1.5}, ValueError, ["n", "1.5"]),
    (data.load_digits, {"images": "no"}, TypeError, ["images", "'no'"]),
])
def test_a_toy_data_set_refuses_bad_arguments_by_name(make, kwargs, error, names):
    refused(lambda: make(**kwargs), error, make.__name__, *names, state=[GlobalGenerator()])

