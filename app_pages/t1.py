"""T1: a tool vetoes candidates whose calculations are wrong, a reward model ranks the survivors."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning.t1 import inputs as I
from backend.reasoning.t1 import jobs as J
from backend.reasoning.t1.select import SELECTORS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import t1 as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.reasoning import candidate_cache, domain_note, grammar_expander, tiny_reasoner
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("t1", """
**T1** (tool-integrated verification) picks the best of N sampled solutions in two stages: a *tool* re-checks every
calculation of each candidate in a sandboxed interpreter and vetoes the ones with an error, then a small *reward
model* ranks the survivors. Here the tiny reasoner samples the candidates and the reward model is a logistic head on
its own hidden states; the page compares T1 with the reward model alone, the tool alone, majority votes and an oracle.
""", details_md="""
**Tool.** From each candidate's steps the tool writes a check program (`assert 17 * 3 == 51` per step, and one that the
final answer equals the last step's value) and runs it in a restricted interpreter over Python's syntax tree: numbers,
`+ - * / // %` and brackets only, with limits on length, depth, operations and digits; nothing is ever passed to
`eval` or `exec`. A candidate without any calculation passes.

**Reward model.** Logistic regression on the tiny reasoner's penultimate-layer state at the candidate's last token,
trained on 3,200 of its own samples labelled by their final answer (`python -m backend.train t1`). T1 selects
argmax f r (f the tool's verdict in {0, 1}); when the tool vetoes every candidate it falls back to the reward model.

**Curves.** Accuracy of the selected answer when the selector sees a uniform random subset of n of the N candidates,
exact over all subsets for the best-of-N selectors; the two votes average 200 random subsets per n.

**Candidates.** The reasoner's own samples at temperature 0.8 on problems of 5-8 operations in the
training phrasings (about 0.7 of its samples are right; at 1-4 operations about 0.9) and of 1-4 operations in the
phrasings held out of its training (about 0.6), read from a shipped cache for the presets; or gold solutions with injected *arithmetic
slips* (one wrong result; the tool sees it) and *logic slips* (a wrong operation or quantity with every calculation
right; no tool sees it): T1's gain should vanish on logic slips.
""")
claims_panel("t1")
grammar_expander()


@st.cache_resource(max_entries=1, show_spinner="Loading the reward model")
def _models():  # noqa: ANN202
    return tiny_reasoner(), J.load_rm()


MODES = ["Best-of-N over problems", "Your question", "Your candidate solutions"]
mode = bound(st.radio, "Input", MODES, horizontal=True, key="t1_mode")

if mode == MODES[0]:
    preset = bound(st.selectbox, "Preset", list(I.PRESETS), key="t1_preset")
    p = I.PRESETS[preset]
    with st.form("t1_bon_form"):
        c1, c2, c3, c4 = st.columns(4)
        n = bound(c1.select_slider, "N candidates", [4, 8, 16, 32, 64], p["n"], key="t1_n")
        problems = bound(c2.select_slider, "Problems", [10, 20, 40, 80], p["problems"], key="t1_problems")
        arithmetic = bound(c3.slider, "Arithmetic-slip rate (slips)", 0.0, 1.0, p.get("arithmetic", 0.3), 0.05,
                           key="t1_arith")
        logic = bound(c4.slider, "Logic-slip rate (slips)", 0.0, 1.0, p.get("logic", 0.3), 0.05, key="t1_logic")
        go = st.form_submit_button("Select the best of N", icon=":material/checklist:", type="primary")
    if go:
        try:
            cfg = J.BonConfig(**(p | {"n": int(n), "problems": int(problems), "arithmetic": float(arithmetic),
                                      "logic": float(logic)}))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["t1_bon_config"] = cfg
            reasoner, rm = _models()
            res = run_job("Best-of-N", J.run_bon, cfg, reasoner, rm, candidate_cache(), time_cap_s=600)
            if res is not None:
                st.session_state["t1_bon"] = res.to_dict()
                record_run("t1", {"preset": preset, "N": cfg.n, "problems": cfg.problems, "source": cfg.source},
                           {f"{SELECTORS.label(k)} BoN@{cfg.n}": v[-1] for k, v in res.curves.items()})
    if r := st.session_state.get("t1_bon"):
        c = r["config"]
        st.plotly_chart(figs.bon_curves(r, f"{c['problems']} problems ({c['split']}, {c['ops'][0]}-{c['ops'][1]} "
                                           f"operations), candidates: {c['source']}"), key="t1_curves")
        ns = r["ns"]
        cols = [x for x in (1, 4, 8, 16, 32, 64) if x in ns]
        rows = [{"selector": r["labels"][k], **{f"BoN@{x}": v[ns.index(x)] for x in cols}} for k, v in r["curves"].items()]
        show_metrics_table(rows, key="t1_table")
        a, b = st.columns([2, 3])
        a.plotly_chart(figs.veto_bars(r), key="t1_veto")
        co = r["costs"]
        b.markdown(f"**Costs.** {co['candidates']:,} candidates ({co['generated_tokens']:,} generated tokens, "
                   f"{co['generation_s']:.1f} s to sample or read from the cache); the tool takes "
                   f"{co['tool_ms_per_candidate']:.2f} ms per candidate and the reward model "
                   f"{co['rm_ms_per_candidate']:.2f} ms ({co['rm_parameters']} parameters on top of the reasoner). "
                   f"pass@1 of the candidates {r['pass_at_1']:.3f}; reward-model AUROC {r['rm_auroc']:.3f}.")
        with st.expander("The candidates of the first problems (vetoed rows struck through, T1's pick in bold)"):
            for prob in r["problems"]:
                st.markdown(f"**{prob['question']}** (answer {prob['answer']})")
                cands = prob["candidates"]
                win = max(range(len(cands)), key=lambda i: (cands[i]["passed"], cands[i]["rm"]))
                lines = []
                for i, cd in enumerate(cands):
                    t = f"rm {cd['rm']:.3f} · answer {cd['answer']} {'✓' if cd['correct'] else '✗'} · {cd['text'][:140]}"
                    t = t if cd["passed"] else f"~~{t}~~ ({cd['reason']})"
                    lines.append(f"- **{t}**" if i == win else f"- {t}")
                st.markdown("\n".join(lines))
        d1, d2 = st.columns(2)
        with d1:
            json_download("Curves and candidates (JSON)", r | {"provenance": provenance(c["seed"], **{
                k: v for k, v in c.items() if k != "seed"})},
                          "t1_bon.json", key="t1_json")
        with d2:
            csv_download("Curves (CSV)", pd.DataFrame({"n": ns, **{r["labels"][k]: v for k, v in r["curves"].items()}}),
                         "t1_curves.csv", key="t1_csv")
else:
    own = mode == MODES[1]
    question = st.text_input("Question (in the tiny reasoner's grammar)", I.EXAMPLE_QUESTION, key="t1_question")
    text = ""
    if not own:
        up = text_upload("t1_upload", help="UTF-8 text: candidates separated by blank lines (at most 64).")
        text = st.text_area("Candidate solutions (separate by blank lines)", up[1] if up else I.EXAMPLE_CANDIDATES,
                            height=180, key="t1_cands")
    with st.form("t1_q_form"):
        c1, c2, c3 = st.columns(3)
        n = bound(c1.select_slider, "N samples", [4, 8, 16, 32, 64], 16, key="t1_qn", disabled=not own)
        temp = bound(c2.select_slider, "Temperature", [0.6, 0.7, 0.8, 0.9, 1.0], 0.8, key="t1_temp", disabled=not own)
        answer = c3.text_input("Right answer (optional)", "" if own else "47", key="t1_answer")
        go_q = st.form_submit_button("Verify and select", icon=":material/checklist:", type="primary")
    if go_q:
        try:
            ans = int(answer) if answer.strip() else None
            cfg = J.QuestionConfig(question, n=int(n), temperature=float(temp), candidates=text, answer=ans)
        except ValueError:
            st.error("The right answer must be a whole number (or empty).", icon=":material/error:")
            cfg = None
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            reasoner, rm = _models()
            res = run_job("Verifying", J.run_question, cfg, reasoner, rm, time_cap_s=300)
            if res is not None:
                st.session_state["t1_q"] = res.to_dict()
    if q := st.session_state.get("t1_q"):
        domain_note(q["domain"])
        df = pd.DataFrame([{"#": i, "tool verdict": "pass" if c["passed"] else "veto", "RM score": c["rm"],
                            "answer": c["answer"], "right": c["correct"], "why": c["reason"], "text": c["text"]}
                           for i, c in enumerate(q["candidates"])])
        win = q["picks"]["tool_rm"]

        def _style(row):  # noqa: ANN001, ANN202
            s = "text-decoration: line-through; color: #888" if row["tool verdict"] == "veto" else ""
            return [s + ("; font-weight: bold; background-color: #e8f5e9" if row["#"] == win else "")] * len(row)

        st.dataframe(df.style.apply(_style, axis=1), hide_index=True, key="t1_cands_table")
        st.caption("Picks over all candidates: " + "; ".join(
            f"{q['labels'][k]}: #{v}" if v is not None else f"{q['labels'][k]}: none" for k, v in q["picks"].items())
            + f". Tool {q['costs']['tool_ms_per_candidate']:.2f} ms and RM {q['costs']['rm_ms_per_candidate']:.2f} ms "
            "per candidate.")
        json_download("Candidates and picks (JSON)", q, "t1_question.json", key="t1_q_json")
show_history("t1")
