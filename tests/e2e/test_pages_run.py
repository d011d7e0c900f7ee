"""Every method page's main action in Chromium: open the page, press its primary button with the default preset, wait
for the job to finish, and check that a chart appeared and nothing failed; a screenshot of each result goes to
test-artifacts/. A link with query parameters opens a page with those settings and runs them.

The seconds from the click to the drawn result are written to test-artifacts/e2e-preset-times.json and printed at
the end (measured, not asserted: the machine's load decides them)."""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import expect

from backend import catalog

from .conftest import ARTIFACTS, wait_for_app

pytestmark = pytest.mark.e2e

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
