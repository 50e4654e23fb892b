"""The chapters as a website: ``make site`` builds it, and Chromium reads it.

The site is built into a temporary folder (``tools/build_site.py``) and served on 127.0.0.1.
Chromium then opens every chapter page of both languages, the lab pages, the FAQ indexes, the
glossary and the home pages, and checks from the pages themselves: each renders its headings
and its images, no page requests anything from outside the site, every internal link answers,
every FAQ link lands on a heading that exists, formulas are typeset, and the Chinese site is
Chinese throughout (navigation, the theme's words, search) with a language menu that keeps the
page. Nothing leaves the machine, formulas (MathJax) and search (its worker) included, and the
search index holds the code cells' code, not their prompts ("In [6]:") or copy buttons
("Copied!"). Every chapter says how to get the kit (it is not on PyPI) and run it, no page shows the
cells' tags, and plots get the text's whole width. A screenshot of a chapter in each language
goes to ``test-artifacts/``. A kit cell and its PyTorch and Paddle twins (issue 50) are
one set of tabs (tested on a one-chapter site with known twins).
"""
from __future__ import annotations

import functools
import html
import http.server
import json
import re
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from browser_helpers import ARTIFACTS, CHROMIUM_ARGS, find_chromium

pytest.importorskip("mkdocs_jupyter", reason="the site extra: pip install -e '.[site]'")
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = find_chromium()


def notebook_of(path: str) -> str:
    """The notebook (from the repository's root) that the site page ``path`` shows: a Chinese
    page zh/NN_name/ shows notebooks/zh/NN_name.zh.ipynb."""
    name = path.rstrip("/")
    if name.startswith("zh/"):
        return f"notebooks/{name}.zh.ipynb"
    return f"notebooks/{name}.ipynb"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site, served on 127.0.0.1; yields its base URL."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    # Its own staging folder: with pytest -n 2 two workers may build at once.
    scratch = tmp_path_factory.mktemp("site")
    folder = build_site.build(scratch / "site", repo="someone/dltutor", staging=scratch / "stage")
    server, url = serve(folder)
    yield url
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without a log line a request (hundreds a test)."""

    def log_message(self, *args) -> None:
        pass


def serve(folder: Path):
    """Serve ``folder`` on 127.0.0.1 in a thread; returns the server and its base URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def pages() -> list[str]:
    """The site paths Chromium opens: every notebook, both languages, and the index pages."""
    names = [p.stem for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    return (["", "FAQ/", "GLOSSARY/", "zh/", "zh/FAQ/", "zh/GLOSSARY/"]
            + [f"{n}/" for n in names] + [f"zh/{n}/" for n in names])


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Chromium is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


def test_every_page_renders_and_stays_inside_the_site(site, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside, internal, failed = [], set(), []
    page.on("request", lambda r: outside.append(r.url)
            if not r.url.startswith((site, "data:", "blob:", "about:")) else None)
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for path in pages():
        page.goto(site + path, wait_until="networkidle")
        assert page.locator("h1").count() >= 1, f"{path} shows no title"
        assert page.locator("article h2, article h1").count() >= 1, path
        broken = page.evaluate("""() => [...document.querySelectorAll('article img')]
            .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)""")
        assert not broken, f"{path}: images that did not load: {broken[:3]}"
        for href in page.evaluate("() => [...document.querySelectorAll('a[href]')]"
                                  ".map(a => a.href)"):
            if href.startswith(site):
                internal.add(href.split("#")[0])
        if path in ("06_optimizers/", "zh/06_optimizers/"):
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"site_{path.strip('/').replace('/', '_')}.png"))
    assert not outside, f"requests outside the site: {sorted(set(outside))[:5]}"
    assert not failed, f"requests inside the site that failed: {sorted(set(failed))[:5]}"
    for url in sorted(internal):
        with urllib.request.urlopen(url) as response:           # raises on 404
            assert response.status == 200, url
    page.close()


@pytest.mark.parametrize("faq", ["FAQ/", "zh/FAQ/"])
def test_every_faq_link_lands_on_a_heading(site, browser, faq):
    page = browser.new_page()
    page.goto(site + faq)
    links = page.evaluate("() => [...document.querySelectorAll('article td a[href*=\"#\"]')]"
                          ".map(a => a.href)")
    from ..notebooks.test_notebooks import FAQ_IDS

    assert len(links) >= len(FAQ_IDS), links[:3]          # one or more per question
    for link in links:
        page.goto(link)
        fragment = urllib.parse.unquote(link.split("#", 1)[1])
        assert page.evaluate("id => !!document.getElementById(id)", fragment), link
    page.close()


class Requests:
    """Every request a browser context makes (its pages' and their workers'), and those that
    leave the site."""

    def __init__(self, context, site: str) -> None:
        self.seen: list[str] = []
        self.site = site
        context.on("request", lambda request: self.seen.append(request.url))

    def outside(self) -> list[str]:
        return sorted({url for url in self.seen
                       if not url.startswith((self.site, "data:", "blob:", "about:"))})


@pytest.mark.parametrize("chapter", ["03_initialization/", "zh/03_initialization/"])
def test_formulas_are_typeset_offline(site, browser, chapter):
    """Chapter 03's formulas come out as mathematics (the site's own MathJax, with its fonts),
    not as TeX, and nothing they load leaves the site."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests = Requests(context, site)
    page = context.new_page()
    page.goto(site + chapter, wait_until="networkidle")
    page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                           " && document.querySelectorAll('.MathJax').length > 0")
    shown = page.evaluate("() => document.querySelector('article').innerText")
    assert "\\sqrt" not in shown and "\\frac" not in shown, "TeX source is shown as text"
    assert page.locator(".MathJax").count() >= 20            # ch03 has about 45 formulas
    formula = page.locator(".MathJax_Display").first
    formula.scroll_into_view_if_needed()
    assert formula.bounding_box()["height"] > 20             # a displayed fraction, drawn tall
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("() => window.scrollBy(0, -200)")
    page.screenshot(path=str(ARTIFACTS / f"site_formulas_{chapter.split('/')[0]}.png"))
    page.wait_for_load_state("networkidle")
    assert any("/assets/mathjax/fonts/" in url for url in requests.seen), "no MathJax font seen"
    assert not requests.outside(), f"requests outside the site: {requests.outside()[:5]}"
    context.close()


def test_the_chinese_site_speaks_chinese_and_the_menu_keeps_the_page(site, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(site + "zh/06_optimizers/", wait_until="networkidle")
    nav = page.locator("nav.md-nav--primary").inner_text()
    assert "参数初始化" in nav and "常见问题" in nav
    assert "Initializing parameters" not in nav and "Chapters" not in nav, nav[:300]
    assert page.get_attribute("html", "lang") == "zh"
    assert page.get_attribute("input.md-search__input", "placeholder") == "搜索"
    english = page.locator('a.md-select__link[hreflang="en"]').get_attribute("href")
    page.goto(urllib.parse.urljoin(page.url, english), wait_until="load")
    assert page.url == site + "06_optimizers/"
    assert page.get_attribute("html", "lang") == "en"
    chinese = page.locator('a.md-select__link[hreflang="zh"]').get_attribute("href")
    assert urllib.parse.urljoin(page.url, chinese) == site + "zh/06_optimizers/"
    page.close()


@pytest.mark.parametrize("home", ["", "zh/"])
def test_every_search_result_lands_on_its_heading(site, home):
    """Each section the search index holds links to an id that exists on its page (the Chinese
    chapters' sections had no anchor at all before the build gave them JupyterLab's)."""
    import html
    import json
    import re

    with urllib.request.urlopen(site + home + "search/search_index.json") as response:
        docs = json.load(response)["docs"]
    sections = [d["location"] for d in docs if "#" in d["location"]]
    assert len(sections) > 100, "the chapters' sections are not in the index"
    ids: dict[str, set] = {}
    for location in sections:
        page, fragment = location.split("#", 1)
        if page not in ids:
            with urllib.request.urlopen(site + home + page) as response:
                text = response.read().decode("utf-8")
            ids[page] = {html.unescape(i) for i in re.findall(r' id="([^"]*)"', text)}
        assert fragment in ids[page], f"{home}{location}: no such heading"
    titles = [d["title"] for d in docs]
    assert not [t for t in titles if "\u00b6" in t or "\u200b" in t], "titles keep ¶ or word breaks"


def test_every_table_of_contents_link_lands_on_its_heading_and_keeps_its_code(site):
    """mkdocs-jupyter drops a heading's inline code from the page's table of contents, words
    and all ("Reducing along a dimension: , and what returns"), and the link made from that
    text pointed nowhere (20 of 696 did); the build puts both back."""
    labels = []
    for path in pages():
        with urllib.request.urlopen(site + path) as response:
            text = response.read().decode("utf-8")
        ids = {html.unescape(i) for i in re.findall(r'<h[1-6] id="([^"]*)"', text)}
        for href, label in re.findall(r'<a href="#([^"]*)" class="md-nav__link">\s*'
                                      r'<span class="md-ellipsis">\s*(.*?)\s*</span>', text, re.S):
            assert html.unescape(href) in ids, f"{path}: the contents link #{href} has no heading"
            labels.append(label)
    assert "Reducing along a dimension: <code>dim=</code>, and what <code>max</code> returns" in labels


@pytest.mark.parametrize("home, query, expected", [("", "weight decay", "06_optimizers"),
                                                   ("zh/", "学习率", "07_learning_rates")])
def test_search_finds_the_chapter(site, browser, home, query, expected):
    """Search works offline in both languages; Chinese is split into words (jieba) when the
    index is built, so a word inside a sentence is found."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests = Requests(context, site)
    page = context.new_page()
    page.goto(site + home, wait_until="networkidle")
    page.locator("input.md-search__input").click()
    # the index is built in a worker when the page opens: wait until search says it is ready
    # (on a busy machine that takes a while), then ask
    ready = {"": "Type to start searching", "zh/": "键入以开始搜索"}[home]
    page.wait_for_function("text => document.querySelector('.md-search-result__meta')"
                           ".textContent.trim() === text", arg=ready, timeout=120_000)
    # The search reads the box on a key press: Playwright types Chinese characters without
    # one (as text an input method inserts), so a key press follows, as a learner's would.
    page.locator("input.md-search__input").fill(query)
    page.keyboard.press("End")
    page.wait_for_selector(".md-search-result__item", timeout=60_000)
    found = page.evaluate("() => [...document.querySelectorAll('.md-search-result__item a')]"
                          ".map(a => a.href)")
    assert any(f"{home}{expected}/" in href for href in found), found[:5]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"site_search_{home.strip('/') or 'en'}.png"))
    # the search worker's requests are seen too (it fetched the index), and none left the site
    assert f"{site}{home}search/search_index.json" in requests.seen, requests.seen[-5:]
    assert not requests.outside(), f"requests outside the site: {requests.outside()[:5]}"
    shown = page.locator(".md-search-result").inner_text()
    assert "Copied!" not in shown and not PROMPT.search(shown), shown[:300]
    context.close()


#: A code cell's prompt, as mkdocs-jupyter writes it ("In [6]:", "Out [3]:", with a no-break
#: space or none).
PROMPT = re.compile(r"\b(In|Out)\s?\[\s*\d*\s*\]:")


@pytest.mark.parametrize("home", ["", "zh/"])
def test_the_search_index_holds_code_without_prompts_or_copy_buttons(site, home):
    """A search result showed "In [6]: Copied!" before the code, and the code twice: the
    index took in each code cell's prompt, its copy button's notice and the hidden copy of the
    code the button copies. Now it holds each line of code once."""
    assert PROMPT.search("In\u00a0[6]: Copied!") and PROMPT.search("Out[12]:")  # the check bites
    with urllib.request.urlopen(site + home + "search/search_index.json") as response:
        docs = json.load(response)["docs"]
    for doc in docs:
        assert "Copied!" not in doc["text"], f"{doc['location']}: {doc['text'][:200]}"
        found = PROMPT.search(doc["text"])
        assert not found, f"{doc['location']}: {doc['text'][max(found.start() - 80, 0):][:200]}"
    chapter = "01_tensors_autograd/"
    text = " ".join(d["text"] for d in docs if d["location"].split("#")[0] == chapter)
    line = "np.set_printoptions(precision=4, suppress=True)"
    in_code = sum("".join(c["source"]).count(line) for c in json.loads(
        (ROOT / notebook_of(home + chapter)).read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code")
    assert in_code >= 1 and text.count(line) == in_code, (text.count(line), in_code)


def test_every_chapter_page_says_how_to_run_it(site, browser):
    """With --repo, each chapter links to itself on Binder (JupyterLab) and the lab page to the
    Voila app; every chapter says how to get the kit from its GitHub repository (pip from git,
    or a clone) and run it locally."""
    page = browser.new_page()
    for path in pages():
        name = path.rstrip("/").split("/")[-1]
        if not name[:2].isdigit() and name != "lab":
            continue
        page.goto(site + path)
        binder = page.locator('article a[href^="https://mybinder.org/"]').first.get_attribute("href")
        notebook = notebook_of(path)
        view = "voila/render" if name == "lab" else "lab/tree"
        assert binder == ("https://mybinder.org/v2/gh/someone/dltutor/HEAD?urlpath="
                          f"{view}/{notebook}"), (path, binder)
        text = page.locator("article").inner_text()
        assert "dltutor lab" in text, path
        if name != "lab":
            assert "pip install git+https://github.com/someone/dltutor" in text, path
            assert "make lab" in text, path
            assert page.locator('article a[href="https://github.com/someone/dltutor"]').count(), path
    page.close()


#: A command that would fetch dltutor from PyPI, where it is not published; ``pip install
#: dist/dltutor-0.1.0-py3-none-any.whl`` and ``pip install git+https://...`` are fine.
PYPI_INSTALL = re.compile(r"pip install (-U |--upgrade )?[\"']?dltutor(?![-\w./])")


def test_no_page_tells_the_reader_to_pip_install_dltutor_from_pypi(site):
    """dltutor is not on PyPI: no page (with or without --repo) says ``pip install dltutor``;
    each chapter's run line names a way that works (a clone, the wheel, or pip from git)."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    assert PYPI_INSTALL.search("run `pip install dltutor` first")              # the check bites
    assert PYPI_INSTALL.search("pip install dltutor[gpu]")
    assert PYPI_INSTALL.search('pip install "dltutor[gpu]"')
    for language, folder in (("en", ""), ("zh", "zh/")):
        suffix = ".zh.ipynb" if language == "zh" else ".ipynb"
        for notebook in (f"{folder}06_optimizers{suffix}", f"{folder}lab{suffix}"):
            for repo in (None, "someone/dltutor"):
                line = build_site.run_line(language, notebook, repo)
                assert not PYPI_INSTALL.search(line), line
                if "/lab." not in "/" + notebook:
                    assert "PyPI" in line and "make lab" in line, line
                    assert ("dist/dltutor-*.whl" if repo is None else "git+https://github.com/"
                            "someone/dltutor") in line, line
    for path in pages():
        with urllib.request.urlopen(site + path) as response:
            text = html.unescape(re.sub(r"<[^>]+>", "", response.read().decode("utf-8")))
        found = PYPI_INSTALL.search(text)
        assert not found, f"{path} says {text[found.start() - 60:found.end() + 20]!r}"


def _notebook_tags(notebook: Path) -> tuple[set[str], str]:
    """The tags of the cells of ``notebook``, and the text of its cells without their metadata
    (sources and outputs: what its page may show)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    tags = {tag for cell in cells for tag in cell["metadata"].get("tags", [])}
    return tags, json.dumps([{k: v for k, v in c.items() if k != "metadata"} for c in cells],
                            ensure_ascii=False)


def test_no_page_shows_the_cells_tags(site, browser):
    """The cells' tags (claim-torch-..., nbval-ignore-output, raises-exception, language, ...)
    are for the tests: mkdocs-jupyter showed a code cell's tags as labels above it. No page has
    such a label, and no tag's name is on a page more often than in its notebook's own text
    (chapters 10 and 11 name ``nbval-ignore-output`` in their prose, on purpose)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    all_tags = set()
    for path in pages():
        notebook = ROOT / notebook_of(path)
        if not notebook.exists():
            continue
        tags, own_text = _notebook_tags(notebook)
        all_tags |= tags
        page.goto(site + path)
        assert page.locator("article .celltoolbar, article .cell-tag").count() == 0, path
        shown = page.locator("article").inner_text()
        extra = {t: shown.count(t) for t in tags if shown.count(t) > own_text.count(t)}
        assert not extra, f"{path} shows cell tags: {extra}"
    assert {"nbval-ignore-output", "raises-exception", "language"} <= all_tags, sorted(all_tags)[:5]
    assert any(t.startswith("claim-torch-") for t in all_tags)
    page.goto(site + "lab/")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site_lab.png"))
    page.close()


@pytest.mark.parametrize("chapter", ["09_clipping/", "zh/09_clipping/"])
def test_plots_get_the_whole_width_of_the_text(site, browser, chapter):
    """A plot wider than the text column is scaled to the column, not to the column less the
    empty prompt column beside outputs (64 px of about 690 at 1280 px wide): its words stay as
    large as the column allows. A plot narrower than the column keeps its own size."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(site + chapter, wait_until="networkidle")
    sizes = page.evaluate("""() => [...document.querySelectorAll('article .jp-RenderedImage img')]
        .map(i => [i.naturalWidth, i.getBoundingClientRect().width,
                   i.closest('.jp-Notebook').getBoundingClientRect().width])""")
    assert len(sizes) >= 3, sizes
    for natural, rendered, column in sizes:
        assert rendered == pytest.approx(min(natural, column), abs=40), (natural, rendered, column)
    page.close()


def test_without_a_repository_there_is_no_binder_link_and_a_bad_one_is_refused():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    assert "mybinder" not in build_site.run_line("zh", "zh/06_optimizers.zh.ipynb", None)
    with pytest.raises(SystemExit, match="OWNER/NAME"):
        build_site.build(ROOT / "build" / "never", repo="https://github.com/someone/dltutor")
    assert not (ROOT / "build" / "never").exists()


@pytest.mark.parametrize("path, heading", [
    ("07_learning_rates/", "Going deeper: the same optimizer in PyTorch and in Paddle"),
    ("zh/07_learning_rates/", "深入一步：同一个优化器在 PyTorch 和 Paddle 中")])
def test_a_going_deeper_section_is_folded_until_the_reader_opens_it(site, browser, path,
                                                                    heading):
    """Issue 49: internals and version notes sit in "Going deeper" sections, folded on the
    page (tools/deeper.py); the heading stays visible, one click shows the rest."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(site + path, wait_until="networkidle")
    block = page.locator("details.deeper").filter(has_text=heading)
    assert block.count() == 1 and not block.evaluate("d => d.open")
    inside = block.locator("pre", has_text="class LionLite(torch.optim.Optimizer)")
    assert block.locator("summary h3").is_visible() and not inside.is_visible()
    block.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"site_deeper_closed_{path.split('/')[0]}.png"))
    block.locator("summary").click()
    assert inside.is_visible()
    block.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"site_deeper_{path.split('/')[0]}.png"))
    page.close()


# ---- Issue 50: a kit cell and its PyTorch and Paddle twins are tabs on the page. ----

#: The chapter the twin tests copy, and the kit cells (by their code's first lines) that get twins
#: there: one on the core path, one inside the "Going deeper: NaN ..." section.
TWIN_CHAPTER = "07_learning_rates"
KIT_CELLS = {"main": "net = make_net()\nopt = two_groups(net, momentum=0.9)\nconv_group",
             "deeper": "kept = snapshot(net.parameters())"}
#: What the twins print, stored as a built notebook stores a twin's real output.
TWIN_OUTPUT = {"twin-torch": "tensor([0.1000, 0.0000])  # from torch\n",
               "twin-paddle": "Tensor(shape=[2], [0.1000, 0.    ])  # from paddle\n"}


def shown_text(locator) -> str:
    """The text of every element ``locator`` holds, hidden tabs included."""
    return locator.evaluate("e => e.textContent")


def twin_cell(tag: str, heading: str, where: str) -> dict:
    """A twin cell as tools/build_notebooks.py writes it (issue 50's contract): the heading
    line first, the twin tag and ``nbval-skip``, collapsed in JupyterLab, its stored output."""
    return {"cell_type": "code", "execution_count": 1, "id": f"{tag}-{where}",
            "metadata": {"tags": [tag, "nbval-skip"],
                         "jupyter": {"source_hidden": True, "outputs_hidden": True}},
            "source": f"{heading}\nimport {tag[5:]}  # the {where} twin\n",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": TWIN_OUTPUT[tag]}]}


def with_twins(source: Path, target: Path, language: str) -> None:
    """Copy the notebook ``source`` to ``target`` with a PyTorch and a Paddle twin after each
    of ``KIT_CELLS``, their first lines in ``language``, and none of its own twins."""
    import twins

    nb = json.loads(source.read_text(encoding="utf-8"))
    nb["cells"] = [c for c in nb["cells"] if twins.twin_framework(c) is None]
    for where, first_lines in KIT_CELLS.items():
        kit = next(i for i, c in enumerate(nb["cells"])
                   if "".join(c["source"]).startswith(first_lines))
        nb["cells"][kit + 1:kit + 1] = [twin_cell(tag, twins.heading(framework, language), where)
                                        for tag, framework in twins.TWIN_TAGS.items()]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def twin_site(tmp_path_factory):
    """A site of one chapter (ch07, both languages) with known twins (``with_twins``), built
    by the real build from a temporary copy of the notebooks, in seconds; yields its base
    URL."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    scratch = tmp_path_factory.mktemp("twin-site")
    notebooks = scratch / "notebooks"
    with_twins(ROOT / "notebooks" / f"{TWIN_CHAPTER}.ipynb",
               notebooks / f"{TWIN_CHAPTER}.ipynb", "en")
    with_twins(ROOT / "notebooks" / "zh" / f"{TWIN_CHAPTER}.zh.ipynb",
               notebooks / "zh" / f"{TWIN_CHAPTER}.zh.ipynb", "zh")
    for name in ("FAQ.md", "GLOSSARY.md", "lab.ipynb", "zh/FAQ.md", "zh/lab.zh.ipynb"):
        (notebooks / name).write_bytes((ROOT / "notebooks" / name).read_bytes())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_site, "NOTEBOOKS", notebooks)
        patch.setattr(build_site, "LANGUAGES", {"en": (notebooks, ""),
                                                "zh": (notebooks / "zh", "zh/")})
        folder = build_site.build(scratch / "site", staging=scratch / "stage")
    server, url = serve(folder)
    yield url
    server.shutdown()


def settled(page) -> None:
    """Wait until the page's transitions end (the tab's underline slides to the open tab), so a
    screenshot shows where it stops."""
    page.evaluate("() => Promise.allSettled(document.getAnimations().map(a => a.finished))")


@pytest.mark.parametrize("path", [f"{TWIN_CHAPTER}/", f"zh/{TWIN_CHAPTER}/"])
def test_a_kit_cell_and_its_twins_are_tabs_with_the_kits_open(twin_site, browser, path):
    """Issue 50: on the page a kit cell and its twins are one set of tabs, dltutor | PyTorch |
    Paddle (the same names in Chinese), the kit's open; a click on PyTorch shows the twin's
    code and what PyTorch printed, and hides the kit's. The twin's tags show nowhere."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(twin_site + path, wait_until="networkidle")
    tabs = page.locator("article .tabbed-set").filter(has_text="the main twin")
    assert page.locator("article .tabbed-set").count() == 2 and tabs.count() == 1
    labels = tabs.locator(".tabbed-labels > label")
    assert labels.all_inner_texts() == ["dltutor", "PyTorch", "Paddle"]
    kit = tabs.locator("pre", has_text="conv_group")
    torch_code = tabs.locator("pre", has_text="import torch")
    torch_output = tabs.get_by_text("from torch")
    assert kit.first.is_visible() and not torch_code.is_visible()
    assert not torch_output.is_visible()
    assert not tabs.locator("pre", has_text="import paddle").is_visible()
    tabs.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"site_twins_kit_{path.split('/')[0]}.png"))
    labels.nth(1).click()
    assert torch_code.is_visible() and torch_output.is_visible()
    assert not kit.first.is_visible()
    # The tab names the framework: the notebook's first line ("# In PyTorch") is left out,
    # and the twin shows the kit cell's number, not its own kernel's count.
    assert "# In PyTorch" not in torch_code.inner_text() and "在 PyTorch 中" not in shown_text(tabs)
    prompts = tabs.locator(".jp-InputPrompt").all_inner_texts()
    assert len(set(prompts)) == 1, prompts
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"site_twins_torch_{path.split('/')[0]}.png"))
    shown = page.locator("article").inner_text()
    assert "twin-torch" not in shown and "twin-paddle" not in shown and "nbval-skip" not in shown
    page.close()


@pytest.mark.parametrize("path", [f"{TWIN_CHAPTER}/", f"zh/{TWIN_CHAPTER}/"])
def test_twins_in_a_going_deeper_section_are_tabs_inside_its_fold(twin_site, browser, path):
    """A kit cell with twins inside a folded "Going deeper" section: the tabs sit inside the
    section's <details> (hidden until it opens), and they work once it is open."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(twin_site + path, wait_until="networkidle")
    section = page.locator("details.deeper").filter(has_text="the deeper twin")
    assert section.count() == 1 and not section.evaluate("d => d.open")
    tabs = section.locator(".tabbed-set")
    assert tabs.count() == 1 and not tabs.is_visible()
    section.locator("summary").click()
    assert tabs.locator("pre", has_text="kept = snapshot").is_visible()
    tabs.locator(".tabbed-labels > label").nth(2).click()
    assert tabs.locator("pre", has_text="import paddle").is_visible()
    assert tabs.get_by_text("from paddle").is_visible()
    assert not tabs.locator("pre", has_text="kept = snapshot").is_visible()
    tabs.scroll_into_view_if_needed()
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"site_twins_deeper_{path.split('/')[0]}.png"))
    page.close()


def nesting_errors(page_html: str) -> list[str]:
    """The places where ``page_html``'s <div>, <details> and <summary> elements do not nest (an
    end tag that closes an element other than the last one opened, or one never closed).

    >>> nesting_errors("<details><div></div></details>"), nesting_errors("<details><div></details>")
    ([], ['</details> closes <div>', 'left open: <details>'])
    """
    opened, errors = [], []
    for tag in re.finditer(r"<(/?)(div|details|summary)\b", page_html):
        if not tag.group(1):
            opened.append(tag.group(2))
        else:
            last = opened.pop() if opened else "nothing"
            if last != tag.group(2):
                errors.append(f"</{tag.group(2)}> closes <{last}>")
    return errors + [f"left open: <{name}>" for name in opened]


def test_twin_tabs_nest_inside_a_folded_going_deeper_section(tmp_path):
    """The build (``fix_pages``) folds the "Going deeper" sections, then makes the tabs: a kit
    cell with twins at the end of a section becomes a tab set inside the section's <details>,
    and every element still nests. (Tabs made first were split by the fold: its </details>
    landed inside the tab set.) The twin's tag label is gone: its tab names it."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    heading = '<{0} id="{1}">{1}<a class="anchor-link" href="#{1}">¶</a></{0}>'
    cell = '<div class="jp-Cell jp-{}Cell{}"><div class="inner">{}</div></div>\n'
    page = "".join([cell.format("Markdown", "", heading.format("h3", "Going deeper: why")),
                    cell.format("Code", "", "kit = 1"),
                    cell.format("Code", " celltag_twin-torch",
                                '<div class="celltoolbar"><span>twin-torch</span></div>t = 1'),
                    cell.format("Markdown", "", heading.format("h2", "Next"))])
    (tmp_path / "07_x").mkdir()
    (tmp_path / "07_x" / "index.html").write_text(page, encoding="utf-8")
    build_site.fix_pages(tmp_path, set())
    built = (tmp_path / "07_x" / "index.html").read_text(encoding="utf-8")
    assert nesting_errors(built) == [], built
    section = built[built.index('<details class="deeper">'):built.index("</details>")]
    assert "tabbed-set" in section and "kit = 1" in section and "t = 1" in section, built
    assert "celltoolbar" not in built, built
