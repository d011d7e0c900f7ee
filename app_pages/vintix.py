"""Vintix II / DPT: in-context bandits with a decision-pretrained transformer and a rectified-flow action head."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.icrl.vintix import jobs as J
from backend.icrl.vintix import tasks as T
from backend.icrl.vintix.evaluate import AGENTS
from backend.icrl.vintix.heads import HEADS
from backend.icrl.vintix.inputs import PRESETS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import vintix as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header(
    "vintix",
    r"""
A small **decision-pretrained transformer** reads an unordered context of (action, reward) tuples from a task it has
never seen and outputs a distribution over the **optimal action**; sampling from it acts like posterior (Thompson)
sampling. Its continuous action head is a **rectified flow**: pick a task, watch the action density narrow as the
context grows, and compare the flow head with a Gaussian and a Gaussian-mixture head on two-peak tasks, or the
transformer with UCB1 and Thompson sampling online on K-armed bandits.
""",
    details_md=r"""
**Model** (pretrained here, `python -m backend.train vintix`: about 80 min on one core of a busy 2-core machine, flow
model 69 min, Gaussian 5 min, mixture 6 min): 2 layers, d = 64, 4 heads, no
positional encodings. Tokens: BOS, the query and up to 64 context tuples; the attention mask lets context tokens see
only BOS and themselves and the query see BOS and the whole context, so the output is exactly invariant to the order of
the context. The loss is taken at every prefix length 0..64 in one pass (one query copy per prefix).

**Pretraining data**: K-armed Gaussian bandits (K = 2..10, means U[0, 1], noise 0.3), 1-D continuous bandits with one or
two Gaussian reward peaks (widths 0.10-0.25), and a 5x5 dark room (20 of 25 goals). Contexts come from a demonstrator
whose noise rises gradually from a random level to fully random, or from random policies; every context is labelled
with the task's optimal action. **Held-out tasks** come from other priors: arm means N(0.5, 0.2^2) with K = 3..10; two
*equal* peaks of widths 0.05-0.09 (narrower than any training peak); the 5 unseen dark-room goals.

**Heads**: the flow head learns a velocity $v(h, x_t, \gamma(t))$ with $x_t = (1-t)x_0 + t a^*$, $x_0 \sim N(0,1)$,
learned-frequency sinusoidal time features $\gamma$ and fixed Fourier features of $x_t$ (an MLP of 3 hidden layers of
256), and samples by Heun integration in 16 steps; the Gaussian head
fits a mean and a standard deviation, the mixture head 5 Gaussians (both by likelihood). The Gaussian and mixture
models share the trunk architecture and get as many continuous-task training steps as the flow model.
""",
)
claims_panel("vintix")
res_all: dict = st.session_state.setdefault("vintix_result", {})

YOURS = {"peaks": "Your peaks", "means": "Your arm means", "upload": "Upload a task (CSV)"}
CHOICES = {**{name: p.label for name, p in PRESETS.items()}, **YOURS}
choice = bound(st.radio, "Task", list(CHOICES), format_func=CHOICES.get, horizontal=True, key="vintix_task")
uploaded = None
if choice == "peaks":
    peaks_text = bound(
        st.text_input,
        "Peaks as centre:width (heights 0.8), comma-separated",
        "-0.5:0.07, 0.45:0.07",
        key="vintix_peaks",
        help="1-3 peaks, centres in [-1, 1], widths 0.02-0.5.",
    )
elif choice == "means":
    means_text = bound(
        st.text_input,
        "Arm means, comma-separated",
        "0.3, 0.5, 0.45, 0.7, 0.2",
        key="vintix_means",
        help=f"2-{T.K_MAX} means in [-0.5, 1.5]; rewards get N(0, {T.SIGMA_KARM}^2) noise.",
    )
elif choice == "upload":
    got = file_input(
        "bandit_task",
        "A task as CSV: header 'mean' (arm means), 'center,width[,height]' (peaks) or "
        "'a,r' (a reward curve on [-1, 1])",
        key="vintix_upload",
        help="UTF-8 CSV, at most 256 KB: 2-10 arm means, 1-3 peaks or 8-2,001 curve points.",
    )
    if got is not None:
        uploaded = got
        st.caption(f"{got[0]}: {type(got[1]).__name__.replace('Task', '')} task.")

with st.form("vintix_form"):
    c1, c2, c3, c4 = st.columns(4)
    context = bound(
        c1.slider,
        "Context tuples",
        0,
        J.MAX_CONTEXT,
        J.MAX_CONTEXT,
        key="vintix_context",
        help="Uniformly random actions and their noisy rewards (the model's context holds 0-64).",
    )
    horizon = bound(
        c2.select_slider,
        "Online rounds (K-armed)",
        list(J.HORIZON_CHOICES),
        64,
        key="vintix_horizon",
        help="Past 64 rounds the transformer keeps its last 64 pulls (FIFO).",
    )
    replicas = bound(c3.select_slider, "Online runs (K-armed)", list(J.REPLICA_CHOICES), 32, key="vintix_replicas")
    seed = bound(c4.number_input, "Seed", 0, 10_000, 0, key="vintix_seed")
    go = st.form_submit_button(
        "Run", icon=":material/play_arrow:", type="primary", disabled=choice == "upload" and uploaded is None
    )


if go:
    try:
        if choice == "peaks":
            task = T.parse_peaks(peaks_text)
        elif choice == "means":
            task = T.parse_means(means_text)
        elif choice == "upload":
            task = uploaded[1]
        else:
            task = choice
        config = J.RunConfig(context=int(context), horizon=int(horizon), replicas=int(replicas), seed=int(seed))
    except InputError as err:
        st.error(str(err))
        config = None
    res = None if config is None else run_job("DPT run", J.run_task, task, config, time_cap_s=120)
    if res is not None:
        out = res_all["run"] = res.to_json()
        out["params"] = {
            "task": choice,
            "context": int(context),
            "horizon": int(horizon),
            "replicas": int(replicas),
            "upload": uploaded[0] if uploaded else None,
        }
        if res.family == "cont":
            metrics = {f"mass near a peak, {h}": v["mass"] for h, v in out["heads"].items()}
        elif res.family == "karm":
            metrics = {f"regret {a}": v["final"] for a, v in out["regret"]["agents"].items()}
        else:
            metrics = {"return, last episode": out["returns"][-1]}
        record_run("vintix", out["params"], metrics, seed=int(seed), seconds=out["seconds"])

if r := res_all.get("run"):
    if r["family"] == "cont":
        st.plotly_chart(figs.head_densities(r), key="vintix_heads_fig")
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.density_by_context(r), key="vintix_narrow_fig")
        c2.plotly_chart(figs.entropy_curve(r), key="vintix_entropy_fig")
        rows = [
            {
                "head": HEADS.label(h),
                "mass within 0.1 of a peak": v["mass"],
                "mass per peak": ", ".join(f"{m:.2f}" for m in v["mass_per_peak"]),
                "mean reward of samples": v["mean_reward"],
                "sample entropy (nats)": v["entropy"],
                f"ms per {r['n_samples']} samples": v["sample_ms"],
                "parameters": v["parameters"],
            }
            for h, v in r["heads"].items()
        ]
        show_metrics_table(rows, key="vintix_heads_table")
        st.caption(
            "Peaks at " + ", ".join(f"{c:+.2f}" for c in r["centers"]) + f"; best action {r['best']:+.3f}. "
            "Sampling time: the flow head integrates 16 Heun steps (32 velocity evaluations)."
        )
        csv_download(
            "Download densities (CSV)",
            pd.DataFrame({"a": figs._centres(r["grid"]), **{h: v["density"] for h, v in r["heads"].items()}}),
            "vintix_densities.csv",
            key="vintix_dl_csv",
        )
    elif r["family"] == "karm":
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.entropy_curve(r), key="vintix_entropy_fig")
        c2.plotly_chart(figs.policy(r), key="vintix_policy_fig")
        st.plotly_chart(figs.regret(r), key="vintix_regret_fig")
        rows = [
            {
                "agent": AGENTS.label(a),
                "cumulative regret": v["final"],
                "+- s.e.": v["final_sem"],
                "ms per round (all runs)": 1000 * v["seconds_per_round"],
            }
            for a, v in r["regret"]["agents"].items()
        ]
        show_metrics_table(rows, key="vintix_regret_table")
        st.caption(
            "Arm means " + ", ".join(f"{m:.2f}" for m in r["means"]) + f"; DPT / Thompson regret ratio "
            f"{r['regret'].get('ratio_dpt_thompson', float('nan')):.2f}."
        )
        csv_download(
            "Download regret curves (CSV)",
            pd.DataFrame({a: v["cum_regret"] for a, v in r["regret"]["agents"].items()}),
            "vintix_regret.csv",
            key="vintix_dl_csv",
        )
    else:
        st.plotly_chart(figs.dark_returns(r), key="vintix_dark_fig")
    json_download(
        "Download results (JSON)",
        {**r, "provenance": provenance(r["seed"], **r["params"])},
        "vintix_run.json",
        key="vintix_dl_json",
    )
show_history("vintix")
