"""The tiny VLM of ``illava``: the explicit loops equal the libraries' forwards, the cached evaluation equals one
request at a time, and the headline claim on the shipped projector (ci tier: a fixed subset; full tier: more).

Models load once per session (fixtures). The claim numbers are measured, never stored: the bounds are the claims record's.
"""

from __future__ import annotations

import platform

import pytest
import torch

from backend.errors import InputError
from backend.tokens.illava import scenes
from backend.tokens.illava.evaluation import evaluate, time_prefill
from backend.tokens.illava.patch.llama import LlamaRunner
from backend.tokens.illava.patch.llava import LlavaPatched
from backend.tokens.illava.patch.vit import VitAdapter, run_vit
from backend.tokens.illava.plan import ReductionPlan, plan_for_budget
from backend.tokens.illava.projector import PROJECTOR_FILE
from backend.tokens.illava.tiny_vlm import TinyVLM

CI_SCENES = 36  # held-out scenes 0..35: 210 questions
FULL_SCENES = 200  # 1,154 questions
HEADLINE_KEEP = 1 / 3  # "about two thirds of the visual tokens removed": 171 of 256
# The speed claim compares the fastest of SPEED_REPEATS interleaved runs of each path (reference, iLLaVA, reference,
# ...): the minimum is the run least disturbed by other processes on a shared machine, and interleaving makes load
# changes hit both paths alike. The ratio of medians is reported beside it (``speedup_medians``).
SPEED_REPEATS = 7


@pytest.fixture(scope="session")
def vlm() -> TinyVLM:
    torch.set_num_threads(1)
    return TinyVLM.load()


@pytest.fixture(scope="session")
def scene() -> scenes.Scene:
    return scenes.make_scene(scenes.HELDOUT_SEED0 + 7)


# ----------------------------------------------------------------------------------------------- loop equivalence
def test_dinov2_loop_equals_library_forward(vlm, scene):
    px = vlm.pixels([scene.pil()])
    with torch.inference_mode():
        ref = vlm.vision.model(pixel_values=px).last_hidden_state
    run = run_vit(vlm.adapter, px)
    torch.testing.assert_close(run.tokens, ref, atol=1e-5, rtol=0)
    assert run.tokens_per_layer == [257] * 13


def test_llm_loop_equals_library_forward_and_cache_equals_single(vlm, scene):
    px = vlm.pixels([scene.pil()])
    q = scene.questions[0].text
    ref = vlm.reference_prefill(px, q)
    ours, _, _ = vlm.prefill(px, q)
    torch.testing.assert_close(ours, ref, atol=1e-4, rtol=0)
    plan = plan_for_budget("illava_code", HEADLINE_KEEP)
    qs = [qq.text for qq in scene.questions[:3]]
    single = torch.stack([vlm.prefill(px, q, plan)[0] for q in qs])
    emb, src, _ = vlm.encode(px, plan)
    cache = vlm.runner.prefix_cache(torch.cat([vlm.prefix_emb, emb], 1), upto=min(plan.llm_steps()))
    qe, lens = vlm.question_embeds(qs)
    out = vlm.runner.questions(cache, qe, lens, vlm.img_start, emb.shape[1], src, plan)
    torch.testing.assert_close(vlm.answer_logits(out.last), single, atol=1e-3, rtol=0)
    assert out.image_tokens_per_layer == [128, 128] + [85] * 28


def test_records_track_sources(vlm, scene):
    px = vlm.pixels([scene.pil()])
    plan = plan_for_budget("illava_code", HEADLINE_KEEP)
    _, vit, llm = vlm.prefill(px, scene.questions[0].text, plan, record=True)
    assert [r.n_after for r in vit.records] == [224, 192, 160, 128] and llm.records[0].n_after == 85
    src = vit.state.source[0, 1:, 1:]
    assert bool((src.sum(0) == 1).all())  # merging: every original patch lives in exactly one token
    pos = vit.state.pos[0, 1:]
    assert bool((pos[1:] > pos[:-1]).all())  # source_indice unique and sorted
    for rec in vit.records:
        assert (rec.group >= 0).all()  # iLLaVA recycles: no patch is dropped in the encoder


def test_source_positions_diagnostic_is_the_identity_without_reduction(vlm, scene):
    """``image_positions="source"`` (diagnostic) places each image token at its own patch's position: with nothing
    removed that is exactly the default prompt; with a plan it runs and keeps the plan's token counts."""
    plan = plan_for_budget("illava_code", HEADLINE_KEEP)
    a, b = evaluate(vlm, [scene]), evaluate(vlm, [scene], image_positions="source")
    assert a.predictions == b.predictions
    c, d = evaluate(vlm, [scene], plan), evaluate(vlm, [scene], plan, image_positions="source")
    assert c.tokens_to_llm == d.tokens_to_llm and c.image_tokens_mean_llm == d.image_tokens_mean_llm
    with pytest.raises(InputError, match="image_positions"):
        evaluate(vlm, [scene], image_positions="rope")


def test_shipped_lora_lives_in_a_private_copy(vlm):
    """The shipped file carries LoRA adapters for SmolLM2's q/v projections: the tiny VLM folds them into its own
    copy of those matrices; the embedded model shared with other pages keeps its weights."""
    lora = vlm.projector.lora
    assert lora and float(lora["lora.scale"]) > 0
    key = "3_q_proj"
    ours = vlm.lm.model.model.layers[3].self_attn.q_proj.weight
    shared = vlm.lm.base.model.model.layers[3].self_attn.q_proj.weight
    delta = float(lora["lora.scale"]) * lora[f"lora.B.{key}"] @ lora[f"lora.A.{key}"]
    torch.testing.assert_close(ours - shared, delta, atol=1e-6, rtol=0)
    assert vlm.lm.model.model.layers[3].mlp.up_proj.weight is vlm.lm.base.model.model.layers[3].mlp.up_proj.weight


def test_other_architectures_patch_like_the_library():
    """The same loops drive CLIP/SigLIP towers and Llama/Qwen2 LMs (LLaVA-family parts), here tiny random ones."""
    from transformers import CLIPVisionConfig, CLIPVisionModel, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    clip = CLIPVisionModel(CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                            num_attention_heads=4, image_size=56, patch_size=14)).eval()
    px = torch.randn(2, 3, 56, 56)
    with torch.inference_mode():
        ref = clip(pixel_values=px).last_hidden_state
    ad = VitAdapter(clip)
    torch.testing.assert_close(run_vit(ad, px).tokens, ref, atol=1e-5, rtol=0)
    red = run_vit(ad, px, ReductionPlan("illava_code", vit_layers=(1,), vit_r=5))
    assert red.tokens.shape[1] == 17 - 5 and bool((red.state.source.sum(1) == 1).all())
    qwen = Qwen2ForCausalLM(Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                        num_attention_heads=4, num_key_value_heads=2)).eval()
    emb = torch.randn(1, 12, 32)
    with torch.inference_mode():
        want = qwen.model(inputs_embeds=emb).last_hidden_state[:, -1]
    run = LlamaRunner(qwen).prefill(emb, torch.tensor([11]), 2, 6, torch.eye(6)[None])
    torch.testing.assert_close(run.last, want, atol=1e-5, rtol=0)


def test_llava_checkpoint_patches_like_the_library():
    """A (tiny, random) transformers LLaVA: our patched path equals its forward; a plan shortens both stages."""
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    torch.manual_seed(0)
    cfg = LlavaConfig(vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                                     num_attention_heads=4, image_size=56, patch_size=14),
                      text_config=LlamaConfig(vocab_size=80, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                              num_attention_heads=4, num_key_value_heads=2),
                      image_token_index=79, image_seq_length=16)
    model = LlavaForConditionalGeneration(cfg).eval()
    ids = torch.tensor([[1, 5, 6] + [79] * 16 + [7, 8, 9]])
    px = torch.randn(1, 3, 56, 56)
    with torch.inference_mode():
        want = model(input_ids=ids, pixel_values=px).logits[0, -1]
    patched = LlavaPatched(model)
    got, _, _ = patched.prefill(ids, px)
    torch.testing.assert_close(got, want, atol=1e-4, rtol=0)
    plan = ReductionPlan("illava_code", vit_layers=(0,), vit_r=4, llm_layers=(1,), llm_r=6)
    _, vit, llm = patched.prefill(ids, px, plan)
    assert vit.tokens_per_layer[-1] == 17 - 4 and llm.image_tokens_per_layer == [12, 6, 6]


def test_bad_inputs(vlm, scene):
    px = vlm.pixels([scene.pil()])
    with pytest.raises(InputError, match="empty"):
        vlm.prefill(px, "   ")
    with pytest.raises(InputError, match="removes every token"):
        evaluate(vlm, [scene], plan_for_budget("fastv", 0.0))


# ------------------------------------------------------------------------------------------------------- claims
def _claim(vlm: TinyVLM, n_scenes: int) -> dict:
    data = scenes.scenes(n_scenes, "heldout")
    base = evaluate(vlm, data)
    red = evaluate(vlm, data, plan_for_budget("illava_code", HEADLINE_KEEP))
    img = scenes.make_scene(scenes.HELDOUT_SEED0 + 1).pil()
    t = time_prefill(vlm, img, "How many objects are there?",
                     {"reference": None, "illava": plan_for_budget("illava_code", HEADLINE_KEEP)}, repeats=SPEED_REPEATS)
    out = {"n_questions": base.n_questions, "chance": base.chance, "acc_full": base.accuracy,
           "acc_illava": red.accuracy, "tokens_to_llm": red.tokens_to_llm, "llm_tokens": red.image_tokens_mean_llm,
           "per_type_full": base.per_type, "per_type_illava": red.per_type,
           "speedup": t["reference"]["min_s"] / t["illava"]["min_s"],
           "speedup_medians": t["reference"]["median_s"] / t["illava"]["median_s"], "times": t,
           "machine": f"{platform.machine()} {torch.get_num_threads()} thread(s)"}
    print(out)
    return out


@pytest.fixture(scope="session")
def ci_claim(vlm) -> dict:
    return _claim(vlm, CI_SCENES)


# Measured on the shipped weights (projector + LoRA trained on equal-area scenes with the object-share augmentation
# --share-drop, 540 + 300 + 600 + 300 steps, the last with the edge/interior tilt: the command of its row in
# assets/manifest.json; chosen on validation scenes 300-407, outside both tiers; ci subset: 210 questions on held-out
# scenes 0-35, chance 0.392): unreduced accuracy 0.957 (colour 1.00, count 0.78, exists 0.97, left/right 1.00, shape
# 1.00, top/bottom 1.00); iLLaVA (code variant) at 85 of 256 tokens 0.933 (-2.4; colour 0.91, count 0.72); at the same
# budget ToMe 0.933, random dropping 0.914, FastV 0.824. Prefill 2.20x by interleaved minima on an idle core (timing
# does not depend on the weights). The bounds are the claims record's; the one that does not hold reliably is an expected
# failure that states the measured numbers and their diagnosed cause (a pass shows as XPASS).


def test_shipped_vlm_answers_well_above_chance(ci_claim, record_claim):
    record_claim(acc_full=ci_claim["acc_full"], chance=ci_claim["chance"], n_questions=ci_claim["n_questions"])
    assert PROJECTOR_FILE.is_file()
    assert ci_claim["n_questions"] >= 200
    assert ci_claim["acc_full"] >= ci_claim["chance"] + 0.25, ci_claim


def test_shipped_vlm_is_above_chance(ci_claim):
    """The weaker, statistical statement: more than 3 binomial standard errors above chance."""
    n = ci_claim["n_questions"]
    se = (ci_claim["chance"] * (1 - ci_claim["chance"]) / n) ** 0.5
    assert ci_claim["acc_full"] >= ci_claim["chance"] + 3 * se, ci_claim


def test_illava_two_thirds_fewer_tokens_keeps_accuracy(ci_claim, record_claim):
    record_claim(acc_full=ci_claim["acc_full"], acc_illava=ci_claim["acc_illava"],
                 tokens_to_llm=ci_claim["tokens_to_llm"], llm_tokens=ci_claim["llm_tokens"])
    assert ci_claim["tokens_to_llm"] <= 256 // 2 and ci_claim["llm_tokens"] <= 90
    assert ci_claim["acc_illava"] >= ci_claim["acc_full"] - 0.03, ci_claim


@pytest.mark.xfail(strict=False, reason="at the edge of the bound, not reliably above it: on an idle core this "
                   "test gives 2.20x (0.713 s -> 0.324 s, minima of 7 interleaved runs; benchmarks/illava.py on an "
                   "idle machine 2.23x by medians, 2.21x by minima); at a load of about 3.5 runs of it gave 1.85x, "
                   "1.97x, 2.19x and 2.22x by minima (1.92-2.06x by medians), and 1.92x on a near-idle core "
                   "(0.744 s -> 0.388 s). Profiled: the reduced request costs what its token counts cost (our LM loop reducing 128 -> "
                   "85 image tokens before layer 2: 0.346 s vs 0.359 s predicted from unreduced runs at 99 and 142 "
                   "tokens; our loops equal transformers' forwards at the same counts), so the ranking and merging "
                   "add nothing measurable. What is left is the LM's cost per pass that does not shrink with tokens on "
                   "one CPU thread: SmolLM2 takes 0.286 s at 99 tokens and 0.645 s at 270 (about 0.08 s fixed: "
                   "weights streamed once per pass), so 2.3x fewer multiply-adds give about 1.9-2.0x")
def test_illava_two_thirds_fewer_tokens_halves_prefill(ci_claim, record_claim):
    record_claim(prefill_speedup=ci_claim["speedup"], prefill_speedup_medians=ci_claim["speedup_medians"])
    assert ci_claim["speedup"] >= 2.0, ci_claim


@pytest.mark.xfail(strict=False, reason="measured on the shipped weights (ci subset, 210 questions on held-out "
                   "scenes 0-35): at 85 of 256 image tokens iLLaVA (code variant) and ToMe both answer 0.933 of the "
                   "questions (unreduced 0.957): a tie on our miniature, not the paper's lead over the merging "
                   "baselines (the page and benchmarks/results/illava.md show every method at every budget)")
def test_illava_beats_tome_at_the_same_budget(vlm, ci_claim, record_claim):
    """The paper's comparison with the merging baselines: at the same budget (85 of 256 tokens) iLLaVA answers more
    questions than ToMe."""
    tome = evaluate(vlm, scenes.scenes(CI_SCENES, "heldout"), plan_for_budget("tome", HEADLINE_KEEP))
    record_claim(acc_illava=ci_claim["acc_illava"], acc_tome=tome.accuracy, tokens_to_llm_tome=tome.tokens_to_llm)
    assert ci_claim["acc_illava"] > tome.accuracy, (ci_claim["acc_illava"], tome.accuracy)


@pytest.mark.full
def test_full_tier_claim(vlm, record_claim):
    res = _claim(vlm, FULL_SCENES)
    record_claim(acc_full=res["acc_full"], acc_illava=res["acc_illava"], prefill_speedup=res["speedup"])
    assert res["acc_full"] >= res["chance"] + 0.25, res
    # shipped weights (1,154 questions on held-out scenes 0-199): unreduced 0.977, iLLaVA (code) at 85 of 256 tokens 0.957
    assert res["acc_illava"] >= res["acc_full"] - 0.03, res
    if res["speedup"] < 2.0:
        pytest.xfail(f"the 2x prefill is at the edge of the bound on one CPU thread (see the ci-tier test): {res}")


# ---------------------------------------------------------------------------------------------------------- CLI
def _cli(argv: list[str]) -> tuple[int, dict | None]:
    import argparse
    import io
    import json
    from contextlib import redirect_stdout

    from backend.tokens.illava import cli as illava_cli

    parser = argparse.ArgumentParser()
    illava_cli.add_parser(parser.add_subparsers(dest="group"))
    args = parser.parse_args(["illava", *argv])
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = args.func(args)
    text = buf.getvalue()
    return rc, (json.loads(text) if text.strip().startswith("{") else None)


def test_cli_run_and_bad_inputs(vlm, monkeypatch, tmp_path):
    monkeypatch.setattr(TinyVLM, "load", classmethod(lambda cls, *a, **k: vlm))
    img = tmp_path / "scene.png"
    scenes.make_scene(scenes.HELDOUT_SEED0 + 3).pil().save(img)
    rc, out = _cli(["run", "--image", str(img), "--method", "illava", "--layers", "5,6,7,8", "--r", "32",
                    "--question", "How many objects are there?", "--repeats", "1", "--json"])
    assert rc == 0 and out["encoder_tokens_per_layer"][-1] == 257 - 128
    assert out["answer_full"]["answer"] in scenes.COUNTS and out["prefill_reduced_s"] > 0
    assert out["provenance"]["assets_sha256"]
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    rc, out = _cli(["run", "--image", str(bad), "--json"])
    assert rc == 2 and "error" in out
    rc, out = _cli(["run", "--scene", "5", "--question", "  ", "--json"])
    assert rc == 2 and "empty" in out["error"]
    rc, out = _cli(["run", "--scene", "5", "--layers", "1,2,3,4,5,6,7,8,9", "--r", "32", "--json"])
    assert rc == 2 and "removes every token" in out["error"]


def test_cli_diagnose_one_scene(vlm, monkeypatch):
    """The diagnosis of the counting loss runs through the CLI (one scene here; the recorded one is 36 scenes)."""
    monkeypatch.setattr(TinyVLM, "load", classmethod(lambda cls, *a, **k: vlm))
    rc, out = _cli(["diagnose", "--scenes", "1", "--json"])
    assert rc == 0 and out["scenes"] == 1 and sorted(out["encoder_blocks"]) == sorted(str(i) for i in range(12))
    kept = out["kept_per_merge_layer"]["illava_code"]
    assert sorted(kept) == ["3", "4", "5", "6"] and all(0 <= d["object_kept"] <= 1 for d in kept.values())
    for d in kept.values():  # one scene: the object share kept lies between its interior and edge shares
        parts = [d[k] for k in ("object_interior_kept", "object_edge_kept") if k in d]
        assert parts and min(parts) - 1e-9 <= d["object_kept"] <= max(parts) + 1e-9
    assert set(out["counting"]) == {"unreduced", "illava_code", "illava_code_encoder_only", "random",
                                    "ground_truth_ranking_encoder_only"}
    assert all(c["questions"] == 1 for c in out["counting"].values())
    assert sorted(out["counting_unreduced_by_object_scale"]) == ["0.7", "1.0", "1.3"]
    # factor 1 redraws the same scene: the same answers as the unreduced run
    assert out["counting_unreduced_by_object_scale"]["1.0"] == out["counting"]["unreduced"]


def test_object_scale_one_redraws_the_same_scene():
    s = scenes.make_scene(scenes.HELDOUT_SEED0 + 5)
    assert (scenes.with_object_scale(s, 1.0).image == s.image).all()
    big = scenes.with_object_scale(s, 1.3)
    assert big.objects[0].radius > s.objects[0].radius and (big.image != s.image).any()


def test_cli_eval_reads_the_given_projector(vlm, monkeypatch, tmp_path):
    """``eval --projector FILE`` evaluates that file (e.g. a training run's output), the shipped one by default."""
    seen = []
    monkeypatch.setattr(TinyVLM, "load", classmethod(lambda cls, path=PROJECTOR_FILE, *a, **k: seen.append(path) or vlm))
    rc, out = _cli(["eval", "--scenes", "1", "--method", "fastv", "--keep", "0.5", "--json"])
    assert rc == 0 and seen[-1] == PROJECTOR_FILE and out["reduced"]["accuracy"] >= 0
    other = tmp_path / "run" / "illava_projector.safetensors"
    other.parent.mkdir()
    other.write_bytes(PROJECTOR_FILE.read_bytes())
    rc, out = _cli(["eval", "--scenes", "1", "--projector", str(other), "--json"])
    assert rc == 0 and seen[-1] == str(other)
    rc, out = _cli(["eval", "--scenes", "1", "--method", "illava", "--keep", "0.5", "--positions", "source", "--json"])
    assert rc == 0 and out["provenance"]["params"]["positions"] == "source" and out["reduced"]["tokens_to_llm"] <= 192
