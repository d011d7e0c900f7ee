"""delta-Adapter: bounded post-processing of a frozen forecaster, a sparse input mask and two calibrators."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.forecast.deltaadapter import data as dt
from backend.forecast.deltaadapter import jobs, own
from backend.forecast.deltaadapter.inputs import EXAMPLE_ROWS, forecast_table
from backend.forecast.deltaadapter.interface import BACKBONES, CALIBRATORS, METHODS, PRESETS
from ui.claims import claims_panel
from ui.figures import deltaadapter as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header(
    "deltaadapter",
    r"""
A deployed forecaster $F$ stays **frozen**; small modules learn a bounded nudge of its input,
$\tilde X = X + \delta A_{in}(X)$, and a bounded correction of its output, $\tilde Y = F(\tilde X) + \delta
A_{out}(F(\tilde X))$ (or the multiplicative forms), with $\tanh$ keeping every edit within $\delta$. The same idea gives
a sparse input mask and two calibrators: quantile heads (QC) and a conformal band scaled per input (CC).
""",
    details_md=r"""
**Setting.** Each backbone (DLinear, a PatchTST-style transformer, an MLP) was trained once on the *early regime* of a
series and shipped frozen. After a regime shift the adapters and every baseline train on the same post-shift
*adaptation* split, stop on the *validation* split and are scored on the *test* split. The synthetic preset's shift is
fixed: daily amplitude 1.0 -> 1.3, lead coefficient 0.8 -> 1.1, level +0.3. Baselines: full fine-tuning, LoRA
(rank 4), RevIN-style re-normalisation, an online (recursive least squares) last-layer refit, a residual EWMA.

**Calibration.** CC trains a scale net $w(X, \hat y)$ on the adaptation split and sets
$\kappa$ from the validation split's scores $|y-\hat y|/w$: the finite-sample rank $\lceil (n+1)(1-\alpha)\rceil$
(ours) beside the paper's plain quantile. The curves compare calibrating *before* the shift with *after* it.

**Our option**: *zero-init* zeroes each adapter's last layer so it starts at the identity (the official code does
not). Values are in the standardised units of the early regime.
""",
)
claims_panel("deltaadapter")
res: dict = st.session_state.setdefault("deltaadapter_result", {})
OWN_SOURCES = ["Example", "Your CSV"]
OWN_LABELS = {"forecast": "forecast as given", "linear": "linear recalibration (a y_hat + b)",
              "ada_y": "Ada-Y (ours)"}


SIZES = {"Light (adapters + baselines)": {"deltaadapter_sweep": False},
         "Full (+ MSE-vs-delta sweep)": {"deltaadapter_sweep": True}}
source = bound(st.radio, "Series", ["Preset", "Your CSV"], horizontal=True, key="deltaadapter_source")
c1, c2 = st.columns(2)
kind = bound(c2.selectbox, "Backbone", list(BACKBONES), key="deltaadapter_backbone", format_func=BACKBONES.label)
series, user_state = None, None
if source == "Preset":
    preset = bound(c1.selectbox, "Preset", list(PRESETS), key="deltaadapter_preset", format_func=PRESETS.label)
else:
    preset = None
    lc, hc, sc = st.columns(3)
    lookback = bound(lc.number_input, "Input length", 8, 512, 24, key="deltaadapter_lookback")
    horizon = bound(hc.number_input, "Horizon", 1, 192, 6, key="deltaadapter_horizon")
    shift = bound(sc.slider, "Regime shift at (share of the rows)", 0.2, 0.8, 0.5, step=0.05,
                  key="deltaadapter_shift", help="Rows before it are the early regime the backbone trains on; the "
                                                 "adapters adapt, stop and are tested after it.")
    got = file_input("multiseries", "Your series (CSV: time column, then numeric channels, target first)",
                     key="deltaadapter_upload", lookback=int(lookback), horizon=int(horizon),
                     shift_fraction=float(shift))
    series = got[1] if got else None
    user_state = file_input("backbone_state", "Optional: your backbone (safetensors state of the chosen architecture)",
                            key="deltaadapter_state_upload")
    if series is not None:
        st.caption(f"{series.name}: {series.about}")
    if series is None:
        st.info(f"Upload a CSV with at least {dt.min_length(int(lookback), int(horizon))} rows for input "
                f"{lookback} and horizon {horizon}; without a backbone file one is trained on its first half.")


data = preset if preset is not None else series  # what every job runs on: a preset name or the user's series
ready = data is not None


def config(make, **settings):  # noqa: ANN001, ANN201 - a jobs config, or None after showing why it is refused
    try:
        return make(backbone=kind, **settings)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        return None


tab_a, tab_m, tab_c, tab_o = st.tabs(["Adapters vs baselines", "Feature mask", "Calibration",
                                      "Your forecasts (no backbone)"])
with tab_a:
    size = preset_choice("deltaadapter", SIZES, horizontal=True)
    with st.form("deltaadapter_form"):
        f1, f2, f3 = st.columns(3)
        delta = bound(f1.slider, "delta (edit bound)", 0.01, 0.5, 0.1, step=0.01, key="deltaadapter_delta")
        mode = bound(f2.radio, "Edit", ["additive", "multiplicative"], horizontal=True, key="deltaadapter_kind")
        zero = bound(f3.checkbox, "Zero-init (our option)", False, key="deltaadapter_zero")
        sweep = bound(st.checkbox, "Also sweep delta (0.01-0.3)", False, key="deltaadapter_sweep")
        go_a = st.form_submit_button("Train adapters and baselines", type="primary", icon=":material/play_arrow:",
                                     disabled=not ready)

    cfg = config(jobs.AdaptConfig, delta=float(delta), kind="add" if mode == "additive" else "mul",
                 zero_init=bool(zero), sweep=bool(sweep)) if go_a else None
    if cfg is not None:
        r = run_job("delta-Adapter run", jobs.run_adapt, data, cfg, user_state, time_cap_s=600)
        if r is not None:
            out = res["adapt"] = {"rows": r.rows, "example": r.example, "unchanged": r.unchanged,
                                  "backbone_params": r.backbone_params, "series": r.series, "delta": r.delta,
                                  "kind": r.kind, "zero_init": r.zero_init, "backbone": r.backbone,
                                  "backbone_source": r.backbone_source, **({"sweep": r.sweep} if r.sweep else {})}
            record_run("deltaadapter", {"series": out["series"]["name"], "backbone": kind, "delta": out["delta"],
                                        "kind": out["kind"], "zero_init": out["zero_init"]},
                       {f"MSE {METHODS.label(m)}": row["mse"] for m, row in out["rows"].items()})
    if a := res.get("adapt"):
        rows = a["rows"]
        st.caption(f"{a['series']['name']} · backbone {BACKBONES.label(a['backbone'])} "
                   f"({a['backbone_params']:,} parameters, {a['backbone_source']}) · delta {a['delta']} "
                   f"{a['kind']} · backbone bit-identical after training: {a['unchanged']}")
        # ours and the frozen backbone (the reference) beside the two best other methods of the run
        ours, ref = METHODS.names("ours"), METHODS.names("reference")
        best = sorted(set(rows) - {*ours, *ref}, key=lambda m: rows[m]["mse"])[:2]
        default = [m for m in METHODS if m in rows and (m in ours or m in ref or m in best)]
        shown = bound(st.multiselect, "Methods in the plots", list(METHODS), default, key="deltaadapter_shown",
                      format_func=METHODS.label)
        win = st.slider("Test window", 0, len(a["example"]["t0"]) - 1, 0, key="deltaadapter_win")
        st.plotly_chart(figs.forecast(a["example"], shown, win), key="deltaadapter_fc")
        st.plotly_chart(figs.per_horizon(rows, shown), key="deltaadapter_ph")
        if "sweep" in a:
            st.plotly_chart(figs.mse_vs_delta(a["sweep"]), key="deltaadapter_sw")
        st.plotly_chart(figs.costs(rows), key="deltaadapter_costs")
        table = [{"method": METHODS.label(m), "test MSE": round(r["mse"], 4), "test MAE": round(r["mae"], 4),
                  "gain vs frozen": f"{100 * (r['improvement'] or 0):.1f} %", "trainable parameters": r["params"],
                  "share of backbone": f"{100 * r['params'] / max(a['backbone_params'], 1):.1f} %",
                  "training s": round(r["train_s"], 2)} for m, r in rows.items()]
        show_metrics_table(table, key="deltaadapter_table")
        json_download("Download run (JSON)", a, "deltaadapter_run.json", key="deltaadapter_dl_json")
        csv_download("Download table (CSV)", pd.DataFrame(table), "deltaadapter_table.csv", key="deltaadapter_dl_csv")
    show_history("deltaadapter")

with tab_m:
    with st.form("deltaadapter_mask_form"):
        kappa = bound(st.slider, "Budget kappa (share of inputs kept)", 0.05, 0.95, 0.3, step=0.05,
                      key="deltaadapter_kappa")
        go_m = st.form_submit_button("Train the mask", icon=":material/filter_alt:", disabled=not ready)
    cfg = config(jobs.SelectConfig, kappa=float(kappa)) if go_m else None
    if cfg is not None and (r := run_job("feature mask", jobs.run_select, data, cfg, user_state, time_cap_s=300)):
        res["mask"] = r.result
    if sel := res.get("mask"):
        st.plotly_chart(figs.mask_heatmap(sel), key="deltaadapter_heat")
        st.caption(f"Test MSE with the mask {sel['mse_mask']:.4f} vs {sel['mse_frozen']:.4f} without "
                   f"({100 * (sel['mse_ratio'] - 1):+.1f} %).")

with tab_c:
    with st.form("deltaadapter_cal_form"):
        alpha = bound(st.select_slider, "Miscoverage alpha", [0.01, 0.025, 0.05, 0.1, 0.2], 0.05,
                      key="deltaadapter_alpha")
        go_c = st.form_submit_button("Calibrate", icon=":material/straighten:", disabled=not ready)
    cfg = config(jobs.CalibrateConfig, alpha=float(alpha)) if go_c else None
    if cfg is not None and (r := run_job("calibration", jobs.run_calibrate, data, cfg, user_state, time_cap_s=300)):
        res["calib"] = r.result
    if c := res.get("calib"):
        st.plotly_chart(figs.fan_and_band(c["example"], c["alpha"]), key="deltaadapter_fan")
        to = c["time_ordered"]
        ctab = [{"calibrator": CALIBRATORS.label(m), "coverage": round(v["coverage"], 4),
                 "95 % interval (block bootstrap)": f"[{to[m]['ci'][0]:.3f}, {to[m]['ci'][1]:.3f}]" if m in to
                 else "", "mean width": round(v["width"], 4)} for m, v in c["table"].items()]
        show_metrics_table(ctab, key="deltaadapter_ctable")
        st.caption("Coverage on the test windows, which come after the validation windows the calibrators are "
                   f"calibrated on (time order). Windows overlap and errors are autocorrelated, so the intervals "
                   f"resample blocks of {to['cc']['block']} windows; a band that treats the "
                   f"{to['cc']['windows']} windows' elements as independent would be about "
                   f"+-{to['cc']['iid_tolerance']:.3f}, several times too narrow.")
        rs = c["random_splits"]
        st.caption(f"CC over {len(rs['cc'])} random exchangeable splits of the post-shift held-out windows: mean "
                   f"coverage {sum(rs['cc']) / len(rs['cc']):.4f} (plain quantile "
                   f"{sum(rs['cc_plain']) / len(rs['cc_plain']):.4f}), nominal {1 - c['alpha']:.3f}. kappa: rank "
                   f"{c['kappa']['rank']:.3f}, plain {c['kappa']['plain']:.3f}.")
        st.plotly_chart(figs.calibration_curve(c["nominal"], c["curves"]), key="deltaadapter_calcurve")
        csv_download("Download calibration table (CSV)", pd.DataFrame(ctab), "deltaadapter_calibration.csv",
                     key="deltaadapter_dl_cal")

with tab_o:
    st.caption("Ada-Y and the two calibrators need only the inputs, the forecast and the truth, so a forecaster that "
               "runs elsewhere can be post-processed from a table of its one-step forecasts: time, actual, forecast, "
               "then covariates. Windows in time order: the first 50 % adapt, the next 20 % validate, the last 30 % "
               "test.")
    own_src = bound(st.radio, "Forecasts", OWN_SOURCES, horizontal=True, key="deltaadapter_own_source")
    table = None
    if own_src == OWN_SOURCES[0]:
        table = own.read_forecasts(forecast_table(rows=EXAMPLE_ROWS),
                                   name="example: a damped, offset forecaster")
    else:
        got_o = file_input("forecast_table", "Your forecasts (CSV: time, actual, forecast, covariates)",
                           key="deltaadapter_own_upload")
        table = got_o[1] if got_o else None
    if table is not None:
        st.caption(f"{table.name}: {table.about}.")
    with st.form("deltaadapter_own_form"):
        o1, o2, o3 = st.columns(3)
        own_lb = bound(o1.number_input, "Window (past steps)", 4, 256, 24, key="deltaadapter_own_lookback")
        own_delta = bound(o2.slider, "delta", 0.01, 0.5, 0.1, step=0.01, key="deltaadapter_own_delta")
        own_alpha = bound(o3.select_slider, "alpha", [0.01, 0.025, 0.05, 0.1, 0.2], 0.05,
                          key="deltaadapter_own_alpha")
        go_o = st.form_submit_button("Post-process the forecasts", icon=":material/tune:", disabled=table is None)
    if go_o and table is not None:
        try:
            ocfg = own.OwnConfig(lookback=int(own_lb), delta=float(own_delta), alpha=float(own_alpha))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ocfg = None
        if ocfg is not None and (r := run_job("your forecasts", jobs.run_own, table, ocfg, time_cap_s=300)):
            res["own"] = r.to_json()
    if o := res.get("own"):
        st.plotly_chart(figs.own_forecasts(o["example"]), key="deltaadapter_own_fig")
        otab = [{"forecast": OWN_LABELS[k], "test MSE": round(v["mse"], 4), "test MAE": round(v["mae"], 4),
                 "training s": v["train_s"]} for k, v in o["points"].items()]
        show_metrics_table(otab, key="deltaadapter_own_points")
        itab = [{"interval": CALIBRATORS.label(k), "coverage": round(v["coverage"], 4),
                 "95 % interval (block bootstrap)": f"[{v['interval'][0]:.3f}, {v['interval'][1]:.3f}]",
                 "mean width": round(v["width"], 4)} for k, v in o["intervals"].items()]
        show_metrics_table(itab, key="deltaadapter_own_intervals")
        st.caption(f"Test windows: {o['splits']['test']}; nominal coverage {1 - o['config']['alpha']:.3f}. Ada-Y's "
                   "edit is bounded by delta (standardised units), so it corrects small drifts; a large offset is "
                   "the linear recalibration's job.")
        json_download("Download (JSON)", o, "deltaadapter_own.json", key="deltaadapter_own_dl")
