"""Method Lab router: st.navigation over sections of pages, built from backend/catalog.py. No method code here, and
no torch import (pages import their backend lazily), so the catalog renders fast."""

from __future__ import annotations

import streamlit as st

from backend import catalog
from backend.runtime import default_threads

st.set_page_config(page_title="Method Lab", page_icon=":material/science:", layout="wide")


def build_pages() -> dict[str, list[st.Page]]:
    sections: dict[str, list[st.Page]] = {"Lab": []}
    for tool in catalog.TOOLS:
        sections["Lab"].append(
            st.Page(tool.page, title=tool.title, icon=tool.icon, url_path=tool.id, default=tool.id == "home")
        )
    for section, papers in catalog.by_section().items():
        live = [p for p in papers if p.status == "available"]
        if live:
            sections[section] = [st.Page(p.page, title=p.label, icon=p.icon, url_path=p.id) for p in live]
    return sections


with st.sidebar:
    st.caption(
        "Method Lab runs methods from ICLR 2026 papers on your own inputs, next to their baselines. "
        "Everything runs on this server's CPU with embedded models; uploads stay in your session."
    )
    st.caption(f"Heavy jobs run one at a time, {default_threads()} torch thread(s) each (`METHOD_LAB_THREADS`).")

st.navigation(build_pages()).run()
