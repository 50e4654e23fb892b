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
from ..i18n import sentence
from .answers import called
from .checker import CheckResult, Exercise

_BLOCK_NAMES = ["0.weight", "0.bias", "2.weight", "2.bias"]


def _block_parameters(block_names: Any, block_values: Any) -> CheckResult:
    names = list(block_names)
    if names != _BLOCK_NAMES:
        if sorted(names) == sorted(_BLOCK_NAMES):
            return "Right names, other order: list them in named_parameters() order."
        if any(name.startswith("0.block") for name in names):
            return ("Those names are seen from rgnet; ask the block itself: "
                    "rgnet[0][2].named_parameters() names them from inside it.")
        return sentence("rgnet[0][2] has the parameters of its two Linear layers; got {names!r}",
                        names=names)
    if block_values != 76:
        return sentence("{count!r} values: count weight and bias of both Linear layers "
                        "(4*8 + 8 + 8*4 + 4); p.numel() gives one parameter's", count=block_values)
    return None


Q1 = Exercise(
    "02.1", names=("block_names", "block_values"),
    title="One block's parameters and values",
    expects="a list of names and a whole number",
    check=_block_parameters,
    hints=("rgnet[0] is block2(); position 2 in it is the child named 'block 2', a block1().",
           "[n for n, p in rgnet[0][2].named_parameters()] and sum(p.numel() for ...)."),
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
        return None, sentence("{name} should be a copy of net[2].weight.grad (shape (1, 8)): "
                              "net[2].weight.grad.numpy().copy()", name=name)
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
            return sentence("grads_after_one holds {k} backward passes, not one: a gradient was "
                            "still there. Start with net.zero_grad().", k=passes)
        return ("grads_after_one is not net[2].weight.grad after one backward of "
                "net(X).sum(): copy it right after the first backward.")
    if close(two, single):
        return ("A second backward does not replace the gradient: it adds to it (copy the "
                "gradient again after the second backward).")
    if not close(two, 2 * single):
        return "grads_after_two should be net[2].weight.grad after the second backward."
    return None, "Twice the first: gradients add up. net.zero_grad() starts the next from None."


Q2 = Exercise(
    "02.2", names=("grads_after_one", "grads_after_two", "net", "X"),
    title="Gradients that add up",
    expects="two copies of net[2].weight.grad",
    check=_two_gradients,
    hints=("Start from None with net.zero_grad(), run net(X).sum().backward(), copy "
           "net[2].weight.grad.numpy(); then a second backward, and copy again.",
           "Gradients accumulate across backward() calls until something sets them to None."),
    solution=("net.zero_grad()\n"
              "net(X).sum().backward()\n"
              "grads_after_one = net[2].weight.grad.numpy().copy()\n"
              "net(X).sum().backward()\n"
              "grads_after_two = net[2].weight.grad.numpy().copy()     # twice the first"))


def _loaded_layer(loaded: Any, net: Any) -> CheckResult:
    if not isinstance(loaded, Linear):
        return sentence("loaded should be the layer rgnet[0][0][0] (a Linear), not a {kind}",
                        kind=type(loaded).__name__)
    if (loaded.in_features, loaded.out_features) != (4, 8):
        return "rgnet[0][0][0] is the first Linear(4, 8) of the first block"
    if not np.array_equal(loaded.weight.numpy(), net[0].weight.numpy()):
        return ("its weight differs from net[0].weight: load net[0].state_dict() into it "
                "(directly, or through dt.save and dt.load)")
    if not np.array_equal(loaded.bias.numpy(), net[0].bias.numpy()):
        return "the weight arrived but not the bias: load the whole state dict of net[0]"
    return None


Q3 = Exercise(
    "02.3", names=("loaded", "net"),
    title="Load one layer into another network",
    expects="a layer of the network, and the network",
    check=_loaded_layer,
    hints=("net[0] and rgnet[0][0][0] are both Linear(4, 8): their state dicts have the same "
           "keys and shapes.",
           "rgnet[0][0][0].load_state_dict(net[0].state_dict()); a file in between works too."),
    solution=("rgnet[0][0][0].load_state_dict(net[0].state_dict())\n"
              "loaded = rgnet[0][0][0]"))


def _keys_in_file(keys_in_file: Any) -> CheckResult:
    keys = list(keys_in_file)
    if keys == ["0.weight", "0.bias", "2.weight", "2.bias"]:
        return None
    if sorted(keys) == sorted(["0.weight", "0.bias", "2.weight", "2.bias"]):
        return None, "(A safetensors reader may list them in another order.)"
    if "1.weight" in keys:
        return "net[1] is the ReLU: it has no parameters, so no key starts with '1.'"
    return sentence("{keys!r}: the keys are the structured names of net's parameters", keys=keys)


Q4 = Exercise(
    "02.4", names=("keys_in_file",),
    title="The keys of a saved state dict",
    expects="a list of key names",
    check=_keys_in_file,
    hints=("dt.save(net.state_dict(), path), then list(load_file(path)) or list(dt.load(path)).",
           "The names are the positions in the Sequential and the parameter's name."),
    solution=("path = os.path.join(tempfile.mkdtemp(), 'net.safetensors')\n"
              "dt.save(net.state_dict(), path)\n"
              "keys_in_file = list(dt.load(path))"))


def _child_names(child_names: Any) -> CheckResult:
    names = [str(name) for name in child_names]
    if names == ["0", "1", "2", "3"]:
        return None
    if names and names[0].startswith("block"):
        return ("Those are the names add_module gave; a Sequential made from a list names each "
                "child by its position.")
    return sentence("{names!r}: look at [name for name, _ in nn.Sequential(...).named_children()]",
                    names=names)


Q5 = Exercise(
    "02.5", names=("child_names",),
    title="Children's names in nn.Sequential",
    expects="a list of names",
    check=_child_names,
    hints=("nn.Sequential(*modules) numbers its children.",),
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
        return "values_per_module should be a function that takes a model."
    for model in _models_to_count():
        expected = {name: sum(p.numel() for p in module.parameters(recurse=False))
                    for name, module in model.named_modules()
                    if any(True for _ in module.parameters(recurse=False))}
        counts, failure = called("values_per_module", values_per_module, model)
        if failure:
            return failure
        if not isinstance(counts, dict):
            return "values_per_module should return a dict: module name -> number of values."
        answer = {str(name): count for name, count in counts.items()}
        for name in answer.keys() - expected.keys():
            return sentence("Module {name!r} holds no parameter itself (its children do, or "
                            "none); leave it out.", name=name)
        for name, count in expected.items():
            if name not in answer:
                return sentence("Module {name!r} holds {count} values of its own but is missing "
                                "(the model itself is named '').", name=name, count=count)
            if answer[name] != count:
                return sentence("Module {name!r} holds {count} values itself, not {got}: count "
                                "its own parameters only, not its children's.", name=name,
                                count=count, got=answer[name])
    return None


Q6 = Exercise(
    "02.6", names=("values_per_module",),
    title="Write values_per_module",
    expects="a function that takes a model and returns a dict",
    check=_own_values,
    hints=("named_modules() gives every module with its name; the model itself is ''.",
           "module.parameters(recurse=False) lists only the parameters a module holds itself."),
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
            return sentence("self.{name} is a plain tensor, which a module does not register: "
                            "wrap it, nn.Parameter(...).", name=name)
        if isinstance(value, (list, tuple, dict)):
            return sentence("self.{name} is a plain {kind}, which a module does not look into: "
                            "use separate attributes, or nn.ParameterList / nn.ParameterDict.",
                            name=name, kind=type(value).__name__)
    return ("Affine(n) registers no parameter: assign nn.Parameter(...) to self.scale and "
            "self.shift in __init__.")


def _affine_case(Affine: Any, n: int, with_shift: bool) -> CheckResult:
    """One layer ``Affine(n)`` (or ``Affine(n, shift=False)``): its parameters, their start,
    and its output and gradients on float64 values the check sets itself."""
    layer, failure = called("Affine", Affine, n) if with_shift else \
        called("Affine", lambda: Affine(n, shift=False))
    if failure:
        return failure
    if not isinstance(layer, nn.Module):
        return "Affine should be a class that subclasses nn.Module."
    params = dict(layer.named_parameters())
    if not params:
        return _refuse_unregistered(layer)
    wanted = ["scale", "shift"] if with_shift else ["scale"]
    if sorted(params) != wanted:
        return sentence("Affine({call}) registers {names!r}, not {wanted!r}.",
                        call=f"{n}" if with_shift else f"{n}, shift=False",
                        names=sorted(params), wanted=wanted)
    if not with_shift and getattr(layer, "shift", 0) is not None:
        return "With shift=False, register_parameter('shift', None): then self.shift is None."
    if any(tuple(p.shape) != (n,) for p in params.values()):
        return sentence("Affine({n}) should have parameters of shape ({n},).", n=n)
    if not np.array_equal(params["scale"].numpy(), np.ones(n)) or \
            (with_shift and not np.array_equal(params["shift"].numpy(), np.zeros(n))):
        return "scale should start at ones and shift at zeros."
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
        return ("forward(x) should return x * self.scale + self.shift, with the layer's own "
                "parameters.")
    out.sum().backward()
    if params["scale"].grad is None or not np.allclose(params["scale"].grad.numpy(), x.sum(axis=0)):
        return ("The gradient does not reach scale: compute with the parameters themselves "
                "(x * self.scale), not with copies of their values.")
    return None


def _custom_layer(affine: Any) -> CheckResult:
    if not isinstance(affine, nn.Module):
        return ("affine should be a layer made by your class: define class Affine(nn.Module), "
                "then affine = Affine(4).")
    Affine = type(affine)                      # the check makes more layers of that class
    if sorted(dict(affine.named_parameters())) == ["scale", "shift"] and \
            any(tuple(p.shape) != (4,) for p in affine.parameters()):
        return "affine should be Affine(4): parameters of shape (4,)."
    for n in (3, 5):
        for with_shift in (True, False):
            problem = _affine_case(Affine, n, with_shift)
            if problem is not None:
                return problem
    return None


Q7 = Exercise(
    "02.7", names=("affine",),
    title="A custom layer",
    expects="a layer made by your class",
    check=_custom_layer,
    hints=("Like MyLinear: super().__init__() first, then self.scale = nn.Parameter(dt.ones(n)).",
           "Without a shift: self.register_parameter('shift', None), and test self.shift is None "
           "in forward."),
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
