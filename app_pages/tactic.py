"""Tactic page: sparse decode attention by target attention mass on SmolLM2's real attention, against Quest, exact
top-k and a sink + window baseline, with tokens, bytes and time next to quality; perplexity through the selectors."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.runtime import provenance
from backend.tokens.tactic import inputs, jobs
from backend.tokens.tactic.longctx import benchmark_speed
from backend.tokens.tactic.sparse_attention import SELECTORS
from ui.claims import claims_panel
from ui.figures import tactic as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("tactic", """
**Tactic** loads, for each decode query and head, just enough of the KV cache to cover a target share **P** of the
attention mass: keys are clustered once (K-means, clusters of 16), clusters are taken in order of q . centroid, and the
total mass is estimated from about 2.5 % sampled scores with a fitted curve y = a/x + b. Fixed-budget methods (Quest,
top-k, a window) load the same number of tokens for every head instead. Here the selectors run on SmolLM2-135M's real
post-RoPE attention over your text or a preset (or, in seconds and without a model, on seeded synthetic q, k, v of
its shapes).
""", details_md="""
**Setting.** The last N positions of the text act as decode queries, each over its causal prefix; the tokens before
them are the prefill that Tactic clusters (K-means per segment of 4,096 tokens) and Quest pages. Tactic gives the
tokens after the prefill full attention (the paper's rule for newly generated tokens), estimates the total mass from
a fixed sample of max(256, 2.5 %) keys (the paper's contexts give 400-2,400), and always loads the first token, an
attention sink that holds about half of the mass in SmolLM2's later layers: a rule of this page, not of the paper.
Fixed-budget selectors get, per layer and query, Tactic's mean tokens per head (**match**, the paper's equal-tokens
comparison) or the budget you set.

**Ablations** beside Tactic: the paper's algorithm without the sink rule, the sink rule alone (the first token and
the tokens after the prefill, nothing else), and Tactic's cluster order stopped at P x the *exact* total (what a
perfect estimate would load). The score-curve panel draws the fit exactly as the selector uses it (a >= 0; a
negative b ends the curve where it reaches zero).

**Needle.** The needle count is token recall: whether the planted passphrase's tokens are inside Tactic's loaded
set wherever the exact top-P set holds them. It does not check that the model retrieves the passphrase in its
answer.

**Costs.** Bytes are K and V rows of the GQA union (fp16, 2 bytes) plus the overheads: Tactic's centroids and sampled
keys, Quest's per-page min and max. Exact top-P and top-k need every score (they are references, not methods).
**Perplexity** runs the model with the selector plugged into every layer's attention (transformers'
`AttentionInterface`): the last positions attend through it, the prefill is dense.
""")
claims_panel("tactic")

SPEED_MD = """
`benchmarks/tactic.py` times one decode-attention step of one layer with SmolLM2's head shapes (9 query heads, 3 KV
heads, d = 64) on one CPU thread: Tactic's step that reads only what it selects (keys and values stored
cluster-contiguous at prefill, clusters read in centroid order, a fixed sample of max(256, 2.5 %) keys, all heads at
once) against torch's fused `scaled_dot_product_attention` over the whole cache, the two interleaved in one process.
SmolLM2 has 8,192 positions, so beyond 8K the keys are Gaussian like a real layer's and each head's query is scaled
so that the tokens it needs for P follow SmolLM2's measured sparsity (measured at 1K-8K, extrapolated: a mean of
1.6 % of the context at 32K, 1.2 % at 128K). The paper reports up to 5.14x with GPU kernels.
"""


def speed_summary(bench: dict) -> str:
    """The recorded speed table (``longctx.benchmark_speed``) in words: crossover, ratios, bytes, amortised."""
    if not bench:
        return "No recorded run: `OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tactic.py` writes the table."
    rows = bench["rows"]
    ratios = ", ".join(f"{r['ratio']:.2f}x at {r['tokens'] // 1024}K" for r in rows)
    amort = ", ".join(f"{r['amortised']:.2f}x at {r['tokens'] // 1024}K" for r in rows)
    cross = (f"the crossover is at about **{bench['crossover'] // 1024}K tokens**: Tactic's step is faster from there on"
             if bench["crossover"] else "Tactic's step is not faster than full attention at any measured length")
    return (f"Recorded run ({bench['date']}; load average {rows[0]['load']} during it): {cross}. Full / Tactic "
            f"(median of paired step ratios): **{ratios}**, reading {min(r['bytes'] for r in rows):.1%}-"
            f"{max(r['bytes'] for r in rows):.1%} of full attention's bytes. With the prefill clustering (segmented "
            f"K-means) amortised over 1,024 generated tokens: {amort}. The table, with the time of each arm, tokens "
            "read and quality on SmolLM2's real keys at 8K, is `benchmarks/results/tactic.md`.")


SIZES = {name: {f"tactic_{k}": list(v) if isinstance(v, tuple) else v for k, v in size.items()}
         for name, size in inputs.SIZES.items()}
TEXTS = {f"Preset: {label}": name for name, label in inputs.PRESETS.items()}
UPLOAD = "Upload your own"
src = bound(st.radio, "Text", [*TEXTS, UPLOAD], horizontal=True, key="tactic_src")
upload = None
if src == UPLOAD:
    upload = text_upload("tactic_upload",
                         help="The first N tokens are used; it needs at least the context length you choose.")
preset = TEXTS.get(src, "pydoc")
preset_choice("tactic", SIZES, horizontal=True)
for k, v in next(iter(SIZES.values())).items():  # widget values live in the session (set by the run-size choice)
    st.session_state.setdefault(k, v)
with st.form("tactic_form"):
    c1, c2, c3 = st.columns(3)
    n_tokens = c1.select_slider("Context (tokens)", jobs.CONTEXT_CHOICES, key="tactic_tokens")
    n_queries = c2.select_slider("Decode queries (last positions)", jobs.QUERY_CHOICES, key="tactic_queries")
    p = bound(c3.slider, "Target mass P", 0.5, 0.99, 0.9, 0.01, key="tactic_p")
    layers = st.multiselect("Layers", jobs.LAYER_CHOICES, key="tactic_layers")
    budget = bound(st.select_slider, "Budget of top-k / Quest / window (tokens per head; match = Tactic's mean)",
                   jobs.BUDGET_CHOICES, "match", key="tactic_budget")
    model_src = st.text_input("Model (blank = embedded SmolLM2-135M; or a Llama-family local folder / cached name)",
                              key="tactic_model").strip() or None
    go_run = st.form_submit_button("Capture attention and compare", icon=":material/filter_alt:", type="primary")


def _lm(preset_name: str) -> object:
    """The page's cached model for a run (None for a model-free preset without an upload: the job needs none)."""
    if upload is None and preset_name in inputs.MODEL_FREE:
        return None
    return get_model("smollm2", model_src)


if go_run:
    if src == UPLOAD and upload is None:
        st.error("Upload a UTF-8 text first, or choose a preset.", icon=":material/error:")
    elif not layers:
        st.error("Choose at least one layer.", icon=":material/error:")
    else:
        try:
            cfg = jobs.CompareConfig(preset=preset, tokens=int(n_tokens), queries=int(n_queries), p=float(p),
                                     layers=tuple(layers), budget=budget, model=model_src,
                                     text_name=f"the upload {upload[0]}" if upload else "the text")
            lm = _lm(preset)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
        else:
            res = run_job("Capturing SmolLM2 attention", jobs.run_compare, upload[1] if upload else None, cfg,
                          lm=lm, time_cap_s=600)
            if res is not None:
                res = res.to_json()
                st.session_state["tactic_result"] = res
                t = res["methods"]["tactic"]
                record_run("tactic", {"text": res["text"]["source"], "tokens": res["text"]["tokens"],
                                      "layers": ",".join(map(str, res["layers"])), "queries": res["queries"],
                                      "P": p, "budget": budget},
                           {"Tactic mass >= 0.85": t["share_mass_ge_threshold"],
                            "Tactic bytes / full": t["bytes_ratio"], "Tactic rel. error": t["rel_err_mean"],
                            "Quest rel. error": res["methods"].get("quest", {}).get("rel_err_mean")})

res = st.session_state.get("tactic_result")
if res:
    m = res["methods"]
    t = m["tactic"]
    k = st.columns(4)
    k[0].metric("Tactic: cases with mass >= 0.85", f"{t['share_mass_ge_threshold']:.0%}",
                f"mean mass {t['mass_mean']:.3f}", delta_color="off")
    k[1].metric("Tactic KV bytes / full attention", f"{t['bytes_ratio']:.1%}", "overheads included",
                delta_color="off")
    f = res["fixed_median_budget"]
    k[2].metric("Fixed budget = median need", f"{f['budget']} tokens",
                f"{f['share_below_threshold']:.0%} of cases below 0.85", delta_color="off")
    k[3].metric("Tokens needed for P per head", f"{res['need']['min']:.0f} to {res['need']['max']:.0f}",
                f"median {res['need']['median']:.0f}", delta_color="off")
    if res.get("needle"):
        nd = res["needle"]
        st.info(f"Needle token recall: {nd['found']} of {nd['cases']} (layer, KV head, query) cases where the exact "
                "top-P set holds a needle token also hold it in Tactic's GQA union (whether the tokens are loaded, "
                "not whether the model retrieves the passphrase).", icon=":material/search:")
    rows = [{"selector": r["label"], "mean mass": round(r["mass_mean"], 4),
             "mass >= 0.85": round(r["share_mass_ge_threshold"], 3), "mass >= P": round(r["share_mass_ge_p"], 3),
             "relative error": round(r["rel_err_mean"], 4), "bound holds": r["bound_holds"],
             "tokens / head": round(r["tokens_per_head"], 1), "union / KV head": round(r["union_tokens_per_kv_head"], 1),
             "KV bytes / full": round(r["bytes_ratio"], 4), "selection s": round(r["seconds"], 3)}
            for r in m.values()]
    show_metrics_table(rows, key="tactic_table")
    st.caption(f"{res['text']['source']}: {res['text']['tokens']:,} tokens, layers {res['layers']}, "
               f"{res['queries']} queries, P = {res['p']:g}, budget {res['budget']}; capture "
               f"{res['capture_s']:.1f} s. Tactic's tokens / exact top-P tokens: "
               f"{res['tactic_vs_oracle_tokens']['ratio_of_means']:.2f}.")
    st.plotly_chart(figs.need_heatmap(res["need"]["per_layer_head_median"], res["layers"], res["p"]),
                    key="tactic_heat")
    c1, c2 = st.columns(2)
    c1.plotly_chart(figs.error_vs_tokens(res["points"]), key="tactic_err")
    c2.plotly_chart(figs.mass_box(res["points"], res["p"]), key="tactic_mass")

    @st.fragment
    def one_head() -> None:
        a, b = st.columns(2)
        layer = a.selectbox("Layer", res["layers"], key="tactic_pick_layer")
        head = b.selectbox("Head", list(range(res["heads"])), key="tactic_pick_head")
        key = f"{layer}/{head}"
        st.plotly_chart(figs.score_curve(res["curves"][key]), key="tactic_curve")
        st.plotly_chart(figs.positions(res["positions"][key], res["text"]["tokens"], res["prefill_tokens"],
                                       (res.get("needle") or {}).get("positions", [])), key="tactic_pos")

    one_head()
    c1, c2 = st.columns(2)
    with c1:
        json_download("Summary (JSON)", {kk: v for kk, v in res.items() if kk not in ("points", "positions")} | {
            "provenance": provenance(None, text=res["text"]["source"], p=res["p"], layers=res["layers"])},
            "tactic_run.json", key="tactic_json")
    with c2:
        csv_download("Per-selector table (CSV)", pd.DataFrame(rows), "tactic_selectors.csv", key="tactic_csv")

with st.expander("Decode speed: Tactic's step against fused full attention (benchmark)", icon=":material/timer:"):
    st.markdown(SPEED_MD)
    st.markdown(speed_summary(benchmark_speed()))

with st.expander("Perplexity through the selectors (the model runs with them; a minute or more)",
                 icon=":material/speed:"):
    with st.form("tactic_ppl_form"):
        e1, e2, e3 = st.columns(3)
        ppl_tokens = e1.select_slider("Text length (tokens)", jobs.PPL_TOKEN_CHOICES, 1024, key="tactic_ppl_tokens")
        ppl_last = e2.select_slider("Positions through the selector", jobs.PPL_LAST_CHOICES, 128,
                                    key="tactic_ppl_last")
        ppl_methods = e3.multiselect("Selectors", list(SELECTORS),
                                     [m for m in SELECTORS if SELECTORS.kind(m) != "ablation"],
                                     format_func=SELECTORS.label, key="tactic_ppl_methods")
        go_ppl = st.form_submit_button("Run perplexity", icon=":material/play_arrow:")
    if go_ppl:
        try:  # T + 1 token ids give T predicted positions
            ppl_cfg = jobs.PerplexityConfig(preset=preset, tokens=int(ppl_tokens) + 1, last=int(ppl_last), p=float(p),
                                            budget=budget, methods=tuple(ppl_methods) or ("tactic",),
                                            model=model_src,
                                            text_name=f"the upload {upload[0]}" if upload else "the text")
            lm = get_model("smollm2", model_src)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
        else:
            out = run_job("Perplexity through sparse attention", jobs.run_perplexity, upload[1] if upload else None,
                          ppl_cfg, lm=lm, time_cap_s=900)
            if out is not None:
                st.session_state["tactic_ppl"] = out.to_json()
    if out := st.session_state.get("tactic_ppl"):
        st.plotly_chart(figs.ppl_vs_bytes(out), key="tactic_ppl_fig")
        prow = [{"selector": "dense", "perplexity": round(out["dense"]["perplexity"], 4), "vs dense": "",
                 "KV bytes / dense": 1.0, "tokens / head": round(out["dense"]["tokens"], 1),
                 "seconds": round(out["dense"]["seconds"], 2)}]
        prow += [{"selector": r["label"], "perplexity": round(r["perplexity"], 4), "vs dense": f"{r['ppl_ratio'] - 1:+.2%}",
                  "KV bytes / dense": round(r["bytes_ratio"], 4), "tokens / head": round(r["tokens"], 1),
                  "seconds": round(r["seconds"], 2)} for r in out["methods"].values()]
        show_metrics_table(prow, key="tactic_ppl_table")
        json_download("Perplexity (JSON)", out, "tactic_ppl.json", key="tactic_ppl_json")
show_history("tactic")
