"""RCPU structured pruning page: prune SmolLM2 with a chosen score x compensation, compare with the dense model, browse
the shipped sweep, and study one layer's overfitting story live."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from backend.compression import corpus
from backend.compression.pruning import inputs, jobs
from backend.compression.pruning.jobs import metrics_rows
from backend.compression.pruning.lab import LAB_SCORES
from backend.compression.pruning.pruning import COMPENSATIONS, SCORES, PruneConfig, n_to_drop, pairing
from backend.errors import InputError
from backend.runtime import ASSETS, provenance
from ui.claims import claims_panel
from ui.figures import pruning as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("pruning", """
**What it does.** Structured pruning removes whole attention heads and MLP channels, then repairs each pruned
sublayer's output on a small calibration set. **RCPU** only allows a *rotation* of the kept weights (least squares
overfits the calibration tokens) and keeps the inputs that carry the principal output directions. The first tab is a
light run on the 6-layer MiniLM sentence encoder (seconds); the second prunes SmolLM2-135M (a minute or two).
""", details_md=f"""
**What it does.** Structured pruning removes whole attention heads and MLP channels of every decoder layer, then
repairs each pruned sublayer's output with a small calibration set. Least squares fits the calibration tokens too well;
**RCPU** only allows a *rotation* of the kept weights (Procrustes: norms and angles of the outputs are kept) and keeps
the inputs that carry the principal output directions (a *variance-aware* score). Baselines: Wanda-sp, FLAP
(fluctuation score + mean-bias compensation), ridge least squares (lambda 1e-4), no compensation.

**What you see.** SmolLM2-135M-Instruct (30 layers, 9 query heads over 3 key/value heads, 1,536 MLP channels).
With 9 heads a ratio rounds: ratio r drops int(9 r) heads per layer. A key/value head goes physically only when its 3
query heads go; other dropped heads are zeroed (numerically identical, counted as *effective* parameters).
Text: **{corpus.BUILTIN_NAME}** that ships with Python (about 113k tokens, split 70 % calibration / 30 % held-out), or
your own UTF-8 text split the same way. Perplexity is on held-out windows of 128 tokens (the paper's protocol), so it is
not comparable with the paper's WikiText-2 numbers. The pruned model is not kept; the CLI
(`python -m backend pruning run ... --out DIR`) writes it as a Hugging Face folder.
""")
claims_panel("pruning")

SCORE_KEYS, COMP_KEYS = list(SCORES), list(COMPENSATIONS)
LIGHT, FULL = inputs.PRESETS.values()  # the settings of the light (MiniLM) and the full (SmolLM2) run


@st.cache_data(max_entries=2, show_spinner=False)
def load_preset(name: str) -> dict | None:
    path = ASSETS / name
    return json.loads(path.read_text()) if path.is_file() else None


@st.cache_resource(max_entries=1)
def lab_store() -> dict:
    """Captured layer statistics of the built-in corpus (no user data), shared by sessions, at most 2 layers."""
    return {}


def lab_keep(layer: int, got: dict) -> None:
    """Keep a captured layer in the shared store (at most 2 layers)."""
    store = lab_store()
    while len(store) >= 2:
        store.pop(next(iter(store)), None)
    store[layer] = got


# The light run comes first: the same pruning on the 6-layer MiniLM encoder takes seconds, SmolLM2 a minute or two.
tab_enc, tab_run, tab_sweep, tab_lab = st.tabs(["Light: MiniLM encoder", "Full: SmolLM2-135M", "Sweep (shipped)",
                                                "One-layer lab"])

with tab_run:
    src = bound(st.radio, "Text", ["Built-in: Python reference docs", "Upload your own"], horizontal=True, key="pruning_src")
    upload_text, upload_name = None, None
    if src == "Upload your own":
        got = text_upload("pruning_upload",
                          help="Split 70 % calibration / 30 % held-out. N segments need N x 128 calibration tokens.")
        if got is not None:
            upload_name, upload_text = got
    with st.form("pruning_form"):
        c1, c2 = st.columns(2)
        score = bound(c1.selectbox, "Importance score", SCORE_KEYS, index=SCORE_KEYS.index(PruneConfig.score),
                      format_func=SCORES.label, key="pruning_score")
        comp = bound(c2.selectbox, "Compensation", COMP_KEYS, index=COMP_KEYS.index(PruneConfig.compensation),
                     format_func=COMPENSATIONS.label, key="pruning_comp")
        ratio = bound(c1.slider, "Prune ratio", 0.1, 0.5, FULL["ratio"], 0.05, format="%.2f", key="pruning_ratio")
        n_calib = bound(c2.select_slider, "Calibration segments N (x 128 tokens)", [8, 16, 32, 64, 128],
                        value=FULL["n_calib"], key="pruning_n")
        n_eval = bound(c1.slider, "Held-out windows for perplexity", 4, 32, FULL["n_eval"], 4, key="pruning_eval")
        prompt = bound(c2.text_input, "Prompt for the side-by-side generation", max_chars=300, key="pruning_prompt",
                       value=jobs.DEFAULT_PROMPT)
        model_src = st.text_input("Model (blank = embedded SmolLM2-135M; or a Llama-family local folder / cached "
                                  "Hugging Face name)", key="pruning_model").strip() or None
        submitted = st.form_submit_button("Prune and evaluate", icon=":material/content_cut:", type="primary")
    st.caption(f"On SmolLM2, ratio {ratio:.2f} drops {n_to_drop(ratio, 9)} of 9 heads and {n_to_drop(ratio, 1536)} "
               "of 1,536 MLP channels in every layer. On 2 CPU cores N = 32 takes about a minute, N = 128 several.")
    if submitted:
        if src == "Upload your own" and upload_text is None:
            st.error("Upload a UTF-8 text first, or choose the built-in text.", icon=":material/error:")
        else:
            texts = None if upload_text is None else jobs.Texts(text=upload_text, name=f"the upload {upload_name}")
            res = None
            try:
                cfg = PruneConfig(ratio=ratio, score=score, compensation=comp, n_calib=n_calib,
                                  propagate=pairing(comp).propagate)
                config = jobs.RunConfig(cfg, n_eval=n_eval, prompt=prompt, max_new_tokens=32, model=model_src)
                lm = get_model("smollm2", model_src)
            except InputError as err:
                st.error(str(err), icon=":material/error:")
            else:
                res = run_job("Pruning SmolLM2", jobs.run_prune, texts, config, lm, time_cap_s=900)
            if res is not None:
                st.session_state["pruning_result"] = res
                record_run("pruning", {"model": "SmolLM2-135M" if model_src is None else model_src,
                                       "score": score, "compensation": comp, "ratio": ratio, "N": n_calib,
                                       "held-out windows": n_eval, "text": res["settings"]["text_source"]},
                           {"perplexity": res["pruned"]["perplexity"], "dense perplexity": res["dense"]["perplexity"],
                            "effective parameters (M)": res["pruned"]["params_effective"] / 1e6,
                            "pruning seconds": res["prune_s"]}, seed=res["settings"]["seed"])
    res = st.session_state.get("pruning_result")
    if res:
        d, p, s = res["dense"], res["pruned"], res["settings"]
        m = st.columns(4)
        m[0].metric("Held-out perplexity", f"{p['perplexity']:.2f}",
                    f"{p['perplexity'] - d['perplexity']:+.2f} vs dense", delta_color="inverse")
        m[1].metric("Effective parameters", f"{p['params_effective'] / 1e6:.1f} M",
                    f"{p['params_effective'] / d['params_stored'] - 1:+.1%}", delta_color="off")
        n_heads = res["heads"]["per_layer"] * res["model"]["layers"]
        m[2].metric("Heads removed", f"{res['heads']['dropped_total']} / {n_heads}",
                    f"{res['heads']['groups_removed']} KV groups physically", delta_color="off")
        m[3].metric("Pruning time", f"{res['prune_s']:.0f} s", f"N = {s['n_calib']} x 128 tokens", delta_color="off")
        g1, g2 = st.columns(2)
        g1.markdown("**Dense model**")
        g1.text(d["generation"] or "(no prompt)")
        g2.markdown(f"**Pruned: {s['score_label']} + {s['compensation_label']}, ratio {s['ratio']:.2f}**")
        g2.text(p["generation"] or "(no prompt)")
        st.plotly_chart(figs.costs(d, p), key="pruning_costs")
        st.plotly_chart(figs.layer_errors(res["records"]), key="pruning_layers")
        st.plotly_chart(figs.kept_units(res["heads"]["head_keep"], res["channels"]["channel_keep"],
                                        res["model"]["heads"] // res["model"]["kv_heads"]), key="pruning_units")
        table = pd.DataFrame(metrics_rows(res))
        show_metrics_table(table.round(2), key="pruning_table")
        st.caption(f"Text: {s['text_source']}; {s['n_eval']} held-out windows of 128 tokens; seed {s['seed']}.")
        c1, c2 = st.columns(2)
        with c1:
            json_download("Metrics + recipe (JSON)", {k: v for k, v in res.items() if k != "channels"},
                          "pruning_run.json", key="pruning_json")
        with c2:
            csv_download("Per-layer errors (CSV)", pd.DataFrame(res["records"]).drop(columns=["top_singular"]),
                         "pruning_layers.csv", key="pruning_csv")

with tab_sweep:
    sweep = load_preset("pruning_sweep.json")
    if not sweep:
        st.info("The sweep table is not shipped yet: run `python -m backend.train pruning`.")
    else:
        ns = sorted({r["n_calib"] for r in sweep["rows"]})
        main_n = max(ns, key=lambda n: sum(r["n_calib"] == n for r in sweep["rows"]))
        user = st.session_state.get("pruning_result")
        star = ({"ratio": user["settings"]["ratio"], "perplexity": user["pruned"]["perplexity"],
                 "compensation": user["settings"]["compensation"]}
                if user and user["settings"]["n_calib"] == main_n and "Python" in user["settings"]["text_source"]
                else None)
        st.plotly_chart(figs.ppl_vs_ratio(sweep["rows"], sweep["dense"]["perplexity"], main_n, star), key="sw_ratio")
        st.plotly_chart(figs.ppl_vs_n(sweep["rows"], sweep["dense"]["perplexity"]), key="sw_n")
        df = pd.DataFrame(sweep["rows"])[["score", "compensation", "ratio", "n_calib", "perplexity",
                                          "params_effective", "heads_dropped", "prune_s"]].sort_values(
            ["n_calib", "ratio", "score", "compensation"])
        show_metrics_table(df.round(3), key="sw_table")
        st.caption(f"Dense perplexity {sweep['dense']['perplexity']:.2f} on {sweep['settings']['n_eval']} held-out "
                   f"windows; made by `python -m backend.train pruning` ({sweep['settings']['corpus']}).")
        csv_download("Sweep (CSV)", df, "pruning_sweep.csv", key="sw_csv")

with tab_lab:
    st.markdown("One layer of the **dense** model, sublayers studied on captured activations: calibration vs held-out "
                "output error as N grows. Least squares drives the calibration error down and the held-out error up "
                "at small N; the rotation cannot overfit as much (it has d(d-1)/2 degrees of freedom).")
    preset = load_preset("pruning_lab.json")
    live = st.toggle("Capture a layer live (about a minute)", key="lab_live")
    if live:
        with st.form("lab_form"):
            layer = st.slider("Layer", 0, 29, 15)
            go_lab = st.form_submit_button("Capture activations", icon=":material/science:")
        if go_lab:
            if layer not in lab_store() and (got := run_job("Capturing activations", jobs.run_lab, None,
                                                             jobs.LabConfig(layer=layer, sweep=False),
                                                             get_model("smollm2"))) is not None:
                lab_keep(layer, got)
            if layer in lab_store():
                st.session_state["lab_layer"] = layer
    c1, c2, c3, c4 = st.columns(4)
    l_ratio = c1.select_slider("Ratio", [0.1, 0.2, 0.3, 0.4, 0.5], 0.3, key="lab_ratio")
    lab_scores = sorted(LAB_SCORES, key=lambda s: s != PruneConfig.score)  # the default score first
    l_score = c2.selectbox("Score", lab_scores, format_func=SCORES.label, key="lab_score")
    l_sub = c3.radio("Sublayer", ["mlp", "attn"], format_func={"mlp": "down_proj", "attn": "o_proj"}.get,
                     key="lab_sub", horizontal=True)
    l_lam = c4.select_slider("Ridge lambda", [1e-6, 1e-4, 1e-2, 1.0, 100.0], 1e-4, key="lab_lam")
    if live and st.session_state.get("lab_layer") in lab_store():
        from backend.compression.pruning import lab

        cap = lab_store()[st.session_state["lab_layer"]]["captured"][l_sub]
        rows = lab.n_sweep(cap, l_ratio, l_lam, l_score)
        point = lab.study_point(cap, l_ratio, cap.n_list[0], l_lam, l_score)
        st.plotly_chart(figs.error_vs_n(rows, l_sub), key="lab_err")
        st.plotly_chart(figs.gamma_plot(point["gamma"], point["gamma_no_var"], point["keep"], cap.head_dim),
                        key="lab_gamma")
        geo = lab.binned_geometry(cap, point)
        st.plotly_chart(figs.histograms(geo["hist"], geo["norm_edges"], geo["angle_edges"]), key="lab_hist")
        st.plotly_chart(figs.spectrum(point["spectrum"]), key="lab_spec")
        json_download("Lab numbers (JSON)", {"rows": rows, "point": lab.public(point), "layer": cap.layer,
                      "provenance": provenance(0, (), layer=cap.layer, ratio=l_ratio, score=l_score, lam=l_lam)},
                      "pruning_lab.json", key="lab_json")
    elif preset:
        rows = [r for r in preset["rows"] if r["ratio"] == l_ratio and r["score"] == l_score]
        st.plotly_chart(figs.error_vs_n(rows, l_sub), key="lab_err")
        dp = preset["default_point"][l_sub]
        st.plotly_chart(figs.histograms(dp["hist"], dp["norm_edges"], dp["angle_edges"]), key="lab_hist")
        if "gamma" in dp:
            st.plotly_chart(figs.gamma_plot(dp["gamma"], dp["gamma_no_var"], dp["keep"], dp.get("head_dim")),
                            key="lab_gamma")
            st.plotly_chart(figs.spectrum(dp["spectrum"]), key="lab_spec")
        st.caption(f"Shipped preset: layer {preset['layer']}, lambda {preset['lam']:g} (the lambda control needs a "
                   f"live capture); histograms, scores and spectrum at ratio 0.3, N = {preset['n_list'][0]}, "
                   "variance score, "
                   f"{preset['n_held']} held-out windows.")
    else:
        st.info("No lab preset shipped yet; switch on the live capture.")

with tab_enc:
    st.markdown("The same method on the sentence encoder all-MiniLM-L6-v2 (12 heads of 32, FFN 1,536): heads of "
                "`attention.output.dense` and channels of `output.dense` are removed physically; their biases are kept "
                "and the rotation is fitted on the bias-free outputs. Quality: cosine between dense and pruned "
                "embeddings of 64 held-out paragraphs of the built-in text.")
    with st.form("enc_form"):
        e1, e2, e3 = st.columns(3)
        e_ratio = bound(e1.slider, "Prune ratio", 0.1, 0.5, LIGHT["ratio"], 0.05, key="pruning_enc_ratio")
        e_comp = bound(e2.selectbox, "Compensation", COMP_KEYS, index=COMP_KEYS.index(PruneConfig.compensation),
                       format_func=COMPENSATIONS.label, key="pruning_enc_comp")
        e_n = bound(e3.select_slider, "Calibration paragraphs", [8, 16, 32, 64], LIGHT["n_calib"], key="pruning_enc_n",
                    help="16 keeps the run to seconds; the paper-like 64 takes about four times as long.")
        go_enc = st.form_submit_button("Prune MiniLM", icon=":material/content_cut:", type="primary")
    if go_enc:
        pair = pairing(e_comp)  # the score and propagation this compensation runs with (FLAP's for the mean bias)
        config = jobs.EncoderConfig(PruneConfig(ratio=e_ratio, compensation=e_comp, n_calib=e_n, score=pair.score,
                                                propagate=pair.propagate), n_eval=LIGHT["n_eval"])
        if (enc := run_job("Pruning MiniLM", jobs.run_encoder, None, config, get_model("minilm"))) is not None:
            st.session_state["pruning_enc"] = enc
            record_run("pruning", {"model": "MiniLM encoder", "compensation": e_comp, "ratio": e_ratio, "N": e_n},
                       {"embedding cosine to dense": enc["cosine_mean"], "pruning seconds": enc["prune_s"],
                        "effective parameters (M)": enc["params_pruned"] / 1e6})
    if er := st.session_state.get("pruning_enc"):
        k = st.columns(3)
        k[0].metric("Mean embedding cosine to dense", f"{er['cosine_mean']:.3f}", f"min {er['cosine_min']:.3f}",
                    delta_color="off")
        k[1].metric("Parameters", f"{er['params_pruned'] / 1e6:.1f} M", f"dense {er['params_dense'] / 1e6:.1f} M",
                    delta_color="off")
        k[2].metric("Pruning time", f"{er['prune_s']:.1f} s")
        st.plotly_chart(figs.layer_errors(er["records"]), key="enc_layers")
show_history("pruning")
