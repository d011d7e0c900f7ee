"""Claims scoreboard: every claim of every method's paper, what our miniature measured, and the mechanical verdict."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend import catalog
from backend import claims as C
from ui.claims import load_records, summary_line
from ui.figures.claims import paper_board
from ui.layout import csv_download

st.title("Claims scoreboard")
st.markdown(
    "Every paper's claims, re-measured here on a miniature (small models, small data, one CPU thread). A verdict is "
    "never typed: it follows from the claim test's outcome (pass at the paper's setting: holds; pass only under a "
    "named deviation: holds with caveat; a pass whose recorded confidence interval of a paired difference contains "
    "zero: not resolved; an expected failure: does not hold on our miniature; no test: not measurable here, with the "
    "reason). `make claims` reruns the claim tests and rewrites the measured numbers."
)
st.markdown(summary_line())

records = load_records()
papers = C.paper_rows(records)
st.subheader("One row per paper: its headline claim")
st.caption(f"{len(papers)} papers, {sum(p['status'] == 'available' for p in papers)} with a page. Left: the verdict "
           "of the claim the paper leads with (marked `headline = true` in its claims record); right: the verdicts "
           "of all its claims.")
st.plotly_chart(paper_board(papers), key="claims_papers_fig")
with st.expander("The headline claims as a table", icon=":material/table:"):
    st.dataframe(pd.DataFrame(papers, columns=["page", "section", "headline", "paper", "here", "verdict", "tally"]),
                 hide_index=True, width="stretch", key="claims_papers_table",
                 column_config={"page": st.column_config.LinkColumn("paper", display_text=r"/(.*)"),
                                "headline": st.column_config.TextColumn("headline claim", width="large"),
                                "paper": st.column_config.TextColumn("paper's number (where)", width="medium"),
                                "here": st.column_config.TextColumn("here (measured)", width="medium")})

st.subheader("Every claim")
rows = C.rows(records)
counts = C.count_verdicts([])
for r in rows:
    counts[r["verdict"]] += 1
shown_verdicts = (C.HOLDS, C.CAVEAT, C.NOT_RESOLVED, C.DOES_NOT_HOLD, C.NOT_MEASURABLE)
cols = st.columns(len(shown_verdicts))
for col, verdict in zip(cols, shown_verdicts, strict=True):
    col.metric(verdict, counts[verdict])
others = {v: n for v, n in counts.items() if n and v in (C.FAILS, C.PENDING)}
if others:
    st.warning(", ".join(f"{n} claim(s): {v}" for v, n in others.items()))

left, right = st.columns(2)
sections = left.multiselect("Section", [s for s in catalog.SECTIONS if any(r["section"] == s for r in rows)],
                            key="claims_sections", placeholder="every section")
verdicts = right.multiselect("Verdict", [v for v in C.VERDICTS if counts[v]], key="claims_verdicts",
                             placeholder="every verdict")
shown = [r for r in rows if (not sections or r["section"] in sections) and (not verdicts or r["verdict"] in verdicts)]
st.caption(f"{len(shown)} of {len(rows)} claims shown.")

df = pd.DataFrame(shown, columns=["page", "section", "claim", "paper", "here", "verdict", "deviation", "why not",
                                  "setting", "command", "tests"])
st.dataframe(
    df, hide_index=True, width="stretch", key="claims_table",
    column_config={
        "page": st.column_config.LinkColumn("method", display_text=r"/(.*)"),
        "claim": st.column_config.TextColumn("claim", width="large"),
        "paper": st.column_config.TextColumn("paper's number (where)", width="medium"),
        "here": st.column_config.TextColumn("here (measured)", width="medium"),
        "why not": st.column_config.TextColumn("why it does not hold (the test's expected failure)", width="medium"),
    },
)
csv_download("Download the scoreboard (CSV)", df, "claims.csv", key="claims_csv")
