"""The Chinese edition's prose: ``python tools/translations.py status|skeleton|stamp [NAME...]``.

The two editions share one source of code. ``notebooks/src/NN_name.py`` holds the English
chapter (prose and code); ``notebooks/src/zh/NN_name.py`` holds **only the Chinese prose**: one
markdown cell for each markdown cell of the English source, in the same order, each stamped with
the English cell it translates::

    # %% [markdown] en="3f2a9c1b"
    # # 参数组
    #
    # ...

``en`` is the first 8 hex digits of the SHA-1 of the English cell's text. The build
(``tools/build_notebooks.py``) makes ``notebooks/zh/NN_name.ipynb`` from the English code cells
and these prose cells, so a code cell cannot differ between the editions. When an English cell
changes, its stamp no longer matches and the build (and ``tests/test_translations.py``) names
the cell to translate again.

* ``status [NAME...]``: for each chapter, how many prose cells are translated, missing, stale.
* ``skeleton NAME...``: write ``notebooks/src/zh/NAME.py`` with every English prose cell copied,
  stamped, ready to be translated in place (refuses to overwrite an existing file).
* ``stamp NAME...``: after you have updated stale translations, stamp them with the current
  English cells (the cell count must already match).
"""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "notebooks" / "src"
ZH_SOURCES = SOURCES / "zh"
HAN = re.compile(r"[\u4e00-\u9fff]")


def stamp_of(text: str) -> str:
    """The stamp of an English prose cell: the first 8 hex digits of its SHA-1."""
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:8]


def english_prose(name: str) -> list[str]:
    """The markdown cells of the English source ``name`` (e.g. ``05_optimizers``), in order."""
    nb = jupytext.read(SOURCES / f"{name}.py")
    return [cell.source for cell in nb.cells if cell.cell_type == "markdown"]


def chinese_prose(name: str) -> list[tuple[str, str]]:
    """``(stamp, text)`` for each prose cell of the Chinese source ``name``."""
    nb = jupytext.read(ZH_SOURCES / f"{name}.py")
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            raise ValueError(f"notebooks/src/zh/{name}.py: cell {index} is a code cell; the "
                             f"Chinese source holds prose only (the code comes from the English "
                             f"source)")
        cells.append((str(cell.metadata.get("en", "")), cell.source))
    return cells


def problems(name: str) -> list[str]:
    """What keeps the Chinese prose of ``name`` from matching the English source (empty: ok)."""
    if not (ZH_SOURCES / f"{name}.py").exists():
        return [f"notebooks/src/zh/{name}.py does not exist (python tools/translations.py "
                f"skeleton {name})"]
    english, chinese = english_prose(name), chinese_prose(name)
    if len(english) != len(chinese):
        return [f"notebooks/src/zh/{name}.py has {len(chinese)} prose cells, the English source "
                f"{len(english)}: add or remove cells so that they pair up in order"]
    found = []
    for index, (en, (stamp, zh)) in enumerate(zip(english, chinese)):
        first_line = en.strip().splitlines()[0][:70] if en.strip() else ""
        if stamp != stamp_of(en):
            found.append(f"prose cell {index} (English: {first_line!r}) changed since it was "
                         f"translated: update the Chinese, then `python tools/translations.py "
                         f"stamp {name}`")
        elif en.strip() and not HAN.search(zh):
            found.append(f"prose cell {index} (English: {first_line!r}) is not translated yet")
    return found


def write_cells(path: Path, cells: list[tuple[str, str]]) -> None:
    """Write prose cells in jupytext's percent format, each with its ``en`` stamp."""
    parts = []
    for stamp, text in cells:
        body = "\n".join(("# " + line).rstrip() for line in text.splitlines())
        parts.append(f'# %% [markdown] en="{stamp}"\n{body}\n')
    path.write_text("\n".join(parts), encoding="utf-8")


def skeleton(name: str) -> None:
    target = ZH_SOURCES / f"{name}.py"
    if target.exists():
        raise SystemExit(f"{target.relative_to(ROOT)} exists; translate it in place")
    ZH_SOURCES.mkdir(parents=True, exist_ok=True)
    write_cells(target, [(stamp_of(text), text) for text in english_prose(name)])
    print(f"wrote {target.relative_to(ROOT)}: translate each cell's text, keep the markers")


def stamp(name: str) -> None:
    english, chinese = english_prose(name), chinese_prose(name)
    if len(english) != len(chinese):
        raise SystemExit(problems(name)[0])
    write_cells(ZH_SOURCES / f"{name}.py",
                [(stamp_of(en), zh) for en, (_, zh) in zip(english, chinese)])
    print(f"stamped notebooks/src/zh/{name}.py with the current English cells")


def chapter_names(args: list[str]) -> list[str]:
    """Names from arguments (``05`` or ``05_optimizers``), or every English source."""
    every = sorted(p.stem for p in SOURCES.glob("*.py"))
    if not args:
        return every
    chosen = []
    for arg in args:
        matches = [n for n in every if n == arg or n.split("_")[0] == arg]
        if not matches:
            raise SystemExit(f"no chapter {arg!r}; the chapters are {', '.join(every)}")
        chosen += matches
    return chosen


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("status", "skeleton", "stamp"):
        print(__doc__)
        return 2
    command, names = argv[0], chapter_names(argv[1:])
    for name in names:
        if command == "skeleton":
            skeleton(name)
        elif command == "stamp":
            stamp(name)
        else:
            found = problems(name)
            print(f"{name}: {'ok' if not found else f'{len(found)} to do'}")
            for line in found[:5]:
                print("   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
