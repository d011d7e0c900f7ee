"""SwiReasoning page: one question decoded by SwiReasoning and its baselines side by side (text, answer, tokens, time),
the per-step entropy trace with latent/explicit blocks, and accuracy vs tokens on generated held-out problems."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.models import coder
from backend.reasoning import tasks
from backend.reasoning.lm import MAX_QUESTION_CHARS, MODEL_IDS
from backend.reasoning.swireasoning import decoder as sw
from backend.reasoning.swireasoning.decoder import DECODERS, PROTOCOLS, SwiRConfig, effective_window
from backend.reasoning.swireasoning.inputs import PRESETS
from backend.reasoning.swireasoning.jobs import DecodeConfig, EvalConfig, run_decode, run_eval
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import swireasoning as figs
from ui.inputs import text_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.reasoning import domain_note, grammar_expander
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("swireasoning", """
**SwiReasoning** decodes a reasoning answer without any training by switching between *latent* steps, which feed the
model the probability-weighted mix of all token embeddings instead of one token, and *explicit* chain-of-thought
tokens: it goes explicit as soon as the next-token entropy falls below a reference, back to latent when the entropy
rises again (after W explicit steps), and caps the number of switches by injecting the end-of-thinking marker.
Here it runs beside greedy and sampled chain of thought, latent-only soft thinking and budget forcing.
""", details_md="""
**Models.** `tinyreasoner` is a 1.8M-parameter Llama trained here on the task generator's documented grammar
(expressions and four kinds of word problems, numbers of one or two digits, 1-8 operations; see the expander
below) in a `<think> steps </think> answer` format; SmolLM2-135M-Instruct and the optional Qwen2.5-Coder-1.5B get a chat prompt
with one solved example and plain-text markers (SmolLM2: `Reasoning:` / `Answer:`). None of them ever saw soft
embeddings in training, so latent steps can hurt them: the controller itself is model-agnostic, and the numbers
below say what it does to each model.

**Settings.** The released evaluation's two protocols: *accuracy* runs without a switch cap at alpha0 = 0.6,
*efficiency* runs with the cap C_max = 2 at alpha0 = 0.5; blend weight beta0 = 0.7 of the end-marker embedding at a
switch to explicit; sampled decoders at temperature 0.6, top-p 0.95, top-k 20. Its window W = 512 would forbid any
switch back to latent under budgets of 512 tokens or fewer, so W is scaled to budget / 8 there (our choice). Every decoder stops once a number follows the answer
marker. **Problems** come from the task generator: unseen draws of the grammar, of its phrasings held out of
training, of the original five templates with numbers 1-20, and of held-out templates (ages, savings) the tiny
reasoner never saw; each preset and evaluation says which. A typed question is labelled in or out of the grammar.
""")
claims_panel("swireasoning")
grammar_expander()

QWEN_OK = coder.installed()
BUDGETS = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
CAPS = ["protocol's", "none", "1", "2", "3", "4", "8"]  # the switch cap: the protocol's, or an override


def _model_label(m: str) -> str:
    if m == "qwen2.5-coder" and not QWEN_OK:
        return "qwen2.5-coder (not installed)"
    return {"folder": "local folder"}.get(m, m)


@st.cache_resource(max_entries=2, show_spinner="Loading the model (the first load may convert and cache weights)")
def reasoning_lm(model_id: str, path: str | None):  # noqa: ANN201 - a backend ReasoningLM
    from backend.reasoning.lm import load_reasoning_lm

    return load_reasoning_lm(model_id, path)


@st.cache_data(max_entries=4)
def presets() -> list[dict]:
    """Two problems of each split, none drawn by training (the generator's seeds differ per split)."""
    return [{"question": p.question, "answer": p.answer, "template": p.template, "split": split}
            for split, seed in PRESETS.items()
            for p in tasks.generate(2, split, seed=seed, steps=(1, 3))]


c1, c2 = st.columns([1, 2])
model_id = bound(c1.selectbox, "Model", [*MODEL_IDS, "folder"], format_func=_model_label, key="swireasoning_model")
path = None
if model_id == "folder":
    path = c2.text_input("Model folder (a local transformers causal LM)", key="swireasoning_path").strip() or None
elif model_id == "qwen2.5-coder" and not QWEN_OK:
    c2.info(f"Qwen2.5-Coder-1.5B-Instruct is not installed. Install it with `{coder.INSTALL_COMMAND}` "
            "(about 1.1 GB; an unofficial packaging of the Apache-2.0 weights). It decodes about 2 tokens/s.",
            icon=":material/download:")
blocked = model_id == "qwen2.5-coder" and not QWEN_OK

src = bound(st.radio, "Question", ["Preset problem", "Your own question", "Upload questions"],
            horizontal=True, key="swireasoning_src")
known = None
if src == "Preset problem":
    ps = presets()
    i = bound(st.selectbox, "Problem", list(range(len(ps))), key="swireasoning_preset",
              format_func=lambda k: f"[{tasks.SPLIT_LABELS[ps[k]['split']]}] {ps[k]['question']} (answer {ps[k]['answer']})")
    question, known = ps[i]["question"], ps[i]["answer"]
elif src == "Your own question":
    question = st.text_area(f"Your question (at most {MAX_QUESTION_CHARS:,} characters)", key="swireasoning_q",
                            value="Ana has 23 pens and buys 3 boxes of 12 pens. How many pens does she have now?")
else:
    up = text_upload("swireasoning_upload", help="One question per line; pick one below.")
    lines = [x.strip() for x in (up[1].splitlines() if up else []) if x.strip()]
    question = st.selectbox("Question from the file", lines, key="swireasoning_pick") if lines else ""

with st.form("swireasoning_form"):
    f1, f2, f3 = st.columns(3)
    budget = bound(f1.select_slider, "Token budget", BUDGETS, 64, key="swireasoning_budget")
    protocol = bound(f2.radio, "Protocol", list(PROTOCOLS), horizontal=True, key="swireasoning_protocol",
                     format_func={"accuracy": "accuracy (no cap, alpha0 0.6)",
                                  "efficiency": "efficiency (C_max 2, alpha0 0.5)"}.get)
    cap = bound(f2.select_slider, "Switch cap C_max", CAPS, CAPS[0], key="swireasoning_cmax")
    seed = bound(f3.number_input, "Seed (sampled decoders)", 0, 10_000, 0, key="swireasoning_seed")
    chosen = st.multiselect("Decoders", list(DECODERS), list(DECODERS), format_func=DECODERS.label,
                            key="swireasoning_decoders")
    go_run = st.form_submit_button("Decode with each decoder", icon=":material/swap_horiz:", type="primary",
                                   disabled=blocked)

max_switch = None if cap == CAPS[0] else 0 if cap == "none" else int(cap)
if go_run:
    q = (question or "").strip()
    if not q:
        st.error("Type a question, choose a preset, or upload a file with one question per line.",
                 icon=":material/error:")
    elif len(q) > MAX_QUESTION_CHARS:
        st.error(f"The question has {len(q):,} characters; at most {MAX_QUESTION_CHARS:,} are accepted.",
                 icon=":material/error:")
    elif not chosen:
        st.error("Choose at least one decoder.", icon=":material/error:")
    else:
        dcfg = DecodeConfig(model=model_id, path=path, decoders=tuple(chosen), budget=int(budget),
                            protocol=protocol, max_switch=max_switch, seed=int(seed))
        st.session_state["swireasoning_decode_config"] = dcfg
        lm = reasoning_lm(model_id, path)
        res = run_job("Decoding", run_decode, q, dcfg, lm, time_cap_s=900)
        if res is not None:
            res = res | {"known": known}
            st.session_state["swireasoning_result"] = res
            record_run("swireasoning", {"model": res["model"], "budget": res["budget"], "protocol": protocol,
                                        "C_max": cap,
                                        "question": res["question"]},
                       {f"{r['decoder']} answer": r["answer"] for r in res["runs"]} |
                       {f"{r['decoder']} tokens": r["tokens"] for r in res["runs"]}, seed=int(seed))

res = st.session_state.get("swireasoning_result")
if res:
    st.caption(f"{res['model']}, budget {res['budget']} (W = {effective_window(SwiRConfig(budget=res['budget']))})"
               f": {res['question']}" + (f" — correct answer {res['known']}" if res["known"] is not None else ""))
    domain_note(res.get("domain"), res["model"])
    cols = st.columns(min(3, len(res["runs"])))
    for k, r in enumerate(res["runs"]):
        with cols[k % len(cols)].container(border=True):
            ok = "" if res["known"] is None else (" ✓" if r["answer"] == res["known"] else " ✗")
            st.markdown(f"**{r['label']}** — answer **{r['answer']}**{ok}")
            st.caption(f"{r['tokens']} tokens ({r['latent_steps']} latent), {r['forward_passes']} forward passes, "
                       f"{r['switches']} switches, {r['seconds']:.2f} s, stopped: {r['stopped']}")
            st.text(r["text"][:600])
    rows = [{"decoder": r["label"], "answer": r["answer"], "tokens": r["tokens"], "latent steps": r["latent_steps"],
             "switches": r["switches"], "forward passes": r["forward_passes"], "seconds": r["seconds"],
             "stopped": r["stopped"]} for r in res["runs"]]
    show_metrics_table(rows, key="swireasoning_table")
    swir = [r for r in res["runs"] if DECODERS.kind(r["decoder"]) == "ours"] or res["runs"][:1]
    st.plotly_chart(figs.entropy_traces(swir + [r for r in res["runs"] if sw.mode_of(r["decoder"]) == sw.DecoderMode(explicit_only=True)]),
                    key="swireasoning_trace")
    d1, d2 = st.columns(2)
    with d1:
        json_download("Decodes with traces (JSON)", res | {"provenance": provenance(
            int(seed), model=res["model"], budget=res["budget"], question=res["question"])},
            "swireasoning_run.json", key="swireasoning_json")
    with d2:
        csv_download("Decoder table (CSV)", pd.DataFrame(rows), "swireasoning_decoders.csv", key="swireasoning_csv")

st.subheader("Evaluate: accuracy vs tokens")
with st.form("swireasoning_eval_form"):
    e1, e2, e3 = st.columns(3)
    n_eval = e1.select_slider("Problems", [4, 8, 16, 32, 64, 100], 8, key="swireasoning_eval_n")
    eval_budgets = e2.multiselect("Budgets", BUDGETS, [32, 64], key="swireasoning_eval_budgets")
    split = e3.selectbox("Split", list(tasks.SPLITS), index=list(tasks.SPLITS).index("train"),
                         format_func=lambda k: f"{k} ({tasks.SPLIT_LABELS[k]})", key="swireasoning_eval_split",
                         help="the tiny reasoner is near 0 on every held-out split (its manifest row); decoders "
                              "differ on unseen draws of its training kind (train)")
    eval_dec = st.multiselect("Decoders", list(DECODERS), list(sw.greedy_decoders()), format_func=DECODERS.label,
                              key="swireasoning_eval_decoders")
    go_eval = st.form_submit_button("Evaluate", icon=":material/leaderboard:", disabled=blocked)
if go_eval:
    if not eval_budgets or not eval_dec:
        st.error("Choose at least one budget and one decoder.", icon=":material/error:")
    else:
        ecfg = EvalConfig(model=model_id, path=path, split=split, n=int(n_eval), budgets=tuple(sorted(eval_budgets)),
                          decoders=tuple(eval_dec), protocol=protocol, max_switch=max_switch, seed=int(seed))
        st.session_state["swireasoning_eval_config"] = ecfg
        lm = reasoning_lm(model_id, path)
        out = run_job("Evaluating", run_eval, ecfg, lm, time_cap_s=1800)
        if out is not None:
            st.session_state["swireasoning_eval"] = out
if ev := st.session_state.get("swireasoning_eval"):
    g1, g2 = st.columns(2)
    g1.plotly_chart(figs.pareto(ev["rows"]), key="swireasoning_pareto")
    g2.plotly_chart(figs.accuracy_vs_budget(ev["rows"]), key="swireasoning_budget_fig")
    table = [{"decoder": r["label"], "budget": r["budget"], "accuracy": round(r["accuracy"], 3),
              "mean tokens": round(r["mean_tokens"], 1), "answered": round(r["answered"], 3),
              "accuracy / 100 tokens": r["accuracy_per_100_tokens"], "forward passes": round(r["forward_passes"], 1),
              "seconds": r["seconds"], "tokens/s": r["tokens_per_s"], "Pareto": r["pareto"]} for r in ev["rows"]]
    st.caption(f"{ev['model']} on {ev['n']} problems of split {ev['split']}.")
    show_metrics_table(table, key="swireasoning_eval_table")
    json_download("Evaluation (JSON)", ev, "swireasoning_eval.json", key="swireasoning_eval_json")
show_history("swireasoning")
