"""Spectral Bellman Method: the spectrum of stacked Bellman backups, SBM features, Thompson-sampling exploration."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.rl.spectralbellman import jobs
from backend.rl.spectralbellman.agents import AGENTS
from backend.runtime import provenance
from backend.weights import WeightsError
from ui.claims import claims_panel
from ui.figures import spectralbellman as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header(
    "spectralbellman",
    r"""
**Spectral Bellman Method (SBM)**: back up many random value functions with the Bellman operator, stack the results,
and learn features that span them. For a low-rank MDP the stack's spectrum **cuts at the rank d**; for a generic MDP
it is smeared. The learned feature covariance then drives **Thompson sampling**, compared here with TS over the true
and over one-hot features (RLSVI), a count-bonus UCB-VI, an RND bonus, random features and epsilon-greedy on DeepSea,
a chain, gridworld or your own MDP. On the shipped DeepSea(10) and DeepSea(20) runs (10 seeds, paired intervals)
the tuned UCB-VI and TS over the true features solve both in fewer episodes than TS + SBM, RND solves DeepSea(20)
sooner, and RLSVI is level with it.
""",
    details_md=r"""
With zero inherent Bellman error, $T Q_\theta = \phi^\top \tilde\theta(\theta)$ for every $\theta$, so the matrix of
backups $Y = [T Q_{\theta_1}, \dots, T Q_{\theta_n}]$ has rank d: its left singular vectors span the features, its
right ones the post-Bellman parameters. SBM alternates $L_1(\phi) = E[\tfrac12\phi^\top C_{\tilde\theta}\phi -
\phi^\top\tilde\theta\, TQ_\theta]$ (with the EMA $C_{\tilde\theta}$ of $E[\tilde\theta\tilde\theta^\top]$),
$L_2(\tilde\theta) = E[\tfrac12\tilde\theta^\top C_\phi\tilde\theta - \tilde\theta^\top\phi\, TQ_\theta]$ with
$\tilde\theta = \theta + \Delta(\theta)$ (a residual MLP, the EMA $C_\phi$ of $E[\phi\phi^\top]$) and an
orthogonality penalty $\|E[\phi\phi^\top] - I\|_F^2$: each update is one damped power-iteration step (never one SVD).
The loss forms are derived from the spec's description, as the paper's equations were not available here.

**Agents.** $\Sigma = \lambda I + \sum\phi\phi^\top$; once per episode, for every number k of steps to go,
$\theta_{TS,k} \sim N(\hat\theta_k, \sigma_{exp}\Sigma^{-1})$ with $\hat\theta_k$ the least-squares fit of the
backups of the sampled $Q_{TS,k-1}$ (randomised least-squares value iteration); step t acts greedily on $Q_{TS,H-t}$.
*TS + SBM* learns its features online from its replay counts every 5 episodes ($\nu = N(\hat\theta,
\sigma_{rep}^2 I)$); *TS + SBM from the simulator* learns them beforehand from the exact backups, reward included
(it knows where DeepSea's treasure is: an upper bound, not exploration). *RLSVI* is the same agent over one-hot
features; *UCB-VI* plans on the empirical model with the bonus $\beta k / \sqrt{n(s,a)}$ and $Q_k \le k$ (never-tried
pairs at the cap). Two details of online SBM are ablated: never-visited pairs keep their random initial feature rows
(their directions of $\Sigma^{-1}$ stay wide: optimism that is not learned) or get zero rows (*unvisited pairs
zeroed*); and $\nu$ is centred on the agent's fit rescaled to the learner's raw features, or on the fit over the
normalised features (*centred on the normalised fit*). *Solved* = the first episode with return at least
0.9 x optimal.

**Tuning.** Before the treasure is seen the fitted Q is about zero, so the sampled Q is $\sqrt{\sigma_{exp}}$ times a
draw and its greedy action does not depend on $\sigma_{exp}$ (the shipped grid shows identical runs for 0.01, 0.1
and 1); the prior weight $\lambda$ is the knob that matters. The shipped log tunes $\lambda \in \{0.01, 0.1, 1\}$
for TS over the true and over one-hot features, $\beta \in \{0.01, 0.1, 1\}$ for UCB-VI and the RND weight in
$\{0.1, 0.5, 2\}$, each taking its best setting on the evaluation seeds (favouring the references); TS + SBM and its
zeroed ablation run the $\lambda$ grid at N = 10 and the page's $\lambda = 1$ at N = 20 (an online SBM run there
takes minutes), RLSVI's $\lambda = 1$ runs at N = 10 only.
""",
)
claims_panel("spectralbellman")
res_all: dict = st.session_state.setdefault("spectralbellman_result", {})

ENV_LABELS = {
    "deepsea": "DeepSea(N)",
    "chain": "Chain(N)",
    "lowrank": "Random low-rank MDP (|S| = 50, |A| = 4)",
    "fullrank": "Random full-rank MDP (|S| = 50, |A| = 4)",
    "gridworld": "Pixel gridworld (network features)",
    "upload": "Upload an MDP (JSON)",
}
c1, c2, c3 = st.columns([2, 1, 1])
env_name = bound(c1.selectbox, "Environment", list(ENV_LABELS), key="spectralbellman_env", format_func=ENV_LABELS.get)
size = bound(
    c2.select_slider,
    "N (DeepSea / chain)",
    [4, 6, 8, 10, 12, 15, 20],
    10,
    key="spectralbellman_n",
    disabled=env_name not in ("deepsea", "chain"),
)
rank = bound(
    c3.select_slider,
    "Rank d (low-rank MDP)",
    [2, 4, 8, 12, 16],
    8,
    key="spectralbellman_rank",
    disabled=env_name != "lowrank",
)
mdp = None
upload = None
if env_name == "upload":
    got = file_input(
        "mdp_json",
        "MDP as JSON: states, actions, P[s][a][s'], R[s][a], gamma",
        key="spectralbellman_upload",
        help="2-200 states, 1-10 actions, rows of P sum to 1 with no negatives, gamma in [0, 1]; optional "
        "start, horizon (1-500), terminal (list of states); at most 2 MB.",
    )
    if got is not None:
        mdp = upload = got[1]
        st.caption(
            f"{got[0]}: {mdp.n_states} states, {mdp.n_actions} actions, gamma {mdp.gamma:g}, horizon {mdp.horizon}."
        )
else:
    env_cfg = jobs.EnvConfig(env_name, size=int(size), rank=int(rank))
    mdp = env_cfg.build()
ready = mdp is not None
DEFAULT_AGENTS = [n for n in AGENTS if AGENTS.kind(n) != "ablation"]  # the ablations on demand (they learn features)

tab_rep, tab_agents, tab_sweep = st.tabs(["Spectrum and representation", "Agents", "Episodes to solve vs N"])

with tab_rep, st.form("spectralbellman_rep_form"):
    c1, c2 = st.columns(2)
    iters = bound(c1.select_slider, "SBM iterations", [50, 100, 200, 400, 800], 200, key="spectralbellman_iters")
    d_rep = bound(
        c2.number_input, "Feature dimension d (0: the backups' numerical rank)", 0, 400, 0, key="spectralbellman_d"
    )
    go_rep = st.form_submit_button(
        "Learn the representation", icon=":material/play_arrow:", type="primary", disabled=not ready
    )

with tab_agents, st.form("spectralbellman_agents_form"):
    c1, c2, c3 = st.columns(3)
    episodes = bound(
        c1.select_slider, "Episodes per agent", [50, 100, 200, 400, 800], 200, key="spectralbellman_episodes"
    )
    sigma_exp = bound(
        c2.select_slider, "sigma_exp (TS scale)", [0.01, 0.03, 0.1, 0.3, 1.0], 0.1, key="spectralbellman_sigma"
    )
    seed = bound(c3.number_input, "Seed", 0, 10_000, 0, key="spectralbellman_seed")
    c1, c2 = st.columns([3, 1])
    chosen = bound(
        c1.multiselect, "Agents", list(AGENTS), DEFAULT_AGENTS, key="spectralbellman_agents",
        format_func=AGENTS.label,
    )
    lam = bound(c2.select_slider, "lambda (prior weight)", [0.01, 0.1, 1.0], 1.0, key="spectralbellman_lam")
    go_agents = st.form_submit_button(
        "Run the agents", icon=":material/play_arrow:", type="primary", disabled=not ready
    )

with tab_sweep, st.form("spectralbellman_sweep_form"):
    c1, c2, c3 = st.columns(3)
    sizes = bound(c1.multiselect, "N", [4, 6, 8, 10, 12, 15, 20], [6, 10], key="spectralbellman_sizes")
    seeds = bound(c2.select_slider, "Seeds per N", [2, 3, 5, 10], 3, key="spectralbellman_seeds")
    budget = bound(c3.select_slider, "Episode budget", [100, 200, 300, 500, 1000], 300, key="spectralbellman_budget")
    st.caption(
        "The full sweep is N up to 20 with 10 seeds and a 1,000-episode budget (minutes); the default "
        "is the ci subset."
    )
    go_sweep = st.form_submit_button("Episodes to solve DeepSea(N)", icon=":material/play_arrow:", type="primary")


def _env_config() -> jobs.EnvConfig:
    """The environment of the selectors (an upload replaces it: it is passed to the jobs beside this config)."""
    return jobs.EnvConfig() if upload is not None else env_cfg


if go_rep and ready:
    config = jobs.RepresentConfig(d=int(d_rep) or None, iters=int(iters), spectra=True)
    out = run_job("SBM representation", jobs.run_represent, _env_config(), config, upload, time_cap_s=300)
    if out is not None:
        out["spectra"] = {(ENV_LABELS[env_name] if k == out["env"]["name"] else k): v for k, v in out["spectra"].items()}
        out["params"] = {"env": env_name, "size": int(size), "rank": int(rank), "iters": int(iters), "d": out["d"]}
        res_all["rep"] = out
        metrics = {"largest angle (rad)": out["sbm"]["final_max_angle"], "closure": out["sbm"]["final_closure"]}
        record_run("spectralbellman", out["params"], metrics)
if go_agents and ready:
    try:
        config = jobs.ExploreConfig(tuple(chosen), episodes=int(episodes), sigma_exp=float(sigma_exp),
                                    lam=float(lam), seed=int(seed))
    except InputError as err:
        st.error(str(err))
    else:
        out = run_job("Exploration agents", jobs.run_explore, _env_config(), config, upload, time_cap_s=300)
        if out is not None:
            out["params"] = {"env": env_name, "size": int(size), "episodes": int(episodes),
                             "sigma_exp": float(sigma_exp), "lam": float(lam), "seed": int(seed),
                             "agents": list(chosen)}
            res_all["agents"] = out
            record_run(
                "spectralbellman", out["params"], {f"solved {r['agent']}": r["episodes_to_solve"] for r in out["rows"]}
            )
if go_sweep:
    try:
        config = jobs.SweepConfig(tuple(sorted(int(n) for n in sizes)), int(seeds), int(budget))
    except InputError as err:
        st.error(str(err))
    else:
        out = run_job("Episodes to solve vs N", jobs.run_sweep, config, time_cap_s=600)
        if out is not None:
            out["params"] = {"sizes": sorted(int(n) for n in sizes), "seeds": int(seeds), "budget": int(budget)}
            res_all["sweep"] = out

with tab_rep:
    if r := res_all.get("rep"):
        sb = r["sbm"]
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.spectra(r["spectra"], d=8), key="spectralbellman_spec_fig")
        c2.plotly_chart(figs.angles(sb["curve"]), key="spectralbellman_angle_fig")
        st.markdown(
            f"**{r['env']['name']}**, d = {sb['d']} ({r['features']} features), {sb['iters']} iterations in "
            f"{sb['seconds']:.2f} s: largest principal angle **{sb['final_max_angle']:.2e} rad** to the "
            f"{sb['reference']}; closure residual {sb['final_closure']:.2e}. Held-out backups of 512 random Q "
            f"tables: residual **{r['capture']['residual']:.3f}** outside the learned span against "
            f"{r['capture']['optimum']:.3f} for the best {sb['d']}-dimensional subspace (ratio "
            f"**{r['capture']['ratio']:.2f}**; 1 is the best any {sb['d']} features can do). Where the spectrum is "
            "flat (full-rank MDPs, the gridworld) the top-d subspace is ill-defined and the angle to it says little; "
            "the ratio does not need it."
        )
        json_download(
            "Download representation results (JSON)",
            {**r, "provenance": provenance(0, **r["params"])},
            "spectralbellman_representation.json",
            key="spectralbellman_dl_rep",
        )
with tab_agents:
    if r := res_all.get("agents"):
        show_metrics_table(
            pd.DataFrame(r["rows"]).assign(agent=lambda f: f["agent"].map(AGENTS.label)), key="spectralbellman_table"
        )
        st.caption(
            "episodes_to_solve: first episode with return >= 0.9 x optimal (None: not within the budget); "
            "ms_per_episode: acting and the LSVI solve; feature_seconds: SBM learning."
        )
        st.plotly_chart(figs.returns(r["returns"], r["rows"][0].get("optimal_return")), key="spectralbellman_ret_fig")
        if r["coords"] is not None:
            st.plotly_chart(figs.visitation(r["visits"], r["coords"], r["grid_shape"]), key="spectralbellman_vis_fig")
        else:
            st.bar_chart(pd.DataFrame({AGENTS.label(n): v for n, v in r["visits"].items()}))
        csv_download(
            "Download the agents' summary (CSV)",
            pd.DataFrame(r["rows"]),
            "spectralbellman_agents.csv",
            key="spectralbellman_dl_agents",
        )
with tab_sweep:
    with st.expander("The shipped DeepSea(N) runs: N = 10 and 20, 10 seeds, tuned references", expanded=True):
        try:
            shipped = jobs.shipped_log()
        except WeightsError as err:  # a missing or altered asset is shown, not raised
            st.warning(str(err))
        else:
            st.plotly_chart(figs.shipped_log(shipped), key="spectralbellman_log_fig")
            lr_rows = [
                {"N": int(N), "ours": lr["ours"], "against": lr["other"], "ratio (geometric mean)": lr["ratio_geomean"],
                 "log-ratio 95 % CI low": lr["ci"][0], "log-ratio 95 % CI high": lr["ci"][1], "seeds": lr["pairs"]}
                for N, per in shipped["sizes"].items()
                for lr in per["log_ratio"].values()
            ]
            show_metrics_table(pd.DataFrame(lr_rows), key="spectralbellman_log_table")
            st.caption(
                "Paired over seeds (the same seed is the same DeepSea instance): the episodes of TS + SBM over those "
                "of each tuned reference, and of each ablation over TS + SBM at the page's settings; below 1 with the "
                "interval below 0: TS + SBM is faster. Made by `python -m backend.train spectralbellman`."
            )
            json_download("Download the shipped runs' evaluation (JSON)", shipped, "spectralbellman_deepsea_log.json",
                          key="spectralbellman_dl_log")
    if r := res_all.get("sweep"):
        st.plotly_chart(figs.solve_vs_size(r), key="spectralbellman_sweep_fig")
        rows = [
            {"agent": AGENTS.label(n), "N": int(N), **{k: v for k, v in s.items() if k != "values"}}
            for n, a in r["agents"].items()
            for N, s in a["sizes"].items()
        ]
        show_metrics_table(pd.DataFrame(rows), key="spectralbellman_sweep_table")
        json_download(
            "Download the sweep (JSON)",
            {**r, "provenance": provenance(0, **r["params"])},
            "spectralbellman_sweep.json",
            key="spectralbellman_dl_sweep",
        )
show_history("spectralbellman")
