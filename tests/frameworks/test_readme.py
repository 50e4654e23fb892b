"""What README.md (and README.zh.md) says about PyTorch and Paddle, run in them."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import paddle
import pytest
import torch

import dltutor as dt
from dltutor import nn, optim

from claims import claim, row

ROOT = Path(__file__).resolve().parents[2]
#: The README's table of Paddle's own spellings, row by row (tests/notebooks/test_table_cells.py).
PR = "paddle-names-readme"
LAYER, SUBLAYER = "`paddle.nn.Layer`", "`layer.add_sublayer(name, sub)`"
CREATE = "`layer.create_parameter(shape, attr=..., is_bias=...)`"
SET_STATE, STOP = "`layer.set_state_dict(sd)`", "`p.stop_gradient = True`"
LINEAR = "`nn.Linear(4, 2, weight_attr=ParamAttr(...), bias_attr=False)`"
SHAPES = "`paddle.zeros(shape=[3])`, `paddle.normal(0, 1, shape=(2, 1))`"
CLEAR = "`opt.clear_grad()`, `layer.clear_gradients()` (Paddle)"


def loss_closure(opt, w):
    """The closure ``opt.step(closure)`` calls: clear the gradients, then the loss
    ``sum(w * w) + sum(w)`` and its backward; it returns the loss. (Made here, outside the
    test's loop over frameworks, so it holds this framework's ``opt`` and ``w``.)"""
    def closure():
        opt.zero_grad()
        loss = (w * w).sum() + w.sum()
        loss.backward()
        return loss
    return closure


@claim("torch-readme-same-spellings")
def test_the_readmes_pytorch_lines_run_with_torch_replaced_by_dt(tmp_path):
    for framework in (torch, dt):
        layers = [framework.nn.Linear(3, 2), framework.nn.LazyLinear(2), framework.nn.CrossEntropyLoss()]
        assert [type(m).__name__ for m in layers] == ["Linear", "LazyLinear", "CrossEntropyLoss"]
        w = framework.nn.Parameter(framework.zeros(2, 3))
        with framework.no_grad():
            framework.nn.init.normal_(w, 0, 0.01)
            w.zero_()
        w.grad = framework.ones(2, 3) * 10
        total = framework.nn.utils.clip_grad_norm_([w], 1.0)
        assert float(total) == pytest.approx(np.sqrt(6) * 10)
        for name in ("SGD", "Adam", "AdamW"):
            getattr(framework.optim, name)([w], lr=0.1)
        for name in ("LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
                     "CosineAnnealingLR"):
            assert hasattr(framework.optim.lr_scheduler, name), name
        values, indices = framework.tensor([[1.0, 3.0], [4.0, 2.0]]).max(dim=1)
        assert values.tolist() == [3.0, 4.0] and indices.tolist() == [1, 0]
        assert tuple(framework.normal(0, 0.01, size=(2, 1)).shape) == (2, 1)
        copy = w.detach().clone()
        assert copy.requires_grad is False
        path = str(tmp_path / f"{framework.__name__}.bin")
        framework.save(framework.ones(2), path)
        loaded = framework.load(path, weights_only=True, map_location="cpu")
        assert loaded.tolist() == [1.0, 1.0]
        data = __import__(f"{framework.__name__}.utils.data", fromlist=["DataLoader"])
        loader = data.DataLoader(data.TensorDataset(framework.ones(3, 2)), batch_size=2)
        assert [tuple(batch[0].shape) for batch in loader] == [(2, 2), (1, 2)]
        w.grad = framework.ones(2, 3)
        opt = framework.optim.SGD([w], lr=0.5)
        opt.zero_grad(set_to_none=False)
        assert w.grad is not None and float(w.grad.sum()) == 0.0

        before = w.detach().clone()
        assert float(opt.step(loss_closure(opt, w))) == pytest.approx(float((before * before).sum() + before.sum()))
        assert np.allclose(w.detach().numpy(), before.numpy() - 0.5 * (2 * before.numpy() + 1))


@claim("torch-readme-differences")
def test_where_pytorch_differs_from_dltutor_as_the_readme_says(tmp_path):
    p = torch.nn.Parameter(torch.zeros(2))
    assert isinstance(p.data, torch.Tensor)                 # PyTorch: a tensor; dltutor: the array
    assert isinstance(nn.Parameter(dt.zeros(2)).data, np.ndarray)
    p.grad = torch.tensor([float("nan"), 1.0])
    torch.optim.SGD([p], lr=0.1).step()                     # PyTorch applies a NaN gradient
    assert torch.isnan(p.data[0]) and p.data[1].item() == pytest.approx(-0.1)
    ours = nn.Parameter(dt.zeros(2))
    ours.grad = dt.tensor([float("nan"), 1.0])
    with pytest.raises(Exception, match="(?i)nan"):
        optim.SGD([ours], lr=0.1).step()                    # dltutor refuses it
    torch.save({"x": torch.ones(1)}, tmp_path / "a.pt")     # torch.save writes a pickle (in a zip)
    with zipfile.ZipFile(tmp_path / "a.pt") as archive:
        assert any(name.endswith("data.pkl") for name in archive.namelist())


@claim("paddle-readme-per-parameter-ideas")
def test_paddles_per_parameter_ideas_exist_under_these_names():
    attr = paddle.ParamAttr(learning_rate=2.0, regularizer=paddle.regularizer.L2Decay(1e-4),
                            need_clip=False)
    layer = paddle.nn.Linear(3, 2, weight_attr=attr)
    assert layer.weight.optimize_attr["learning_rate"] == 2.0
    assert isinstance(layer.weight.regularizer, paddle.regularizer.L2Decay)
    assert layer.weight.need_clip is False
    for name in ("ClipGradByValue", "ClipGradByNorm", "ClipGradByGlobalNorm"):
        assert hasattr(paddle.nn, name) and hasattr(optim, name)
    assert isinstance(paddle.nn.initializer.Normal(0.0, 0.01), paddle.nn.initializer.Initializer)


@claim("paddle-readme-scheduler-is-the-learning-rate")
@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamW", "Adagrad", "RMSProp",
                                  "Lamb"])
def test_a_paddle_scheduler_is_passed_as_the_optimizers_learning_rate(name):
    """Paddle's way, for each of its common optimizers: the schedule is the learning rate."""
    layer = paddle.nn.Linear(2, 1)
    schedule = paddle.optimizer.lr.StepDecay(learning_rate=1.0, step_size=2, gamma=0.5)
    opt = getattr(paddle.optimizer, name)(learning_rate=schedule, parameters=layer.parameters())
    seen = []
    for _ in range(5):
        seen.append(opt.get_lr())
        schedule.step()
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25]


@claim("paddle-readme-per-parameter-ideas")
@row(PR, LAYER, LAYER)
@row(PR, SUBLAYER, SUBLAYER)
@row(PR, CREATE, CREATE)
@row(PR, SET_STATE, SET_STATE)
@row(PR, LINEAR, LINEAR)
def test_a_paddle_snippet_runs_with_paddle_replaced_by_dltutors_names():
    """One snippet, written with Paddle's names, run in Paddle and in dltutor: ParamAttr on a
    Linear, bias_attr=False, create_parameter, add_sublayer, set_state_dict, stop_gradient."""
    spellings = {
        paddle: dict(nn=paddle.nn, ParamAttr=paddle.ParamAttr, L2Decay=paddle.regularizer.L2Decay,
                     Constant=paddle.nn.initializer.Constant, seed=paddle.seed, ones=paddle.ones,
                     lr_mult=lambda p: p.optimize_attr["learning_rate"],
                     coeff=lambda r: r._coeff),
        dt: dict(nn=dt.nn, ParamAttr=dt.nn.ParamAttr, L2Decay=optim.L2Decay,
                 Constant=dt.nn.init.Constant, seed=dt.manual_seed, ones=dt.ones,
                 lr_mult=lambda p: p.lr_mult, coeff=lambda r: r.coeff),
    }
    seen = {}
    for framework, fw in spellings.items():
        fw["seed"](0)
        attr = fw["ParamAttr"](learning_rate=0.5, regularizer=fw["L2Decay"](0.01), need_clip=False,
                               initializer=fw["Constant"](0.5))
        fc = fw["nn"].Linear(3, 2, weight_attr=attr, bias_attr=False)
        model = fw["nn"].Layer()
        assert model.add_sublayer("fc", fc) is fc
        w = model.create_parameter([300, 200])               # not registered until assigned
        b = model.create_parameter([4], is_bias=True)
        names_before = [name for name, _ in model.named_parameters()]
        model.w = w
        limit = np.sqrt(6 / (300 + 200))                     # Paddle's default: XavierUniform
        w_values = w.numpy()
        other = fw["nn"].Linear(3, 2)
        state = other.state_dict()
        state.pop("bias")
        state["extra"] = fw["ones"]([1])
        loaded = fw["nn"].Linear(3, 2).set_state_dict(state)
        t = fw["ones"]([2])
        tensor_stops = t.stop_gradient
        t.stop_gradient = False
        seen[framework] = dict(
            # Paddle stores a Linear weight as (in, out) = (3, 2); dltutor keeps PyTorch's
            # (out, in) = (2, 3). The values and attributes agree; the layout does not.
            weight_shape=tuple(fc.weight.shape), weight_values=fc.weight.numpy().ravel().tolist(),
            lr=fw["lr_mult"](fc.weight), regularizer=type(fc.weight.regularizer).__name__,
            coeff=fw["coeff"](fc.weight.regularizer), need_clip=fc.weight.need_clip,
            bias=fc.bias, param_stops=fc.weight.stop_gradient,
            names_before=names_before, names_after=[n for n, _ in model.named_parameters()],
            w_shape=tuple(w.shape), w_within_limit=bool(np.abs(w_values).max() <= limit),
            w_std=float(w_values.std()), b=b.numpy().tolist(), loaded=loaded,
            tensor_stops=tensor_stops, tensor_after=(t.stop_gradient, t.stop_gradient is False))
    ours, theirs = seen[dt], seen[paddle]
    assert theirs.pop("weight_shape") == (3, 2) and ours.pop("weight_shape") == (2, 3)
    assert theirs.pop("w_std") == pytest.approx(limit / np.sqrt(3), rel=0.02)
    assert ours.pop("w_std") == pytest.approx(limit / np.sqrt(3), rel=0.02)
    assert ours == theirs
    assert ours["loaded"] == (["bias"], ["extra"])
    # both list a layer's own parameters before its sublayers'
    assert ours["names_before"] == ["fc.weight"] and ours["names_after"] == ["w", "fc.weight"]
    assert ours["bias"] is None and ours["lr"] == 0.5 and ours["need_clip"] is False


@claim("paddle-readme-per-parameter-ideas")
@row(PR, SHAPES, SHAPES)
def test_paddles_shape_keyword_snippets_run_with_paddle_replaced_by_dt():
    """The README's `paddle.zeros(shape=[3])` and `paddle.normal(0, 1, shape=(2, 1))` rows:
    the same shapes (and the same zeros and fills) in Paddle 3.3 and in dltutor."""
    for fw in (paddle, dt):
        assert fw.zeros(shape=[3]).numpy().tolist() == [0.0, 0.0, 0.0]
        assert tuple(fw.ones(shape=[2, 1]).shape) == (2, 1)
        assert fw.full(shape=[2], fill_value=1.5).numpy().tolist() == [1.5, 1.5]
        assert tuple(fw.normal(0.0, 1.0, shape=(2, 1)).shape) == (2, 1)
        assert tuple(fw.rand(shape=[2, 3]).shape) == (2, 3)
        assert tuple(fw.randn(shape=[4]).shape) == (4,)


@claim("paddle-readme-per-parameter-ideas")
@row(PR, STOP, STOP)
def test_stop_gradient_true_on_a_parameter_means_no_gradient_in_both():
    layer, ours = paddle.nn.Linear(2, 1), nn.Linear(2, 1)
    layer.weight.stop_gradient = True
    ours.weight.stop_gradient = True
    layer(paddle.ones([3, 2])).sum().backward()
    ours(dt.ones((3, 2))).sum().backward()
    assert layer.weight.grad is None and layer.bias.grad is not None
    assert ours.weight.requires_grad is False
    assert ours.weight.grad is None and ours.bias.grad is not None


@claim("paddle-readme-per-parameter-ideas")
@row(PR, CLEAR, CLEAR)
def test_paddles_clear_grad_and_clear_gradients_leave_zeros_as_dltutors_do():
    """Paddle's two spellings keep each gradient as zeros (not None), and so do dltutor's."""
    layer, ours = paddle.nn.Linear(2, 1), nn.Linear(2, 1)
    opts = (paddle.optimizer.SGD(parameters=layer.parameters()),
            optim.SGD(ours.parameters(), lr=0.1))
    for net, opt, ones in ((layer, opts[0], paddle.ones([3, 2])), (ours, opts[1], dt.ones((3, 2)))):
        for clear in (opt.clear_grad, net.clear_gradients):
            net(ones).sum().backward()
            assert all(p.grad.numpy().any() for p in net.parameters())
            clear()
            assert all(p.grad is not None and not p.grad.numpy().any()
                       for p in net.parameters())


def _tools_examples(readme: str) -> list[str]:
    """The code blocks of the README's "take the tools with you" section."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    section = text.split("## Take the tools with you" if readme == "README.md"
                         else "## 把工具带走")[1].split("\n## ")[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@claim("torch-diagnose-verdicts", "paddle-diagnose-verdicts")
@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readmes_diagnose_examples_print_what_they_say(readme, paddle):
    import contextlib
    import io

    examples = _tools_examples(readme)
    assert len(examples) == 2
    for code in examples:
        expected = code.rstrip().splitlines()[-1].removeprefix("# ")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(code, {})
        assert printed.getvalue().strip() == expected


@claim("torch-readme-layout-homes")
def test_pytorch_keeps_its_fill_functions_in_nn_init_and_clipping_in_nn_utils():
    """The Layout section: nn/init holds PyTorch's fill functions, nn/utils the clipping
    functions "where PyTorch keeps them"; dltutor keeps each under the same name."""
    for name in ("normal_", "uniform_", "xavier_uniform_", "kaiming_normal_", "zeros_"):
        assert callable(getattr(torch.nn.init, name)) and callable(getattr(nn.init, name))
    for name in ("clip_grad_norm_", "clip_grad_value_"):
        assert callable(getattr(torch.nn.utils, name)) and callable(getattr(nn.utils, name))


@claim("paddle-readme-layout-homes")
def test_paddles_initializers_and_clip_objects_are_objects_under_these_names():
    """The Layout section: Paddle initializes with initializer objects and clips with clip
    objects handed to the optimizer; dltutor has both under Paddle's names."""
    for name in ("Normal", "Uniform", "XavierUniform", "KaimingNormal", "Constant"):
        assert isinstance(getattr(paddle.nn.initializer, name)(), paddle.nn.initializer.Initializer)
        assert hasattr(nn.init, name)
    layer = paddle.nn.Linear(2, 1)
    for name in ("ClipGradByValue", "ClipGradByNorm", "ClipGradByGlobalNorm"):
        clip = getattr(paddle.nn, name)(1.0)
        paddle.optimizer.SGD(parameters=layer.parameters(), grad_clip=clip)   # accepted
        assert hasattr(optim, name)
