"""Chapter 00 (welcome): the "Where dltutor differs from PyTorch" table, row by row, in PyTorch.

Each row of that table is a claim about what PyTorch 2.x does; each test below builds the row's
situation in real PyTorch (and Paddle, for the row that names Paddle's ideas) and asserts what
the row says.
"""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

from claims import claim


@claim("torch-welcome-module-names")
def test_torch_has_the_modules_dltutor_mirrors():
    import importlib

    for name in ("torch.nn", "torch.optim", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
                 "torch.utils.data"):
        assert importlib.import_module(name).__name__ == name
        assert importlib.import_module(name.replace("torch", "dltutor", 1))


@claim("torch-welcome-module-names")
def test_a_tutorials_data_import_line_runs_with_the_module_name_replaced():
    """``from torch.utils.data import DataLoader, TensorDataset``, the import line of most
    PyTorch tutorials, with ``torch`` replaced: the same batches in the same order."""
    import importlib

    batches = {}
    for framework in ("torch", "dltutor"):
        fw = importlib.import_module(framework)
        data = importlib.import_module(f"{framework}.utils.data")
        x = fw.tensor(np.arange(10.0).reshape(5, 2))
        y = fw.tensor(np.arange(5))
        loader = data.DataLoader(data.TensorDataset(x, y), batch_size=2)
        batches[framework] = [(xb.numpy().tolist(), yb.numpy().tolist()) for xb, yb in loader]
    assert batches["torch"] == batches["dltutor"]


@claim("torch-differs-param-data-tensor")
def test_p_data_is_a_tensor_with_in_place_methods():
    p = torch.nn.Parameter(torch.zeros(2, 2))
    assert type(p.data) is torch.Tensor and not isinstance(p.data, np.ndarray)
    p.data.normal_(0, 0.01)                              # the row's example runs, in place
    assert p.abs().max().item() > 0 and p.abs().max().item() < 0.1


@claim("torch-differs-float64-input-refused")
def test_float64_input_to_a_float32_layer_is_refused():
    layer = torch.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype"):
        layer(torch.zeros(4, 3, dtype=torch.float64))


@claim("torch-differs-complex-allowed")
def test_complex_tensors_are_allowed():
    t = torch.tensor([1.0 + 2.0j])
    assert t.dtype == torch.complex64 and t.imag.item() == 2.0


@claim("torch-differs-param-twice")
def test_one_parameter_twice_warns_in_one_group_and_raises_across_groups():
    p = torch.nn.Parameter(torch.zeros(2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = torch.optim.SGD([p, p], lr=0.1)              # twice in ONE group: a warning
    assert [w.category for w in caught] == [UserWarning]
    assert "duplicate parameters" in str(caught[0].message)
    p.grad = torch.ones(2)
    opt.step()
    assert p.tolist() == pytest.approx([-0.2, -0.2])      # two updates of -0.1 in one step

    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        torch.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)     # in TWO groups: refused
    opt = torch.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})


@claim("torch-differs-tied-names-last-wins")
def test_tied_names_with_different_values_the_last_name_wins():
    layer = torch.nn.Linear(2, 2)
    net = torch.nn.Sequential(layer, layer)               # one layer under the names 0 and 1
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    state = {"0.weight": torch.ones(2, 2), "0.bias": torch.ones(2),
             "1.weight": torch.full((2, 2), 2.0), "1.bias": torch.full((2,), 2.0)}
    result = net.load_state_dict(state)                   # no error, no warning
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert layer.weight.unique().tolist() == [2.0] and layer.bias.tolist() == [2.0, 2.0]
    # "last" is the module order (the order of the state dict's own keys), not the order of the
    # dictionary passed in: reversed, the value of "1." still wins.
    net.load_state_dict(dict(reversed(list(state.items()))))
    assert layer.weight.unique().tolist() == [2.0]


@claim("torch-differs-load-state-dict-half-applied")
def test_load_state_dict_copies_what_fits_then_raises():
    source = torch.nn.Linear(8, 1)
    small = torch.nn.Linear(4, 1)                         # bias (1,) fits, weight (1, 8) does not
    weight_before = small.weight.detach().clone()
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        small.load_state_dict(source.state_dict())
    assert torch.equal(small.bias, source.bias)           # already copied when it raised
    assert torch.equal(small.weight, weight_before)


@claim("torch-differs-lr-clip-by-hand")
def test_per_parameter_lr_is_a_group_and_clipping_touches_only_what_you_pass():
    a, b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    assert not hasattr(a, "lr_mult") and not hasattr(a, "need_clip")
    opt = torch.optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.01}], lr=0.1)
    a.grad, b.grad = torch.ones(2), torch.ones(2)
    opt.step()
    assert a.tolist() == pytest.approx([-0.1, -0.1]) and b.tolist() == pytest.approx([-0.01, -0.01])
    a.grad, b.grad = torch.tensor([3.0, 4.0]), torch.tensor([30.0, 40.0])
    torch.nn.utils.clip_grad_norm_([a], max_norm=1.0)     # only a is clipped
    assert a.grad.tolist() == pytest.approx([0.6, 0.8], abs=1e-6)
    assert b.grad.tolist() == [30.0, 40.0]


@claim("paddle-differs-lr-mult-need-clip")
def test_paddle_has_a_per_parameter_lr_and_need_clip():
    import paddle

    paddle.seed(0)
    attr = paddle.ParamAttr(learning_rate=0.5, need_clip=False)
    layer = paddle.nn.Linear(2, 2, weight_attr=attr)
    assert layer.weight.optimize_attr["learning_rate"] == 0.5
    assert layer.weight.need_clip is False and layer.bias.need_clip is True
    before = layer.weight.numpy().copy()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters())
    layer(paddle.ones([1, 2])).sum().backward()           # d/dW of the sum: all ones
    opt.step()
    assert np.allclose(before - layer.weight.numpy(), 0.05)   # 0.1 x 0.5 x 1


@claim("torch-differs-nonfinite-applied")
def test_a_nan_gradient_is_applied():
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.tensor([1.0, float("nan"), 1.0])
    torch.optim.SGD([p], lr=0.1).step()                   # no error, no warning
    assert torch.isnan(p[1]) and p[0].item() == pytest.approx(0.9)


@claim("torch-differs-clip-threshold-accepted")
def test_a_threshold_of_zero_or_below_is_accepted():
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    torch.nn.utils.clip_grad_norm_([p], max_norm=0.0)
    assert p.grad.tolist() == [0.0, 0.0]                  # zeroed
    p.grad = torch.tensor([3.0, 4.0])
    torch.nn.utils.clip_grad_norm_([p], max_norm=-1.0)
    assert p.grad.tolist() == pytest.approx([-0.6, -0.8], abs=1e-6)     # flipped


RAN = []


def _record(what):
    RAN.append(what)


class _RunsWhenUnpickled:
    def __reduce__(self):
        return (_record, ("code ran",))               # unpickling calls _record("code ran")


@claim("torch-differs-load-may-unpickle")
def test_torch_load_unpickles_with_weights_only_false(tmp_path):
    path = tmp_path / "object.pt"
    torch.save({"weight": torch.zeros(1), "extra": _RunsWhenUnpickled()}, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(path)                                  # PyTorch 2.6+: weights only by default
    assert RAN == []
    torch.load(path, weights_only=False)                  # a pickle: its code runs
    assert RAN == ["code ran"]


@claim("torch-differs-type-string")
def test_t_type_names_the_tensor_class():
    assert torch.zeros(2).type() == "torch.FloatTensor"


@claim("torch-differs-shape-dtype-print")
def test_shape_and_dtype_print_with_torchs_names():
    import dltutor as dt

    t = torch.zeros(2, 3)
    assert f"{t.shape} {t.dtype}" == "torch.Size([2, 3]) torch.float32"
    assert isinstance(t.shape, tuple)                      # a tuple subclass, printed its own way
    mine = dt.zeros(2, 3)
    assert f"{mine.shape} {mine.dtype}" == "(2, 3) float32"


@claim("torch-differs-grad-fn-name")
def test_a_layer_output_names_the_function_called_without_an_address():
    import re

    import dltutor as dt
    from dltutor import nn

    theirs = torch.nn.Linear(3, 2)(torch.ones(4, 3))
    assert "grad_fn=<AddmmBackward0>" in repr(theirs)
    assert re.fullmatch(r"<AddmmBackward0 object at 0x[0-9a-f]+>", repr(theirs.grad_fn))
    mine = nn.Linear(3, 2)(dt.ones(4, 3))
    assert "grad_fn=<LinearBackward>" in repr(mine)
    assert repr(mine.grad_fn) == "<LinearBackward>"
    # An elementwise op reads alike, but for PyTorch's version digit.
    assert type((torch.ones(2, requires_grad=True) * 2).grad_fn).__name__ == "MulBackward0"
    assert repr((dt.ones(2, requires_grad=True) * 2).grad_fn) == "<MulBackward>"
