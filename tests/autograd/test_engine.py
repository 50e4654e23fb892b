"""The backward engine's rules, grad modes, hooks, anomaly detection, dtypes and error messages."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import dltutor as dt
from dltutor.nn import functional as F


# --- backward ----------------------------------------------------------------------------------
def test_a_100000_op_chain_backpropagates_without_recursion():
    x = dt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + x
    y.backward()
    assert x.grad.item() == 100_001


def test_leaf_gradients_accumulate_across_backward_calls():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 6.0])
    w.zero_grad()
    assert w.grad is None


def test_intermediate_gradients_are_dropped_unless_retained():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    kept = x * 3
    kept.retain_grad()
    (h.sum() + kept.sum()).backward()
    assert h.grad is None
    np.testing.assert_array_equal(kept.grad.numpy(), [1.0, 1.0])


def test_graph_is_freed_and_a_second_backward_is_a_clear_error():
    x = dt.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = dt.tensor([2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0


def test_freed_graph_releases_saved_arrays():
    x = dt.tensor(np.ones(1000), requires_grad=True)
    h = dt.exp(x)
    saved = weakref.ref(h.grad_fn.out)
    loss = h.sum()
    del h
    loss.backward()
    gc.collect()
    assert saved() is None


def test_backward_on_a_non_scalar_needs_a_gradient():
    y = dt.ones(3, 2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"one-element tensor.*shape \(3, 2\).*\.sum\(\)"):
        y.backward()
    y.backward(dt.ones(3, 2))  # fine with an explicit gradient


def test_backward_gradient_of_the_wrong_shape_is_an_error():
    y = dt.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"grad has shape \(2,\).*shape \(3,\)"):
        y.backward(dt.ones(2))


def test_backward_on_a_tensor_without_grad_explains_why():
    with pytest.raises(RuntimeError, match="does not require grad"):
        dt.ones(2).sum().backward()


def test_backward_on_a_leaf():
    x = dt.tensor([3.0], requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_a_tensor_used_twice_gets_the_sum_of_both_gradients():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    (h * 3 + h * 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [14.0, 14.0])


def test_gradients_have_their_tensors_shape_when_broadcast():
    # DeZero's MSE returned (5, 5) gradients for (5, 1) against (5,); ours keep the shapes.
    a = dt.tensor(np.ones((5, 1)), requires_grad=True)
    b = dt.tensor(np.ones(5), requires_grad=True)
    with pytest.warns(UserWarning, match="broadcast"):
        F.mse_loss(a, b).backward()
    assert a.grad.shape == (5, 1) and b.grad.shape == (5,)


def test_grad_dtype_follows_the_tensor():
    w = dt.tensor([1.0, 2.0], requires_grad=True)  # float32
    (w * dt.tensor(np.array([1.0, 1.0]))).sum().backward()  # float64 upstream
    assert w.grad.dtype == np.float32


# --- grad modes, detach, hooks ----------------------------------------------------------------
def test_no_grad_records_nothing_and_restores():
    w = dt.ones(2, requires_grad=True)
    with dt.no_grad():
        y = w * 2
        assert not dt.is_grad_enabled()
    assert dt.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_as_decorator():
    @dt.no_grad()
    def evaluate(w):
        return w * 2

    assert not evaluate(dt.ones(1, requires_grad=True)).requires_grad


def test_detach_cuts_everything_upstream():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    w = dt.tensor([3.0, 4.0], requires_grad=True)
    stage1 = x * 2
    stage2 = stage1.detach() * w
    stage2.sum().backward()
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0])
    assert np.shares_memory(stage1.data, stage1.detach().data)


def test_hook_can_replace_the_gradient_and_be_removed():
    w = dt.tensor([1.0, 1.0], requires_grad=True)
    handle = w.register_hook(lambda g: g * 0)
    (w * 5).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    handle.remove()
    w.zero_grad()
    (w * 5).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0])


def test_a_hook_on_a_tensor_used_twice_fires_once_with_the_sum():
    w = dt.tensor([1.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.item()))
    (w * 2 + w * 3).sum().backward()
    assert seen == [5.0]


def test_hook_on_an_intermediate_tensor():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10)
    (h * h).sum().backward()
    np.testing.assert_array_equal(seen[0], [4.0, 8.0])
    np.testing.assert_array_equal(x.grad.numpy(), [80.0, 160.0])


def test_hook_returning_a_wrong_shape_is_an_error():
    w = dt.ones(2, requires_grad=True)
    w.register_hook(lambda g: dt.ones(3))
    with pytest.raises(RuntimeError, match=r"returned shape \(3,\)"):
        (w * 2).sum().backward()


# --- anomaly detection ----------------------------------------------------------------------
def test_detect_anomaly_names_the_first_op_producing_nan_in_forward():
    x = dt.tensor([-1.0, 4.0], requires_grad=True)
    with dt.detect_anomaly():
        h = x * 2
        with pytest.raises(dt.AnomalyError, match=r"sqrt produced nan in its forward.*\n.*\(2,\)"):
            dt.sqrt(h)


def test_detect_anomaly_blames_upstream_when_inputs_were_already_bad():
    bad = dt.tensor([np.nan, 1.0])
    with dt.detect_anomaly():
        with pytest.raises(dt.AnomalyError, match="already held NaN/Inf"):
            bad * 2


def test_detect_anomaly_catches_nan_in_backward():
    x = dt.tensor([0.0], requires_grad=True)
    y = dt.sqrt(x)  # forward is fine (0), backward divides by 0
    with dt.detect_anomaly():
        with pytest.raises(dt.AnomalyError, match="sqrt produced inf in its backward"):
            y.sum().backward()


def test_without_anomaly_mode_nan_passes_silently_like_pytorch(recwarn):
    y = dt.log(dt.tensor([0.0, -1.0]))
    assert np.isneginf(y.numpy()[0]) and np.isnan(y.numpy()[1])
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# --- dtypes -----------------------------------------------------------------------------------
def test_dtype_policy():
    assert dt.tensor([1.0, 2.0]).dtype == dt.float32
    assert dt.tensor([1, 2]).dtype == dt.int64
    assert dt.tensor(np.zeros(2)).dtype == dt.float64
    assert dt.tensor(np.zeros(2, np.float32)).dtype == dt.float32
    assert dt.tensor([1.0], dtype="float64").dtype == dt.float64
    assert dt.zeros(2).dtype == dt.float32 and dt.rand(2).dtype == dt.float32
    assert (dt.tensor([1.0]) * 2).dtype == dt.float32     # Python numbers do not promote
    assert (dt.tensor([1, 2]) * 0.5).dtype == dt.float32  # int * float is float32, as in torch
    assert (dt.tensor([1, 2]) / 2).dtype == dt.float32
    assert (dt.tensor([1.0]) + dt.tensor(np.ones(1))).dtype == dt.float64


def test_only_float_tensors_can_require_grad():
    with pytest.raises(TypeError, match="only floating-point.*int64"):
        dt.tensor([1, 2], requires_grad=True)


def test_tensor_copies_its_input():
    a = np.zeros(3)
    t = dt.tensor(a)
    a[0] = 5
    assert t.numpy()[0] == 0


def test_size_is_a_count_and_calling_it_gives_the_shape():
    t = dt.zeros(2, 3)
    assert t.size == 6 and t.size() == (2, 3) and t.size(1) == 3 and t.numel() == 6


def test_item_on_a_big_tensor_explains():
    with pytest.raises(ValueError, match=r"exactly one element.*\(2, 2\)"):
        dt.zeros(2, 2).item()


def test_repr_looks_like_pytorch():
    assert repr(dt.tensor([1.0, 2.0], requires_grad=True)) == \
        "tensor([1., 2.], requires_grad=True)"
    assert "grad_fn=<MulBackward>" in repr(dt.ones(1, requires_grad=True) * 2)
    assert "dtype=float64" in repr(dt.tensor(np.ones(1)))


def test_comparisons_give_boolean_tensors():
    t = dt.tensor([1.0, 2.0, 3.0])
    assert (t > 1.5).tolist() == [False, True, True]
    assert (t == dt.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]


def test_setitem_under_no_grad_and_refused_otherwise():
    w = dt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w[0] = 1.0
    with dt.no_grad():
        w[0] = 1.0
    assert w.tolist() == [1.0, 0.0, 0.0]


# --- errors that name the op and the shapes ---------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: dt.ones(2, 3) @ dt.ones(4, 5), r"matmul: \(2, 3\) @ \(4, 5\): inner dimensions 3 and 4 differ"),
    (lambda: dt.ones(2, 2, 3) @ dt.ones(3, 3, 1), r"matmul: .*batch dimensions"),
    (lambda: dt.ones(2, 3) + dt.ones(4), r"add: shapes \(2, 3\) and \(4,\) do not broadcast"),
    (lambda: dt.ones(2, 3) * dt.ones(2), r"mul: shapes \(2, 3\) and \(2,\)"),
    (lambda: dt.ones(6).reshape(4, 2), r"reshape: cannot reshape.*\(6,\).*\(4, 2\)"),
    (lambda: dt.ones(2, 3).sum(axis=2), r"sum: dimension 2 is out of range.*2 dimension"),
    (lambda: dt.linear(dt.ones(2, 3), dt.ones(4, 5)), r"linear: input of shape \(2, 3\) has 3 features.*\(4, 5\)"),
    (lambda: F.cross_entropy(dt.ones(2, 3), dt.tensor([0, 3])), r"label 3 is out of range for 3 classes"),
    (lambda: F.cross_entropy(dt.ones(2, 3), dt.tensor([-1, 0])), r"label -1 is out of range for 3 classes"),
    (lambda: F.cross_entropy(dt.ones(2, 3), dt.tensor([0, -1], dtype=dt.int32)), r"label -1 is out of range"),
    (lambda: F.cross_entropy(dt.ones(2, 3), dt.tensor([0.0, 1.0])), r"labels must be integer"),
    (lambda: F.cross_entropy(dt.ones(2, 3), dt.tensor([0, 1, 2])), r"need labels of shape \(2,\)"),
    (lambda: F.conv2d(dt.ones(1, 2, 5, 5), dt.ones(3, 1, 3, 3)), r"conv2d: input has 2 channels.*expects 1"),
    (lambda: F.conv2d(dt.ones(1, 1, 2, 2), dt.ones(1, 1, 3, 3)), r"3x3 kernel does not fit.*2x2"),
    (lambda: F.embedding(dt.tensor([5]), dt.ones(3, 2)), r"index 5 is out of range for a table of 3 rows"),
    (lambda: dt.concat([dt.ones(2, 3), dt.ones(2, 4)]), r"concat along axis 0.*\(2, 3\), \(2, 4\)"),
    (lambda: dt.stack([dt.ones(2), dt.ones(3)]), r"stack: all tensors must have the same shape"),
    (lambda: dt.ones(2, 3).permute(0, 0), r"permute: \(0, 0\) is not an ordering"),
    (lambda: dt.ones(3)[5], r"indexing a tensor of shape \(3,\)"),
    (lambda: F.mse_loss(dt.ones(2), dt.ones(2), reduction="avg"), r"reduction must be one of"),
    (lambda: F.batch_norm(dt.ones(4, 3), None, None, dt.ones(2), training=True), r"weight has shape \(2,\).*3 channels"),
])
def test_shape_errors_name_the_op_and_the_shapes(make, message):
    with pytest.raises((ValueError, TypeError, IndexError), match=message):
        make()


# --- numerics learners meet ---------------------------------------------------------------------
def test_softmax_family_is_stable_at_extreme_inputs():
    x = dt.tensor([-1000.0, 1.0])
    np.testing.assert_allclose(dt.softmax(x).numpy(), [0.0, 1.0])
    np.testing.assert_allclose(dt.log_softmax(x).numpy(), [-1001.0, 0.0])
    np.testing.assert_allclose(dt.logsumexp(x).item(), 1.0)
    big = dt.tensor([[1000.0, 0.0]], requires_grad=True)
    loss = F.cross_entropy(big, dt.tensor([1]))
    loss.backward()
    assert np.isfinite(loss.item()) and loss.item() == pytest.approx(1000.0)
    assert np.isfinite(big.grad.numpy()).all()


def test_logsumexp_of_all_minus_infinity_is_minus_infinity():
    assert dt.logsumexp(dt.tensor([-np.inf, -np.inf])).item() == -np.inf


def test_cross_entropy_matches_the_formula():
    logits = np.array([[2.0, 0.5, -1.0], [0.0, 1.0, 3.0]])
    labels = np.array([0, 2])
    expected = np.mean([-np.log(np.exp(r[y]) / np.exp(r).sum()) for r, y in zip(logits, labels)])
    got = F.cross_entropy(dt.tensor(logits), dt.tensor(labels)).item()
    assert got == pytest.approx(expected, rel=1e-12)


def test_cross_entropy_mean_ignores_ignore_index():
    logits = dt.tensor(np.array([[1.0, 2.0], [3.0, 1.0], [0.5, 0.5]]))
    both = F.cross_entropy(logits, dt.tensor([1, -100, 0]))
    first = F.cross_entropy(logits[[0]], dt.tensor([1]))
    last = F.cross_entropy(logits[[2]], dt.tensor([0]))
    assert both.item() == pytest.approx((first.item() + last.item()) / 2)


def test_embedding_padding_row_gets_no_gradient():
    table = dt.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    F.embedding(dt.tensor([1, 0, 1]), table, padding_idx=0).sum().backward()
    np.testing.assert_array_equal(table.grad.numpy(), [[0, 0], [2, 2], [0, 0]])


def test_embedding_repeated_rows_add_up():
    table = dt.tensor(np.zeros((3, 2)), requires_grad=True)
    F.embedding(dt.tensor([2, 2, 2]), table).sum().backward()
    np.testing.assert_array_equal(table.grad.numpy()[2], [3, 3])


def test_dropout_is_inverted_and_off_in_eval():
    x = dt.ones(10_000)
    y = F.dropout(x, 0.25)
    kept = y.numpy()[y.numpy() > 0]
    assert np.allclose(kept, 1 / 0.75)
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.03
    assert F.dropout(x, 0.25, training=False) is x


def test_batch_norm_running_stats_follow_pytorch_convention():
    x = np.array([[1.0, 10.0], [3.0, 14.0], [5.0, 12.0]])
    rm, rv = dt.tensor(np.zeros(2)), dt.tensor(np.ones(2))
    F.batch_norm(dt.tensor(x), rm, rv, training=True, momentum=0.1)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean(0))
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * x.var(0, ddof=1))


def test_batch_norm_eval_uses_running_stats():
    x = dt.tensor(np.array([[2.0], [4.0]]))
    out = F.batch_norm(x, dt.tensor(np.array([1.0])), dt.tensor(np.array([4.0])), eps=0.0)
    np.testing.assert_allclose(out.numpy(), [[0.5], [1.5]])


def test_max_and_min_share_the_gradient_between_ties():
    x = dt.tensor([3.0, 1.0, 3.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.0, 0.5])


def test_maximum_splits_ties_evenly_like_pytorch():
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    b = dt.tensor([1.0, 0.0], requires_grad=True)
    dt.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0])


def test_relu_and_abs_have_zero_gradient_at_zero():
    x = dt.tensor([0.0, 0.0], requires_grad=True)
    (dt.relu(x).sum() + dt.abs(x).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_var_is_unbiased_by_default_like_pytorch():
    x = dt.tensor([1.0, 2.0, 3.0, 4.0])
    assert x.var().item() == pytest.approx(np.var([1, 2, 3, 4], ddof=1))
    assert x.var(correction=0).item() == pytest.approx(np.var([1, 2, 3, 4]))


def test_in_place_operators_update_the_same_tensor_under_no_grad():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    alias = w
    with dt.no_grad():
        w -= 0.1 * w.grad
        w *= 2
    assert w is alias and w.requires_grad and w.is_leaf
    np.testing.assert_allclose(w.numpy(), [1.6, 3.2], rtol=1e-6)
    t = dt.ones(2)
    t += 1                      # nothing requires grad: fine outside no_grad too
    assert t.tolist() == [2.0, 2.0]


def test_in_place_operators_refuse_to_break_a_recorded_graph():
    w = dt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place -= .*no_grad"):
        w -= 1
    t = dt.ones(2)
    with pytest.raises(RuntimeError, match="in-place"):
        t += w
    assert w.tolist() == [1.0, 1.0] and t.tolist() == [1.0, 1.0]


def test_numpy_scalars_keep_their_dtype():
    assert dt.tensor(np.float64(2.0)).dtype == dt.float64
    assert dt.tensor(2.0).dtype == dt.float32


def test_a_post_accumulate_hook_sees_the_finished_grad_once_per_backward():
    w = dt.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * w + w * 3).sum().backward()            # w used twice: one call, with the sum
    (w * 2).sum().backward()                    # accumulated: the hook sees the total
    assert seen == [[5.0, 5.0], [7.0, 7.0]]
    handle.remove()
    (w * 2).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="needs a leaf"):
        (w * 2).register_post_accumulate_grad_hook(print)


def test_every_way_of_making_a_tensor_sets_every_field():
    """init_tensor's fields are written out in make_tensor and Function.apply too (they run
    for every gradient and every op): a field added to Tensor must be added in all three."""
    from dltutor.autograd.function import make_tensor

    fields = [name for name in dt.Tensor.__slots__ if name != "__weakref__"]
    x = dt.ones(2, requires_grad=True)
    made = {"Tensor()": x, "make_tensor": make_tensor(np.ones(2)), "an op": x * 2}
    for how, t in made.items():
        missing = [name for name in fields if not hasattr(t, name)]
        assert not missing, f"a tensor made by {how} lacks {missing}"
