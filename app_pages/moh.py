"""MoH: meta-optimised heuristics for TSP and bin packing; optimisers are programs of stages built by a meta level."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.heuristics.moh import jobs, shipped
from backend.heuristics.moh.inputs import PRESETS
from backend.heuristics.moh.jobs import EvolveConfig, SolveConfig
from backend.heuristics.moh.meta_operators import META_OPERATORS
from backend.heuristics.moh.moh import VARIANTS
from backend.heuristics.moh.optimiser import EditOperator
from backend.heuristics.moh.references import CONSTRUCTIONS, GAP_REFERENCE
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import moh as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

PROBLEMS = {"tsp_construct": "TSP construction", "bpp_online": "Online bin packing", "tsp_gls": "TSP improvement (GLS)"}
EDITS_LINE = ("**Meta operator: hand-written structural edits.** The meta level builds optimiser programs by adding, "
              "replacing, dropping, splicing and reordering stages and swapping their components at random; no "
              "language model writes the shipped optimisers (the LM operator is measured below and can be chosen "
              "under *Evolve here*).")
MAY_CHANGE = r"""
**What the meta level may change** (an optimiser program): the number (1-4) and order of the *stages* of a
generation; in each stage the **selection** (tournament k, rank, truncation q, best, uniform), the **variation
pipeline** (1-3 of subtree, point, const, crossover, hoist, applied in order), the **acceptance** rule (plus, comma e,
replace the parent, replace the worst, annealing T), the children per stage and how often the stage runs; the
population, the depth of the random start, the parsimony pressure and restarts.
**What it may not change**: the heuristic language and its interpreter, the runner that scores a heuristic (tour
construction, online packing), the evaluation budget, the training tasks and their weights, and the seed heuristic
(`d_cur`, nearest neighbour), which always starts in the population.
"""

page_header("moh", r"""
**MoH** evolves the *optimiser* that evolves heuristics. An optimiser here is a **program**: a list of stages, each
composing a selection, a variation pipeline and an acceptance rule. Each candidate program evolves heuristics for TSP
of 20, 50 and 100 cities; its utility is the **size-weighted** sum of the resulting gaps, and the best program runs the
next meta iteration. The heuristics are judged at **200-1,000 cities, never trained on**, against the single-size
and no-meta ablations (equal budgets), a tuned-constant rule and the classic constructions.
""", details_md=r"""
A heuristic is a program of a small typed language (features such as `d_cur`, `avg_rest`, `nn_rest`; operators
`add sub mul div min max neg abs sqrt log sq inv ifgt`), interpreted with step limits; at each step the candidate
with the smallest score is taken. An optimiser is a program of stages, for example
`(optimiser (population 8) (init 3) (parsimony 0.001) (restart 0) (stage (select tournament 3) (vary crossover subtree)
(accept plus) (children 4)) (stage (select best) (vary const) (accept anneal 0.5) (children 2) (every 2)))`.
The meta level keeps a population of 4 optimiser programs and is itself run by the best program found so far, whose
variation steps act on programs as structural edits. Utility $U(\phi) = -\sum_i w_i\,\mathrm{gap}_i(\phi)$ with
$w_i \propto n_i$. **Ablations**: the utility of one size (50 cities, all of the budget on it) and no meta level
(the seed program, a plain generational GP, alone on the size-weighted gaps with MoH's whole budget). **Tuned
constant**: `d_cur - c * avg_rest` with `c` found by a line search (grid, then golden section) on the same training
gaps, the form most evolved heuristics take. Budgets are counted in task evaluations (one heuristic on one size's
instances). **Departures from the paper**: no LLM writes the shipped optimisers or heuristics (the paper uses
GPT-4o-mini); the meta population is 4 and the budgets small (the paper: 10), so that 20 training seeds fit a CPU.
TSPLIB files are checked, then read with `tsplib95` (installed without its dependencies: it pins networkx 2, and
scikit-image needs 3); gaps are to LKH-3 through `elkai`.
""")
claims_panel("moh")
res_all: dict = st.session_state.setdefault("moh_result", {})

# ------------------------------------------------------------------------------------------------ shipped evolution
st.subheader("Shipped evolution: gaps at unseen sizes")
problem = bound(st.radio, "Problem", ["tsp_construct", "bpp_online"], horizontal=True, key="moh_problem",
                format_func=PROBLEMS.get)
if shipped.available():
    s = shipped.summary(problem)
    st.markdown(EDITS_LINE + f" Shipped by `{shipped.COMMAND}`: {len(s['seeds'])} training seeds, {s['count']} "
                f"evaluation instances per size.")
    c1, c2 = st.columns(2)
    gaps = {**s["mean"], **s["references"]}
    c1.plotly_chart(figs.gap_vs_size(s["sizes"], gaps, s["reference"], spread=s["per_seed"]), key="moh_gap_fig")
    c2.plotly_chart(figs.progress(s["curves"]), key="moh_progress_fig")
    rows = [{"heuristic": VARIANTS.label(v), "program (seed 0)": p["readable"], "task evaluations": p["task_evals"],
             **{f"gap@{n}": g for n, g in zip(s["sizes"], s["mean"][v])}} for v, p in s["programs"].items()]
    rows += [{"heuristic": figs.label(k), **{f"gap@{n}": g for n, g in zip(s["sizes"], v)}}
             for k, v in s["references"].items()]
    show_metrics_table(pd.DataFrame(rows), key="moh_table")
    cfg = s["config"]
    allowed = cfg["meta_population"] * (cfg["generations"] + 1) * cfg["budget"] * len(cfg["sizes"])
    st.caption(f"Every search variant may make {allowed:,} proposals (one task evaluation each); a program already "
               "scored is not scored again. The tuned constant spends about 30 heuristic evaluations.")
    top = s["sizes"][-1]
    if s["stats"]:
        st.markdown(f"**Paired over the {len(s['seeds'])} training seeds at {top}** (MoH's gap minus the other's; "
                    "negative favours MoH; 95 % t-interval):")
        st.dataframe(pd.DataFrame([{"MoH against": VARIANTS.label(r["against"]),
                                    "mean difference (pp)": r["mean_difference"],
                                    "95 % interval": f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]",
                                    "MoH wins": f"{r['wins']} of {r['seeds']}"} for r in s["stats"]]),
                     hide_index=True, key="moh_stats")
    if problem == "tsp_construct":
        st.caption("Faint points: the training seeds. OR-Tools routing (path-cheapest-arc start, greedy descent) runs "
                   "up to 500 cities; at 1,000 it reaches its time limit, so its result would depend on the machine.")
    with st.expander(f"Per-seed gaps at {top}"):
        paired = pd.DataFrame(s["paired"]).rename(columns={v: f"{VARIANTS.label(v)} gap@{top}" for v in s["variants"]})
        st.dataframe(paired, hide_index=True, key="moh_paired")
    st.markdown("**Evolved heuristics as code**, with the size-weighted training gap each reached and its gap at "
                f"{top} (smallest score is chosen):")
    st.dataframe(pd.DataFrame(s["evolved"]), hide_index=True, key="moh_evolved",
                 column_config={"s-expression": st.column_config.TextColumn(width="large")})
    win = s["programs"]["moh"]
    c1, c2 = st.columns(2)
    c1.markdown(f"MoH heuristic of seed 0 (training gap {win['weighted_gap']:.2f} %):")
    c1.code(win["readable"], language="text")
    c2.markdown("The optimiser program that found it:")
    c2.code(win["optimiser"], language="lisp")
    st.markdown(MAY_CHANGE)
    if s["optimisers"]:
        with st.expander("Every optimiser program the meta level scored (seed 0), best first"):
            st.dataframe(pd.DataFrame(s["optimisers"]), hide_index=True, key="moh_optimisers")
    fi = s["references"].get("farthest_insertion")
    if problem == "tsp_construct" and fi is not None:
        ours = s["mean"]["moh"]
        beats = all(a < b for a, b in zip(ours, fi))
        st.info("The evolved construction heuristic beats farthest insertion at every evaluation size." if beats
                 else "The evolved construction heuristic does **not** beat farthest insertion at the evaluation "
                      "sizes: " + ", ".join(f"{n}: {a:.2f}% vs {b:.2f}%" for n, a, b in zip(s["sizes"], ours, fi))
                 + ". Its rule picks the next city greedily and never revises a choice; insertion keeps the whole tour "
                 "cheap at every step.")
    json_download("Download the shipped summary (JSON)", s, f"moh_{problem}_summary.json", key="moh_dl_summary")
else:
    st.warning(f"The shipped programs are missing: run `{shipped.COMMAND}`.")

if problem == "tsp_construct" and shipped.lm_available():
    lm_s = shipped.lm_summary()
    d = lm_s["lm_minus_edits"]
    st.markdown(
        f"**What the LM operator adds** ({lm_s['source'] or 'SmolLM2-135M-Instruct'} writing optimiser programs, "
        f"shipped by `{shipped.LM_COMMAND}`): from the two best programs of each seed's MoH run it wrote "
        f"{lm_s['lm_valid_new_per_call']:.2f} valid new programs per call over {lm_s['calls']} calls (the edit "
        f"operator: {lm_s['edits_valid_new_per_call']:.2f}); the best training gap its programs reached minus the edit "
        f"operator's, paired over {d['seeds']} seeds: {d['mean_difference']:+.2f} pp "
        f"[{d['ci_low']:.2f}, {d['ci_high']:.2f}], LM better in {d['lm_better']}.")
    with st.expander("LM operator: per seed, and its first replies"):
        st.dataframe(pd.DataFrame(lm_s["rows"]), hide_index=True, key="moh_lm_rows")
        for r in lm_s["samples"]:
            st.code(r, language="text")

# ------------------------------------------------------------------------------------------------ your instance
st.subheader("Your instance")
src = bound(st.radio, "Instance", ["random cities", "upload a TSPLIB file", "upload bin items"], horizontal=True,
            key="moh_src")
inst, inst_name = None, ""
if src == "random cities":
    n_rand = bound(st.select_slider, "Cities", [20, 50, 100, 200, 500, 1000], 200, key="moh_n")
elif src == "upload a TSPLIB file":
    got = file_input("tsplib", "TSPLIB .tsp file (NODE_COORD_SECTION, EUC_2D / CEIL_2D / ATT)", key="moh_upload",
                     help="5 to 1,000 cities, finite coordinates, 2 MB.")
    if got is not None:
        inst_name, inst = got
        st.caption(f"{inst_name}: {inst.n} cities.")
else:
    got = file_input("bin_items", "CSV of item sizes, one per line (capacity 100)", key="moh_bins_upload",
                     help="5 to 2,000 items, each in (0, 100]; 1 MB.")
    if got is not None:
        inst_name, inst = got
        st.caption(f"{inst_name}: {len(inst.items)} items, L1 bound {inst.l1} bins.")
ready = src == "random cities" or inst is not None
program_text = shipped.default_program("bpp_online" if src == "upload bin items" else "tsp_construct")
go_solve = st.button("Solve with the MoH heuristic and the references", type="primary", disabled=not ready,
                     key="moh_solve", icon=":material/route:")


solve_config = SolveConfig(program_text, int(n_rand) if src == "random cities" else 100, 0,
                           (*CONSTRUCTIONS, GAP_REFERENCE))


if go_solve and ready:
    out = run_job("MoH solve", jobs.run_solve, inst, solve_config, time_cap_s=120)
    if out is not None:
        out = {**out, "name": inst_name or out.get("name", "")}
        res_all["solve"] = out
        metric = out["gaps"]["moh"] if out["kind"] == "tsp" else 100 * (out["bins"]["moh"] / out["l1"] - 1)
        record_run("moh", {"action": "solve", "instance": out["name"]}, {"MoH gap (%)": metric})
if r := res_all.get("solve"):
    if r["kind"] == "tsp":
        st.plotly_chart(figs.tours(r["coords"], {k: r["tours"][k] for k in ("moh", CONSTRUCTIONS[-1], GAP_REFERENCE)},
                                   r["lengths"]), key="moh_tour_fig")
        show_metrics_table(pd.DataFrame([{"heuristic": VARIANTS.label(k) if k in VARIANTS else figs.label(k),
                                          "length": r["lengths"][k], "gap to LKH-3 (%)": r["gaps"][k],
                                          "time (ms)": r["ms"][k]}
                                         for k in r["lengths"]]), key="moh_solve_table")
        json_download("Download the tours (JSON)", r, "moh_tours.json", key="moh_dl_tours")
    else:
        st.plotly_chart(figs.bins_used(r["bins"], r["l1"]), key="moh_bins_fig")

# ------------------------------------------------------------------------------------------------ evolve here
st.subheader("Evolve here")
preset_choice("moh", PRESETS)
with st.form("moh_form"):
    c1, c2, c3, c4 = st.columns(4)
    eproblem = bound(c1.selectbox, "Problem", list(PROBLEMS), key="moh_eproblem", format_func=PROBLEMS.get)
    sizes_text = bound(c2.selectbox, "Training sizes", ["20,50", "20,50,100"], key="moh_sizes")
    budget = bound(c3.select_slider, "Budget per task", [12, 20, 40, 80], 12, key="moh_budget",
                   help="Heuristic evaluations per task per optimiser; every variant gets the same total.")
    gens = bound(c4.select_slider, "Meta iterations", [1, 2, 4, 8, 20], 1, key="moh_gens")
    c1, c2, c3 = st.columns(3)
    mpop = bound(c1.select_slider, "Meta population", [3, 4, 6, 10], 3, key="moh_mpop")
    operator = bound(c2.radio, "Meta operator", META_OPERATORS.names(), horizontal=True, key="moh_operator",
                     format_func=META_OPERATORS.label,
                     help="What proposes optimiser programs: hand-written structural edits, or SmolLM2-135M-Instruct "
                          "writing programs (capped calls; replies that do not parse are failed proposals, past the "
                          "cap the edits propose).")
    lm_calls = bound(c3.select_slider, "LM call cap", [4, 8, 16, 32], 8, key="moh_lm_calls")
    go_evolve = st.form_submit_button("Evolve", icon=":material/play_arrow:", type="primary")


evolve_config = EvolveConfig(eproblem, tuple(int(x) for x in sizes_text.split(",")), 2, int(budget), int(mpop),
                             int(gens), 50, 0, operator=operator, lm_calls=int(lm_calls), eval_sizes=(200,),
                             eval_instances=1)
if go_evolve:
    got = run_job("MoH evolution", jobs.run_evolve, evolve_config, time_cap_s=900,
                  lm=None if META_OPERATORS[operator] is EditOperator else get_model("smollm2"))
    out = None if got is None else {
        "operator": got["operator"], "problem": got["problem"], "variants": got["variants"],
        "optimisers": got["optimisers"],
        "eval": got["evaluation"], "curves": got["curves"], "seconds": got["timing_s"]["evolve"],
        "params": {"problem": eproblem, "sizes": sizes_text, "budget": budget, "generations": gens,
                   "meta_population": mpop, "operator": operator}}
    if out is not None:
        res_all["evolve"] = out
        record_run("moh", out["params"], {f"{k} gap@200 (%)": g[0] for k, g in out["eval"]["gaps"].items()})
if e := res_all.get("evolve"):
    if META_OPERATORS[e["operator"]["meta_operator"]] is EditOperator:
        st.markdown(EDITS_LINE)
    else:
        for k, op in e["operator"]["per_variant"].items():
            if "lm_calls" in op:
                st.markdown(f"**Meta operator of {VARIANTS.label(k)}: {op['source']}** wrote optimiser programs: "
                            f"{op['lm_calls']} calls (cap {op['max_calls']}), {op['parsed']} parsed, {op['new']} "
                            f"valid and new; {op['edit_fallback_proposals']} proposals came from the edits after "
                            "the cap.")
    c1, c2 = st.columns(2)
    c1.plotly_chart(figs.progress({k: tuple(v) for k, v in e["curves"].items()}), key="moh_evolve_progress")
    c2.plotly_chart(figs.gap_vs_size(e["eval"]["sizes"], e["eval"]["gaps"], e["eval"]["reference"],
                                     title="Gap at 200 cities / items (unseen)"), key="moh_evolve_gap")
    st.caption(f"Search time {e['seconds']:.1f} s for the variants (equal task-evaluation budgets for the searches).")
    show_metrics_table(pd.DataFrame([{"variant": VARIANTS.label(k), "heuristic": v["readable"],
                                      "optimiser": v["optimiser"], "task evaluations": v["task_evals"],
                                      "failed proposals": v["failed"]} for k, v in e["variants"].items()]),
                       key="moh_evolve_table")
    for k, text in e["optimisers"].items():
        st.markdown(f"Optimiser program of {VARIANTS.label(k)}:")
        st.code(text, language="lisp")
    json_download("Download the evolution (JSON)", {**e, "provenance": provenance(0, **e["params"])},
                  "moh_evolution.json", key="moh_dl_evolve")
    csv_download("Download the gaps (CSV)", pd.DataFrame(e["eval"]["gaps"], index=e["eval"]["sizes"]),
                 "moh_gaps.csv", key="moh_dl_gaps")
show_history("moh")
