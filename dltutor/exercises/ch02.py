"""The exercises of chapter 02 (parameter access).

>>> Q5.verdict({"child_names": ["block 0", "block 1", "block 2", "block 3"]}).message
'Exercise 02.5: not yet. Those are the names add_module gave; a Sequential made from a list names each child by its position.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import autograd as dt
from ..autograd import no_grad
from .. import nn
from ..nn import Linear
from ..i18n import text
from .answers import called
from .checker import CheckResult, Exercise

_BLOCK_NAMES = ["0.weight", "0.bias", "2.weight", "2.bias"]


def _block_parameters(block_names: Any, block_values: Any) -> CheckResult:
    names = list(block_names)
    if names != _BLOCK_NAMES:
        if sorted(names) == sorted(_BLOCK_NAMES):
            return text("ch02.right_names_other_order")
        if any(name.startswith("0.block") for name in names):
            return text("ch02.those_names_seen_from")
        return text("ch02.rgnet_has_parameters_two", names=names)
    if block_values != 76:
        return text("ch02.values_count_weight_bias", count=block_values)
    return None


Q1 = Exercise(
    "02.1", names=("block_names", "block_values"),
    title="ch02.q1.title",
    expects="ch02.q1.expects",
    check=_block_parameters,
    hints=("ch02.q1.hint1", "ch02.q1.hint2"),
    solution=("block = rgnet[0][2]\n"
              "block_names = [name for name, p in block.named_parameters()]\n"
              "block_values = sum(p.numel() for p in block.parameters())      # 76"))


def _as_gradient(name: str, value: Any) -> tuple[Any, str | None]:
    """``value`` as an array of net[2].weight's 8 numbers, or a sentence saying why not."""
    if isinstance(value, dt.Tensor):
        value = value.numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.size != 8:
        return None, text("ch02.copy_net_weight_grad", name=name)
    return array.reshape(1, 8), None


def _two_gradients(grads_after_one: Any, grads_after_two: Any, net: Any, X: Any) -> CheckResult:
    one, failure = _as_gradient("grads_after_one", grads_after_one)
    two, failure = (None, failure) if failure else _as_gradient("grads_after_two", grads_after_two)
    if failure:
        return failure
    with no_grad():
        single = net[1](net[0](X)).numpy().sum(axis=0, keepdims=True).astype(np.float64)

    def close(a: Any, b: Any) -> bool:     # equal up to float32 rounding
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-6))

    if not close(one, single):
        passes = next((k for k in range(2, 6) if close(one, k * single)), None)
        if passes:
            return text("ch02.grads_after_holds_backward", k=passes)
        return text("ch02.grads_after_not_net")
    if close(two, single):
        return text("ch02.second_backward_does_not")
    if not close(two, 2 * single):
        return text("ch02.grads_after_two_net")
    return None, text("ch02.twice_first_gradients_add")


Q2 = Exercise(
    "02.2", names=("grads_after_one", "grads_after_two", "net", "X"),
    title="ch02.q2.title",
    expects="ch02.q2.expects",
    check=_two_gradients,
    hints=("ch02.q2.hint1", "ch02.q2.hint2"),
    solution=("net.zero_grad()\n"
              "net(X).sum().backward()\n"
              "grads_after_one = net[2].weight.grad.numpy().copy()\n"
              "net(X).sum().backward()\n"
              "grads_after_two = net[2].weight.grad.numpy().copy()     # twice the first"))


def _loaded_layer(loaded: Any, net: Any) -> CheckResult:
    if not isinstance(loaded, Linear):
        return text("ch02.loaded_layer_rgnet_linear", kind=type(loaded).__name__)
    if (loaded.in_features, loaded.out_features) != (4, 8):
        return text("ch02.rgnet_first_linear_first")
    if not np.array_equal(loaded.weight.numpy(), net[0].weight.numpy()):
        return text("ch02.weight_differs_from_net")
    if not np.array_equal(loaded.bias.numpy(), net[0].bias.numpy()):
        return text("ch02.weight_arrived_but_not")
    return None


Q3 = Exercise(
    "02.3", names=("loaded", "net"),
    title="ch02.q3.title",
    expects="ch02.q3.expects",
    check=_loaded_layer,
    hints=("ch02.q3.hint1", "ch02.q3.hint2"),
    solution=("rgnet[0][0][0].load_state_dict(net[0].state_dict())\n"
              "loaded = rgnet[0][0][0]"))


def _keys_in_file(keys_in_file: Any) -> CheckResult:
    keys = list(keys_in_file)
    if keys == ["0.weight", "0.bias", "2.weight", "2.bias"]:
        return None
    if sorted(keys) == sorted(["0.weight", "0.bias", "2.weight", "2.bias"]):
        return None, text("ch02.safetensors_reader_may_list")
    if "1.weight" in keys:
        return text("ch02.net_relu_has_no")
    return text("ch02.keys_structured_names_net", keys=keys)


Q4 = Exercise(
    "02.4", names=("keys_in_file",),
    title="ch02.q4.title",
    expects="ch02.q4.expects",
    check=_keys_in_file,
    hints=("ch02.q4.hint1", "ch02.q4.hint2"),
    solution=("path = os.path.join(tempfile.mkdtemp(), 'net.safetensors')\n"
              "dt.save(net.state_dict(), path)\n"
              "keys_in_file = list(dt.load(path))"))


def _child_names(child_names: Any) -> CheckResult:
    names = [str(name) for name in child_names]
    if names == ["0", "1", "2", "3"]:
        return None
    if names and names[0].startswith("block"):
        return text("ch02.those_names_add_module")
    return text("ch02.look_name_name_nn", names=names)


Q5 = Exercise(
    "02.5", names=("child_names",),
    title="ch02.q5.title",
    expects="ch02.q5.expects",
    check=_child_names,
    hints=("ch02.q5.hint1",),
    solution=("flat = nn.Sequential(*[block1() for _ in range(4)])\n"
              "child_names = [name for name, _ in flat.named_children()]     # '0' .. '3'"))


class _Scaled(nn.Module):
    """A module with a parameter of its own beside a child layer."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(np.ones(5, dtype=np.float32))
        self.body = nn.Linear(5, 5)

    def forward(self, x: Any) -> Any:
        return self.body(x) * self.scale


def _models_to_count() -> list[Any]:
    return [nn.Sequential(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4)),
                          nn.Linear(4, 2)),
            _Scaled(),
            nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 2))]


def _own_values(values_per_module: Any) -> CheckResult:
    if not callable(values_per_module):
        return text("ch02.values_per_module_function")
    for model in _models_to_count():
        expected = {name: sum(p.numel() for p in module.parameters(recurse=False))
                    for name, module in model.named_modules()
                    if any(True for _ in module.parameters(recurse=False))}
        counts, failure = called("values_per_module", values_per_module, model)
        if failure:
            return failure
        if not isinstance(counts, dict):
            return text("ch02.values_per_module_return")
        answer = {str(name): count for name, count in counts.items()}
        for name in answer.keys() - expected.keys():
            return text("ch02.module_holds_no_parameter", name=name)
        for name, count in expected.items():
            if name not in answer:
                return text("ch02.module_holds_values_own", name=name, count=count)
            if answer[name] != count:
                return text("ch02.module_holds_values_itself", name=name, count=count,
                            got=answer[name])
    return None


Q6 = Exercise(
    "02.6", names=("values_per_module",),
    title="ch02.q6.title",
    expects="ch02.q6.expects",
    check=_own_values,
    hints=("ch02.q6.hint1", "ch02.q6.hint2"),
    solution=("def values_per_module(model):\n"
              "    counts = {name: sum(p.numel() for p in m.parameters(recurse=False))\n"
              "              for name, m in model.named_modules()}\n"
              "    return {name: n for name, n in counts.items() if n > 0}"))

def _refuse_unregistered(layer: Any) -> CheckResult:
    """Why ``layer`` registers no parameter: a plain tensor, a plain list, or nothing made."""
    attributes = {name: value for name, value in vars(layer).items()
                  if not name.startswith("_")}           # Module's own registries start with _
    for name, value in attributes.items():
        if isinstance(value, dt.Tensor) and not isinstance(value, nn.Parameter):
            return text("ch02.self_plain_tensor_which", name=name)
        if isinstance(value, (list, tuple, dict)):
            return text("ch02.self_plain_which_module", name=name, kind=type(value).__name__)
    return text("ch02.affine_n_registers_no")


def _affine_case(Affine: Any, n: int, with_shift: bool) -> CheckResult:
    """One layer ``Affine(n)`` (or ``Affine(n, shift=False)``): its parameters, their start,
    and its output and gradients on float64 values the check sets itself."""
    layer, failure = called("Affine", Affine, n) if with_shift else \
        called("Affine", lambda: Affine(n, shift=False))
    if failure:
        return failure
    if not isinstance(layer, nn.Module):
        return text("ch02.affine_class_subclasses_nn")
    params = dict(layer.named_parameters())
    if not params:
        return _refuse_unregistered(layer)
    wanted = ["scale", "shift"] if with_shift else ["scale"]
    if sorted(params) != wanted:
        return text("ch02.affine_registers_not", call=f"{n}" if with_shift else f"{n}, shift=False",
                    names=sorted(params), wanted=wanted)
    if not with_shift and getattr(layer, "shift", 0) is not None:
        return text("ch02.shift_false_register_parameter")
    if any(tuple(p.shape) != (n,) for p in params.values()):
        return text("ch02.affine_have_parameters_shape", n=n)
    if not np.array_equal(params["scale"].numpy(), np.ones(n)) or \
            (with_shift and not np.array_equal(params["shift"].numpy(), np.zeros(n))):
        return text("ch02.scale_start_ones_shift")
    return _affine_computes(layer, params, n)


def _affine_computes(layer: Any, params: dict, n: int) -> CheckResult:
    """Set random values, compare the output with x * scale + shift, and the gradients with
    the ones worked out by hand."""
    rng = np.random.default_rng(n)
    layer.double()
    for p in params.values():
        p.set_value(rng.normal(size=n))
    x = rng.normal(size=(4, n))
    scale = params["scale"].numpy()
    shift = params["shift"].numpy() if "shift" in params else 0.0
    out, failure = called("Affine's forward", layer, dt.tensor(x))
    if failure:
        return failure
    if not isinstance(out, dt.Tensor) or tuple(out.shape) != (4, n) or \
            not np.allclose(out.numpy(), x * scale + shift):
        return text("ch02.forward_x_return_x")
    out.sum().backward()
    if params["scale"].grad is None or not np.allclose(params["scale"].grad.numpy(), x.sum(axis=0)):
        return text("ch02.gradient_does_not_reach")
    return None


def _custom_layer(affine: Any) -> CheckResult:
    if not isinstance(affine, nn.Module):
        return text("ch02.affine_layer_made_your")
    Affine = type(affine)                      # the check makes more layers of that class
    if sorted(dict(affine.named_parameters())) == ["scale", "shift"] and \
            any(tuple(p.shape) != (4,) for p in affine.parameters()):
        return text("ch02.affine_affine_parameters_shape")
    for n in (3, 5):
        for with_shift in (True, False):
            problem = _affine_case(Affine, n, with_shift)
            if problem is not None:
                return problem
    return None


Q7 = Exercise(
    "02.7", names=("affine",),
    title="ch02.q7.title",
    expects="ch02.q7.expects",
    check=_custom_layer,
    hints=("ch02.q7.hint1", "ch02.q7.hint2"),
    solution=("class Affine(nn.Module):\n"
              "    def __init__(self, n, shift=True):\n"
              "        super().__init__()\n"
              "        self.scale = nn.Parameter(dt.ones(n))\n"
              "        if shift:\n"
              "            self.shift = nn.Parameter(dt.zeros(n))\n"
              "        else:\n"
              "            self.register_parameter('shift', None)\n"
              "\n"
              "    def forward(self, x):\n"
              "        y = x * self.scale\n"
              "        return y if self.shift is None else y + self.shift\n"
              "\n"
              "\n"
              "affine = Affine(4)"))

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6, Q7]
