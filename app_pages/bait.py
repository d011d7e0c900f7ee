"""BAIT: unlearnable examples that keep protecting when the victim fine-tunes a pretrained prior."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from PIL import Image

from backend.errors import InputError
from backend.robustness.bait import jobs
from backend.robustness.bait.data import SOURCES, load_source
from backend.robustness.bait.experiment import METHODS
from backend.robustness.bait.inputs import PRESETS
from backend.robustness.bait.perturb import MAX_EPS
from backend.robustness.bait.victims import INITS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import bait as figs
from ui.inputs import image_input
from ui.layout import csv_download, image_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("bait", """
**Unlearnable examples** add a small, bounded perturbation to images so that a model trained on them learns little.
Error-minimising noise (EMN) works when the victim trains from scratch but a **pretrained prior** can see past it;
**BAIT** trains a perturbation **generator** through a few unrolled training steps of a model that starts from the
prior, so that the perturbation stays tied to a **wrong label**. Below: the victims' accuracy grid and your own image
protected at an epsilon you choose.
""", details_md="""
**Data.** Two 10-class 32 × 32 sources: *scene shapes* (one object near the centre of a procedural scene; the class is
its shape, with random colour, texture, size, angle, backdrop and lighting) and scikit-learn's bundled 8 × 8 *digits*,
upsampled to 32 × 32 (a second source). 1,000 training images each; 500 / 797 clean test images.

**The prior** is the same 34k-parameter CNN pretrained on 5,000 other scenes drawn the same way but showing ten
**other outlines** (heptagon, octagon, 4- and 6-pointed stars, bar, half-disc, crescent, arrow, L, T): disjoint from
the target classes, it never sees a target label, yet its shape features transfer (its head start on clean data is
shown under the grid). A pretrained victim keeps its conv layers and gets a fresh 10-way head; the paper's priors are
ImageNet-scale backbones, ours is small.

**Methods** (every perturbation within ±eps grey levels per channel after rounding to uint8, checked exactly):
- *EMN* (Huang et al. 2021): sample-wise min-min: a surrogate trained from scratch on the protected images and signed
  gradient steps that lower each image's loss under its true label, until the surrogate fits them.
- *Targeted poison* (Fowl et al. 2021): PGD towards the wrong label (y + 1) mod 10 against a model fine-tuned from
  the prior on clean data.
- *BAIT*: a perturbation **generator** G(x, y) → delta: a learned pattern per class plus an image-conditioned
  residual from a small U-Net, squashed by eps · tanh. Inner level: a surrogate restarted at every outer step from
  the prior fine-tuned on the clean images (the targeted poison's crafting model) takes 3 SGD steps on
  (x + G(x, y), true y), unrolled with `torch.func.functional_call`; outer level: Adam on the generator (500 steps)
  lowers the inner-trained surrogate's cross-entropy towards the wrong label (y + 1) mod 10, the gradient flowing
  through the inner steps. *0 unrolled steps* is the ablation without the inner level. New images (yours) get one
  forward pass of the shipped generator (the pattern tiles over larger images). The paper's losses and schedules are
  not in its abstract; ours are in the package. Larger inner learning rates make the inner steps raise the
  surrogate's loss on the true labels instead of lowering it (the inner level stops being training), so the inner
  rate is 0.003.

**Victims**: 8 epochs of Adam (lr 2e-3), batch 64, no augmentation, from scratch or from the prior; 5 seeds per
cell, and a seed is the whole pipeline (the victims of seed s train on the images protected by the protectors trained
with seed s), so the interval, a bootstrap over seeds, covers the protectors' training too. The grid is trained at
eps = 8/255; the slider sets the bound for the images you protect with seed 0's protectors (EMN and the targeted
poison re-run their signed-gradient steps at that eps against their shipped models; BAIT's generator scales its
output by eps). Command: `python -m backend.train bait`.
""")
claims_panel("bait")
state: dict = st.session_state.setdefault("bait_result", {})

st.subheader("Victims' clean test accuracy")
try:
    grid = jobs.run_grid(jobs.GridConfig())
except InputError as err:
    st.error(str(err), icon=":material/error:")
    grid = None
if grid is not None:
    st.plotly_chart(figs.accuracy_grid(grid.cells, list(METHODS), METHODS.label, METHODS.color, INITS),
                    key="bait_grid_fig")
    st.caption(f"eps = {grid.settings['eps']}/255; seeds {grid.settings['seeds']}; the whole grid trains in "
               f"{grid.settings['train_seconds']:.0f} s on one CPU thread (`python -m backend.train bait`).")
    st.markdown("**The prior's head start** on clean data (clean training from the prior minus from scratch, paired "
                "over seeds, 95% interval): " + "; ".join(
                    f"{h['source']} {h['scratch']:.3f} → {h['prior']:.3f}, {h['head_start']:+.3f} "
                    f"[{h['ci'][0]:+.3f}, {h['ci'][1]:+.3f}]" for h in grid.head_start) + ".")
    with st.expander("Table, costs and BAIT's outer loss", icon=":material/table:"):
        df = pd.DataFrame([{k: v for k, v in c.items() if k != "accuracies"} | {"label": METHODS.label(c["method"])}
                           for c in grid.cells])
        show_metrics_table(df, key="bait_grid_table")
        costs = [{"source": s, "EMN s": d["emn"]["seconds"], "EMN rounds": d["emn"]["rounds"],
                  "targeted s": d["targeted"]["seconds"], "BAIT s": d["bait"]["seconds"],
                  "BAIT 0-unroll s": d["bait_k0"]["seconds"], "victims s": d["victim_seconds"]}
                 for s, d in grid.settings["sources"].items()]
        show_metrics_table(costs, key="bait_costs")
        st.markdown("**BAIT's generator**: outer loss per step (the inner-trained surrogate's cross-entropy towards "
                    "the wrong label; below chance = the wrong label is bound) and, in the table, the rate at which "
                    "the inner-trained surrogate predicts the wrong label at the end (chance 0.1). At eps 8/255 the "
                    "loss falls but stays above chance: the fine-tuned surrogate is robust at this budget (per-sample "
                    "targeted PGD flips 37% of shapes); the same objective binds at 32/255 (outer loss 0.71, 85% "
                    "wrong labels: `benchmarks/results/bait.md`).")
        log = jobs.grid_log()
        src = st.selectbox("Source", list(log["sources"]), key="bait_curve_source")
        curves = {m: log["sources"][src][f"{m}_curve"] for m in METHODS if f"{m}_curve" in log["sources"][src]}
        ours = METHODS.names("ours")[0]
        st.plotly_chart(figs.outer_curves(curves, METHODS.label, METHODS.color,
                                          log["sources"][src][ours]["chance_loss"]), key="bait_curves")
        show_metrics_table([{"method": METHODS.label(m), **log["sources"][src][m]} for m in curves],
                           key="bait_gen_table")
        csv_download("Grid (CSV)", df, "bait_grid.csv", key="bait_grid_csv")
    if st.button("Re-evaluate the shipped victims", key="bait_reeval"):
        res = run_job("BAIT: re-evaluate the shipped victims", jobs.run_grid, jobs.GridConfig(reevaluate=True))
        if res is not None:
            state["reevaluated"] = res.reevaluated
    if state.get("reevaluated"):
        show_metrics_table(state["reevaluated"], key="bait_reeval_table")

st.subheader("Protect images")
IMAGE_MODES = ["Preset test images", "An image: a photo or an upload"]
SOURCE_NAMES = list(SOURCES)
mode = bound(st.radio, "Images", IMAGE_MODES, horizontal=True, key="bait_mode")
c1, c2, c3 = st.columns(3)
eps = bound(c1.slider, "Epsilon, in /255", 1, MAX_EPS, 8, key="bait_eps",
            help="L-infinity bound per channel in grey levels; the accuracy grid is trained at 8.")
source = bound(c2.selectbox, "Protectors trained on", SOURCE_NAMES, key="bait_source", format_func=SOURCES.label)
image, label_choice = None, None
if mode == IMAGE_MODES[0]:
    preset = c3.selectbox("Preset", list(PRESETS), key="bait_preset")
    source = PRESETS[preset]
else:
    choice, image = image_input("bait_img")
    if image is not None and max(image.size) > jobs.MAX_SIDE:
        st.caption(f"The {image.size[0]} × {image.size[1]} image is scaled down to at most {jobs.MAX_SIDE} px a "
                   "side.")
    names = list(load_source(source, "test", 1).class_names)
    label_choice = c3.selectbox("Its class (every method needs one)", ["predict it", *names],
                                key="bait_label")
go_run = st.button("Protect", type="primary", icon=":material/shield:", key="bait_go")

if go_run:
    try:
        label = None if label_choice in (None, "predict it") else names.index(label_choice)
        config = jobs.ProtectConfig(source=source, eps=int(eps), label=label)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
    else:
        if mode != "Preset test images" and image is None:
            st.error("Pick a photo or upload an image first.", icon=":material/error:")
        else:
            res = run_job("BAIT: protect", jobs.run_protect, image, config, time_cap_s=120)
            if res is not None:
                state["protect"] = res
                record_run("bait", {"images": mode, "source": source, "eps": int(eps)},
                           {f"L-inf {r['method']}": r["linf"] for r in res.rows})

if res := state.get("protect"):
    names = res.class_names
    caps = [f"{names[y]} ({res.label_from})" for y in res.labels]
    st.plotly_chart(figs.thumbnails(res.clean, res.protected, res.amplified, METHODS.label, caps, res.eps),
                    key="bait_thumbs")
    rows = [{**r, "bound": res.eps} for r in res.rows]
    show_metrics_table(rows, key="bait_rows")
    st.caption("L-inf: the realised largest change of any channel in grey levels (never above the bound); "
               "seconds: time to protect these images with the shipped models.")
    c1, c2 = st.columns(2)
    with c1:
        json_download("JSON report", {**res.summary(), "provenance": provenance(
            None, [jobs.PROTECTOR_WEIGHTS], page="bait")}, "bait_report.json", key="bait_json")
    with c2:
        ours = METHODS.names("ours")[0]
        if ours in res.protected:
            image_download("BAIT-protected image (PNG)", Image.fromarray(res.protected[ours][0]),
                           "bait_protected.png", key="bait_png")
show_history("bait")
