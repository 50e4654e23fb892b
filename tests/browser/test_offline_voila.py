"""The lab's Voilà page loads nothing from outside the machine, and its icons still show.

Voilà's stock "lab" template links Font Awesome from a CDN; the lab's notebooks pick the kit's
own template (``share/jupyter/voila/templates/dltutor``, named in their ``voila`` metadata),
which drops those links: the widget manager's bundle, served by Voilà itself, already carries
Font Awesome. Here Chromium aborts every request to any other host than this machine, and the
page must still need none of them, and draw the play button's icon in Font Awesome.

Needs Chromium (the ``browser`` fixture of tests/conftest.py); without it the test skips.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from browser_helpers import (ARTIFACTS, copy_notebooks, isolated_env, open_lab_page, save_failure,
                             start_voila)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

LOCAL_HOSTS = {"127.0.0.1", "localhost"}

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


@pytest.mark.parametrize("notebook", ["lab.ipynb", "zh/lab.zh.ipynb"])
def test_voila_lab_page_loads_nothing_from_outside(notebook, tmp_path, browser):
    notebooks = copy_notebooks(tmp_path / "notebooks")
    name = "voila-offline" + ("-zh" if notebook.startswith("zh/") else "")
    server, address = start_voila(notebook, notebooks, isolated_env(tmp_path / "jupyter"),
                                  f"{name}-server.log")
    outside: list[str] = []

    def local_only(route):
        # Record and refuse whatever would leave the machine (a CDN, fonts, analytics).
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("blockedbyclient")

    page = None
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        context.route("**/*", local_only)
        page = context.new_page()
        open_lab_page(page, address)
        page.wait_for_load_state("networkidle", timeout=30_000)
        icon = page.locator(".dltutor-play i.fa-play")
        report = icon.evaluate(ICON_REPORT)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        assert outside == [], f"the page asked outside hosts for: {outside}"
        assert report["content"] not in ("none", "normal", '""'), report
        assert report["width"] > 0, report
        families = [f.strip().strip("\"'") for f in report["family"].split(",")]
        awesome = {f for f in families if "awesome" in f.lower()}
        assert awesome & set(report["loaded"]), f"no Font Awesome drew the icon: {report}"
    except BaseException:
        save_failure(page, name, [server])
        raise
    finally:
        server.stop()
        context.close()
