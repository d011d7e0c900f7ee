"""FutureFill: exact fast generation from a convolutional sequence model; every method agrees, costs differ."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.generation.futurefill import jobs
from backend.generation.futurefill.futurefill import FILTER_KINDS, METHODS, preset_series
from backend.generation.futurefill.inputs import PRESETS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import futurefill as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("futurefill", r"""
A convolutional sequence model (STU, Hyena) generates through an **online convolution** $y_t = \sum_{j \le t}
u_{t-j}\,\phi_j$, which costs $O(L^2)$ done naively. **FutureFill** precomputes, with FFTs, what finished inputs
contribute to *future* outputs, and stays **exact**. Here a small spectral-STU model fitted to your series continues
it with every method; the page compares their outputs and their costs.
""", details_md=r"""
A convolutional sequence model (STU, Hyena) computes for each filter $\phi$ the **online convolution**
$y_t = \sum_{j \le t} u_{t-j}\,\phi_j$; while generating, $u_{t+1}$ depends on $y_t$, so one big FFT is impossible and
the naive way costs $O(L^2)$. **FutureFill** precomputes the contribution of finished inputs to *future* outputs with
FFTs into a cache: **epoched** (refill a $K$-slot cache every $K$ steps, $O(L^{1.5}\sqrt{\log L})$), **continuous**
(after input $t$, FutureFill the last $2^k$ inputs into the next $2^k$ slots, $2^k$ the largest power of two dividing
$t$: a binary carry, $O(L \log^2 L)$), and **prompted** (one FFT of the prompt into the $K$ slots to be generated,
then continuous on the generated tokens: a cache of $O(K)$ numbers whatever the prompt length). All are **exact**.

Here a one-layer model with spectral STU filters (top eigenvectors of the Hankel matrix $Z_{ij} = 2/((i+j)^3-(i+j))$)
and a tanh readout, fitted to your series by ridge regression, continues it with every method. Costs are counted in
multiply-adds (a stated cost model: a size-$n$ real FFT = $n\log_2 n$) because wall time on a shared CPU is noisy.
""")
claims_panel("futurefill")
res_all: dict = st.session_state.setdefault("futurefill_result", {})

c1, c2 = st.columns([1, 2])
source = bound(c1.radio, "Series", ["Preset", "Upload a series"], key="futurefill_source", horizontal=True)
series, series_name = None, ""
if source == "Preset":
    preset = bound(c2.selectbox, "Preset", list(PRESETS), key="futurefill_preset")
    n_preset = bound(c2.select_slider, "Preset length", [128, 256, 512, 1024, 2048], 512, key="futurefill_plen")
    series, series_name = preset_series(preset, n_preset, seed=0), f"preset:{preset}"
else:
    with c2:
        got = file_input("series", "A 1-D series: .txt or .csv, one number per line (or one numeric column)",
                         key="futurefill_upload",
                         help="16 to 65,536 finite numbers; a header row is fine. At most 5 MB.")
    if got is not None:
        series_name, series = got
if series is not None:
    st.caption(f"{series_name}: {len(series)} values, mean {series.mean():.3g}, std {series.std():.3g}.")

with st.form("futurefill_form"):
    c1, c2, c3, c4 = st.columns(4)
    n_new = bound(c1.select_slider, "Values to generate", [256, 512, 1024, 2048, 4096, 8192, 16384], 2048,
                             key="futurefill_new")
    n_filters = bound(c2.slider, "Filters F", 1, 32, 16, key="futurefill_filters")
    kind = bound(c3.selectbox, "Filters", list(FILTER_KINDS), key="futurefill_kind")
    epoch = bound(c4.number_input, "Epoch K (0 = sqrt(L log L))", 0, 16384, 0, key="futurefill_epoch")
    c1, c2, c3 = st.columns(3)
    max_len = bound(c1.select_slider, "Cost chart: longest length", [2048, 4096, 8192, 16384], 8192, key="futurefill_maxlen")
    anim_len = bound(c2.select_slider, "Animation length", [8, 16, 32, 64], 32, key="futurefill_anim")
    seed = bound(c3.number_input, "Seed (generation noise)", 0, 10_000, 0, key="futurefill_seed")
    go = st.form_submit_button("Generate with every method", icon=":material/play_arrow:", type="primary",
                               disabled=series is None)


if go and series is not None:
    config = jobs.PageConfig(jobs.GenerateConfig(n_new=int(n_new), n_filters=int(n_filters), kind=kind,
                                                 epoch=int(epoch) or None, seed=int(seed)),
                             max_len=int(max_len), anim_len=int(anim_len))
    out = run_job("FutureFill: every method on your series", jobs.run_page, series, config, time_cap_s=300)
    if out is not None:
        out["params"] = {"series": series_name, **out["params"]}
        res_all["run"] = out
        costs = {f"MACs {row['method']}": row["MACs"] for row in out["metrics"]}
        record_run("futurefill", {k: v for k, v in out["params"].items() if k != "seed"},
                   {"max |u - naive|": max(row["max |u - naive|"] for row in out["metrics"]), **costs,
                    "fit R^2": out["fit"]["r2"]}, seed=out["params"]["seed"])

if r := res_all.get("run"):
    worst = max(row["max |u - naive|"] for row in r["metrics"])
    st.success(f"All methods agree with naive online convolution: max |difference| = {worst:.1e} "
               f"(claim: <= 1e-10). One-step fit: RMSE {r['fit']['train_rmse']:.3g}, R^2 {r['fit']['r2']:.3f}.",
               icon=":material/check_circle:")
    st.plotly_chart(figs.series_agreement(r["u"], r["prompt_len"]), key="futurefill_series")
    show_metrics_table(pd.DataFrame(r["metrics"]), key="futurefill_table")
    st.caption("MACs: decode multiply-adds incl. the prompt (cost model above); setup = filter spectra, computed once "
               "per FFT size. State floats: per filter, the inputs and cache slots the method keeps: naive and "
               "continuous grow with prompt + generated length, prompted with the generated length only.")

    st.subheader("Which FFT call filled which future slot")

    @st.fragment
    def animation() -> None:
        names = list(r["anim"])
        m = st.radio("Method", names, index=names.index(jobs.HEADLINE) if jobs.HEADLINE in names else 0,
                     format_func=METHODS.label, horizontal=True, key="futurefill_anim_method")
        a = r["anim"][m]
        st.plotly_chart(figs.fill_animation(a["events"], a["length"], m, a["shaded"]),
                        key="futurefill_anim_fig")
        st.caption("Press Play or drag the slider. Continuous: after input t the last lowbit(t) inputs fill the next "
                   "lowbit(t) slots (blocks 1, 2, 1, 4, 1, 2, 1, 8, ...); every pair is filled exactly once, before "
                   "its output is needed. Epoched: one big call per epoch plus direct sums inside the epoch. "
                   "Prompted: one prefill call for the whole prompt, then the carry pattern on generated tokens.")
        st.plotly_chart(figs.call_timeline(a["events"], a["length"]), key="futurefill_timeline")

    animation()

    st.subheader("Cost vs length")
    b = r["bench"]
    st.plotly_chart(figs.cost_loglog(b["rows"], b["slopes"]), key="futurefill_cost")
    ratios = ", ".join(f"{v:.2f}" for v in b["mac_ratios"].get("continuous", []))
    st.caption(f"Same random {r['params']['filters']}-filter model for every length. Continuous MACs per doubling: "
               f"{ratios} (claim 2.2-2.5; naive 4). Fitted slopes: about 2 (naive), 1.5 (epoched), 1.1-1.2 "
               "(continuous, L log^2 L). Wall time includes Python overhead per step, which favours naive at short "
               "lengths; see benchmarks/results/futurefill.md for 2^12..2^16.")
    bench_df = pd.DataFrame(b["rows"])
    json_download("Download results (JSON)", {**r, "provenance": provenance(
        r["params"]["seed"], **{k: v for k, v in r["params"].items() if k != "seed"})},
                  "futurefill.json", key="futurefill_dl_json")
    csv_download("Download metrics (CSV)", pd.DataFrame(r["metrics"]), "futurefill_metrics.csv",
                 key="futurefill_dl_csv")
    csv_download("Download cost vs length (CSV)", bench_df, "futurefill_costs.csv", key="futurefill_dl_bench")
show_history("futurefill")
