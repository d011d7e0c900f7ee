"""Real-browser tests: every page from the navigation, an upload with a result, the upload cap, session isolation."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from backend import catalog

from .conftest import wait_for_app

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
