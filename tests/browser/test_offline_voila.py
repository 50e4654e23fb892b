"""The lab's Voilà page loads nothing from outside the machine, its icons and formulas still
show, and its browser console holds no error.

Voilà's stock "lab" template links Font Awesome from a CDN; the lab's notebooks pick the kit's
own template (``share/jupyter/voila/templates/dltutor``, named in their ``voila`` metadata),
which drops those links: the widget manager's bundle, served by Voilà itself, already carries
Font Awesome. Here Chromium aborts every request to any other host than this machine, and the
page must still need none of them, and draw the play button's icon in Font Awesome.

MathJax is loaded when a page is opened, so a test that only waits for the page to settle sees
its request; but where it comes from depends on how Voilà runs. Standalone (``voila lab.ipynb``)
it typesets with the MathJax its bundle carries. Inside a Jupyter server (``dltutor lab``,
Binder's ``voila/render/``) it asks cdnjs for MathJax, unless jupyter-server-mathjax (in the
``site`` extra, not in a learner's install) offers a copy. So one test runs the pages the second
way, that package turned off, with a notebook of formulas beside the lab (the lab has none).

The template tested is the clone's (``JUPYTER_PATH`` points at its ``share/jupyter``), not the
copy ``pip install -e .`` made; tests/delivery/test_wheel.py checks the wheel carries it.

Needs Chromium (the ``browser`` fixture of tests/conftest.py); without it the test skips.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from browser_helpers import (ARTIFACTS, Server, copy_notebooks, free_port, isolated_env,
                             open_lab_page, save_failure, start_voila)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[2]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
TOKEN = "dltutor-test-token"

# The play icon's ::before glyph, its font, and whether a Font Awesome face the page declared
# has really loaded (a font that failed to load would fall back to a box or nothing).
ICON_REPORT = """async (icon) => {
    await document.fonts.ready;
    const glyph = getComputedStyle(icon, '::before');
    const loaded = [...document.fonts].filter(f => f.status === 'loaded')
        .map(f => f.family.replace(/["']/g, ''));
    return {family: glyph.fontFamily, content: glyph.content, loaded,
            width: icon.getBoundingClientRect().width};
}"""

#: The console warnings the page may log: Voilà 0.5's bundle carries JupyterLab 4.2's shared
#: modules, while the installed widget manager (jupyterlab_widgets) was built against a newer
#: JupyterLab and asks for that version; the page uses Voilà's, and works. Not ours to fix
#: (see notebooks/AUTHORING.md); anything else logged as a warning or an error fails the test.
VERSION_WARNING = re.compile(r"(Unsatisfied version|No satisfying version) .* shared "
                             r"(singleton )?module @jupyterlab/", re.S)

#: A page of formulas for the lab's template: the lab itself has none, and MathJax (two ways
#: of loading it) shows only where there is mathematics to typeset.
FORMULAS = {
    "cells": [{"cell_type": "markdown", "id": "formulas", "metadata": {},
               "source": "# Formulas\n\nA weight $w_{ij} \\sim \\mathcal{N}(0, \\sigma^2)$ with"
                         "\n\n$$\\sigma = \\sqrt{\\frac{2}{n_{in} + n_{out}}}$$"},
              {"cell_type": "code", "id": "done", "metadata": {}, "execution_count": None,
               "outputs": [], "source": "print('typeset')"}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"},
                 "voila": {"template": "dltutor"}},
    "nbformat": 4, "nbformat_minor": 5}


def clone_template_env(home: Path) -> dict[str, str]:
    """``isolated_env`` with Jupyter looking first in the clone's share/jupyter (its template)."""
    env = isolated_env(home)
    env["JUPYTER_PATH"] = str(ROOT / "share" / "jupyter")
    return env


class Watch:
    """What a browser context asks of other hosts (refused) and what its pages log."""

    def __init__(self, context) -> None:
        self.outside: list[str] = []
        self.console: list[tuple[str, str]] = []
        context.route("**/*", self._local_only)

    def _local_only(self, route) -> None:
        # Record and refuse whatever would leave the machine (a CDN, fonts, analytics).
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort("blockedbyclient")

    def listen(self, page) -> None:
        page.on("console", lambda message: self.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: self.console.append(("pageerror", str(error))))
        # the console says only "Failed to load resource": keep which one, and its status
        page.on("response", lambda response: self.console.append(
            ("response", f"{response.status} {response.request.method} {response.url}"))
            if response.status >= 400 else None)

    def unexpected_console(self) -> list[tuple[str, str]]:
        """The errors and warnings logged, less the shared-module version warnings."""
        return [(kind, line[:300]) for kind, line in self.console
                if kind in ("error", "pageerror", "response", "warning")
                and not (kind == "warning" and VERSION_WARNING.search(line))]


def assert_icons_drawn(page) -> None:
    """The play button's icon is a Font Awesome glyph that loaded."""
    report = page.locator(".dltutor-play i.fa-play").evaluate(ICON_REPORT)
    assert report["content"] not in ("none", "normal", '""'), report
    assert report["width"] > 0, report
    families = [f.strip().strip("\"'") for f in report["family"].split(",")]
    awesome = {f for f in families if "awesome" in f.lower()}
    assert awesome & set(report["loaded"]), f"no Font Awesome drew the icon: {report}"


@pytest.mark.parametrize("notebook", ["lab.ipynb", "zh/lab.zh.ipynb"])
def test_voila_lab_page_loads_nothing_from_outside(notebook, tmp_path, browser):
    notebooks = copy_notebooks(tmp_path / "notebooks")
    name = "voila-offline" + ("-zh" if notebook.startswith("zh/") else "")
    server, address = start_voila(notebook, notebooks, clone_template_env(tmp_path / "jupyter"),
                                  f"{name}-server.log")
    page = None
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        watch = Watch(context)
        page = context.new_page()
        watch.listen(page)
        open_lab_page(page, address)
        page.wait_for_load_state("networkidle", timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        assert watch.outside == [], f"the page asked outside hosts for: {watch.outside}"
        assert_icons_drawn(page)
        assert watch.unexpected_console() == [], "the browser console logged these"
    except BaseException:
        save_failure(page, name, [server])
        raise
    finally:
        server.stop()
        context.close()


def start_jupyter_server(folder: Path, env: dict[str, str]) -> tuple[Server, str]:
    """A Jupyter server in ``folder`` with Voilà's extension, as ``dltutor lab`` and Binder run
    it, but without jupyter-server-mathjax (a learner's install lacks it); returns the server
    and its base address."""
    port = free_port()
    server = Server(["jupyter_server", "--no-browser", f"--port={port}",
                     "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
                     f"--IdentityProvider.token={TOKEN}", "--allow-root",
                     "--ServerApp.jpserver_extensions=jupyter_server_mathjax=False"],
                    cwd=folder, env=env, log_path=ARTIFACTS / "voila-render-server.log")
    try:
        server.wait_for_port(port)
    except BaseException:
        server.stop()
        raise
    return server, f"http://127.0.0.1:{port}"


def test_voila_inside_a_jupyter_server_typesets_formulas_offline(tmp_path, browser):
    """Binder and ``dltutor lab`` serve the lab at voila/render/: the lab loads nothing from
    outside there either, and a page of formulas in the lab's template is typeset (it stayed
    TeX, MathJax asked of cdnjs)."""
    notebooks = copy_notebooks(tmp_path / "notebooks")
    (notebooks / "formulas.ipynb").write_text(json.dumps(FORMULAS), encoding="utf-8")
    server, base = start_jupyter_server(notebooks, clone_template_env(tmp_path / "jupyter"))
    page = None
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        watch = Watch(context)
        page = context.new_page()
        watch.listen(page)
        open_lab_page(page, f"{base}/voila/render/lab.ipynb?token={TOKEN}")
        page.wait_for_load_state("networkidle", timeout=30_000)
        assert_icons_drawn(page)
        assert watch.unexpected_console() == [], "the lab's console logged these"
        # A second tab: leaving the lab's page would log Voilà's own failure to shut its kernel
        # down (a POST without the server's XSRF value, refused: 403), not the kit's business.
        page = context.new_page()
        watch.listen(page)
        page.goto(f"{base}/voila/render/formulas.ipynb?token={TOKEN}", timeout=90_000)
        page.wait_for_selector(".jp-OutputArea-output", timeout=90_000)      # the cell ran
        page.wait_for_load_state("networkidle", timeout=30_000)
        assert watch.outside == [], f"the pages asked outside hosts for: {watch.outside}"
        page.wait_for_selector("mjx-container", timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila-render-formulas.png"))
        shown = page.locator(".jp-RenderedMarkdown").first.inner_text()
        assert "\\frac" not in shown and "\\sqrt" not in shown, f"TeX shown as text: {shown}"
        assert page.locator("mjx-container").count() >= 2            # inline and displayed
        assert page.locator("mjx-container[display=true]").first.bounding_box()["height"] > 20
        assert watch.unexpected_console() == [], "the browser console logged these"
    except BaseException:
        save_failure(page, "voila-render", [server])
        raise
    finally:
        server.stop()
        context.close()
