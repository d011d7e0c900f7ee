"""Real-browser tests (one module: the ci tier runs a file on one xdist worker, so the suite shares one server):
every page from the navigation, an upload with a result, the upload cap, session isolation.

Every method page's main action in Chromium: open the page, press its primary button with the default preset, wait
for the job to finish, and check that a chart appeared and nothing failed; a screenshot of each result goes to
test-artifacts/. A link with query parameters opens a page with those settings and runs them.

The seconds from the click to the drawn result are written to test-artifacts/e2e-preset-times.json and printed at
the end (measured, not asserted: the machine's load decides them).
"""

from __future__ import annotations

import io
import json
import re
import time

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from backend import catalog

from .conftest import ARTIFACTS, wait_for_app

pytestmark = pytest.mark.e2e


def _png_bytes(seed: int = 0, size: int = 96) -> bytes:
    rng = np.random.default_rng(seed)
    arr = np.zeros((size, size, 3), np.uint8)
    arr[: size // 2] = (200, 60, 40)
    arr[size // 2 :] = (40, 90, 200)
    arr += rng.integers(0, 30, arr.shape, dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_home_and_every_page_from_navigation(page, server_url):
    page.goto(server_url)
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Method Lab")).to_be_visible()
    labels = ["Catalog", "Embedded models"] + [p.label for p in catalog.available()]
    for label in labels:
        more = page.get_by_test_id("stSidebarNavViewButton")  # long menus are folded behind "View N more"
        if more.count() and "more" in more.first.inner_text().lower():
            more.first.click()
        link = page.get_by_test_id("stSidebarNavLink").filter(has_text=label).first
        link.click()
        wait_for_app(page)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_role("heading").first).to_be_visible()


def _models_vision_upload_panel(page, server_url):
    """Open the models page's vision tab with "Upload your own" chosen; return the tab panel."""
    page.goto(f"{server_url}/models")
    wait_for_app(page)
    page.get_by_role("tab", name="Vision encoder").click()
    panel = page.get_by_role("tabpanel", name="Vision encoder")
    panel.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name="Upload your own").click()
    wait_for_app(page)
    return panel


def _open_models_vision_upload(page, server_url, data: bytes, name: str = "mine.png"):
    panel = _models_vision_upload_panel(page, server_url)
    panel.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": name, "mimeType": "image/png", "buffer": data}]
    )
    wait_for_app(page)
    return panel


def test_upload_image_shows_pca_map(page, server_url):
    panel = _open_models_vision_upload(page, server_url, _png_bytes())
    expect(panel.get_by_test_id("stFileChipName")).to_have_text("mine.png")
    panel.get_by_role("button", name="Show patch features").click()
    wait_for_app(page, timeout=180_000)
    expect(panel.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=180_000)


def test_upload_above_cap_is_refused(page, server_url, tmp_path):
    big = tmp_path / "huge.png"  # a file path, not a buffer: 21 MB through the Playwright pipe as base64 is slow
    with open(big, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.truncate(21 * 2**20)
    panel = _models_vision_upload_panel(page, server_url)
    panel.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(big))
    expect(panel.get_by_text("must be 20.0MB or smaller", exact=False).first).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_sessions_are_isolated(browser, server_url):
    a = browser.new_context().new_page()
    b = browser.new_context().new_page()
    try:
        panel_a = _open_models_vision_upload(a, server_url, _png_bytes(1), name="secret-a.png")
        expect(panel_a.get_by_test_id("stFileChipName")).to_have_text("secret-a.png")
        b.goto(f"{server_url}/models")
        wait_for_app(b)
        b.get_by_role("tab", name="Vision encoder").click()
        expect(b.get_by_text("secret-a.png")).to_have_count(0)
        expect(b.get_by_test_id("stFileChip")).to_have_count(0)
        expect(b.get_by_test_id("stPlotlyChart")).to_have_count(0)
    finally:
        a.context.close()
        b.context.close()

PRIMARY = "[data-testid='stBaseButton-primary'], [data-testid='stBaseButton-primaryFormSubmit']"
FINISHED = re.compile(r": (done in|stopped after) [0-9.]+ s")  # the label ui.runner.run_job gives its status
RESULT_TIMEOUT_MS = 300_000
TIMES: dict[str, float] = {}


def _pages() -> list[str]:
    """Every available method page; the watermark section last (its models are the largest to load)."""
    watermark = catalog.get("attribution").section
    return [p.id for p in sorted(catalog.available(), key=lambda p: p.section == watermark)]


@pytest.fixture(scope="module", autouse=True)
def preset_times():
    yield TIMES
    if TIMES:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "e2e-preset-times.json").write_text(json.dumps(TIMES, indent=2))
        print("\nDefault preset, click to drawn result (s): "
              + ", ".join(f"{k} {v:.1f}" for k, v in TIMES.items()))


def _visible_charts(page):
    return page.get_by_test_id("stPlotlyChart").filter(visible=True)


def _run_primary(page) -> float:
    """Press the first visible primary button and wait until its job's result is drawn; returns the seconds."""
    before = _visible_charts(page).count()
    button = page.locator(PRIMARY).filter(visible=True).first
    expect(button).to_be_enabled()
    t0 = time.monotonic()
    button.click()
    expect(page.get_by_text(FINISHED).first).to_be_visible(timeout=RESULT_TIMEOUT_MS)
    wait_for_app(page, timeout=RESULT_TIMEOUT_MS)
    expect(_visible_charts(page)).not_to_have_count(before, timeout=60_000)
    return time.monotonic() - t0


def _no_failure(page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    expect(page.get_by_text(re.compile(r": stopped after [0-9.]+ s"))).to_have_count(0)


@pytest.mark.parametrize("paper", _pages())
def test_default_preset_runs_in_the_browser(page, server_url, paper):
    page.goto(f"{server_url}/{paper}")
    wait_for_app(page)
    _no_failure(page)
    TIMES[paper] = round(_run_primary(page), 1)
    _no_failure(page)
    assert _visible_charts(page).count() >= 1
    _visible_charts(page).first.scroll_into_view_if_needed()  # the screenshot shows the result, not the header
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e-{paper}.png"))


def test_a_link_with_settings_reproduces_the_run(page, server_url):
    page.goto(f"{server_url}/dada?dada_iters=500&dada_dim=50&dada_sweep=false&dada_constraint=cube")
    wait_for_app(page)
    expect(page.get_by_test_id("stAlertContentWarning").filter(has_text="not valid here")).to_have_count(1)
    expect(page.get_by_role("slider", name="Iterations")).to_have_attribute("aria-valuetext", "500")
    expect(page.get_by_role("slider", name="Dimension d")).to_have_attribute("aria-valuetext", "50")
    expect(page.get_by_role("checkbox", name=re.compile("Also sweep rbar"))).not_to_be_checked()
    assert "dada_iters=500" in page.url and "dada_constraint" not in page.url  # the invalid value left the link
    _run_primary(page)
    _no_failure(page)
    expect(page.get_by_text(re.compile(r"d = 50, constraint none"))).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "e2e-dada-from-link.png"))
