"""Chapter 02's exercises: the right values of the variables each reads, and typical wrong ones
with the words the "not yet" message must contain (tests/exercises/test_chapters.py checks them)."""
from __future__ import annotations

from dltutor import nn


def _loaded_case(same=True, kind="linear"):
    """The variables of exercise 02.3: a net and a layer that got (or did not get) its first
    layer's values."""
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    layer = nn.Linear(4, 8) if kind == "linear" else nn.ReLU()
    if same:
        layer.load_state_dict(net[0].state_dict())
    return {"loaded": layer, "net": net}


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


CASES = {
    "02.1": ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"], "block_values": 76},
             [({"block_names": ["0.block 2.0.weight"], "block_values": 76}, ["from inside"]),
              ({"block_names": ["0.weight", "0.bias", "2.weight", "2.bias"],
                "block_values": 4}, ["numel"])]),
    "02.2": ({"bias_grad_ratio": 2.0},
             [({"bias_grad_ratio": 1.0}, ["adds"]), ({"bias_grad_ratio": 4}, ["added"])]),
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
}

SELF_CONTAINED = {"02.6"}
