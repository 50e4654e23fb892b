"""A tensor prints as PyTorch prints it: the same text for the same values.

dltutor/autograd/printing.py writes PyTorch's layout out (one format and width for the whole
tensor, four decimals, scientific notation by the same rule, rows of 80 characters, the first
and last three of each dimension past 1000 elements, then dtype and grad_fn). Here PyTorch
prints every case itself, and Hypothesis draws many more: shapes, dtypes, magnitudes, whole
numbers, zeros, NaN and inf. The dtype reads ``float64`` in dltutor and ``torch.float64`` in
PyTorch (six characters longer, so PyTorch may move what follows the values to a new line
where dltutor does not), and a grad_fn carries PyTorch's version suffix (``MulBackward0``):
those are the only differences allowed.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dltutor as dt

from claims import claim

# Printing never warns (PyTorch does not): a NumPy warning here is a failure.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def torch_text(t: torch.Tensor) -> str:
    """PyTorch's repr with its two spellings made dltutor's."""
    return re.sub(r"(Backward)\d+>", r"\1>", repr(t).replace("torch.", ""))


def same_text(mine: str, theirs: str) -> bool:
    """Equal, where a named dtype may put the suffixes on another line (see above)."""
    if "dtype=" in theirs:
        mine, theirs = (re.sub(r",\n *(?=[a-z_]+=)", ", ", text) for text in (mine, theirs))
    return mine == theirs


CASES = {
    "whole numbers": np.array([2.0, 4.0], dtype=np.float32),
    "decimals": np.array([0.0, 1.123456, 12.358], dtype=np.float32),
    "scientific by ratio": np.array([1.0, 2000.0], dtype=np.float32),
    "scientific, tiny": np.array([1e-5, 0.5]),
    "scientific, huge": np.array([1e9, 3.0]),
    "scientific, a spread past float64": np.array([1e-300, 1e300]),
    "zeros only": np.zeros(3, dtype=np.float32),
    "negative zero": np.array([-0.0, 1.0], dtype=np.float32),
    "nan and inf only": np.array([np.nan, np.inf, -np.inf]),
    "nan among decimals": np.array([np.nan, 0.5, -1.25], dtype=np.float32),
    "a scalar": np.array(3.5, dtype=np.float32),
    "a whole scalar": np.array(-2.0, dtype=np.float32),
    "integers": np.array([-3, 10, 200]),
    "int32": np.array([1, 2], dtype=np.int32),
    "bools": np.array([True, False]),
    "a long row": np.linspace(-1, 1, 40, dtype=np.float32),
    "a matrix": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "3-D": np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 12,
    "summarized vector": np.arange(2000, dtype=np.float32) / 3,
    "summarized matrix": np.arange(3000, dtype=np.float64).reshape(60, 50),
    "float16": np.array([0.1, 2.5], dtype=np.float16),
    "empty": np.zeros(0, dtype=np.float32),
    "empty 2-D": np.zeros((0, 3), dtype=np.float32),
    "empty int": np.zeros(0, dtype=np.int64),
}


@claim("torch-prints-the-same")
@pytest.mark.parametrize("name", list(CASES))
def test_every_kind_of_tensor_prints_as_in_pytorch(name):
    values = CASES[name]
    assert same_text(repr(dt.tensor(values)), torch_text(torch.tensor(values))), name


@claim("torch-prints-the-same")
def test_gradients_and_their_suffixes_print_as_in_pytorch():
    mine = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    theirs = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert repr(mine) == torch_text(theirs)
    assert repr(mine * 1.5) == torch_text(theirs * 1.5)
    (mine * mine).sum().backward()
    (theirs * theirs).sum().backward()
    assert repr(mine.grad) == torch_text(theirs.grad)
    long_mine = dt.tensor(np.linspace(0, 1, 9), requires_grad=True)     # float64: two suffixes
    long_theirs = torch.tensor(np.linspace(0, 1, 9), requires_grad=True)
    assert same_text(repr(long_mine * 3), torch_text(long_theirs * 3))


FLOATS = st.one_of(st.floats(-1e3, 1e3, width=32), st.floats(-2.0 ** -10, 2.0 ** -10, width=32),
                   st.floats(allow_nan=True, allow_infinity=True, width=32),
                   st.integers(-50, 50).map(float), st.just(0.0))


@claim("torch-prints-the-same")
@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_random_float_tensors_print_as_in_pytorch(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7))
    values = data.draw(hnp.arrays(dtype, shape, elements=FLOATS))
    assert same_text(repr(dt.tensor(values)), torch_text(torch.tensor(values)))


@claim("torch-prints-the-same")
@settings(max_examples=100, deadline=None)
@given(values=hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=9),
                         elements=st.integers(-10**12, 10**12)))
def test_random_integer_tensors_print_as_in_pytorch(values):
    assert repr(dt.tensor(values)) == torch_text(torch.tensor(values))


# ``grad_fn=<...>`` names the op that made a tensor. Where dltutor's op is PyTorch's op, the
# names agree (PyTorch adds a version digit: MulBackward0). Where PyTorch records the kernel it
# ran rather than the function you called, they differ; the README names the differences.
# Each row: what to compute (the same code in both), dltutor's name, PyTorch's (None: the same).
M = np.arange(1.0, 13.0).reshape(3, 4) / 7
GRAD_FN_NAMES = [
    ("a * b", lambda lib, a: a * a, "Mul", None),
    ("a + 1", lambda lib, a: a + 1, "Add", None),
    ("a - b", lambda lib, a: a - a * 2, "Sub", None),
    ("a / 2", lambda lib, a: a / 2, "Div", None),
    ("a ** 3", lambda lib, a: a ** 3, "Pow", None),
    ("a ** b", lambda lib, a: a ** (a * 1), "Pow", None),
    ("exp", lambda lib, a: a.exp(), "Exp", None),
    ("sqrt", lambda lib, a: a.sqrt(), "Sqrt", None),
    ("relu", lambda lib, a: lib.relu(a), "Relu", None),
    ("tanh", lambda lib, a: lib.tanh(a), "Tanh", None),
    ("sigmoid", lambda lib, a: lib.sigmoid(a), "Sigmoid", None),
    ("gelu", lambda lib, a: lib.nn.functional.gelu(a), "Gelu", None),
    ("sum", lambda lib, a: a.sum(), "Sum", None),
    ("mean over a dim", lambda lib, a: a.mean(1), "Mean", None),
    ("max of all", lambda lib, a: a.max(), "Max", None),
    ("softmax", lambda lib, a: lib.softmax(a, 1), "Softmax", None),
    ("permute", lambda lib, a: a.permute(1, 0), "Permute", None),
    ("Linear layer", lambda lib, a: lib.nn.functional.linear(a, a[:2] * 1, a[0, :2] * 1),
     "Linear", "Addmm"),
    ("cross_entropy", lambda lib, a: lib.nn.functional.cross_entropy(a, lib.tensor([0, 3, 1])),
     "CrossEntropy", "NllLoss"),
    ("mse_loss", lambda lib, a: lib.nn.functional.mse_loss(a, a * 0), "MSELoss", "MseLoss"),
    ("flatten", lambda lib, a: a.flatten(), "Reshape", "View"),
    ("clamp", lambda lib, a: a.clamp(0.2, 1.0), "Clip", "Clamp"),
    ("a[0]", lambda lib, a: a[0], "GetItem", "Select"),
]


def grad_fn_name(out) -> str:
    """``MulBackward0`` -> ``Mul``; dltutor's repr ``<MulBackward>`` -> ``Mul``."""
    return re.fullmatch(r"<?(\w+?)Backward\d*>?", str(out.grad_fn).split(" ")[0]).group(1)


@claim("torch-prints-the-same")
@pytest.mark.parametrize("code, compute, ours, pytorchs", GRAD_FN_NAMES,
                         ids=[row[0] for row in GRAD_FN_NAMES])
def test_grad_fn_names_the_op_as_in_pytorch_or_as_the_readme_says(code, compute, ours, pytorchs):
    mine = compute(dt, dt.tensor(M, requires_grad=True))
    theirs = compute(torch, torch.tensor(M, requires_grad=True))
    assert (grad_fn_name(mine), grad_fn_name(theirs)) == (ours, pytorchs or ours), code
