"""Bridge: the N parallel samples of a question attend to each other through small cross-sample attention blocks."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning.bridge import inputs as I
from backend.reasoning.bridge import jobs as J
from ui.claims import claims_panel
from ui.figures import bridge as figs
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.reasoning import domain_note, grammar_expander, tiny_reasoner
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("bridge", """
**Bridge** treats the hidden states of the N samples drawn in parallel for one question as one tensor and adds a
small attention block after each feed-forward layer that mixes along the *sample* axis: at every position each sample
reads the other samples' states, so the N generations become interdependent instead of independent. Here Bridge is
added to the lab's tiny reasoner, warmed up on sets of right solutions and trained with GRPO, side by side with
independent sampling given the same data and budget.
""", details_md="""
**The block.** For the N samples of one prompt at one position, with RMS-normalised states x_i, queries q_i, keys
k_i and values v_i (2 heads of 12), a softmax over the N samples gives weights a_ij and the update
h_i <- h_i + W_o sum_j a_ij (v_j - v_i). A sample's own value cancels, so at width 1 the model is exactly the base
model, identical states (the shared prompt) exchange nothing, and W_o = 0 at initialisation makes the trained model
start as the base model at every width. There is no positional encoding along the samples (the block is
permutation-equivariant and works at any width) and no cache: only the current position is shared, so the next
tokens stay conditionally independent and the N samples are still drawn in one parallel batch. Other prompts and
finished samples are masked.

**Training** (`python -m backend.train bridge`, about 19 minutes of one shared core for both arms and 3 seeds). Both arms
start from the shipped tiny reasoner and train the same base tensor (the last layer's feed-forward output
projection); the Bridge arm also trains its blocks (74,496 parameters, 4.0 % of the 1.84M). SFT warm-up: 2 passes
over 32 sets of 4 right solutions (the base's own right samples, topped up with the reference solution); then 16
GRPO steps of 8 problems x 4 rollouts (width 4), reward 1 for the right answer. The evaluation uses 24 held-out
problems (5-8 operations) at widths 1, 2, 4 and 8: Bridge is trained at width 4 only.

**Where the miniature departs from the paper.** A 1.8M-parameter reasoner on generated arithmetic instead of 1.5-8B
LLMs on competition math; a few minutes of GRPO on one layer plus the blocks instead of full RLVR; 24 problems x 3
seeds, so differences of a few points are within the intervals of the claims panel.
""")
claims_panel("bridge")
grammar_expander()

# ------------------------------------------------------------------------------------------------ the tensor
st.subheader("The tensor and its three mixing axes")
c1, c2, c3 = st.columns([1, 1, 2])
width = bound(c1.slider, "Width N (samples)", 1, 8, 4, key="bridge_width")
pos = bound(c2.slider, "Position", 1, 8, 6, key="bridge_pos")
with_bridge = bound(c3.toggle, "With Bridge", True, key="bridge_with")
st.plotly_chart(figs.tensor_diagram(int(width), 8, 5, int(pos) - 1, bool(with_bridge)), key="bridge_tensor")
st.caption("Blue: the states the red position's self-attention can read (itself and earlier positions of the same "
           "sample); grey: later positions, not yet generated. With Bridge the red cells, the N samples at one "
           "position, also exchange information after every feed-forward layer.")

# ------------------------------------------------------------------------------------------------ one question
st.subheader("N samples of one question, with and without Bridge")
question = st.selectbox("Example question", I.QUESTIONS, key="bridge_example")
with st.form("bridge_sample_form"):
    q = st.text_input("Question (in the tiny reasoner's grammar; at most 4,000 characters)", question,
                      key="bridge_question")
    a1, a2, a3, a4 = st.columns(4)
    n = bound(a1.select_slider, "N samples", [1, 2, 4, 8, 16], 8, key="bridge_n")
    temp = bound(a2.select_slider, "Temperature", [0.6, 0.8, 1.0, 1.2], 1.0, key="bridge_temp")
    ck = bound(a3.selectbox, "Training seed", [0, 1, 2], key="bridge_ck")
    answer = a4.text_input("Right answer (optional)", "", key="bridge_answer")
    go_s = st.form_submit_button("Sample", icon=":material/call_split:", type="primary")
if go_s:
    try:
        ans = int(answer) if answer.strip() else None
        cfg = J.SampleConfig(q, n=int(n), temperature=float(temp), checkpoint=int(ck), answer=ans)
    except ValueError:
        st.error("The right answer must be a whole number (or empty).", icon=":material/error:")
        cfg = None
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        cfg = None
    if cfg is not None:
        res = run_job("Sampling", J.run_sample, cfg, tiny_reasoner(), time_cap_s=120)
        if res is not None:
            st.session_state["bridge_sample"] = res.to_dict()
if r := st.session_state.get("bridge_sample"):
    domain_note(r["domain"])
    st.caption(f"Right answer: {r['answer'] if r['answer'] is not None else 'unknown (type it above)'}.")
    st.plotly_chart(figs.answer_counts(r), key="bridge_answers")
    cols = st.columns(len(r["modes"]))
    for col, (mode, m) in zip(cols, r["modes"].items(), strict=True):
        col.markdown(f"**{r['labels'][mode]}**")
        right = "" if m["right"] is None else f" · {m['right']}/{r['n']} right"
        col.caption(f"majority {m['majority']} · {m['distinct_answers']} distinct answers{right} · "
                    f"{m['tokens']} tokens, {m['seconds']:.2f} s")
        mark = {True: "✓", False: "✗", None: ""}
        col.dataframe(pd.DataFrame([{"": mark[s["right"]], "answer": s["answer"], "text": s["text"]}
                                    for s in m["samples"]]), hide_index=True, key=f"bridge_samples_{mode}")
    p = r["parameters"]
    st.caption(f"Bridge adds {p['bridge_added']:,} parameters to the {p['base']:,} of the tiny reasoner "
               f"({100 * p['bridge_added'] / p['base']:.1f} %); both arms train {p['trained_in_base']:,} of the base.")
    json_download("Samples (JSON)", r, "bridge_samples.json", key="bridge_sample_json")

# ------------------------------------------------------------------------------------------------ width scaling
st.subheader("Accuracy, pass@N and distinct right solutions against N")
preset = preset_choice("bridge", {k: {} for k in I.PRESETS}, label="Run")
if st.button("Show the scaling", icon=":material/show_chart:", type="primary", key="bridge_go"):
    try:
        scfg = J.ScalingConfig(**I.PRESETS[preset])
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        scfg = None
    if scfg is not None:
        st.session_state["bridge_scaling_config"] = scfg
        reasoner = tiny_reasoner() if scfg.source == "live" else None
        res = run_job("Width scaling", J.run_scaling, scfg, reasoner, time_cap_s=300)
        if res is not None:
            st.session_state["bridge_scaling"] = res.to_dict()
            w = res.train_width if res.train_width in res.widths else res.widths[-1]
            i = res.widths.index(w)
            record_run("bridge", {"run": preset}, {f"{res.labels[m]} accuracy@{w}": v["mean"][i]
                                                    for m, v in res.metrics.items()})
if s := st.session_state.get("bridge_scaling"):
    c = s["config"]
    st.plotly_chart(figs.width_curves(s, f"{c['problems']} held-out problems, training seeds {c['checkpoints']} "
                                         f"({'shipped evaluation' if c['source'] == 'log' else 'sampled now'}); "
                                         f"Bridge trained at N = {s['train_width']}"), key="bridge_curves")
    rows = []
    for m, per in s["metrics"].items():
        for j, w in enumerate(s["widths"]):
            rows.append({"mode": s["labels"][m], "N": w, **{J.AGGREGATES.label(a): per[a][j] for a in J.AGGREGATES},
                         "distinct right": s["distinct"][m][j], "tokens per sample": s["tokens_per_sample"][m][j]})
    show_metrics_table(rows, key="bridge_table")
    a, b = st.columns([3, 2])
    if s["curves"]:
        a.plotly_chart(figs.training_curves(s), key="bridge_train_curves")
    p = s["parameters"]
    b.markdown(f"**Costs.** Bridge adds **{p['bridge_added']:,} parameters** to the tiny reasoner's "
               f"{p['base']:,} ({100 * p['bridge_added'] / p['base']:.1f} %; the paper: 2.8-5.1 %). Both arms "
               "used the same SFT sets, GRPO problems and number of rollouts; each run took about "
               + ", ".join(f"{r['train_seconds']:.0f} s" for m in s["curves"] for r in s["curves"][m][:1])
               + " of training (Bridge, independent). A Bridge step costs one N x N attention per prompt, "
               "position and layer on top of the base forward pass.")
    d1, d2 = st.columns(2)
    with d1:
        json_download("Scaling and per-problem numbers (JSON)", s, "bridge_scaling.json", key="bridge_json")
    with d2:
        csv_download("Metrics against N (CSV)", pd.DataFrame(rows), "bridge_scaling.csv", key="bridge_csv")
show_history("bridge")
