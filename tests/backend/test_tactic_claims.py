"""Claims of Tactic on SmolLM2-135M-Instruct (the embedded model), real captured attention.

ci tier (SmolLM2 loaded once for the module): the built-in Python reference text, 1,024 tokens, layers 0, 9, 19, 29,
the last 16 positions as decode queries: Tactic at P = 0.9 reaches mass >= 0.85 in >= 80 % of the (layer, head, query)
cases; at equal tokens per layer its output error is below Quest's; the model runs with the selectors plugged into
its attention (P = 1 reproduces dense perplexity); another architecture is refused.
full tier: the same at 2,048 tokens over all 30 layers and 32 queries, the needle task, and the perplexity of the last
256 tokens of a 4,096-token text through Tactic vs dense with the KV bytes touched.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.stats import block_bootstrap_mean, paired_bootstrap, paired_ci

CI_LAYERS = [0, 9, 19, 29]


@pytest.fixture(scope="module")
def smollm2():
    from backend.models import load

    return load("smollm2")


def _ablations(an, s, cap=None):
    """What the mass-success claim records beside Tactic: the share of cases reaching 0.85 and the tokens per head
    of each ablation (without the sink rule, the sink rule alone, Tactic's order stopped at the exact total)."""
    out = {}
    for m in ("tactic", "tactic_no_sink", "sink_only", "tactic_exact_total", "oracle_top_p"):
        r = s["methods"][m]
        out[f"{m}_share_ge_085"] = r["share_mass_ge_threshold"]
        out[f"{m}_tokens"] = r["tokens_per_head"]
    out["tactic_over_exact_total_tokens"] = s["tactic_vs_exact_total_tokens"]["ratio_of_means"]
    out["tactic_over_oracle_tokens"] = s["tactic_vs_oracle_tokens"]["ratio_of_means"]
    out["total_estimate_ratio_median"] = s["methods"]["tactic"]["total_estimate_ratio_median"]
    return out


def _intervals(an) -> dict:
    """The paired intervals over (layer, head) units (``evaluation.per_head``: each head's queries averaged):
    coverage = the share of queries reaching 0.85 minus the 0.8 bound; the token margin = 1.3x the exact-total
    variant's tokens minus Tactic's (positive: within the bound); the sink rule's coverage gain over the paper's
    algorithm; Quest's relative output error minus Tactic's at equal tokens."""
    from backend.tokens.tactic.evaluation import per_head

    share = {m: per_head(an, m, "mass", 0.85) for m in ("tactic", "tactic_no_sink") if m in an.cases}
    out = paired_ci(share["tactic"], [0.8] * len(share["tactic"])).numbers("coverage_over_bound")
    out |= paired_ci([1.3 * x for x in per_head(an, "tactic_exact_total", "tokens")],
                     per_head(an, "tactic", "tokens")).numbers("token_margin_vs_1_3x_exact_total")
    if "tactic_no_sink" in share:
        out |= paired_ci(share["tactic"], share["tactic_no_sink"]).numbers("sink_rule_coverage_gain")
    if "quest" in an.cases:
        out |= paired_ci(per_head(an, "quest", "rel_err"), per_head(an, "tactic", "rel_err")).numbers(
            "err_gain_over_quest")
    return out


def _analysis(lm, n_tokens, layers, n_queries, preset="pydoc", keep=False):
    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.model import capture

    prompt = te.preset_prompt(lm.tokenizer, preset, n_tokens, n_queries + te.MIN_PREFILL)
    cap = capture(lm, prompt.ids, layers, use_cache=False)
    an = te.analyse(cap, n_queries, 0.9, "match", keep_masks=keep)
    return prompt, cap, an, te.summary(an)


@pytest.fixture(scope="module")
def ci_run(smollm2):
    return _analysis(smollm2, 1024, CI_LAYERS, 16)


@pytest.mark.xfail(strict=True, reason=(
    "1,024 tokens: 78 % of (layer, head, query) cases reach 0.85 (layers 0 / 9 / 19 / 29: 87 / 74 / 92 / 61 %), "
    "below the 80 % bound, while the token bound holds (1.03x the tokens of the same cluster order stopped at the "
    "exact total). The misses are estimate shortfalls: in the failing cases the sampled total's median is 0.85-0.91 "
    "of the true total (0.97-1.05 where Tactic succeeds), so it stops before P; every failing case has the first "
    "token loaded. At 2,048 tokens the same selector reaches 81 % (full tier)."))
def test_tactic_mass_success_ci_subset(ci_run, record_claim) -> None:
    from backend.tokens.tactic.evaluation import fixed_median_budget

    _, cap, an, s = ci_run
    t = s["methods"]["tactic"]
    fixed = fixed_median_budget(cap, an)
    abl = _ablations(an, s)
    ci = _intervals(an)
    record_claim(tactic_mass_mean=t["mass_mean"],
                 fixed_median_budget=fixed["budget"], fixed_share_below_085=fixed["share_below_threshold"],
                 need_min=s["need"]["min"], need_max=s["need"]["max"], tactic_bytes_ratio=t["bytes_ratio"], **abl,
                 **{k: v for k, v in ci.items() if k.startswith(("coverage", "token_margin"))})
    assert s["methods"]["oracle_top_p"]["share_mass_ge_p"] == 1.0
    assert t["share_mass_ge_threshold"] >= 0.8  # coverage
    assert abl["tactic_over_exact_total_tokens"] <= 1.3  # and no over-selection to get it


def test_tactic_error_below_quest_at_equal_tokens_ci_subset(ci_run, record_claim) -> None:
    _, _, an, s = ci_run
    m = s["methods"]
    tt, qt = an.cases["tactic"]["tokens"].double(), an.cases["quest"]["tokens"].double()
    ci = _intervals(an)
    record_claim(tactic_rel_err=m["tactic"]["rel_err_mean"], quest_rel_err=m["quest"]["rel_err_mean"],
                 top_k_rel_err=m["top_k"]["rel_err_mean"], window_rel_err=m["window"]["rel_err_mean"],
                 tactic_tokens=float(tt.mean()), quest_tokens=float(qt.mean()),
                 **{k: v for k, v in ci.items() if k.startswith("err_gain")})
    # equal tokens per layer (Quest rounds its budget down to whole pages: never more tokens than Tactic)
    assert float(qt.sum(-1).mean()) <= float(tt.sum(-1).mean()) * 1.001
    assert m["tactic"]["rel_err_mean"] < m["quest"]["rel_err_mean"]


def test_model_runs_with_the_selectors_and_p_one_is_dense(smollm2) -> None:
    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.model import sparse_perplexity

    prompt = te.text_prompt(smollm2.tokenizer, te.builtin_text(), 113, "built-in", 113)
    res = sparse_perplexity(smollm2, prompt.ids, ["tactic", "oracle_top_p", "window"], p=1.0, budget=8, n_last=16)
    d = res["dense"]["perplexity"]
    for m in ("tactic", "oracle_top_p"):
        assert res["methods"][m]["perplexity"] == pytest.approx(d, rel=1e-4)
        assert res["methods"][m]["bytes_ratio"] >= 1.0  # every token, plus Tactic's overheads
    window = res["methods"]["window"]
    assert window["perplexity"] != pytest.approx(d, rel=1e-4)
    assert window["bytes_ratio"] < 0.2
    assert math.isfinite(window["perplexity"])


def test_other_architecture_and_short_text_are_refused(smollm2) -> None:
    from types import SimpleNamespace

    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.model import check_model, sparse_perplexity

    fake = SimpleNamespace(config=SimpleNamespace(model_type="bert"), model=SimpleNamespace(layers=[1]))
    with pytest.raises(InputError, match="not a Llama-family"):
        check_model(fake)
    with pytest.raises(InputError, match="tokens"):
        te.text_prompt(smollm2.tokenizer, "too short", 1024, "the text", 80)
    with pytest.raises(InputError, match="empty"):
        te.text_prompt(smollm2.tokenizer, "  \n", 1024, "the text", 80)
    ids = smollm2.tokenizer("short text " * 20, return_tensors="pt")["input_ids"]
    with pytest.raises(InputError, match="needs at least"):
        sparse_perplexity(smollm2, ids, ["tactic"], n_last=256)


# ------------------------------------------------------------------------------------------------ full tier
@pytest.fixture(scope="module")
def full_run(smollm2):
    return _analysis(smollm2, 2048, list(range(30)), 32)


@pytest.mark.full
def test_tactic_mass_success_2k_all_layers(full_run, record_claim) -> None:
    from backend.tokens.tactic.evaluation import fixed_median_budget

    _, cap, an, s = full_run
    t = s["methods"]["tactic"]
    fixed = fixed_median_budget(cap, an)
    abl = _ablations(an, s)
    ci = _intervals(an)
    record_claim(tactic_mass_mean=t["mass_mean"],
                 fixed_median_budget=fixed["budget"], fixed_share_below_085=fixed["share_below_threshold"],
                 need_min=s["need"]["min"], need_max=s["need"]["max"], need_median=s["need"]["median"],
                 tactic_bytes_ratio=t["bytes_ratio"],
                 first_token_mass_last_layers=float(_first_token_mass(cap, 32, range(20, 30))), **abl,
                 **{k: v for k, v in ci.items() if k.startswith(("coverage", "token_margin"))})
    assert fixed["share_below_threshold"] >= 0.25  # a fixed budget at the median need misses a large share
    assert t["share_mass_ge_threshold"] >= 0.8  # coverage
    assert abl["tactic_over_exact_total_tokens"] <= 1.3  # and no over-selection to get it (paper: 1,975 / 1,723)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured at 2,048 tokens (30 layers, 32 queries): without the sink rule 51 % of (layer, head, query) cases reach "
    "0.85 (mean mass 0.73, relative output error 0.74, 146 tokens per head), against 81 % with it; the sink rule "
    "alone (the first token and the tokens after the prefill) reaches 0.85 in 26 % (mean mass 0.55). SmolLM2's first "
    "token holds about half of the attention in the later layers; clustered with ordinary keys it is not among the "
    "first clusters read and the 256 sampled keys rarely hold it, so the estimated total leaves its mass out and the "
    "selection stops early: on the ci layers (1,024 tokens, layers 0 / 19 / 29) the first token is missing in 83-85 % "
    "of the failing cases and the sampled total's median there is 0.59-0.87 of the true total."))
def test_paper_algorithm_without_sink_rule_2k_all_layers(full_run, record_claim) -> None:
    _, _, an, s = full_run
    m = s["methods"]
    ci = _intervals(an)
    record_claim(**{k: v for k, v in ci.items() if k.startswith("sink_rule")},
                 no_sink_share_ge_085=m["tactic_no_sink"]["share_mass_ge_threshold"],
                 no_sink_mass_mean=m["tactic_no_sink"]["mass_mean"], no_sink_rel_err=m["tactic_no_sink"]["rel_err_mean"],
                 no_sink_tokens=m["tactic_no_sink"]["tokens_per_head"],
                 sink_rule_share_ge_085=m["tactic"]["share_mass_ge_threshold"],
                 sink_only_share_ge_085=m["sink_only"]["share_mass_ge_threshold"],
                 sink_only_mass_mean=m["sink_only"]["mass_mean"])
    assert m["tactic_no_sink"]["share_mass_ge_threshold"] >= 0.8


def _first_token_mass(cap, n_queries, layers):
    from backend.tokens.tactic.sparse_attention import attention_weights

    out = []
    for layer in layers:
        c = cap[layer]
        t = c["k"].shape[1]
        pos = torch.arange(t - n_queries, t)
        w = attention_weights(c["q"][:, t - n_queries:].transpose(0, 1), c["k"], pos)
        out.append(w[..., 0].mean())
    return torch.stack(out).mean()


@pytest.fixture(scope="module")
def full_runs(smollm2, full_run):
    return {"pydoc": full_run, "license": _analysis(smollm2, 2048, list(range(30)), 32, preset="license")}


@pytest.mark.full
@pytest.mark.parametrize("text", ["pydoc", "license"])
def test_tactic_error_below_quest_2k_all_layers(full_runs, text, record_claim) -> None:
    _, _, an, s = full_runs[text]
    m = s["methods"]
    ci = _intervals(an)
    record_claim(**{k: v for k, v in ci.items() if k.startswith("err_gain")},
                 tactic_rel_err=m["tactic"]["rel_err_mean"], quest_rel_err=m["quest"]["rel_err_mean"],
                 top_k_rel_err=m["top_k"]["rel_err_mean"], window_rel_err=m["window"]["rel_err_mean"],
                 tactic_tokens=m["tactic"]["tokens_per_head"], quest_tokens=m["quest"]["tokens_per_head"],
                 tactic_tokens_over_oracle=s["tactic_vs_oracle_tokens"]["ratio_of_means"],
                 tactic_tokens_over_oracle_median=s["tactic_vs_oracle_tokens"]["median_ratio"])
    assert m["tactic"]["rel_err_mean"] < m["quest"]["rel_err_mean"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured (token recall, not retrieval): 983 of 1,540 (64 %) (layer, query, KV head, needle token) cases where "
    "the exact top-P set holds a needle token also hold it in Tactic's union; misses in 28 of 30 layers. Tactic takes "
    "whole clusters in q . centroid order until about P x its estimated total (1.4x the exact set's tokens at 2K), so "
    "it reaches about P with other tokens (median mass of the missed groups 0.85) while a needle token that the exact "
    "set holds near the end of its ranking sits in a cluster ranked later; on this prompt 67 % of the cases reach "
    "0.85."))
def test_needle_positions_in_tactic_union_2k(smollm2, record_claim) -> None:
    from backend.tokens.tactic.evaluation import needle_recall

    prompt, _, an, _ = _analysis(smollm2, 2048, list(range(30)), 16, preset="needle", keep=True)
    got = needle_recall(an, prompt.needle)
    idx = torch.as_tensor(list(prompt.needle))
    held = an.masks["oracle_top_p"][..., idx]  # (L, Q, Hkv, needle tokens): per layer, cases and hits
    cases_l = held.flatten(1).sum(-1).double().numpy()
    found_l = (held & an.masks["tactic"][..., idx]).flatten(1).sum(-1).double().numpy()
    ci = paired_bootstrap(lambda f, c: f.sum() / max(c.sum(), 1.0), found_l, cases_l)  # layers resampled
    record_claim(needle_cases=got["cases"], needle_found=got["found"], needle_recall=got["recall"],
                 needle_recall_ci=[ci.low, ci.high], needle_recall_layers=ci.n)
    assert got["cases"] > 0
    assert got["found"] == got["cases"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured on the last 256 tokens of 4,096 (all 30 layers): dense 6.459; Tactic 7.037 (+8.9 %) at 20.4 % of the "
    "KV bytes (bytes bound met, perplexity bound missed); Quest 9.457 (+46.4 %) at 19.3 %; exact top-k at Tactic's "
    "tokens 6.578 (+1.8 %) at 15.3 %; window 13.99 at 9.3 %. Exact top-k with the same token counts stays within "
    "2 %, so the loss is Tactic's selection, not its budget: the sampled total falls short in the cases that end "
    "below 0.85 (19 % at 2K) and whole clusters of similar keys are dropped; over 30 layers and 256 positions these "
    "errors compound."))
def test_perplexity_last_256_of_4k_within_2_percent(smollm2, record_claim) -> None:
    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.model import sparse_perplexity

    prompt = te.text_prompt(smollm2.tokenizer, te.builtin_text(), 4097, "built-in", 4097)
    res = sparse_perplexity(smollm2, prompt.ids, ["tactic", "quest", "top_k", "window"], p=0.9, n_last=256)
    m = res["methods"]
    # per position, Tactic's NLL minus dense: a moving-block bootstrap interval (neighbouring tokens are dependent)
    gap = block_bootstrap_mean(np.subtract(m["tactic"]["token_nll"], res["dense"]["token_nll"]), 16)
    record_claim(dense=res["dense"]["perplexity"], **{f"{k}_ppl": v["perplexity"] for k, v in m.items()},
                 **{f"{k}_bytes_ratio": v["bytes_ratio"] for k, v in m.items()},
                 nll_gap_over_dense=gap.mean, nll_gap_over_dense_ci=[gap.low, gap.high],
                 nll_gap_over_dense_pairs=gap.n, nll_gap_bound=math.log(1.02))
    assert m["tactic"]["ppl_ratio"] <= 1.02
    assert m["tactic"]["bytes_ratio"] <= 0.5


# SmolLM2's sparsity at 32,768 tokens: benchmarks/tactic.py measures the exact top-P need of all 270 (layer, head)
# pairs at 1K-8K on an 8,192-token Python-docs prompt and extrapolates a power law per pair; these are the means of
# the 9 equal groups of the sorted needs at 32K (their mean is the model's mean, 516 tokens). An input of the test,
# measured there (the 8K capture takes minutes), not a result of it.
NEEDS_32K = (3.0, 12.0, 27.0, 54.0, 81.0, 119.0, 240.0, 501.0, 3605.0)


def test_decode_step_reads_under_half_the_bytes_at_32k(ci_run, record_claim) -> None:
    """The decode step that reads only what it selects (``decode.decode_step``), at 32,768 tokens: keys and values
    Gaussian like layer 19's real ones (``longctx.synthetic_cache``), layer 19's 9 real query heads scaled so that
    their exact needs are ``NEEDS_32K``. The bytes it reads (centroids, sampled keys, the K and V rows of each head's
    clusters, sinks) against full attention's; the time ratio is measured in benchmarks/tactic.py, never here."""
    from backend.tokens.tactic.decode import build_layout, decode_step, full_bytes, full_step
    from backend.tokens.tactic.longctx import calibrate, synthetic_cache
    from backend.tokens.tactic.sparse_attention import TacticConfig

    _, cap, _, _ = ci_run
    t = 32768
    k, v = synthetic_cache(cap[19]["k"], cap[19]["v"], t, seed=0)
    q, got = calibrate(cap[19]["q"][:, -1], k, torch.tensor(NEEDS_32K), 0.9, iters=30)
    lay = build_layout(k, v, t - 1, TacticConfig())
    r = decode_step(q, lay, k[:, t - 1:], v[:, t - 1:])
    ratio = r.bytes / full_bytes(k)
    z = torch.einsum("hd,htd->ht", q, k.repeat_interleave(3, 0)) / 8.0
    mass = r.mass / torch.exp(z - r.shift[:, None]).sum(-1)
    exact = full_step(q, k, v)
    record_claim(bytes_ratio=ratio, tokens_read_mean=float(r.tokens.double().mean()),
                 need_mean=float(got.double().mean()), mass_mean=float(mass.mean()),
                 rel_err_mean=float(((r.out - exact).norm(dim=-1) / exact.norm(dim=-1)).mean()))
    assert ratio <= 0.5


def _benchmark_speed() -> dict[int, float]:
    """Context length -> full / Tactic decode-attention time (median of paired step ratios) from section 3 of
    benchmarks/results/tactic.md."""
    from tests.bench_tables import keyed_rows

    return {n: float(r[0].strip("*").rstrip("x")) for n, r in keyed_rows("tactic", "## 3.").items()}


def test_claim_decode_speed_from_the_benchmark(record_claim) -> None:
    """The paper's speed-up read from the benchmark's recorded ratios (never timed here): faster than full attention
    from 32K tokens on and at least 2x at 64K (the paper: 5.14x at long context on GPU)."""
    r = _benchmark_speed()
    record_claim(ratio_16k=r[16384], ratio_32k=r[32768], ratio_64k=r[65536], ratio_128k=r[131072])
    assert r[32768] > 1.0 and r[131072] > 1.0
    assert r[65536] >= 2.0
