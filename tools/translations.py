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
(``tools/build_notebooks.py``) makes ``notebooks/zh/NN_name.zh.ipynb`` from the English code cells
and these prose cells, so a code cell cannot differ between the editions. When an English cell
changes, its stamp no longer matches and the build (and ``tests/notebooks/test_translations.py``) names
the cell to translate again.

* ``status [NAME...]``: for each chapter, how many prose cells are translated, missing, stale.
* ``skeleton NAME...``: write ``notebooks/src/zh/NAME.py`` with every English prose cell copied,
  stamped, ready to be translated in place (refuses to overwrite an existing file).
* ``stamp NAME...``: after you have updated stale translations, stamp them with the current
  English cells (the cell count must already match).
* ``faq``: write ``notebooks/zh/FAQ.md``: the questions of ``notebooks/src/zh/FAQ.md`` (in
  Chinese) with the links of the English index, pointed at the Chinese chapters' headings (at
  the English chapter while a chapter is not translated yet).
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
#: The Chinese edition's Markdown pages beside its chapters.
CHINESE_PAGES = [ROOT / "README.zh.md", ROOT / "notebooks" / "zh" / "FAQ.md",
                 ROOT / "notebooks" / "GLOSSARY.md"]


def chinese_chapters() -> list[str]:
    """The chapters with Chinese prose (``notebooks/src/zh/*.py``, the lab page included).

    >>> "06_optimizers" in chinese_chapters() and "lab" in chinese_chapters()
    True
    """
    return sorted(path.stem for path in ZH_SOURCES.glob("*.py"))


def stamp_of(text: str) -> str:
    """The stamp of an English prose cell: the first 8 hex digits of its SHA-1."""
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:8]


def english_prose(name: str) -> list[str]:
    """The markdown cells of the English source ``name`` (e.g. ``06_optimizers``), in order."""
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
        elif [level for level, _ in headings(en)] != [level for level, _ in headings(zh)]:
            found.append(f"prose cell {index} (English: {first_line!r}) has headings at levels "
                         f"{[lv for lv, _ in headings(en)]}, its translation "
                         f"{[lv for lv, _ in headings(zh)]}: keep one heading for each")
    return found


def headings(text: str) -> list[tuple[int, str]]:
    """``(level, anchor)`` of each markdown heading in ``text``; the anchor is JupyterLab's,
    the heading's text with spaces turned into ``-``."""
    found = []
    for line in text.splitlines():
        match = re.match(r"(#+)\s+(.*)", line)
        if match:
            found.append((len(match.group(1)), match.group(2).strip().replace(" ", "-")))
    return found


def is_translated(name: str) -> bool:
    """True when ``notebooks/src/zh/NAME.py`` exists and pairs with the English source."""
    return (ZH_SOURCES / f"{name}.py").exists() and not problems(name)


def chinese_anchor(name: str, english_anchor: str) -> str:
    """The anchor in the Chinese chapter ``name`` of the heading that translates the English
    heading ``english_anchor`` (the same heading of the paired prose cell).

    Raises KeyError when the English chapter has no such heading."""
    for en, (_, zh) in zip(english_prose(name), chinese_prose(name)):
        en_anchors = [anchor for _, anchor in headings(en)]
        if english_anchor in en_anchors:
            return [anchor for _, anchor in headings(zh)][en_anchors.index(english_anchor)]
    raise KeyError(f"{name} has no heading #{english_anchor}")


def chinese_notebook(name: str) -> str:
    """The file name of chapter ``name``'s Chinese edition (in ``notebooks/zh/``). The ``.zh``
    tells the two editions apart where only a file's name shows, JupyterLab's tabs among them.

    >>> chinese_notebook("08_freezing")
    '08_freezing.zh.ipynb'
    """
    return f"{name}.zh.ipynb"


CHAPTER_LINK = re.compile(r"\[([^\]]*)\]\((\d\d_[a-z0-9_]+)\.ipynb(?:#([^)\s]+))?\)")


def localize_links(text: str) -> str:
    """Point the chapter links of Chinese prose at the Chinese chapters and their headings (an
    untranslated chapter's link goes to the English one, ``../NN_name.ipynb``). A link whose
    text is ``NN § English heading`` shows the Chinese heading instead."""
    def replace(match: re.Match) -> str:
        label, name, anchor = match.group(1), match.group(2), match.group(3)
        if not (SOURCES / f"{name}.py").exists():
            return match.group(0)
        if not is_translated(name):
            return f"[{label}](../{name}.ipynb" + (f"#{anchor})" if anchor else ")")
        if not anchor:
            return f"[{label}]({chinese_notebook(name)})"
        zh = chinese_anchor(name, anchor)
        if re.fullmatch(r"\d\d § .*", label):
            label = f"{label[:2]} § {zh.replace('-', ' ')}"
        return f"[{label}]({chinese_notebook(name)}#{zh})"
    return CHAPTER_LINK.sub(replace, text)


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
    """Names from arguments (``05`` or ``06_optimizers``), or every English source."""
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


FAQ_ROW = re.compile(r"^\|\s*([A-Z]\d+)\s*\|")


def english_faq_links() -> dict[str, list[tuple[str, str, str]]]:
    """For each question id of ``notebooks/FAQ.md``: its links as (chapter, anchor, text)."""
    links = {}
    for line in (ROOT / "notebooks" / "FAQ.md").read_text(encoding="utf-8").splitlines():
        match = FAQ_ROW.match(line)
        if match:
            links[match.group(1)] = re.findall(
                r"\[(\d\d) § [^\]]*\]\((\d\d_[a-z0-9_]+)\.ipynb#([^)]+)\)", line)
    return {faq_id: [(name, anchor, number) for number, name, anchor in found]
            for faq_id, found in links.items()}


def chinese_faq() -> str:
    """The text of ``notebooks/zh/FAQ.md`` (see the ``faq`` command)."""
    links = english_faq_links()
    out = []
    lines = (ZH_SOURCES / "FAQ.md").read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        match = FAQ_ROW.match(line)
        if not match:
            out.append(line)
            # a section of questions gets the table's header; a section of prose does not
            following = next((rest for rest in lines[index + 1:] if rest.strip()), "")
            if line.startswith("## ") and FAQ_ROW.match(following):
                out += ["", "| 编号 | 问题 | 回答在 |", "| --- | --- | --- |"]
            continue
        faq_id = match.group(1)
        question = line.split("|")[2].strip()
        if faq_id not in links:
            raise SystemExit(f"notebooks/src/zh/FAQ.md: {faq_id} is not in notebooks/FAQ.md")
        targets = []
        for name, anchor, number in links[faq_id]:
            if is_translated(name):
                zh = chinese_anchor(name, anchor)
                targets.append(f"[{number} § {zh.replace('-', ' ')}]"
                               f"({chinese_notebook(name)}#{zh})")
            else:
                targets.append(f"[{number} § {anchor.replace('-', ' ')}（英文）]"
                               f"(../{name}.ipynb#{anchor})")
        out.append(f"| {faq_id} | {question} | {', '.join(targets)} |")
    # a section heading is followed by the table header; drop the blank rows in between
    text = "\n".join(out) + "\n"
    return re.sub(r"(\| --- \| --- \| --- \|)\n\n", r"\1\n", text)


def main(argv: list[str]) -> int:
    if argv == ["faq"]:
        target = ROOT / "notebooks" / "zh" / "FAQ.md"
        target.write_text(chinese_faq(), encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")
        return 0
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
