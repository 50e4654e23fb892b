"""The live lab in a real browser: JupyterLab and Voilà, driven by Playwright in Chromium.

Each test starts its own server on 127.0.0.1 (a free port, a token) in a temporary copy of the
notebooks folder, with its own Jupyter config, settings and runtime directories, so nothing
the browser saves can touch the committed notebooks. It opens ``12_live_lab.ipynb`` in
JupyterLab (and the app page ``lab.ipynb`` in Voilà), runs it, presses play, changes controls while the lab trains, and reads what happened from the data
attributes of the status line (``<div class="dltutor-status" data-step=... data-norm-2=...>``,
see ``dltutor.lab.widgets``).

Artifacts land in ``test-artifacts/`` (gitignored): a screenshot of each view, the server logs,
``browser_speed.txt`` (training steps and redraws per second measured in the page; reported,
not asserted), and on failure a screenshot of the moment it failed.

Needs Chromium (``apt-get install chromium``); without it these tests skip and say so. Set
``DLTUTOR_REQUIRE_BROWSER=1`` (CI) to make a missing browser a failure instead.
"""
from __future__ import annotations

import json
import os
import re
import time

import pytest

from browser_helpers import (ARTIFACTS, copy_notebooks, free_port, isolated_env,
                             jupyterlab_run_all, open_lab_page, save_failure, Server, start_voila,
                             status, wait_for_status)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

NOTEBOOK = "12_live_lab.ipynb"
APP_NOTEBOOK = "lab.ipynb"          # the lab alone: what Voilà and the Binder lab badge open
@pytest.fixture
def workdir(tmp_path):
    """A copy of the notebooks and an isolated Jupyter environment."""
    notebooks = copy_notebooks(tmp_path / "notebooks")
    return notebooks, isolated_env(tmp_path / "jupyter")


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    context.close()


def as_int(attrs, name):
    return int(attrs[name])


def frames_drawn(page) -> int:
    """The frames the chart has drawn, counted in the page itself (chart.js)."""
    return int(page.locator("[data-frames]").first.get_attribute("data-frames"))


def record_speed(view: str, page) -> str:
    """Measure training steps and plot redraws per second over 4 s in the page (steps from
    the status line, frames from the chart), print it and keep it in
    test-artifacts/browser_speed.txt (one line per view)."""
    t0, a0, f0 = time.monotonic(), status(page), frames_drawn(page)
    page.wait_for_timeout(4000)
    t1, a1, f1 = time.monotonic(), status(page), frames_drawn(page)
    seconds = t1 - t0
    steps = (as_int(a1, "data-step") - as_int(a0, "data-step")) / seconds
    redraws = (f1 - f0) / seconds
    line = (f"{view}: {steps:.0f} training steps/s and {redraws:.1f} plot redraws/s in the "
            f"browser (over {seconds:.1f} s; lab's own estimate "
            f"{float(a1['data-steps-per-second']):.0f} steps/s; a frame costs the kernel "
            f"{float(a1['data-draw-ms']):.1f} ms; moons demo, {os.cpu_count()} cores)")
    print(line)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "browser_speed.txt"
    lines = [x for x in (path.read_text().splitlines() if path.exists() else [])
             if x and not x.startswith(f"{view}:")]
    path.write_text("\n".join(sorted(lines + [line])) + "\n")
    return line


def pace_to_max(page) -> None:
    """The lab starts at the demo's pace (a few steps per second, for a learner to watch); move
    the speed slider to its last stop, "max", with the keyboard."""
    page.locator(".dltutor-pace .noUi-handle").focus()
    page.keyboard.press("End")
    wait_for_status(page, lambda a: a["data-pace"] == "max", "the speed slider to reach max")


def press_play_and_freeze_layer_2(page) -> dict[str, str]:
    """Play, then tick layer 2's freeze box while it trains. Returns the status a few steps
    after the freeze took effect (the frozen layer's norm from then on must not change)."""
    play = page.locator(".dltutor-play")
    play.scroll_into_view_if_needed()
    pace_to_max(page)
    play.click()
    wait_for_status(page, lambda a: a["data-running"] == "1" and as_int(a, "data-step") >= 50,
                    "training to start after pressing play")
    page.locator(".dltutor-freeze-2 input[type=checkbox]").check()
    frozen = wait_for_status(page, lambda a: a["data-frozen-2"] == "1",
                             "the freeze box to freeze layer 2")
    return wait_for_status(
        page, lambda a: as_int(a, "data-step") >= as_int(frozen, "data-step") + 10,
        "training to go on after the freeze")


def assert_frozen_layer_stopped_while_training_continued(page, settled, since=None):
    """200 steps after ``settled`` (and 100 after the status ``since``, the last control
    change), layer 2's norm is bit for bit the same, layer 0's is not, and no error."""
    target = max(as_int(settled, "data-step") + 200,
                 as_int(since or settled, "data-step") + 100)
    later = wait_for_status(page, lambda a: as_int(a, "data-step") >= target,
                            f"training to reach step {target}")
    assert later["data-error"] == "", later["data-error"]
    assert later["data-running"] == "1" and later["data-frozen-2"] == "1"
    assert later["data-norm-2"] == settled["data-norm-2"], "the frozen layer's norm changed"
    assert later["data-norm-0"] != settled["data-norm-0"], "the other layers stopped too"
    return later


def test_jupyterlab_run_all_play_and_steer(workdir, page):
    notebooks, env = workdir
    port, token = free_port(), "dltutor-test-token"
    server = Server(["jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                     "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                     f"--ServerApp.root_dir={notebooks}", "--allow-root",
                     "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                     "--LabApp.extension_manager=readonly"],
                    cwd=notebooks, env=env, log_path=ARTIFACTS / "jupyterlab-server.log")
    try:
        server.wait_until_up(f"http://127.0.0.1:{port}/api/status?token={token}")
        page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}",
                  timeout=60_000)
        # Run > Run All Cells, from the menu bar as a learner would.
        jupyterlab_run_all(page, ".dltutor-play")

        settled = press_play_and_freeze_layer_2(page)
        # Move layer 0's lr slider one stop right (x1 -> x3) with the keyboard.
        page.locator(".dltutor-lr-mult-0 .noUi-handle").focus()
        page.keyboard.press("ArrowRight")
        wait_for_status(page, lambda a: a["data-lr-mult-0"] == "3.0",
                        "the lr slider to set layer 0's multiplier to 3")
        # Switch global-norm clipping on.
        page.locator(".dltutor-clip-mode select").select_option(label="global norm")
        clipping = wait_for_status(page, lambda a: a["data-clip-mode"] == "global_norm",
                                   "the clip selector to switch clipping on")
        later = assert_frozen_layer_stopped_while_training_continued(page, settled, clipping)
        assert 0 < float(later["data-clip-scale"]) <= 1.0 + 1e-6   # after / before
        assert float(later["data-clip-threshold"]) == 1.0

        record_speed("JupyterLab", page)
        page.locator(".dltutor-status-line").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_jupyterlab.png"))
        page.locator(".dltutor-pause").click()
        wait_for_status(page, lambda a: a["data-running"] == "0", "pause to stop training")
    except BaseException:
        save_failure(page, "jupyterlab", [server])
        raise
    finally:
        server.stop()
    assert (notebooks / NOTEBOOK).exists()


def test_voila_app_play_and_freeze(workdir, page):
    notebooks, env = workdir
    server, address = start_voila(APP_NOTEBOOK, notebooks, env, "voila-server.log")
    try:
        open_lab_page(page, address)
        assert "Try this" in page.locator(".dltutor-help").inner_text()
        settled = press_play_and_freeze_layer_2(page)
        assert_frozen_layer_stopped_while_training_continued(page, settled)
        record_speed("Voila", page)
        page.locator(".dltutor-status-line").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_voila.png"))
        # The demo picker replaces the lab: a fresh one, with its own layers and speed.
        page.locator(".dltutor-demo select").select_option("exploding gradients")
        switched = wait_for_status(
            page, lambda a: a["data-step"] == "0" and "12" in a["data-layer-keys"].split(),
            "the demo picker to show the exploding-gradients lab")
        assert switched["data-running"] == "0" and switched["data-pace"] == "2.0"
        assert "global norm" in page.locator(".dltutor-help").inner_text()
        page.locator(".dltutor-plots canvas").first.wait_for(state="visible", timeout=30_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "browser_voila_exploding.png"), full_page=True)
        # On a phone's width the panels stack, each as wide as the page allows.
        page.set_viewport_size({"width": 412, "height": 900})
        page.wait_for_timeout(800)
        boxes = page.locator(".dltutor-chart canvas").evaluate_all(
            "cs => cs.map(c => { const r = c.getBoundingClientRect(); "
            "return [r.left, r.top, r.width]; })")
        assert len(boxes) == 5                                  # four panels and the boundary
        assert len({round(left) for left, _, _ in boxes}) == 1  # one column
        assert all(width <= 412 for _, _, width in boxes)
        page.screenshot(path=str(ARTIFACTS / "browser_voila_phone.png"))
    except BaseException:
        save_failure(page, "voila", [server])
        raise
    finally:
        server.stop()



def marks_overlap_or_cover_data(page) -> list[str]:
    """What is wrong with the marks' labels in every panel: a label outside the panel, over
    the plot (the data), or overlapping another label. Empty when they are all readable."""
    problems = []
    for index, canvas in enumerate(page.locator(".dltutor-chart canvas[data-mark-labels]").all()):
        labels = json.loads(canvas.get_attribute("data-mark-labels"))
        box = json.loads(canvas.get_attribute("data-plot-box"))
        for i, a in enumerate(labels):
            if a["x"] < 0 or a["x"] + a["w"] > box["width"]:
                problems.append(f"panel {index}: {a['text']!r} is cut off at the edge")
            if a["y"] + a["h"] > box["top"]:
                problems.append(f"panel {index}: {a['text']!r} covers the plot")
            for b in labels[i + 1:]:
                if (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
                        and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]):
                    problems.append(f"panel {index}: {a['text']!r} overlaps {b['text']!r}")
    return problems


def test_voila_marks_and_numbers_stay_readable(workdir, page):
    """Many controls changed within a few steps: every mark's label stays in the lane above its
    plot, inside the panel, overlapping no other; an exploding loss reads like 3.29e+25."""
    notebooks, env = workdir
    server, address = start_voila(APP_NOTEBOOK, notebooks, env, "voila-marks-server.log")
    try:
        open_lab_page(page, address)
        page.locator(".dltutor-demo select").select_option("exploding gradients")
        keys = wait_for_status(page, lambda a: "12" in a["data-layer-keys"].split(),
                               "the exploding-gradients lab")["data-layer-keys"].split()

        def step(count: int) -> None:
            before = as_int(status(page), "data-step")
            page.locator(".dltutor-step").click()
            wait_for_status(page, lambda a: as_int(a, "data-step") == before + count,
                            f"step {before + count}")

        step(1)
        # eight changes within three steps: freezes, an unfreeze, the clip mode
        for key in keys[:4]:
            page.locator(f".dltutor-freeze-{key} input[type=checkbox]").check()
        step(1)
        page.locator(f".dltutor-freeze-{keys[0]} input[type=checkbox]").uncheck()
        page.locator(".dltutor-clip-mode select").select_option(index=1)
        step(1)
        page.locator(f".dltutor-freeze-{keys[1]} input[type=checkbox]").uncheck()
        page.locator(f".dltutor-freeze-{keys[2]} input[type=checkbox]").uncheck()
        step(1)                                        # the plots are redrawn after a step
        page.wait_for_timeout(1000)
        page.locator(".dltutor-plots").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_voila_marks.png"), full_page=True)
        labels = json.loads(page.locator(".dltutor-chart canvas[data-mark-labels]").first
                            .get_attribute("data-mark-labels"))
        assert labels, "no mark labels were drawn"
        assert marks_overlap_or_cover_data(page) == []
        # At a phone's width the lane is narrower: still no overlap, nothing cut off.
        page.set_viewport_size({"width": 412, "height": 900})
        page.wait_for_timeout(800)
        page.locator(".dltutor-plots canvas").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_voila_marks_phone.png"))
        assert marks_overlap_or_cover_data(page) == []
        # Numbers in the status line are readable however large the loss grows: without
        # clipping the loss overflows within a few steps (then the lab stops with an error).
        page.locator(".dltutor-clip-mode select").select_option(index=0)
        huge = []
        for _ in range(8):
            page.locator(".dltutor-step").click()
            page.wait_for_timeout(600)
            attrs = status(page)
            if attrs["data-error"]:
                break
            if 1e6 < float(attrs["data-loss"]) < float("inf"):
                huge.append(page.locator(".dltutor-status").inner_text())
        assert huge, "the loss never grew past 1e6: nothing to check"
        for line in huge:
            assert "e+" in line and not re.search(r"\d{9,}", line), line
    except BaseException:
        save_failure(page, "voila-marks", [server])
        raise
    finally:
        server.stop()


def test_voila_chinese_lab_page_speaks_chinese_and_trains(workdir, page):
    """The Chinese edition's lab page: labels, help and status line in Chinese; play trains."""
    notebooks, env = workdir
    server, address = start_voila("zh/lab.zh.ipynb", notebooks, env, "voila-zh-server.log")
    try:
        open_lab_page(page, address)
        assert "试一试" in page.locator(".dltutor-help").inner_text()
        assert page.locator(".dltutor-play").inner_text().strip() == "播放"
        assert "冻结" in page.locator(".dltutor-lab").inner_text()
        assert "两个月牙" in page.locator(".dltutor-demo").inner_text()
        pace_to_max(page)
        page.locator(".dltutor-play").click()
        trained = wait_for_status(page, lambda a: as_int(a, "data-step") >= 50,
                                  "the Chinese lab to train after pressing 播放")
        line = page.locator(".dltutor-status").inner_text()
        assert "步数" in line and "损失" in line and float(trained["data-loss"]) > 0
        page.locator(".dltutor-pause").click()
        wait_for_status(page, lambda a: a["data-running"] == "0", "pause to stop training")
        # a freeze leaves a Chinese step marker; a refused lr a Chinese error in the status line
        key = trained["data-layer-keys"].split()[1]
        page.locator(f".dltutor-freeze-{key} input[type=checkbox]").check()
        page.locator(".dltutor-step").click()
        page.wait_for_timeout(1000)
        labels = page.locator(".dltutor-chart canvas[data-mark-labels]").first \
            .get_attribute("data-mark-labels")
        assert "已冻结" in labels, labels
        lr_box = page.locator(".dltutor-lr input")
        lr_box.fill("-1")
        lr_box.press("Enter")
        refused = wait_for_status(page, lambda a: bool(a["data-error"]), "the lab to refuse -1")
        line = page.locator(".dltutor-status").inner_text()
        assert "最近的错误：LabError：学习率必须是 >= 0 的数" in line, line
        assert refused["data-lr"] != "-1.0"
        page.locator(".dltutor-status-line").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_voila_zh.png"), full_page=True)
        page.set_viewport_size({"width": 412, "height": 900})
        page.wait_for_timeout(800)
        page.locator(".dltutor-status-line").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "browser_voila_zh_phone.png"))
    except BaseException:
        save_failure(page, "voila-zh", [server])
        raise
    finally:
        server.stop()
