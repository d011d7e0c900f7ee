"""LAION audit: a caption audit for your own corpus, and how data bias transfers to a small dual encoder."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.data.laionaudit import inputs as I
from backend.data.laionaudit import jobs as J
from backend.data.laionaudit.captions import ENCODINGS, LIMITS
from backend.data.laionaudit.lexicon import CONCEPT_LISTS, CRIME, IDENTITY
from backend.data.laionaudit.transfer import FACTOR_LABELS, FACTORS, SETTINGS, ladder
from backend.errors import InputError
from ui.claims import claims_panel
from ui.figures import laionaudit as figs
from ui.inputs import decoded, upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("laionaudit", """
The paper labels every person in LAION-400M and shows that a linear fit of how often a concept co-occurs with
women rather than men in the data explains 60-70 % of CLIP's gender bias for it. Here you can **audit your own
captions** (who is mentioned, with which concepts, PMI with intervals, negative and crime-related wording), and see the
**transfer** on a planted corpus of procedural figures where a small dual encoder is trained on captions whose
concept-gender rates are set, then made noisier, confounded or amplified.
""", details_md="""
**Identity terms.** Perceived gender and age come from caption words only (`woman`, `he`, `grandmother`, ...; the
list is under *Lexicon*). They say what the caption's writer stated, nothing about the person: binary gender words
only, no names, English only, pronouns count ("her book" is female), `boy` / `girl` count for gender and for child.
The skew statistics use single-gender captions (one gender's words only). The paper instead labels the people in the
images with classifiers and a consensus of three multimodal LLMs; race/ethnicity is not audited here, because no
caption lexicon can stand for it.

**Concepts.** Built-in lists (occupations, activities, objects, settings, attributes) plus the corpus's own frequent
words and two-word phrases (no parser or topic model runs offline; the paper uses SAE topics). PMI(g, c) =
log(n(g, c) N / (n(g) n(c))) over captions, with a delta-method 95 % interval; the female share of a concept has a
Wilson interval. Negative sentiment is VADER's lexicon summed over a caption's words (VADER's rules optional for up to
50,000 captions); crime is a caption holding a crime-lexicon word.

**Transfer miniature.** 20,000 figures (24 x 24 px; hair length and dress/trousers are the visible gender cues, hair
colour the age cue, an icon beside the figure the concept) with captions naming the concept and, in 30 %, the gender.
Each of 30 concepts has a planted female rate. A dual encoder (tiny CNN + bag-of-words text tower, 9,873 parameters)
is trained with CLIP's contrastive loss, three seeds per setting (`python -m backend.train laionaudit`). Model bias
d(c) is the standardised difference of the cosine of the concept's prompt to clean female and male figures.
*Attribute noise* makes the visible cues random; *age confounding* ties concepts to age, which is correlated with
gender in the population; *reporting amplification* makes the figures of captions that do not state a gender follow
an amplified rate (the stereotyped case goes unsaid).
""")
claims_panel("laionaudit")

@st.cache_resource(max_entries=1, show_spinner="Loading MiniLM")
def _minilm():  # noqa: ANN202
    from backend.models.text import load_text_encoder

    return load_text_encoder()


MODES = ["Caption audit", "Bias transfer (planted corpus)", "MiniLM association"]
mode = bound(st.radio, "Analysis", MODES, horizontal=True, key="laionaudit_mode")
UPLOAD = "Upload your own (CSV or Parquet)"


def _corpus(prefix: str, upload_key: str):  # noqa: ANN202 - (AuditConfig settings, captions or None, ok)
    choice = bound(st.selectbox, "Captions", list(I.PRESETS) + [UPLOAD], key=f"{prefix}_preset")
    if choice != UPLOAD:
        return dict(I.PRESETS[choice]), None, True
    c1, c2 = st.columns(2)
    column = c1.text_input("Caption column (empty: caption, text, alt_text, ...)", "", key=f"{prefix}_column")
    encoding = c2.selectbox("Encoding (CSV)", ENCODINGS, key=f"{prefix}_encoding")
    st.caption(f"Limits: {LIMITS}.")
    got = upload("captions", "Caption file", key=upload_key)
    caps = decoded("captions", got, column=column.strip() or None, encoding=encoding)
    if caps is not None:
        st.caption(f"{got[0]}: {len(caps.texts):,} captions from column “{caps.column}” ({caps.empty:,} empty rows "
                   f"dropped; columns: {', '.join(caps.columns[:8])}). " + " ".join(caps.notes))
    return {"source": "upload"}, caps, caps is not None


if mode == MODES[0]:
    with st.expander("Lexicon: identity terms, concept lists, crime words"):
        st.markdown("\n".join(f"- **{g}**: {', '.join(ws)}" for g, ws in IDENTITY.items()))
        st.markdown("\n".join(f"- *{n}*: {', '.join(ws)}" for n, ws in CONCEPT_LISTS.items()))
        st.markdown(f"- crime: {', '.join(CRIME)}")
    base, caps, ok = _corpus("laionaudit", "laionaudit_upload")
    with st.form("laionaudit_form"):
        c1, c2, c3 = st.columns(3)
        lists = c1.multiselect("Concept lists", list(CONCEPT_LISTS), list(base.get("lists", CONCEPT_LISTS)),
                               key="laionaudit_lists")
        ngrams = c2.checkbox("Add the corpus's own words and phrases", base.get("ngrams", True), key="laionaudit_ngrams")
        min_count = c3.select_slider("Minimum captions per concept", [1, 3, 5, 10, 20, 50, 100], 10,
                                     key="laionaudit_min")
        extra = st.text_input("Extra concepts (comma-separated)", "", key="laionaudit_extra")
        go = st.form_submit_button("Run the audit", icon=":material/fact_check:", type="primary", disabled=not ok)
    if go:
        try:
            cfg = J.AuditConfig(**(base | {"lists": tuple(lists), "ngrams": bool(ngrams), "min_count": int(min_count),
                                          "extra": tuple(e for e in extra.split(",") if e.strip())}))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["laionaudit_audit_config"] = cfg
            res = run_job("Audit", J.run_audit, cfg, caps, time_cap_s=900)
            if res is not None:
                st.session_state["laionaudit_audit"] = res.to_dict()
                record_run("laionaudit", {"source": cfg.source, "captions": res.costs["captions"]},
                           {"concepts": res.costs["concepts"], "captions/s": res.costs["captions_per_s"]})
    if r := st.session_state.get("laionaudit_audit"):
        g, co = r["groups"], r["costs"]
        show_metrics_table([{"captions": co["captions"], **{k: v["captions"] for k, v in g.items()},
                             "concepts": co["concepts"], "counting s": co["count_s"],
                             "captions / s": co["captions_per_s"]}], key="laionaudit_counts")
        base_share = g["single_female"]["captions"] / max(1, g["single_female"]["captions"] +
                                                           g["single_male"]["captions"])
        a, b = st.columns([2, 3])
        a.markdown("**Most skewed concepts** (female share of single-gender captions, 95 % interval)")
        a.plotly_chart(figs.skew_bars(r["concepts"], r["top_female"], r["top_male"], base_share), key="laionaudit_skew")
        b.markdown("**PMI(identity group, concept)** for the most frequent concepts")
        b.plotly_chart(figs.pmi_heatmap(r["heatmap"]), key="laionaudit_heat")
        b.plotly_chart(figs.rate_bars(r["sentiment"], r["crime"]), key="laionaudit_rates")
        s, c = r["sentiment"]["male_minus_female"], r["crime"]["male_minus_female"]
        st.caption(f"Male minus female (single-gender captions): negative sentiment {s['difference']} "
                   f"[{s['low']}, {s['high']}], crime terms {c['difference']} [{c['low']}, {c['high']}]. "
                   + " ".join(r["notes"]))
        df = pd.DataFrame(r["concepts"])
        with st.expander(f"Skew table: {len(df):,} concepts"):
            st.dataframe(df.sort_values("female_share", na_position="last"), hide_index=True, key="laionaudit_table")
        d1, d2 = st.columns(2)
        with d1:
            csv_download("Concept table (CSV)", df, "laionaudit_concepts.csv", key="laionaudit_csv")
        with d2:
            json_download("Audit (JSON)", r, "laionaudit_audit.json", key="laionaudit_json")
elif mode == MODES[1]:
    c1, c2 = st.columns([1, 2])
    factor = bound(c1.radio, "Limiting factor", list(FACTORS), format_func=FACTOR_LABELS.get,
                   key="laionaudit_factor")
    steps = ladder(factor)
    strength = bound(c2.select_slider, f"Strength of {FACTOR_LABELS[factor]} (shown in the scatter)",
                     [s for s, _ in steps], key="laionaudit_strength")
    if st.button("Evaluate the shipped encoders", icon=":material/scatter_plot:", type="primary"):
        cfg = J.TransferConfig(settings=tuple(n for _, n in steps) + ("shuffled",))
        st.session_state["laionaudit_transfer_config"] = cfg
        res = run_job("Transfer", J.run_transfer, cfg, time_cap_s=300)
        if res is not None:
            st.session_state["laionaudit_transfer"] = res.to_dict()
            record_run("laionaudit", {"factor": factor}, {n: s["r2_mean"] for n, s in res.settings.items()})
    if t := st.session_state.get("laionaudit_transfer"):
        names = [n for _, n in ladder(factor) if n in t["settings"]]
        if not names:
            st.info("Press the button to evaluate this factor's settings.")
        else:
            chosen = dict((s, n) for s, n in ladder(factor)).get(strength, names[0])
            ys = [v for n in t["settings"] for s in t["settings"][n]["seeds"] for v in s["model_bias"]]
            yr = (min(ys) - 0.1, max(ys) + 0.1)
            a, b = st.columns(2)
            for col, name in ((a, chosen), (b, "shuffled")):
                st_ = t["settings"][name] | {"concepts": t["concepts"]}
                col.plotly_chart(figs.transfer_scatter(st_, yr, f"{name}: mean R² {st_['r2_mean']:.2f}"),
                                 key=f"laionaudit_scatter_{name}")
            st.plotly_chart(figs.r2_ladders({factor: t["ladders"][factor]}, t["settings"]["shuffled"]["r2_mean"]),
                            key="laionaudit_ladder")
            st.markdown("**The same fit with the baseline measures of data bias** (mean R² over seeds)")
            st.plotly_chart(figs.measure_bars(t["settings"]), key="laionaudit_measures")
            st.caption(f"Each encoder has {t['costs']['parameters_per_encoder']:,} parameters and trained in about "
                       "30-60 s on one CPU thread; evaluating the shipped encoders took "
                       f"{t['costs']['seconds']:.1f} s. The planted base corpus's audit: most female-skewed "
                       f"{', '.join(t['audit']['top_female'])}; most male-skewed {', '.join(t['audit']['top_male'])}.")
            with st.expander("Figures of this setting"):
                from backend.data.laionaudit.planted import sample

                cfg0 = SETTINGS[chosen].config
                corp = sample(type(cfg0)(**(cfg0.to_dict() | {"images": 60})))
                st.image(figs.figure_strip(corp.images[:10]), caption=" | ".join(corp.captions[:10]))
            rows = [{"setting": n, "factor": s["factor"], "strength": s["strength"], "mean R²": s["r2_mean"],
                     "min R²": s["r2_min"], "max R²": s["r2_max"]} for n, s in t["settings"].items()]
            show_metrics_table(rows, key="laionaudit_r2_table")
            json_download("Transfer (JSON)", t, "laionaudit_transfer.json", key="laionaudit_tjson")
else:
    base, caps, ok = _corpus("laionaudit_assoc", "laionaudit_assoc_upload")
    st.caption("MiniLM (all-MiniLM-L6-v2, embedded) embeds each concept and the words woman, female, she, girl, lady "
               "and man, male, he, boy, gentleman; its association is the mean cosine to the first minus the second. "
               "It is compared with the concept's data bias in this corpus, as an association: MiniLM was not "
               "trained on it.")
    if st.button("Compare with MiniLM", icon=":material/hub:", type="primary", disabled=not ok):
        try:
            cfg = J.AssociationConfig(audit=J.AuditConfig(**base))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            res = run_job("MiniLM association", J.run_association, cfg, caps, _minilm(), time_cap_s=600)
            if res is not None:
                st.session_state["laionaudit_assoc"] = res.to_dict()
    if q := st.session_state.get("laionaudit_assoc"):
        st.plotly_chart(figs.association_scatter(q), key="laionaudit_assoc_fig")
        st.caption(f"{len(q['rows'])} concepts; Pearson r {q['pearson']}, Spearman {q['spearman']}, R² "
                   f"{q['fit']['r2']:.3f}; {q['costs']['seconds']:.1f} s with MiniLM's "
                   f"{q['costs']['encoder_parameters']:,} parameters.")
        csv_download("Association (CSV)", pd.DataFrame(q["rows"]), "laionaudit_minilm.csv", key="laionaudit_acsv")
show_history("laionaudit")
