"""D2F's decoders on a small random model: the pipeline's block states, its cache (equal to a cache-free run of the
same schedule), the forced progress of fully active blocks, and the baselines' pass counts."""

from __future__ import annotations

import pytest
import torch

from backend.errors import InputError
from backend.reasoning.d2f import decode as d2f
from backend.reasoning.d2f.diffusion_lm import DiffusionLM, DiffusionLMConfig

MASK, EOS = 48, 49


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return DiffusionLM(DiffusionLMConfig(vocab_size=50, n_layer=2, hidden=48, n_head=3, intermediate=96,
                                         max_positions=160)).eval()


def test_forced_progress_one_token_per_pass_when_nothing_is_confident(model):
    res = d2f.d2f_decode(model, list(range(8)), MASK, 10_000, d2f.D2FConfig(block=8, tau_conf=1.0, tau_add=1.0,
                                                                            max_new=32))
    # tau_add = 1: one block at a time; tau_conf = 1: exactly one token per pass (plus the prompt pass and one
    # caching pass per block boundary)
    assert len(res.tokens) == 32
    assert len(set(res.decoded_at)) == 32  # one position per pass
    per_block = [res.decoded_at[i : i + 8] for i in range(0, 32, 8)]
    assert all(max(a) < min(b) for a, b in zip(per_block, per_block[1:], strict=False))  # one block at a time
    assert MASK not in res.tokens
    assert res.forward_passes >= 33


def test_pipeline_runs_several_blocks_and_states_progress(model):
    res = d2f.d2f_decode(model, list(range(8)), MASK, 10_000, d2f.D2FConfig(block=8, tau_conf=1.0, tau_add=0.1,
                                                                            tau_act=0.5, max_new=32))
    assert len(res.tokens) == 32 and MASK not in res.tokens
    assert max(sum(s in ("semi", "full") for s in st) for st in res.states) >= 2  # blocks in flight together
    order = {"semi": 0, "full": 1, "done": 2, "cached": 3}
    for a, b in zip(res.states, res.states[1:], strict=False):
        for x, y in zip(a, b, strict=False):
            assert order[y] >= order[x]
    assert res.states[-1][0] == "cached"


def test_zero_confidence_threshold_fills_a_block_per_pass(model):
    res = d2f.d2f_decode(model, list(range(8)), MASK, 10_000, d2f.D2FConfig(block=8, tau_conf=0.0, max_new=32))
    assert len(res.tokens) == 32
    assert res.forward_passes <= 1 + 2 * 4 + 1


def test_baselines_pass_counts(model):
    v = d2f.vanilla_decode(model, list(range(8)), MASK, 10_000, length=32, steps=8)
    assert v.forward_passes == 8 and len(v.tokens) == 32 and MASK not in v.tokens
    t = d2f.threshold_decode(model, list(range(8)), MASK, 10_000, length=32, tau_conf=1.0)
    assert t.forward_passes == 32
    with pytest.raises(InputError):
        d2f.vanilla_decode(model, [1], MASK, EOS, length=8, steps=9)
    with pytest.raises(InputError):
        d2f.d2f_decode(model, [1], MASK, EOS, d2f.D2FConfig(tau_conf=1.5))


def test_semi_ar_vanilla_decodes_blocks_left_to_right(model):
    v = d2f.vanilla_decode(model, list(range(8)), MASK, 10_000, length=32, steps=12, block=8)
    assert v.forward_passes == 12 and len(v.tokens) == 32 and MASK not in v.tokens
    at = v.grid_at
    for b in range(3):  # every position of block b is filled before any of block b + 1
        assert max(at[8 * b: 8 * b + 8]) < min(at[8 * b + 8: 8 * b + 16])
    assert sorted({a for a in at[:8]}) == [0, 1, 2]  # 12 steps over 4 blocks: 3 passes of 3, 3 and 2 tokens
    assert [at[:8].count(s) for s in range(3)] == [3, 3, 2]
    g = d2f.vanilla_decode(model, list(range(8)), MASK, 10_000, length=32, steps=32, block=None)
    assert g.forward_passes == 32
    with pytest.raises(InputError):
        d2f.vanilla_decode(model, [1], MASK, EOS, length=32, steps=3, block=8)  # fewer steps than blocks


def test_cache_is_exact_same_tokens_as_full_recompute(model):
    cfg = d2f.D2FConfig(block=8, tau_conf=0.02, tau_add=0.3, tau_act=0.6, max_new=40)
    a = d2f.d2f_decode(model, list(range(10)), MASK, 10_000, cfg)
    b = d2f.d2f_decode(model, list(range(10)), MASK, 10_000, cfg, use_cache=False)
    assert a.tokens == b.tokens and a.decoded_at == b.decoded_at and a.forward_passes == b.forward_passes


def test_training_script_smoke_and_decoding_a_real_prompt(tmp_path):
    from backend.models.tinyreasoner import TinyTokenizer, prompt_text
    from backend.reasoning.d2f.diffusion_lm import load_diffusion_lm
    from backend.train import d2f as train

    assert train.main(["--teacher-steps", "2", "--student-steps", "2", "--batch", "2", "--out-dir", str(tmp_path)]) == 0
    student, extra = load_diffusion_lm(tmp_path / "d2f_student.safetensors")
    teacher, _ = load_diffusion_lm(tmp_path / "d2f_teacher.safetensors")
    tok = TinyTokenizer(extra["vocab"])
    prompt = tok.encode(prompt_text("Compute 2 + 3.") + " <think>", bos=True)
    res = d2f.d2f_decode(student, prompt, tok.index["<mask>"], tok.eos_token_id, d2f.D2FConfig(max_new=32))
    assert res.forward_passes >= 2 and tok.index["<mask>"] not in res.tokens
    v = d2f.vanilla_decode(teacher, prompt, tok.index["<mask>"], tok.eos_token_id, length=32, steps=4)
    assert v.forward_passes == 4
    # distilling from a teacher written before writes the student only, and the same student as the full run
    other = tmp_path / "again"
    assert train.main(["--teacher", str(tmp_path / "d2f_teacher.safetensors"), "--student-steps", "2", "--batch", "2",
                       "--out-dir", str(other)]) == 0
    assert not (other / "d2f_teacher.safetensors").exists()
    again, _ = load_diffusion_lm(other / "d2f_student.safetensors")
    for (k, x), y in zip(student.state_dict().items(), again.state_dict().values(), strict=True):
        assert torch.equal(x, y), k


def test_ar_baseline_runs_the_reasoner_through_the_same_module() -> None:
    """The AR baseline decodes the tiny reasoner's weights through D2F's own module and KV cache (so the speed
    comparison shares one code path) and gives exactly the transformers model's greedy tokens and passes."""
    from backend.models.tinyreasoner import load_tinyreasoner
    from backend.reasoning.d2f.evaluate import ar_decode, load_models, prompt_ids
    from backend.reasoning.sampling import greedy
    from backend.reasoning.tasks import generate

    models = load_models()
    reasoner = load_tinyreasoner()
    for p in generate(3, "train", seed=5, steps=(1, 3)):
        ids = prompt_ids(models.tokenizer, p.question, diffusion=False)
        lean = ar_decode(models.ar, ids, models.eos_id, models.length)
        ref = greedy(reasoner, ids, models.length)
        tokens = ref.tokens(0, 0)
        if ref.finish_reason[0][0] == "eos":
            tokens = tokens[:-1]
        assert lean.tokens == tokens
        assert lean.forward_passes == ref.forward_passes
