"""The claims scoreboard (/claims), the home page's counts line and one method page's "Paper vs here" panel."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from backend import catalog
from backend import claims as C

from .conftest import ROOT, open_page


def _table(at):
    return at.dataframe[-1].value  # the table of every claim (the first is the table of headline claims)


def test_scoreboard_lists_every_claim_and_filters():
    at = open_page("claims")
    assert not at.exception and not at.error
    records = C.load_all()
    total = sum(len(r.claims) for r in records.values())
    df = _table(at)
    assert len(df) == total
    assert set(df["page"]) == {f"/{m}" for m in records}
    assert set(df["verdict"]) <= set(C.VERDICTS)
    papers = at.dataframe[0].value
    assert len(papers) == len(catalog.PAPERS) and at.get("plotly_chart")
    assert set(papers["verdict"]) <= {*C.VERDICTS, C.PLANNED}
    planned = [p.id for p in catalog.PAPERS if p.id not in records]
    assert (papers["verdict"] == C.PLANNED).sum() == len(planned)
    holds, _, counts = C.summary(records)
    assert any(f"{holds} of {total} claims hold" in m.value for m in at.markdown)
    shown = {m.label: m.value for m in at.metric}
    assert shown[C.HOLDS] == str(counts[C.HOLDS]) and shown[C.NOT_MEASURABLE] == str(counts[C.NOT_MEASURABLE])

    section = catalog.get("dada").section
    at.multiselect(key="claims_sections").set_value([section]).run()
    df = _table(at)
    assert 0 < len(df) < total and set(df["section"]) == {section}

    at.multiselect(key="claims_sections").set_value([]).run()
    verdict = at.multiselect(key="claims_verdicts").options[0]
    at.multiselect(key="claims_verdicts").set_value([verdict]).run()
    df = _table(at)
    assert len(df) == counts[verdict] and set(df["verdict"]) == {verdict}


def test_home_shows_the_counts_line():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)  # home's page links need the router
    at.run()
    assert not at.exception
    holds, total, _ = C.summary(C.load_all())
    assert any(f"{holds} of {total} claims hold on our miniatures" in m.value for m in at.markdown)


def test_method_page_shows_its_panel():
    at = open_page("dada")
    assert not at.exception
    rec = C.load("dada")
    panel = [e for e in at.expander if e.label.startswith("Paper vs here")]
    assert len(panel) == 1 and f"{len(rec.claims)} claims" in panel[0].label
    text = " ".join(m.value for m in panel[0].markdown)
    for c in rec.claims:
        assert c.claim in text
