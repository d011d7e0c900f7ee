"""The catalog: every paper with its section, one-line summary and status, linking the pages that exist."""

from __future__ import annotations

import streamlit as st

from backend import catalog
from ui.claims import summary_line

st.title("Method Lab")
st.markdown(
    "Run, inspect and compare methods from ICLR 2026 papers on **your own inputs**, each next to the baselines its field "
    "expects, with honest costs (time, tokens, parameters) beside quality. Every page works offline on embedded default "
    "models and presets; nothing heavy runs until you press a button."
)
n_live = len(catalog.available())
c1, c2, c3 = st.columns(3)
c1.metric("Papers", len(catalog.PAPERS))
c2.metric("Pages available", n_live)
c3.metric("Sections", len(catalog.SECTIONS))

st.markdown(summary_line())
st.page_link("app_pages/claims.py", label="Claims scoreboard: every paper's claims, re-measured here",
             icon=":material/leaderboard:")
st.page_link("app_pages/models.py", label="Embedded models: what runs offline, and a live check on your input",
             icon=":material/memory:")

query = st.text_input("Filter", placeholder="title or keyword", key="catalog_filter").strip().lower()
only_live = st.toggle("Only pages that are available", key="catalog_only_live")

for section, papers in catalog.by_section().items():
    shown = [
        p for p in papers
        if (not only_live or p.status == "available")
        and (not query or query in f"{p.title} {p.summary} {p.id}".lower())
    ]
    if not shown:
        continue
    st.subheader(section)
    for p in shown:
        left, right = st.columns([5, 1])
        with left:
            if p.status == "available":
                st.page_link(p.page, label=f"**{p.title}**", icon=p.icon)
            else:
                st.markdown(f"**{p.title}**")
            st.caption(p.summary)
        right.badge("available" if p.status == "available" else "planned",
                    color="green" if p.status == "available" else "gray")
