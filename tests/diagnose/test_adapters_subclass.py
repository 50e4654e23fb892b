"""The diagnostics' adapters (dltutor/diagnose/adapters) on what a learner writes: a model or an
optimizer that subclasses a framework's class, parameters given without names, and the
Recorder's step sampling around a framework's step (adapters/steps.py).

These run without PyTorch or Paddle: a class whose ``__module__`` starts with ``torch.`` is
what the adapters recognise, and the PyTorch adapter reads only attributes (tests/frameworks/
test_diagnose_subclass.py runs the same ideas with the real frameworks).
"""
from __future__ import annotations

import numpy as np
import pytest

import dltutor as dt
from dltutor import diagnose, nn, optim
from dltutor.diagnose.adapters import adapter_for, framework_of
from dltutor.diagnose.adapters.base import framework_class
from dltutor.diagnose.adapters.native import NativeAdapter
from dltutor.diagnose.adapters.steps import FrameworkSteps
from dltutor.diagnose.adapters.torch_adapter import TorchAdapter
from dltutor.diagnose.lookup import Entry


# -- stand-ins for PyTorch's classes (only where they come from matters) ------------------------
def torch_class(name: str, module: str, base: type = object, **body) -> type:
    cls = type(name, (base,), body)
    cls.__module__ = module
    return cls


Module = torch_class("Module", "torch.nn.modules.module")
SGD = torch_class("SGD", "torch.optim.sgd", state=None)
AdamW = torch_class("AdamW", "torch.optim.adamw", state=None)


class FakeTensor:
    """Enough of a torch.Tensor for the adapter: values, ``.grad``, ``detach().cpu().numpy()``."""

    def __init__(self, values, requires_grad=True):
        self.array = np.asarray(values, dtype=np.float32)
        self.shape, self.dtype = self.array.shape, "torch.float32"
        self.requires_grad, self.grad = requires_grad, None

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.array


def fake_optimizer(cls, groups, state=None):
    opt = cls()
    opt.param_groups, opt.state = groups, state or {}
    return opt


class MyModel(Module):
    """A learner's model: a subclass of (the stand-in of) torch.nn.Module, in this file."""


class MySGD(SGD):
    pass


class MyAdamW(AdamW):
    pass


# -- which framework --------------------------------------------------------------------------
@pytest.mark.parametrize("obj, framework", [
    (MyModel(), "torch"), (type("Deeper", (MyModel,), {})(), "torch"), (MySGD(), "torch"),
    (torch_class("Layer", "paddle.nn.layer.layers")(), "paddle"),
    (torch_class("Net", "torchvision.models")(), "dltutor"),     # another package's root
    (nn.Linear(2, 1), "dltutor"), (None, "dltutor"), (3, "dltutor"),
])
def test_a_framework_is_recognised_by_where_its_classes_come_from(obj, framework):
    assert framework_of(obj) == framework


def test_a_learners_subclass_is_named_by_the_framework_class_it_extends():
    assert framework_class(MySGD(), "torch") == "SGD"
    assert framework_class(type("Again", (MyAdamW,), {})(), "torch") == "AdamW"
    assert framework_class(SGD(), "torch") == "SGD"
    assert framework_class(MySGD(), "paddle") == "MySGD"      # not Paddle's: its own name


def test_a_subclassed_model_gets_the_pytorch_adapter_and_mixing_frameworks_is_refused():
    assert adapter_for(MyModel(), MySGD()).framework == "torch"
    assert adapter_for(MyModel()).framework == "torch"
    assert adapter_for(None, MySGD()).framework == "torch"
    net = nn.Linear(2, 1)
    for model, opt in ((MyModel(), optim.SGD(net.parameters(), lr=0.1)), (net, MySGD())):
        with pytest.raises(TypeError, match="different frameworks") as error:
            adapter_for(model, opt)
        assert type(model).__name__ in str(error.value) and type(opt).__name__ in str(error.value)


# -- the PyTorch adapter ----------------------------------------------------------------------
def params(n):
    return [FakeTensor(np.full(2, i + 1.0)) for i in range(n)]


def test_unnamed_parameters_are_numbered_across_groups_and_names_are_kept():
    p = params(4)
    plain = fake_optimizer(SGD, [{"params": p[:2], "lr": 0.5}, {"params": p[2:], "lr": 0.1}])
    entries = TorchAdapter().entries(plain)
    assert [(e.name, e.group_index) for e in entries] == [("#0", 0), ("#1", 0), ("#2", 1),
                                                          ("#3", 1)]
    assert [e.param for e in entries] == p and entries[2].group is plain.param_groups[1]
    named = fake_optimizer(SGD, [{"params": p[:2], "param_names": ["a", "b"], "lr": 0.5},
                                 {"params": p[2:], "param_names": ["c", None], "lr": 0.1}])
    assert [e.name for e in TorchAdapter().entries(named)] == ["a", "b", "c", "#3"]
    assert [TorchAdapter().group_lr(e) for e in TorchAdapter().entries(named)] == [0.5] * 2 + \
        [0.1] * 2


@pytest.mark.parametrize("cls, group, decay", [
    (SGD, {"weight_decay": 0.1}, (0.1, "group", None, 0.0, False)),
    (MySGD, {"weight_decay": 0.1}, (0.1, "group", None, 0.0, False)),
    (AdamW, {"weight_decay": 0.1}, (None, None, None, 0.1, False)),
    (MyAdamW, {"weight_decay": 0.1}, (None, None, None, 0.1, False)),
    (SGD, {"weight_decay": 0.1, "decoupled_weight_decay": True}, (None, None, None, 0.1, False)),
    (AdamW, {"weight_decay": 0}, (None, None, None, 0.0, False)),
    (SGD, {"weight_decay": None}, (None, None, None, 0.0, False)),
    (SGD, {}, (None, None, None, 0.0, False)),
])
def test_pytorch_weight_decay_is_decoupled_only_in_adamw_or_when_pytorch_says_so(cls, group,
                                                                                 decay):
    p = params(1)
    opt = fake_optimizer(cls, [{"params": p, "lr": 0.1, **group}])
    found = TorchAdapter().decay(TorchAdapter().entries(opt)[0])
    assert tuple(found) == decay


@pytest.mark.parametrize("cls, state, keys", [
    (SGD, {"momentum_buffer": [1.0, 2.0]}, ["momentum_buffer"]),
    (MySGD, {"momentum_buffer": [1.0, 2.0]}, ["momentum_buffer"]),
    (MyAdamW, {"exp_avg": [1.0, 2.0], "exp_avg_sq": [1.0, 4.0], "step": 3.0}, ["exp_avg"]),
    (SGD, {"momentum_buffer": None}, []),               # SGD without momentum keeps None
    (SGD, {}, []),
])
def test_momentum_state_is_read_for_a_subclassed_optimizer_too(cls, state, keys):
    p = params(1)
    state = {k: (FakeTensor(v) if isinstance(v, list) else v) for k, v in state.items()}
    opt = fake_optimizer(cls, [{"params": p, "lr": 0.1}], {p[0]: state})
    found = TorchAdapter().momentum_state(TorchAdapter().entries(opt)[0])
    assert [k for k, _ in found] == keys
    for key, value in found:
        np.testing.assert_array_equal(value, state[key].array)


def test_the_pytorch_adapter_reads_grad_values_and_requires_grad():
    p = FakeTensor([3.0, 4.0], requires_grad=False)
    adapter = TorchAdapter()
    assert adapter.grad(p) is None and adapter.requires_grad(p) is False
    p.grad = FakeTensor([0.5, 0.0])
    np.testing.assert_array_equal(adapter.grad(p), [0.5, 0.0])
    assert adapter.values(p).tolist() == [3.0, 4.0] and adapter.dtype(p) == "float32"
    assert adapter.shape(p) == (2,) and adapter.count(p) == 2
    entry = Entry("#0", p, {"params": [p], "lr": 0.2, "initial_lr": 0.4}, 0, SGD(), None)
    assert adapter.initial_lr(entry) == 0.4 and adapter.effective_lr(entry) == 0.2
    assert adapter.lr_mult(p) is None and adapter.clip(entry) is None
    assert "clip_grad_norm_" in adapter.no_clip_text(entry)


# -- a dltutor model of the learner's own class -----------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.body(x).tanh())


def test_the_reports_name_a_subclassed_dltutor_models_parameters_by_its_attributes():
    dt.manual_seed(0)
    net = Net()
    opt = optim.SGD([{"params": net.body.parameters(), "lr": 0.5},
                     {"params": net.head.parameters()}], lr=0.1)
    rows = diagnose.summary(net, opt).rows
    assert [(r["name"], r["group"], r["effective_lr"]) for r in rows] == [
        ("body.weight", 0, 0.5), ("body.bias", 0, 0.5), ("head.weight", 1, 0.1),
        ("head.bias", 1, 0.1)]
    assert [e.name for e in NativeAdapter().entries(opt)] == ["#0", "#1", "#2", "#3"]
    net.head.weight.requires_grad_(False)
    net(dt.randn(2, 3)).sum().backward()
    assert diagnose.why_not_updating(net, opt, "head.weight").cause == "requires_grad_false"
    check = diagnose.why_not_updating(net, opt, "body.weight")
    assert check.cause is None and check.will_move


# -- FrameworkSteps: the Recorder's sampling around a framework's step --------------------------
def run_steps(every, steps, capacity=None):
    """FrameworkSteps driven by a dltutor optimizer (its step hooks have PyTorch's signature):
    the records, and each step's gradient norm, parameter before and after."""
    dt.manual_seed(0)
    net = nn.Linear(3, 1)
    opt = optim.SGD(net.parameters(), lr=0.1)
    records, seen = [], []
    watcher = FrameworkSteps(NativeAdapter(), list(net.parameters()), opt, every,
                             lambda step, per_param: records.append((step, per_param)))
    x = dt.randn(4, 3)
    for _ in range(steps):
        opt.zero_grad()
        (net(x) ** 2).mean().backward()
        before = net.weight.numpy().copy()
        grad = net.weight.grad.numpy().copy()
        opt.step()
        seen.append((grad, before, net.weight.numpy().copy()))
    return watcher, records, seen, opt, net


@pytest.mark.parametrize("every, steps, kept", [(1, 3, [0, 1, 2]), (2, 5, [0, 2, 4]),
                                                (3, 3, [0]), (4, 9, [0, 4, 8])])
def test_framework_steps_measure_every_nth_step_from_the_first(every, steps, kept):
    watcher, records, seen, _, _ = run_steps(every, steps)
    assert [step for step, _ in records] == kept and watcher.steps == steps
    for step, per_param in records:
        (grad_sq, update_sq, param_sq, clipped_sq), lr = per_param[0]
        grad, before, after = seen[step]
        assert grad_sq == pytest.approx(float((grad.astype(np.float64) ** 2).sum()))
        assert update_sq == pytest.approx(float(((after - before).astype(np.float64) ** 2).sum()))
        assert param_sq == pytest.approx(float((after.astype(np.float64) ** 2).sum()))
        assert clipped_sq == grad_sq and lr == 0.1


def test_framework_steps_stop_measuring_when_removed_and_removing_twice_is_harmless():
    watcher, records, _, opt, net = run_steps(1, 2)
    watcher.remove()
    watcher.remove()
    net(dt.ones(1, 3)).sum().backward()
    opt.step()
    assert len(records) == 2 and watcher.steps == 2


def test_a_parameter_the_optimizer_does_not_hold_gets_a_nan_lr_and_no_gradient_zero():
    dt.manual_seed(0)
    net = nn.Linear(3, 1)
    opt = optim.SGD([net.weight], lr=0.1)
    records = []
    FrameworkSteps(NativeAdapter(), [net.weight, net.bias], opt, 1,
                   lambda step, per_param: records.append(per_param))
    opt.step()                                             # no backward: no gradients
    (weight, lr_w), (bias, lr_b) = records[0]
    assert lr_w == 0.1 and np.isnan(lr_b)
    assert weight[0] == 0.0 and weight[1] == 0.0 and bias[:2] == (0.0, 0.0)


def test_framework_steps_record_the_effective_lr_and_a_layer_its_largest():
    from dltutor.trace import Recorder
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    net[0].weight.lr_mult = 0.5
    opt = optim.SGD([{"params": list(net[0].parameters())},
                     {"params": list(net[1].parameters()), "lr": 0.3}], lr=0.1)
    records = []
    FrameworkSteps(NativeAdapter(), list(net.parameters()), opt, 1,
                   lambda step, per_param: records.append(per_param))
    layers = Recorder(net, opt, by="layer")
    net(dt.ones(1, 3)).sum().backward()
    opt.step()
    assert [lr for _, lr in records[0]] == pytest.approx([0.05, 0.1, 0.3, 0.3])
    # a layer's lr is the largest of its parameters' (0.05 and 0.1): the one that moves most
    assert layers.series("lr", "0").tolist() == pytest.approx([0.1])
    assert layers.series("lr", "1").tolist() == pytest.approx([0.3])
