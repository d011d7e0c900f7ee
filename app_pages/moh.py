"""MoH: meta-optimised heuristics for TSP and online bin packing (a two-level GP search by default)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.heuristics.moh import jobs, shipped
from backend.heuristics.moh.inputs import PRESETS
from backend.heuristics.moh.jobs import EvolveConfig, SolveConfig
from backend.heuristics.moh.moh import VARIANTS
from backend.heuristics.moh.operators import OPERATORS, GPOperator
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
GP_LINE = ("**Operator: the program-space GP operator.** MoH is a two-level genetic programming search with this "
           "operator: optimiser programs evolve heuristic programs, and the meta-optimiser evolves the optimisers.")

page_header("moh", r"""
**MoH** evolves the *optimiser* that evolves heuristics. Each candidate optimiser evolves heuristics for TSP of 20, 50
and 100 cities; its utility is the **size-weighted** sum of the resulting gaps, and the best optimiser becomes the next
meta-optimiser. The heuristics are then judged at **200-1,000 cities, never trained on**, against the single-size and
no-meta ablations (equal budgets) and the classic constructions.
""", details_md=r"""
A heuristic is a program of a small typed language (features such as `d_cur`, `avg_rest`, `nn_rest`; operators
`add sub mul div min max neg abs sqrt log sq inv ifgt`), interpreted with step limits; at each step the candidate
with the smallest score is taken. An optimiser is a program of evolutionary components (population, ramped
initialisation, selection, operator mix, elitism, survival, parsimony, restarts). The meta level keeps a population
of optimisers; the current best one, used as the meta-optimiser, proposes the next candidates with its own selection
and operator mix. Utility $U(\phi) = -\sum_i w_i\,\mathrm{gap}_i(\phi)$ with $w_i \propto n_i$. **Ablations**:
the utility of one size (50 cities, all of the budget on it) and no meta level (the seed optimiser alone on the
size-weighted gaps with MoH's whole budget). Budgets are counted in task evaluations (one heuristic on one size's
instances). TSPLIB files are checked, then read with `tsplib95` (installed without its dependencies: it pins networkx 2, and
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
    st.markdown(GP_LINE + f" Shipped by `{shipped.COMMAND}`: {len(s['seeds'])} training seeds, {s['count']} "
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
    st.caption(f"Every variant may make {allowed:,} proposals (one task evaluation each); a proposal the operator "
               "cannot make new (12 tries gave a copy of its parent) spends one without an evaluation.")
    top = s["sizes"][-1]
    paired = pd.DataFrame(s["paired"]).rename(columns={v: f"{VARIANTS.label(v)} gap@{top}" for v in s["variants"]})
    if problem == "tsp_construct":
        st.caption("Faint points: the training seeds. OR-Tools routing (path-cheapest-arc start, greedy descent) runs "
                   "up to 500 cities; at 1,000 it reaches its time limit, so its result would depend on the machine.")
    st.caption(f"Paired training seeds at {top}: the same training instances for every variant of a seed.")
    st.dataframe(paired, hide_index=True, key="moh_paired")
    win = s["programs"]["moh"]
    st.markdown("**The winning MoH heuristic** (seed 0; smallest score is chosen):")
    st.code(win["readable"], language="text")
    st.caption(f"s-expression `{win['program']}`; optimiser `{win['optimiser']}`")
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
    operator = bound(c2.radio, "Operator", OPERATORS.names(), horizontal=True, key="moh_operator",
                     format_func=OPERATORS.label,
                     help="The LM operator proposes heuristics through SmolLM2-135M-Instruct, capped calls; replies "
                          "that do not parse are failed proposals.")
    lm_calls = bound(c3.select_slider, "LM call cap", [4, 8, 16, 32], 8, key="moh_lm_calls")
    go_evolve = st.form_submit_button("Evolve", icon=":material/play_arrow:", type="primary")


evolve_config = EvolveConfig(eproblem, tuple(int(x) for x in sizes_text.split(",")), 2, int(budget), int(mpop),
                             int(gens), 50, 0, operator=operator, lm_calls=int(lm_calls), eval_sizes=(200,),
                             eval_instances=1)
if go_evolve:
    got = run_job("MoH evolution", jobs.run_evolve, evolve_config, time_cap_s=900,
                  lm=None if OPERATORS[operator] is GPOperator else get_model("smollm2"))
    out = None if got is None else {
        "operator": got["operator"], "problem": got["problem"], "variants": got["variants"],
        "eval": got["evaluation"], "curves": got["curves"], "seconds": got["timing_s"]["evolve"],
        "params": {"problem": eproblem, "sizes": sizes_text, "budget": budget, "generations": gens,
                   "meta_population": mpop, "operator": operator}}
    if out is not None:
        res_all["evolve"] = out
        record_run("moh", out["params"], {f"{k} gap@200 (%)": g[0] for k, g in out["eval"]["gaps"].items()})
if e := res_all.get("evolve"):
    op = e["operator"]
    if "lm_calls" not in op:
        st.markdown(GP_LINE)
    else:
        rate = op["parse_rate"]
        st.markdown(f"**Operator: {op['source']}** proposed heuristics: {op['lm_calls']} calls (cap {op['max_calls']} "
                    "per variant),"
                    f" {op['parsed']} parsed into the language, parse rate "
                    f"{'n/a' if rate is None else f'{100 * rate:.0f}%'}; failed replies were counted as failed "
                    f"proposals. After the cap, {op['gp_fallback_proposals']} proposals came from the GP operator.")
    c1, c2 = st.columns(2)
    c1.plotly_chart(figs.progress({k: tuple(v) for k, v in e["curves"].items()}), key="moh_evolve_progress")
    c2.plotly_chart(figs.gap_vs_size(e["eval"]["sizes"], e["eval"]["gaps"], e["eval"]["reference"],
                                     title="Gap at 200 cities / items (unseen)"), key="moh_evolve_gap")
    st.caption(f"Search time {e['seconds']:.1f} s for the three variants (equal task-evaluation budgets).")
    show_metrics_table(pd.DataFrame([{"variant": VARIANTS.label(k), "heuristic": v["readable"],
                                      "optimiser": v["optimiser"], "task evaluations": v["task_evals"],
                                      "failed proposals": v["failed"]} for k, v in e["variants"].items()]),
                       key="moh_evolve_table")
    json_download("Download the evolution (JSON)", {**e, "provenance": provenance(0, **e["params"])},
                  "moh_evolution.json", key="moh_dl_evolve")
    csv_download("Download the gaps (CSV)", pd.DataFrame(e["eval"]["gaps"], index=e["eval"]["sizes"]),
                 "moh_gaps.csv", key="moh_dl_gaps")
show_history("moh")
