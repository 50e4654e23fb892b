"""The workspace pool: borrowed scratch arrays come back only when the op that borrowed them is
done, so reusing them never changes a result (the convolution is its user)."""
import numpy as np
import pytest

import dltutor as dt
from dltutor.autograd import workspace
from dltutor.nn import functional as F


@pytest.fixture(autouse=True)
def empty_pool():
    workspace.clear()
    yield
    workspace.clear()


def test_an_array_given_back_is_lent_again_for_the_same_shape_and_dtype_only():
    a = workspace.borrow(np, (2, 3), np.float32)
    workspace.give_back([a])
    assert workspace.borrow(np, (2, 3), np.float64) is not a
    assert workspace.borrow(np, (3, 2), np.float32) is not a
    assert workspace.borrow(np, (2, 3), "float32") is a
    assert workspace.borrow(np, (2, 3), np.float32) is not a     # lent once, not twice


def test_the_pool_keeps_a_bounded_number_per_shape():
    arrays = [np.empty(3) for _ in range(workspace.KEPT_PER_SHAPE + 3)]
    workspace.give_back(arrays)
    lent = [workspace.borrow(np, (3,), np.float64) for _ in range(len(arrays))]
    assert sum(any(x is a for a in arrays) for x in lent) == workspace.KEPT_PER_SHAPE


def _conv_case(seed):
    rng = np.random.default_rng(seed)
    x = dt.tensor(rng.standard_normal((3, 2, 7, 7)), requires_grad=True)
    w = dt.tensor(rng.standard_normal((4, 2, 3, 3)), requires_grad=True)
    return x, w


def _grads(x, w, loss_of):
    x.grad = w.grad = None
    loss_of(x, w).backward()
    return x.grad.data.copy(), w.grad.data.copy()


def test_two_live_graphs_of_one_conv_shape_never_share_a_patch_matrix():
    x, w = _conv_case(0)
    alone = _grads(x, w, lambda x, w: (F.conv2d(x, w) ** 2).sum())
    first = (F.conv2d(x, w) ** 2).sum()
    second = (F.conv2d(x * 2, w) ** 2).sum()      # borrows while the first graph holds its own
    x.grad = w.grad = None
    first.backward()
    np.testing.assert_allclose(x.grad.data, alone[0], rtol=1e-12)
    np.testing.assert_allclose(w.grad.data, alone[1], rtol=1e-12)
    second.backward()                              # after first's arrays went back to the pool
    assert np.isfinite(x.grad.data).all()


def test_one_conv_used_twice_in_a_graph_matches_float64_finite_differences():
    x, w = _conv_case(1)

    def loss(x, w):
        return (F.conv2d(F.conv2d(x, w, padding=1)[:, :2], w, padding=1) ** 2).sum()

    gx, gw = _grads(x, w, loss)
    eps = 1e-6
    for index in [(0, 0, 1, 1), (2, 1, 4, 0)]:
        xp, xm = x.data.copy(), x.data.copy()
        xp[index] += eps
        xm[index] -= eps
        with dt.no_grad():
            numeric = (loss(dt.tensor(xp), w).item() - loss(dt.tensor(xm), w).item()) / (2 * eps)
        assert gx[index] == pytest.approx(numeric, rel=1e-6)


def test_retain_graph_keeps_the_patch_matrix_for_a_second_backward():
    x, w = _conv_case(2)
    out = (F.conv2d(x, w, stride=2) ** 2).sum()
    out.backward(retain_graph=True)
    once = w.grad.data.copy()
    F.conv2d(x * 3, w, stride=2).sum().backward()   # another conv in between borrows and returns
    w.grad = None
    out.backward()
    np.testing.assert_allclose(w.grad.data, once, rtol=1e-12)
