"""The marker that ties a framework test to the chapter claims it proves.

>>> @claim("torch-example")
... def test_example(): pass
>>> test_example.pytestmark[0].args
('torch-example',)
"""
import pytest


def claim(*ids: str):
    """Mark a test as the proof of the claims ``ids`` (chapter cells tagged ``claim-ID``)."""
    return pytest.mark.claim(*ids)


def row(table: str, label: str, cell: str):
    """Mark a test as the proof of one cell of a names table: the row ``label`` of the table
    whose claim id is ``table`` (``torch-names-04``: chapter 04's PyTorch column), a cell that
    reads ``cell``. tests/notebooks/test_table_cells.py checks that every PyTorch and Paddle
    cell has such a test, and that the cell still reads what the test proved: change the cell,
    and the test is read again.

    >>> @row("torch-names-04", "change entries", "`with torch.no_grad(): p[0, 0] = 42`")
    ... def test_example(): pass
    >>> test_example.pytestmark[0].args[:2]
    ('torch-names-04', 'change entries')
    """
    return pytest.mark.row(table, label, cell)
