"""Build the chapters as a static website: ``make site [REPO=OWNER/NAME]`` (or
``python tools/build_site.py [DIR] [--repo OWNER/NAME]``).

The site is made from the committed notebooks, with their stored outputs and plots (nothing is
executed), by MkDocs with the Material theme and mkdocs-jupyter (the ``site`` extra:
``pip install -e ".[site]"``). It needs no network, and the pages it makes load nothing from
outside the site (the theme's web fonts are off).

Each language is a site of its own, in its own language (navigation, search, the theme's
words): English at the top, Chinese under ``zh/``; a language menu in the header goes to the same
page in the other language.

Steps: the notebooks, the FAQ indexes and the glossary are staged in ``build/site-docs/en``
and ``build/site-docs/zh`` with a home page each, their cells' tags (``claim-torch-...``,
``nbval-ignore-output``: for the tests, not the reader) removed and the Chinese chapters' first
cell (it only switches the kit's language) left out; each chapter gets, after its title, a "run
this chapter" line (how to get the kit, which is not on PyPI, and run ``dltutor lab`` on your
machine; Binder when ``--repo OWNER/NAME`` names the kit's public GitHub repository) and the lab
page a note that it needs a running kernel; ``mkdocs build`` writes each language's site
(``site/`` by default, ``site/zh``) and the search index is pointed at the headings; then links
between chapters, written for JupyterLab (``06_optimizers.ipynb#Heading``), are pointed at the
pages (``../06_optimizers/#Heading``). Pages with formulas (chapter 03) typeset them with a copy of
MathJax 2 kept inside the site (from the ``jupyter-server-mathjax`` package, the copy the classic
Jupyter Notebook serves), so the formulas work offline too; other pages load no MathJax. A
small style sheet of the site's own (``CSS``) gives plots the whole width of the text.

This file is also the MkDocs build's hook file (``on_files``, ``on_page_content``,
``on_post_build``): while MkDocs renders a language's pages it shows a progress bar (on stderr,
one step a page), and it keeps a code cell's prompt (``In [6]:``) and copy button
(``Copied!``, and the hidden copy of the code it copies) out of the search index.
"""
from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import deeper  # tools/deeper.py, beside this file
from twins import TWIN_TAGS, without_heading  # tools/twins.py: twin-torch -> PyTorch

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
STAGE = ROOT / "build" / "site-docs"
#: Where the site keeps its copy of MathJax, and how a page with formulas loads it: TeX input,
#: HTML-CSS output with the STIX web fonts (the only fonts that copy ships).
MATHJAX = "assets/mathjax"
#: The hidden MathML that MathJax adds for screen readers asks for TeX fonts this copy lacks (a
#: request that fails) unless it keeps the page's font.
MATHJAX_LOADER = ('<style>.MJX_Assistive_MathML [mathvariant] {{font-family: inherit !important}}'
                  '</style><script type="text/x-mathjax-config">MathJax.Hub.Config({{"HTML-CSS": '
                  '{{availableFonts: [], preferredFont: null, imageFont: null, '
                  'webFont: "STIX-Web"}}}});</script><script src="{root}' + MATHJAX
                  + '/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"> </script>')
EMPTY_MATHJAX = '<script src=""> </script>'   # what mkdocs-jupyter leaves with no MathJax URL
#: The site's own style sheet (in each language's docs). At 1280 px a page's text column is
#: about 690 px wide, narrower than most plots (600 to 1200 px), so every plot is scaled down;
#: it should not lose more. The prompt column beside an output ("Out [n]:", never shown here)
#: took 64 px of it, and mkdocs-jupyter's code cell, a cell inside a cell, is padded twice.
CSS = "stylesheets/dltutor.css"
STYLE = """\
/* A plot has the cell's whole width: no empty prompt column beside it. */
.jupyter-wrapper .jp-OutputArea-child:has(> .jp-RenderedImage) > .jp-OutputPrompt {
  display: none;
}
/* mkdocs-jupyter nests a code cell in a second cell: pad it once. */
.jupyter-wrapper .jp-Cell > .jp-Cell {
  padding: 0;
}
/* A "Going deeper" section, folded under its heading until the reader opens it. */
details.deeper {
  border-left: 3px solid var(--md-default-fg-color--lightest);
  margin: 0.5em 0;
}
/* Material pads a details block on both sides; a plot inside keeps the column's width. */
.md-typeset details.deeper {
  padding-left: 0;
  padding-right: 0;
}
details.deeper > summary {
  cursor: pointer;
  font-weight: normal;       /* the heading inside is bold enough; its teaser line is prose */
}
details.deeper > summary::marker {
  color: var(--md-accent-fg-color);
}
"""
#: Binder opens a chapter in JupyterLab and the lab page as a Voilà app, from the GitHub
#: repository named by ``--repo OWNER/NAME`` (``make site REPO=OWNER/NAME``); without one the
#: pages only say how to run them on your machine (a Binder link needs a public repository).
BINDER = {"run": "https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=lab/tree/notebooks/{path}",
          "lab": "https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=voila/render/notebooks/{path}"}
REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
#: The kit is not on PyPI: a page says how to get it from its repository. With ``--repo`` pip
#: installs it straight from GitHub; without, from a clone (``make lab``, or the wheel that
#: ``make wheel`` builds, which carries the chapters for ``dltutor lab``).
GITHUB = "https://github.com/{repo}"

TEXT = {
    "en": {
        "run": ("**Run this chapter:** {binder}on your machine, in a clone of the kit's "
                "repository: `make lab`, or `make wheel`, then `pip install dist/dltutor-*.whl` "
                "and `dltutor lab` (dltutor is not on PyPI)."),
        "run_repo": ("**Run this chapter:** {binder}on your machine with "
                     "`pip install git+{url}`, then `dltutor lab` (dltutor is not on PyPI), or "
                     "`make lab` in a clone of [its repository]({url})."),
        "run_binder": "[on Binder]({url}) (in your browser, nothing to install), or ",
        "lab": ("**This page is the live lab.** Its controls and plots need a running Python "
                "kernel: open it {binder}in JupyterLab (`dltutor lab`), or as an app with Voilà "
                "(`voila notebooks/lab.ipynb`). Here you see it without one."),
        "lab_binder": "[on Binder]({url}), ",
        "home": "dltutor: parameter management, chapter by chapter",
        "nav": ("Home", "Chapters", "The live lab", "FAQ", "Glossary"),
    },
    "zh": {
        "run": ("**运行本章：** {binder}在你的电脑上克隆本套件的仓库，然后运行 `make lab-zh`；"
                "也可以先用 `make wheel` 构建 wheel，再 `pip install dist/dltutor-*.whl`，"
                "然后运行 `dltutor lab --lang zh`（dltutor 没有发布到 PyPI）。"),
        "run_repo": ("**运行本章：** {binder}在你的电脑上先 `pip install git+{url}`，再运行 "
                     "`dltutor lab --lang zh`（dltutor 没有发布到 PyPI）；也可以克隆"
                     "[本套件的仓库]({url})，然后运行 `make lab-zh`。"),
        "run_binder": "[在 Binder 上]({url})（在浏览器中，无需安装），或",
        "lab": ("**这个页面就是实时实验室。** 它的控件和图表需要一个运行中的 Python 内核："
                "{binder}在 JupyterLab（`dltutor lab --lang zh`）中打开，或用 Voilà 作为应用打开"
                "（`voila notebooks/zh/lab.zh.ipynb`）。这里看到的是没有内核时的样子。"),
        "lab_binder": "[在 Binder 上]({url})打开，或",
        "home": "dltutor：逐章学习参数管理",
        "nav": ("首页", "各章", "实时实验室", "常见问题", "术语对照表"),
    },
}


def _chapter_titles(folder: Path) -> list[tuple[str, str]]:
    """``(file name, first heading)`` of every chapter notebook in ``folder``, in order."""
    titles = []
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = next(c for c in cells if c["cell_type"] == "markdown" and c.get("id") != "site-run")
        heading = "".join(first["source"]).splitlines()[0].lstrip("# ").strip()
        titles.append((path.name, heading))
    return titles


def _home(language: str, folder: Path) -> str:
    """The home page of one language: what the kit is and the list of chapters."""
    lines = [f"# {TEXT[language]['home']}", ""]
    if language == "en":
        lines += ["An interactive Jupyter kit for **parameter management** in deep learning: how",
                  "a network's parameters are accessed, initialized, tied, grouped in optimizers,",
                  "given their own learning rates, frozen and clipped. Every number is computed",
                  "by a small autograd engine that follows PyTorch. [中文版](zh/) ·",
                  "[FAQ](FAQ.md) · [Glossary](GLOSSARY.md)", "", "## Chapters", ""]
    else:
        lines += ["一套可交互的 Jupyter 教学材料，讲深度学习中的**参数管理**：怎样访问、初始化、共享参数，",
                  "怎样在优化器中分组、给它们各自的学习率、冻结参数以及裁剪梯度。每一个数都由一个与",
                  "PyTorch 一致的小型自动微分引擎算出。[English](../) · [常见问题](FAQ.md) ·",
                  "[术语对照表](GLOSSARY.md)", "", "## 各章", ""]
    for name, heading in _chapter_titles(folder):
        lines.append(f"* [{name[:2]} {heading}]({name})")
    lab = "the live lab (needs a running kernel)" if language == "en" else "实时实验室（需要运行中的内核）"
    lines += [f"* [{lab}](lab.ipynb)", ""]
    return "\n".join(lines)


#: Issue 50: a kit code cell may be followed by its twins, the same lesson in PyTorch or Paddle
#: (code cells tagged so: ``TWIN_TAGS``, tools/twins.py). On a page the kit's cell and its twins
#: are one set of tabs, the kit's open: its own tab first, then one a twin, named after its
#: framework (the same names on the Chinese pages).
KIT_TAB = "dltutor"

#: Cells with this tag are left out of the pages: the Chinese chapters' language cell, which only
#: switches the kit's language.
SKIPPED_TAG = "language"


def _stage_notebook(source: Path, target: Path, text: str) -> None:
    """Copy the notebook ``source`` to ``target`` for the site: without the cells tagged
    ``SKIPPED_TAG``, without any cell's tags (mkdocs-jupyter shows a code cell's tags above it,
    and the tags are the tests' and the authors' business: ``nbval-ignore-output``,
    ``raises-exception``, ``claim-torch-...``) but a twin's (``TWIN_TAGS``: ``make_twin_tabs``
    finds the twins by it, and removes its label), and with a markdown cell holding ``text``
    after the first text cell (the chapter's title and introduction)."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    nb["cells"] = [c for c in nb["cells"] if SKIPPED_TAG not in c["metadata"].get("tags", [])]
    count = None
    for cell in nb["cells"]:
        # a twin keeps its tag: the page's cell gets a class from it (``celltag_twin-torch``),
        # which is how ``make_twin_tabs`` finds it
        twin = [tag for tag in cell["metadata"].pop("tags", []) if tag in TWIN_TAGS]
        if twin:
            cell["metadata"]["tags"] = twin
            # Its tab names the framework: no "# In PyTorch" line above the code; and it is the
            # same step of the lesson as the kit's cell beside it, so it shows that cell's
            # number, not the count of the twins' own kernel.
            cell["source"] = without_heading("".join(cell["source"]))
            cell["execution_count"] = count
            for output in cell["outputs"]:
                if "execution_count" in output:
                    output["execution_count"] = count
        elif cell["cell_type"] == "code":
            count = cell.get("execution_count")
    title = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown")
    nb["cells"].insert(title + 1, {"cell_type": "markdown", "id": "site-run", "metadata": {},
                                   "source": text})
    target.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


#: Each language: where its notebooks are and where its site goes inside the whole site.
LANGUAGES = {"en": (NOTEBOOKS, ""), "zh": (NOTEBOOKS / "zh", "zh/")}


def run_line(language: str, notebook: str, repo: str | None) -> str:
    """The line a page gets after its title: how to run it, on Binder too when ``repo`` names
    the kit's public GitHub repository.

    >>> run_line("en", "06_optimizers.ipynb", None)
    "**Run this chapter:** on your machine, in a clone of the kit's repository: `make lab`, or `make wheel`, then `pip install dist/dltutor-*.whl` and `dltutor lab` (dltutor is not on PyPI)."
    >>> run_line("en", "06_optimizers.ipynb", "someone/dltutor").split("or on your machine ")[1]
    'with `pip install git+https://github.com/someone/dltutor`, then `dltutor lab` (dltutor is not on PyPI), or `make lab` in a clone of [its repository](https://github.com/someone/dltutor).'
    >>> run_line("en", "zh/lab.zh.ipynb", "someone/dltutor").split("(", 1)[1].split(")")[0]
    'https://mybinder.org/v2/gh/someone/dltutor/HEAD?urlpath=voila/render/notebooks/zh/lab.zh.ipynb'
    """
    kind = "lab" if Path(notebook).name.split(".")[0] == "lab" else "run"  # not 12_live_lab
    text = TEXT[language]
    binder = (text[f"{kind}_binder"].format(url=BINDER[kind].format(repo=repo, path=notebook))
              if repo else "")
    if kind == "run" and repo:
        return text["run_repo"].format(binder=binder, url=GITHUB.format(repo=repo))
    return text[kind].format(binder=binder)


def stage(language: str, repo: str | None = None, staging: Path = STAGE) -> Path:
    """Copy what one language's site shows into ``staging``/LANG (build/site-docs/LANG), with
    its home page and the run lines (see ``run_line``); returns that folder."""
    source, _ = LANGUAGES[language]
    target = staging / language
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for path in sorted(source.glob("*.ipynb")):
        # a page is named by its chapter in both languages (zh/08_freezing/, not
        # zh/08_freezing.zh/), so the language menu finds its counterpart
        _stage_notebook(path, target / path.name.replace(".zh.ipynb", ".ipynb"),
                        run_line(language, path.relative_to(NOTEBOOKS).as_posix(), repo))
    shutil.copyfile(source / "FAQ.md", target / "FAQ.md")
    # the glossary is one wide table: it gets the room of the page's table of contents
    (target / "GLOSSARY.md").write_text("---\nhide:\n  - toc\n---\n\n"
                                        + (NOTEBOOKS / "GLOSSARY.md").read_text(encoding="utf-8"),
                                        encoding="utf-8")
    (target / "index.md").write_text(_home(language, source), encoding="utf-8")
    (target / CSS).parent.mkdir(parents=True, exist_ok=True)
    (target / CSS).write_text(STYLE, encoding="utf-8")
    return target


def has_formulas(notebook: Path) -> bool:
    """Whether a text cell of ``notebook`` holds TeX (``$...$``): only then does its page load
    MathJax.

    >>> has_formulas(NOTEBOOKS / "03_initialization.ipynb"), has_formulas(NOTEBOOKS / "lab.ipynb")
    (True, False)
    """
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return any(c["cell_type"] == "markdown" and "$" in "".join(c["source"]) for c in cells)


def copy_mathjax(site: Path) -> None:
    """Put MathJax 2 (TeX input, HTML-CSS output, its fonts) into ``site``; the SVG output and
    the menu's translations are left out (about 5 MB less)."""
    import jupyter_server_mathjax

    static = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(static, site / MATHJAX, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("SVG", "localization"))


NOTEBOOK_LINK = re.compile(r'href="(\.\./)?(\d\d_[a-z0-9_]+|lab)(?:\.zh)?\.ipynb(#[^"]*)?"')
#: A chapter's link to the FAQ or the glossary, written for JupyterLab (``FAQ.md``; the Chinese
#: chapters reach the one glossary with ``../GLOSSARY.md``): each language's site has its own.
PAGE_LINK = re.compile(r'href="(?:\.\./)?(FAQ|GLOSSARY)\.md"')
HEADING = re.compile(r'<(h[1-6]) id="[^"]*"([^>]*)>(.*?)<a class="anchor-link" href="#[^"]*">',
                     re.S)
TOC_LINK = re.compile(r'<a href="#[^"]*" class="md-nav__link">(\s*<span class="md-ellipsis">'
                      r'\s*)(.*?)(\s*</span>)', re.S)


def toc_label(heading_html: str) -> str:
    """The label mkdocs-jupyter's table of contents gives a heading: its text without its
    ``<code>`` spans (they vanish, words and all), spaces run together. The build matches
    each label back to its heading to restore both the words and the link.

    >>> toc_label("Reducing along: <code>dim=</code>, and what <code>max</code> returns")
    'Reducing along: , and what returns'
    """
    text = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<code>.*?</code>", "", heading_html)))
    return " ".join(text.split())


def anchor(heading_html: str) -> str:
    """JupyterLab's anchor for a heading: its text with spaces turned into ``-`` (the chapters'
    links use these; mkdocs-jupyter's own ids drop non-ASCII letters, so Chinese ones vanish).

    >>> anchor("A first look: <code>x</code>")
    'A-first-look:-x'
    """
    text = html.unescape(re.sub(r"<[^>]+>", "", heading_html)).strip()
    return text.replace(" ", "-")


#: The language links before they are pointed somewhere: ``#dltutor-LANG``. The menu's go to the
#: same page in that language; the page head's go to that language's home, where the theme's
#: script looks for the language's sitemap.xml.
ALTERNATE = re.compile(r'href="#dltutor-([a-z]+)"')
HEAD_ALTERNATE = re.compile(r'<link rel="alternate" href="#dltutor-([a-z]+)"')


def counterpart(name: str, language: str, pages: set[str]) -> str:
    """The page of the other ``language`` that matches the page ``name`` (a path in the site,
    ``zh/06_optimizers/index.html``), or that language's home page when ``pages`` (every
    page's path) has no such page; as a path from the site's root.

    >>> counterpart("zh/06_optimizers/index.html", "en", {"06_optimizers/index.html"})
    '06_optimizers/'
    >>> counterpart("zh/search/index.html", "en", {"06_optimizers/index.html"})
    ''
    """
    own_folder = max((folder for _, folder in LANGUAGES.values() if name.startswith(folder)),
                     key=len)                                  # "" for English, "zh/"
    inside = name.removeprefix(own_folder).removesuffix("index.html")
    wanted = LANGUAGES[language][1] + inside
    return wanted if f"{wanted}index.html" in pages else LANGUAGES[language][1]


def point_language_links(page_html: str, name: str, pages: set[str]) -> str:
    """Point the language links of the page ``name`` (a path in the site) at their pages, as
    paths from it: the menu's at the same page in the other language (``counterpart``), the
    head's at that language's home.

    >>> links = '<link rel="alternate" href="#dltutor-en"> <a href="#dltutor-en">'
    >>> point_language_links(links, "zh/06_optimizers/index.html", {"06_optimizers/index.html"})
    '<link rel="alternate" href="../../"> <a href="../../06_optimizers/">'
    """
    root = "../" * name.count("/")                       # from the page up to the site's root
    page_html = HEAD_ALTERNATE.sub(
        lambda m: f'<link rel="alternate" href="{root}{LANGUAGES[m.group(1)][1]}"', page_html)
    return ALTERNATE.sub(lambda m: f'href="{root}{counterpart(name, m.group(1), pages)}"',
                         page_html)


def _headings_by_label(page_html: str) -> dict[str, str]:
    """Each heading's HTML (inline code included) by its table-of-contents label."""
    return {toc_label(m.group(3)): m.group(3) for m in HEADING.finditer(page_html)}


def _toc_entry(headings: dict[str, str], link: re.Match) -> str:
    """A table of contents link pointing at its heading's anchor and showing its whole text:
    mkdocs-jupyter dropped the heading's code spans from both (``Evaluate under`` for
    ``Evaluate under <code>no_grad()</code>``), so the link pointed nowhere."""
    heading = headings.get(toc_label(link.group(2)), link.group(2))
    return (f'<a href="#{html.escape(anchor(heading))}" class="md-nav__link">{link.group(1)}'
            f'{heading}{link.group(3)}')


CELL_START = re.compile(r'<div class="jp-Cell ')
DIV_TAG = re.compile(r"<(/?)div\b[^>]*>")
HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1>", re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def _element_end(page_html: str, start: int) -> int:
    """Where the ``<div>`` that opens at ``start`` closes (the index after its ``</div>``)."""
    depth = 0
    for tag in DIV_TAG.finditer(page_html, start):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return tag.end()
    return len(page_html)


def _top_level_cells(page_html: str) -> list[tuple[int, int]]:
    """(start, end) of each notebook cell of a page (a cell nested in a cell is part of it)."""
    cells, position = [], 0
    for match in CELL_START.finditer(page_html):
        if match.start() >= position:
            position = _element_end(page_html, match.start())
            cells.append((match.start(), position))
    return cells


def _as_markdown(cell_html: str) -> tuple[str, str]:
    """A rendered cell as (cell type, its first heading written as Markdown) for deeper.py."""
    heading = HTML_HEADING.search(cell_html)
    text = f"{'#' * int(heading.group(1))} {html.unescape(TAG.sub('', heading.group(2)))}" \
        if heading else ""
    return ("markdown" if "jp-MarkdownCell" in cell_html[:200] else "code", text)


def fold_deeper_sections(page_html: str) -> str:
    """Fold each "Going deeper" section of a chapter page into ``<details class="deeper">``,
    its heading cell the visible ``<summary>`` (see tools/deeper.py).

    >>> cell = '<div class="jp-Cell jp-{}Cell">{}</div>'
    >>> page = "".join([cell.format("Markdown", "<h2>Groups</h2>"),
    ...                 cell.format("Markdown", "<h3>Going deeper: why</h3>"),
    ...                 cell.format("Code", "y = 2"), cell.format("Markdown", "<h2>Next</h2>")])
    >>> print(fold_deeper_sections(page).replace("><", ">\\n<"))
    <div class="jp-Cell jp-MarkdownCell">
    <h2>Groups</h2>
    </div>
    <details class="deeper">
    <summary>
    <div class="jp-Cell jp-MarkdownCell">
    <h3>Going deeper: why</h3>
    </div>
    </summary>
    <div class="jp-Cell jp-CodeCell">y = 2</div>
    </details>
    <div class="jp-Cell jp-MarkdownCell">
    <h2>Next</h2>
    </div>

    Two sections in a row fold into two boxes:

    >>> page = "".join(cell.format("Markdown", f"<h3>Going deeper: {topic}</h3>")
    ...                + cell.format("Code", topic) for topic in ("a", "b"))
    >>> fold_deeper_sections(page).count('<details class="deeper">')
    2
    """
    cells = _top_level_cells(page_html)
    kinds = [_as_markdown(page_html[a:b]) for a, b in cells]
    inside = deeper.in_deeper_section(kinds)
    # Two sections in a row are two boxes: each heading cell opens its own.
    heads = [deeper.opens_deeper_section(*kind) for kind in kinds] + [True]
    pieces, done = [], 0
    for index, ((start, end), folded) in enumerate(zip(cells, inside)):
        opens = heads[index]
        closes = folded and (index + 1 == len(cells) or not inside[index + 1] or heads[index + 1])
        pieces.append(page_html[done:start])
        cell = page_html[start:end]
        pieces.append(f'<details class="deeper"><summary>{cell}</summary>' if opens else cell)
        pieces.append("</details>" if closes else "")
        done = end
    pieces.append(page_html[done:])
    return "".join(pieces)


#: A twin cell's tag, as nbconvert writes it into the cell's classes.
TWIN_CLASS = re.compile(r"\bcelltag_(twin-[a-z]+)\b")
#: The tag labels mkdocs-jupyter puts above a tagged cell's code.
CELL_TOOLBAR = re.compile(r'<div class="celltoolbar">')


def _twin_tag(cell_html: str) -> str | None:
    """The twin tag (``twin-torch``) of a rendered cell, from its opening tag, or None."""
    match = TWIN_CLASS.search(cell_html[:cell_html.index(">")])
    return match.group(1) if match and match.group(1) in TWIN_TAGS else None


def _without_toolbar(cell_html: str) -> str:
    """A twin cell without the label that shows its tag: its tab names it."""
    match = CELL_TOOLBAR.search(cell_html)
    if match is None:
        return cell_html
    return cell_html[:match.start()] + cell_html[_element_end(cell_html, match.start()):]


def _tab_set(number: int, cells: list[tuple[str, str]]) -> str:
    """Material's content tabs (the markup of ``pymdownx.tabbed``'s alternate style, which the
    theme's style sheet and script know) for ``cells``, ``(label, HTML)`` pairs: the first tab
    open. ``number`` makes the radio buttons' ids unique on the page."""
    ids = [f"__twins_{number}_{index}" for index in range(1, len(cells) + 1)]
    inputs = "".join(f'<input {"checked " if index == 0 else ""}id="{id_}" '
                     f'name="__twins_{number}" type="radio">' for index, id_ in enumerate(ids))
    labels = "".join(f'<label for="{id_}">{label}</label>' for id_, (label, _) in zip(ids, cells))
    blocks = "".join(f'<div class="tabbed-block">{cell}</div>' for _, cell in cells)
    return (f'<div class="tabbed-set tabbed-alternate twins" data-tabs="{number}:{len(cells)}">'
            f'{inputs}<div class="tabbed-labels">{labels}</div>'
            f'<div class="tabbed-content">{blocks}</div></div>')


def make_twin_tabs(page_html: str) -> str:
    """Put each kit code cell that its twins follow, and those twins, into one set of tabs
    (``dltutor | PyTorch | Paddle``), the kit's open, each tab the cell's code and outputs.

    >>> cell = '<div class="jp-Cell jp-CodeCell{}">{}</div>'
    >>> page = "".join([cell.format("", "kit = 1"), cell.format(" celltag_twin-torch", "t = 1"),
    ...                 cell.format(" celltag_twin-paddle", "p = 1"), cell.format("", "x = 2")])
    >>> print(make_twin_tabs(page).replace("><", ">\\n<"))
    <div class="tabbed-set tabbed-alternate twins" data-tabs="1:3">
    <input checked id="__twins_1_1" name="__twins_1" type="radio">
    <input id="__twins_1_2" name="__twins_1" type="radio">
    <input id="__twins_1_3" name="__twins_1" type="radio">
    <div class="tabbed-labels">
    <label for="__twins_1_1">dltutor</label>
    <label for="__twins_1_2">PyTorch</label>
    <label for="__twins_1_3">Paddle</label>
    </div>
    <div class="tabbed-content">
    <div class="tabbed-block">
    <div class="jp-Cell jp-CodeCell">kit = 1</div>
    </div>
    <div class="tabbed-block">
    <div class="jp-Cell jp-CodeCell celltag_twin-torch">t = 1</div>
    </div>
    <div class="tabbed-block">
    <div class="jp-Cell jp-CodeCell celltag_twin-paddle">p = 1</div>
    </div>
    </div>
    </div>
    <div class="jp-Cell jp-CodeCell">x = 2</div>

    Two twins of one framework share its tab:

    >>> two = cell.format("", "kit = 1") + cell.format(" celltag_twin-torch", "import torch") * 2
    >>> make_twin_tabs(two).count("<label"), make_twin_tabs(two).count("import torch")
    (2, 2)

    A page without twins is left as it was:

    >>> make_twin_tabs(cell.format("", "kit = 1")) == cell.format("", "kit = 1")
    True
    """
    cells = _top_level_cells(page_html)
    tags = [_twin_tag(page_html[a:b]) for a, b in cells]
    pieces, done, number = [], 0, 0
    for first, last in _twin_runs(page_html, cells, tags):
        kit = page_html[slice(*cells[first])]
        pieces.append(page_html[done:cells[first][0]])
        if last > first:
            number += 1
            tabs = [(KIT_TAB, kit)]
            for i in range(first + 1, last + 1):
                label, twin = TWIN_TAGS[tags[i]], _without_toolbar(page_html[slice(*cells[i])])
                if tabs[-1][0] == label:       # two PyTorch twins of one cell: one tab
                    tabs[-1] = (label, tabs[-1][1] + twin)
                else:
                    tabs.append((label, twin))
            pieces.append(_tab_set(number, tabs))
        else:                  # a lone cell; a twin with no kit cell above loses its tag label
            pieces.append(_without_toolbar(kit) if tags[first] else kit)
        done = cells[last][1]
    pieces.append(page_html[done:])
    return "".join(pieces)


def _twin_runs(page_html: str, cells: list[tuple[int, int]],
               tags: list[str | None]) -> list[tuple[int, int]]:
    """The page's ``cells`` as runs ``(first, last)`` (indexes into ``cells``): a kit code cell
    with the twins right after it (``tags``: each cell's twin tag or None; nothing but space
    between them), or a cell on its own (``first == last``)."""
    runs, first = [], 0
    while first < len(cells):
        last = first
        if tags[first] is None and "jp-CodeCell" in page_html[cells[first][0]:].split(">", 1)[0]:
            while (last + 1 < len(cells) and tags[last + 1]
                   and not page_html[cells[last][1]:cells[last + 1][0]].strip()):
                last += 1
        runs.append((first, last))
        first = last + 1
    return runs


def fix_pages(site: Path, with_formulas: set[str]) -> None:
    """Give the chapter headings JupyterLab's anchors (and the page's table of contents links
    to match), fold the "Going deeper" sections, make each kit cell and its twins one set of
    tabs, point JupyterLab-style chapter, FAQ and glossary links at the pages, point the
    language menu at the same page in the other language, and give the pages in ``with_formulas``
    (``"03_initialization/index.html"``) the site's MathJax in place of the empty loader
    mkdocs-jupyter leaves behind (other pages lose it)."""
    pages = {page.relative_to(site).as_posix() for page in site.rglob("*.html")
             if MATHJAX not in page.as_posix()}
    for name in pages:
        page = site / name
        text = page.read_text(encoding="utf-8")
        fixed = HEADING.sub(lambda m: f'<{m.group(1)} id="{html.escape(anchor(m.group(3)))}"'
                                      f'{m.group(2)}>{m.group(3)}<a class="anchor-link" '
                                      f'href="#{html.escape(anchor(m.group(3)))}">', text)
        if fixed != text:            # a notebook page: its table of contents follows suit
            fixed = TOC_LINK.sub(functools.partial(_toc_entry, _headings_by_label(fixed)), fixed)
            # tabs after folding: a tab set is then made inside its section's <details>
            fixed = make_twin_tabs(fold_deeper_sections(fixed))
        # a chapter page is NAME/index.html: its sibling chapters are one level up
        fixed = NOTEBOOK_LINK.sub(lambda m: f'href="../{m.group(1) or ""}{m.group(2)}/'
                                            f'{m.group(3) or ""}"', fixed)
        fixed = PAGE_LINK.sub(lambda m: f'href="../{m.group(1)}/"', fixed)   # (chapter pages)
        fixed = point_language_links(fixed, name, pages)
        root = "../" * name.count("/")
        fixed = fixed.replace(EMPTY_MATHJAX, MATHJAX_LOADER.format(root=root)
                              if name in with_formulas else "")
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def tidy_search_index(site: Path, notebooks: set[str]) -> None:
    """Point each section of the pages in ``notebooks`` (``"06_optimizers/"``) that the search
    finds at its heading's anchor (the JupyterLab-style one
    ``fix_pages`` gives it: mkdocs-jupyter's Chinese anchors are empty, so those sections had
    none), and drop the "¶" of nbconvert's heading links and the word breaks jieba put into the
    titles the search shows."""
    index_file = site / "search" / "search_index.json"
    index = json.loads(index_file.read_text(encoding="utf-8"))
    seen_pages = set()
    for doc in index["docs"]:
        page = doc["location"].split("#")[0]
        doc["title"] = doc["title"].replace("\u200b", "").rstrip("¶ ")
        if page in seen_pages and page in notebooks:   # a page's first entry is the page
            doc["location"] = f"{page}#{anchor(doc['title'])}"
        seen_pages.add(page)
    index_file.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")


def config(language: str, docs: Path, site: Path) -> dict:
    """The MkDocs configuration of one language's site: the Material theme in that language
    without web fonts (the site loads nothing from outside), search (Chinese words are found
    with jieba), mkdocs-jupyter for the notebooks, the navigation built from the chapters that
    exist, and the language menu."""
    home, chapters, lab, faq, glossary = TEXT[language]["nav"]
    return {
        "site_name": "dltutor",
        "docs_dir": str(docs),
        "site_dir": str(site),
        "use_directory_urls": True,
        "theme": {"name": "material", "font": False, "language": language,
                  "features": ["navigation.sections", "search.highlight"]},
        "extra_css": [CSS],
        "extra": {"alternate": [{"name": "English", "link": "#dltutor-en", "lang": "en"},
                                {"name": "中文", "link": "#dltutor-zh", "lang": "zh"}]},
        "plugins": [{"search": {"lang": language}}, {"mkdocs-jupyter": {
            "include_requirejs": False, "ignore_h1_titles": True,
            # beside the staged pages, not in the clone's root, one a language and a staging
            # folder: after a build mkdocs-jupyter deletes the cached pages that build did not
            # use, so builds sharing a cache (English and Chinese, two at once) emptied it
            "cache_dir": str(docs.parent / f"mkdocs-jupyter-cache-{language}")}}],
        "hooks": [str(Path(__file__).resolve())],        # on_page_content etc., at the end
        "nav": [{home: "index.md"},
                {chapters: [{f"{name[:2]} {title}": name}
                            for name, title in _chapter_titles(docs)]},
                {lab: "lab.ipynb"}, {faq: "FAQ.md"}, {glossary: "GLOSSARY.md"}],
    }


#: ``python -m mkdocs``, with jieba (the Chinese search's word splitter) told to keep its
#: progress lines to itself.
MKDOCS = """
import logging
try:
    import jieba
    jieba.setLogLevel(logging.WARNING)
except ImportError:      # the Chinese search then matches whole runs of characters only
    pass
from mkdocs.__main__ import cli
cli()
"""


#: The languages' names in the progress lines.
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}

# ---- The MkDocs hooks: MkDocs imports this file (``hooks`` in ``config``) and calls these. ----

#: What a code cell shows besides its code, as mkdocs-jupyter writes it: the prompts
#: (``In [6]:``), the copy button (whose hidden notice says ``Copied!``) and the hidden copy of
#: the code that the button copies (the search would hold the code twice).
SEARCH_NOISE = re.compile(r'<div class="((?:jp-InputPrompt|jp-OutputPrompt|zeroclipboard-container'
                          r'|clipboard-copy-txt)\b[^"]*)"')
#: Material's search leaves out of its index an element marked so, then removes the mark from
#: the page: the page itself does not change.
NOT_SEARCHED = 'data-search-exclude="true"'
#: The progress bar's label, from ``build`` to the MkDocs process it starts.
PROGRESS_LABEL = "DLTUTOR_SITE_PROGRESS"
_progress = None           # the bar of the build under way, in the MkDocs process


def mark_search_noise(page_html: str) -> str:
    """``page_html`` with the prompts and copy buttons of its code cells marked for the search to
    leave out (``SEARCH_NOISE``): search results showed "In [6]: Copied!" before the code.

    >>> mark_search_noise('<div class="jp-InputPrompt jp-InputArea-prompt">In [6]:</div>')
    '<div data-search-exclude="true" class="jp-InputPrompt jp-InputArea-prompt">In [6]:</div>'
    >>> mark_search_noise('<div class="highlight-ipynb hl-python"><pre>x = 1</pre></div>')
    '<div class="highlight-ipynb hl-python"><pre>x = 1</pre></div>'
    """
    return SEARCH_NOISE.sub(rf'<div {NOT_SEARCHED} class="\1"', page_html)


def on_files(files, **_):
    """MkDocs hook: a progress bar on stderr, one step for each page to render."""
    from tqdm import tqdm

    global _progress
    _progress = tqdm(total=len(files.documentation_pages()), unit="page", file=sys.stderr,
                     desc=os.environ.get(PROGRESS_LABEL, "site"))
    return files


def on_page_content(content, **_):
    """MkDocs hook, after a page is rendered: mark its search noise, advance the bar."""
    if _progress is not None:
        _progress.update()
    return mark_search_noise(content)


def on_post_build(**_):
    """MkDocs hook: the pages are written; the bar ends."""
    if _progress is not None:
        _progress.close()


def _say(line: str) -> None:
    """One progress line: a build takes a minute or two, and MkDocs itself says nothing."""
    print(f"site: {line}", flush=True)


def build(site: Path, repo: str | None = None, staging: Path = STAGE) -> Path:
    """Stage (into ``staging``) and build each language with MkDocs into ``site`` (English
    first: its build empties ``site``), fix the pages; returns ``site``. ``repo``
    (``OWNER/NAME`` on GitHub) adds the Binder links. Two builds at once need two ``staging``
    folders (the tests give each its own). Says what it is doing, a line a stage, and shows
    MkDocs' progress (a bar a language, on stderr)."""
    if repo is not None and not REPOSITORY.fullmatch(repo):
        raise SystemExit(f"--repo {repo!r} is not a GitHub repository: give OWNER/NAME, "
                         "e.g. --repo someone/dltutor (or leave it out for no Binder links)")
    with_formulas = set()
    for language, (_, folder) in LANGUAGES.items():
        started = time.monotonic()
        docs = stage(language, repo, staging)
        _say(f"{LANGUAGE_NAMES[language]}: rendering {len(list(docs.glob('*.ipynb')))} notebooks, "
             f"the FAQ and the glossary with MkDocs into {site / folder} ...")
        config_file = staging / f"mkdocs-{language}.yml"
        config_file.write_text(json.dumps(config(language, docs, site / folder),
                                          ensure_ascii=False, indent=1),
                               encoding="utf-8")   # JSON is YAML, and needs no YAML library
        subprocess.run([sys.executable, "-c", MKDOCS, "build", "--quiet", "--config-file",
                        str(config_file)], check=True, cwd=ROOT,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                            PROGRESS_LABEL: LANGUAGE_NAMES[language]})
        tidy_search_index(site / folder, {f"{path.stem}/" for path in docs.glob("*.ipynb")})
        with_formulas |= {f"{folder}{path.stem}/index.html"
                          for path in docs.glob("*.ipynb") if has_formulas(path)}
        _say(f"{LANGUAGE_NAMES[language]}: done in {time.monotonic() - started:.0f} s")
    _say("adding MathJax, pointing links and anchors at the pages...")
    if with_formulas:
        copy_mathjax(site)
    fix_pages(site, with_formulas)
    return site


def main(args: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Build the chapters as a static website.")
    parser.add_argument("folder", nargs="?", default=str(ROOT / "site"),
                        help="where the site goes (default: site/)")
    parser.add_argument("--repo", help="the kit's GitHub repository, OWNER/NAME: adds Binder "
                                       "links to every page")
    options = parser.parse_args(args)
    started = time.monotonic()
    site = build(Path(options.folder).resolve(), options.repo)
    print(f"site written to {site} in {time.monotonic() - started:.0f} s "
          f"(to browse it: python3 -m http.server -d {site})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
