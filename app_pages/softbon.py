"""Soft Best-of-N: when a softened selection beats hard Best-of-N on a weak proxy reward."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.alignment.softbon import inputs as I
from backend.alignment.softbon import jobs as J
from backend.alignment.softbon.softbon import REWARDS, InstanceConfig, SweepConfig, split_candidates
from backend.errors import InputError
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import softbon as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header(
    "softbon",
    r"""
**Soft Best-of-N (SBoN)** draws $N$ responses $Y_1..Y_N$ from a reference policy $\pi_{ref}$ and returns $Y_Z$ with
$P(Z=i) \propto \exp(\beta\,\hat r(Y_i))$ for a proxy reward $\hat r$. $\beta = 0$ is plain sampling, $\beta\to\infty$
is hard Best-of-N. With a faithful proxy reward hard BoN is best; with a hackable one a finite $\beta$ wins.
""",
    details_md=r"""
The paper bounds $\mathrm{KL}(\pi_{SBoN}\|\pi_{ref}) \le \log\frac{N}{1+(N-1)e^{-\beta}}$
(Lemma 4.1, rewards in [0, 1]) and splits the regret into proxy error, finite-sample error and a softening bias
$\log C/\beta$.

**What you see**: everything is *exact*: the SBoN policy of a finite response space is computed by a one-dimensional
integral (the softmax choice is an exponential race), checked against enumeration of all $K^N$ tuples and against the
sampling algorithm itself. The heatmap is the expected **true** reward over $(N, \beta)$; stars mark the best $\beta$
per $N$. Selection uses the proxy (raw, or *calibrated*: its CDF under $\pi_{ref}$). A *hackable* item has the highest
proxy score and a low true reward. In text mode, pasted answers get MiniLM cosine similarity to your reference answer
as the proxy, with $\pi_{ref}$ uniform over them.
""",
)
claims_panel("softbon")
res_all: dict = st.session_state.setdefault("softbon_result", {})


def apply_preset() -> None:
    p = I.PRESETS[st.session_state["softbon_preset"]]
    st.session_state["softbon_noise"], st.session_state["softbon_hack"] = p["noise"], p["hack_frac"]


mode = bound(st.radio,
    "Input", ["Random discrete instance", "Your candidate answers (text)"], horizontal=True, key="softbon_mode"
)
if mode.startswith("Random"):
    bound(st.selectbox, "Preset", list(I.PRESETS), key="softbon_preset", on_change=apply_preset)
    chosen = I.PRESETS[st.session_state["softbon_preset"]]  # a link may name the preset only: its knobs start there
    st.session_state.setdefault("softbon_noise", chosen["noise"])
    st.session_state.setdefault("softbon_hack", chosen["hack_frac"])
    with st.form("softbon_form"):
        c1, c2, c3, c4, c5 = st.columns(5)
        k = bound(c1.select_slider, "Responses K", list(J.K_CHOICES), 200, key="softbon_k")
        alpha = bound(c2.select_slider, "Dirichlet alpha of pi_ref", list(J.ALPHA_CHOICES), 1.0, key="softbon_alpha")
        noise = bound(c3.slider, "Proxy noise std", 0.0, 1.0, key="softbon_noise", step=0.05)
        hack = bound(c4.slider, "Hackable fraction", 0.0, 0.2, key="softbon_hack", step=0.01)
        seed = bound(c5.number_input, "Seed", 0, 10_000, 0, key="softbon_seed")
        reward = bound(st.radio,
            "SBoN selects with",
            sorted(REWARDS, key=lambda name: REWARDS.kind(name) != "ours"),  # the paper's calibrated reward first
            horizontal=True,
            key="softbon_reward",
            help="calibrated = the proxy's CDF under pi_ref; true = an oracle (the KL claim's setting).",
        )
        go = st.form_submit_button("Compute the exact sweep", icon=":material/play_arrow:", type="primary")

    if go:
        try:
            config = J.RandomConfig(InstanceConfig(k=int(k), dirichlet_alpha=float(alpha), noise=float(noise),
                                                   hack_frac=float(hack)),
                                    SweepConfig(ns=J.NS, reward=reward), int(seed))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            config = None
        res = None if config is None else run_job("Soft BoN sweep", J.run_random, config, time_cap_s=120)
        if res is not None:
            out = res_all["random"] = res.to_json()
            n_max = out["ns"][-1]
            record_run("softbon", out["params"], {
                f"true reward, best beta (N={n_max})": out["best_true_per_n"][-1],
                f"true reward, hard BoN (N={n_max})": out["bon_true_per_n"][-1],
                "true reward, plain sampling": out["sampling_true"]}, seed=out["seed"])
    if r := res_all.get("random"):
        tr, ns, betas = r["expected_true_reward"], r["ns"], r["betas"]
        st.plotly_chart(figs.heatmap(ns, betas, tr, r["best_beta_per_n"],
                                     f"Expected true reward (selection: {r['params']['reward']})"), key="softbon_heat")
        st.plotly_chart(figs.kl_figure(ns, betas, r["kl"], r["kl_bound_lemma41"], r["bon_kl_bound"], (2, 8, 32)),
                        key="softbon_kl")
        st.caption(f"Selection reward range R = {r['reward_range']:.3f}; the dashed bound is "
                   "log(N / (1 + (N-1) exp(-beta R))) (Lemma 4.1 for R = 1).")

        @st.fragment
        def per_n() -> None:
            n = st.select_slider("N for the detail plots", ns[1:], 32, key="softbon_n")
            i = ns.index(n)
            c1, c2 = st.columns(2)
            c1.plotly_chart(figs.reward_vs_beta(betas, {"true": tr[i], "selection": r["expected_selection_reward"][i]},
                                                r["sampling_true"], n), key="softbon_curve")
            c2.plotly_chart(figs.regret_terms([t["beta"] for t in r["regret"][n]], r["regret"][n], n),
                            key="softbon_regret")

        per_n()
        rows = [{"N": n, "best beta": figs.beta_label(b), "true reward at best beta": t, "hard BoN": h,
                 "plain sampling": round(r["sampling_true"], 4), "gain over BoN": round(t - h, 4),
                 "KL at best beta": r["kl"][i][betas.index(b)], "Lemma 4.1 bound": r["kl_bound_lemma41"][i][
                     betas.index(b)], "samples per answer": n}
                for i, (n, b, t, h) in enumerate(zip(ns, r["best_beta_per_n"], r["best_true_per_n"],
                                                     r["bon_true_per_n"], strict=True))]
        show_metrics_table(rows, key="softbon_table")
        st.caption(f"Reference mass of hackable items: {r['hack_mass']:.3f}. Cost: each answer needs N proxy "
                   "evaluations whatever beta; beta only changes which one is returned.")
        json_download("Download results (JSON)", {**r, "provenance": provenance(r["seed"], **r["params"])},
                      "softbon_sweep.json", key="softbon_dl_json")
        csv_download("Download per-N table (CSV)", pd.DataFrame(rows), "softbon_table.csv", key="softbon_dl_csv")
else:
    got = file_input("candidates", "Or upload candidates (.txt, answers separated by blank lines)",
                     key="softbon_upload", help="UTF-8 text, 2..64 answers, 2,000 characters each; 0.5 MB.")
    text = I.EXAMPLE_CANDIDATES
    if got is not None:
        text = "\n\n".join(got[1])
        st.caption(f"Using {got[0]}: {len(got[1])} answers.")
    with st.form("softbon_text_form"):
        cands = st.text_area("Candidate answers (separate by blank lines)", text, height=220, key="softbon_cands",
                             disabled=got is not None)
        ref = bound(st.text_input, "Reference answer (the proxy is cosine similarity to it)",
                    I.EXAMPLE_REFERENCE, key="softbon_ref")
        scores = bound(st.text_input, "Optional true scores, comma-separated, one per answer", "", key="softbon_scores")
        n_text = bound(st.select_slider, "N draws", list(J.TEXT_N_CHOICES), 4, key="softbon_text_n")
        go_t = st.form_submit_button("Score and select", icon=":material/play_arrow:", type="primary")
    if go_t:
        try:
            config = J.TextConfig(ref, SweepConfig(ns=(int(n_text),), betas=J.TEXT_BETAS),
                                  true_scores=J.parse_scores(scores))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
        else:
            from ui.models import get_model

            res = run_job("Score candidates with MiniLM", J.run_text, split_candidates(
                text if got is not None else cands), config, get_model("minilm"), time_cap_s=120)
            if res is not None:
                out = res_all["text"] = res.to_json()
                record_run("softbon", {"mode": "text", "reference": ref, "N": int(n_text),
                                       "answers": len(out["labels"])},
                           {f"P(select best proxy), beta={b}": max(p) for b, p in out["probs"].items()})
    if t := res_all.get("text"):
        probs = {figs.beta_label(b): p for b, p in t["probs"].items()}
        st.plotly_chart(figs.selection_bars(t["labels"], t["proxy"], probs, t["n"]), key="softbon_bars")
        df = pd.DataFrame({"answer": t["labels"], "proxy cosine": t["proxy"], "calibrated": t["calibrated"],
                           **{f"P(select), beta={b}": p for b, p in probs.items()}})
        if t["true"]:
            df.insert(1, "true score", t["true"])
            st.caption(f"Expected true score per beta (0, 4, 16, 64, BoN): {t['expected_true'][0]}")
        show_metrics_table(df, key="softbon_text_table")
        json_download("Download results (JSON)", {**t, "provenance": provenance(None, n=t["n"], encoder=t["encoder"])},
                      "softbon_text.json", key="softbon_text_dl_json")
        csv_download("Download table (CSV)", df, "softbon_text.csv", key="softbon_text_dl_csv")
show_history("softbon")
