"""DEPO: a diverse, influential, medium-difficulty share of the prompts offline, explorability pruning online."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning.depo import inputs as I
from backend.reasoning.depo import jobs as J
from backend.reasoning.depo.loop import STRATEGIES, TrainConfig
from backend.reasoning.depo.select import SUBSETS
from ui.claims import claims_panel
from ui.figures import depo as figs
from ui.inputs import decoded, upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("depo", """
**DEPO** makes GRPO training cheaper in two ways. *Offline* it keeps a share of the training prompts that is diverse
and influential (greedy log-determinant of a PageRank-weighted similarity kernel over sentence embeddings) and of
medium difficulty (sampled by the pass rate of a few rollouts); *online* it skips the rollouts of prompts whose recent
*explorability* (sum over a group's rollouts of |advantage| x entropy) is low, and replays the least-explored ones.
""", details_md="""
**Selection.** Prompts are embedded with MiniLM (all-MiniLM-L6-v2, L2-normalised). A 10-nearest-neighbour cosine
graph gives PageRank scores w. The greedy step adds the prompt with the largest conditional variance under the kernel
L = diag(w)^1/2 K diag(w)^1/2, K an RBF kernel on the embeddings (bandwidth: the median pairwise distance), which
greedily maximises log det(L_Y). With pass rates (the pool's, or a difficulty column of your CSV), DEPO takes twice the
target size from the greedy order and samples the target size from it with p ~ phi((Acc - 0.5) / 0.25). Baselines of
the same size: a random subset (mean of 5 draws), the top-PageRank prompts, a k-center coreset (farthest-point
traversal). Coverage = mean distance of every prompt to its nearest selected prompt (lower is better).

**Training.** GRPO (G = 4 rollouts per prompt, 8 prompts per step, Adam) on the 1.8M-parameter tiny reasoner over
240 generated problems of 5-8 operations; held-out accuracy on 150 other problems (one sample each at the training
temperature, the same random numbers for every policy). Every rollout token counts, DEPO's offline pass-rate rollouts
included. The pruning keeps the whole batch in the first epoch and 15 points less each epoch after (the 40 % floor
would be reached in the fifth epoch; the 24-step runs cover four epochs of DEPO's 48 prompts); explorability is
averaged over a sample's last two epochs, incorrect rollouts with more than 1.5 x the entropy of the correct ones are
dropped, and one pruned sample that was rolled out least often is replayed per step.

**Where the miniature departs from the paper.** A 1.8M-parameter policy instead of 7B models; 24 GRPO steps instead
of hundreds; MiniLM embeddings instead of the policy's last layer; generated arithmetic instead of math datasets.
The offline pass-rate rollouts cost DEPO a large share of the small training budget here (they amortise over long
training in the paper). On this budget full-data GRPO does not improve the tiny reasoner's held-out accuracy
measurably, so the curves differ only by noise and the speed-up is not measurable here; the selection, the token
accounting and the pruning are the method's own. See the "Paper vs here" panel for the measured numbers.
""")
claims_panel("depo")


@st.cache_resource(max_entries=1, show_spinner="Loading the MiniLM encoder")
def _encoder():  # noqa: ANN202
    from backend.models.text import load_text_encoder

    return load_text_encoder()


MODES = ["Select a subset", "GRPO runs"]
mode = bound(st.radio, "View", MODES, horizontal=True, key="depo_mode")

if mode == MODES[0]:
    choices = list(I.PRESETS) + ["Your prompt list (upload)"]
    choice = bound(st.selectbox, "Prompts", choices, key="depo_preset")
    prompts = None
    if choice == choices[-1]:
        st.caption(f"Limits: {I.KINDS[0].limits}.")
        prompts = decoded("prompt_list", upload("prompt_list", "Prompt list (.txt or .csv)", key="depo_upload"))
    with st.form("depo_select_form"):
        c1, c2 = st.columns(2)
        share = bound(c1.slider, "Share kept", 0.05, 1.0, 0.2, 0.05, key="depo_share")
        knn = bound(c2.select_slider, "Graph neighbours (k)", [5, 10, 20], 10, key="depo_knn")
        go = st.form_submit_button("Select", icon=":material/filter_list:", type="primary")
    if go:
        source = "upload" if choice == choices[-1] else I.PRESETS[choice]["source"]
        try:
            cfg = J.SelectConfig(share=float(share), source=source, knn=int(knn))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None and source == "upload" and prompts is None:
            st.error("Upload a prompt list first (one prompt per line, or a CSV with a prompt column).",
                     icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["depo_select_config"] = cfg
            res = run_job("Selecting", J.run_select, prompts, cfg, _encoder(), time_cap_s=300)
            if res is not None:
                st.session_state["depo_select"] = res.to_dict()
                record_run("depo", {"prompts": choice[:40], "share": cfg.share},
                           {f"coverage {SUBSETS.label(k)}": v["coverage"] for k, v in res.strategies.items()})
    if r := st.session_state.get("depo_select"):
        for note in r["notes"]:
            st.info(note, icon=":material/info:")
        shown = bound(st.selectbox, "Subset on the map", list(SUBSETS), key="depo_shown",
                      format_func=SUBSETS.label)
        st.plotly_chart(figs.selection_map(r, shown, f"{r['n']:,} prompts, {r['k']:,} kept ({SUBSETS.label(shown)})"),
                        key="depo_map")
        rows = [{"strategy": r["labels"][k], "log-det (higher: more diverse x influential)": v["logdet"],
                 "coverage (lower: better)": v["coverage"], "mean PageRank x N": v["mean_pagerank"],
                 **({"mean pass rate": v["mean_difficulty"]} if "mean_difficulty" in v else {}),
                 "seconds": r["seconds"].get(k)} for k, v in r["strategies"].items()]
        show_metrics_table(rows, key="depo_table")
        st.caption(f"Shared cost: MiniLM embeddings {r['seconds']['embed']:.2f} s, graph and PageRank "
                   f"{r['seconds']['graph_pagerank']:.2f} s.")
        if r["histograms"]:
            st.plotly_chart(figs.difficulty_histograms(r), key="depo_hist")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Selection (JSON)", r, "depo_selection.json", key="depo_json")
        with d2:
            sel = r["strategies"][shown]["indices"]
            csv_download("Selected prompts (CSV)", pd.DataFrame({"id": [r["ids"][i] for i in sel],
                                                                 "prompt": [r["prompts"][i] for i in sel]}),
                         "depo_selected.csv", key="depo_csv")
else:
    st.caption("The shipped runs (`python -m backend.train depo`): full-data GRPO, DEPO and random 20 % with 3 seeds, "
               "top-PageRank, k-center and DEPO without pruning with 1 seed, all from the same tiny reasoner.")
    if st.button("Show the shipped runs", icon=":material/monitoring:", type="primary", key="depo_show"):
        try:
            runs = J.load_runs()
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            runs = None
        if runs is not None:
            res = run_job("Reading the runs", J.run_report, J.ReportConfig(), runs, time_cap_s=60)
            if res is not None:
                st.session_state["depo_report"] = res.to_dict()
                ours = STRATEGIES.names("ours")[0]
                d0 = [r for r in runs["runs"] if r["config"]["strategy"] == ours and r["config"]["seed"] == 0]
                st.session_state["depo_rated"] = (d0[0]["rates"], [d0[0]["rates"][d0[0]["rated"].index(i)]
                                                                    for i in d0[0]["subset"]]) if d0 else ([], [])
    if rep := st.session_state.get("depo_report"):
        st.plotly_chart(figs.curves(rep), key="depo_curves")
        rows = []
        for name, t in rep["totals"].items():
            sp = rep["speedups"].get(name, {})
            rows.append({"strategy": rep["labels"][name], "seeds": t["seeds"], "final accuracy": t["final_accuracy"],
                         "rollout tokens": t["tokens"], "of which offline": t["offline_tokens"],
                         "rollouts pruned": t["pruned_rollouts"], "seconds per run": t["seconds"],
                         "speed-up at target": ("reference" if not sp else "not measurable" if not sp["measurable"]
                                                else sp["speedup"] if sp["reached"] else "not reached")})
        show_metrics_table(rows, key="depo_runs_table")
        st.caption(f"Starting policy: held-out accuracy {rep['start_accuracy']:.3f}. Speed-up = rollout tokens "
                   "full-data GRPO needs to reach 95 % of its final accuracy / tokens the strategy needs; not "
                   "measurable when the starting policy already meets that target.")
        before, after = st.session_state.get("depo_rated", ([], []))
        if rep["heat"]:
            a, b = st.columns(2)
            a.plotly_chart(figs.rated_histograms(before, after), key="depo_rated_hist")
            b.plotly_chart(figs.explorability_heatmap(rep["heat"], rep["pruned"], "Explorability of DEPO seed 0 "
                                                      "(grey: pruned)"), key="depo_heat")
        json_download("Curves and speed-ups (JSON)", rep, "depo_runs.json", key="depo_report_json")
    with st.expander("Run a short GRPO run here (4 steps on a 40-problem pool, as `depo train`)"):
        strat = bound(st.selectbox, "Strategy", list(STRATEGIES), key="depo_strategy", format_func=STRATEGIES.label)
        if st.button("Train", icon=":material/play_arrow:", key="depo_train_go"):
            cfg = TrainConfig(strategy=strat, steps=4, pool=40, heldout=20, batch=4, group=4, eval_every=2)
            res = run_job("GRPO", J.run_train, cfg, None, _encoder(), time_cap_s=600)
            if res is not None:
                st.session_state["depo_train"] = res.to_dict()
        if t := st.session_state.get("depo_train"):
            log = t["log"]
            st.dataframe(pd.DataFrame(log["curve"]), hide_index=True, key="depo_train_table")
            st.caption(f"{t['label']}: {len(log['subset'])} prompts, {log['tokens']:,} rollout tokens "
                       f"({log['offline_tokens']:,} offline), {log['pruned_rollouts']} rollouts pruned, "
                       f"{log['seconds']:.0f} s; policy {t['parameters']:,} parameters.")
show_history("depo")
