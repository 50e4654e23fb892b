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

import pytest

from browser_helpers import ARTIFACTS, copy_notebooks, dltutor_lab, isolated_env, save_failure

PHONE = {"width": 412, "height": 860}
LAPTOP = {"width": 1280, "height": 800}


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
                assert seen["path"] == "/doc/tree/00_welcome.ipynb", seen
                assert seen["left"] == 0, seen
                assert seen["notebook"] >= 0.8 * PHONE["width"], seen
            else:
                assert seen["path"] == "/lab/tree/00_welcome.ipynb", seen
                assert seen["left"] > 150, seen            # the file browser, to find chapters
        except BaseException:
            save_failure(page, f"launch-{screen}", [server])
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
            # as a learner does: double-click them in the file browser
            for folder_name, notebook in ((None, "08_freezing.ipynb"),
                                          ("zh", "08_freezing.zh.ipynb")):
                if folder_name:
                    open_in_file_browser(page, folder_name)
                open_in_file_browser(page, notebook)
                page.wait_for_selector(f'.lm-TabBar-tabLabel:text-is("{notebook}")')
            page.wait_for_timeout(3000)                # the workspace is saved meanwhile
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
