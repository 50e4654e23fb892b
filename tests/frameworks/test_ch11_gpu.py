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
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from chapters import SOURCES
from claims import claim, row

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA build and a GPU")


# -- moving a model ----------------------------------------------------------------------------
MOMENT_OPTIMIZERS = [(torch.optim.SGD, {"momentum": 0.9}, ("momentum_buffer",)),
                     (torch.optim.RMSprop, {"momentum": 0.9}, ("momentum_buffer", "square_avg")),
                     (torch.optim.Adam, {}, ("exp_avg", "exp_avg_sq")),
                     (torch.optim.AdamW, {}, ("exp_avg", "exp_avg_sq")),
                     (torch.optim.NAdam, {}, ("exp_avg", "exp_avg_sq")),
                     (torch.optim.RAdam, {}, ("exp_avg", "exp_avg_sq"))]


@claim("torch-gpu-move-model-before-optimizer")
@pytest.mark.parametrize("opt_class, kw, moments", MOMENT_OPTIMIZERS,
                         ids=[c.__name__ for c, _, _ in MOMENT_OPTIMIZERS])
def test_move_the_model_before_making_the_optimizer(opt_class, kw, moments):
    """Every optimizer with momentum or Adam moments makes them at its first step, next to
    the parameters (torch.optim.Adagrad, which has neither, makes its sums at construction)."""
    assert "it should be called before constructing the optimizer" in torch.nn.Module.cuda.__doc__
    model = torch.nn.Linear(3, 2)
    params = list(model.parameters())
    model.to(torch.float64)                           # a move: the same Parameter objects
    assert all(a is b for a, b in zip(model.parameters(), params))
    opt = opt_class(model.parameters(), lr=0.1, **kw)
    assert opt.state == {} or all(not s for s in opt.state.values())   # no moments yet
    model(torch.randn(4, 3, dtype=torch.float64)).sum().backward()
    opt.step()                                        # the moments are made now, like the params
    for p in model.parameters():
        for name in moments:
            assert opt.state[p][name].dtype == p.dtype and opt.state[p][name].device == p.device


# -- fused optimizers --------------------------------------------------------------------------
@claim("torch-fused-optimizers")
@pytest.mark.parametrize("opt_class, kw", [(torch.optim.SGD, {"momentum": 0.9, "weight_decay": 0.01}),
                                           (torch.optim.Adam, {"weight_decay": 0.01}),
                                           (torch.optim.AdamW, {"amsgrad": True})],
                         ids=["SGD", "Adam", "AdamW"])
def test_sgd_adam_and_adamw_take_fused_true_for_the_same_step(opt_class, kw):
    """``fused=True`` is an option of these three (this CPU build runs it on the CPU), and
    it takes the step the plain loop takes, to float rounding."""
    assert "fused" in inspect.signature(opt_class).parameters
    weights = []
    for fused in (False, True):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 3)
        start = model.weight.detach().clone()
        opt = opt_class(model.parameters(), lr=0.1, fused=fused, **kw)
        assert opt.defaults["fused"] is fused
        x = torch.randn(8, 5)
        for _ in range(3):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
        weights.append(model.weight.detach().clone())
    torch.testing.assert_close(weights[1], weights[0], rtol=1e-5, atol=1e-6)
    assert not torch.equal(weights[0], start)                           # the steps moved it


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
    segment = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.ReLU(),
                                   paddle.nn.Linear(4, 4))
    calls = []

    def run(x):
        calls.append(1)
        return segment(x)

    x = paddle.randn([2, 4])
    x.stop_gradient = False
    y = recompute(run, x)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2, "backward ran the segment's forward again"
    grads = [t.grad.numpy().copy() for t in (x, *segment.parameters())]
    x.clear_gradient()
    segment.clear_gradients()
    segment(x).sum().backward()
    plain = [t.grad.numpy() for t in (x, *segment.parameters())]
    assert len(grads) == 5 and all(np.allclose(a, b) for a, b in zip(grads, plain)), \
        "the same gradients as without recompute"


# -- the allocator -----------------------------------------------------------------------------
ALLOC_SETTINGS = "import torch; print(torch._C._accelerator_getAllocatorSettings())"
SETTING = re.compile(r"set `PYTORCH_CUDA_ALLOC_CONF=(\w+):(\w+)` before the program starts")


def _alloc_conf(value, variable="PYTORCH_CUDA_ALLOC_CONF", code=ALLOC_SETTINGS):
    """A fresh Python with ``variable=value`` set before it starts: (exit status, out, err)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
    env[variable] = value
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout.strip(), done.stderr


@claim("torch-gpu-alloc-conf-expandable-segments")
def test_alloc_conf_expandable_segments_is_a_setting_pytorch_parses():
    """The setting as the chapter's sentence spells it. A CPU build cannot grow a segment, but
    it parses the variable as a CUDA build does: it reads this variable (not a look-alike),
    once, and checks ``expandable_segments`` as a True/False switch, so a wrong value is
    refused; a misspelled key is never checked, and the last assertion fails for it."""
    chapter = (SOURCES / "11_gpu.py").read_text(encoding="utf-8").replace("\n#", "\n")
    key, value = SETTING.search(" ".join(chapter.split())).groups()
    assert (key, value) == ("expandable_segments", "True")
    assert _alloc_conf(f"{key}:{value}")[:2] == (0, f"{key}:{value}")
    assert _alloc_conf(f"{key}:{value}", variable="PYTORCH_CUDA_ALLOC_CONFIG")[:2] == (0, "")
    later = ("import os, torch; read = torch._C._accelerator_getAllocatorSettings; print(read()); "
             f"os.environ['PYTORCH_CUDA_ALLOC_CONF'] = '{key}:False'; print(read())")
    assert _alloc_conf(f"{key}:{value}", code=later)[1] == f"{key}:{value}\n{key}:{value}", \
        "read once: a change made while the program runs is ignored"
    assert _alloc_conf(f"{key}:False")[0] == 0
    for wrong in ("Yes", value.lower()):                    # "true" is refused as well
        status, _, err = _alloc_conf(f"{key}:{wrong}")
        assert status != 0, "PyTorch checks this key's value: it knows the key"
        assert f"Expected 'True' or 'False' at index 2 in ConfigTokenizer but got '{wrong}'" in err


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


PADDLE_FLAGS = ("import os; os.environ['GLOG_minloglevel'] = '2'; import paddle; print(paddle."
                "get_flags(['FLAGS_allocator_strategy', 'FLAGS_fraction_of_gpu_memory_to_use']))")


@claim("paddle-gpu-allocator-flags")
def test_paddle_allocator_flags(paddle):
    """The defaults read back exactly (auto_growth; 0.92 of the GPU for the older strategy),
    and setting the fraction, in the environment or with set_flags, changes what is read."""
    fraction = "FLAGS_fraction_of_gpu_memory_to_use"
    assert paddle.get_flags(["FLAGS_allocator_strategy"]) == {"FLAGS_allocator_strategy":
                                                              "auto_growth"}
    default = paddle.get_flags([fraction])[fraction]
    assert np.float32(default) == np.float32(0.92)
    try:
        paddle.set_flags({fraction: 0.5})
        assert paddle.get_flags([fraction]) == {fraction: 0.5}
    finally:
        paddle.set_flags({fraction: default})
    assert paddle.get_flags([fraction])[fraction] == default
    env = dict(os.environ, FLAGS_allocator_strategy="naive_best_fit",   # set before it starts
               FLAGS_fraction_of_gpu_memory_to_use="0.25")
    out = subprocess.run([sys.executable, "-c", PADDLE_FLAGS], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.strip() == str({"FLAGS_allocator_strategy": "naive_best_fit", fraction: 0.25})
    with pytest.raises(ValueError, match="cannot set its value through this function"):
        paddle.set_flags({"FLAGS_fraction_of_gpu_memory_to_us": 0.5})     # not a flag


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
@row("paddle-names-11", "what you get without a GPU", "`ValueError` from `paddle.set_device`")
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
