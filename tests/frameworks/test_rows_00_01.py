"""Chapters 00 and 01, "What the frameworks call it": each PyTorch and Paddle cell, run.

Each test marked ``@row(TABLE, ROW, CELL)`` checks what the row means (what the code returns,
what it changes), not only that the name exists (``test_names.py`` does that). The rows that
``test_ch01_tensors.py`` already proves carry their ``@row`` markers there.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from absence import spellings_found
from claims import row

T00, P00 = "torch-names-00", "paddle-names-00"
T01, P01 = "torch-names-01", "paddle-names-01"


# --- chapter 00: the training step ------------------------------------------------------------

@row(T00, "array with gradient", "`torch.tensor(..., requires_grad=True)`")
def test_torch_tensor_requires_grad_makes_a_leaf_that_receives_a_gradient():
    w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    assert w.is_leaf and w.requires_grad and w.grad is None
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, -4.0, 6.0]
    plain = torch.tensor([1.0, -2.0, 3.0])                # without the keyword: no gradient
    with pytest.raises(RuntimeError, match="does not require grad"):
        (plain * plain).sum().backward()


@row(P00, "array with gradient", "`paddle.to_tensor(..., stop_gradient=False)`")
def test_paddle_to_tensor_stop_gradient_false_makes_a_leaf_that_receives_a_gradient(paddle):
    w = paddle.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
    assert w.is_leaf and not w.stop_gradient and w.grad is None
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, -4.0, 6.0]
    assert paddle.to_tensor([1.0]).stop_gradient is True  # without the keyword: no gradient


_XS = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], dtype=np.float32)
_YS = np.array([[1.0], [0.0], [2.0]], dtype=np.float32)
_W0 = np.array([[0.5], [-1.0]], dtype=np.float32)
_GRAD = 2 / len(_XS) * _XS.T @ (_XS @ _W0 - _YS)        # of the mean squared error of x @ w


@row(T00, "compute gradients", "`loss.backward()`")
def test_torch_loss_backward_writes_the_gradient_of_the_loss_into_grad():
    x, y = torch.tensor(_XS), torch.tensor(_YS)
    w = torch.tensor(_W0, requires_grad=True)
    loss = ((x @ w - y) ** 2).mean()
    assert w.grad is None
    assert loss.backward() is None                        # it returns nothing: it writes .grad
    assert np.allclose(w.grad.numpy(), _GRAD, atol=1e-6)


@row(P00, "compute gradients", "`loss.backward()`")
def test_paddle_loss_backward_writes_the_gradient_of_the_loss_into_grad(paddle):
    x, y = paddle.to_tensor(_XS), paddle.to_tensor(_YS)
    w = paddle.to_tensor(_W0, stop_gradient=False)
    loss = ((paddle.matmul(x, w) - y) ** 2).mean()
    assert w.grad is None
    loss.backward()
    assert np.allclose(w.grad.numpy(), _GRAD, atol=1e-6)


@row(T00, "update parameters", "`opt.step()`")
def test_torch_opt_step_moves_each_parameter_against_its_gradient():
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([p], lr=0.1)
    p.grad = torch.tensor([1.0, -3.0])
    opt.step()
    assert p.tolist() == pytest.approx([0.9, 2.3])        # p - lr * grad, in place
    assert p.grad.tolist() == [1.0, -3.0]                 # the gradient is left as it was


@row(P00, "update parameters", "`opt.step()`")
def test_paddle_opt_step_moves_each_parameter_against_its_gradient(paddle):
    layer = paddle.nn.Linear(2, 1)
    before = layer.weight.numpy().copy()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters())
    layer(paddle.to_tensor([[1.0, -3.0]])).sum().backward()    # d/dW: the input, (2, 1)
    opt.step()
    assert np.allclose(layer.weight.numpy(), before - 0.1 * np.array([[1.0], [-3.0]]))
    assert np.allclose(layer.weight.grad.numpy(), [[1.0], [-3.0]])


def _torch_net():
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))


@row(T00, "forget gradients", "`opt.zero_grad()`")
@row(T01, "forget gradients", "`p.grad = None`, `zero_grad()`")
@pytest.mark.parametrize("how", ["p.grad = None", "opt.zero_grad()", "net.zero_grad()"])
def test_torch_forgetting_sets_grad_to_none_so_the_next_backward_starts_fresh(how):
    net = _torch_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    net(x).sum().backward()
    once = [p.grad.clone() for p in net.parameters()]
    net(x).sum().backward()                               # not forgotten: they add up
    assert all(torch.allclose(p.grad, 2 * g) for p, g in zip(net.parameters(), once))
    if how == "p.grad = None":
        for p in net.parameters():
            p.grad = None
    else:
        (opt if how.startswith("opt") else net).zero_grad()
    assert all(p.grad is None for p in net.parameters())  # None, not zeros (set_to_none=True)
    net(x).sum().backward()
    assert all(torch.allclose(p.grad, g) for p, g in zip(net.parameters(), once))


@row(P00, "forget gradients", "`opt.clear_grad()`")
@row(P01, "forget gradients", "`p.clear_gradient()`, `opt.clear_grad()`")
@pytest.mark.parametrize("how", ["p.clear_gradient()", "opt.clear_grad()"])
def test_paddle_forgetting_zeroes_the_gradients_so_the_next_backward_starts_fresh(paddle, how):
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 2), paddle.nn.ReLU(), paddle.nn.Linear(2, 1))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    x = paddle.randn([4, 3])
    net(x).sum().backward()
    once = [p.grad.numpy().copy() for p in net.parameters()]
    net(x).sum().backward()                               # not forgotten: they add up
    assert all(np.allclose(p.grad.numpy(), 2 * g) for p, g in zip(net.parameters(), once))
    if how == "opt.clear_grad()":
        opt.clear_grad()
    else:
        for p in net.parameters():
            p.clear_gradient()
    # Paddle's default (set_to_zero=True) keeps a gradient of zeros, not None.
    assert all(not p.grad.numpy().any() for p in net.parameters())
    net(x).sum().backward()
    assert all(np.allclose(p.grad.numpy(), g) for p, g in zip(net.parameters(), once))


# --- chapter 01: tensors ----------------------------------------------------------------------

_ARR = np.linspace(0.0, 1.0, 6).reshape(2, 3)             # float64, as NumPy makes it


@row(T01, "tensor from NumPy", "`torch.tensor(arr, dtype=torch.float32)`")
def test_torch_tensor_from_numpy_with_dtype_is_a_float32_copy():
    arr = _ARR.copy()
    t = torch.tensor(arr, dtype=torch.float32)
    assert type(t) is torch.Tensor and t.dtype == torch.float32 and t.shape == (2, 3)
    assert np.array_equal(t.numpy(), arr.astype(np.float32))
    arr[0, 0] = 99.0
    assert t[0, 0].item() == 0.0                          # a copy, not a view of arr
    assert torch.tensor(arr).dtype == torch.float64       # without dtype=: NumPy's float64


@row(P01, "tensor from NumPy",
     '`paddle.to_tensor(arr, dtype="float32")` (1.x: `fluid.dygraph.to_variable`)')
def test_paddle_to_tensor_from_numpy_with_dtype_is_a_float32_copy(paddle):
    arr = _ARR.copy()
    t = paddle.to_tensor(arr, dtype="float32")
    assert isinstance(t, paddle.Tensor) and t.dtype == paddle.float32 and t.shape == [2, 3]
    assert np.array_equal(t.numpy(), arr.astype(np.float32))
    arr[0, 0] = 99.0
    assert t[0, 0].item() == 0.0                          # a copy, not a view of arr
    assert paddle.to_tensor(arr).dtype == paddle.float64  # without dtype=: NumPy's float64


def _check_draws(uniform, normal, mean2_std3, integers):
    """Large samples from the four generators, as NumPy arrays, have the advertised laws."""
    assert uniform.dtype == np.float32 and uniform.min() >= 0.0 and uniform.max() < 1.0
    assert abs(uniform.mean() - 0.5) < 0.01 and abs(uniform.std() - 12 ** -0.5) < 0.01
    assert normal.dtype == np.float32 and abs(normal.mean()) < 0.02
    assert abs(normal.std() - 1.0) < 0.02 and normal.min() < -3 and normal.max() > 3
    assert abs(mean2_std3.mean() - 2.0) < 0.05 and abs(mean2_std3.std() - 3.0) < 0.05
    assert integers.dtype == np.int64 and set(np.unique(integers)) == set(range(10))


@row(T01, "uniform / normal / integers",
     "`torch.rand`, `torch.randn`, `torch.normal`, `torch.randint`")
def test_torch_rand_randn_normal_randint_draw_uniform_normal_and_integers():
    n = 100_000
    _check_draws(torch.rand(n).numpy(), torch.randn(n).numpy(),
                 torch.normal(2.0, 3.0, size=(n,)).numpy(), torch.randint(0, 10, (n,)).numpy())


@row(P01, "uniform / normal / integers",
     "`paddle.rand`, `paddle.randn`, `paddle.normal`, `paddle.randint`")
def test_paddle_rand_randn_normal_randint_draw_uniform_normal_and_integers(paddle):
    n = 100_000
    _check_draws(paddle.rand([n]).numpy(), paddle.randn([n]).numpy(),
                 paddle.normal(2.0, 3.0, [n]).numpy(), paddle.randint(0, 10, [n]).numpy())


@row(T01, "seed", "`torch.manual_seed(0)`")
def test_torch_manual_seed_makes_every_draw_repeatable():
    def draws():
        return [torch.rand(3), torch.randn(3), torch.randint(0, 100, (3,))]

    torch.manual_seed(0)
    first = draws()
    torch.manual_seed(0)
    again = draws()
    torch.manual_seed(1)
    other = draws()
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0]) and not torch.equal(first[1], other[1])


@row(P01, "seed", "`paddle.seed(0)`")
def test_paddle_seed_makes_every_draw_repeatable(paddle):
    def draws():
        return [t.numpy() for t in (paddle.rand([3]), paddle.randn([3]),
                                     paddle.randint(0, 100, [3]))]

    paddle.seed(0)
    first = draws()
    paddle.seed(0)
    again = draws()
    paddle.seed(1)
    other = draws()
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], other[0]) and not np.array_equal(first[1], other[1])


@row(T01, "add an axis of size 1", "`x.unsqueeze(1)`")
def test_torch_unsqueeze_1_inserts_a_size_1_axis_at_position_1():
    x = torch.rand(8, 28, 28)
    x1 = x.unsqueeze(1)
    assert x1.shape == (8, 1, 28, 28) and x.shape == (8, 28, 28)      # x itself unchanged
    assert np.array_equal(x1.numpy(), np.expand_dims(x.numpy(), 1))
    assert x1.data_ptr() == x.data_ptr()                              # a view: no copy


@row(P01, "add an axis of size 1", "`paddle.unsqueeze(x, 1)`")
def test_paddle_unsqueeze_x_1_inserts_a_size_1_axis_at_position_1(paddle):
    x = paddle.rand([8, 28, 28])
    x1 = paddle.unsqueeze(x, 1)
    assert x1.shape == [8, 1, 28, 28] and x.shape == [8, 28, 28]
    assert np.array_equal(x1.numpy(), np.expand_dims(x.numpy(), 1))


@row(T01, "repeat a size-1 axis", "`x.expand(-1, 3, -1, -1)`")
def test_torch_expand_repeats_the_size_1_axis_without_copying():
    gray = torch.rand(8, 1, 28, 28, requires_grad=True)
    rgb = gray.expand(-1, 3, -1, -1)                      # -1 keeps a size
    assert rgb.shape == (8, 3, 28, 28) and rgb.stride(1) == 0         # one memory, three views
    assert rgb.data_ptr() == gray.data_ptr()
    assert all(torch.equal(rgb[:, c], gray[:, 0]) for c in range(3))
    rgb.sum().backward()
    assert gray.grad.shape == gray.shape and bool((gray.grad == 3.0).all())   # copies summed
    with pytest.raises(RuntimeError, match="must match the existing size"):
        torch.rand(8, 2, 28, 28).expand(-1, 3, -1, -1)                # only a size-1 axis


@row(P01, "repeat a size-1 axis", "`paddle.expand(x, [N, 3, 28, 28])`")
def test_paddle_expand_repeats_the_size_1_axis(paddle):
    gray = paddle.rand([8, 1, 28, 28])
    gray.stop_gradient = False
    rgb = paddle.expand(gray, [8, 3, 28, 28])
    assert rgb.shape == [8, 3, 28, 28]
    assert all(np.array_equal(rgb[:, c].numpy(), gray[:, 0].numpy()) for c in range(3))
    rgb.sum().backward()
    assert gray.grad.shape == [8, 1, 28, 28] and bool((gray.grad.numpy() == 3.0).all())
    with pytest.raises(ValueError, match="non-singleton dimension"):
        paddle.expand(paddle.rand([8, 2, 28, 28]), [8, 3, 28, 28])    # only a size-1 axis


_A = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
_B = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32)
_W = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)


@row(T01, "batched matmul", "`a @ b`, `torch.matmul`")
def test_torch_at_and_matmul_multiply_the_last_two_axes_batch_by_batch():
    a, b, w = torch.tensor(_A), torch.tensor(_B), torch.tensor(_W)
    for product in (a @ b, torch.matmul(a, b)):
        assert product.shape == (5, 2, 4)
        assert np.allclose(product.numpy(), [_A[i] @ _B[i] for i in range(5)], atol=1e-5)
    assert (a @ w).shape == (5, 2, 4) and torch.equal(a @ w, torch.matmul(a, w))  # broadcast
    assert np.allclose((a @ w).numpy(), np.matmul(_A, _W), atol=1e-5)


@row(P01, "batched matmul", "`paddle.matmul` (1.x: `fluid.layers.matmul`)")
def test_paddle_matmul_multiplies_the_last_two_axes_batch_by_batch(paddle):
    product = paddle.matmul(paddle.to_tensor(_A), paddle.to_tensor(_B))
    assert product.shape == [5, 2, 4]
    assert np.allclose(product.numpy(), [_A[i] @ _B[i] for i in range(5)], atol=1e-5)
    broadcast = paddle.matmul(paddle.to_tensor(_A), paddle.to_tensor(_W))
    assert broadcast.shape == [5, 2, 4]
    assert np.allclose(broadcast.numpy(), np.matmul(_A, _W), atol=1e-5)


@row(T01, "flatten, then one 2-D product", "— (reshape, then `@`)")
def test_torch_has_no_flatten_then_multiply_function_reshape_then_at_does_it():
    owners = [torch, torch.Tensor, torch.nn.functional, torch.linalg]
    assert spellings_found(owners, ["num_col_dims", "flatten_mul", "flat_mul", "mul_flat",
                                    "flatten_matmul", "col_dims"]) == []
    x, y = torch.rand(2, 3, 4), torch.rand(12, 5)
    with pytest.raises(RuntimeError):
        x @ y                                             # (3, 4) @ (12, 5): no flattening
    with pytest.raises(RuntimeError):
        torch.mul(x, y)                                   # torch.mul is elementwise
    flat = x.reshape(2, -1) @ y                           # the way: reshape, then @
    assert flat.shape == (2, 5)
    assert np.allclose(flat.numpy(), x.numpy().reshape(2, 12) @ y.numpy(), atol=1e-5)


@row(P01, "flatten, then one 2-D product", "1.x: `fluid.layers.mul(x, y, x_num_col_dims)`")
def test_paddle_3_has_no_public_flatten_then_multiply_its_paddle_mul_is_elementwise(paddle):
    """The 1.x function is gone; its operator still runs (test_ch01_tensors.py), but the public
    ``paddle.mul`` of Paddle 3 multiplies elementwise and takes no ``x_num_col_dims``."""
    import inspect

    owners = [paddle, paddle.Tensor, paddle.nn.functional, paddle.linalg]
    assert spellings_found(owners, ["num_col_dims", "col_dims", "flatten_mul"]) == []
    assert "x_num_col_dims" not in inspect.signature(paddle.mul).parameters
    product = paddle.mul(paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([3.0, 4.0]))
    assert product.tolist() == [3.0, 8.0]                 # elementwise, not a matrix product
    with pytest.raises(ValueError, match="Broadcast dimension mismatch"):
        paddle.mul(paddle.rand([2, 3, 4]), paddle.rand([12, 5]))


@row(P01, "tensor from NumPy",
     '`paddle.to_tensor(arr, dtype="float32")` (1.x: `fluid.dygraph.to_variable`)')
@row(P01, "batched matmul", "`paddle.matmul` (1.x: `fluid.layers.matmul`)")
@row(P01, "flatten, then one 2-D product", "1.x: `fluid.layers.mul(x, y, x_num_col_dims)`")
def test_paddle_3_has_no_fluid_so_the_1x_names_are_paddle_1_only(paddle):
    """The cells' "1.x:" names are cited from Paddle 1.8.5 (SOURCES.md, paddle1-names-01)."""
    assert not hasattr(paddle, "fluid")
    with pytest.raises(ModuleNotFoundError):
        __import__("paddle.fluid")
    assert spellings_found([paddle, paddle.Tensor], ["to_variable"]) == []


@row(T01, "no recording", "`with torch.no_grad():`")
def test_torch_no_grad_records_nothing_and_allows_writing_into_a_leaf():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    with torch.no_grad():
        evaluated = (w * 2).sum()
        w[0] = 5.0                                        # in place, into a leaf: allowed here
    assert not evaluated.requires_grad and evaluated.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        evaluated.backward()
    recorded = (w * 2).sum()                              # after the block: recorded again
    assert recorded.requires_grad and recorded.grad_fn is not None
    assert w.tolist() == [5.0, -2.0] and w.is_leaf and w.grad is None
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w[0] = 6.0                                        # outside: refused


@row(P01, "no recording", "`with paddle.no_grad():`")
def test_paddle_no_grad_records_nothing(paddle):
    layer = paddle.nn.Linear(2, 1)
    x = paddle.to_tensor([[1.0, 2.0]])
    with paddle.no_grad():
        evaluated = layer(x).sum()
    assert evaluated.stop_gradient is True                # no graph behind it
    evaluated.backward()                                  # no error, and nothing to reach
    assert layer.weight.grad is None and layer.bias.grad is None
    recorded = layer(x).sum()
    assert recorded.stop_gradient is False
    recorded.backward()
    assert np.allclose(layer.weight.grad.numpy(), [[1.0], [2.0]])
