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

import pytest
import torch

from backend.errors import InputError

CI_LAYERS = [0, 9, 19, 29]


@pytest.fixture(scope="module")
def smollm2():
    from backend.models import load

    return load("smollm2")


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
    "1,024 tokens is below the claim's >= 2K contexts: measured 74 % of (layer, head, query) cases >= 0.85 (layers "
    "0 / 9 / 19 / 29: 82 / 82 / 72 / 60 %). The paper's 2.5 % sample is 25 tokens here, so each fit segment (10 % "
    "and 60 % ranks) averages 2-3 scores; the failing cases underestimate the total mass (median estimate 0.81 of "
    "the true total), so Tactic stops early. At 2,048 tokens the same layers reach 88-92 % (full tier)."))
def test_tactic_mass_success_ci_subset(ci_run, record_claim) -> None:
    from backend.tokens.tactic.evaluation import fixed_median_budget

    _, cap, an, s = ci_run
    t = s["methods"]["tactic"]
    fixed = fixed_median_budget(cap, an)
    record_claim(tactic_share_ge_085=t["share_mass_ge_threshold"], tactic_mass_mean=t["mass_mean"],
                 fixed_median_budget=fixed["budget"], fixed_share_below_085=fixed["share_below_threshold"],
                 need_min=s["need"]["min"], need_max=s["need"]["max"],
                 tactic_tokens_over_oracle=s["tactic_vs_oracle_tokens"]["ratio_of_means"],
                 tactic_bytes_ratio=t["bytes_ratio"])
    assert t["share_mass_ge_threshold"] >= 0.8
    assert s["methods"]["oracle_top_p"]["share_mass_ge_p"] == 1.0


@pytest.mark.xfail(strict=True, reason=(
    "1,024 tokens: Tactic's mean relative output error 0.095 vs Quest's 0.041 at equal tokens (layers 0 / 9 / 19 / "
    "29: 0.105 / 0.076 / 0.093 / 0.108 vs 0.027 / 0.014 / 0.054 / 0.067). At this length reaching P = 0.9 takes "
    "24-88 % of the context (880 of 1,008 tokens per head in layer 0), so Quest's pages at the same budget hold "
    "nearly all the mass, while Tactic stops at about P and drops whole clusters of similar keys (a correlated "
    "error). At 2,048 tokens the same layers give 0.103 vs 0.244 (full tier): the claim is about long contexts."))
def test_tactic_error_below_quest_at_equal_tokens_ci_subset(ci_run, record_claim) -> None:
    _, _, an, s = ci_run
    m = s["methods"]
    tt, qt = an.cases["tactic"]["tokens"].double(), an.cases["quest"]["tokens"].double()
    record_claim(tactic_rel_err=m["tactic"]["rel_err_mean"], quest_rel_err=m["quest"]["rel_err_mean"],
                 top_k_rel_err=m["top_k"]["rel_err_mean"], window_rel_err=m["window"]["rel_err_mean"],
                 tactic_tokens=float(tt.mean()), quest_tokens=float(qt.mean()))
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
    record_claim(tactic_share_ge_085=t["share_mass_ge_threshold"], tactic_mass_mean=t["mass_mean"],
                 fixed_median_budget=fixed["budget"], fixed_share_below_085=fixed["share_below_threshold"],
                 need_min=s["need"]["min"], need_max=s["need"]["max"], need_median=s["need"]["median"],
                 tactic_bytes_ratio=t["bytes_ratio"],
                 first_token_mass_last_layers=float(_first_token_mass(cap, 32, range(20, 30))))
    assert t["share_mass_ge_threshold"] >= 0.8
    assert fixed["share_below_threshold"] >= 0.25  # a fixed budget at the median need misses a large share


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


@pytest.mark.full
def test_tactic_error_below_quest_2k_all_layers(full_run, record_claim) -> None:
    _, _, _, s = full_run
    m = s["methods"]
    record_claim(tactic_rel_err=m["tactic"]["rel_err_mean"], quest_rel_err=m["quest"]["rel_err_mean"],
                 top_k_rel_err=m["top_k"]["rel_err_mean"], window_rel_err=m["window"]["rel_err_mean"],
                 tactic_tokens=m["tactic"]["tokens_per_head"], quest_tokens=m["quest"]["tokens_per_head"],
                 tactic_tokens_over_oracle=s["tactic_vs_oracle_tokens"]["ratio_of_means"],
                 tactic_tokens_over_oracle_median=s["tactic_vs_oracle_tokens"]["median_ratio"])
    assert m["tactic"]["rel_err_mean"] < m["quest"]["rel_err_mean"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured: 1,185 of 1,540 (77 %) (layer, KV head, query) cases where the exact top-P set holds a needle token "
    "also hold it in Tactic's union (78 of 88 where the needle has >= 5 % of the group's attention; misses in 27 of "
    "30 layers). In the missed cases Tactic's realised mass has median 0.73, below P: the total estimated from the "
    "51 sampled scores fell short, or the needle's cluster ranked late by q . centroid, so Tactic stopped before "
    "reaching it; the estimate's misses (the 14 % of cases below 0.85 in the 2K run) carry the needle with them."))
def test_needle_positions_in_tactic_union_2k(smollm2, record_claim) -> None:
    from backend.tokens.tactic.evaluation import needle_recall

    prompt, _, an, _ = _analysis(smollm2, 2048, list(range(30)), 16, preset="needle", keep=True)
    got = needle_recall(an, prompt.needle)
    record_claim(needle_cases=got["cases"], needle_found=got["found"], needle_recall=got["recall"])
    assert got["cases"] > 0
    assert got["found"] == got["cases"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured on the last 256 tokens of 4,096 (all 30 layers): dense 6.459; Tactic 6.949 (+7.6 %) at 23.8 % of the "
    "KV bytes (bytes bound met, perplexity bound missed); Quest 8.261 (+27.9 %) at 22.7 %; exact top-k at Tactic's "
    "tokens 6.549 (+1.4 %) at 19.0 %; window 13.03 at 12.1 %. Exact top-k with the same token counts stays within "
    "2 %, so the loss is Tactic's selection, not its budget: the sampled total-mass estimate falls short in the "
    "cases that end below 0.85 (14 % at 2K) and drops whole clusters of similar keys; over 30 layers and 256 "
    "positions these errors compound. On 1,024 tokens (last 128) Tactic stays within 0.6 % of dense."))
def test_perplexity_last_256_of_4k_within_2_percent(smollm2, record_claim) -> None:
    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.model import sparse_perplexity

    prompt = te.text_prompt(smollm2.tokenizer, te.builtin_text(), 4097, "built-in", 4097)
    res = sparse_perplexity(smollm2, prompt.ids, ["tactic", "quest", "top_k", "window"], p=0.9, n_last=256)
    m = res["methods"]
    record_claim(dense=res["dense"]["perplexity"], **{f"{k}_ppl": v["perplexity"] for k, v in m.items()},
                 **{f"{k}_bytes_ratio": v["bytes_ratio"] for k, v in m.items()})
    assert m["tactic"]["ppl_ratio"] <= 1.02
    assert m["tactic"]["bytes_ratio"] <= 0.5
