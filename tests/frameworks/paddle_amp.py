"""Paddle's GradScaler as it behaves on a GPU, in the CPU build the referees run.

A CPU build switches the scaler off (it warns "can only be enabled on CUDAPlace") and then
passes the loss through unscaled. The scaler asks the tracer where it runs; answering "a GPU"
for the moment it is made gives a scaler that scales, unscales and skips overflows with the
same code as on a GPU, while its ops still run on the CPU.
"""
from __future__ import annotations

from unittest import mock


class GpuPlace:
    """What GradScaler's place check asks; the scaler's ops still run on the CPU."""

    def is_gpu_place(self):
        return True

    def is_xpu_place(self):
        return False

    def is_custom_place(self):
        return False


def grad_scaler_as_on_a_gpu(paddle, init_loss_scaling: float):
    """A ``paddle.amp.GradScaler(init_loss_scaling=...)`` made as on a GPU (enabled)."""
    import paddle.amp.grad_scaler as grad_scaler
    tracer = mock.Mock(_expected_place=GpuPlace())
    with mock.patch.object(grad_scaler, "_dygraph_tracer", lambda: tracer):
        return paddle.amp.GradScaler(init_loss_scaling=init_loss_scaling)
