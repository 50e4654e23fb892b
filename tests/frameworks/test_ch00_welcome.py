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


_FLOAT32_LAYERS = {       # a float32 layer, an input shape, the error PyTorch 2.13 raises
    "Linear": (lambda: torch.nn.Linear(4, 3), (2, 4), RuntimeError, "mat1 and mat2 must have"),
    "Linear, 3-D input": (lambda: torch.nn.Linear(4, 3), (2, 5, 4), RuntimeError, "mat1 and mat2"),
    "Linear, no bias": (lambda: torch.nn.Linear(4, 3, bias=False), (2, 4), RuntimeError,
                        "same dtype"),
    "Conv1d": (lambda: torch.nn.Conv1d(4, 3, 1), (2, 4, 5), RuntimeError, "should be the same"),
    "Conv2d": (lambda: torch.nn.Conv2d(4, 3, 1), (2, 4, 5, 5), RuntimeError, "should be the same"),
    "ConvTranspose2d": (lambda: torch.nn.ConvTranspose2d(4, 3, 1), (2, 4, 5, 5), RuntimeError,
                        "expected scalar type Double but found Float"),
    "BatchNorm1d": (lambda: torch.nn.BatchNorm1d(4), (2, 4), RuntimeError, "mixed dtype"),
    "LayerNorm": (lambda: torch.nn.LayerNorm(4), (2, 4), RuntimeError, "mixed dtype"),
    "GroupNorm": (lambda: torch.nn.GroupNorm(2, 4), (2, 4, 5), RuntimeError, "mixed dtype"),
    "PReLU": (lambda: torch.nn.PReLU(), (2, 4), RuntimeError, "Type promoting not supported"),
    "LSTM": (lambda: torch.nn.LSTM(4, 3), (5, 2, 4), ValueError, "does not match weight dtype"),
    "GRU": (lambda: torch.nn.GRU(4, 3), (5, 2, 4), ValueError, "does not match weight dtype"),
}


@claim("torch-differs-float64-input-refused")
@pytest.mark.parametrize("name", list(_FLOAT32_LAYERS))
def test_float64_input_to_a_float32_layer_is_refused(name):
    make, shape, error, message = _FLOAT32_LAYERS[name]
    with pytest.raises(error, match=message):
        make()(torch.zeros(*shape, dtype=torch.float64))


@claim("torch-differs-complex-allowed")
def test_complex_tensors_are_allowed():
    t = torch.tensor([1.0 + 2.0j])
    assert t.dtype == torch.complex64 and t.imag.item() == 2.0


_OPTIMIZERS = {                                          # lr 0.1, every other setting default
    "SGD": lambda params, **impl: torch.optim.SGD(params, lr=0.1, **impl),
    "SGD-momentum": lambda params, **impl: torch.optim.SGD(params, lr=0.1, momentum=0.9, **impl),
    "Adam": lambda params, **impl: torch.optim.Adam(params, lr=0.1, **impl),
    "AdamW": lambda params, **impl: torch.optim.AdamW(params, lr=0.1, **impl),
    "Adagrad": lambda params, **impl: torch.optim.Adagrad(params, lr=0.1, **impl),
    "RMSprop": lambda params, **impl: torch.optim.RMSprop(params, lr=0.1, **impl),
}


@claim("torch-differs-param-twice")
@pytest.mark.parametrize("name", list(_OPTIMIZERS))
def test_one_parameter_twice_warns_in_one_group_and_raises_across_groups(name):
    make, grad = _OPTIMIZERS[name], torch.tensor([1.0, -2.0])
    p, one, two = (torch.nn.Parameter(torch.ones(2)) for _ in range(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = make([p, p])                                # twice in ONE group: a warning
    assert [w.category for w in caught] == [UserWarning]
    assert "duplicate parameters" in str(caught[0].message)
    p.grad, one.grad = grad.clone(), grad.clone()
    opt.step()
    make([one]).step()                                    # one update, for comparison
    assert not torch.allclose(p, one)
    twice = make([two])                                   # two steps of the parameter alone
    for _ in range(2):
        two.grad = grad.clone()
        twice.step()
    if name == "SGD-momentum":     # both updates start a fresh buffer (= the gradient): -0.1 g each
        assert p.tolist() == pytest.approx([0.8, 1.4]) and not torch.allclose(p, two)
    else:
        assert torch.allclose(p, two)                     # two updates in one step

    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        make([{"params": [p]}, {"params": [p]}])            # in TWO groups: refused
    opt = make([p])
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


_IMPLEMENTATIONS = {"for-loop": {"foreach": False}, "foreach": {"foreach": True},
                    "fused": {"fused": True}}                # RMSprop has no fused version
# What one step writes where the gradient is +Inf: SGD, with or without momentum, moves the
# weight by -lr x Inf, to -Inf; the adaptive optimizers divide Inf by sqrt(Inf): NaN.
_INF_WRITES = {"SGD": float("-inf"), "SGD-momentum": float("-inf")}
_NONFINITE_CASES = [(name, impl, bad) for name in _OPTIMIZERS for impl in _IMPLEMENTATIONS
                    for bad in ("nan", "inf") if not (name == "RMSprop" and impl == "fused")]


@claim("torch-differs-nonfinite-applied")
@pytest.mark.parametrize("name, impl, bad", _NONFINITE_CASES)
def test_a_nan_or_inf_gradient_is_applied_by_every_optimizer(name, impl, bad):
    """No error, no warning, no skipped step: the entry whose gradient is NaN or +Inf becomes
    NaN (-Inf for SGD and an Inf gradient), the others take their usual step."""
    make = _OPTIMIZERS[name]
    p, clean = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3))
    p.grad, clean.grad = torch.tensor([1.0, float(bad), 1.0]), torch.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # a warning would fail the test
        make([p], **_IMPLEMENTATIONS[impl]).step()
    make([clean], **_IMPLEMENTATIONS[impl]).step()
    expected = float("nan") if bad == "nan" else _INF_WRITES.get(name, float("nan"))
    torch.testing.assert_close(p[1], torch.tensor(expected), equal_nan=True)
    assert not torch.isfinite(p[1])
    assert torch.equal(p[[0, 2]], clean[[0, 2]]) and (clean != 1.0).all()   # a real step


@claim("torch-differs-clip-threshold-accepted")
@pytest.mark.parametrize("clip, threshold, after", [
    ("clip_grad_norm_", 0.0, [0.0, 0.0]),                 # zeroed
    ("clip_grad_norm_", -1.0, [-0.6, -0.8]),              # flipped, to norm 1
    ("clip_grad_value_", 0.0, [0.0, 0.0]),                # zeroed
    ("clip_grad_value_", -1.0, [-1.0, -1.0]),             # clamp(min=1, max=-1): every entry -1
])
def test_a_threshold_of_zero_or_below_is_accepted(clip, threshold, after):
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    getattr(torch.nn.utils, clip)([p], threshold)         # no error, no warning
    assert p.grad.tolist() == pytest.approx(after, abs=1e-6)


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
