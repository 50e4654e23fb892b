"""Tensor printing at each of PyTorch's switch points, on both sides of each
(dltutor/autograd/printing.py): scientific notation, summarization past 1000 elements with three
at each edge, rows of 80 characters, precision 4, suffixes past 80.

The expected texts here are PyTorch's: tests/frameworks/test_printing_thresholds.py prints the
same cases with PyTorch itself.
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor.autograd.printing import (DECIMALS, EDGE_ITEMS, LINE_WIDTH, THRESHOLD, EntryFormat,
                                       tensor_text)

after = np.nextafter
F32 = np.float32


def test_the_thresholds_are_pytorchs_defaults():
    assert (THRESHOLD, EDGE_ITEMS, LINE_WIDTH, DECIMALS) == (1000, 3, 80, 4)


@pytest.mark.parametrize("values, scientific", [
    (np.array([0.5, 500.0]), False),                       # spread exactly 1000
    (np.array([0.5, after(500.0, np.inf)]), True),         # just over
    (np.array([1.0, 1000.0]), False),
    (np.array([1.0, 1001.0]), True),
    (np.array([1e8, 2e5]), False),                         # largest exactly 1e8
    (np.array([after(1e8, np.inf), 2e5]), True),
    (np.array([1e-4, 0.05]), False),                       # smallest exactly 1e-4
    (np.array([after(1e-4, 0.0), 0.05]), True),
    (np.array([1e-4, 0.05], dtype=F32), True),             # float32's 1e-4 is under 1e-4
    (np.array([0.0, 1e-4, 0.05]), False),                  # a zero is not the smallest
    (np.array([np.inf, 0.5, 400.0]), False),               # nor is inf the largest
    (np.array([-np.inf, np.nan, 2e-4, 0.1]), False),
    (np.array([-0.001, 1.0]), False),                      # magnitudes: 1000 exactly
    (np.array([-0.00099, 1.0]), True),
    (np.array([0.0, np.nan]), False),
])
def test_scientific_notation_switches_exactly_where_pytorch_does(values, scientific):
    assert EntryFormat(values).scientific is scientific
    text = tensor_text(values)
    assert ("e+" in text or "e-" in text) is scientific, text


@pytest.mark.parametrize("values, text", [
    (np.array([0.5, 500.0]), "tensor([  0.5000, 500.0000])"),
    (np.array([1.0, 1001.0]), "tensor([1.0000e+00, 1.0010e+03])"),
    (np.array([1e8, 2e5]), "tensor([100000000.,    200000.])"),
    (np.array([1e-4, 0.05]), "tensor([0.0001, 0.0500])"),
    (np.array([1e-4, 0.05], dtype=F32), "tensor([1.0000e-04, 5.0000e-02])"),
    (np.array([0.99995, 0.5]), "tensor([1.0000, 0.5000])"),
    (np.array([0.12345, 0.5]), "tensor([0.1235, 0.5000])"),
    (np.array([np.nan, 0.5, -np.inf]), "tensor([   nan, 0.5000,   -inf])"),
])
def test_four_decimals_and_one_width_at_the_switch_points(values, text):
    assert tensor_text(values) == text


@pytest.mark.parametrize("shape, summarized", [
    ((1000,), False), ((1001,), True), ((10, 100), False), ((7, 143), True),
    ((1001, 1), True), ((2, 2, 251), True),
])
def test_summarization_starts_past_1000_elements(shape, summarized):
    text = tensor_text(np.arange(int(np.prod(shape)), dtype=F32).reshape(shape))
    assert ("..." in text) is summarized


def test_a_summarized_dimension_shows_three_at_each_edge_and_six_rows_stay():
    text = tensor_text(np.arange(1001, dtype=F32))
    assert text == ("tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])")
    six_rows = tensor_text((np.arange(1002, dtype=F32) % 10 + 1).reshape(6, 167))
    assert six_rows.count("\n") == 5 and six_rows.count("...") == 6
    seven = tensor_text((np.arange(1001, dtype=F32) % 10 + 1).reshape(7, 143))
    assert seven.count("...") == 7                         # 6 rows cut + the row of "..."
    assert "\n        ...,\n" in seven
    column = tensor_text(np.arange(1001, dtype=F32).reshape(1001, 1))
    assert column.splitlines()[3].strip() == "...," and len(column.splitlines()) == 7


def test_the_format_of_a_summarized_tensor_comes_from_its_edges_only():
    values = np.concatenate([np.full(3, 0.5), np.full(1000, 1e-9), np.full(3, 0.25)])
    assert tensor_text(values) == "tensor([0.5000, 0.5000, 0.5000,  ..., 0.2500, 0.2500, 0.2500])"


@pytest.mark.parametrize("unit, per_line", [(1.0, 18), (0.5, 9), (-0.5, 8), (1e-5, 6)])
def test_rows_hold_as_many_entries_as_fit_in_80_characters(unit, per_line):
    values = np.resize(np.array([unit, 1.0] if unit == 1e-5 else [unit], dtype=F32), per_line)
    assert tensor_text(values).count("\n") == 0
    longer = tensor_text(np.resize(values, per_line + 1))
    assert longer.count("\n") == 1
    first, second = longer.splitlines()
    assert len(first) <= LINE_WIDTH and second.startswith(" " * 8)
    assert first.count(",") == per_line                    # every entry and its comma


def test_a_deeper_tensor_starts_further_right_so_fewer_entries_fit():
    # 18 entries of "1." take 72 characters: they fit after "tensor([" (8) and "tensor([["
    # but not after "tensor([[[" (9 + 72 > 80)
    assert tensor_text(np.ones(18, dtype=F32)).count("\n") == 0
    assert tensor_text(np.ones((1, 18), dtype=F32)).count("\n") == 0
    assert tensor_text(np.ones((1, 1, 18), dtype=F32)).count("\n") == 1


@pytest.mark.parametrize("values, breaks", [
    (np.full((2, 7), 1000.0, dtype=F32), False),           # exactly 80 by PyTorch's count
    (np.full((2, 10), 10.0, dtype=F32), True),             # 81
    (np.full(12, 1.0, dtype=F32), False),
    (np.full(13, 1.0, dtype=F32), True),
])
def test_a_suffix_that_ends_exactly_at_80_stays_on_the_line(values, breaks):
    text = repr(dt.tensor(values, requires_grad=True))
    assert text.endswith("\n       requires_grad=True)") is breaks
    assert text.endswith(", requires_grad=True)") is not breaks


def test_a_second_suffix_is_placed_after_the_first_by_the_same_rule():
    text = tensor_text(np.full((2, 7), 1000.0), ["dtype=float64", "requires_grad=True"])
    # the last row (57 characters) + ", dtype=float64" fits; then requires_grad does not
    assert text.endswith("]], dtype=float64,\n       requires_grad=True)")
    short = tensor_text(np.ones(2), ["dtype=float64", "requires_grad=True"])
    assert short == "tensor([1., 1.], dtype=float64, requires_grad=True)"


def test_integers_and_bools_print_whole_and_summarize_past_1000_too():
    assert tensor_text(np.arange(1001)) == "tensor([   0,    1,    2,  ...,  998,  999, 1000])"
    assert tensor_text(np.arange(1001) % 2 == 0) == \
        "tensor([ True, False,  True,  ...,  True, False,  True])"
    assert tensor_text(np.arange(1000)).count("...") == 0
