"""The glossary's names table, rows "GPU memory" to "assert" (the rest of glossary_b's rows are
in test_rows_glossary_b.py): each PyTorch and Paddle cell run for what its row means.

The GPU halves run where a GPU is seen; on a CPU build the tests prove what the build can: the
documented meaning and the CPU build's answer.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from absence import spellings_found
from claims import row



# -- GPU memory ----------------------------------------------------------------------------------
@row("torch-names-glossary", "GPU memory", "`torch.cuda.memory_allocated()`")
def test_torch_memory_allocated_counts_the_bytes_of_live_cuda_tensors():
    doc = " ".join(torch.cuda.memory_allocated.__doc__.split())
    assert doc.startswith("Return the current GPU memory occupied by tensors in bytes")
    if not torch.cuda.is_available():
        assert torch.cuda.memory_allocated() == 0       # a CPU build: no GPU tensors
        return
    before = torch.cuda.memory_allocated()
    x = torch.empty(1024 * 1024, dtype=torch.uint8, device="cuda")
    assert torch.cuda.memory_allocated() - before == 1024 * 1024
    del x
    assert torch.cuda.memory_allocated() == before


@row("paddle-names-glossary", "GPU memory", "`paddle.device.cuda.memory_allocated()`")
def test_paddle_memory_allocated_counts_the_bytes_of_live_gpu_tensors(paddle):
    doc = " ".join(paddle.device.cuda.memory_allocated.__doc__.split())
    assert "Return the current size of memory that is allocated to tensor" in doc
    if paddle.device.cuda.device_count() == 0:
        with pytest.raises(ValueError, match="not supported in CPU-only PaddlePaddle"):
            paddle.device.cuda.memory_allocated()
        return
    before = paddle.device.cuda.memory_allocated()
    x = paddle.empty([1024 * 1024], dtype="uint8").cuda()
    assert paddle.device.cuda.memory_allocated() - before >= 1024 * 1024
    del x


# -- dynamic / static graph ----------------------------------------------------------------------
@row("torch-names-glossary", "dynamic / static graph", "eager (default) / `torch.compile`")
def test_torch_runs_eagerly_and_compile_captures_a_graph_once():
    x = torch.tensor([0.5, 1.0])
    y = torch.sin(x) * 2                                # eager: computed on the spot
    assert y.tolist() == pytest.approx([2 * np.sin(0.5), 2 * np.sin(1.0)])
    graphs = []

    def recording_backend(gm, example_inputs):          # sees the captured graph
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(lambda t: torch.sin(t) * 2, backend=recording_backend)
    assert torch.equal(compiled(x), y)
    assert torch.equal(compiled(x + 1), torch.sin(x + 1) * 2)
    assert len(graphs) == 1, "captured once, then reused"
    targets = [node.target for node in graphs[0].graph.nodes]
    assert torch.sin in targets


@row("paddle-names-glossary", "dynamic / static graph", "dynamic (default) / `paddle.static`")
def test_paddle_is_dynamic_by_default_and_paddle_static_builds_a_program(paddle):
    assert paddle.in_dynamic_mode()
    assert (paddle.to_tensor([1.0, 2.0]) * 2).tolist() == [2.0, 4.0]     # computed at once
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [2], "float32")
            y = x * 2                                    # only an entry in the program
        assert not paddle.in_dynamic_mode() and not isinstance(y, paddle.Tensor)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        (out,) = exe.run(main, feed={"x": np.float32([1.0, 2.0])}, fetch_list=[y])
        assert out.tolist() == [2.0, 4.0]
    finally:
        paddle.disable_static()
    assert paddle.in_dynamic_mode()


# -- assert --------------------------------------------------------------------------------------
@row("torch-names-glossary", "assert", "`torch.testing.assert_close`")
def test_torch_testing_assert_close_raises_on_tensors_that_differ():
    """The table's "—" is wrong: PyTorch has a public assert for tensors."""
    assert "torch.testing.assert_close" in spellings_found([torch.testing], ["assert"])
    torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))


@row("paddle-names-glossary", "assert",
     "— (static graph: `paddle.static.nn.control_flow.Assert`)")
def test_paddle_has_no_dynamic_assert_and_a_static_assert_op(paddle):
    import paddle.static.nn.control_flow as control_flow
    owners = [paddle, paddle.nn, paddle.tensor, paddle.autograd, paddle.static, paddle.static.nn]
    assert spellings_found(owners, ["assert"]) == []
    assert "paddle.static.nn.control_flow.Assert" in spellings_found([control_flow], ["assert"])
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [2], "float32")
            control_flow.Assert(paddle.all(x > 0))
            y = x * 2
        exe = paddle.static.Executor(paddle.CPUPlace())
        assert exe.run(main, feed={"x": np.ones(2, "float32")}, fetch_list=[y])[0].tolist() \
            == [2.0, 2.0]
        with pytest.raises(ValueError, match="must be true, but received false"):
            exe.run(main, feed={"x": -np.ones(2, "float32")}, fetch_list=[y])
    finally:
        paddle.disable_static()
