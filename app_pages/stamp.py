"""STaMP: an orthogonal transform along the token axis, the few high-energy coefficients at 8 bits, the rest at 4."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.compression.stamp import hooks as sh
from backend.compression.stamp import inputs, jobs
from backend.compression.stamp import stamp as stm
from backend.errors import InputError
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import stamp as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header(
    "stamp",
    r"""
**STaMP** quantizes a linear layer's input $X$ ($s$ tokens $\times$ $d$ features) *along the sequence*: an orthonormal
$L$ (here a multi-level Haar DWT) packs the energy of neighbouring, correlated tokens into a few coefficients, those
$k$ rows get 8 bits and the rest 4 bits, and $L^{-1}$ is applied after the matmul: $\hat X = L^{-1} Q(L X)$. It
composes with feature rotations ($\hat X = L^{-1} Q(L X R) R^\top$). Here every decoder linear input of SmolLM2-135M
is fake-quantized during prefill and the held-out perplexity is compared at matched average bits.
""",
    details_md=r"""
**Theorem 1** (paper): with orthonormal $L$ and per-token min-max quantization at $b_i$ bits,
$\|\hat X - X\|^2 \le \frac d2 \sum_i \frac{\|l_i X\|^2}{(2^{b_i}-1)^2}$, per sample. The energy is unchanged by
$L$; the gain comes from concentrating it in the rows that get more bits. The average bit-width is
$b_{low} + (b_{high} - b_{low})\,k/s$ (4.125 at the paper's 64 of 2,048 tokens).

**The attention sink.** The first token of every window carries massive activations in some linear inputs (in
SmolLM2's down_proj inputs its largest value is up to about 2,000 times the median token's). Inside a Haar transform it feeds one detail coefficient per level;
those are quantized at 4 bits on the sink's scale and the inverse spreads that error over the first $2^L$ tokens.
With *keep the first token outside the transform* (the spec's rule for a vision model's CLS token) token 0 is
quantized at the high bit-width on its own and counted among the $k$ high-precision tokens.

**Causal caveat.** Mixing tokens lets token $i$'s quantization noise depend on later tokens of its block, so this
is a prefill (whole-sequence) measure, as in the paper; decoding has one token at a time and no sequence axis, so it
stays at 8-bit activations. Weights stay float32 unless you pick weight bits (per-channel RTN of $W$, $WR$ or
$W\,\mathrm{diag}(s)$). The baselines: per-token RTN (A4), a QuaRot-style randomized block Hadamard of 64,
SmoothQuant ($\alpha = 0.5$), A8, dense.

**The controls that decide whether the transform helps**, each at its own average bits: *token 0 at 8 bits* without
a sequence transform (the sink rule alone: $4 + 4/s$ = 4.016 bits at $s = 256$) and *the first $k$ raw tokens at 8
bits* (STaMP's $4 + 4k/s$ bits without the transform). Much of STaMP's gain over plain Hadamard comes from the sink
rule, but not all of it: on 64 windows of 256 tokens of the reference text (the full-tier claim test), Hadamard 40.8,
Hadamard + token 0 at 8 bits 23.5, Hadamard + first 8 raw tokens at 8 bits 23.1, Hadamard + STaMP 18.3 (dense 14.3);
STaMP's perplexity is 1.26x lower than the same-bits control (95 % interval 1.21-1.30). The comparison table pairs each of ours with its
controls over the same windows (the per-window losses; a moving-block bootstrap interval of the perplexity ratio,
blocks of 4 windows: run at least 8 windows for a useful interval) and marks comparisons between two *collapsed*
models (both above 5x dense), which tell little: plain 4-bit activations without a rotation collapse SmolLM2 here.
""",
)
claims_panel("stamp")
res_all: dict = st.session_state.setdefault("stamp_result", {})
preset_choice("stamp", inputs.PRESETS)
LICENCES = "Built-in: software licences (English legal prose)"
texts = ["Built-in: Python reference docs", *([LICENCES] if inputs.licence_text() is not None else []),
         "Upload your own"]
src = bound(st.radio, "Text", texts, horizontal=True, key="stamp_src",
            help="The licences are the texts Debian ships in /usr/share/common-licenses: a text of another kind than "
                 "the reference docs (its last 30 % is held out).")
upload_text, upload_name = None, None
if src == LICENCES:
    upload_text, upload_name = inputs.licence_text(), inputs.LICENCE_NAME
elif src == "Upload your own":
    got = text_upload("stamp_upload",
                      help="The last 30 % is held out: perplexity needs at least 2 windows of the chosen context.")
    if got is not None:
        upload_name, upload_text = got
with st.form("stamp_form"):
    c1, c2, c3 = st.columns(3)
    transform = bound(c1.selectbox, "Sequence transform", list(stm.TRANSFORMS), format_func=stm.TRANSFORMS.label,
                      key="stamp_transform")
    low = bound(c2.select_slider, "Low bits", [2, 3, 4, 5, 6, 8], 4, key="stamp_low")
    high = bound(c3.select_slider, "High bits", [4, 5, 6, 8, 16], 8, key="stamp_high")
    seqlen = bound(c1.select_slider, "Context s (tokens)", [128, 256, 512], 128, key="stamp_seqlen")
    k = bound(c2.select_slider, "High-precision tokens k", [0, 1, 2, 4, 8, 16, 32, 64], 4, key="stamp_k",
              help="The paper: 64 of 2,048 (s / 32).")
    windows = bound(c3.slider, "Held-out windows", 1, 16, 1, key="stamp_windows")
    sink = bound(c1.checkbox, "Keep the first token (attention sink) outside the transform", True, key="stamp_sink")
    hadamard = bound(c2.checkbox, "Hadamard feature rotation rows", True, key="stamp_hadamard")
    extra = bound(c3.checkbox, "Also SmoothQuant and A8", False, key="stamp_extra")
    wbits = bound(c1.selectbox, "Weight bits", ["float32", 8, 4], key="stamp_wbits")
    model_src = st.text_input("Model (blank = embedded SmolLM2-135M; or a Llama-family local folder / cached "
                              "Hugging Face name)", key="stamp_model").strip() or None
    go = st.form_submit_button("Quantize and evaluate", icon=":material/equalizer:", type="primary")
st.caption(f"Average activation bits of STaMP: {low} + ({high} - {low}) x {k} / {seqlen} = "
           f"{low + (high - low) * min(k, seqlen) / seqlen:.4g}.")
if go:
    if src == "Upload your own" and upload_text is None:
        st.error("Upload a UTF-8 text first, or choose the built-in text.", icon=":material/error:")
    else:
        out = None
        try:
            cfg = sh.EvalConfig(seqlen=int(seqlen), n_windows=int(windows), low_bits=int(low), high_bits=int(high),
                                hp_tokens=int(k), transform=transform, sink_tokens=1 if sink and k > 0 else 0,
                                weight_bits=None if wbits == "float32" else int(wbits),
                                methods=jobs.page_methods(hadamard, extra), batch_size=2)
            config = jobs.EvaluateConfig(cfg, model=model_src)
            lm = get_model("smollm2", model_src)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
        else:
            name = (upload_name if src == LICENCES else f"the upload {upload_name}") if upload_name else None
            out = run_job("STaMP evaluation", jobs.run_evaluate, upload_text, config, lm, name, time_cap_s=900)
        if out is not None:
            res_all["last"] = out
            ppl = {r["method"]: r["ppl"] for r in out["rows"]}
            record_run("stamp", {"transform": transform, "bits": f"{low}/{high}", "k": k, "s": seqlen,
                                 "sink": bool(sink), "windows": windows, "weights": wbits},
                       {f"ppl {m}": v for m, v in ppl.items()}, seconds=out["seconds"])
if r := res_all.get("last"):
    rows = r["rows"]
    c = r["config"]
    m = st.columns(4)
    stamp_row = next(x for x in rows if x["method"] == sh.HEADLINE)
    a4_row = next(x for x in rows if x["method"] == sh.HEADLINE_BASELINE)
    m[0].metric("A4 + STaMP perplexity", f"{stamp_row['ppl']:.2f}", f"{stamp_row['ppl'] - a4_row['ppl']:+.1f} vs A4",
                delta_color="inverse")
    m[1].metric("Average activation bits", f"{stamp_row['avg_bits']:.4g}", f"k = {c['hp_tokens']} of {c['seqlen']}",
                delta_color="off")
    m[2].metric("Extra FLOPs of the transform", f"{stamp_row['extra_flops_pct']:.3f} %", "vs the decoder matmuls",
                delta_color="off")
    m[3].metric("Evaluated tokens", f"{r['tokens']:,}", f"{r['seconds']:.0f} s in all", delta_color="off")
    st.plotly_chart(figs.perplexity_bars(rows), key="stamp_ppl")
    dense_ppl = next((x["ppl"] for x in rows if x["method"] == sh.DENSE), float("nan"))
    table = [{"configuration": x["label"], "perplexity": round(x["ppl"], 3), "ppl / dense": round(x["ppl"] / dense_ppl, 2),
              "avg activation bits": x["avg_bits"],
              "weight bits": x["weight_bits"], "SQNR (dB)": round(x.get("sqnr_db", float("nan")), 2),
              "error / Theorem 1 bound": round(x.get("bound_ratio", float("nan")), 4),
              "bound violations": x.get("bound_violations"), "extra FLOPs %": round(x["extra_flops_pct"], 4),
              "seconds": round(x["seconds"], 2)} for x in rows]
    show_metrics_table(table, key="stamp_table")
    st.caption("Prefill perplexity (every position of each window sees activations quantized over the whole window); "
               "decoding stays at 8-bit activations. The Theorem 1 bound needs an orthonormal transform, so "
               "SmoothQuant has none.")
    if gains := jobs.gain_table(rows):
        st.markdown(f"**Ours against the controls, paired over the {len(rows[0]['window_nll'])} windows** (ratio > 1: "
                    "ours has the lower perplexity; each at its own average bits)")
        st.dataframe(pd.DataFrame(gains), hide_index=True, key="stamp_gains")
        st.caption("The interval resamples blocks of 4 consecutive windows (backend.stats.block_bootstrap_mean); with "
                   "one window it is unbounded. 'both collapsed': both perplexities above 5x dense, a comparison "
                   "that tells little.")
    if r["energy"]:
        e1, e2 = st.columns([3, 2])
        lin = e1.radio("Linear input", list(figs.LINEAR_NAMES), format_func=figs.LINEAR_NAMES.get,
                       horizontal=True, key="stamp_linear")
        body = r.get("energy_body") or {}
        outside = e2.checkbox("Token 0 outside the transform (as STaMP quantizes it)", bool(body),
                              disabled=not body, key="stamp_energy_body")
        st.plotly_chart(figs.energy_concentration(body if outside and body else r["energy"], lin), key="stamp_energy")
    g1, g2 = st.columns(2)
    g1.plotly_chart(figs.bit_allocation(r["bits"], r["token_energy"], c["sink_tokens"], c["transform"]),
                    key="stamp_bits")
    shown = [m_ for m_ in jobs.BOUND_ROWS if m_ in r["per_layer"]]
    g2.plotly_chart(figs.bound_vs_error(r["per_layer"], shown), key="stamp_bound")
    with st.expander("SQNR per layer", icon=":material/show_chart:"):
        st.plotly_chart(figs.sqnr_per_layer(r["per_layer"]), key="stamp_sqnr")
    json_download("Download results (JSON)", {**r, "provenance": provenance(c["seed"], **{
        k_: v for k_, v in c.items() if k_ not in ("methods", "seed")})}, "stamp_results.json", key="stamp_dl_json")
    csv_download("Download the table (CSV)", pd.DataFrame(table), "stamp_table.csv", key="stamp_dl_csv")
show_history("stamp")
