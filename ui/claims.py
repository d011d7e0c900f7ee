"""The "Paper vs here" panel every method page shows, and the loaders the claims scoreboard and the home page share.

The panel reads the method's claims record (``claims/<id>.toml`` + ``claims/<id>.measured.json`` through
``backend.claims``): per claim the paper's statement and number, our numbers, the mechanical verdict as a badge, the
setting and the named deviation, and the command that reproduces it.
"""

from __future__ import annotations

import streamlit as st

from backend import claims as C


def _stamp(method: str) -> tuple[float, float]:
    """Modification times of the two parts: the cache below reloads a record when either changes."""
    spec, measured = C.spec_path(method), C.measured_path(method)
    return (spec.stat().st_mtime if spec.is_file() else 0.0,
            measured.stat().st_mtime if measured.is_file() else 0.0)


@st.cache_data(max_entries=64, show_spinner=False)
def _record(method: str, stamp: tuple[float, float]) -> C.Record:  # noqa: ARG001 - stamp keys the cache
    return C.load(method)


def load_record(method: str) -> C.Record:
    return _record(method, _stamp(method))


def load_records() -> dict[str, C.Record]:
    return {m: load_record(m) for m in C.methods()}


def verdict_badge(verdict: str) -> None:
    st.badge(verdict, color=C.VERDICT_COLORS.get(verdict, "gray"))


def summary_line() -> str:
    """"N of M claims hold on our miniatures" with the other verdicts' counts."""
    holds, total, counts = C.summary(load_records())
    rest = ", ".join(f"{n} {v}" for v, n in counts.items() if n and v not in (C.HOLDS, C.CAVEAT))
    caveat = f" ({counts[C.CAVEAT]} with a caveat)" if counts[C.CAVEAT] else ""
    return f"**{holds} of {total} claims hold on our miniatures**{caveat}" + (f"; {rest}." if rest else ".")


def _claim_block(c: C.Claim) -> None:
    with st.container(border=True):
        left, right = st.columns([5, 2])
        left.markdown(f"**{c.claim}**")
        with right:
            verdict_badge(c.verdict)
        st.markdown(f"Paper: {c.paper_number} *({c.where})*")
        if c.verdict == C.NOT_MEASURABLE:
            st.markdown(f"Here: not measured. {c.reason}")
        elif c.numbers:
            st.markdown("Here: " + C.format_numbers(c.numbers))
        elif c.verdict == C.PENDING:
            st.markdown("Here: not measured yet (`make claims` writes the measured part).")
        st.caption(f"Our setting: {c.setting}")
        if c.deviation:
            st.caption(f"Deviation from the paper's setting: {c.deviation}")
        for r in c.expected_failures:
            when = "recorded in the test, run by `make test-full`" if not r.run else "measured"
            st.caption(f"Expected failure ({r.tier} tier, {when}): {r.xfail_reason}")
        if c.commands:
            st.code("\n".join(c.commands), language="bash")
        elif c.tests:
            st.caption("Tests: " + ", ".join(f"`{t}`" for t in c.tests))


def claims_panel(method: str) -> None:
    """The "Paper vs here" expander of ``app_pages/<method>.py``: every claim of the method's record."""
    try:
        rec = load_record(method)
    except (FileNotFoundError, C.ClaimsError) as exc:
        st.warning(f"No readable claims record for `{method}`: {exc}")
        return
    counts = rec.counts()
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    with st.expander(f"Paper vs here: {len(rec.claims)} claims ({tally})", icon=":material/fact_check:"):
        when = f" Measured on {rec.measured_date}, commit `{rec.measured_commit}`." if rec.measured_date else ""
        st.caption("Each claim of the paper, re-measured on our miniature by the test named below; the verdict follows "
                   "from the test's outcome (never typed)." + when)
        for c in rec.claims:
            _claim_block(c)
        # a plain link (not st.page_link): a page opened on its own, as AppTest does, has no navigation to resolve
        st.markdown("[Every method's claims: the scoreboard](/claims)")
