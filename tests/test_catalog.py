"""The catalog is the single registry: every page file is registered and every registered page exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from backend import catalog

ROOT = Path(__file__).resolve().parent.parent
PAPERS_DIR = ROOT.parent / "shared" / "papers"


def test_ids_unique_and_slugs():
    ids = [e.id for e in (*catalog.TOOLS, *catalog.PAPERS)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+", i) for i in ids)


def test_all_38_papers_with_sections():
    assert len(catalog.PAPERS) == 38
    assert {p.section for p in catalog.PAPERS} <= set(catalog.SECTIONS)
    assert len({p.abstract for p in catalog.PAPERS}) == 38
    for p in catalog.PAPERS:
        assert p.summary and len(p.summary) <= 160 and "\n" not in p.summary


def test_abstract_references_resolve():
    if not PAPERS_DIR.is_dir():
        import pytest

        pytest.skip("shared/papers is not beside the checkout")
    for p in catalog.PAPERS:
        lines = [ln for ln in (PAPERS_DIR / p.abstract[0]).read_text().splitlines()[1:] if ln.strip()]
        assert 1 <= p.abstract[1] <= len(lines), p.id


def test_page_files_match_registry():
    registered = {e.page for e in catalog.TOOLS} | {p.page for p in catalog.PAPERS if p.page}
    on_disk = {f"app_pages/{f.name}" for f in (ROOT / "app_pages").glob("*.py")}
    assert on_disk - registered == set(), "page files not registered in backend/catalog.py"
    assert registered - on_disk == set(), "registered pages without a file"


def test_method_ids_of_the_issues():
    ids = {p.id for p in catalog.PAPERS}
    assert {"attribution", "rewatermark", "sigmark", "glot", "pruning", "illava", "crowd", "nowcast",
            "futurefill", "dada", "softbon", "dualrs"} <= ids


def test_cli_groups_are_catalog_ids():
    from backend.__main__ import build_parser

    parser = build_parser()
    groups = next(a for a in parser._actions if a.dest == "group").choices
    assert set(groups) == set(catalog.cli_modules())


def test_app_and_catalog_do_not_import_torch():
    code = (
        "import sys, runpy; sys.path.insert(0, '.');"
        "import backend.catalog, backend.runtime, backend.io, backend.__main__;"
        "from streamlit.testing.v1 import AppTest;"
        "at = AppTest.from_file('app.py', default_timeout=30); at.run();"
        "assert not at.exception, at.exception;"
        "heavy = [m for m in ('torch', 'transformers', 'diffusers') if m in sys.modules];"
        "assert not heavy, heavy; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
