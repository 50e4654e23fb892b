"""A tensor prints as PyTorch prints it at each of PyTorch's switch points, on both sides of
each (dltutor/autograd/printing.py): scientific notation (largest over 1e8, smallest under
1e-4, a spread over 1000), summarization (over 1000 elements, three at each edge of a dimension
longer than six), rows of 80 characters, and the suffixes moved to a new line past 80.

test_printing.py draws random tensors; random draws rarely land exactly on a threshold, so
here every case sits on one, or one step past it.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import dltutor as dt

from claims import claim
from test_printing import same_text, torch_text

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

after = np.nextafter
F32, F64 = np.float32, np.float64

SCIENTIFIC = {
    "spread exactly 1000": np.array([0.5, 500.0]),
    "spread just over 1000": np.array([0.5, after(500.0, np.inf)]),
    "whole numbers, spread 1000": np.array([1.0, 1000.0]),
    "whole numbers, spread 1001": np.array([1.0, 1001.0]),
    "largest exactly 1e8": np.array([1e8, 2e5]),
    "largest just over 1e8": np.array([after(1e8, np.inf), 2e5]),
    "whole, largest 1e8 in float32": np.array([1e8, 1e6], dtype=F32),
    "whole, largest 1e8 + 8 in float32": np.array([1e8 + 8, 1e6], dtype=F32),
    "smallest exactly 1e-4 (float64)": np.array([1e-4, 0.05]),
    "smallest just under 1e-4 (float64)": np.array([after(1e-4, 0.0), 0.05]),
    "1e-4 in float32 is under 1e-4": np.array([1e-4, 0.05], dtype=F32),
    "smallest just over 1e-4 in float32": np.array([after(F32(1e-4), F32(1)), 0.05], dtype=F32),
    "a spread of 1000 made by a negative": np.array([-0.001, 1.0]),
    "zeros do not count as the smallest": np.array([0.0, 1e-4, 0.05]),
    "inf does not count as the largest": np.array([np.inf, 0.5, 400.0]),
    "nan does not count": np.array([np.nan, 2e-4, 0.1]),
    "float16 at its smallest normal": np.array([6.104e-05, 0.5], dtype=np.float16),
    "rounding to four decimals: 0.99995": np.array([0.99995, 0.5]),
    "rounding to four decimals: 9.99995e-5 is scientific": np.array([9.99995e-05, 0.05]),
}


@claim("torch-prints-the-same")
@pytest.mark.parametrize("name", list(SCIENTIFIC))
def test_the_switch_to_scientific_notation_is_pytorchs_on_both_sides(name):
    values = SCIENTIFIC[name]
    assert same_text(repr(dt.tensor(values)), torch_text(torch.tensor(values))), name


SUMMARIZED = {
    "1000 elements: all": np.arange(1000, dtype=F32),
    "1001 elements: the edges": np.arange(1001, dtype=F32),
    "1000 as 10 x 100": np.arange(1000, dtype=F32).reshape(10, 100),
    "1001 as 7 x 143": np.arange(1001, dtype=F32).reshape(7, 143),
    "1002 as 6 x 167: six rows stay": np.arange(1002, dtype=F32).reshape(6, 167),
    "1001 as 1001 x 1": np.arange(1001, dtype=F32).reshape(1001, 1),
    "1004 as 2 x 2 x 251": np.arange(1004, dtype=F32).reshape(2, 2, 251),
    "1008 as 7 x 144 x 1": np.arange(1008, dtype=F32).reshape(7, 144, 1),
    "the format comes from the edges only": np.concatenate(
        [np.full(3, 0.5), np.full(1000, 1e-9), np.full(3, 0.25)]),
    "1001 integers": np.arange(1001) * 7,
    "1001 bools": np.arange(1001) % 3 == 0,
}


@claim("torch-prints-the-same")
@pytest.mark.parametrize("name", list(SUMMARIZED))
def test_summarization_starts_past_1000_elements_with_three_at_each_edge(name):
    values = SUMMARIZED[name]
    assert same_text(repr(dt.tensor(values)), torch_text(torch.tensor(values))), name


# One value of each printed width: "1." (2), "0.5000" (6), "-0.5000" (7), "1.0000e-05" (10),
# integers of 1 to 12 digits.
WIDTHS = [np.array([1.0], dtype=F32), np.array([0.5], dtype=F32), np.array([-0.5], dtype=F32),
          np.array([1e-5, 1.0]), *(np.array([10 ** k]) for k in range(0, 12, 2))]


@claim("torch-prints-the-same")
@pytest.mark.parametrize("unit", WIDTHS, ids=lambda a: f"{a.dtype}-{a[0]:g}")
def test_rows_break_where_pytorchs_80_characters_break_them(unit):
    for n in range(1, 40):
        values = np.resize(unit, n)
        for shaped in (values, np.stack([values, values]), values.reshape(1, 1, n)):
            mine, theirs = repr(dt.tensor(shaped)), torch_text(torch.tensor(shaped))
            assert same_text(mine, theirs), (n, shaped.shape, mine, theirs)


@claim("torch-prints-the-same")
@pytest.mark.parametrize("dtype", [F32, F64])
def test_the_suffixes_move_to_a_new_line_exactly_where_pytorchs_do(dtype):
    for unit in (1.0, 0.5, -0.25):
        for n in range(1, 30):
            values = np.full(n, unit, dtype=dtype)
            mine = dt.tensor(values, requires_grad=True)
            theirs = torch.tensor(values, requires_grad=True)
            assert same_text(repr(mine), torch_text(theirs)), (unit, n)
    # (grad_fn is not compared here: PyTorch's name is one character longer, MulBackward0, so
    # its line breaks one character earlier; test_printing.py allows that difference)


@claim("torch-prints-the-same")
@pytest.mark.parametrize("values, breaks", [
    # PyTorch counts the last line's length + 1 (for the ")" to come), + ", " + the suffix:
    (np.full((2, 7), 1000.0, dtype=F32), False),    # exactly 80 by that count
    (np.full((2, 10), 10.0, dtype=F32), True),      # 81
    (np.full(12, 1.0, dtype=F32), False),
    (np.full(13, 1.0, dtype=F32), True),
])
def test_a_suffix_that_ends_exactly_at_80_stays_on_the_line(values, breaks):
    mine = repr(dt.tensor(values, requires_grad=True))
    assert mine == torch_text(torch.tensor(values, requires_grad=True))
    assert (",\n" in mine and mine.rstrip(")").endswith("\n       requires_grad=True")) is breaks
