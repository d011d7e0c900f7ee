"""Streamlit pieces shared by the pages that decode the tiny reasoner: its grammar and a question's domain label."""

from __future__ import annotations

from typing import Any

import streamlit as st


def grammar_expander() -> None:
    """An expander with the tiny reasoner's documented grammar and its measured accuracy table."""
    from backend.reasoning.domain import GRAMMAR_MD

    with st.expander("The tiny reasoner's grammar (what it is trained and measured on)"):
        st.markdown(GRAMMAR_MD)
        from backend.reasoning.reasoner_eval import EVAL_FILE

        if EVAL_FILE.is_file():
            import json

            import pandas as pd

            rows = json.loads(EVAL_FILE.read_text())["rows"]
            st.dataframe(pd.DataFrame(rows), hide_index=True)


def domain_note(dom: dict[str, Any] | None, model: str = "tinyreasoner") -> None:
    """The question's label against the grammar: a caption in domain, a warning out of it (tiny reasoner only)."""
    if not dom or model != "tinyreasoner":
        return
    if dom["label"] == "in domain":
        st.caption(f"In domain: {dom['reason']}")
    else:
        st.warning(f"Out of domain for the tiny reasoner: {dom['reason']} The answer below is the model's "
                   "guess outside what it was trained and measured on.", icon=":material/travel_explore:")


@st.cache_resource(max_entries=1, show_spinner="Loading the tiny reasoner")
def tiny_reasoner() -> Any:
    """The shipped tiny reasoner, loaded once per server (the verifier pages share it)."""
    from backend.models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


@st.cache_resource(max_entries=1, show_spinner=False)
def candidate_cache() -> Any:
    """The shipped candidate cache of the verifier pages' presets (None when it is absent), read once per server."""
    from backend.reasoning.candidates import CandidateCache
    from backend.reasoning.t1.jobs import CACHE_FILE

    return CandidateCache(CACHE_FILE) if CACHE_FILE.is_file() else None
