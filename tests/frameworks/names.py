"""Read the chapters' "what the frameworks call it" tables and check each name in a framework.

A table cell such as ``torch.nn.init.xavier_uniform_(w, gain=1.0)`` or ``opt.zero_grad()``
claims that this name exists and takes these keywords. :func:`problems` parses each code span
as Python and walks it: every dotted name must resolve in the framework (from a namespace of
real objects: a network, a parameter, an optimizer, a tensor, ...), every call's keywords must
be accepted by the callee's signature, and a call with no arguments is made, so that a chain
such as ``p.detach().numpy()`` is followed to its end.

>>> problems("`len(x)` and `abs(y)`", {"len": len, "abs": abs, "x": [], "y": 1})
[]
>>> problems("`x.nope()`", {"x": []})
["`x.nope()`: list has no attribute 'nope'"]
"""
from __future__ import annotations

import ast
import inspect
import re
import warnings
from typing import Any

CODE = re.compile(r"`([^`]+)`")
# "1.x: `fluid.layers.mul`" names Paddle 1.x, which Paddle 3 no longer has (cited, not run).
OLD_VERSION = re.compile(r"1\.x:\s*(`[^`]+`(,\s*)?)+")


NOT_A_NAME = re.compile(r"^([@*/+-]+|\([a-z_, ]+\)|[A-Z][A-Z0-9_]+)$")


class Unknown:
    """The value of a call with arguments: not made, so the chain is not followed further."""


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every table in a markdown text, as rows of stripped cells (the header row first)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        line = line.strip().removeprefix(">").strip()
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def column(table: list[list[str]], framework: str) -> list[tuple[str, str]]:
    """``(row label, cell)`` for the column whose header names ``framework`` first. A cell that
    says "same" claims the dltutor column's code for this framework too.

    >>> column([["idea", "dltutor", "PyTorch"], ["seed", "`dt.manual_seed(0)`", "same"]], "PyTorch")
    [('seed', 'same `dt.manual_seed(0)`')]
    """
    header = [title.split(",")[0].strip().split(" ")[0] for title in table[0]]
    if framework not in header:
        return []
    index = header.index(framework)
    ours = header.index("dltutor") if "dltutor" in header else None
    rows = []
    for row in table[1:]:
        if index >= len(row):
            continue
        cell = row[index]
        if cell.lower().startswith("same") and ours is not None:
            cell = f"{cell} {row[ours]}"
        rows.append((row[0], cell))
    return rows


def spans(cell: str) -> list[str]:
    """The code spans of a table cell, less those that name an older version of the API."""
    return CODE.findall(OLD_VERSION.sub("", cell))


def problems(text: str, namespace: dict[str, Any]) -> list[str]:
    """What does not resolve, for every code span in ``text``; an empty list if all do.

    Three kinds of span name no Python object and are left to the chapters' own tests: an
    operator (`@`), a shape in letters (`(out, in)`) and an environment variable (`OMP_NUM_THREADS`).
    """
    found = []
    for span in spans(text):
        if NOT_A_NAME.match(span.strip()):
            continue
        try:
            tree = _parse(span)
        except SyntaxError:
            found.append(f"`{span}`: not Python, so nothing can check it")
            continue
        try:
            for node in tree.body:
                _check_statement(node, namespace)
        except (AttributeError, KeyError, NameError, TypeError, IndexError, ValueError,
                RuntimeError) as err:
            message = str(err).split("\n")[0].replace("'type object' ", "").strip()
            found.append(f"`{span}`: {message}")
    return found


def _parse(span: str) -> ast.Module:
    code = span.strip()
    if code.startswith("."):                               # `.cuda()`: a tensor's method
        code = "x" + code
    if code.startswith("with ") and code.endswith(":"):      # `with torch.no_grad():`
        code = code[len("with "):-1]
    return ast.parse(code)


def _check_statement(node: ast.stmt, namespace: dict[str, Any]) -> None:
    if isinstance(node, ast.Expr):
        _value(node.value, namespace)
    elif isinstance(node, ast.With):                      # `with torch.no_grad(): p.copy_(a)`
        for item in node.items:
            _value(item.context_expr, namespace)
        for statement in node.body:
            _check_statement(statement, namespace)
    elif isinstance(node, ast.Assign):                    # `h.stop_gradient = True`
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                owner = _value(target.value, namespace)
                if not isinstance(owner, Unknown) and not hasattr(owner, target.attr):
                    raise AttributeError(f"{type(owner).__name__} has no attribute '{target.attr}'")
            elif isinstance(target, ast.Subscript):
                _value(target.value, namespace)
        _value(node.value, namespace)
    else:
        raise TypeError(f"a table names expressions, not a {type(node).__name__} statement")


def _value(node: ast.expr, namespace: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _lookup(node.id, namespace)
    if isinstance(node, ast.Attribute):
        owner = _value(node.value, namespace)
        if isinstance(owner, Unknown):
            return owner
        if not hasattr(owner, node.attr):
            owner_name = owner.__name__ if inspect.ismodule(owner) or inspect.isclass(owner) else type(owner).__name__
            raise AttributeError(f"{owner_name} has no attribute '{node.attr}'")
        return getattr(owner, node.attr)
    if isinstance(node, ast.Call):
        return _call(node, namespace)
    if isinstance(node, ast.Subscript):
        owner = _value(node.value, namespace)
        key = _value(node.slice, namespace)
        return owner if isinstance(owner, Unknown) or isinstance(key, Unknown) else owner[key]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_value(e, namespace) for e in node.elts]
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                _value(child, namespace)
        return Unknown()
    return Unknown()


def _lookup(name: str, namespace: dict[str, Any]) -> Any:
    """A bare name: a variable of the namespace, else a name in one of the framework's modules
    (``StepLR``, ``ClipGradByNorm``), else a method or attribute of its network or optimizer
    (``named_parameters``, ``_append_optimize_op``), else a keyword of one of the callables the
    tables speak of (``grad_clip``, ``in_features``)."""
    if name in namespace:
        return namespace[name]
    for module in namespace.get("__modules__", []):
        if hasattr(module, name):
            return getattr(module, name)
    for owner in (namespace.get(n) for n in ("net", "opt", "bn", "x", "loss") if n in namespace):
        if owner is not None and hasattr(owner, name):
            return getattr(owner, name)
    for source in namespace.get("__keyword_sources__", []):
        if name in inspect.signature(source).parameters:
            return Unknown()
    raise NameError(f"'{name}' is in none of the framework's modules (tests/frameworks/test_names.py)")


def _call(node: ast.Call, namespace: dict[str, Any]) -> Any:
    function = _value(node.func, namespace)
    for argument in node.args:
        _value(argument.value if isinstance(argument, ast.Starred) else argument, namespace)
    for keyword in node.keywords:
        _value(keyword.value, namespace)
    if isinstance(function, Unknown):
        return function
    if not callable(function):
        raise TypeError(f"{ast.unparse(node.func)} is not callable")
    _check_signature(function, len(node.args), [k.arg for k in node.keywords if k.arg], ast.unparse(node.func))
    if node.args or node.keywords:                       # never run a call with arguments:
        return Unknown()                                   # `torch.save(x, path)` would write
    try:
        with warnings.catch_warnings():                    # deprecation notes of zero-arg calls
            warnings.simplefilter("ignore")
            return function()                              # follow `p.detach().numpy()`
    except Exception:                                      # `t.cuda()` without a GPU: the name
        return Unknown()                                   # exists, which is what is claimed


def _check_signature(function: Any, positional: int, keywords: list[str], name: str) -> None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):                        # a builtin without a signature
        return
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        accepted = {p.name for p in signature.parameters.values()
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        unknown = [k for k in keywords if k not in accepted]
        if unknown:
            raise TypeError(f"{name}() takes no keyword {unknown[0]!r}")
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        most = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   for p in signature.parameters.values())
        if positional > most:
            raise TypeError(f"{name}() takes at most {most} positional arguments, the table gives {positional}")
