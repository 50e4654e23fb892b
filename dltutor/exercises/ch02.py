"""The exercises of chapter 02 (parameter access).

>>> Q5.verdict({"child_names": ["block 0", "block 1", "block 2", "block 3"]}).message
'Exercise 02.5: not yet. Those are the names add_module gave; a Sequential made from a list names each child by its position.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn
from ..nn import Linear
from ..i18n import sentence
from .answers import called, same_number
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


def _grad_ratio(bias_grad_ratio: Any) -> CheckResult:
    if same_number(bias_grad_ratio, 2.0):
        return None, "net.zero_grad() (or opt.zero_grad()) starts the next backward from None."
    if same_number(bias_grad_ratio, 1.0):
        return ("A second backward does not replace the gradient: it adds to it (run it and "
                "compare).")
    return sentence("{ratio!r}: two backward passes of the same batch, added together.",
                    ratio=bias_grad_ratio)


Q2 = Exercise(
    "02.2", names=("bias_grad_ratio",),
    title="Gradients that add up",
    expects="a number",
    check=_grad_ratio,
    hints=("Copy net[2].bias.grad after one backward, run a fresh forward and backward, and "
           "divide.",
           "Gradients accumulate across backward() calls until something sets them to None."),
    solution=("net.zero_grad()\n"
              "net(X).sum().backward()\n"
              "first = net[2].bias.grad.numpy().copy()\n"
              "net(X).sum().backward()\n"
              "bias_grad_ratio = float(net[2].bias.grad.numpy()[0] / first[0])     # 2.0"))


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

EXERCISES = [Q1, Q2, Q3, Q4, Q5, Q6]
