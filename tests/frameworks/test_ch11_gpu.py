"""Chapter 11 (GPU, memory, mixed precision): what it says PyTorch and Paddle do, run in them.

The framework environment holds CPU builds (PyTorch 2.13, Paddle 3.3), so most tests prove the
chapter's statements on the CPU: autocast and GradScaler run on the CPU device with the same
arithmetic; device moves are shown with the ``meta`` device; the errors are those of a build
without CUDA. Two statements exist only on a CUDA build (the out-of-memory message, the memory
summary): their tests run where ``torch.cuda.is_available()`` and are skipped elsewhere.
MegEngine's claims are cited from its source in notebooks/SOURCES.md.
"""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from claims import claim

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA build and a GPU")


# -- moving a model ----------------------------------------------------------------------------
@claim("torch-gpu-move-model-before-optimizer")
def test_move_the_model_before_making_the_optimizer():
    assert "it should be called before constructing the optimizer" in torch.nn.Module.cuda.__doc__
    model = torch.nn.Linear(3, 2)
    params = list(model.parameters())
    model.to(torch.float64)                           # a move: the same Parameter objects
    assert all(a is b for a, b in zip(model.parameters(), params))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    assert opt.state == {} or all(not s for s in opt.state.values())   # no moments yet
    model(torch.randn(4, 3, dtype=torch.float64)).sum().backward()
    opt.step()                                        # the moments are made now, like the params
    for p in model.parameters():
        for name in ("exp_avg", "exp_avg_sq"):
            assert opt.state[p][name].dtype == p.dtype and opt.state[p][name].device == p.device


# -- mixed precision ---------------------------------------------------------------------------
@claim("torch-amp-autocast")
def test_autocast_computes_in_half_and_keeps_float32_weights():
    layer = torch.nn.Linear(4, 3)
    with torch.autocast("cpu", dtype=torch.float16):  # the same API as "cuda"
        out = layer(torch.randn(2, 4))
    assert out.dtype == torch.float16
    assert layer.weight.dtype == torch.float32, "the parameters stay float32: the master copy"
    assert layer(torch.randn(2, 4)).dtype == torch.float32      # outside the block: float32


@claim("torch-amp-float16-limits")
def test_float16_limits():
    f16 = torch.float16
    smallest = 2.0 ** -24
    assert torch.tensor(smallest, dtype=f16).item() == smallest          # about 6e-8
    assert np.isclose(smallest, 6e-8, rtol=0.01)
    assert torch.tensor(0.49 * smallest, dtype=f16).item() == 0.0        # below half: 0
    assert torch.tensor(1e-8, dtype=f16).item() == 0.0
    assert torch.tensor(4e-8, dtype=f16).item() == smallest              # not 0, but coarse
    big = torch.tensor(1024.0, dtype=f16)
    assert (big + torch.tensor(0.1, dtype=f16)).item() == 1024.0         # the update vanishes
    assert (big.float() + 0.1).item() != 1024.0                          # in float32 it does not


@claim("torch-amp-gradscaler")
def test_gradscaler_scales_skips_and_halves():
    sig = inspect.signature(torch.amp.GradScaler).parameters
    assert (sig["init_scale"].default, sig["growth_factor"].default, sig["backoff_factor"].default,
            sig["growth_interval"].default) == (2.0 ** 16, 2.0, 0.5, 2000)
    scaler = torch.amp.GradScaler("cpu")
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.1)
    loss = (w * torch.tensor([1e-8, 3.0])).sum()
    scaler.scale(loss).backward()
    assert torch.allclose(w.grad, torch.tensor([1e-8, 3.0]) * 65536)    # scaled by 2**16
    scaler.step(opt)                                  # unscales in float32, then steps
    scaler.update()
    assert w.grad.dtype == torch.float32 and torch.allclose(w.grad, torch.tensor([1e-8, 3.0]))
    assert torch.allclose(w.detach(), torch.tensor([1.0, 1.7]))
    assert scaler.get_scale() == 65536.0
    opt.zero_grad()
    before = w.detach().clone()
    scaler.scale((w * torch.tensor([float("inf"), 1.0])).sum()).backward()
    scaler.step(opt)                                  # an overflow: the step is skipped
    scaler.update()
    assert torch.equal(w.detach(), before) and scaler.get_scale() == 32768.0   # and halved
    growing = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    for _ in range(2):
        opt.zero_grad()
        growing.scale(w.sum()).backward()
        growing.step(opt)
        growing.update()
    assert growing.get_scale() == 8.0                 # doubled after growth_interval good steps


@claim("torch-amp-bfloat16-range")
def test_bfloat16_has_float32_range():
    bf, f32 = torch.finfo(torch.bfloat16), torch.finfo(torch.float32)
    assert bf.tiny == f32.tiny and np.isclose(bf.max, f32.max, rtol=0.01)
    assert torch.tensor(1e-30, dtype=torch.bfloat16).item() != 0.0      # float16 gives 0 here
    assert torch.tensor(1e-30, dtype=torch.float16).item() == 0.0


@claim("paddle-amp-auto-cast-gradscaler")
def test_paddle_amp(paddle):
    sig = inspect.signature(paddle.amp.GradScaler).parameters
    assert (sig["init_loss_scaling"].default, sig["incr_ratio"].default, sig["decr_ratio"].default,
            sig["incr_every_n_steps"].default) == (2.0 ** 16, 2.0, 0.5, 2000)
    layer = paddle.nn.Linear(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with paddle.amp.auto_cast():
            out = layer(paddle.randn([2, 4]))
    assert any("makes no effect" in str(w.message) for w in caught)      # on the CPU
    assert out.dtype == paddle.float32


# -- activation checkpointing ------------------------------------------------------------------
@claim("torch-gpu-activation-checkpoint")
def test_torch_checkpoint_recomputes_the_forward():
    from torch.utils.checkpoint import checkpoint
    segment = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    calls = []

    def run(x):
        calls.append(1)
        return segment(x)

    x = torch.randn(2, 4, requires_grad=True)
    y = checkpoint(run, x, use_reentrant=False)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2, "backward ran the segment's forward again"
    grad = x.grad.clone()
    x.grad = None
    segment(x).sum().backward()
    assert torch.allclose(grad, x.grad), "the same gradients as without checkpointing"
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(run, x)


@claim("paddle-gpu-recompute")
def test_paddle_recompute(paddle):
    from paddle.distributed.fleet.utils import recompute
    segment = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.ReLU())
    calls = []

    def run(x):
        calls.append(1)
        return segment(x)

    x = paddle.randn([2, 4])
    x.stop_gradient = False
    y = recompute(run, x)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2


# -- the allocator -----------------------------------------------------------------------------
@claim("torch-gpu-alloc-conf-expandable-segments")
def test_alloc_conf_is_read_at_start():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
    env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"      # set before the program starts
    code = "import torch; print(torch._C._accelerator_getAllocatorSettings())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "expandable_segments:True"


@claim("torch-gpu-empty-cache-other-programs")
def test_empty_cache_is_for_other_programs():
    doc = " ".join(torch.cuda.empty_cache.__doc__.split())
    assert "can be used in other GPU application" in doc
    assert "doesn't increase the amount of GPU memory available for PyTorch" in doc


@claim("torch-gpu-oom-reserved-unallocated")
@needs_cuda
def test_oom_message_reports_reserved_but_unallocated():
    free, _ = torch.cuda.mem_get_info()
    with pytest.raises(torch.OutOfMemoryError) as err:
        torch.empty(2 * free, dtype=torch.uint8, device="cuda")
    message = " ".join(str(err.value).split())
    assert "reserved by PyTorch but unallocated" in message
    assert "expandable_segments:True" in message


@claim("torch-gpu-memory-summary")
@needs_cuda
def test_memory_summary_shows_the_cache():
    x = torch.empty(1024, 1024, device="cuda")
    del x                                            # freed, but kept in the cache
    summary = torch.cuda.memory_summary()
    assert "GPU reserved memory" in summary and "Allocated memory" in summary
    assert torch.cuda.memory_reserved() > torch.cuda.memory_allocated()
    torch.cuda.empty_cache()


@claim("paddle-gpu-allocator-flags")
def test_paddle_allocator_flags(paddle):
    assert paddle.get_flags(["FLAGS_allocator_strategy"]) == {"FLAGS_allocator_strategy": "auto_growth"}
    fraction = paddle.get_flags(["FLAGS_fraction_of_gpu_memory_to_use"])["FLAGS_fraction_of_gpu_memory_to_use"]
    assert 0 < fraction <= 1


# -- the table: devices ------------------------------------------------------------------------
@claim("torch-gpu-missing-error")
def test_torch_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("this build has CUDA")
    for attempt in (lambda: torch.zeros(1).to("cuda"), lambda: torch.zeros(1, device="cuda"),
                    lambda: torch.nn.Linear(2, 1).to("cuda")):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            attempt()


@claim("paddle-gpu-missing-error")
def test_paddle_without_cuda(paddle):
    if paddle.device.cuda.device_count() > 0:
        pytest.skip("this build sees a GPU")
    assert paddle.device.cuda.device_count() == 0
    with pytest.raises(ValueError, match="not compiled with CUDA"):
        paddle.set_device("gpu")
    assert paddle.get_device() == "cpu"


@claim("torch-gpu-device-context")
def test_torch_device_as_a_with_block():
    with torch.device("meta"):                       # "cuda" on a GPU machine
        inside = torch.ones(2)
        layer = torch.nn.Linear(2, 1)
    assert inside.device.type == "meta" and layer.weight.device.type == "meta"
    assert torch.ones(2).device.type == "cpu"        # only inside the block


@claim("torch-gpu-set-default-device")
def test_torch_set_default_device():
    try:
        torch.set_default_device("meta")
        assert torch.ones(2).device.type == "meta"
    finally:
        torch.set_default_device(None)
    assert torch.ones(2).device.type == "cpu"


@claim("paddle-gpu-device-guard")
def test_paddle_device_guard(paddle):
    paddle.set_device("cpu")
    with paddle.device.device_guard("cpu"):          # "gpu" on a GPU machine
        inside = paddle.ones([2])
    assert str(inside.place) == "Place(cpu)" and paddle.get_device() == "cpu"
    if paddle.device.cuda.device_count() == 0:
        with pytest.raises(ValueError, match="not compiled with CUDA"):
            with paddle.device.device_guard("gpu"):
                pass


# -- the table: accumulating gradients ---------------------------------------------------------
@claim("torch-gpu-grad-accumulation")
def test_torch_backward_accumulates():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (3 * w).sum().backward()
    (5 * w).sum().backward()
    assert w.grad.tolist() == [8.0, 8.0]


@claim("paddle-gpu-grad-accumulation")
def test_paddle_backward_accumulates(paddle):
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (3 * w).sum().backward()
    (5 * w).sum().backward()
    assert w.grad.tolist() == [8.0, 8.0]


@claim("torch-gpu-device-line")
def test_pytorchs_device_line_runs_with_torch_replaced_by_dt(tmp_path):
    """``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`` and the
    places that take it, run in PyTorch 2.13 (CPU build) and in dltutor with the module name
    replaced: the same device, shown the same way, and the same numbers."""
    import dltutor

    seen = {}
    for fw in (torch, dltutor):
        device = fw.device("cuda" if fw.cuda.is_available() else "cpu")
        assert repr(fw.device("cuda:0")) == "device(type='cuda', index=0)"
        assert str(fw.device("cuda", 0)) == "cuda:0"
        # The one difference the chapter names: dltutor's t.device is the name "cpu", so a
        # dt.device equals its name; PyTorch's t.device is a torch.device, unequal to a string.
        assert (fw.device("cpu") == "cpu") is (fw is dltutor)
        assert (fw.zeros(1).device == "cpu") is (fw is dltutor)
        fw.manual_seed(0)
        model = fw.nn.Linear(3, 2).to(device)
        with fw.no_grad():
            model.weight.copy_(fw.tensor(np.arange(6.0).reshape(2, 3), dtype=fw.float32))
            model.bias.zero_()
        x = fw.zeros(4, 3, device=device) + fw.ones(4, 3).to(device)
        path = str(tmp_path / f"{fw.__name__}.pt")
        fw.save(model.state_dict(), path)
        state = fw.load(path, map_location=device)
        seen[fw.__name__] = (str(device), model(x).detach().numpy(), sorted(state))
    assert seen["torch"][0] == seen["dltutor"][0] == "cpu"      # no GPU on these machines
    np.testing.assert_array_equal(seen["torch"][1], seen["dltutor"][1])
    assert seen["torch"][2] == seen["dltutor"][2] == ["bias", "weight"]
