"""``dltutor lab`` in the browser (dltutor/launch): a layout that suits the screen, a clean
start, and the two editions' tabs told apart.

These tests run the real command (``python -m dltutor.cli lab``) on a copy of the notebooks,
open the address it prints in Chromium, at a phone's width (412 px) and a laptop's, and take
screenshots (``test-artifacts/launch-*.png``). The command line alone is
tests/launch/test_launch.py's.
"""
from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from browser_helpers import ARTIFACTS, copy_notebooks, dltutor_lab, isolated_env, save_failure

PHONE = {"width": 412, "height": 915}
LAPTOP = {"width": 1280, "height": 800}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
#: A chapter with formulas ($...$ in its text), for MathJax to typeset.
FORMULAS_CHAPTER = "03_initialization.ipynb"


@pytest.fixture
def chapters(tmp_path) -> tuple[Path, dict[str, str]]:
    return copy_notebooks(tmp_path / "notebooks"), isolated_env(tmp_path / "jupyter")


def sessions(address: str) -> list[dict]:
    """The notebooks the server has a kernel for."""
    token = address.split("token=")[1]
    root = address.split("/?")[0]
    with urllib.request.urlopen(f"{root}/api/sessions?token={token}", timeout=10) as answer:
        return json.load(answer)


# -- in the browser ----------------------------------------------------------------------------
def open_page(browser, address: str, viewport: dict, path: str = "") -> object:
    context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE,
                                  has_touch=viewport is PHONE)
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(address if not path else address.replace("/?", f"/{path}?"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
    page.wait_for_timeout(1500)                    # the layout settles after the first cell
    return page


def open_in_file_browser(page, name: str) -> None:
    """Double-click ``name`` (a file or a folder) in JupyterLab's file browser."""
    page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$")).dblclick()


def layout(page) -> dict:
    return page.evaluate("""() => ({
        path: location.pathname,
        left: document.querySelector('#jp-left-stack').getBoundingClientRect().width,
        notebook: document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook')
                          .getBoundingClientRect().width,
        tabs: [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tabLabel')]
                .map(label => label.textContent).filter(name => name.endsWith('.ipynb')),
    })""")


@pytest.mark.browser
@pytest.mark.timeout(240)
@pytest.mark.parametrize("screen", ["phone", "laptop"])
def test_the_first_chapter_opens_in_a_layout_that_suits_the_screen(screen, chapters, browser):
    folder, env = chapters
    page = None
    with dltutor_lab(folder, env, screen) as (address, server):
        try:
            page = open_page(browser, address, PHONE if screen == "phone" else LAPTOP)
            page.screenshot(path=str(ARTIFACTS / f"launch-{screen}.png"))
            seen = layout(page)
            if screen == "phone":
                # simple mode: one document, the side panels closed, the text the full width
                assert seen["path"] == "/doc/workspaces/narrow/tree/00_welcome.ipynb", seen
                assert seen["left"] == 0, seen
                assert seen["notebook"] >= 0.8 * PHONE["width"], seen
            else:
                assert seen["path"] == "/lab/workspaces/wide/tree/00_welcome.ipynb", seen
                assert seen["left"] > 150, seen            # the file browser, to find chapters
        except BaseException:
            save_failure(page, f"launch-{screen}", [server])
            raise
        finally:
            if page is not None:
                page.context.close()


def wait_for_saved_layout(address: str, page, showing: str = "") -> None:
    """Wait until JupyterLab has saved the layout ``page`` shows in its workspace on the
    server (the one its address names; ``default`` when it names none), with the document
    ``showing`` (a path) open when one is named."""
    name = re.search(r"/workspaces/([\w-]+)/", page.url)
    workspace = name.group(1) if name else "default"
    token, root = address.split("token=")[1], address.split("/?")[0]
    for _ in range(120):
        with urllib.request.urlopen(f"{root}/lab/api/workspaces?token={token}",
                                    timeout=10) as answer:
            saved = json.load(answer)["workspaces"]
        layouts = {value["metadata"]["id"]: value["data"].get("layout-restorer:data")
                   for value in saved["values"]}
        if layouts.get(workspace) and f"notebook:{showing}" in json.dumps(layouts[workspace]):
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"no layout saved in workspace {workspace!r}: {saved}")


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_a_phone_visit_leaves_the_desktop_layout_alone(chapters, browser):
    """Issue 47: after the address was opened on a phone (simple mode, which saves its own
    layout), the desktop's JupyterLab showed the file browser collapsed or most of the
    width. Each kind of screen keeps a layout of its own."""
    folder, env = chapters
    phone = desktop = None
    with dltutor_lab(folder, env, "phone-then-desktop") as (address, server):
        try:
            phone = open_page(browser, address, PHONE)
            wait_for_saved_layout(address, phone)
            phone.screenshot(path=str(ARTIFACTS / "launch-phone-first.png"))
            desktop = open_page(browser, address, LAPTOP)
            desktop.screenshot(path=str(ARTIFACTS / "launch-desktop-after-phone.png"))
            seen = layout(desktop)
            assert 150 <= seen["left"] <= 450, seen        # the file browser, a sane width
            assert seen["notebook"] >= 0.5 * LAPTOP["width"], seen
        except BaseException:
            save_failure(desktop or phone, "launch-phone-then-desktop", [server])
            raise
        finally:
            for page in (phone, desktop):
                if page is not None:
                    page.context.close()


def file_browser_listing(page) -> list[str]:
    """The names JupyterLab's file browser lists, once it lists any."""
    page.wait_for_selector(".jp-DirListing-itemText")
    return page.locator(".jp-DirListing-itemText").all_text_contents()


@pytest.mark.browser
@pytest.mark.timeout(240)
@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_file_browser_lists_the_chapters_not_the_authors_files(edition, chapters, browser):
    """Issue 47: src/, zh/, AUTHORING.md and SOURCES.md showed beside the chapters. The English
    edition lists its chapters, lab.ipynb, FAQ.md and GLOSSARY.md; the Chinese one
    (``--lang zh``) opens in zh/ with the Chinese chapters."""
    folder, env = chapters
    page = None
    options = ("--lang", "zh") if edition == "zh" else ()
    with dltutor_lab(folder, env, f"files-{edition}", *options) as (address, server):
        try:
            page = open_page(browser, address, LAPTOP)
            page.wait_for_timeout(1000)                 # the listing follows the document
            page.screenshot(path=str(ARTIFACTS / f"launch-files-{edition}.png"))
            listed = file_browser_listing(page)
            shown = folder / "zh" if edition == "zh" else folder
            expected = sorted(path.name for path in shown.glob("*.ipynb")) + (
                ["FAQ.md"] if edition == "zh" else ["FAQ.md", "GLOSSARY.md"])
            assert sorted(listed) == sorted(expected), listed
            assert "00_welcome.ipynb" in listed or "00_welcome.zh.ipynb" in listed
        except BaseException:
            save_failure(page, f"launch-files-{edition}", [server])
            raise
        finally:
            if page is not None:
                page.context.close()


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_each_start_is_clean_and_the_editions_tabs_differ(chapters, browser):
    """Two more chapters (English and Chinese 08) open in one start, their tabs named apart;
    the next start opens the first chapter alone, with one kernel."""
    folder, env = chapters
    page = None
    with dltutor_lab(folder, env, "first") as (address, server):
        try:
            page = open_page(browser, address, LAPTOP)
            # as a learner does: the English chapter by a double-click in the file browser,
            # the Chinese one (its folder hidden in the English edition) by its address
            open_in_file_browser(page, "08_freezing.ipynb")
            page.wait_for_selector('.lm-TabBar-tabLabel:text-is("08_freezing.ipynb")')
            wait_for_saved_layout(address, page, showing="08_freezing.ipynb")
            page.goto(address.replace("/?", "/lab/workspaces/wide/tree/zh/08_freezing.zh.ipynb?"))
            page.wait_for_selector('.lm-TabBar-tabLabel:text-is("08_freezing.zh.ipynb")')
            wait_for_saved_layout(address, page, showing="zh/08_freezing.zh.ipynb")
            tabs = layout(page)["tabs"]
            page.screenshot(path=str(ARTIFACTS / "launch-tabs.png"))
            assert len(tabs) == 3 and len(set(tabs)) == 3, tabs  # the editions' tabs differ
        except BaseException:
            save_failure(page, "launch-tabs", [server])
            raise
        finally:
            if page is not None:
                page.context.close()
    with dltutor_lab(folder, env, "second") as (address, server):
        page = open_page(browser, address, LAPTOP)
        try:
            page.wait_for_timeout(3000)
            assert layout(page)["tabs"] == ["00_welcome.ipynb"]
            assert [s["path"] for s in sessions(address)] == ["00_welcome.ipynb"]
        finally:
            page.context.close()


def scroll_to_the_end(page) -> None:
    """Scroll the open notebook down a screen at a time until its end stays in view (the
    notebook grows while its cells are drawn, as they come into view), so every cell on the
    way is drawn."""
    still = 0                                  # steps in a row at the end, the height unchanged
    height = None
    for _ in range(400):
        at_end, height_now = page.evaluate("""() => {
            const panel = document.querySelector(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
            panel.scrollTop += panel.clientHeight;
            return [panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 2,
                    panel.scrollHeight];
        }""")
        still = still + 1 if at_end and height_now == height else 0
        height = height_now
        if still == 5:                         # past its end now: bring its last cell up
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").last \
                .scroll_into_view_if_needed()
            return
        page.wait_for_timeout(200)
    raise AssertionError("the notebook never stayed scrolled to its end")


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_a_chapter_with_formulas_loads_nothing_from_outside(chapters, browser):
    """Issue 47: nothing JupyterLab shows may need the network (a classroom offline, a learner
    on a train). Chromium refuses and records every request to another host than this
    machine while a chapter with formulas opens and is scrolled to its end; the formulas
    are typeset all the same (MathJax's output in the page). The "Jupyter news" setting is
    the kit's own (settings/overrides.json) and cells are drawn as they come into view, as
    for a learner, not the tests' usual settings."""
    folder, env = chapters
    for tests_own in ("apputils-extension/notification", "notebook-extension/tracker"):
        (Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" /
         f"{tests_own}.jupyterlab-settings").unlink()
    outside: list[str] = []

    def local_only(route) -> None:
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("blockedbyclient")

    page = None
    with dltutor_lab(folder, env, "offline") as (address, server):
        try:
            context = browser.new_context(viewport=LAPTOP)
            context.set_default_timeout(60_000)
            context.route("**/*", local_only)
            page = context.new_page()
            page.goto(address.replace("/?", f"/lab/workspaces/wide/tree/{FORMULAS_CHAPTER}?"))
            page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
            scroll_to_the_end(page)
            page.wait_for_selector(".jp-RenderedMarkdown mjx-container", state="attached")
            page.wait_for_timeout(2000)             # anything the last cells ask for, asked
            page.screenshot(path=str(ARTIFACTS / "launch-offline-end.png"))
            formulas = page.locator(".jp-RenderedMarkdown mjx-container").count()
            assert outside == [], outside
            assert formulas >= 10, formulas
        except BaseException:
            save_failure(page, "launch-offline", [server])
            raise
        finally:
            if page is not None:
                page.context.close()


def test_a_going_deeper_section_opens_folded_under_its_heading(chapters, browser):
    """Issue 49: what is not core (internals, version notes) sits in "Going deeper" sections
    (tools/deeper.py), which a chapter opens folded: the heading shows, its cells do not,
    and the heading's caret opens them."""
    folder, env = chapters
    page = None
    with dltutor_lab(folder, env, "deeper") as (address, server):
        try:
            page = open_page(browser, address, LAPTOP,
                             "lab/workspaces/wide/tree/07_learning_rates.ipynb")
            heading = page.locator(".jp-MarkdownCell h3",
                                   has_text="Going deeper: the same optimizer")
            heading.scroll_into_view_if_needed()
            cell = page.locator(".jp-MarkdownCell").filter(
                has=page.locator("h3", has_text="Going deeper: the same optimizer"))
            folded = page.locator(".jp-MarkdownCell pre",
                                  has_text="class LionLite(torch.optim.Optimizer)")
            assert heading.is_visible() and not folded.is_visible()
            show = cell.get_by_role("button", name=re.compile("cells? hidden"))
            assert show.is_visible()
            page.screenshot(path=str(ARTIFACTS / "launch-deeper-folded.png"))
            show.click()
            folded.scroll_into_view_if_needed()
            assert folded.is_visible()
            page.screenshot(path=str(ARTIFACTS / "launch-deeper-open.png"))
        except BaseException:
            save_failure(page, "launch-deeper", [server])
            raise
        finally:
            if page is not None:
                page.context.close()
