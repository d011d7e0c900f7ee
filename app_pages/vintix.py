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
from backend.icrl.vintix.online import CONT_AGENTS, DARK_AGENTS
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
context grows, compare the flow head with a Gaussian and a Gaussian-mixture head on two-peak tasks, and let the
transformer act online against GP-UCB and discretised Thompson sampling (continuous actions), UCB1, Thompson sampling
and Algorithm Distillation (K-armed bandits), or Algorithm Distillation and posterior sampling (dark room).
""",
    details_md=r"""
**Model** (pretrained here, `python -m backend.train vintix`: about 90 min on one core of a busy 2-core machine, flow
model 69 min, Gaussian 5 min, mixture 6 min, Algorithm Distillation 10 min): 2 layers, d = 64, 4 heads, no
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
models share the trunk architecture and get as many continuous-task training steps as the flow model, but train on
the continuous family only (the flow model on all three families).

**Online agents** (the same tasks and reward noise for every agent). The transformer acts by *posterior sampling*:
each round one action sampled from its head given its own last 64 (action, reward) pairs. Continuous bandits: GP-UCB
(RBF kernel of length 0.07, prior fitted to the held-out tasks, sqrt(beta) = 1 tuned on separate tasks) and Thompson
sampling on 11 equally spaced actions (tuned likewise); the Gaussian and mixture models act the same way (ablations).
K-armed: UCB1, Thompson sampling with the held-out prior N(0.5, 0.2^2) and **Algorithm Distillation** (a causal
transformer of the same size trained on Thompson-sampling learning histories of the same training prior,
`python -m backend.train vintix --heads ad`). Dark room: AD (trained on goal-posterior-sampling
histories of the 20 training goals), posterior sampling over the goal (a Bayes-style reference) and a random walk.

**Past the training context** (64 tuples) the transformer keeps only its last 64 steps: these contexts are not
those it was trained on, and its regret relative to the baselines grows with the horizon (see the ratio figure; the
benchmark tabulates it at 16-256 rounds): the figures mark the training context.
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
    c1, c2, c3, c4, c5 = st.columns([3, 3, 3, 2, 2])
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
        "Online rounds",
        list(J.HORIZON_CHOICES),
        64,
        key="vintix_horizon",
        help="The model was trained on contexts of up to 64 tuples: past 64 rounds it keeps its last 64 (FIFO), "
        "outside its training.",
    )
    replicas = bound(c3.select_slider, "Online runs", list(J.REPLICA_CHOICES), 32, key="vintix_replicas")
    seed = bound(c4.number_input, "Seed", 0, 10_000, 0, key="vintix_seed")
    online = bound(c5.checkbox, "Online (continuous)", True, key="vintix_online",
                   help="On a continuous task, also let every agent act online for the chosen rounds.")
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
        config = J.RunConfig(context=int(context), horizon=int(horizon), replicas=int(replicas), seed=int(seed),
                             online=bool(online))
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
            "online": bool(online),
            "upload": uploaded[0] if uploaded else None,
        }
        if res.family == "cont":
            metrics = {f"mass near a peak, {h}": v["mass"] for h, v in out["heads"].items()}
            metrics.update({f"regret {a}": v["final"] for a, v in out.get("regret", {}).get("agents", {}).items()})
        elif res.family == "karm":
            metrics = {f"regret {a}": v["final"] for a, v in out["regret"]["agents"].items()}
        else:
            metrics = {f"return {a}": v["total"] for a, v in out["agents"].items()}
        record_run("vintix", out["params"], metrics, seed=int(seed), seconds=out["seconds"])


def _ci(d: list | None) -> str:
    return "" if d is None else f"{d[0]:+.2f} [{d[1]:+.2f}, {d[2]:+.2f}]"


def _online_table(r: dict, registry) -> None:
    paired = r["regret"].get("paired", {}).get("diff", {})
    rows = [
        {
            "agent": registry.label(a),
            "cumulative regret": v["final"],
            "+- s.e.": v["final_sem"],
            "ours - agent, 95 % paired interval": _ci(paired.get(a)),
            "ms per round (all runs)": 1000 * v["seconds_per_round"],
        }
        for a, v in r["regret"]["agents"].items()
    ]
    show_metrics_table(rows, key=f"vintix_regret_table_{r['family']}")


if r := res_all.get("run"):
    if r.get("beyond_context"):
        st.warning(
            f"This run goes past the model's training context ({r['training_context']} tuples): from there on the "
            "transformer sees only its last 64 steps, contexts it was not trained on, and its regret relative to the "
            "baselines grows with the horizon (the ratio figure below)."
        )
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
        if "regret" in r:
            c1, c2 = st.columns(2)
            c1.plotly_chart(figs.regret(r), key="vintix_cont_regret_fig")
            c2.plotly_chart(figs.regret_ratio(r), key="vintix_cont_ratio_fig")
            _online_table(r, CONT_AGENTS)
    elif r["family"] == "karm":
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.entropy_curve(r), key="vintix_entropy_fig")
        c2.plotly_chart(figs.policy(r), key="vintix_policy_fig")
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.regret(r), key="vintix_regret_fig")
        c2.plotly_chart(figs.regret_ratio(r), key="vintix_ratio_fig")
        _online_table(r, AGENTS)
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
        show_metrics_table(
            [
                {"agent": DARK_AGENTS.label(a), "total return": v["total"], "return, last episode": v["returns"][-1],
                 "ours - agent, 95 % paired interval": _ci(r["paired"]["diff"].get(a)), "seconds": v["seconds"]}
                for a, v in r["agents"].items()
            ],
            key="vintix_dark_table",
        )
        st.caption(f"{len(r['goals'])} held-out goals x {r['replicas']} runs; optimal return per episode "
                   f"{r['optimal']:.1f}.")
    json_download(
        "Download results (JSON)",
        {**r, "provenance": provenance(r["seed"], **r["params"])},
        "vintix_run.json",
        key="vintix_dl_json",
    )
show_history("vintix")
