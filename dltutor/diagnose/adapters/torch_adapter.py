"""The adapter for a ``torch.nn.Module`` trained by a ``torch.optim.Optimizer``.

Read from PyTorch's own state: ``requires_grad``, ``.grad`` (None, or a tensor), the
optimizer's ``param_groups`` (``lr``, ``weight_decay``, the ``initial_lr`` a scheduler keeps,
``param_names`` when it was given ``model.named_parameters()``) and its ``state``
(``momentum_buffer``, ``exp_avg``). PyTorch has no per-parameter lr multiplier, no regularizer
object on a parameter and no clip inside its optimizers (``clip_grad_norm_`` is a call in your
loop): those answers are None, and the reports say so. Imported only when a PyTorch object
arrives; PyTorch itself is never imported here (the objects bring their own methods).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...i18n import text
from ...optim.decay import Decay
from ..lookup import Entry
from .base import Adapter, framework_class

#: The state keys of each PyTorch optimizer that keep moving a parameter after its gradient
#: became zero (PyTorch's names; Adagrad, Adadelta and the rest keep none).
MOMENTUM_STATE = {"SGD": ("momentum_buffer",), "RMSprop": ("momentum_buffer",),
                  "Adam": ("exp_avg",), "AdamW": ("exp_avg",), "NAdam": ("exp_avg",),
                  "RAdam": ("exp_avg",), "Adamax": ("exp_avg",)}


def _numpy(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy()


class TorchAdapter(Adapter):
    framework = "torch"
    display_name = "PyTorch"
    clips_in_optimizer = False

    def requires_grad(self, param: Any) -> bool:
        return bool(param.requires_grad)

    def grad(self, param: Any) -> np.ndarray | None:
        return None if param.grad is None else _numpy(param.grad)

    def values(self, param: Any) -> np.ndarray:
        return _numpy(param)

    def loss_reaches(self, loss: Any, param: Any) -> bool:
        """Walks ``loss.grad_fn`` back to the AccumulateGrad nodes, which hold the leaves
        (PyTorch keeps this structure after backward, so it can always tell)."""
        if loss is param:
            return True
        stack = [loss.grad_fn] if loss.grad_fn is not None else []
        seen = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if getattr(node, "variable", None) is param:
                return True
            stack.extend(child for child, _ in node.next_functions)
        return False

    def entries(self, optimizer: Any) -> list[Entry]:
        """Each parameter in group order, named as the optimizer was given it
        (``param_names``), else ``"#i"`` by position, as dltutor names them."""
        out, index = [], 0
        for group_index, group in enumerate(optimizer.param_groups):
            names = group.get("param_names") or [None] * len(group["params"])
            for param, name in zip(group["params"], names):
                out.append(Entry(name if name is not None else f"#{index}", param, group,
                                 group_index, optimizer, None))
                index += 1
        return out

    def group_lr(self, entry: Entry) -> float:
        return float(entry.group["lr"])

    def decay(self, entry: Entry) -> Decay:
        """``weight_decay`` is L2 added to the gradient, except in AdamW (and Adam with
        ``decoupled_weight_decay=True``), which shrinks the parameter before its update."""
        coefficient = float(entry.group.get("weight_decay", 0) or 0)
        if not coefficient:
            return Decay(None, None, None, 0.0, False)
        decoupled = entry.group.get("decoupled_weight_decay")       # Adam's flag, AdamW's own
        if framework_class(entry.opt, "torch") == "AdamW" or decoupled:
            return Decay(None, None, None, coefficient, False)
        return Decay(coefficient, "group", None, 0.0, False)

    def no_clip_text(self, entry: Entry) -> str:
        return text("diagnose.clip.outside", framework=self.display_name,
                    function="torch.nn.utils.clip_grad_norm_")

    def momentum_state(self, entry: Entry) -> list[tuple[str, np.ndarray]]:
        state = entry.opt.state.get(entry.param, {})
        keys = MOMENTUM_STATE.get(framework_class(entry.opt, "torch"), ())
        return [(key, _numpy(state[key])) for key in keys if hasattr(state.get(key), "shape")]
