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
