"""Nested gradient modes: blocks and decorators, with and without exceptions."""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt


def records(w):
    """Whether an op on ``w`` records a graph right now."""
    return (w * 2).requires_grad


# --- nested no_grad / enable_grad ------------------------------------------------------------
def test_nested_modes_restore_the_outer_state_on_every_exit():
    """Each block restores the state it found, at every depth, and ops follow the innermost."""
    w = dt.ones(2, requires_grad=True)
    trail = []
    with dt.no_grad():
        trail.append(records(w))
        with dt.enable_grad():
            trail.append(records(w))
            with dt.no_grad():
                trail.append(records(w))
                with dt.no_grad():
                    trail.append(records(w))
                trail.append(records(w))
            trail.append(records(w))
            with dt.enable_grad():
                trail.append(records(w))
            trail.append(records(w))
        trail.append(records(w))
    trail.append(records(w))
    assert trail == [False, True, False, False, False, True, True, True, False, True]
    assert dt.is_grad_enabled()


def test_enable_grad_at_top_level_leaves_recording_on():
    """enable_grad where recording is already on changes nothing on entry or exit."""
    with dt.enable_grad():
        assert dt.is_grad_enabled()
    assert dt.is_grad_enabled()


def test_an_exception_inside_nested_blocks_restores_each_outer_state():
    """An exception leaving an inner block restores that block's outer state; leaving all of
    them restores the state before the first."""
    with dt.no_grad():
        with pytest.raises(ZeroDivisionError):
            with dt.enable_grad():
                assert dt.is_grad_enabled()
                raise ZeroDivisionError("raised inside enable_grad")
        assert not dt.is_grad_enabled()
        with dt.enable_grad():
            with pytest.raises(KeyError):
                with dt.no_grad():
                    raise KeyError("raised inside no_grad")
            assert dt.is_grad_enabled()
        assert not dt.is_grad_enabled()
    assert dt.is_grad_enabled()
    with pytest.raises(ValueError):
        with dt.no_grad():
            with dt.enable_grad():
                raise ValueError("leaves two blocks at once")
    assert dt.is_grad_enabled()


def test_one_mode_object_can_be_entered_again_while_in_use():
    """A ``no_grad()`` object reused at two depths restores the right state at each exit."""
    off = dt.no_grad()
    with off:
        with dt.enable_grad():
            with off:
                assert not dt.is_grad_enabled()
            assert dt.is_grad_enabled()
        assert not dt.is_grad_enabled()
    assert dt.is_grad_enabled()


@dt.no_grad()
def evaluate(w):
    """A decorated function: records nothing, whatever the caller's mode."""
    return w * 2, dt.is_grad_enabled()


@dt.enable_grad()
def train_step(w):
    """A decorated function that records even when called inside no_grad."""
    return w * 2, dt.is_grad_enabled()


def test_no_grad_decorated_function_inside_no_grad_and_enable_grad_blocks():
    """The decorator turns recording off for the call only: the caller's mode comes back
    afterwards, inside a no_grad block and inside an enable_grad block."""
    w = dt.ones(2, requires_grad=True)
    with dt.no_grad():
        out, inside = evaluate(w)
        assert not inside and not out.requires_grad
        assert not dt.is_grad_enabled()
    with dt.no_grad():
        with dt.enable_grad():
            out, inside = evaluate(w)
            assert not inside and not out.requires_grad
            assert dt.is_grad_enabled() and records(w)
        assert not dt.is_grad_enabled()
    assert dt.is_grad_enabled()
    assert evaluate.__name__ == "evaluate" and "records nothing" in evaluate.__doc__


def test_enable_grad_decorated_function_records_inside_no_grad():
    """The mirror image: @enable_grad records inside no_grad, then no_grad holds again."""
    w = dt.ones(2, requires_grad=True)
    with dt.no_grad():
        out, inside = train_step(w)
        assert inside and out.requires_grad
        assert not records(w)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])


def test_decorated_function_that_raises_restores_the_callers_mode():
    """An exception out of a decorated function still restores the caller's mode."""
    @dt.no_grad()
    def broken():
        raise RuntimeError("boom")

    with dt.enable_grad():
        with pytest.raises(RuntimeError):
            broken()
        assert dt.is_grad_enabled()
    with dt.no_grad():
        with pytest.raises(TypeError):
            train_step(None)        # None * 2 raises inside the enable_grad call
        assert not dt.is_grad_enabled()
    assert dt.is_grad_enabled()


def test_decorated_function_calling_itself_restores_at_every_depth():
    """One decorator instance, re-entered by recursion, unwinds state by state."""
    seen = []

    @dt.enable_grad()
    def outer(depth):
        seen.append(dt.is_grad_enabled())
        if depth:
            inner(depth - 1)
            seen.append(dt.is_grad_enabled())

    @dt.no_grad()
    def inner(depth):
        seen.append(dt.is_grad_enabled())
        outer(depth)
        seen.append(dt.is_grad_enabled())

    with dt.no_grad():
        outer(2)
        assert not dt.is_grad_enabled()
    # outer2 on, inner1 off, outer1 on, inner0 off, outer0 on, back: off, on, off, on
    assert seen == [True, False, True, False, True, False, True, False, True]
    assert dt.is_grad_enabled()

