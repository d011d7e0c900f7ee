"""GLOT: token-graph pooling over frozen language models, the distractor stress test, baselines and LoRA costs."""

from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.runtime import ASSETS, provenance
from backend.tokens.glot import stress
from backend.tokens.glot.backbone import BACKBONES, backbone_kind, wrap_backbone
from backend.tokens.glot.experiments import StressConfig
from backend.tokens.glot.heads import TrainConfig
from backend.tokens.glot.inputs import PRESETS, SAMPLE
from backend.tokens.glot.jobs import StressJob, TrainJob, run_stress, run_train
from backend.tokens.glot.layers import GlotConfig
from backend.tokens.glot.pooling import OURS, POOLING_NAMES, POOLINGS
from backend.tokens.glot.stress import graph_effect
from ui.claims import claims_panel
from ui.figures import glot as figs
from ui.inputs import decoded, upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("glot", """
A frozen language model gives one state per token; a sentence task needs **one vector**. **GLOT** links tokens whose
states are similar (cosine above **tau**), refines them with **K** graph-attention layers and pools with learned
attention weights; only this head trains. The **stress test** hides a short "needle" among distractor words.
""", details_md="""
A frozen language model gives one state per token; a sentence task needs **one vector**. Mean, max or the [CLS] token
treat the tokens as an unordered bag. **GLOT** links tokens whose states have cosine similarity above **tau**, refines
them with **K** graph-attention layers, concatenates all layers (jumping knowledge) and pools with learned attention
weights; only this head and a linear classifier train, on backbone states computed **once**.
The **stress test** hides a short "needle" (*the folder includes **not** … files* vs *the folder includes files*) among
distractor words. The **released** generator has word-count shortcuts, the **hard** variant removes them, and the
**relational** variant asks whether two far-apart needles name the *same* noun: a bag of words cannot tell, and a
per-token readout can only if the backbone has already mixed the two nouns into the token states.
""")
claims_panel("glot")
RESULTS = ASSETS / "glot_results.json"
res_all: dict = st.session_state.setdefault("glot_result", {})
tab_run, tab_rec, tab_csv = st.tabs(["Run the stress test", "Recorded results", "Your labelled texts"])


def summary_table(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    keep = [c for c in ("ratio", "method", "accuracy", "accuracy_std", "seeds", "params", "seconds_per_epoch",
                        "edge_density") if c in df]
    return df[keep].round(4)


with tab_rec:
    rec = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    if not rec.get("heads"):
        st.info("No recorded results yet: run `python -m backend.train glot`.")
    for variant, block in rec.get("heads", {}).items():
        rows = [r for r in block["summary"] if r["ratio"] == 0.9]
        st.plotly_chart(figs.method_bars(rows, f"{variant} variant, 90% distractors "
                                               f"({stress.VARIANT_NOTES[variant]})"), key=f"glot_rec_{variant}")
    if rec.get("sweep"):
        variant = st.radio("Sweep", list(rec["sweep"]), horizontal=True, key="glot_rec_sweep")
        st.plotly_chart(figs.accuracy_vs_ratio(rec["sweep"][variant], f"Recorded sweep: {variant}"),
                        key="glot_rec_sweep_fig")
        sw = rec.get("sweep_config", {})
        st.caption(f"{sw.get('n_train')} train / {sw.get('n_eval')} eval texts per ratio (head seed 0; relational: "
                   "seeds 0-2, error bars = std). With this few texts an attention readout can stay near chance; with "
                   "2000 texts both readouts solve it (bars above).")
    if rec.get("heads"):
        sizes, sw = rec.get("sizes", {}), rec.get("sweep_config", {})
        blocks = [(v, b["summary"], sizes.get("n_train"), sizes.get("n_eval", 500)) for v, b in rec["heads"].items()]
        blocks += [(v, rows, sw.get("n_train"), sw.get("n_eval", 250)) for v, rows in rec.get("sweep", {}).items()]
        effect = [{"variant": v, "train texts": n_tr, **row} for v, rows, n_tr, n_ev in blocks
                  for row in graph_effect(rows, n_ev)]
        st.markdown("**Does the graph help over AdaPool** (the same readout without the graph)? Difference of eval "
                    "accuracy against the noise (2 binomial standard errors or the seed spread, whichever is larger).")
        show_metrics_table(pd.DataFrame(effect).round(3), key="glot_rec_effect")
    if sm := rec.get("smollm2"):
        title = (f"SmolLM2-135M (decoder, CLS = last token), hard variant, 90% distractors, subset "
                 f"{sm['n_train']}/{sm['n_eval']} texts")
        st.plotly_chart(figs.method_bars(sm["summary"], title), key="glot_rec_smollm2")
        lt, batch = sm["lora_timing"], sm.get("lora_batch", 16)
        epoch_s = lt["seconds_per_step"] * math.ceil(sm["n_train"] / batch)
        st.caption(f"LoRA r={lt['rank']} on SmolLM2: {lt['trainable_params']:,} trainable parameters, "
                   f"{lt['seconds_per_step']:.1f} s per step of {batch} texts ({lt['steps']} steps timed; a "
                   f"{sm['n_train']}-text epoch would take about {epoch_s:.0f} s); backbone states for "
                   f"{sm['n_train'] + sm['n_eval']} texts: {sm['encode_seconds']:.0f} s."
                   + (" On this subset no pooling gets clear of chance: it is shown for its costs, not as a result."
                      if max(x["accuracy"] for x in sm["summary"] if x["method"] in POOLINGS) < 0.6 else ""))
    if lora := rec.get("lora"):
        glot_row = next((r for r in rec["heads"].get("hard", {}).get("summary", []) if r["method"] == OURS), None)
        cost = [{"method": "LoRA r=64 + linear head", "accuracy": lora["accuracy"], "trainable params":
                 lora["trainable_params"], "s/epoch": round(lora["seconds_per_epoch"], 2)}]
        if glot_row:
            cost.append({"method": "GLOT head on cached states", "accuracy": glot_row["accuracy"],
                         "trainable params": glot_row["params"], "s/epoch": round(glot_row["seconds_per_epoch"], 2)})
        st.markdown("**Fine-tuning reference** (hard variant, 90% distractors, MiniLM)")
        show_metrics_table(cost, key="glot_rec_cost")
    if rec:
        sizes, sw = rec.get("sizes", {}), rec.get("sweep_config", {})
        st.caption(f"Recorded by `python -m backend.train glot` (MiniLM frozen, heads on {sizes.get('n_train')} train "
                   f"texts, accuracy = last of {rec.get('train_config', {}).get('epochs')} epochs on "
                   f"{sizes.get('n_eval')} fresh eval texts; relational: head seeds 0-2)"
                   + (f"; sweep with {sw['n_train']}/{sw['n_eval']} texts per ratio" if sw else "")
                   + f". Machine: {rec.get('machine', {}).get('platform')}, {rec.get('machine', {}).get('cpus')} CPUs.")

SIZES = {name: {"glot_ratios": list(v["ratios"]), "glot_ntrain": v["n_train"], "glot_neval": v["n_eval"],
                "glot_epochs": v["epochs"]} for name, v in PRESETS.items()}
preset_choice("glot", SIZES, container=tab_run, horizontal=True,
              help="Light takes seconds and is noisy; Full takes about a minute and a half on one CPU thread.")
with tab_run, st.form("glot_form"):
    c1, c2, c3 = st.columns(3)
    backbone = bound(c1.selectbox, "Backbone", [*BACKBONES, "other (name or folder)"], key="glot_backbone",
                            help="MiniLM: encoder, about 45 ms per text. SmolLM2-135M: decoder (CLS = last token), "
                                 "about 10x slower.")
    custom = c1.text_input("Model name or folder (for 'other')", key="glot_custom", max_chars=300)
    variant = bound(c2.selectbox, "Variant", stress.VARIANTS, index=1, key="glot_variant")
    position = bound(c2.selectbox, "Needle position", stress.POSITIONS, key="glot_position")
    ratios = bound(c3.multiselect, "Distractor ratios", stress.RATIOS, default=[0.9], key="glot_ratios")
    poolings = bound(c3.multiselect, "Poolings", POOLING_NAMES, default=list(POOLING_NAMES), format_func=POOLINGS.label,
                              key="glot_poolings")
    c1, c2, c3, c4 = st.columns(4)
    tau = bound(c1.slider, "tau (graph threshold)", 0.0, 1.0, 0.6, 0.05, key="glot_tau")
    k_layers = bound(c2.slider, "K (GAT layers)", 0, 4, 2, key="glot_k")
    hidden = bound(c3.select_slider, "GAT hidden size", [32, 64, 128, 256], 64, key="glot_hidden")
    epochs = bound(c4.slider, "Epochs", 1, 30, 5, key="glot_epochs")
    c1, c2, c3 = st.columns(3)
    n_train = bound(c1.number_input, "Train texts per ratio", 8, 2000, 64, 50, key="glot_ntrain")
    n_eval = bound(c2.number_input, "Eval texts per ratio", 8, 500, 32, 50, key="glot_neval")
    n_seeds = bound(c3.number_input, "Head seeds", 1, 3, 1, key="glot_seeds")
    go = st.form_submit_button("Run the stress test", icon=":material/play_arrow:", type="primary")
    st.caption("Backbone states are computed once per ratio and cached; the paper's scale is 2000/500 texts "
               "(see the recorded tab). Small runs are noisy.")



def _backbone(name: str):  # noqa: ANN202
    """The page's cached model wrapped as a GLOT backbone (the shared model cache of ``ui.models``)."""
    kind = backbone_kind(name)
    return wrap_backbone(get_model(kind, None if name == kind else name), name, is_decoder=kind == "smollm2")


if go:
    try:
        name = custom.strip() if backbone.startswith("other") else backbone
        job_cfg = StressJob(StressConfig(variant=variant, ratios=tuple(sorted(ratios)), position=position,
                                         n_train=int(n_train), n_eval=int(n_eval), poolings=tuple(poolings),
                                         seeds=tuple(range(int(n_seeds)))),
                            GlotConfig(num_layers=k_layers, gat_hidden=hidden, tau=tau), TrainConfig(epochs=epochs),
                            backbone=name)
        bb = _backbone(job_cfg.backbone)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
    else:
        out = run_job("GLOT stress test", run_stress, job_cfg, bb, time_cap_s=900)
        if out is not None:
            res_all["stress"] = out
            top = max(x["ratio"] for x in out["summary"])
            record_run("glot", {"backbone": out["backbone"], "variant": variant, "position": position,
                                "ratios": sorted(ratios), "train texts": int(n_train), "eval texts": int(n_eval),
                                "tau": tau, "K": k_layers, "hidden": hidden, "epochs": epochs},
                       {f"accuracy {x['method']} ({top:g})": x["accuracy"] for x in out["summary"]
                        if x["ratio"] == top}, seed=f"0..{int(n_seeds) - 1}")

with tab_run:
    if r := res_all.get("stress"):
        summ = r["summary"]
        if len({x["ratio"] for x in summ}) > 1:
            st.plotly_chart(figs.accuracy_vs_ratio(summ), key="glot_curve")
        else:
            st.plotly_chart(figs.method_bars(summ), key="glot_bars")
        show_metrics_table(summary_table(summ), key="glot_table")
        if effect := graph_effect(summ, r["config"]["n_eval"]):
            st.markdown("**GLOT vs AdaPool** (does the graph help here?)")
            show_metrics_table(pd.DataFrame(effect).round(3), key="glot_effect")
        last = max(x["ratio"] for x in summ)
        st.plotly_chart(figs.cost_bars([x for x in summ if x["ratio"] == last]), key="glot_costs")
        st.caption(f"Backbone {r['backbone']} ({r['backbone_params']:,} frozen parameters): states computed once in "
                   f"{r['encode_seconds']:.1f} s. Parameters and seconds per epoch are those of the trained head.")
        if ex := r.get("example"):
            st.markdown(f"**One eval text** (label {ex['label']}): {ex['text'][:400]}")
            n_tok = len(ex["tokens"])
            tau_view = st.slider("tau for this graph", 0.0, 1.0, float(ex["tau"]), 0.05, key="glot_tau_view")
            adj, dens = figs.graph_at_tau(ex["similarity"][:n_tok, :n_tok], tau_view)
            st.plotly_chart(figs.token_graph(ex["tokens"], ex["needle"], adj, tau_view, dens), key="glot_graph")
            if ex["weights"]:
                st.plotly_chart(figs.readout_weights(ex["tokens"], ex["needle"], ex["weights"]), key="glot_weights")
            st.plotly_chart(figs.similarity_heatmap(ex["similarity"], ex["sim_labels"], n_tok, ex["needle"]),
                            key="glot_heatmap")
        report = {k: v for k, v in r.items() if k != "example"}
        json_download("Download results (JSON)", {**report, "provenance": provenance(
            r["config"]["seeds"][0], backbone=r["backbone"], **r["config"])}, "glot_stress.json", key="glot_dl_json")
        csv_download("Download metrics (CSV)", summary_table(summ), "glot_stress.csv", key="glot_dl_csv")

with tab_csv:
    st.markdown("Train every pooling (and the bag-of-words controls) on **your labelled texts**: a UTF-8 CSV with a "
                "header `text,label`, 10 to 4000 rows, texts up to 2000 characters, 2 to 20 classes, at most 2 MB. "
                "A stratified quarter is held out for evaluation. MiniLM, tau/K/hidden from the stress-test form.")
    sample = stress.generate(**SAMPLE)
    sample_csv = pd.DataFrame({"text": sample.texts, "label": sample.labels})
    source = bound(st.radio, "Data", ["Preset: 120 hard stress-test texts (50% distractors)", "Upload a CSV"],
                      key="glot_csv_source")
    data = None
    if source.startswith("Preset"):
        data = sample_csv.to_csv(index=False).encode()
        csv_download("Download the preset (to see the format)", sample_csv, "glot_sample.csv", key="glot_dl_sample")
    else:
        got = upload("labelled_texts", "Labelled CSV (text,label)", key="glot_upload",
                     help="UTF-8, header row text,label; at most 4000 rows and 2 MB.")
        if got is not None:
            data = got[1]
    parsed = None
    if data is not None:
        parsed = decoded("labelled_texts", ("The CSV", data))
        if parsed is not None:
            st.caption(f"{len(parsed.texts)} rows, classes: {', '.join(parsed.classes[:20])}")
    if st.button("Train every pooling", key="glot_csv_go", disabled=parsed is None, icon=":material/play_arrow:"):
        try:
            train_cfg = TrainJob(glot=GlotConfig(num_layers=k_layers, gat_hidden=hidden, tau=tau),
                                 train=TrainConfig(epochs=epochs))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            train_cfg = None
        if train_cfg is not None and (out := run_job("Training on your texts", run_train, parsed, train_cfg,
                                                     _backbone(train_cfg.backbone), time_cap_s=900)) is not None:
            res_all["csv"] = out
    if c := res_all.get("csv"):
        rows = [{"method": x["method"], "accuracy": x["accuracy"], "accuracy_std": 0.0, "params": x["params"],
                 "train_seconds": round(x.get("train_seconds", 0.0), 2)} for x in c["rows"]]
        st.plotly_chart(figs.method_bars(rows, f"Held-out accuracy ({c['n_eval']} rows; majority class "
                                               f"{c['majority_baseline']:.2f})"), key="glot_csv_bars")
        show_metrics_table(rows, key="glot_csv_table")
        json_download("Download results (JSON)", {**c, "provenance": provenance(0, backbone=c["backbone"])},
                      "glot_csv.json", key="glot_csv_json")
        csv_download("Download metrics (CSV)", pd.DataFrame(rows), "glot_csv_metrics.csv", key="glot_csv_dl")
show_history("glot")
