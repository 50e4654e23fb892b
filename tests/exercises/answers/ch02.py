"""Chapter 02's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them
against dltutor/exercises/ch02.py)."""
from __future__ import annotations

import dltutor as dt
from dltutor import nn


def _loaded_case(same=True, kind="linear"):
    """The variables of exercise 02.3: a net and a layer that got (or did not get) its first
    layer's values."""
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    layer = nn.Linear(4, 8) if kind == "linear" else nn.ReLU()
    if same:
        layer.load_state_dict(net[0].state_dict())
    return {"loaded": layer, "net": net}


def _gradient_case(first=1, second=2):
    """The variables of exercise 02.2: net[2].weight.grad copied after the ``first`` and the
    ``second`` backward pass of one batch, with the net and the batch."""
    dt.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    X = dt.rand(2, 4)
    copies = []
    for _ in range(max(first, second)):
        net(X).sum().backward()
        copies.append(net[2].weight.grad.numpy().copy())
    return {"grads_after_one": copies[first - 1], "grads_after_two": copies[second - 1],
            "net": net, "X": X}


def values_per_module(model):
    counts = {name: sum(p.numel() for p in m.parameters(recurse=False))
              for name, m in model.named_modules()}
    return {name: n for name, n in counts.items() if n > 0}


def values_with_children(model):
    """Counts each module's children's parameters too."""
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in model.named_modules()}
    return {name: n for name, n in counts.items() if n > 0}


def values_of_layers_only(model):
    """Misses a parameter held by a module that also has children."""
    return {name: sum(p.numel() for p in m.parameters()) for name, m in model.named_modules()
            if not list(m.children()) and list(m.parameters())}


class Affine(nn.Module):
    """02.7's answer: x * scale + shift, the shift registered as None when there is none."""

    def __init__(self, n, shift=True):
        super().__init__()
        self.scale = nn.Parameter(dt.ones(n))
        if shift:
            self.shift = nn.Parameter(dt.zeros(n))
        else:
            self.register_parameter("shift", None)

    def forward(self, x):
        y = x * self.scale
        return y if self.shift is None else y + self.shift


class AffineOfPlainTensors(Affine):
    """The tensors are never made Parameters, so nothing is registered."""

    def __init__(self, n, shift=True):
        nn.Module.__init__(self)
        self.scale, self.shift = dt.ones(n), (dt.zeros(n) if shift else None)


class AffineInAPlainList(Affine):
    """The parameters sit in a plain list, which the module does not look into."""

    def __init__(self, n, shift=True):
        nn.Module.__init__(self)
        self.params = [nn.Parameter(dt.ones(n)), nn.Parameter(dt.zeros(n))]


class AffineAlwaysShifted(Affine):
    """Ignores shift=False."""

    def __init__(self, n, shift=True):
        super().__init__(n, shift=True)


class AffineOnCopies(Affine):
    """Computes with a copy of scale's values: right numbers, no gradient."""

    def forward(self, x):
        y = x * dt.tensor(self.scale.numpy())
        return y if self.shift is None else y + self.shift


class AffineWithoutShift(Affine):
    """Forgets the shift in forward."""

    def forward(self, x):
        return x * self.scale


CASES = {
    "02.1": ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"], "block_values": 76},
             [({"block_names": ["0.block 2.0.weight"], "block_values": 76}, ["from inside"]),
              ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"],
                "block_values": 4}, ["numel"])]),
    "02.2": (_gradient_case(),
             [(_gradient_case(first=2, second=3), ["2 backward passes", "zero_grad"]),
              (_gradient_case(first=1, second=1), ["adds"]),
              (_gradient_case(first=1, second=3), ["after the second backward"]),
              ({**_gradient_case(), "grads_after_one": 2.0}, ["shape (1, 8)"])]),
    "02.3": (_loaded_case(same=True), [(_loaded_case(same=False), ["load net[0].state_dict()"]),
                                        (_loaded_case(same=False, kind="relu"), ["Linear"])]),
    "02.4": ({"keys_in_file": ["0.weight", "0.bias", "2.weight", "2.bias"]},
             [({"keys_in_file": ["0.weight", "1.weight"]}, ["ReLU"])]),
    "02.5": ({"child_names": ["0", "1", "2", "3"]},
             [({"child_names": ["block 0", "block 1", "block 2", "block 3"]}, ["position"])]),
    "02.6": ({"values_per_module": values_per_module},
             [({"values_per_module": values_with_children}, ["holds no parameter itself"]),
              ({"values_per_module": values_of_layers_only}, ["is missing"]),
              ({"values_per_module": lambda model: list(model.parameters())}, ["a dict"]),
              ({"values_per_module": 42}, ["function"])]),
    "02.7": ({"affine": Affine(4)},
             [({"affine": AffineOfPlainTensors(4)}, ["plain tensor", "nn.Parameter"]),
              ({"affine": AffineInAPlainList(4)}, ["plain list", "ParameterList"]),
              ({"affine": AffineAlwaysShifted(4)}, ["shift=False"]),
              ({"affine": AffineOnCopies(4)}, ["gradient does not reach scale"]),
              ({"affine": AffineWithoutShift(4)}, ["x * self.scale + self.shift"]),
              ({"affine": Affine(3)}, ["Affine(4)"]),
              ({"affine": Affine}, ["a layer made by your class"]),
              ({"affine": 1.0}, ["a layer made by your class"])]),
}

SELF_CONTAINED = {"02.6"}
