"""The exercises of chapter 07 (clipping and numerical trouble).

>>> Q1.verdict({"scaled_grads": [6.0, 8.0]}).message
'Exercise 07.1: not yet. The total norm is sqrt(6² + 8²) = 10, above max_norm 5: every gradient is scaled by the same factor, 5 / 10.'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .checker import Exercise


def _norm_clip(scaled_grads: Any) -> str | None:
    got = np.asarray(scaled_grads, dtype=float).ravel()
    if got.shape == (2,) and np.allclose(got, [3.0, 4.0], rtol=1e-5):
        return None, ("PyTorch's factor is max_norm / (total + 1e-6), so the result is a hair "
                      "under [3, 4].")
    if got.shape == (2,) and np.allclose(got, [6.0, 8.0]):
        return ("The total norm is sqrt(6² + 8²) = 10, above max_norm 5: every gradient is "
                "scaled by the same factor, 5 / 10.")
    if got.shape == (2,) and np.allclose(got, [5.0, 5.0]):
        return "That clips each value to 5 (clip_grad_value_); the norm clip keeps the direction."
    return "Scale both gradients by max_norm / total norm."


Q1 = Exercise(
    "07.1", names=("scaled_grads",), check=_norm_clip,
    hints=("The total is the norm of all gradients together: sqrt(6² + 8²).",),
    solution=("from dltutor import nn, optim\n"
              "a, b = nn.Parameter([0.0]), nn.Parameter([0.0])\n"
              "a.grad, b.grad = dt.tensor([6.0]), dt.tensor([8.0])\n"
              "optim.clip_grad_norm_([a, b], max_norm=5.0)\n"
              "scaled_grads = [a.grad.item(), b.grad.item()]"))

_G = np.array([0.3, -2.0])


def _value_and_norm(by_value: Any, by_norm: Any) -> str | None:
    value, norm = (np.asarray(v, dtype=float).ravel() for v in (by_value, by_norm))
    if not np.allclose(value, [0.3, -1.0]):
        if np.allclose(value, _G / np.linalg.norm(_G)):
            return "Swapped? Clipping by value clamps each entry to [-1, 1] on its own."
        return "By value, each entry is clamped to [-1, 1] on its own: 0.3 stays, -2 becomes -1."
    if np.allclose(norm, _G / np.linalg.norm(_G), rtol=1e-4):
        return None, ("By value changes the direction of the gradient; by norm keeps it and "
                      "only shortens it.")
    if np.allclose(norm, [0.3, -1.0]):
        return "By norm, the whole vector is scaled by 1 / its norm: its direction stays."
    return "By norm: g * (1 / norm(g)), since the norm (about 2.02) is above 1."


Q2 = Exercise(
    "07.2", names=("by_value", "by_norm"), check=_value_and_norm,
    hints=("ClipGradByValue(1.0) clamps entries; ClipGradByNorm(1.0) rescales the tensor.",
           "np.clip(g, -1, 1), and g / np.linalg.norm(g)."),
    solution=("g = np.array([0.3, -2.0])\n"
              "by_value = np.clip(g, -1.0, 1.0)\n"
              "by_norm = g / np.linalg.norm(g)"))


def _counted(counted_in_global_norm: Any) -> str | None:
    if counted_in_global_norm is False:
        return None, "need_clip=False keeps a parameter out of the global norm and unscaled."
    if counted_in_global_norm is True:
        return ("need_clip=False takes the parameter out of clipping entirely: it is neither "
                "counted in the global norm nor scaled.")
    return "Answer True or False."


Q3 = Exercise(
    "07.3", names=("counted_in_global_norm",), check=_counted,
    hints=("Compare clip.last_total_norm with and without need_clip=False on one parameter.",),
    solution="counted_in_global_norm = False")

EXERCISES = [Q1, Q2, Q3]
