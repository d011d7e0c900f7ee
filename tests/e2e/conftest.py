"""Browser tests: one `streamlit run` server for the session on a free port, Debian's Chromium through Playwright.

Readiness follows Streamlit's own e2e helpers (STREAMLIT_NOTES section 11). A failing test saves a screenshot under
test-artifacts/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("METHOD_LAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def server_url():
    """One server for the session, started as the load benchmark starts it (its output in test-artifacts/)."""
    from benchmarks.load import streamlit_server

    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(log_dir=ARTIFACTS, log_name="e2e-server.log") as server:
        yield server.url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: `make install-test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Streamlit's readiness sequence: container attached, debounce, connected, script not running, no skeleton."""
    page.wait_for_selector("[data-testid='stAppViewContainer']", state="attached", timeout=timeout)
    page.wait_for_timeout(250)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout)
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)
