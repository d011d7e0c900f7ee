"""SwiReasoning's controller on scripted entropy traces: exact switch indices, the window W, the reference reset,
the end-marker lock, and the switch cap's injections at C_max and past 2 C_max (the released code's rules)."""

from __future__ import annotations

import pytest

from backend.reasoning.swireasoning import decoder as sw


def modes(ds):
    return "".join("L" if d.mode == "latent" else "E" for d in ds)


def test_exact_switch_indices_and_reference_resets():
    h = [3, 4, 2, 2.5, 1, 5, 6, 7, 1, 0.5]
    ds = sw.scripted_run(h, window=3)
    assert [(d.step, d.switch) for d in ds if d.switch] == [(2, "to_explicit"), (5, "to_latent"), (8, "to_explicit")]
    assert modes(ds) == "LLEEELLLEE"
    assert [d.reference for d in ds] == [3, 3, 2, 2, 2, 5, 5, 5, 1, 1]
    assert ds[0].feed == "soft+newline" and ds[2].feed == "soft+</think>" and ds[3].feed == "token"


def test_window_blocks_explicit_to_latent_until_w_steps():
    h = [3, 1, 9, 9, 9, 9, 9, 9]
    for w in (1, 2, 4, 6):
        ds = sw.scripted_run(h, window=w)
        back = [d.step for d in ds if d.switch == "to_latent"]
        assert back == [1 + w], (w, back)  # explicit from step 1; the stay counter reaches w at step 1 + w


def test_end_marker_locks_explicit():
    h = [3, 1, 9, 9, 9, 9]
    ds = sw.scripted_run(h, window=1, end_at=1)
    assert modes(ds) == "LEEEEE" and not any(d.switch == "to_latent" for d in ds)


def test_switch_cap_injects_end_marker_then_answer_phrase_and_limits_the_answer():
    # latent -> explicit switches at steps 1, 3, 5, 7 (W = 1): C = 1, 2, 3, 4 with C_max = 2
    h = [5, 1, 9, 1, 9, 1, 9, 1] + [0.5] * 40
    ds = sw.scripted_run(h, window=1, max_switch=2)
    to_exp = [d.step for d in ds if d.switch == "to_explicit"]
    assert to_exp[:4] == [1, 3, 5, 7]
    injected = [(d.step, d.token) for d in ds if d.injected]
    # C = 2 at step 3 -> convergence at step 4; C = 3 (<= 2 C_max) at step 5 -> again at 6; C = 5 > 4 ... see below
    assert (4, -1) in injected and (6, -1) in injected
    # C = 4 at step 7 is still <= 2 C_max: convergence once more; no answer budget yet
    assert (8, -1) in injected
    assert all(d.token not in (-2, -3) for d in ds)
    h2 = [5, 1, 9, 1, 9, 1, 9, 1, 9, 1] + [0.5] * 60
    ds2 = sw.scripted_run(h2, window=1, max_switch=2)
    fifth = [d.step for d in ds2 if d.switch == "to_explicit"][4]
    assert fifth == 9 and ds2[fifth].switches == 5
    assert [d.token for d in ds2[fifth + 1 : fifth + 3]] == [-2, -3]
    # the answer budget of 32 counts the triggering step itself (decremented in the same step, as in the code)
    assert ds2[-1].finished and ds2[-1].step == fifth + 31


def test_no_cap_means_no_injection_and_latent_only_never_switches():
    h = sw.random_trace(200, seed=1)
    assert not any(d.injected for d in sw.scripted_run(h, window=4, max_switch=None))
    ctrl = sw.Controller(4, 200, latent_only=True)
    ds = [ctrl.step(t, x, t, False, False) for t, x in enumerate(h)]
    assert set(modes(ds)) == {"L"}


@pytest.mark.parametrize("seed", range(5))
def test_random_traces_respect_the_window(seed):
    ds = sw.scripted_run(sw.random_trace(300, seed), window=7)
    last = None
    for d in ds:
        if d.switch == "to_latent":
            assert last is not None and d.step - last >= 7
        if d.switch:
            last = d.step


def test_window_scaling_is_labelled_and_bounded():
    assert sw.effective_window(sw.SwiRConfig(budget=256)) == 32
    assert sw.effective_window(sw.SwiRConfig(budget=2048)) == 512
    assert sw.effective_window(sw.SwiRConfig(budget=256, scale_window=False)) == 512


# ------------------------------------------------------------------ the decoders on a randomly initialised tiny LM
@pytest.fixture(scope="module")
def random_lm():
    """A randomly initialised tiny reasoner (2 layers): the decoding machinery without the trained weights."""
    import torch

    from backend.models.tinyreasoner import TinyReasonerConfig, base_vocab, build
    from backend.reasoning.lm import ReasoningLM
    from backend.reasoning.tasks import MARKERS

    torch.manual_seed(0)
    model, tok = build(TinyReasonerConfig(n_layer=2, hidden=64, n_head=2, intermediate=128), base_vocab())
    model.eval()
    return ReasoningLM("tinyreasoner", model, tok, MARKERS["tinyreasoner"], False, "random init")


def test_explicit_decoding_through_embeddings_equals_greedy_token_decoding(random_lm):
    """Every step feeds ``inputs_embeds``; for CoT greedy that must equal plain greedy decoding from token ids."""
    import torch

    q = "Compute 12 + 7."
    tr = sw.decode(random_lm, q, "cot_greedy", sw.SwiRConfig(budget=24))
    ids = random_lm.prompt_ids(q)
    ref = []
    with torch.inference_mode():
        for _ in range(tr.tokens):
            nxt = int(random_lm.model(input_ids=torch.tensor([ids + ref])).logits[0, -1].argmax())
            ref.append(nxt)
            if nxt in random_lm.eos_ids:
                break
    assert [d.token for d in tr.steps] == ref
    assert all(d.mode == "explicit" and d.feed == "token" for d in tr.steps)


def test_latent_steps_feed_the_probability_weighted_embedding(random_lm, monkeypatch):
    import torch

    fed = []
    real = random_lm.model.forward

    def spy(*a, **kw):
        if kw.get("inputs_embeds") is not None:
            fed.append(kw["inputs_embeds"][0, -1].clone())
        out = real(*a, **kw)
        spy.last = out.logits[0, -1].float()
        logits.append(spy.last)
        return out

    logits: list = []
    monkeypatch.setattr(random_lm.model, "forward", spy)
    tr = sw.decode(random_lm, "Compute 3 * 4.", "soft_thinking", sw.SwiRConfig(budget=12, math_explicit=False))
    E = random_lm.embeddings
    nl = random_lm.encode("\n")[-1]
    assert len(fed) == tr.tokens - 1 >= 8
    for i, d in enumerate(tr.steps[: len(fed)]):
        soft = torch.softmax(logits[i], -1) @ E
        want = 0.9 * soft + 0.1 * E[nl] if i == 0 else soft
        assert d.mode == "latent"
        assert torch.allclose(fed[i], want, atol=1e-5)


def test_costs_budget_and_seeds(random_lm):
    for name in sw.DECODERS:
        tr = sw.decode(random_lm, "Compute 5 + 6.", name, sw.SwiRConfig(budget=20), seed=3)
        assert 1 <= tr.tokens <= 20 and tr.forward_passes == tr.tokens and tr.prompt_tokens > 0
        again = sw.decode(random_lm, "Compute 5 + 6.", name, sw.SwiRConfig(budget=20), seed=3)
        assert [d.token for d in again.steps] == [d.token for d in tr.steps]
        s = sw.summarize(tr, random_lm)
        assert len(s["trace"]["entropy"]) == len(s["trace"]["modes"]) == tr.tokens


def test_budget_forcing_injects_the_end_marker(random_lm):
    cfg = sw.SwiRConfig(budget=40)
    at = 40 - sw.answer_reserve(cfg)
    assert at == 30 and 64 - sw.answer_reserve(sw.SwiRConfig(budget=64)) == 48
    assert sw.answer_reserve(sw.SwiRConfig(budget=1024)) == 32
    tr = sw.decode(random_lm, "Compute 5 + 6.", "budget_forced", cfg)
    close = random_lm.encode(" " + random_lm.markers.think_close)
    if random_lm.markers.think_close not in random_lm.decode([d.token for d in tr.steps[:at]]) and tr.tokens > at:
        assert [d.token for d in tr.steps[at : at + len(close)]] == close
        assert tr.steps[at].injected


def test_bad_input_is_refused(random_lm):
    from backend.errors import InputError

    with pytest.raises(InputError, match="empty"):
        sw.decode(random_lm, "  ", "cot_greedy")
    with pytest.raises(InputError, match="1,000"):
        sw.decode(random_lm, "x" * 1001, "cot_greedy")
    with pytest.raises(InputError, match="between 8 and 4096"):
        sw.decode(random_lm, "Compute 1 + 1.", "cot_greedy", sw.SwiRConfig(budget=4))
    with pytest.raises(InputError, match="positions"):
        sw.decode(random_lm, "Compute 1 + 1.", "cot_greedy", sw.SwiRConfig(budget=4000))
    with pytest.raises(InputError, match="Valid names"):
        sw.decode(random_lm, "Compute 1 + 1.", "beam")


def test_pareto_flags():
    rows = [sw.EvalRow("swireasoning", 32, 0.5, 20, 1, 4, 1.0), sw.EvalRow("cot_greedy", 32, 0.5, 30, 1, 4, 1.0),
            sw.EvalRow("swireasoning", 64, 0.7, 40, 1, 4, 1.0), sw.EvalRow("cot_greedy", 64, 0.6, 50, 1, 4, 1.0)]
    assert sw.pareto(rows) == [True, False, True, False]
    t = sw.rows_table(rows)
    assert t[0]["accuracy_per_100_tokens"] == 2.5


def test_cli_refuses_bad_input(capsys):
    from backend.__main__ import main

    for argv in (["--question", "", "--model", "tinyreasoner"], ["--question", "q", "--budget", "5"],
                 ["--question", "q", "--decoder", "beam"], ["--question", "q", "--model", "gpt5"]):
        assert main(["swireasoning", "run", *argv, "--json"]) == 2
    out = capsys.readouterr().out
    assert "tinyreasoner, smollm2, qwen2.5-coder" in out and "Valid names" in out
    from backend.models import coder

    if not coder.installed():
        assert main(["swireasoning", "run", "--model", "qwen2.5-coder", "--question", "q", "--json"]) == 2
        assert "make models-extra" in capsys.readouterr().out


def test_sampling_keeps_only_the_top_k_then_the_nucleus() -> None:
    """Top-k (the released evaluation's 20) is applied before top-p: a token outside the k most likely is never drawn."""
    import torch

    logits = torch.linspace(0.0, 1.0, 50)  # nearly flat: top-p 0.95 alone keeps most of the 50
    gen = torch.Generator().manual_seed(0)
    drawn = {sw._sample(logits, 0.6, 0.95, gen, top_k=20) for _ in range(400)}
    assert drawn <= set(range(30, 50)) and len(drawn) > 10
    assert max(sw._sample(logits, 0.6, 0.95, gen, top_k=0) for _ in range(400)) == 49
    assert min(sw._sample(logits, 0.6, 0.95, gen, top_k=0) for _ in range(400)) < 30


def test_protocols_are_the_released_evaluation_settings() -> None:
    """Accuracy runs uncapped at alpha 0.6, efficiency runs capped at 2 with alpha 0.5; overrides win; a job config
    refuses unknown protocols with the valid names."""
    from backend.errors import InputError
    from backend.reasoning.swireasoning.jobs import DecodeConfig, EvalConfig

    acc, eff = sw.protocol_config("accuracy"), sw.protocol_config("efficiency", budget=32)
    assert (acc.max_switch, acc.alpha0, acc.top_k) == (None, 0.6, 20)
    assert (eff.max_switch, eff.alpha0, eff.budget) == (2, 0.5, 32)
    assert DecodeConfig(budget=32).swir().max_switch is None
    assert DecodeConfig(budget=32, protocol="efficiency", max_switch=0).swir().max_switch is None
    assert EvalConfig(budgets=(32,), protocol="Efficiency", alpha0=0.9).swir().alpha0 == 0.9
    with pytest.raises(InputError, match="accuracy, efficiency"):
        DecodeConfig(protocol="fast")
