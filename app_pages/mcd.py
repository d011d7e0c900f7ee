"""MCD: one diffusion model imputes any missing channels of a multiplexed tissue image from any observed subset."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.imputation.mcd import mcd as M
from backend.imputation.mcd import tissue as T
from backend.imputation.mcd.evaluate import METHODS
from backend.imputation.mcd.jobs import ImputeConfig, run_impute
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import mcd as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("mcd", r"""
**MCD** trains **one** diffusion model that fills in **any** missing channels of a multiplexed image from **any**
observed subset: at every training step a random set of channels is hidden and the model learns the full panel from
the rest. Tick the channels you observe; the others are imputed and compared with the truth, next to the same network
trained as a plain masked regressor, U-Nets trained per target, multi-scale and per-pixel ridge, the most correlated
channel, and the generator's own mean as the ceiling. After each run the page says which method wins on it.
""", details_md=r"""
The denoiser U-Net sees the noisy panel $x_t$; a condition encoder sees $c = x \odot m$ and the mask $m$. At every
resolution the encoder's features are added through a squeeze-excitation gate, $z_l = D_l(x_t) + \mathrm{SE}(E_l(c))$;
channel self-attention mixes feature channels (each token one channel's whole map) and an SE gate recalibrates the
output channels. Training is EDM (Karras et al.) with the full panel as target; sampling is the Heun solver from
seeded noise, and the **mean of M samples** approximates the posterior mean (averaging can only lower the squared
error of the samples: that is arithmetic, not a property of MCD).

**Baselines.** The *masked regressor* is the same network (initialised from the MCD weights), data and random masking,
trained 120 further steps with an MSE loss and run in one forward pass: what the diffusion objective and the sampling
add over regression. The *U-Nets per target* are retrained for
every (pattern, target), shipped for the patterns the claims read (the four held-out patterns, a seen one and the
sparse DNA + CD20 one); on other patterns they are absent. *Multi-scale ridge* regresses on the observed channels
blurred at 0, 1, 2 and 4 px (neighbourhood context, fitted in about a second); *per-pixel ridge* and the *most
correlated channel* use the pixel alone.

**Held-out patterns.** Four observed sets are never drawn in training; each lies one channel away from a drawn set
(the run reports its pattern's distance to training). Patterns far from training (whole channel groups never
observed together) need a model trained with that rule (`python -m backend.train mcd --part tissue --apart`); the
shipped model is not. The "Paper vs here" panel above gives each claim's measured verdict.

Data: synthetic 32 x 32 panels of 12 markers (Voronoi cells whose types cluster in regions; nuclear, membrane and
cytoplasmic patterns; co-expressed and mutually exclusive markers; PD-L1 induced by neighbouring T cells; blur and
noise). The *Bayes ceiling* is the generator's noise-free mean given the true cells: no method can beat it. The
miniature departs from the paper: a 0.34 M-parameter network trained for 3,500 steps on one CPU core, Heun sampling
instead of SiD distillation, synthetic panels instead of IMC. Uploads: NPZ of a (12, H, W) array, 8-96 px per side
(TIFF is not read: save it as NPZ), each channel z-scored with its own statistics.
""")
claims_panel("mcd")
res_all: dict = st.session_state.setdefault("mcd_result", {})

c1, c2 = st.columns([1, 2])
src = bound(c1.radio, "Stack", [*T.PRESETS, "Upload an NPZ"], key="mcd_stack",
            help="Presets are synthetic test panels (never trained on).")
upload = None
if src == "Upload an NPZ":
    with c2:
        upload = file_input("channel_stack", "NPZ with a (12, H, W) array 'stack' (channels in the order below)",
                            key="mcd_upload", help="4 MB, 12 channels, 8-96 px per side, finite numbers.")
    if upload is not None:
        c2.caption(f"{upload[0]}: {upload[1].shape[1]} x {upload[1].shape[2]} px, 12 channels.")

st.markdown("**Channels**: ticked = observed, unticked = to impute. Default: held-out pattern 0 (never seen in "
            "training).")
default = set(M.HELDOUT_PATTERNS[0])
cols = st.columns(6)
observed = [i for i, ch in enumerate(T.CHANNELS)
            if bound(cols[i % 6].checkbox, f"{i} {ch}", value=i in default, key=f"mcd_obs{i}")]
st.caption("Held-out patterns: " + "; ".join(f"{k}: " + ", ".join(T.CHANNELS[c] for c in p)
                                             for k, p in enumerate(M.HELDOUT_PATTERNS)))
ok = 1 <= len(observed) <= T.C - 1
if not ok:
    st.warning("Observe between 1 and 11 channels.")

with st.form("mcd_form"):
    c1, c2, c3 = st.columns(3)
    n_samples = bound(c1.select_slider, "Samples M (averaged)", [1, 2, 4, 8, 16], 8, key="mcd_samples")
    steps = bound(c2.select_slider, "Sampler steps (Heun)", [6, 10, 18, 32], 18, key="mcd_steps",
                  help=f"Network evaluations = 2 x steps - 1 ({M.nfe(18)} at 18).")
    seed = bound(c3.number_input, "Seed", 0, 10_000, 0, key="mcd_seed")
    go = st.form_submit_button("Impute", icon=":material/play_arrow:", type="primary",
                               disabled=not ok or (src == "Upload an NPZ" and upload is None))


if go and ok:
    cfg = ImputeConfig(observed=tuple(observed), samples=int(n_samples), steps=int(steps), seed=int(seed))
    res = run_job("MCD imputation", run_impute, src if upload is None else upload[1], cfg, time_cap_s=300)
    if res is not None:
        out = res.summary() | {"true": res.true, "maps": res.maps, "channels": res.channels}
        out["params"] = {"stack": upload[0] if upload else src, "observed": list(cfg.observed),
                         "samples": cfg.samples, "steps": cfg.steps, "seed": cfg.seed}
        res_all["run"] = out
        record_run("mcd", out["params"], {f"mean r {k}": v for k, v in out["mean_r"].items()})

if r := res_all.get("run"):
    dist = r["distance_to_training"]
    held = (f"a held-out pattern, {dist} channel{'s' if dist > 1 else ''} from the nearest pattern drawn in training"
            if r["heldout_pattern"] else "a pattern drawn in training")
    st.markdown(f"Observed {len(r['observed'])} channels ({held}); imputed {len(r['missing'])}.")
    if vb := r.get("versus_best"):
        lo, hi = vb["gain_ci"]
        sure = ("the interval excludes zero" if vb["resolved"] else
                "the interval contains zero: on this run the two are not told apart")
        st.info(f"**Best on this run: {METHODS.label(vb['best'])}** (mean r {r['mean_r'][vb['best']]:.3f}). "
                f"MCD, mean of M, ranks {vb['mcd_rank']} of {vb['methods']} (mean r {r['mean_r']['mcd']:.3f}); "
                f"MCD minus {METHODS.label(vb['best_other'])}: {vb['gain']:+.3f}, 95 % interval [{lo:+.3f}, {hi:+.3f}] "
                f"over the {vb['pairs']} imputed channels ({sure}).", icon=":material/emoji_events:")
    st.plotly_chart(figs.maps(r["true"], r["maps"], r["channels"]), key="mcd_maps_fig")
    st.caption("Standardised units; each column shares one colour scale (the true map's 1st-99th percentile).")
    per = r["per_channel_r"]
    base = [m for m in METHODS if METHODS.kind(m) != "ours" and m in per]
    c1, c2 = st.columns(2)
    c1.plotly_chart(figs.r_bars({m: per[m] for m in ["mcd_single", *base]}, "One sample"), key="mcd_r1_fig")
    c2.plotly_chart(figs.r_bars({m: per[m] for m in ["mcd", *base]}, f"Mean of M = {r['params']['samples']} samples"),
                    key="mcd_rm_fig")
    st.plotly_chart(figs.mean_bars(r["mean_r"], "Mean Pearson r over the imputed channels"), key="mcd_mean_fig")
    cost = pd.DataFrame([{"method": k, "mean r": r["mean_r"].get(k), "seconds": v} for k, v in r["seconds"].items()])
    st.dataframe(cost, hide_index=True)
    st.caption(f"MCD: {M.nfe(r['params']['steps'])} network evaluations per sample, one model for every pattern; the "
               "masked regressor one evaluation, one model for every pattern; the U-Net baseline needs one trained "
               "network per (pattern, target).")
    json_download("Download results (JSON)", {k: v for k, v in r.items() if k not in ("maps", "true")}
                  | {"provenance": provenance(r["params"]["seed"], **{k: v for k, v in r["params"].items() if k != "seed"})}, "mcd_result.json",
                  key="mcd_dl_json")
    csv_download("Download per-channel r (CSV)", pd.DataFrame(per).reset_index(names="channel"), "mcd_r.csv",
                 key="mcd_dl_csv")
show_history("mcd")
