"""AppTest: the router, the catalog home page and navigation to every registered page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from backend import catalog

ROOT = Path(__file__).resolve().parents[2]


def _app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    return at


def test_home_lists_every_paper():
    at = _app()
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    for p in catalog.PAPERS:
        assert p.summary in text, p.id
    assert at.metric[0].value == str(len(catalog.PAPERS))


def test_filter_and_only_available():
    at = _app()
    at.text_input(key="catalog_filter").set_value("watermark").run()
    assert not at.exception
    subheaders = [s.value for s in at.subheader]
    assert "Watermarking and provenance" in subheaders
    at.toggle(key="catalog_only_live").set_value(True).run()
    assert not at.exception


def test_every_page_opens_without_running_heavy_work():
    """Opening a page is instant: no exception, no model or job triggered before a button."""
    at = _app()
    pages = [t.page for t in catalog.TOOLS] + [p.page for p in catalog.available()]
    for page in pages:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert len(at.title) >= 1, page
