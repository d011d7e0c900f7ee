"""Visual Jigsaw: GRPO post-training on jigsaw puzzles with a graded vs a binary reward, and a tiny VLM before/after."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.scenes.jigsaw import inputs as I
from backend.scenes.jigsaw import jobs as J
from backend.scenes.jigsaw.puzzle import assemble, make_puzzle
from backend.scenes.jigsaw.reward import GAMMA, REWARDS
from ui.claims import claims_panel
from ui.figures import jigsaw as figs
from ui.inputs import image_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("jigsaw", """
**Visual Jigsaw** post-trains a vision-language model with reinforcement learning on a self-supervised task: an image is
cut into tiles and shuffled, the model answers the original order, and the answer is checked automatically. The
**graded reward** (1 exact, 0.2 x the fraction of right positions for a valid wrong order, 0 invalid, plus 0.2 for
the format) keeps a learning signal on 3 x 3 puzzles, where an exact solve by chance is 1 in 362,880 and a **binary
reward** gives none. Here small Plackett-Luce policies over DINOv2 tile features learn with GRPO under both rewards,
and the lab's tiny VLM is post-trained on 2 x 2 puzzles.
""", details_md=f"""
**Task.** The image (centre-cropped, 168 x 168) is cut into 2 x 2 or 3 x 3 tiles, shuffled and shown labelled 1..n.
The answer lists, for each position of the original image in raster order, the label of the tile that belongs there,
e.g. `3, 1, 4, 2` (commas or spaces; `\\boxed{{...}}` is read too). Reward: `graded` = 1 exact, {GAMMA} x fraction of
right positions for a valid wrong permutation, 0 invalid (repeated or missing label); `binary` = 1 exact else 0; both
+ 0.2 when the answer has the format.

**Policy (a).** Each tile is encoded on its own by the frozen DINOv2 ViT-S/14 at 56 px (4 x 4 patches), summarised as
the mean token and the mean tokens of its four border rows/columns; a 2-layer transformer over the tiles (no order
information) scores every tile for every position; a Plackett-Luce policy fills the positions in raster order.
GRPO (the lab's `backend.reasoning.grpo`, no KL): 16 puzzles per step, 16 sampled answers each (the paper's group
size, temperature 1), 600 steps, 3 seeds x 2 rewards x 2 grids. Training images: 400 procedural scenes; curves and
claims on held-out scenes (other seeds) and on **scikit-image photographs** (another source, never trained on).

**Policy (b).** The iLLaVA page's tiny VLM (DINOv2 -> projector -> SmolLM2-135M) sees the four shuffled tiles as one
112-pixel image and scores the 24 possible answers (the log-probability of the four digits, each normalised over the
digits not used yet; one pass over the prompt, then a prefix tree of 16 tokens). GRPO with the graded reward and no
KL: 1,000 steps of 2 training puzzles x 16 answers sampled from the softmax of the 24 scores, 400 distinct training
scenes. Trained: rank-8 LoRA adapters on the language model's q/v projections at learning rate 1e-3 (the paper: 1e-6,
on a 7B model); the projector stays as shipped, because the scene questions read the image through it (training it
too at 1e-3 for 300 steps shifted it by about a quarter of its weights' norm and cut the question accuracy from 0.97
to 0.37). The vision encoder is frozen, so each puzzle's encoder tokens are computed once. Before and after: the
jigsaw on 100 held-out scene puzzles and 60 photograph puzzles, and the accuracy on over 500 held-out scene questions
(iLLaVA's), with paired intervals. The jigsaw rises only a little above chance (1/24); see the numbers and curves in
the tab.

**Where the miniature departs from the paper.** The paper post-trains Qwen2.5-VL-7B (all weights) on 118k COCO
images, generating free text with a thinking format, learning rate 1e-6; here a 0.13 M-parameter policy over frozen
features, and for the VLM a closed answer set, 2 x 2 puzzles only and a thousand steps on small
LoRA adapters (one CPU thread) instead of every weight of a 7B model. The official reward code
gives partial credit only to puzzles of more than 4 tiles; here it applies to 2 x 2 too, as the paper's text states.
Clip ordering (the paper's video jigsaw) runs on procedural tracking shots instead of real videos, and 3-D jigsaws
are not built. The policies learned from procedural scenes; on photographs expect much lower
solve rates (the numbers below say how much).
""")
claims_panel("jigsaw")

tab_solve, tab_eval, tab_vlm, tab_clip = st.tabs(["Solve and race", "Learning curves: graded vs binary",
                                                  "Tiny VLM before / after", "Clip ordering"])


SOURCE_LABELS = {"scenes_val": "held-out scenes", "photos": "photographs", "clips_val": "clip ordering: held-out clips",
                 "photo_pans": "clip ordering: pans over photographs"}


def _grid_name(g: str) -> str:
    return f"{g} x {g}" if str(g).isdigit() else "clip ordering"


def _preset(name: str):  # noqa: ANN202 - a loader of a PIL image
    from PIL import Image

    return lambda: Image.fromarray(J.preset_image(name))


with tab_solve:
    label, image = image_input("jigsaw_img", {name: _preset(name) for name in I.PRESETS})
    c1, c2, c3 = st.columns(3)
    grid = bound(c1.radio, "Grid", [2, 3], index=1, key="jigsaw_grid", horizontal=True,
                 format_func=lambda g: f"{g} x {g}")
    seed = bound(c2.selectbox, "Seed of the policies", list(J.SEEDS), key="jigsaw_seed")
    shuffle = bound(c3.number_input, "Shuffle", 0, 1_000_000, 0, key="jigsaw_shuffle")
    if image is not None:
        st.caption(f"The {image.size[0]} x {image.size[1]} image is centre-cropped and resized to 168 x 168, then cut.")
        shown = make_puzzle(np.asarray(image.convert("RGB")), int(grid), int(shuffle)).shown
        st.image(assemble(shown, int(grid), 4), width=260,
                 caption=f"Shuffled: labels 1-{int(grid) ** 2} in raster order (left to right, top to bottom)")
    with st.form("jigsaw_form"):
        answer = st.text_input("Race the model: your order (for each original position, the shown label), e.g. "
                               + ("3, 1, 4, 2" if int(grid) == 2 else "5, 9, 1, 7, 3, 2, 8, 6, 4")
                               + " - leave empty to only watch the models", "", max_chars=200, key="jigsaw_answer")
        go = st.form_submit_button("Solve with the policies", icon=":material/play_arrow:", type="primary")
    if go:
        if image is None:
            st.error("Pick a preset or upload an image first.", icon=":material/error:")
        else:
            try:
                cfg = J.SolveConfig(grid=int(grid), seed=int(seed), shuffle=int(shuffle), answer=answer)
            except InputError as err:
                st.error(str(err), icon=":material/error:")
                cfg = None
            if cfg is not None:
                res = run_job("Solving", J.run_solve, image, cfg, vision=get_model("dinov2"), time_cap_s=120)
                if res is not None:
                    st.session_state["jigsaw_result"] = {"solve": res, "summary": res.summary(), "image": label}
                    metrics = {f"{a['label']} right": sum(a["correct"]) for a in res.answers}
                    if res.race:
                        metrics["you: reward"] = res.race["reward_graded"]
                    record_run("jigsaw", {"image": label, "grid": cfg.grid, "seed": cfg.seed, "shuffle": cfg.shuffle},
                               metrics, seed=cfg.seed)
    if (state := st.session_state.get("jigsaw_result")) and "solve" in state:
        res = state["solve"]
        st.plotly_chart(figs.board_figure(res), key="jigsaw_board")
        rows = [{"who": a["label"], "order": ", ".join(map(str, a["answer"])),
                 "tiles right": f"{sum(a['correct'])}/{len(a['correct'])}", "exact": a["exact"],
                 "graded reward": a["reward_graded"], "binary reward": a["reward_binary"],
                 "policy's probability": a["confidence"]} for a in res.answers]
        if res.race:
            r = res.race
            rows.append({"who": "You", "order": ", ".join(map(str, r["answer"] or [])) or "(not readable)",
                         "tiles right": f"{sum(r['correct'])}/{len(res.truth)}" if r["correct"] else "invalid",
                         "exact": r["exact"], "graded reward": r["reward_graded"], "binary reward": r["reward_binary"],
                         "policy's probability": None})
            if not r["format_ok"]:
                st.warning("Your answer is not a list of numbers, so it earns no reward (not even the format 0.2).")
            elif not r["valid"]:
                st.warning(f"Your answer is not a permutation of 1-{len(res.truth)}: accuracy reward 0.")
        show_metrics_table(rows, key="jigsaw_solve_table")
        st.caption(f"True order: {', '.join(map(str, res.truth))}. {res.seconds:.2f} s for the tile features and "
                   "both policies. Green frames: right positions; red: wrong.")
        json_download("Answers (JSON)", state["summary"], "jigsaw_solve.json", key="jigsaw_solve_json")
        show_history("jigsaw")

with tab_eval:
    preset_choice("jigsaw", {"Quick: 32 images x 4 shuffles": {"jigsaw_count": 32},
                             "Standard: all images x 4 shuffles": {"jigsaw_count": 128}},
                  label="Evaluation size", horizontal=True)
    with st.form("jigsaw_eval_form"):
        c1, c2, c3 = st.columns(3)
        source = bound(c1.selectbox, "Held-out puzzles", [*J.EVAL_SOURCES, *J.CLIP_EVAL_COUNTS], key="jigsaw_source",
                       format_func=lambda s: SOURCE_LABELS[s])
        count = bound(c2.select_slider, "Images", [32, 64, 128], 32, key="jigsaw_count")
        metric = bound(c3.radio, "Curve", ["solve", "tile_acc"], key="jigsaw_metric",
                       format_func=lambda m: {"solve": "exact-solve rate", "tile_acc": "tiles right"}[m])
        go_e = st.form_submit_button("Score the shipped policies", icon=":material/science:", type="primary")
    if go_e:
        try:
            ecfg = J.EvalConfig(source=source, count=min(int(count), {**J.EVAL_COUNTS, **J.CLIP_EVAL_COUNTS}[source]))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ecfg = None
        if ecfg is not None:
            er = run_job("Scoring", J.run_evaluate, ecfg, time_cap_s=300)
            if er is not None:
                st.session_state["jigsaw_eval"] = er.to_dict()
                record_run("jigsaw", {"source": ecfg.source, "count": ecfg.count},
                           {f"{_grid_name(g)} {REWARDS.label(rw)}": m["solve"] for g, d in er.means.items()
                            for rw, m in d.items()})
    if r := st.session_state.get("jigsaw_eval"):
        rows = [{"task": _grid_name(g), "reward": r["labels"][rw], "solve rate": round(m["solve"], 3),
                 "tiles right": round(m["tile_acc"], 3),
                 "training s (mean)": round(float(np.mean([x["train_seconds"] or 0 for x in r["rows"]
                                                           if str(x["grid"]) == g and x["reward"] == rw])), 1)}
                for g, d in r["means"].items() for rw, m in d.items()]
        st.subheader(f"{r['puzzles']} puzzles per task ({SOURCE_LABELS[r['source']]}), means over "
                     f"{len(r['config']['seeds'])} seeds")
        show_metrics_table(rows, key="jigsaw_means")
        for g, p in r["paired"].items():
            st.markdown(f"**{_grid_name(g)}, graded minus binary solve rate:** {p['gain']:+.3f} (95 % interval "
                        f"{p['low']:+.3f} to {p['high']:+.3f}, {p['n']} paired seeds). The paper: binary fails to "
                        "learn 3 x 3.")
        st.plotly_chart(figs.curves_figure(r, metric), key="jigsaw_curves")
        st.plotly_chart(figs.seed_bars(r), key="jigsaw_seedbars")
        st.caption(f"Each policy: {r['params']:,} parameters; scoring took {r['seconds']:.1f} s. Curves were "
                   "recorded during training on all held-out images; the table re-scores the shipped weights.")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Scores (JSON)", r, "jigsaw_scores.json", key="jigsaw_eval_json")
        with d2:
            csv_download("Per run (CSV)", pd.DataFrame(r["rows"]), "jigsaw_scores.csv", key="jigsaw_eval_csv")

with tab_vlm:
    with st.form("jigsaw_vlm_form"):
        k = bound(st.select_slider, "Also re-answer the questions of k held-out scenes (0: recorded numbers only; "
                                    "each scene takes a few seconds per model)", [0, 2, 5, 10, 20], 0,
                  key="jigsaw_recheck")
        go_v = st.form_submit_button("Show the tiny VLM before and after", icon=":material/visibility:")
    if go_v:
        v = run_job("Tiny VLM", J.run_vlm, J.VLMConfig(recheck_scenes=int(k)), time_cap_s=600)
        if v is not None:
            st.session_state["jigsaw_vlm"] = v.to_dict()
    if v := st.session_state.get("jigsaw_vlm"):
        q = v["recorded"]
        lo, hi = q["qa_change_ci"]
        a, b, c = st.columns(3)
        a.metric("Scene questions, before", f"{q['qa_accuracy_before']:.3f}", help=f"{q['qa_questions']} questions")
        b.metric("after jigsaw post-training", f"{q['qa_accuracy_after']:.3f}", f"{q['qa_change']:+.3f}")
        c.metric("95 % paired bootstrap interval", f"{lo:+.3f} to {hi:+.3f}")
        rows = []
        for src, label in (("scenes_val", "held-out scenes"), ("photos", "photographs")):
            d = q["jigsaw"][src]
            for key, what in (("exact", "solve rate"), ("p_true", "p(true order)"), ("reward", "expected reward")):
                m = d[key]
                rows.append({"": f"jigsaw {what}, {label} ({m['n']})", "before": m["before"], "after": m["after"],
                             "change [95 % CI]": f"{m['change']:+.3f} [{m['change_ci'][0]:+.3f}, "
                                                 f"{m['change_ci'][1]:+.3f}]"})
        rows += [{"": f"questions: {kind} ({d['n']})", "before": round(d["before"], 3), "after": round(d["after"], 3),
                  "change [95 % CI]": ""} for kind, d in v["per_kind"].items()]
        show_metrics_table(rows, key="jigsaw_vlm_table")
        st.plotly_chart(figs.vlm_history(v), key="jigsaw_vlm_hist")
        if v["recheck"]:
            rc = v["recheck"]
            st.markdown(f"Re-answered in this run: {rc['questions']} questions, before {rc['accuracy_before']:.3f}, after "
                        f"{rc['accuracy_after']:.3f}.")
        t = q["training"]
        st.caption(f"Post-trained parameters: {t['projector_params']:,} (projector) + {t['lora_params']:,} (LoRA rank "
                   f"{t['lora_rank']} on q/v); {t['steps']} GRPO steps of {t['batch']} puzzles x {t['group']} answers "
                   f"took {q['train_seconds']:.0f} s on one CPU thread ({q['seconds_per_step']:.2f} s per step, "
                   f"held-out curve included). Chance on the jigsaw: 1/24 = 0.042 (expected graded reward of uniform "
                   f"answers 0.283).")
        json_download("Before / after (JSON)", v, "jigsaw_vlm.json", key="jigsaw_vlm_json")

with tab_clip:
    st.markdown("The temporal jigsaw: four frames of a clip are shuffled and the policy answers their time order, for "
                "each moment the label of the frame that belongs there. Every clip is a tracking shot whose camera "
                "moves right, so the scene drifts left as time goes on (the backdrop, further away, drifts less): "
                "that is the clip's arrow of time. The policies trained on procedural clips only; pans over "
                "photographs are another source.")
    c1, c2, c3, c4 = st.columns(4)
    csource = bound(c1.selectbox, "Clip", [*J.CLIP_EVAL_COUNTS, "image"], key="jigsaw_clip_source",
                    format_func=lambda s: {"clips_val": "held-out procedural clip", "photo_pans": "pan over a photograph",
                                           "image": "pan over the image of the first tab"}[s])
    cindex = bound(c2.number_input, "Clip number (seeds the pan over an image)", 0, 1_000_000, 0, key="jigsaw_clip_index")
    cseed = bound(c3.selectbox, "Seed of the policies", list(J.SEEDS), key="jigsaw_clip_seed")
    cshuffle = bound(c4.number_input, "Shuffle", 0, 1_000_000, 1, key="jigsaw_clip_shuffle")
    with st.form("jigsaw_clip_form"):
        canswer = st.text_input("Race the model: your time order (for each moment, the shown label), e.g. 3, 1, 4, 2 - "
                                "leave empty to only watch the models", "", max_chars=200, key="jigsaw_clip_answer")
        go_c = st.form_submit_button("Order the frames", icon=":material/movie:", type="primary")
    if go_c:
        try:
            ccfg = J.OrderConfig(source="clips_val" if csource == "image" else csource, index=int(cindex),
                                 seed=int(cseed), shuffle=int(cshuffle), answer=canswer)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ccfg = None
        if ccfg is not None and csource == "image" and image is None:
            st.error("Pick a preset or upload an image in the first tab first.", icon=":material/error:")
            ccfg = None
        if ccfg is not None:
            cres = run_job("Ordering", J.run_order, ccfg, image if csource == "image" else None,
                           vision=get_model("dinov2"), time_cap_s=120)
            if cres is not None:
                st.session_state["jigsaw_clip"] = {"order": cres, "summary": cres.summary()}
                record_run("jigsaw", {"clip": csource, "index": ccfg.index, "seed": ccfg.seed, "shuffle": ccfg.shuffle},
                           {f"{a['label']} frames right": sum(a["correct"]) for a in cres.answers}, seed=ccfg.seed)
    if state := st.session_state.get("jigsaw_clip"):
        cres = state["order"]
        st.plotly_chart(figs.clip_figure(cres), key="jigsaw_clip_fig")
        rows = [{"who": a["label"], "order": ", ".join(map(str, a["answer"])),
                 "frames right": f"{sum(a['correct'])}/{len(a['correct'])}", "exact": a["exact"],
                 "graded reward": a["reward_graded"], "policy's probability": a["confidence"]} for a in cres.answers]
        if cres.race:
            r = cres.race
            rows.append({"who": "You", "order": ", ".join(map(str, r["answer"] or [])) or "(not readable)",
                         "frames right": f"{sum(r['correct'])}/{len(cres.truth)}" if r["correct"] else "invalid",
                         "exact": r["exact"], "graded reward": r["reward_graded"], "policy's probability": None})
        show_metrics_table(rows, key="jigsaw_clip_table")
        st.caption(f"True time order: {', '.join(map(str, cres.truth))}. {cres.seconds:.2f} s for the frame features "
                   "and both policies. Chance of an exact order: 1/24. Held-out solve rates per source are in the "
                   "learning-curves tab (choose a clip-ordering source).")
        json_download("Answers (JSON)", state["summary"], "jigsaw_clip.json", key="jigsaw_clip_json")
