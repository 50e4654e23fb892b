"""The shape of the package, checked on every run: no import cycle, the layers in their order,
no private name used outside its file, and files a learner can read in one sitting.

The rules are DESIGN.md's. Imports are read from the source (``ast``), every one of them:
those inside functions count, because "it only works because of import order" is the
fault these rules exist to catch. ``from X import a`` counts as an import of the module
``X.a`` when there is one, else of ``X`` itself.

* **No cycles**: no module imports, directly or through others, a module that imports it.
  An import under ``if TYPE_CHECKING:`` never runs: it names a type for the checker, and the
  cycle check leaves it out (the layer check still reads it).
* **Layers**: backend <- autograd <- nn <- optim <- (io, diagnose, stats, trace, data) <- plot
  <- lab; a module imports only from its own layer and the layers below (the learner-facing
  text, i18n, and the small shared modules sit at the bottom; exercises, the command line and
  the launcher at the top).
* **Private names stay in their file**: no ``from x import _name`` and no ``module._name``
  between files (a helper two files share gets a public name in its module).
* **Line budget**: no file over 400 lines, unless ``LONG_FILES`` says why in one line, and
  no more than three over 450.
* **A built-in type subclassed only with a reason**: an ``int`` that can be called or a
  ``dict`` that checks its writes surprises a reader; ``BUILTIN_SUBCLASSES`` says why each stays.
* **Tests a contributor finds**: ``tests/TESTMAP`` names each module's test files, and each
  one mentions the module, a name it defines or a name of a module that imports it.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dltutor"

#: Each top-level part of dltutor and its layer: a module imports from its layer or lower ones.
LAYERS = {
    "backend": 0, "host_reads": 0, "errors": 0, "checks": 0, "hooks": 0, "i18n": 0, "twins": 0, "devices": 0, "cuda": 0,
    "sums_of_squares": 0,
    "notebook_copy": 0,                        # the standard library only: a hub runs it alone
    "autograd": 1,
    "nn": 2, "autodiff": 2,
    "optim": 3,
    "io": 4, "diagnose": 4, "distributed": 4, "stats": 4, "trace": 4, "data": 4, "utils": 4,
    "plot": 5,
    "lab": 6, "examples": 6,
    "exercises": 7, "launch": 7, "cli": 7,
    "": 8,                                     # dltutor/__init__.py, the public face
}

MAX_LINES = 400
#: Even the argued files stay under this, but for at most ``MOST_VERY_LONG`` of them.
VERY_LONG, MOST_VERY_LONG = 450, 3
#: Files allowed to be longer than MAX_LINES, each with its reason.
LONG_FILES: dict[str, str] = {
    "autograd/tensor.py": "Tensor is one class; DESIGN keeps its operators in it, a short method each",
    "nn/module.py": "Module is one class; to(), loading, Paddle's names are mixins beside it",
    "optim/optimizer.py": ("step()'s stages and what they ask of each parameter (its lr, "
                           "Paddle's decay, scratch) in one file; each rule has its own"),
    "backend.py": ("the one place that knows NumPy from CuPy: each backend's array module, "
                   "erf, reads and fused kernels (NumPy's fast sums: sums_of_squares.py)"),
    "i18n/en.py": "a table of text, one entry a line; zh.py has the same keys",
}


# -- reading the imports ---------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = ["dltutor", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (the chapters the wheel carries aside)."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))
            if "chapters" not in path.relative_to(PACKAGE).parts}


MODULES = source_files()


def _base(importer: str, path: Path, level: int, module: str | None) -> str:
    """The absolute name behind a (possibly relative) ``from ... import``."""
    if level == 0:
        return module or ""
    package = importer if path.name == "__init__.py" else importer.rsplit(".", 1)[0]
    parts = package.split(".")
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def imports_of(name: str) -> list[tuple[str, str | None, int]]:
    """What module ``name`` imports from dltutor: (module, the name taken from it or None, line)."""
    path = MODULES[name]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names
                      if alias.name.startswith("dltutor")]
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, path, node.level, node.module)
            if not base.startswith("dltutor"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.append((submodule, None, node.lineno) if submodule in MODULES
                             else (base, alias.name, node.lineno))
    return found


def type_only_lines(name: str) -> set[int]:
    """The lines of module ``name`` inside an ``if TYPE_CHECKING:`` block: imports that never
    run, written so that a type checker knows a name (the ops name the Tensor they return)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    return {inner.lineno for node in ast.walk(tree)
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            for statement in node.body for inner in ast.walk(statement)
            if isinstance(inner, (ast.Import, ast.ImportFrom))}


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports when it runs (a module importing its own package's
    __init__ counts; an import for the type checker alone does not: it never runs)."""
    edges = {}
    for name in MODULES:
        type_only = type_only_lines(name)
        edges[name] = {target for target, _, line in imports_of(name)
                       if target in MODULES and line not in type_only}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts with more than one module, or a module importing itself
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1 or node in edges[node]:
                    found.append(sorted(part))
    return found


def layer_of(name: str) -> int:
    part = name.split(".")[1] if "." in name else ""
    return LAYERS[part]


def top_package(name: str) -> str:
    return ".".join(name.split(".")[:2])


# -- the rules -------------------------------------------------------------------------------
def test_every_part_of_the_package_has_a_layer():
    parts = {name.split(".")[1] if "." in name else "" for name in MODULES}
    assert parts <= set(LAYERS), f"give these a layer in LAYERS: {sorted(parts - set(LAYERS))}"


def test_no_module_imports_itself_through_others():
    found = cycles(graph())
    assert not found, "import cycles (imports inside functions count):\n" + "\n".join(
        " <-> ".join(part) for part in found)


def test_every_import_goes_down_the_layers():
    wrong = [f"{name} (layer {layer_of(name)}) imports {target} (layer {layer_of(target)}), "
             f"line {line}"
             for name in MODULES for target, _, line in imports_of(name)
             if target in MODULES and layer_of(target) > layer_of(name)]
    assert not wrong, "imports against the layer order " + \
        "backend <- autograd <- nn <- optim <- ... <- plot <- lab:\n" + "\n".join(wrong)


def _private(attribute: str) -> bool:
    return attribute.startswith("_") and not attribute.startswith("__")


def private_uses(name: str) -> list[str]:
    """Private names ``name`` takes from other modules: ``from x import _y`` or ``x._y``."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    wrong = [f"{name}:{line} imports {target}'s {taken}" for target, taken, line in imports_of(name)
             if taken is not None and _private(taken) and target != name]
    modules = {}                                 # local name -> the dltutor module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base(name, path, node.level, node.module)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    modules[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and _private(node.attr)):
            wrong.append(f"{name}:{node.lineno} uses {modules[node.value.id]}.{node.attr}")
    return wrong


def test_no_private_name_is_used_outside_its_file():
    wrong = [use for name in MODULES for use in private_uses(name)]
    assert not wrong, ("a private name used by another file: give it a public name in its "
                       "module (or keep it in one file):\n" + "\n".join(wrong))


def test_every_file_fits_the_line_budget():
    too_long = {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
                for path in MODULES.values()}
    too_long = {file: lines for file, lines in too_long.items()
                if lines > MAX_LINES and file not in LONG_FILES}
    assert not too_long, (f"files over {MAX_LINES} lines (split them, or say why in "
                          f"LONG_FILES): {too_long}")
    stale = [file for file in LONG_FILES if not (PACKAGE / file).exists()
             or len((PACKAGE / file).read_text(encoding="utf-8").splitlines()) <= MAX_LINES]
    assert not stale, f"LONG_FILES names files that no longer need it: {stale}"


def test_at_most_three_files_are_over_450_lines():
    """Tensor and the optimizer's step may run long; a fourth must split."""
    very_long = sorted(str(path.relative_to(PACKAGE)) for path in MODULES.values()
                       if len(path.read_text(encoding="utf-8").splitlines()) > VERY_LONG)
    assert len(very_long) <= MOST_VERY_LONG, (
        f"{len(very_long)} files over {VERY_LONG} lines, at most {MOST_VERY_LONG} may be: "
        f"{very_long}; move a coherent piece of one out (as nn/module.py's mixins)")


# -- built-in types subclassed -------------------------------------------------------------------
BUILTINS = {"int", "float", "complex", "bool", "str", "bytes", "tuple", "list", "dict", "set",
            "frozenset"}
#: Each class that subclasses a built-in type (``file:Class``), and why a plain one will not do.
BUILTIN_SUBCLASSES: dict[str, str] = {
    "autograd/tensor.py:ElementCount": "t.size is NumPy's and Paddle's count and t.size() "
                                       "PyTorch's shape: one int that can be called is both",
    "optim/settings.py:ParamGroup": "param_groups are PyTorch's dicts, and a write of a bad lr "
                                    "must be refused when it is made, not at the next step",
}


def builtin_subclasses(source: str, file: str) -> set[str]:
    """``file:Class`` for each class in ``source`` with a built-in type among its bases."""
    return {f"{file}:{node.name}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ClassDef)
            and any(isinstance(base, ast.Name) and base.id in BUILTINS for base in node.bases)}


def test_every_subclass_of_a_builtin_type_says_why_it_is_one():
    found = set().union(*(builtin_subclasses(path.read_text(encoding="utf-8"),
                                             path.relative_to(PACKAGE).as_posix())
                          for path in MODULES.values()))
    assert found == set(BUILTIN_SUBCLASSES), (
        f"unargued: {sorted(found - set(BUILTIN_SUBCLASSES))} (use the plain type, or say why "
        f"in BUILTIN_SUBCLASSES); argued but gone: {sorted(set(BUILTIN_SUBCLASSES) - found)}")


# -- where each module's tests are -------------------------------------------------------------
#: From a module to its tests: ``grep optim/decay.py tests/TESTMAP``.
TESTMAP = PACKAGE.parent / "tests" / "TESTMAP"
ROOT = PACKAGE.parent


def read_testmap(text: str) -> dict[str, list[str]]:
    """TESTMAP's lines ``dltutor/PATH.py: tests/PATH.py ...`` as module path -> its test files."""
    entries = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            module, _, tests = line.partition(":")
            entries[module.strip()] = tests.split()
    return entries


def public_names(name: str) -> set[str]:
    """The names module ``name`` defines at its top level (a package: the names it gathers)."""
    path = MODULES[name]
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(target.id for target in targets if isinstance(target, ast.Name))
        elif (isinstance(node, ast.ImportFrom) and path.name == "__init__.py"
              and node.module != "__future__"):
            found.update(alias.asname or alias.name for alias in node.names)
    return {word for word in found if not word.startswith("_")}


def words_of(name: str, edges: dict[str, set[str]]) -> set[str]:
    """What a test of module ``name`` mentions: the module's name, a name it defines, or a name
    of a module that imports it (a helper is tested through the function that calls it; a
    package's ``__init__`` gathers too much to count)."""
    callers = [other for other, targets in edges.items()
               if name in targets and MODULES[other].name != "__init__.py"]
    words = {name, name.rsplit(".", 1)[-1], *public_names(name)}
    return words.union(*({caller.rsplit(".", 1)[-1], *public_names(caller)} for caller in callers))


def mistakes_in_testmap(entries: dict[str, list[str]]) -> list[str]:
    """What is wrong with the map: a module missing or gone, a test file missing or one that
    never mentions the module it is listed for."""
    paths = {path.relative_to(ROOT).as_posix(): name for name, path in MODULES.items()}
    problems = [f"{path}: not in tests/TESTMAP" for path in sorted(set(paths) - set(entries))]
    problems += [f"{path}: in tests/TESTMAP but no longer in dltutor/"
                 for path in sorted(set(entries) - set(paths))]
    edges = graph()
    for path, tests in sorted(entries.items()):
        if path not in paths:
            continue
        if not tests:
            problems.append(f"{path}: no test file named")
        pattern = re.compile(r"(?<!\w)(" + "|".join(
            re.escape(word) for word in sorted(words_of(paths[path], edges))) + r")(?!\w)")
        for test in tests:
            file = ROOT / test
            if not file.is_file():
                problems.append(f"{path}: {test} does not exist")
            elif not pattern.search(file.read_text(encoding="utf-8")):
                problems.append(f"{path}: {test} mentions neither the module nor a name it "
                                f"defines (nor one of a module that imports it)")
    return problems


def test_every_module_names_its_tests_in_the_testmap():
    problems = mistakes_in_testmap(read_testmap(TESTMAP.read_text(encoding="utf-8")))
    assert not problems, "fix tests/TESTMAP (one line a module: its path, a colon, its test " \
        "files, the most direct first):\n" + "\n".join(problems)


# -- the rules can fail ------------------------------------------------------------------------
def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(edges) == [["a", "b", "c"], ["e"]]


def test_an_import_for_the_type_checker_alone_makes_no_cycle(tmp_path):
    """ops/*.py name Tensor in their annotations, and tensor.py calls the ops: the type-only
    import runs never, so it cannot make the import order matter."""
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from .tensor import Tensor\nfrom . import dtypes\n")
    name = "dltutor.autograd.probe"
    MODULES[name] = tmp_path / "probe.py"
    (tmp_path / "probe.py").write_text(source, encoding="utf-8")
    try:
        edges = graph()[name]
    finally:
        del MODULES[name]
    assert edges == {"dltutor.autograd.dtypes"}


def test_the_import_reader_sees_imports_inside_functions(tmp_path):
    """autograd/tensor.py once imported nn.init inside a function (and the lab's controller its
    view): the reader must see such an import, wherever it is written."""
    source = "def later():\n    from ..nn import init\n    return init\n"
    name = "dltutor.autograd.probe"
    MODULES[name] = tmp_path / "probe.py"
    (tmp_path / "probe.py").write_text(source, encoding="utf-8")
    try:
        taken = imports_of(name)
    finally:
        del MODULES[name]
    assert taken == [("dltutor.nn.init", None, 2)]


# -- each optimizer rule whole in its file ------------------------------------------------------
#: Each built-in rule's file, its class, and what its ``update_param`` must mention: the whole
#: rule, weight decay and this parameter's lr included, not spread over the base's stages.
RULES = {
    "optim/sgd.py": ("SGD", {"weight_decay", "momentum", "dampening", "nesterov", "lr"}),
    "optim/adam.py": ("Adam", {"weight_decay", "decoupled_decay", "betas", "eps", "amsgrad",
                               "lr"}),
}


def words_of_rule(source: str, class_name: str) -> set[str]:
    """The names and string keys ``class_name.update_param`` uses in ``source`` (its docstring
    aside: a formula in a docstring is not the code that runs)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "update_param":
                    body = item.body[1:] if ast.get_docstring(item) else item.body
                    return {word for statement in body for sub in ast.walk(statement)
                            for word in (getattr(sub, "id", None), getattr(sub, "attr", None),
                                         getattr(sub, "value", None))
                            if isinstance(word, str)}
    return set()


def test_each_optimizer_rule_holds_its_whole_update():
    missing = {file: sorted(words - words_of_rule((PACKAGE / file).read_text(encoding="utf-8"),
                                                   class_name))
               for file, (class_name, words) in RULES.items()}
    missing = {file: words for file, words in missing.items() if words}
    assert not missing, ("a rule's update_param does not show its whole update (the base only "
                         f"selects, checks and clips): {missing}")


def test_the_rule_reader_sees_what_a_rule_leaves_to_the_base():
    source = ("class Rule:\n    def update_param(self, p, state):\n"
              "        '''g = g + weight_decay * param'''\n        return p.lr * p.grad\n")
    assert words_of_rule(source, "Rule") == {"p", "lr", "grad"}


def test_the_builtin_subclass_finder_sees_a_dict_and_skips_a_plain_class():
    source = ("class Count(int):\n    pass\nclass Table(dict, Mixin):\n    pass\n"
              "class Plain:\n    pass\n")
    assert builtin_subclasses(source, "x.py") == {"x.py:Count", "x.py:Table"}


def test_the_testmap_check_catches_a_missing_module_and_a_wrong_test_file():
    entries = read_testmap(TESTMAP.read_text(encoding="utf-8"))
    del entries["dltutor/optim/sgd.py"]
    entries["dltutor/optim/adam.py"] = ["tests/data/test_loader.py", "tests/optim/test_gone.py"]
    assert mistakes_in_testmap(entries) == [
        "dltutor/optim/sgd.py: not in tests/TESTMAP",
        "dltutor/optim/adam.py: tests/data/test_loader.py mentions neither the module nor a "
        "name it defines (nor one of a module that imports it)",
        "dltutor/optim/adam.py: tests/optim/test_gone.py does not exist"]
