"""Self-re-watermarking attack and the Lipschitz-constrained, self-aware defense (SRW, ICLR 2026). Thin page: inputs ->
backend jobs (backend.watermark.rewatermark.jobs) -> figures (ui.figures.rewatermark)."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st
from PIL import Image

from backend.errors import InputError
from backend.io import ImageLimits
from backend.runtime import ASSETS, provenance
from backend.watermark import photo_eval as PE
from backend.watermark.rewatermark import core as R
from backend.watermark.rewatermark import inputs
from backend.watermark.rewatermark import lipschitz as L
from backend.watermark.rewatermark.jobs import AttackConfig, run_attack
from ui.claims import claims_panel
from ui.figures import rewatermark as fig
from ui.inputs import image_input
from ui.layout import csv_download, image_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("rewatermark", """
Whoever holds a watermark encoder can embed *their own* message B into an image that already carries the owner's
message A, and with ordinary deep watermarks the owner's decoder then reads B. **SRW** (spectrally normalised and
trained against re-watermarking) keeps A. Pick an image and attack it with the same encoder, another encoder and PGD;
the owner's accuracy on A is shown next to the attacker's success on B.
""", details_md="""
**The attack.** Whoever holds a watermark encoder can embed *their own* message B into an image that already carries
the owner's message A. With ordinary deep watermarks the owner's decoder then reads B (or noise): A falls to chance and
nothing is visible. The page runs it **with the same encoder** (self-re-watermarking, k rounds), **with another trained
encoder** (cross-model) and as a **PGD overwrite** on the owner's decoder (targeted L-inf, the paper's test setting
eps 0.03 in [-1, 1] units = about 4 levels of 255). Next to the owner's accuracy on A you always see the **attacker's
own success on B**, so a model cannot look robust just by refusing to re-mark marked images.

**The defense (SRW).** Every conv and linear layer is spectrally normalised (GroupNorm without affine, ReLU), and the
model is trained *against* re-watermarking: the decoder must still read A after E(x_w, B) and after PGD toward B,
besides the paper's common distortions. What you see is the lab's **CPU miniature** (16 bits; an image is read at 128 x 128
as 4 x 4 frames of 32 x 32 that each carry the message, the decoder averages the frames, the residual is upsampled to
the full image; trained by `python -m backend.train rewatermark` on scikit-image training photos
and procedural images; presets are held-out photos). Deviations from the paper: no ImageNet ResNet-50 branch, SSIM
instead of LPIPS, a residual cap at 32 dB frame PSNR for every variant (without it the same recipe lands at about 27 dB
and the plain twin still keeps 0.73 of A after one round, so the cap is not what stops the overwrite; the spec's own
2-layer miniature encoder does overwrite in one round, A 0.54), no rotation/flip noise, 5 PGD steps in training.
**Baselines:** `plain` (the same network trained the same way without constraints or adversarial terms), the
attribution page's TinyHiDDeN and the classical DWT-DCT watermarks (>= 256 px images).

**No certificate.** Spectral normalisation of a convolution's *reshaped* weight does not bound its true operator
norm by 1 (a 3x3 conv can reach about 3), and GroupNorm without affine has no global Lipschitz bound, so the page
shows *measured* sensitivities and per-layer norms, not a bound; the paper's own recoverability bounds are not
reproduced here.
""")
claims_panel("rewatermark")

LIMITS = ImageLimits(max_bytes=10 * 2**20, max_pixels=R.MAX_PIXELS, max_side=4096, min_side=R.MIN_SIDE)
EVAL = ASSETS / "rewatermark_eval.json"
PHOTOS_EVAL = PE.REWATERMARK_OUT
results: dict = st.session_state.setdefault("rewatermark_result", {})
avail = R.available_models()
# the defended model, then its ablations from the most to the least complete
DEFENDED = R.MODELS.names("ours") + R.MODELS.names("ablation")[::-1]
# trained encoders an attacker may hold: the registry's learned one, then the undefended and the defended SRW twins
CROSS = [R.DEFAULT_CROSS] + [m for m in R.model_names() if R.MODELS[m].shipped and R.MODELS.kind(m) != "ablation"]
if not set(R.MODELS.names("ours")) <= set(avail):
    st.warning("The shipped SRW weights are missing: run `python -m backend.train rewatermark`.")
presets = {name: (lambda n=name: Image.fromarray(inputs.preset_image(n))) for name in inputs.PRESETS}


SHOWN_SIDE = 256


def _shown(images: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Display copies of the story's images, at most SHOWN_SIDE px per side."""
    out = {}
    for k, v in images.items():
        im = Image.fromarray(v)
        im.thumbnail((SHOWN_SIDE, SHOWN_SIDE), Image.Resampling.LANCZOS)
        out[k] = np.asarray(im)
    return out


def _reading(evs: dict, steps: dict) -> str:
    """The evaluation's reading, with the measured numbers of the shipped JSON."""
    def a(m: str, key: str, i: int) -> str:
        return f"{evs[m][key][i]:.2f}" if m in evs else "n/a"

    pg = {m: dict(zip(d["pgd"]["eps"], zip(d["pgd"]["acc_a"], d["pgd"]["acc_b"], strict=True), strict=True))
          for m, d in evs.items() if "pgd" in d}
    p3 = {m: v.get(0.03) for m, v in pg.items()}
    budget = ", ".join(f"{m} {n}" for m, n in steps.items()) or "see the manifest"
    return (f"**Reading it (measured on our miniature).** One self-re-watermarking round leaves the undefended "
            f"learned models at {a('plain', 'self_acc_a', 0)} (plain) and {a('tinyhidden', 'self_acc_a', 0)} "
            "(TinyHiDDeN) on A, not at chance: the attacker's residual *adds* to the owner's instead of replacing it, "
            "so only the bits where A and B differ are at stake and they split about evenly (0.75 expected). The "
            f"second round takes plain to {a('plain', 'self_acc_a', 1)} while B is read at "
            f"{a('plain', 'self_acc_b', 1)}. SRW keeps A at {a('srw', 'self_acc_a', -1)} after five rounds, by not "
            f"letting B through (B at {a('srw', 'self_acc_b', 0)}); a different encoder (cross-model) barely "
            "touches A, so the self case is the dangerous one. PGD overwrite at eps 0.03 (about 4/255): attacker "
            "success on B " + ", ".join(f"{m} {v[1]:.2f}" for m, v in p3.items() if v) + " (plain and SRW both near "
            "chance: the budget is too small to overwrite either, so their gap is noise); at 0.06 only SRW (the PGD "
            "term) keeps A, see the curve. Ablation after one round on A: " + ", ".join(
                f"{m} {a(m, 'self_acc_a', 0)}" for m in R.SRW_VARIANTS) + ": the "
            "re-embedding loss carries the recovery, spectral norm alone does not. "
            f"Training steps per variant (same budget for all): {budget}.")


tab_run, tab_eval, tab_sens = st.tabs(["Attack one image", "Held-out evaluation and ablation", "Sensitivity"])
with tab_run:
    label, pil = image_input("rewatermark_img", presets, LIMITS)
    with st.form("rewatermark_form"):
        c1, c2, c3 = st.columns(3)
        baseline = bound(c1.selectbox, "Baseline (victim)", [m for m in avail if R.MODELS.kind(m) in ("baseline", "reference")],
                                key="rewatermark_baseline")
        defended = bound(c2.selectbox, "Defended / ablation", [m for m in DEFENDED if m in avail], key="rewatermark_defended")
        cross = bound(c3.selectbox, "Cross-model attacker", [m for m in CROSS if m in avail],
                             key="rewatermark_cross", help="another trained encoder re-embeds its own B once")
        c4, c5, c6 = st.columns(3)
        rounds = bound(c4.slider, "Self-re-watermarking rounds k", 1, 5, 3, key="rewatermark_rounds")
        pgd_eps = bound(c5.select_slider, "PGD eps ([-1,1] units)", [0.0, 0.01, 0.02, 0.03, 0.04, 0.06], 0.03,
                                   key="rewatermark_eps", help="0 = no PGD; 50 iterations, step eps/4")
        seed = bound(c6.number_input, "Seed (messages A, B)", 0, 1_000_000, 0, key="rewatermark_seed")
        tiles = bound(st.select_slider, "SRW frames per side", [1, 2, 4], L.TILES, key="rewatermark_tiles",
                      help="how the SRW-family models read an image: 4 = 4 x 4 frames of 32 px at 128 px (shipped); "
                           "1 = the whole image squeezed into one 32 px frame, which loses clean bits on detailed "
                           "photos (the held-out evaluation explains why)")
        go_ = st.form_submit_button("Embed A, attack with B", icon=":material/play_arrow:", type="primary",
                                    disabled=pil is None)
    if go_ and pil is not None:
        try:
            config = AttackConfig(models=(baseline, defended), rounds=int(rounds), cross=cross,
                                  pgd_eps=float(pgd_eps), tiles=int(tiles), seed=int(seed))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            config = None
        res = None if config is None else run_job("Re-watermarking", run_attack, np.asarray(pil.convert("RGB")),
                                                  config, time_cap_s=240)
        if res is not None:
            res = asdict(res)
            results["run"] = res
            record_run("rewatermark", {"image": label, "baseline": baseline, "defended": defended, "cross": cross,
                                       "rounds": int(rounds), "PGD eps": float(pgd_eps), "SRW frames per side": int(tiles)},
                       {**{f"{m} acc A after round {int(rounds)}": d["acc_a"][-1] for m, d in res["models"].items()},
                        **{f"{m} clean acc": d["clean"] for m, d in res["models"].items()}}, seed=int(seed))
    run = results.get("run")
    if run:
        ms = run["models"]
        st.plotly_chart(fig.rounds_curve({m: d for m, d in ms.items()}), key="rewatermark_rounds_fig")
        rows = [r for d in ms.values() for r in d["rows"]]
        show_metrics_table(pd.DataFrame(rows).round(4), key="rewatermark_table")
        bars = [{"model": m, "attack": r["stage"].replace("self re-watermark ", "self "), "acc_a": r["bit acc A"],
                 "acc_b": r["bit acc B"]} for m, d in ms.items() for r in d["rows"][1:]]
        st.plotly_chart(fig.attack_bars(bars), key="rewatermark_bars")
        quality = [{"model": m, "PSNR x_w (dB)": round(d["rows"][0]["PSNR vs original"], 2),
                    "SSIM x_w": round(d["ssim"]["x_w"], 4), "SSIM after round 1": round(d["ssim"]["rw1"], 4),
                    **{f"acc A after {k}": v for k, v in d["distortions"].items()},
                    "embed ms": round(1e3 * d["seconds"]["embed"], 1),
                    "decode ms": round(1e3 * d["seconds"]["decode"], 1)} for m, d in ms.items()]
        st.caption("Quality, robustness of A to common distortions on this image, and cost:")
        show_metrics_table(quality, key="rewatermark_quality")
        st.caption(f"Images and magnified differences are shown at most {SHOWN_SIDE} px per side, so the page stays "
                   "quick to draw; the downloads are full size.")
        for m, d in ms.items():
            st.plotly_chart(fig.image_strip(_shown(d["images"]), 10.0, f"{m}: {d['label']}"),
                            key=f"rewatermark_img_{m}")
            st.plotly_chart(fig.bit_grid(list(d["decoded"]), list(d["decoded"].values()), d["bits_a"],
                                         f"{m}: decoded bits vs A (green = A's bit)"), key=f"rewatermark_bits_{m}")
        d1, d2, d3, d4 = st.columns(4)
        m0, m1 = list(ms)
        with d1:
            image_download(f"{m0} watermarked (PNG)", Image.fromarray(ms[m0]["images"]["x_w"]),
                           f"{m0}_watermarked.png", "rewatermark_dl_w0")
        with d2:
            image_download(f"{m1} after round {run['rounds']} (PNG)",
                           Image.fromarray(ms[m1]["images"][f"rw{run['rounds']}"]), f"{m1}_rw.png",
                           "rewatermark_dl_rw1")
        with d3:
            json_download("Report (JSON)", {"rows": rows, "quality": quality, "provenance": provenance(
                run["seed"], [L.weights_path(m) for m in ms if m in L.VARIANTS], models=list(ms),
                rounds=run["rounds"], cross=run["cross"], pgd_eps=run["pgd_eps"], image=label)},
                "rewatermark_report.json", key="rewatermark_dl_json")
        with d4:
            csv_download("Metrics (CSV)", pd.DataFrame(rows), "rewatermark_metrics.csv", key="rewatermark_dl_csv")

ev = json.loads(EVAL.read_text()) if EVAL.is_file() else None
with tab_eval:
    if ev is None:
        st.info("No shipped evaluation yet: run `python -m backend.train rewatermark --evaluate`.")
    else:
        st.caption(ev.get("note", ""))
        evs = ev["models"]
        st.markdown(_reading(evs, ev.get("steps", {})))
        st.plotly_chart(fig.rounds_curve({m: {"clean": d["clean_acc"], "acc_a": d["self_acc_a"],
                                              "acc_b": d["self_acc_b"]} for m, d in evs.items()},
                                         "Held-out set 1 (scikit-image held-out photos + procedural): accuracy after each self-re-watermarking round"),
                        key="rewatermark_ev_rounds")
        abl = [{"model": m, "PSNR (dB)": d["psnr"], "SSIM": d["ssim"], "clean acc": d["clean_acc"],
                "self round 1: A": d["self_acc_a"][0], "self round 1: B": d["self_acc_b"][0],
                "self round 5: A": d["self_acc_a"][-1],
                "cross: A": d.get("cross", {}).get("acc_a"), "cross: attacker B": d.get("cross", {}).get(
                    "attacker_acc_b"),
                **{f"PGD {e}: {k}": v for e, va, vb in zip(d.get("pgd", {}).get("eps", []),
                                                            d.get("pgd", {}).get("acc_a", []),
                                                            d.get("pgd", {}).get("acc_b", []), strict=True)
                   if e in (0.03, 0.06) for k, v in (("A", va), ("B", vb))},
                **{f"{k}": v for k, v in d["distortions"].items()},
                "embed ms": d["embed_ms"], "decode ms": d["decode_ms"]} for m, d in evs.items()]
        show_metrics_table(pd.DataFrame(abl).round(3), key="rewatermark_ablation")
        if ev.get("spec_miniature"):
            st.caption("The spec's recorded miniature (its own design, not the paper's setting), for comparison:")
            show_metrics_table(pd.DataFrame(ev["spec_miniature"]), key="rewatermark_spec_tbl")
        st.plotly_chart(fig.pgd_curve(evs), key="rewatermark_ev_pgd")
        c1, c2 = st.columns(2)
        c1.plotly_chart(fig.distortion_bars(evs), key="rewatermark_ev_dist")
        c2.plotly_chart(fig.distortion_bars(evs, matched=True), key="rewatermark_ev_dist_m")
        csv_download("Evaluation (CSV)", pd.DataFrame(abl), "rewatermark_eval.csv", key="rewatermark_ev_csv")
    photos_ev = json.loads(PHOTOS_EVAL.read_text()) if PHOTOS_EVAL.is_file() else None
    st.subheader("Both held-out sets side by side")
    if photos_ev is None:
        st.info("No evaluation on the second held-out set yet: run `python -m backend.watermark.photo_eval`.")
    else:
        st.caption("Set 1 is the table above; set 2: " + photos_ev["note"])
        both = PE.rewatermark_side_by_side(ev["models"] if ev else None, photos_ev)
        show_metrics_table(pd.DataFrame(both).round(3), key="rewatermark_both_sets")
        st.caption("Set 2 (test split): each model's worst photos (lowest clean accuracy, then A after round 5).")
        show_metrics_table(pd.DataFrame(PE.worst_photo_rows(photos_ev, "test")).round(3), key="rewatermark_worst")
        csv_download("Both sets (CSV)", pd.DataFrame(both), "rewatermark_both_sets.csv", key="rewatermark_both_csv")

with tab_sens:
    if ev is None or not ev.get("sensitivity"):
        st.info("No shipped sensitivity measurement yet.")
    else:
        sens = ev["sensitivity"]
        c1, c2 = st.columns(2)
        c1.plotly_chart(fig.sensitivity_box(sens, "decoder"), key="rewatermark_sens_dec")
        c2.plotly_chart(fig.sensitivity_box(sens, "encoder"), key="rewatermark_sens_enc")
        st.plotly_chart(fig.margin_histogram({m: d["margins"] for m, d in sens.items() if "margins" in d}),
                        key="rewatermark_margins")
        rows = [{"model": m, "layer": r["layer"], "kind": r["kind"], "sigma of reshaped weight": r["reshaped_sigma"],
                 "true operator norm": r["operator_norm"]} for m, d in sens.items() for r in d.get("layers", [])]
        st.caption("Per layer: what spectral normalisation controls (the reshaped weight's largest singular value) "
                   "and the convolution's true operator norm at its input size. The product of the true norms would "
                   "bound a network of convolutions and ReLUs, but GroupNorm(affine=False) divides by the group's "
                   "standard deviation and has no global Lipschitz constant, so no certified bound exists here.")
        show_metrics_table(pd.DataFrame(rows).round(3), key="rewatermark_layers")
show_history("rewatermark")
