"""Chapter 02 (parameter access): what it says PyTorch and Paddle do, run in both."""
from __future__ import annotations

import contextlib
import io
import zipfile

import numpy as np
import pytest
import torch

from chapters import chapter_definition
from claims import claim, row


@claim("torch-access-linear-weight-out-in")
def test_torch_linear_weight_is_out_by_in():
    layer = torch.nn.Linear(8, 1)
    assert tuple(layer.weight.shape) == (1, 8) and tuple(layer.bias.shape) == (1,)
    assert list(layer.state_dict()) == ["weight", "bias"]


@claim("paddle-access-linear-weight-in-out")
def test_paddle_linear_stores_the_transpose():
    import paddle

    layer = paddle.nn.Linear(8, 1)
    assert list(layer.weight.shape) == [8, 1] and list(layer.bias.shape) == [1]
    x = paddle.ones([2, 8])
    assert np.allclose(layer(x).numpy(), x.numpy() @ layer.weight.numpy() + layer.bias.numpy())


@claim("torch-access-no-summary")
def test_torch_has_no_parameter_summary_function():
    import torch.nn.utils
    import torch.utils

    for where in (torch, torch.nn, torch.nn.Module, torch.nn.utils, torch.utils):
        assert not [name for name in dir(where) if "summary" in name.lower()], where


@claim("paddle-access-summary")
def test_paddle_summary_tabulates_a_network():
    import paddle

    net = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        totals = paddle.summary(net, input_size=(2, 4))
    assert totals == {"total_params": 49, "trainable_params": 49}
    assert "Total params: 49" in printed.getvalue()


@claim("torch-access-parameter-table-runs")
def test_the_chapters_parameter_table_runs_unchanged_on_a_torch_model():
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    parameter_table = chapter_definition("02_parameter_access", "def parameter_table(model):",
                                         {"dt": torch})["parameter_table"]
    with contextlib.redirect_stdout(io.StringIO()):
        rows = parameter_table(net)
    assert rows == [("0.weight", (8, 4), 32, True), ("0.bias", (8,), 8, True),
                    ("2.weight", (1, 8), 8, True), ("2.bias", (1,), 1, True)]


@claim("torch-access-save-pickle")
@row("torch-names-02", "save one layer", "`torch.save(net[2].state_dict(), path)` (pickle)")
def test_torch_save_writes_a_pickle(tmp_path):
    path = tmp_path / "last_layer.pt"
    torch.save(torch.nn.Linear(8, 1).state_dict(), path)
    with zipfile.ZipFile(path) as archive:                # a zip holding a pickle
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
        assert len(pickles) == 1
        assert archive.read(pickles[0])[:1] == b"\x80"    # the pickle protocol opcode


@claim("torch-access-load-half-applied")
def test_torch_load_state_dict_copies_the_bias_then_raises():
    """The chapter's case: the state of a Linear(8, 1) loaded into a Linear(4, 1)."""
    torch.manual_seed(0)
    saved = torch.nn.Linear(8, 1).state_dict()
    small = torch.nn.Linear(4, 1)                         # bias (1,) fits, weight (1, 4) does not
    weight_before = small.weight.detach().clone()
    bias_before = small.bias.detach().clone()
    assert not torch.equal(bias_before, saved["bias"])
    with pytest.raises(RuntimeError) as raised:
        small.load_state_dict(saved)
    message = str(raised.value)
    assert "size mismatch for weight" in message
    assert "torch.Size([1, 8])" in message and "torch.Size([1, 4])" in message
    assert "bias" not in message.split("size mismatch for weight")[1]   # only the weight named
    assert torch.equal(small.bias, saved["bias"])         # copied before the error was raised
    assert torch.equal(small.weight, weight_before)       # the weight kept its old value


@claim("torch-access-load-half-applied")
@pytest.mark.parametrize("wrong", ["0.weight", "1.weight", "1.bias", "2.weight", "2.bias"])
def test_torch_load_state_dict_copies_every_entry_that_fits_and_raises_at_the_end(wrong):
    """"copies each entry that fits *as it goes* and raises only at the end": the entries
    before and after the one that does not fit are all copied, that one keeps its value."""
    torch.manual_seed(0)
    saved = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(3)]).state_dict()
    target = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(3)])
    layer, name = wrong.split(".")
    setattr(target[int(layer)], name, torch.nn.Parameter(torch.zeros(5, *saved[wrong].shape[1:])))
    with pytest.raises(RuntimeError, match=f"size mismatch for {wrong}:") as raised:
        target.load_state_dict(saved)
    assert str(raised.value).count("size mismatch") == 1
    for key, value in target.state_dict().items():
        assert torch.equal(value, saved[key]) == (key != wrong), key
    assert not target.get_parameter(wrong).any()              # the misfit kept its zeros


# ---------------------------------------------------------------- buffers (recipe)


class _Standardize(torch.nn.Module):
    """The chapter's module: a mean and std measured on data (buffers), then a Linear."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 1)
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("std", torch.ones(3))
        self.register_buffer("last_input", torch.zeros(3), persistent=False)
        self.scale = torch.ones(3)                   # a plain attribute: not registered

    def forward(self, x):
        self.last_input = x[-1].detach()
        return self.fc((x - self.mean) / self.std * self.scale)


@claim("torch-buffers-saved-moved-never-optimized")
@row("torch-names-02", "state that is not a parameter", '`register_buffer("mean", t)`')
@pytest.mark.parametrize("target, attribute", [(torch.float64, "dtype"), (torch.bfloat16, "dtype"),
                                               (torch.device("meta"), "device")])
def test_torch_buffers_are_saved_and_cast_but_never_parameters(target, attribute):
    """Cast (two dtypes) and moved (to another device: "meta", as this CPU has no GPU)."""
    model = _Standardize()
    assert [n for n, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]
    assert [n for n, _ in model.named_buffers()] == ["mean", "std", "last_input"]
    assert set(model.state_dict()) == {"mean", "std", "fc.weight", "fc.bias"}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    assert model.mean.grad is None and torch.equal(model.mean, torch.zeros(3))
    model.to(target)
    assert {getattr(t, attribute) for t in (model.mean, model.std, model.last_input,
                                            model.fc.weight)} == {target}
    assert getattr(model.scale, attribute) != target  # the plain attribute was left behind
    assert "scale" not in model.state_dict()
