"""D2F page: pipelined parallel block decoding of a block-causal diffusion LM with an exact KV cache, against the
bidirectional teacher's vanilla diffusion decoding, a cache-free threshold decoder and an autoregressive model of the
same size, on the reasoning tasks the three models were trained on."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning import tasks
from backend.reasoning.d2f.evaluate import (
    DECODERS,
    GRID_DECODERS,
    MAX_QUESTION_CHARS,
    MIN_VANILLA_ACCURACY,
    VANILLA_STEPS,
)
from backend.reasoning.d2f.inputs import preset_problems
from backend.reasoning.d2f.jobs import BenchConfig, GenerateConfig, run_bench, run_generate
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import d2f as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.reasoning import domain_note, grammar_expander
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("d2f", """
**D2F** (discrete diffusion forcing) turns a bidirectional masked-diffusion LM into a block-autoregressive one:
attention is bidirectional inside a block of 16 tokens and causal across blocks, so finished blocks are cached
exactly, and several blocks decode in parallel in one pipeline. Here a 1.8M-parameter student distilled from its
bidirectional teacher answers arithmetic word problems beside the teacher's vanilla decoding and an autoregressive
model of the same size and data.
""", details_md="""
**Pipeline.** A new masked block joins when the last one is more than tau_add decoded; it stays *semi-active*
(accepting only tokens above tau_conf) until its predecessor is more than tau_act decoded, then it is *fully active*
and places its most confident token when none passes. A block that is complete is run once more to cache its keys
and values; every pass computes only the positions not yet cached.

**Baselines.** *Vanilla*: the teacher fills the most confident length/steps positions per full-recompute pass over
the fixed 160 positions (a sweep of step counts), over the whole length as Dream decodes, or *in semi-AR blocks* of 16
decoded left to right with the steps shared among them (LLaDA's remasking). *Threshold*: the teacher, without cache,
fills every position above tau_conf per pass. *Autoregressive*: the tiny reasoner (the same architecture, the
initialisation of the teacher; trained on the wider grammar that holds these problems) greedy with a KV cache.

**Costs.** Forward passes per generated token (up to the end token; the prompt pass counted) and tokens per second
of wall time on this server, one thread. **Models**: `python -m backend.train d2f` (teacher, then the
asymmetric block-causal distillation) and `python -m backend.train tinyreasoner`; the D2F models adapt on the
reasoning-task generator's five original templates with numbers 1-20, and the comparison draws unseen problems of
that distribution by default; on the held-out templates (ages, savings) every model here is near zero.
""")
claims_panel("d2f")
grammar_expander()


@st.cache_resource(max_entries=1, show_spinner=False)
def _models():  # noqa: ANN202
    from backend.reasoning.d2f.evaluate import load_models

    return load_models()


@st.cache_data(show_spinner=False)
def _presets() -> dict[str, int]:
    return preset_problems()


PRESETS = _presets()
src = bound(st.radio, "Question", ["Preset problem", "Your own question"], horizontal=True, key="d2f_src")
expected = None
if src == "Preset problem":
    question = bound(st.selectbox, "Problem (four of the training kind, then two of held-out templates and two with held-out numbers)",
                     list(PRESETS), key="d2f_preset")
    expected = PRESETS.get(question)
else:
    question = st.text_area(f"Your question (at most {MAX_QUESTION_CHARS} characters; the models know arithmetic "
                            "word problems with numbers of a few digits)", "A box has 14 pens. It gets 3 boxes "
                            "of 6 pens. How many pens does it have now?", max_chars=MAX_QUESTION_CHARS,
                            key="d2f_question")
with st.form("d2f_form"):
    c1, c2, c3, c4 = st.columns(4)
    tau_add = bound(c1.slider, "tau_add", 0.0, 1.0, 0.1, 0.05, key="d2f_tau_add")
    tau_act = bound(c2.slider, "tau_act", 0.0, 1.0, 0.95, 0.05, key="d2f_tau_act")
    tau_conf = bound(c3.slider, "tau_conf", 0.0, 1.0, 0.9, 0.05, key="d2f_tau_conf")
    steps = bound(c4.select_slider, "Vanilla steps", list(VANILLA_STEPS)[::-1], 160, key="d2f_steps")
    go_one = st.form_submit_button("Decode with every decoder", icon=":material/bolt:", type="primary")

if go_one:
    try:
        gcfg = GenerateConfig(tau_add=tau_add, tau_act=tau_act, tau_conf=tau_conf, decoders="all", steps=steps,
                              grid=True)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
    else:
        res = run_job("Decoding", run_generate, question, gcfg, _models(), time_cap_s=120)
        if res is not None:
            res["expected"] = expected
            st.session_state["d2f_result"] = res
            d = res["runs"][0]
            record_run("d2f", {"question": question[:60], "tau_add": tau_add, "tau_act": tau_act,
                               "tau_conf": tau_conf, "vanilla steps": steps},
                       {"D2F answer": d["answer"], "D2F passes/token": d["passes_per_token"],
                        "D2F tokens/s": d["tokens_per_s"]})

res = st.session_state.get("d2f_result")
if res:
    exp = res.get("expected")
    rows = [{"decoder": DECODERS.label(r["decoder"]) + (f", {r['steps']} steps" if r.get("steps") else ""),
             "answer": r["answer"], **({"correct": r["answer"] == exp} if exp is not None else {}),
             "tokens": r["tokens"], "forward passes": r["forward_passes"],
             "passes / token": round(r["passes_per_token"], 3), "tokens / s": round(r["tokens_per_s"]),
             "ms": round(1000 * r["seconds"], 1), "text": r["text"]} for r in res["runs"]]
    st.caption(f"Expected answer: {exp}" if exp is not None else "Your question: no reference answer.")
    domain_note(res.get("domain"))
    show_metrics_table(rows, key="d2f_table")
    grids = {r["decoder"]: r for r in res["runs"] if r["decoder"] in GRID_DECODERS}
    n_pos = max(len(r["grid"][0]) for r in grids.values() if r["grid"])
    n_pass = max(len(r["grid"]) for r in grids.values())
    c1, c2 = st.columns(2)
    d = grids["d2f"]
    c1.plotly_chart(figs.token_grid(d["grid"], d["grid_tokens"], f"D2F: {d['forward_passes']} passes", n_pos,
                                    n_pass), key="d2f_grid")
    other = c2.radio("Beside it", GRID_DECODERS[1:], horizontal=True, format_func=DECODERS.label, key="d2f_other")
    o = grids[other]
    c2.plotly_chart(figs.token_grid(o["grid"], o["grid_tokens"], f"{DECODERS.label(other)}: {o['forward_passes']} "
                                    "passes", n_pos, n_pass), key="d2f_grid_other")
    json_download("This comparison (JSON)", res | {"provenance": provenance(None, **res["config"])},
                  "d2f_question.json", key="d2f_json")

st.subheader("Accuracy against cost")
SIZES = {
    "Light: 8 problems, 4 vanilla step counts": {"d2f_bench_n": 8, "d2f_bench_steps": [160, 80, 40, 20]},
    "Full: 50 problems, 7 step counts": {"d2f_bench_n": 50, "d2f_bench_steps": list(VANILLA_STEPS)},
}
preset_choice("d2f", SIZES, horizontal=True)
for k, v in next(iter(SIZES.values())).items():
    st.session_state.setdefault(k, v)
bsrc = st.radio("Problems", ["Generated", "Your questions (upload)"], horizontal=True, key="d2f_bench_src")
upload = None
if bsrc != "Generated":
    upload = text_upload("d2f_upload", help="One question per line, optionally ending with '| answer' "
                         "(a whole number); at most 200 questions of 400 characters.")
with st.form("d2f_bench_form"):
    b1, b2, b3 = st.columns(3)
    split = b1.selectbox("Split", ["train", "heldout", "heldout_templates", "heldout_numbers"], key="d2f_split",
                         format_func=tasks.SPLIT_LABELS.get)
    n = b2.number_input("Problems", 1, 200, key="d2f_bench_n")
    ops = b3.select_slider("Operations per problem", [1, 2, 3, 4, 5], (1, 3), key="d2f_ops")
    vsteps = st.multiselect("Vanilla step counts", list(VANILLA_STEPS), key="d2f_bench_steps")
    go_bench = st.form_submit_button("Run the comparison", icon=":material/speed:")

if go_bench:
    if bsrc != "Generated" and upload is None:
        st.error("Upload a text file of questions first, or choose generated problems.", icon=":material/error:")
    else:
        try:
            bcfg = BenchConfig(tau_add=tau_add, tau_act=tau_act, tau_conf=tau_conf, n=int(n), split=split,
                               ops=tuple(ops), decoders="all", vanilla_steps=tuple(vsteps or [160]),
                               questions=upload[1] if upload else None)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
        else:
            out = run_job("D2F and the baselines", run_bench, bcfg, _models(), time_cap_s=1200)
            if out is not None:
                st.session_state["d2f_bench"] = out

if out := st.session_state.get("d2f_bench"):
    c = out["claim"]
    if c.get("evaluated") and out["with_answers"]:
        k = st.columns(3)
        k[0].metric("D2F accuracy / best vanilla", f"{c['d2f_accuracy']:.2f} / {c['best_vanilla_accuracy']:.2f}",
                    "reaches 95 %" if c["reaches_95"] else "below 95 %", delta_color="off")
        k[1].metric("Passes per token: D2F vs fewest vanilla at that level",
                    f"{c['d2f_passes_per_token']:.3f} vs {c['fewest_vanilla_passes_per_token_reaching']:.3f}",
                    "fewer" if c["fewer_passes"] else "not fewer", delta_color="off")
        if c.get("ar_accuracy") is not None:
            k[2].metric("D2F vs AR (same module and cache): accuracy, then tokens/s",
                        f"{c['d2f_accuracy']:.2f} vs {c['ar_accuracy']:.2f}",
                        f"{c['tokens_per_s_vs_ar']:.2f}x tokens/s" + ("" if c["matched"] else " (accuracy not matched)"),
                        delta_color="off")
            (st.caption if c["matched"] else st.warning)(c["matched_note"])
        if not c.get("comparable", True):
            st.warning(f"The best vanilla setting solves {c['best_vanilla_accuracy']:.0%} of these problems, under "
                       f"the {MIN_VANILLA_ACCURACY:.0%} the comparison needs: '95 % of the best vanilla accuracy' "
                       "would compare one or two lucky answers, so the claim is not read here.",
                       icon=":material/warning:")
    elif not out["with_answers"]:
        st.info("No reference answers in the upload: the costs are measured, the accuracy is not.",
                icon=":material/info:")
    p1, p2 = st.columns(2)
    p1.plotly_chart(figs.pareto(out["rows"], "passes_per_token"), key="d2f_pareto_passes")
    p2.plotly_chart(figs.pareto(out["rows"], "tokens_per_s"), key="d2f_pareto_speed")
    table = pd.DataFrame([{"decoder": r["label"], "accuracy": round(r["accuracy"], 3),
                           "passes / token": round(r["passes_per_token"], 3), "tokens / s": round(r["tokens_per_s"]),
                           "mean tokens": round(r["mean_tokens"], 1), "mean passes": round(r["mean_passes"], 1),
                           "seconds": r["seconds"]} for r in out["rows"]])
    show_metrics_table(table, key="d2f_bench_table")
    st.caption(f"{out['n']} problems ({out['source']}); parameters: " +
               ", ".join(f"{k} {v:,}" for k, v in out["parameters"].items()) + ".")
    a, b = st.columns(2)
    with a:
        json_download("Comparison (JSON)", out | {"provenance": provenance(0, source=out["source"])}, "d2f_bench.json",
                      key="d2f_bench_json")
    with b:
        csv_download("Table (CSV)", table, "d2f_bench.csv", key="d2f_bench_csv")
show_history("d2f")
