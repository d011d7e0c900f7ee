"""MATHMO: bi-level search over modelling frameworks and models for a multi-objective Pareto front."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.runtime import provenance
from backend.search.mathmo import jobs as J
from backend.search.mathmo.bilevel import OBJECTIVES, OPERATORS, STRATEGIES, lm_operator
from ui.claims import claims_panel
from ui.figures import mathmo as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("mathmo", r"""
**MATHMO** searches over *how to model* a problem as well as over the model's settings: each round an upper-level
**Pareto-UCB** bandit picks a modelling framework (exact MILP, LP relaxation with rounding, greedy or local-search
heuristics), a proposal operator suggests a few models of it, and a surrogate runs the one with the largest predicted
gain in hypervolume. Here it builds a three-objective front (cost, solver effort, cost under perturbed demand) for
facility location, side by side with two baselines that use no part of it, **random search** and a discrete
**NSGA-II** on the same models, and with its ablations (random framework, flat search, no surrogate).
""", details_md=r"""
**The model space**: 7 frameworks (exact MILP, LP relaxation + rounding, greedy add, greedy drop, swap local search,
cluster-first k-means, simulated annealing) with knobs on fine grids (the capacity reserve in [0, 0.5] by 0.05, the
rounding threshold in [0.05, 0.95] by 0.05, the MIP gap and the annealing temperature log-spaced): 803 models. The
reserve $r$ plans each facility to at most $u_j/(1+r)$, which raises the planned cost and lowers the cost
under demand surges, so the front is a real trade-off; on the default instances it has 3 to 21 distinct points (11 on
average) and 20 rounds reach 0.43-0.99 of its hypervolume. The default instances (10 facilities, 30 customers, seeds 0-19) are served
from a recorded log of every model (the tests re-run samples of it); other instances run their models here.

**Who wins**: over the 20 paired instances (20 rounds; the claims panel) NSGA-II finds the largest fronts (0.836 of
the space front's hypervolume), then Pareto-UCB + surrogate (0.816), random search (0.806), random framework (0.805),
no surrogate (0.797) and flat search (0.695); only the gap to flat search is resolved by the paired intervals. On the
default run (instance 0) random search wins (0.862) and Pareto-UCB ranks fifth of six (0.737).

**The operator that runs here is not an LLM** unless you choose one: the paper's LLM writes model code; the default
operator mutates one knob of the framework's best model, and the *LM* operator asks a local causal LM (the embedded
SmolLM2-135M, at most 20 calls per run) for knob settings, counting a reply that does not parse as a failed proposal
(its parse rate and the rounds that fell back to a random model are shown). NSGA-II (pymoo): integer genes (the
framework, one slot per knob), population 8, 4 offspring per generation, SBX and polynomial mutation with rounding.
Pareto-UCB:
$\mathrm{UCB}_{f,j}=\hat\mu_{f,j}+c\sqrt{\hat\sigma^2_{f,j}\ln N/N_f}+d\sqrt{\ln N/N_f}$ on rewards
$1-$ (running-normalised objective), $c=1$, $d=0.5$; unseen frameworks first; a uniform draw among the
non-dominated UCB vectors. The surrogate is k-nearest-neighbours (k = 3) on framework and knob positions.
Objectives are deterministic: the design's cost (fixed costs + optimal transport, HiGHS), the effort
$\log_{10}(1+\text{simplex iterations + nodes})$ (or designs scored, for heuristics), and the mean cost over 16
demand scenarios when each customer keeps its planned shares (overflow beyond a facility's capacity unmet at a
penalty). Hypervolume (pymoo) is normalised by the whole space's ideal and nadir, which the search never sees, and
shown as a fraction of the space front's.
""")
claims_panel("mathmo")
res_all: dict = st.session_state.setdefault("mathmo_result", {})

c1, c2 = st.columns([1, 2])
src = bound(c1.radio, "Instance", ["Generated", "Upload a CSV"], key="mathmo_source")
inst = None
ready = True
m, n = J.SearchConfig.facilities, J.SearchConfig.customers
if src == "Upload a CSV":
    with c2:
        got = file_input("facility_csv", "CSV kind,x,y,amount,fixed_cost", key="mathmo_upload",
                         help="Rows of kind 'facility' (amount = capacity) or 'customer' (amount = demand); 2-40 "
                              "facilities, 2-200 customers, positive amounts, capacity >= demand; 2 MB.")
    ready = got is not None
    inst = got[1] if got is not None else None
else:
    m = bound(c2.slider, "Facilities m", 4, 20, 10, key="mathmo_m")
    n = bound(c2.slider, "Customers n", 10, 80, 30, key="mathmo_n")

with st.form("mathmo_form"):
    c1, c2, c3, c4 = st.columns(4)
    rounds = bound(c1.slider, "Rounds (models run)", 5, 40, 20, key="mathmo_rounds")
    proposals = bound(c2.slider, "Proposals per round l", 1, 6, 3, key="mathmo_l")
    operator = bound(c3.selectbox, "Proposal operator", list(OPERATORS), key="mathmo_operator",
                     format_func=OPERATORS.label, help="The LM operator uses SmolLM2 (loaded once per server): l "
                     "calls per round, at most 20 per run; later proposals fall back to a random model.")
    seed = bound(c4.number_input, "Seed", 0, 10_000, 0, key="mathmo_seed")
    strategies = bound(st.multiselect, "Strategies", list(STRATEGIES), list(STRATEGIES), key="mathmo_strategies",
                       format_func=STRATEGIES.label)
    seeds = bound(st.slider, "Paired seeds (generated instances only; 1 = a single search)", 1, 20, 1,
                  key="mathmo_seeds")
    go = st.form_submit_button("Run the search", icon=":material/play_arrow:", type="primary", disabled=not ready)


if go and ready:
    try:
        config = J.SearchConfig(rounds=int(rounds), proposals=int(proposals), operator=operator,
                                strategies=tuple(strategies) or tuple(STRATEGIES.names("ours")), seed=int(seed),
                                seeds=int(seeds), facilities=int(m), customers=int(n), max_calls=20)
    except InputError as err:
        st.error(str(err))
        config = None
    lm = get_model("smollm2") if config is not None and config.uses_lm else None  # cached across reruns
    out = None if config is None else run_job("MATHMO search", J.run_search, inst, config, lm, time_cap_s=600)
    if out is not None:
        res_all["run"] = {**out, "seed": int(seed)}
        record_run("mathmo", {"rounds": rounds, "l": proposals, "operator": operator, "seed": seed,
                              "instance": out["instance"]["source"]},
                   {f"HV {s}": r["final_hv"] for s, r in out["strategies"].items()})

if r := res_all.get("run"):
    ranked = sorted(r["strategies"].items(), key=lambda kv: -kv[1]["final_hv"])
    ours = STRATEGIES.names("ours")[0]
    st.markdown(f"**{r['instance']['source']}**: {len(r['models'])} models in the space, "
                f"{len(r['grid_front'])} of them on its Pareto front. Operator: "
                f"**{OPERATORS.label(r['config']['operator'])}**. On this run **{ranked[0][1]['label']}** finds the "
                f"largest front ({ranked[0][1]['final_hv']:.3f} of the space front's hypervolume); Pareto-UCB + "
                f"surrogate ranks {1 + [k for k, _ in ranked].index(ours) if ours in r['strategies'] else '-'}"
                f" of {len(ranked)}.")
    st.plotly_chart(figs.hv_curves(r), key="mathmo_hv_fig")

    @st.fragment
    def front_view() -> None:
        c1, c2 = st.columns(2)
        x = c1.selectbox("x objective", OBJECTIVES, 0, key="mathmo_x")
        y = c2.selectbox("y objective", OBJECTIVES, 2, key="mathmo_y")
        st.plotly_chart(figs.fronts(r, x, y), key="mathmo_front_fig")

    front_view()
    rows = [{"strategy": s["label"], "final HV (fraction of grid front)": s["final_hv"],
             "models run": len(s["rows"]), "model run seconds": sum(m["seconds"] for m in s["rows"]),
             "search seconds": s["seconds"], "frameworks used": len(set(s["frameworks"])),
             "LM parse rate": s["parse_rate"] if OPERATORS[r["config"]["operator"]] is lm_operator
             and s["operator"] != "none" else None,
             "rounds fallen back": s["fallbacks"]} for s in r["strategies"].values()]
    show_metrics_table(rows, key="mathmo_table")
    st.caption("model run seconds: solver and heuristic time of the models the strategy ran (this machine); search "
               "seconds: the search itself with model results served from the cache. The grid's evaluation "
               f"({r['grid_seconds']:.1f} s) is for the metric only.")
    if p := r.get("paired"):
        st.plotly_chart(figs.final_hv_bars(p["summary"]), key="mathmo_paired_fig")
        first = STRATEGIES.label(p["first"])
        show_metrics_table([{"strategy": STRATEGIES.label(s), "mean final HV": v["mean"], "s.e.": v["sem"],
                             f"{first} minus this": v["first_minus"] if s != p["first"] else None,
                             "95 % interval": (f"[{v['first_minus_low']:+.3f}, {v['first_minus_high']:+.3f}]"
                                               if s != p["first"] else ""),
                             "resolved": ("yes" if v["first_minus_low"] > 0 or v["first_minus_high"] < 0
                                          else "not resolved") if s != p["first"] else "",
                             "wins over the first": v["wins_over_first"]} for s, v in p["summary"].items()],
                           key="mathmo_paired_table")
        st.caption("Paired over the seeds: the same instance for every strategy; the interval is the Student-t "
                   "interval of the mean difference (backend.stats.paired_ci). An interval containing zero means "
                   "the seeds cannot tell the two apart.")
    with st.expander("Models each strategy ran"):
        for s in r["strategies"].values():
            st.markdown(f"**{s['label']}**")
            st.dataframe(pd.DataFrame([{k: v for k, v in m.items() if k != "open"} for m in s["rows"]]),
                         hide_index=True)
    json_download("Download results (JSON)", {**r, "provenance": provenance(int(r["seed"]))},
                  "mathmo_search.json", key="mathmo_dl_json")
    flat = [{"strategy": k, **{kk: vv for kk, vv in m.items() if kk != "knobs"}, **m["knobs"]}
            for k, s in r["strategies"].items() for m in s["rows"]]
    csv_download("Download the models run (CSV)", pd.DataFrame(flat), "mathmo_models.csv", key="mathmo_dl_csv")
show_history("mathmo")
