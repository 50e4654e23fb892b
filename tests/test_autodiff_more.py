"""GradManager (dltutor/autodiff.py) beyond seed 004's loop: attaching twice, callbacks (their
order, their scope, one that raises), and every way a recording ends.

MegEngine's behaviour is cited in notebooks/SOURCES.md (v1.13.4 grad_manager.py): attaching an
attached tensor again appends its callbacks; callbacks run in order, each given the previous
one's gradient; backward ends the recording.
"""
from __future__ import annotations

import pytest

import dltutor as dt
from dltutor import nn
from dltutor.autodiff import GradManager

from bad_input import refused


def test_attaching_twice_keeps_one_entry_in_order_and_returns_the_manager():
    a, b = dt.tensor([1.0]), dt.tensor([2.0])
    gm = GradManager()
    assert gm.attach(a) is gm and gm.attach([b, a]) is gm
    assert gm.attached_tensors() == [a, b]
    with gm:
        gm.backward(a * b)
    assert a.grad.tolist() == [2.0] and b.grad.tolist() == [1.0]    # once each, not twice


def test_attached_tensors_is_a_copy():
    a = dt.tensor([1.0])
    gm = GradManager().attach(a)
    gm.attached_tensors().append(dt.tensor([5.0]))
    gm.attached_tensors().clear()
    assert gm.attached_tensors() == [a]


def test_attaching_a_parameter_frozen_by_requires_grad_false_unfreezes_it():
    layer = nn.Linear(2, 1).requires_grad_(False)
    GradManager().attach(layer.parameters())
    assert layer.weight.requires_grad and layer.bias.requires_grad


def test_callbacks_run_in_order_and_each_gets_the_previous_ones_gradient():
    w = dt.tensor([1.0])
    gm = GradManager().attach(w, callbacks=[lambda p, g: g * 2, lambda p, g: g + 1])
    with gm:
        gm.backward(w * 3)
    assert w.grad.tolist() == [7.0]                         # (3 * 2) + 1, not (3 + 1) * 2


def test_attaching_again_appends_callbacks_as_megengine_does():
    w = dt.tensor([1.0])
    double = lambda p, g: g * 2                             # noqa: E731 - a callback as a MegEngine user writes it
    gm = GradManager().attach(w, callbacks=double).attach(w, callbacks=double)
    with gm:
        gm.backward(w * 3)
    assert w.grad.tolist() == [12.0]                        # doubled twice
    gm.attach(w)                                            # no callbacks: none added
    w.grad = None
    with gm:
        gm.backward(w * 3)
    assert w.grad.tolist() == [12.0]


def test_callbacks_belong_to_their_tensor_and_their_manager():
    a, b = dt.tensor([1.0]), dt.tensor([1.0])
    gm = GradManager().attach(a, callbacks=lambda p, g: g * 10).attach(b)
    other = GradManager().attach(a)
    with gm:
        gm.backward(a + b)
    assert a.grad.tolist() == [10.0] and b.grad.tolist() == [1.0]
    a.grad = None
    with other:
        other.backward(a * 1)
    assert a.grad.tolist() == [1.0]                         # gm's callback is not other's


def test_a_callback_that_raises_ends_the_recording_and_leaves_no_hook_behind():
    w = dt.tensor([1.0])
    calls = []

    def failing(param, grad):
        calls.append(param)
        raise ValueError("callback failed")

    gm = GradManager().attach(w, callbacks=failing)
    with pytest.raises(ValueError, match="callback failed"):
        with gm:
            gm.backward(w * 2)
    assert calls == [w] and w.grad is None
    (w * 3).sum().backward()                                # a plain backward: no callback
    assert w.grad.tolist() == [3.0] and calls == [w]
    gm.record()                                             # the recording had ended
    gm.release()


def test_a_failed_backward_ends_the_recording():
    w, v = dt.tensor([1.0]), dt.tensor([2.0])
    gm = GradManager().attach(w)
    gm.record()
    with pytest.raises(RuntimeError, match="does not require grad"):
        gm.backward(v * 2)                                  # nothing attached reaches it
    refused(lambda: gm.backward(w * 2), RuntimeError, "nothing is being recorded", state=[w])


def test_an_error_inside_the_block_ends_the_recording():
    gm = GradManager().attach(dt.tensor([1.0]))
    with pytest.raises(ZeroDivisionError):
        with gm:
            raise ZeroDivisionError("raised while recording")
    with gm:                                                # a new recording is allowed
        pass


def test_backward_with_nothing_attached_writes_nothing_and_ends_the_recording():
    w = dt.tensor([1.0], requires_grad=True)
    gm = GradManager()
    with gm:
        gm.backward(w * 2)
        refused(lambda: gm.backward(w * 2), RuntimeError, "nothing is being recorded",
                state=[w])
    assert w.grad is None


def test_a_refused_record_leaves_the_recording_running_and_release_twice_is_harmless():
    w = dt.tensor([1.0])
    gm = GradManager().attach(w)
    gm.record()
    refused(gm.record, RuntimeError, "GradManager.record", "already recording")
    gm.backward(w * 2)                                      # still recording: allowed
    assert w.grad.tolist() == [2.0]
    gm.release()
    gm.release()
    refused(lambda: gm.backward(w * 2), RuntimeError, "GradManager.backward", state=[w])


def test_record_again_after_backward_inside_the_same_block():
    w = dt.tensor([1.0])
    gm = GradManager().attach(w)
    with gm:
        gm.backward(w * 2)
        gm.record()
        gm.backward(w * 3)
    assert w.grad.tolist() == [5.0]
    refused(lambda: gm.backward(w * 2), RuntimeError, "nothing is being recorded", state=[w])


def test_a_tensor_attached_but_not_used_keeps_no_gradient():
    a, b = dt.tensor([1.0]), dt.tensor([1.0])
    gm = GradManager().attach([a, b])
    with gm:
        gm.backward(a * 4)
    assert a.grad.tolist() == [4.0] and b.grad is None


@pytest.mark.parametrize("params, callbacks, words", [
    ([dt.tensor([1.0]), "w"], None, ["item 1", "str"]),
    ([dt.tensor([1.0])], [lambda p, g: g, 3], ["callback 1", "int"]),
])
def test_a_refused_second_attach_changes_neither_the_list_nor_the_callbacks(params, callbacks,
                                                                          words):
    w = dt.tensor([1.0])
    gm = GradManager().attach(w, callbacks=lambda p, g: g * 2)
    refused(lambda: gm.attach(params, callbacks=callbacks), TypeError, "GradManager.attach",
            *words, state=params[:1] + [w])
    assert gm.attached_tensors() == [w] and not params[0].requires_grad
    with gm:
        gm.backward(w * 1)
    assert w.grad.tolist() == [2.0]                         # one callback, as before
