"""The sampling engine (backend/reasoning/sampling.py): at temperature 0 it gives token for token what a plain cached
greedy loop gives (tiny reasoner on task problems, SmolLM2 on two short prompts); it is deterministic for a seed;
top-k 1 is greedy; top-p keeps the smallest set of mass >= p; its log-probs, entropies and hidden states equal a full
forward pass; N batched samples equal N separate calls; stop strings cut; the KV cache changes nothing; bad input is
an InputError."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.reasoning import sampling as S
from backend.reasoning import tasks


@pytest.fixture(scope="module")
def reasoner():
    from backend.models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


@pytest.fixture(scope="module")
def questions(reasoner):
    """Six held-out problems, the first two of different prompt lengths (so that their batch is left-padded)."""
    qs = [p.question for p in tasks.generate(6, "heldout", seed=0)]
    other = next(q for q in qs if len(reasoner.prompt_ids(q)) != len(reasoner.prompt_ids(qs[0])))
    return [qs[0], other] + [q for q in qs[1:] if q != other]


def reference_greedy(model, prompt: list[int], max_new: int, eos: set[int], max_positions: int):
    """A plain greedy loop with a KV cache (the reference): the tokens up to an end token (left out) and the forward
    passes it would need without feeding back a last token that ends on the budget."""
    out: list[int] = []
    room = min(max_new, max_positions - len(prompt))
    with torch.inference_mode():
        res = model(input_ids=torch.tensor([prompt]), use_cache=True)
        passes = 1
        for _ in range(max(0, room)):
            nxt = int(res.logits[0, -1].argmax())
            if nxt in eos:
                break
            out.append(nxt)
            res = model(input_ids=torch.tensor([[nxt]]), cache=res.cache, use_cache=True)
            passes += 1
        else:
            passes -= 1
    return out, passes


def full_forward(model, prompt: list[int], generated: list[int], layer: int | None = None):
    """Log-softmax [T, V] at the generated tokens' positions (and the hidden states of ``layer`` at them), one pass."""
    ids = torch.tensor([prompt + generated])
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=layer is not None)
    logp = torch.log_softmax(out.logits[0].float(), -1)[len(prompt) - 1: len(prompt) - 1 + len(generated)]
    hidden = out.hidden_states[layer][0, len(prompt): len(prompt) + len(generated)] if layer is not None else None
    return logp, hidden


def test_greedy_equals_the_plain_loop_on_task_problems(reasoner, questions):
    lm = S.adapter(reasoner)
    for q in questions:
        prompt = lm.prompt_ids(q)
        ref, passes = reference_greedy(reasoner.model, prompt, 160, lm.eos_ids, lm.max_positions)
        res = S.greedy(reasoner, prompt, 160)
        toks = res.tokens(0, 0)
        assert toks[: len(ref)] == ref and len(toks) - len(ref) == int(res.finish_reason[0][0] == "eos")
        assert res.forward_passes == passes
        assert res.text[0][0] == reasoner.tokenizer.decode(ref, skip_special=True) == reasoner.generate(q, 160)


def test_greedy_is_the_argmax_of_a_full_forward_pass_and_logprobs_match(reasoner, questions):
    prompts = questions[:2]
    res = S.sample(reasoner, prompts, S.SamplingConfig(n=1, max_new_tokens=40, temperature=0.0))
    assert res.meta["padded"]  # two prompt lengths: the batch is left-padded
    for b in range(2):
        toks = res.tokens(b, 0)
        logp, _ = full_forward(reasoner.model, res.prompt_ids[b], toks)
        assert logp.argmax(-1).tolist() == toks
        assert torch.allclose(res.logprobs[b, 0, : len(toks)], logp.gather(1, torch.tensor(toks)[:, None])[:, 0],
                              atol=1e-5)
        ent = -(logp.exp() * logp).sum(-1)
        assert torch.allclose(res.entropies[b, 0, : len(toks)], ent, atol=1e-5)
        assert (res.sample_logprobs[b, 0] == 0).all()


def test_sampled_logprobs_entropies_and_hidden_states_equal_a_full_forward_pass(reasoner, questions):
    cfg = S.SamplingConfig(n=3, max_new_tokens=30, temperature=1.0, hidden_layer=2)
    res = S.sample(reasoner, questions[:2], cfg, seed=3)
    for b in range(2):
        for i in range(3):
            toks = res.tokens(b, i)
            logp, hid = full_forward(reasoner.model, res.prompt_ids[b], toks, layer=2)
            lp = logp.gather(1, torch.tensor(toks)[:, None])[:, 0]
            assert torch.allclose(res.logprobs[b, i, : len(toks)], lp, atol=1e-5)
            assert torch.allclose(res.entropies[b, i, : len(toks)], -(logp.exp() * logp).sum(-1), atol=1e-5)
            assert res.hidden_positions[b][i] == list(range(len(toks)))
            assert torch.allclose(res.hidden[b][i], hid.float(), atol=1e-4)
            assert (res.logprobs[b, i, len(toks):] == 0).all()


def test_step_boundary_hidden_states(reasoner, questions):
    cfg = S.SamplingConfig(n=1, max_new_tokens=60, temperature=0.0, hidden_layer=-1, hidden_at="boundaries",
                           boundaries=(";",))
    res = S.sample(reasoner, questions[2:3], cfg)
    toks, pos = res.tokens(0, 0), res.hidden_positions[0][0]
    lm = S.adapter(reasoner)
    ends = [t for t in range(len(toks)) if lm.decode(toks[: t + 1]).count(";") > lm.decode(toks[:t]).count(";")]
    assert ends and pos == [*ends, len(toks) - 1]
    _, hid = full_forward(reasoner.model, res.prompt_ids[0], toks, layer=-1)
    assert torch.allclose(res.hidden[0][0], hid[pos], atol=1e-4)


def test_seed_determinism_and_top_k_one_is_greedy(reasoner, questions):
    cfg = S.SamplingConfig(n=4, max_new_tokens=24, temperature=1.2, top_p=0.95)
    a = S.sample(reasoner, questions[:2], cfg, seed=7)
    b = S.sample(reasoner, questions[:2], cfg, seed=7)
    c = S.sample(reasoner, questions[:2], cfg, seed=8)
    assert torch.equal(a.token_ids, b.token_ids) and torch.equal(a.logprobs, b.logprobs) and a.text == b.text
    assert not torch.equal(a.token_ids, c.token_ids)
    g = S.sample(reasoner, questions[:2], S.SamplingConfig(n=1, max_new_tokens=24, temperature=0.0))
    k1 = S.sample(reasoner, questions[:2], S.SamplingConfig(n=3, max_new_tokens=24, temperature=1.5, top_k=1), seed=1)
    for b_ in range(2):
        for i in range(3):
            assert k1.tokens(b_, i) == g.tokens(b_, 0)
    assert torch.allclose(k1.sample_logprobs, torch.zeros_like(k1.sample_logprobs))


def test_batched_samples_equal_separate_seeded_calls(reasoner, questions):
    cfg = S.SamplingConfig(n=4, max_new_tokens=24, temperature=1.0)
    batch = S.sample(reasoner, questions[:2], cfg, seed=11)
    one = replace(cfg, n=1)
    for b in range(2):
        for i in range(4):
            alone = S.sample(reasoner, [questions[b]], one, seed=11, first_sample=i)
            assert alone.tokens(0, 0) == batch.tokens(b, i)
            n = len(alone.tokens(0, 0))
            assert torch.allclose(alone.logprobs[0, 0, :n], batch.logprobs[b, i, :n], atol=1e-5)
    later = S.sample(reasoner, questions[:2], replace(cfg, n=2), seed=11, first_sample=2)
    assert later.text[1] == batch.text[1][2:]


def test_kv_cache_equals_recomputing(reasoner, questions):
    for cfg in (S.SamplingConfig(n=1, max_new_tokens=20, temperature=0.0),
                S.SamplingConfig(n=2, max_new_tokens=20, temperature=1.0, top_k=20)):
        a = S.sample(reasoner, questions[:2], cfg, seed=2)
        b = S.sample(reasoner, questions[:2], replace(cfg, kv_cache=False), seed=2)
        assert torch.equal(a.token_ids, b.token_ids)
        assert torch.allclose(a.logprobs, b.logprobs, atol=1e-5)


def test_stop_strings_cut(reasoner, questions):
    full = S.sample(reasoner, questions[:1], S.SamplingConfig(n=1, max_new_tokens=80, temperature=0.0))
    cut = S.sample(reasoner, questions[:1], S.SamplingConfig(n=1, max_new_tokens=80, temperature=0.0, stop=(" ; ",)))
    text = full.text[0][0]
    assert " ; " in text
    assert cut.finish_reason[0][0] == "stop" and bool(cut.finished[0, 0])
    assert cut.text[0][0] == text[: text.index(" ; ") + 3]
    assert full.tokens(0, 0)[: int(cut.lengths[0, 0])] == cut.tokens(0, 0)
    lm = S.adapter(reasoner)
    assert " ; " not in lm.decode(cut.tokens(0, 0)[:-1])


def test_choose_top_p_keeps_the_smallest_set_with_mass_p():
    probs = torch.tensor([[0.05, 0.5, 0.15, 0.3]], dtype=torch.float64)
    logits = probs.log().float()
    u = np.linspace(0.0, 0.999999, 2001)
    for p, kept in ((0.8, {1, 3}), (0.81, {1, 3, 2}), (0.5, {1}), (0.49, {1}), (1.0, {0, 1, 2, 3})):
        cfg = S.SamplingConfig(temperature=1.0, top_p=p)
        tok, lp = S.choose(logits.expand(len(u), 4), cfg, u)
        assert set(tok.tolist()) == kept
        mass = sum(float(probs[0, k]) for k in kept)
        for t, v in zip(tok.tolist(), lp.tolist(), strict=True):
            assert math.isclose(v, math.log(float(probs[0, t]) / mass), abs_tol=1e-6)
        # the draw follows the renormalised kept distribution
        freq = np.bincount(tok.numpy(), minlength=4) / len(u)
        for k in kept:
            assert abs(freq[k] - float(probs[0, k]) / mass) < 2e-3
    tok, _ = S.choose(logits.expand(len(u), 4), S.SamplingConfig(temperature=1.0, top_k=2), u)
    assert set(tok.tolist()) == {1, 3}


def test_stream_uniforms_are_uniform_and_keyed():
    keys = S.stream_keys(0, [1, 2, 3], 0, 4)
    assert len(set(keys.tolist())) == 4 and not np.array_equal(keys, S.stream_keys(1, [1, 2, 3], 0, 4))
    assert np.array_equal(S.stream_keys(0, [1, 2, 3], 2, 2), keys[2:])
    u = np.concatenate([S.stream_uniforms(keys, t) for t in range(2500)])
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01
    assert np.histogram(u, bins=10, range=(0, 1))[0].min() > 900


@pytest.mark.parametrize("kwargs, words", [
    ({"n": 0}, "number of samples"), ({"n": 257}, "number of samples"), ({"n": 2.5}, "number of samples"),
    ({"max_new_tokens": 0}, "token budget"), ({"max_new_tokens": 5000}, "token budget"),
    ({"temperature": -0.1}, "temperature"), ({"temperature": float("nan")}, "temperature"),
    ({"temperature": 6}, "temperature"), ({"top_p": 0.0}, "top_p"), ({"top_p": 1.5}, "top_p"),
    ({"top_k": -1}, "top_k"), ({"stop": ("",)}, "stop string"), ({"stop": "abc"}, "list of strings"),
    ({"stop": tuple("abcdefghijklmnopq")}, "At most 16"), ({"hidden_at": "middle"}, "hidden_at"),
])
def test_config_refuses_out_of_range_values(kwargs, words):
    with pytest.raises(InputError, match=words):
        S.SamplingConfig(**kwargs)


def test_bad_prompts_are_input_errors(reasoner):
    cfg = S.SamplingConfig(n=1, max_new_tokens=4, temperature=0.0)
    for prompts, words in (([""], "empty"), (["   "], "empty"), (["x" * 5000], "characters"),
                           ([b"Compute \xff 3."], "UTF-8"), ([[]], "no tokens"), ([[10**9]], "outside the vocabulary"),
                           ([[1] * (reasoner.config.max_positions + 4)], "positions"), ("Compute 1 + 2.", "as a list"),
                           ([], "1 to"),
                           ([3.5], "question")):
        with pytest.raises(InputError, match=words):
            S.sample(reasoner, prompts, cfg)
    with pytest.raises(InputError, match="seed"):
        S.sample(reasoner, ["Compute 1 + 2."], cfg, seed=-1)
    with pytest.raises(InputError, match="limit"):
        S.sample(reasoner, ["Compute 1 + 2."] * 9, replace(cfg, n=256))
    with pytest.raises(InputError, match="does not exist"):
        S.sample(reasoner, ["Compute 1 + 2."], replace(cfg, hidden_layer=9))
    with pytest.raises(InputError, match="Cannot sample"):
        S.sample(object(), ["Compute 1 + 2."], cfg)
    assert S.sample(reasoner, [b"Compute 1 + 2."], cfg).text == S.sample(reasoner, ["Compute 1 + 2."], cfg).text


def test_smollm2_greedy_equals_the_plain_loop_and_padded_batches(tmp_path):
    from backend.models.lm import load_causal_lm

    lm = load_causal_lm()
    ad = S.adapter(lm)
    prompts = ["What is 2 + 3?", "Name a colour of the sky on a clear day."]
    res = S.sample(lm, prompts, S.SamplingConfig(n=1, max_new_tokens=10, temperature=0.0))
    assert res.meta["padded"]
    for b, q in enumerate(prompts):
        ids = ad.prompt_ids(q)
        ref, _ = reference_greedy(lm.model, ids, 10, ad.eos_ids, ad.max_positions)
        alone = S.greedy(lm, q, 10)
        assert alone.tokens(0, 0)[: len(ref)] == ref == res.tokens(b, 0)[: len(ref)]
        assert alone.text[0][0].strip() == lm.generate(q, max_new_tokens=10)
        logp, _ = full_forward(lm.model, ids, res.tokens(b, 0))
        assert torch.allclose(res.logprobs[b, 0, : len(ref)], logp.gather(1, torch.tensor(ref)[:, None])[:, 0],
                              atol=1e-4)


@pytest.mark.full
def test_qwen_coder_greedy_equals_the_plain_loop_and_samples_are_seeded():
    from backend.models import coder

    if not coder.installed():
        pytest.skip("optional model not installed (make models-extra)")
    from backend.reasoning.lm import load_reasoning_lm

    lm = load_reasoning_lm("qwen2.5-coder")
    ad = S.adapter(lm)
    q = "Compute (12 + 5) * 3."
    ids = ad.prompt_ids(q)
    res = S.sample(lm, [q], S.SamplingConfig(n=1, max_new_tokens=8, temperature=0.0))
    ref, _ = reference_greedy(lm.model, ids, 8, ad.eos_ids, ad.max_positions)
    assert res.tokens(0, 0)[: len(ref)] == ref
    cfg = S.SamplingConfig(n=2, max_new_tokens=8, temperature=1.0, top_k=20)
    a, b = S.sample(lm, [q], cfg, seed=3), S.sample(lm, [q], cfg, seed=3)
    assert a.text == b.text and torch.isfinite(a.logprobs[a.mask]).all()
