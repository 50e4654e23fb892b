"""Finding a parameter: in an optimizer's entries, and in a loss's graph.

An :class:`Entry` is one parameter as an optimizer sees it (its name there, its group, the
optimizer that steps it); an adapter lists them (adapters/). :func:`find_entry` picks one, with
an error that suggests close names when there is no such parameter. :func:`loss_reaches` walks
back from a dltutor loss to tell whether a parameter takes part in it.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from ..autograd import Tensor
from ..errors import MessageKeyError
from ..i18n import text


class UnknownNameError(MessageKeyError):
    """A name that the model or optimizer does not have; the message lists close matches.

    It is a KeyError, so ``except KeyError`` catches it too.

    >>> from dltutor import nn, diagnose
    >>> try:
    ...     diagnose.why_not_updating(nn.Linear(2, 2), None, "wieght")
    ... except diagnose.UnknownNameError as error:
    ...     print(error)
    Linear has no parameter named 'wieght'.
    Did you mean: 'weight'?
    Its names: 'weight', 'bias'
    """


@dataclass
class Entry:
    """One parameter as an optimizer sees it."""

    name: str            # the optimizer's name for it ("0.weight", or "#i" by position)
    param: Any           # the framework's parameter object
    group: dict          # its parameter group (the framework's own dict)
    group_index: int     # global: the index in optimizer.param_groups (MultiOptimizer too)
    opt: Any             # the optimizer that steps it (an inner one for a MultiOptimizer)
    opt_index: int | None  # which inner optimizer of a MultiOptimizer, else None

    @property
    def qualified(self) -> str:
        return self.name if self.opt_index is None else f"opt{self.opt_index}/{self.name}"

    @property
    def where(self) -> str:
        if self.opt_index is None:
            return text("diagnose.where", group=self.group_index)
        return text("diagnose.where_in", group=self.group_index, index=self.opt_index,
                    optimizer=type(self.opt).__name__)


def entries_by_param(entries: list[Entry]) -> dict[int, Entry]:
    """The entries by parameter identity: any alias of a tied parameter finds its entry."""
    return {id(e.param): e for e in entries}


def unknown_name_error(kind: str, name: Any, known: list[str], hint: str = "") -> UnknownNameError:
    """The error for a name that ``kind`` does not have: close matches, then every name."""
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
    lines = [f"{kind} has no parameter named {name!r}."]
    if close:
        lines.append("Did you mean: " + ", ".join(map(repr, close)) + "?")
    shown = known if len(known) <= 30 else known[:30] + [f"... ({len(known) - 30} more)"]
    lines.append("Its names: " + (", ".join(map(repr, shown)) if shown else "none"))
    if hint:
        lines.append(hint)
    return UnknownNameError("\n".join(lines))


def find_entry(entries: list[Entry], optimizer: Any, name: Any) -> Entry:
    """The entry of ``name`` among ``entries`` (what an adapter says ``optimizer`` holds): the
    optimizer's name, ``"opt1/name"``, or the parameter object itself."""
    if not isinstance(name, str):
        entry = entries_by_param(entries).get(id(name))
        if entry is None:
            raise UnknownNameError(f"this parameter (shape {tuple(name.shape)}) is not in "
                                   f"{type(optimizer).__name__}: the optimizer never updates it")
        return entry
    exact = [e for e in entries if e.qualified == name]
    if not exact:
        exact = [e for e in entries if e.name == name]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise UnknownNameError(f"{name!r} names parameters in several optimizers of the "
                               "MultiOptimizer; say which one: "
                               + ", ".join(repr(e.qualified) for e in exact))
    multi = any(e.opt_index is not None for e in entries)
    known = [e.qualified if multi else e.name for e in entries]
    hint = ""
    if any(e.name.startswith("#") for e in entries):
        hint = ("Parameters given without names are called '#0', '#1', ... by position; "
                "pass model.named_parameters() to the optimizer to use the model's names.")
    raise unknown_name_error(type(optimizer).__name__, name, known, hint)


def loss_reaches(loss: Any, param: Tensor) -> bool | None:
    """True if ``param`` is an input of some Function reachable from ``loss``; False if not;
    None if part of the graph was freed by backward (then it cannot tell)."""
    if not isinstance(loss, Tensor):
        raise TypeError(f"why_not_updating: loss must be the loss Tensor (before backward), got "
                        f"{type(loss).__name__}")
    if loss is param:
        return True
    fn = loss.grad_fn
    if fn is None:
        return False
    stack, seen, freed = [fn], {id(fn)}, False
    while stack:
        fn = stack.pop()
        inputs = fn.inputs
        if not inputs:                  # () once backward freed this part of the graph
            freed = True
            continue
        for t in inputs:
            if t is param:
                return True
            child = t.grad_fn
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return None if freed else False
