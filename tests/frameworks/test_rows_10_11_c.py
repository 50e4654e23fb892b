"""Chapter 11's names table (GPU), cell by cell, run in PyTorch 2.13 and Paddle 3.3 CPU builds.

There is no GPU here. For a CUDA-only row each test checks what a CPU build can show: that
the name exists with its documented signature or contract, what it does without a GPU (the
error, or nothing), and the same code on another device (PyTorch's ``meta`` device) where
that shows the row's meaning. Branches that need a GPU run only where one is found.
"""
from __future__ import annotations

import inspect
import unittest.mock

import numpy as np
import pytest
import torch

from claims import row

NO_CUDA = "Torch not compiled with CUDA enabled"
CUDA = torch.cuda.is_available()


def _refused_without_cuda(make):
    """On a CPU build ``make()`` must raise PyTorch's no-CUDA error; on a GPU it must work."""
    if CUDA:
        return make()
    with pytest.raises(AssertionError, match=NO_CUDA):
        make()


# -- PyTorch -----------------------------------------------------------------------------------
@row("torch-names-11", "is a GPU there?", "`torch.cuda.is_available()`")
def test_torch_cuda_is_available_says_whether_cuda_works():
    """A bool that agrees with the device count and with whether a CUDA tensor can be made."""
    answer = torch.cuda.is_available()
    assert isinstance(answer, bool) and answer == (torch.cuda.device_count() > 0)
    made = _refused_without_cuda(lambda: torch.zeros(1, device="cuda"))
    assert made is None or made.device.type == "cuda"


@row("torch-names-11", "compute on the GPU from now on", '`torch.set_default_device("cuda")`')
def test_torch_set_default_device_sends_every_new_tensor_there():
    """From the call on, factories and new layers go to the default device: on a CPU build
    they then try CUDA and fail with its error; shown in full with the meta device."""
    try:
        torch.set_default_device("cuda")
        made = _refused_without_cuda(lambda: torch.ones(2))
        assert made is None or made.device.type == "cuda"
        torch.set_default_device("meta")
        assert torch.ones(2).device.type == "meta"
        assert torch.nn.Linear(2, 1).weight.device.type == "meta"
    finally:
        torch.set_default_device(None)
    assert torch.ones(2).device.type == "cpu"


@row("torch-names-11", "only inside a block", '`with torch.device("cuda"):`')
def test_torch_device_block_sends_new_tensors_there_only_inside():
    with torch.device("cuda"):
        made = _refused_without_cuda(lambda: torch.ones(2))
        assert made is None or made.device.type == "cuda"
    with torch.device("meta"):
        assert torch.nn.Linear(2, 1).weight.device.type == "meta"
    assert torch.ones(2).device.type == "cpu", "only inside the block"


@row("torch-names-11", "move a model", '`model.to("cuda")`')
def test_torch_module_to_moves_every_parameter_and_buffer_in_place():
    """``model.to`` returns the model itself with its parameters and buffers moved (shown on
    the meta device); ``.to("cuda")`` is refused by a CPU build."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    assert model.to("meta") is model
    assert {t.device.type for t in [*model.parameters(), *model.buffers()]} == {"meta"}
    moved = _refused_without_cuda(lambda: torch.nn.Linear(2, 1).to("cuda"))
    assert moved is None or moved.weight.device.type == "cuda"


@row("torch-names-11", "move a tensor", '`t.to("cuda")`')
def test_torch_tensor_to_returns_a_moved_copy():
    t = torch.arange(3.0)
    moved = t.to("meta")
    assert moved is not t and moved.device.type == "meta" and t.device.type == "cpu"
    assert t.to("cpu") is t, "already there: the same tensor"
    on_gpu = _refused_without_cuda(lambda: t.to("cuda"))
    assert on_gpu is None or (on_gpu.device.type == "cuda" and t.device.type == "cpu")


@row("torch-names-11", "which device", "`t.device`")
def test_torch_tensor_device_is_a_torch_device():
    t = torch.ones(2)
    assert isinstance(t.device, torch.device) and t.device == torch.device("cpu")
    assert t.device.type == "cpu" and t.to("meta").device.type == "meta"
    assert torch.nn.Linear(2, 1).weight.device == torch.device("cpu")


@row("torch-names-11", "what you get without a GPU",
     '`AssertionError` ("Torch not compiled with CUDA enabled") or a `RuntimeError`')
def test_torch_without_a_gpu_raises_assertion_or_runtime_errors(tmp_path):
    if CUDA:
        pytest.skip("this build has CUDA")
    for attempt in (lambda: torch.zeros(1, device="cuda"), lambda: torch.ones(1).cuda()):
        with pytest.raises(AssertionError, match=NO_CUDA):
            attempt()
    with pytest.raises(RuntimeError, match="torch.cuda.Stream requires CUDA support"):
        torch.cuda.Stream()
    with unittest.mock.patch.object(torch.serialization, "location_tag", lambda s: "cuda:0"):
        torch.save(torch.ones(1), tmp_path / "gpu.pt")          # a file written on a GPU
    with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
        torch.load(tmp_path / "gpu.pt")


@row("torch-names-11", "evaluate without a graph", "`with torch.no_grad():`")
def test_torch_no_grad_records_no_graph():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        inside = (w * 3).sum()
    assert not inside.requires_grad and inside.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        inside.backward()
    assert (w * 3).sum().grad_fn is not None, "outside the block: recorded again"


def _torch_step(model, micro_batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    for xb, yb in micro_batches:
        (torch.nn.functional.mse_loss(model(xb), yb) / len(micro_batches)).backward()
    opt.step()
    return [p.detach().clone() for p in model.parameters()]


@row("torch-names-11", "accumulate gradients", "the same")
def test_torch_backward_per_micro_batch_then_one_step_equals_the_full_batch():
    X, y = torch.randn(8, 3), torch.randn(8, 1)
    torch.manual_seed(0)
    full = _torch_step(torch.nn.Linear(3, 1), [(X, y)])
    torch.manual_seed(0)
    accumulated = _torch_step(torch.nn.Linear(3, 1), list(zip(X.split(2), y.split(2))))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(full, accumulated))
    torch.manual_seed(0)
    last_only = _torch_step(torch.nn.Linear(3, 1), [(X[6:], y[6:])])
    assert not torch.allclose(full[0], last_only[0]), "a smaller batch alone is different"


@row("torch-names-11", "free the memory cache", "`torch.cuda.empty_cache()`")
def test_torch_empty_cache_releases_the_cached_blocks():
    """Its documented contract, and what it does without CUDA (nothing: the allocator was
    never started); with a GPU, the reserved memory falls back to what is allocated."""
    doc = " ".join(torch.cuda.empty_cache.__doc__.split())
    assert doc.startswith("Release all unoccupied cached memory currently held by the caching "
                          "allocator")
    assert inspect.signature(torch.cuda.empty_cache).parameters == {}
    if not CUDA:
        assert torch.cuda.empty_cache() is None and not torch.cuda.is_initialized()
        return
    x = torch.empty(1024, 1024, device="cuda")
    del x
    before = torch.cuda.memory_reserved()
    assert before > torch.cuda.memory_allocated()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() < before


# -- Paddle ------------------------------------------------------------------------------------
def _has_gpu(paddle):
    return paddle.device.cuda.device_count() > 0


@row("paddle-names-11", "is a GPU there?", "`paddle.device.cuda.device_count() > 0`")
def test_paddle_device_count_says_whether_a_gpu_can_be_used(paddle):
    count = paddle.device.cuda.device_count()
    assert isinstance(count, int) and (paddle.is_compiled_with_cuda() or count == 0)
    if count == 0:
        with pytest.raises(ValueError, match="not compiled with CUDA"):
            paddle.set_device("gpu")
    else:
        paddle.set_device("gpu")
        assert paddle.get_device().startswith("gpu")
        paddle.set_device("cpu")


@row("paddle-names-11", "compute on the GPU from now on", '`paddle.set_device("gpu")`')
def test_paddle_set_device_sets_where_new_tensors_go(paddle):
    """It sets the place every later tensor is made on: shown with "cpu" (a CPU build refuses
    "gpu" and keeps its device); with a GPU, later tensors land there."""
    place = paddle.set_device("cpu")
    assert isinstance(place, paddle.CPUPlace) and paddle.get_device() == "cpu"
    assert paddle.ones([2]).place.is_cpu_place()
    if not _has_gpu(paddle):
        with pytest.raises(ValueError, match="not compiled with CUDA"):
            paddle.set_device("gpu")
        assert paddle.get_device() == "cpu"
        return
    try:
        paddle.set_device("gpu")
        assert paddle.ones([2]).place.is_gpu_place() and paddle.get_device().startswith("gpu")
    finally:
        paddle.set_device("cpu")


@row("paddle-names-11", "only inside a block", '`with paddle.device.device_guard("gpu"):`')
def test_paddle_device_guard_changes_the_place_only_inside(paddle):
    """A CPU build has no second place to switch to: it shows the documented contract (a
    dynamic-graph context manager that sets the current device), that "gpu" is checked when
    the guard is made, and that the place is back after the block; a GPU shows the switch."""
    doc = " ".join(paddle.device.device_guard.__doc__.split())
    assert "only supports dynamic graph mode" in doc
    assert "A context manager that specifies the current device context" in doc
    paddle.set_device("cpu")
    if not _has_gpu(paddle):
        with pytest.raises(ValueError, match="not compiled with CUDA"):
            paddle.device.device_guard("gpu")
        with paddle.device.device_guard("cpu"):
            assert paddle.ones([2]).place.is_cpu_place()
    else:
        with paddle.device.device_guard("gpu"):
            assert paddle.ones([2]).place.is_gpu_place()
    assert paddle.ones([2]).place.is_cpu_place() and paddle.get_device() == "cpu"


@row("paddle-names-11", "move a model", '`model.to("gpu")`')
def test_paddle_layer_to_moves_the_parameters_in_place(paddle):
    """``Layer.to`` returns the layer itself with its parameters changed in place (shown with
    a dtype and "cpu"); "gpu" is refused by a CPU build and moves them on a GPU."""
    model = paddle.nn.Linear(2, 1)
    weight = model.weight
    assert model.to(dtype="float64") is model and model.weight.dtype == paddle.float64
    assert model.weight is weight and model.to("cpu") is model
    if not _has_gpu(paddle):
        with pytest.raises(ValueError, match="not compiled with CUDA"):
            model.to("gpu")
        assert model.weight.place.is_cpu_place()
    else:
        assert model.to("gpu").weight.place.is_gpu_place()


@row("paddle-names-11", "move a tensor", "`t.cuda()`")
def test_paddle_tensor_cuda_returns_a_copy_on_the_gpu(paddle):
    """Its documented signature and return type; a CPU build has no device to copy to."""
    sig = inspect.signature(paddle.Tensor.cuda)
    assert list(sig.parameters) == ["self", "device_id", "blocking"]
    assert sig.return_annotation in ("Tensor", paddle.Tensor)
    t = paddle.arange(3)
    if not _has_gpu(paddle):
        with pytest.raises(ValueError, match="No available device found"):
            t.cuda()
    else:
        moved = t.cuda()
        assert moved.place.is_gpu_place() and t.place.is_cpu_place()


@row("paddle-names-11", "which device", "`t.place`")
def test_paddle_tensor_place_names_the_device(paddle):
    t = paddle.ones([2])
    assert isinstance(t.place, paddle.base.libpaddle.Place)
    assert t.place.is_cpu_place() and not t.place.is_gpu_place() and str(t.place) == "Place(cpu)"
    assert paddle.nn.Linear(2, 1).weight.place.is_cpu_place()


@row("paddle-names-11", "evaluate without a graph", "`with paddle.no_grad():`")
def test_paddle_no_grad_records_no_graph(paddle):
    w = paddle.ones([2])
    w.stop_gradient = False
    with paddle.no_grad():
        inside = (w * 3).sum()
    assert inside.stop_gradient, "no graph: nothing to differentiate"
    assert not (w * 3).sum().stop_gradient, "outside the block: recorded again"


def _paddle_step(paddle, micro_batches):
    paddle.seed(0)
    model = paddle.nn.Linear(3, 1)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    opt.clear_grad()
    for xb, yb in micro_batches:
        (paddle.nn.functional.mse_loss(model(xb), yb) / len(micro_batches)).backward()
    opt.step()
    return model.weight.numpy().copy()


@row("paddle-names-11", "accumulate gradients", "the same")
def test_paddle_backward_per_micro_batch_then_one_step_equals_the_full_batch(paddle):
    X, y = paddle.randn([8, 3]), paddle.randn([8, 1])
    full = _paddle_step(paddle, [(X, y)])
    micro = [(X[i:i + 2], y[i:i + 2]) for i in range(0, 8, 2)]
    assert np.allclose(full, _paddle_step(paddle, micro), atol=1e-6)
    assert not np.allclose(full, _paddle_step(paddle, micro[-1:]))


@row("paddle-names-11", "free the memory cache", "`paddle.device.cuda.empty_cache()`")
def test_paddle_empty_cache_releases_the_cached_memory(paddle):
    """Its documented contract, and that a CPU build does nothing (returns None)."""
    doc = " ".join(paddle.device.cuda.empty_cache.__doc__.split())
    assert doc.startswith("Releases idle cached memory held by the allocator so that those can "
                          "be used in other GPU application")
    assert paddle.device.cuda.empty_cache() is None
    if _has_gpu(paddle):
        with paddle.device.device_guard("gpu"):
            x = paddle.empty([1024, 1024])
        del x
        before = paddle.device.cuda.memory_reserved()
        paddle.device.cuda.empty_cache()
        assert paddle.device.cuda.memory_reserved() < before
