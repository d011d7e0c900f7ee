"""Invariants of the token-reduction functions (backend/tokens/illava/merging.py) and of the plans (plan.py).

No model is loaded here: random tensors in float64, a few milliseconds each.
"""

from __future__ import annotations

import pytest
import torch

from backend.errors import InputError
from backend.tokens.illava import merging
from backend.tokens.illava.merging import TokenSet, get_method, reduce_tokens
from backend.tokens.illava.plan import ReductionPlan, plan_for_budget

B, N, C = 3, 33, 16  # one class token + 32 patches


@pytest.fixture()
def data() -> tuple[TokenSet, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(B, N, C, generator=g, dtype=torch.float64)
    scores = torch.rand(B, N, generator=g, dtype=torch.float64)
    metric = torch.randn(B, N, 8, generator=g, dtype=torch.float64)
    return TokenSet.fresh(x, protected=1), scores, metric


def _partition(ts: TokenSet) -> bool:
    return bool((ts.source.sum(1) == 1).all() and ((ts.source == 0) | (ts.source == 1)).all())


# ------------------------------------------------------------------------------------------------------------ ToMe
@pytest.mark.parametrize("r", [1, 5, 16])
def test_tome_preserves_weighted_sum_and_size(data, r):
    ts, _, metric = data
    ts2 = TokenSet(ts.x, ts.size * torch.arange(1, N + 1, dtype=ts.x.dtype), ts.source, ts.pos, 1)  # uneven sizes
    out, info = merging.tome_merge(ts2, r, metric=metric)
    assert out.n == N - r and info.removed == r
    torch.testing.assert_close((out.x * out.size[..., None]).sum(1), (ts2.x * ts2.size[..., None]).sum(1))
    torch.testing.assert_close(out.size.sum(1), ts2.size.sum(1))


def test_tome_caps_r_at_half_and_protects_class_token(data):
    ts, _, metric = data
    metric = metric.clone()
    metric[:, 0] = metric[:, 1]  # the class token is the best match of token 1: it must still not merge
    out, info = merging.tome_merge(ts, 100, metric=metric)
    assert info.removed == (N - 1) // 2 and out.n == N - (N - 1) // 2
    assert torch.equal(out.x[:, 0], ts.x[:, 0]) and torch.equal(out.pos[:, 0], torch.zeros(B, dtype=torch.long))
    assert bool((out.source[:, 0, 0] == 1).all()) and bool((out.source[:, 0].sum(-1) == 1).all())
    assert bool((out.size[:, 0] == 1).all())
    assert _partition(out)


def test_tome_sources_partition_over_several_steps(data):
    ts, _, _ = data
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        ts, _ = merging.tome_merge(ts, 4, metric=torch.randn(B, ts.n, 8, generator=g, dtype=torch.float64))
        assert _partition(ts)
        torch.testing.assert_close(ts.size, ts.source.sum(-1))
    assert ts.n == N - 16


# ---------------------------------------------------------------------------------------------------- iLLaVA code
@pytest.mark.parametrize("r", [1, 4, 20])
def test_illava_code_rank_weights_and_bit_identity(data, r):
    ts, scores, _ = data
    out, info = merging.illava_code_merge(ts, r, scores=scores)
    assert out.n == N - r and info.removed == r
    for b in range(B):
        order = torch.sort(scores[b, 1:], stable=True).indices[: r + 1] + 1  # lowest first
        target = int(order[-1])
        w = torch.arange(r + 1, 0, -1, dtype=torch.float64)
        assert w[0] == r + 1 and w[-1] == 1  # the least attended token weighs most
        expected = (w / w.sum()) @ ts.x[b, order]
        keep = sorted(set(range(N)) - set(order[:-1].tolist()))
        assert out.pos[b].tolist() == keep  # survivors stay in order; source_indice sorted and unique
        j = keep.index(target)
        torch.testing.assert_close(out.x[b, j], expected)
        others = [i for i, k in enumerate(keep) if k != target]
        assert torch.equal(out.x[b, others], ts.x[b, [keep[i] for i in others]])  # informative: bit-identical
        lo, hi = ts.x[b, order].min(0).values, ts.x[b, order].max(0).values
        assert bool(((out.x[b, j] >= lo - 1e-12) & (out.x[b, j] <= hi + 1e-12)).all())  # convex combination
    assert _partition(out)
    assert torch.equal(out.x[:, 0], ts.x[:, 0])  # class token untouched


def test_illava_r0_is_identity(data):
    ts, scores, metric = data
    for name in ("illava_code", "illava_paper", "fastv", "random", "tome", "none"):
        out, info = reduce_tokens(name, ts, 0, scores=scores, metric=metric, generator=torch.Generator())
        assert torch.equal(out.x, ts.x) and out.n == N and info.removed == 0


# --------------------------------------------------------------------------------------------------- iLLaVA paper
@pytest.mark.parametrize("r,m,pc", [(6, 5, None), (20, 5, None), (10, 1, 3), (12, 3, 2)])
def test_illava_paper_informative_identical_recycled_convex(data, r, m, pc):
    """The paper's rule as the released code implements it (mode 3): informative tokens bit-identical, each
    recycling token becomes (c + sum_j softmax(<c, x_j>/sqrt(d)) x_j) / 2 over its M most similar discarded tokens,
    a convex combination; survivors keep their original order."""
    ts, scores, metric = data
    out, info = merging.illava_paper_merge(ts, r, scores=scores, m=m, n_recycled=pc)
    assert out.n == N - r and info.removed == r
    keep_n = N - 1 - r
    n_rec = pc if pc is not None else max(1, round(0.05 * keep_n))
    pi = keep_n - n_rec
    for b in range(B):
        order = (torch.sort(-scores[b, 1:], stable=True).indices + 1).tolist()
        informative, discarded = order[:pi], order[keep_n:]  # the rest, order[pi:keep_n], recycle
        kept = sorted(order[:keep_n])
        assert out.pos[b, 1:].tolist() == kept  # original order
        for slot, tok in enumerate(kept, start=1):
            if tok in informative:  # bit-identical
                assert torch.equal(out.x[b, slot], ts.x[b, tok]) and torch.equal(out.source[b, slot], ts.source[b, tok])
                continue
            sim = ts.x[b, discarded] @ ts.x[b, tok]
            top, idx = sim.topk(min(m, r))
            members = [discarded[i] for i in idx.tolist()]
            w = (top / C**0.5).softmax(0)
            want = 0.5 * ts.x[b, tok] + 0.5 * (w @ ts.x[b, members])
            torch.testing.assert_close(out.x[b, slot], want)
            group = [tok, *members]
            lo, hi = ts.x[b, group].min(0).values, ts.x[b, group].max(0).values
            assert bool(((out.x[b, slot] >= lo - 1e-12) & (out.x[b, slot] <= hi + 1e-12)).all())  # convex
            assert sorted(torch.nonzero(out.source[b, slot])[:, 0].tolist()) == sorted(group)
    assert torch.equal(out.x[:, 0], ts.x[:, 0])


# ---------------------------------------------------------------------------------------------------- FastV, random
def test_fastv_keeps_top_scores_with_deterministic_ties(data):
    ts, _, _ = data
    scores = torch.zeros(B, N, dtype=torch.float64)
    scores[:, 5] = scores[:, 9] = 1.0  # ties at the top ...
    scores[:, 20:] = 0.5  # ... and a block of equal scores
    out, _ = merging.fastv_prune(ts, N - 1 - 8, scores=scores)
    expected = [0, 5, 9, 20, 21, 22, 23, 24, 25]  # protected, the two 1.0, then the lowest-index 0.5 ones
    assert out.pos.tolist() == [expected] * B
    assert torch.equal(out.x, ts.x[:, expected])


def test_random_drop_is_seeded(data):
    ts, _, _ = data
    a, _ = merging.random_drop(ts, 10, generator=torch.Generator().manual_seed(3))
    b, _ = merging.random_drop(ts, 10, generator=torch.Generator().manual_seed(3))
    c, _ = merging.random_drop(ts, 10, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a.pos, b.pos) and not torch.equal(a.pos, c.pos)
    assert a.n == N - 10 and bool((a.pos[:, 0] == 0).all())


def test_budget_that_removes_every_token_is_refused(data):
    ts, scores, metric = data
    for name in ("illava_code", "illava_paper", "fastv", "random"):
        with pytest.raises(InputError, match="removes every token"):
            reduce_tokens(name, ts, N - 1, scores=scores, metric=metric, generator=torch.Generator())
    with pytest.raises(InputError, match="removes every token"):
        ReductionPlan("illava_code", vit_layers=(3, 4), vit_r=128).validate(12, 30, 256)
    with pytest.raises(InputError, match="r must be"):
        merging.fastv_prune(ts, -1, scores=scores)


def test_registry_lists_valid_names():
    assert get_method("iLLaVA").name == "illava_code"
    with pytest.raises(InputError, match="Valid names: none, illava_code, illava_paper, tome, fastv, random"):
        get_method("pyramiddrop")


# ------------------------------------------------------------------------------------------------------------ plans
@pytest.mark.parametrize("method", ["illava_code", "illava_paper", "tome", "fastv", "random"])
@pytest.mark.parametrize("keep", [2 / 3, 1 / 3, 2 / 9])
def test_plan_for_budget_hits_the_budget(method, keep):
    plan = plan_for_budget(method, keep, 256)
    plan.validate(12, 30, 256)
    assert plan.tokens_kept(256)[-1] == 256 - round(256 * (1 - keep))


def test_plan_validation_messages():
    with pytest.raises(InputError, match="only in the language model"):
        ReductionPlan("fastv", vit_layers=(3,), vit_r=8).validate(12, 30, 256)
    with pytest.raises(InputError, match="only in the vision encoder"):
        ReductionPlan("tome", llm_layers=(2,), llm_r=8).validate(12, 30, 256)
    with pytest.raises(InputError, match="0..11"):
        ReductionPlan("illava_code", vit_layers=(12,), vit_r=8).validate(12, 30, 256)
    with pytest.raises(InputError, match="1..29"):
        ReductionPlan("illava_code", llm_layers=(0,), llm_r=8).validate(12, 30, 256)
    with pytest.raises(InputError, match="Unknown reduction method"):
        ReductionPlan("nope").validate(12, 30, 256)


def test_plan_config_builds_the_plans_of_the_page_and_the_cli():
    """One config for the page and the CLI: ``keep`` gives the method's default placement (no encoder blocks: the
    whole reduction in the LLM), explicit steps drop the encoder blocks of an LLM-only method, and a budget that
    removes every token is refused before any model loads."""
    from dataclasses import replace

    from backend.tokens.illava.jobs import PlanConfig, SweepConfig

    cfg = PlanConfig(method="illava", keep=1 / 3, m=3, seed=2)
    assert cfg.method == "illava_code"
    assert cfg.plan() == replace(plan_for_budget("illava_code", 1 / 3, 256, seed=2), m=3)
    llm_only = PlanConfig(method="random", keep=1 / 3, vit_layers=()).plan()
    assert not llm_only.vit_steps() and sum(llm_only.llm_steps().values()) == 171
    assert PlanConfig(method="fastv", llm_layers=(2,), llm_r=40).plan().vit_steps() == {}
    assert PlanConfig(method="tome", keep=0.5).plan().tokens_kept(256)[-1] == 128
    with pytest.raises(InputError, match="removes every token"):
        PlanConfig(method="illava", keep=0.0)
    with pytest.raises(InputError, match="Unknown reduction method"):
        SweepConfig(methods=("pyramiddrop",))
    assert all(callable(get_method(n)) for n in merging.METHODS)


# ------------------------------------------------------------------------------------------- training pieces
def test_grounding_targets_mix_object_and_background_by_coverage():
    """The training script's per-patch grounding targets: background patches get the background word's embedding,
    fully covered patches their object's attribute words, edge patches a convex mix by covered share."""
    from backend.tokens.illava import scenes
    from backend.train.illava import GROUNDING_BACKGROUND, grounding_batch, grounding_targets

    words = [GROUNDING_BACKGROUND, *scenes.ALL_ANSWERS]

    class Tok:
        def __call__(self, text, add_special_tokens=False):  # noqa: ANN001, ANN204
            return {"input_ids": [words.index(text.strip())]}

    embed = torch.nn.Embedding(len(words), 6)
    sc = scenes.scenes(3, "train")
    obj, frac, tgt, bg = grounding_targets(sc, embed, Tok(), 224)
    assert obj.shape == frac.shape == (3, 256) and tgt.shape == (3, 4, 6)
    assert float(frac.min()) >= 0 and float(frac.max()) == 1.0
    out = grounding_batch(torch.tensor([0, 2]), obj, frac, tgt, bg)
    for b, i in enumerate((0, 2)):
        empty = frac[i] == 0
        torch.testing.assert_close(out[b][empty], bg.expand(int(empty.sum()), -1))
        full = frac[i] == 1
        o = sc[i].objects[int(obj[i][full][0])]
        want = 0.5 * sum(embed.weight[words.index(w)] for w in (o.color, o.shape, o.horizontal, o.vertical))
        torch.testing.assert_close(out[b][full][0], want.detach())


def test_lora_starts_at_zero_and_folds_into_a_copy():
    """LoRA adapters: B = 0 at the start (the frozen model), hooks == weights folded into a private copy, and the
    original model is never modified."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from backend.tokens.illava.projector import LoRA, lora_merged_lm

    torch.manual_seed(0)
    lm = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2)).eval()
    ids = torch.tensor([[1, 4, 9, 16, 25]])
    with torch.no_grad():
        base = lm(ids).logits
        lora = LoRA(lm.model.layers, rank=4, alpha=8.0)
        handles = lora.attach(lm.model.layers)
        torch.testing.assert_close(lm(ids).logits, base)  # B = 0: identity at the start
        for p in lora.B.values():
            p.normal_()
        hooked = lm(ids).logits
        for h in handles:
            h.remove()
        w0 = lm.model.layers[0].self_attn.q_proj.weight.clone()
        merged = lora_merged_lm(lm, lora.tensors())
        torch.testing.assert_close(merged(ids).logits, hooked, atol=1e-5, rtol=0)
        torch.testing.assert_close(lm(ids).logits, base)  # the original is untouched
    assert torch.equal(lm.model.layers[0].self_attn.q_proj.weight, w0)
    assert merged.model.layers[0].mlp.up_proj.weight is lm.model.layers[0].mlp.up_proj.weight  # shared, not copied
    assert merged.model.layers[0].self_attn.q_proj.weight is not lm.model.layers[0].self_attn.q_proj.weight


def test_projector_round_trip_through_the_weights_layout(tmp_path):
    """save_projector / load_projector: projector and LoRA tensors in one file, the config rebuilds the projector, the
    command and quality come back."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from backend.tokens.illava.projector import LoRA, Projector, load_projector, save_projector

    torch.manual_seed(0)
    lm = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2))
    proj, lora = Projector(d_vision=12, d_lm=32, hidden=20), LoRA(lm.model.layers, rank=4, alpha=8.0)
    path = save_projector(proj, tmp_path / "illava_projector.safetensors", lora, command="python -m backend.train "
                          "illava --quick --out x", quality={"train_accuracy_last20_steps": 0.5})
    got = load_projector(path)
    assert got.meta.command.endswith("--quick --out x") and got.meta.quality["train_accuracy_last20_steps"] == 0.5
    assert got.meta.config["d_vision"] == 12 and got.meta.config["lora_rank"] == 4
    assert got.meta.config["lora_alpha"] == 8.0
    x = torch.randn(2, 5, 12)
    with torch.no_grad():
        torch.testing.assert_close(got(x), proj(x), rtol=0, atol=0)
    assert set(got.lora) == set(lora.tensors())


def test_training_questions_are_correct_and_cover_every_type():
    """The training generator asks everything the templates can ask about a scene (capped), with correct answers."""
    import numpy as np

    from backend.tokens.illava import scenes

    rng = np.random.default_rng(0)
    for seed in range(40):
        s = scenes.make_scene(seed)
        qs = scenes.training_questions(s, rng, limit=100)
        kinds = {q.kind for q in qs}
        assert {"count", "horizontal", "vertical", "exists"} <= kinds
        for q in qs:
            assert q.answer in q.candidates
            if q.kind in ("horizontal", "vertical"):
                o = next(o for o in s.objects if f"{o.color} {o.shape}" in q.text)
                assert getattr(o, q.kind) == q.answer
            if q.kind == "exists":
                present = any(f"{o.color} {o.shape}" in q.text for o in s.objects)
                assert q.answer == ("yes" if present else "no")
            if q.kind == "count":
                assert q.answer == scenes.COUNTS[len(s.objects) - 1]
        capped = scenes.training_questions(s, rng, limit=6)
        assert len(capped) <= 6 and len({q.kind for q in capped}) == min(6, len(kinds))


def test_training_branches_see_exactly_the_test_time_context():
    """``branch_batch`` (training): several questions in one LM pass, each one computed exactly as if it were asked
    alone after the image (tree mask + the positions it has at test time), on a tiny random Llama."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from backend.train.illava import branch_batch

    torch.manual_seed(0)
    lm = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2)).eval()
    fixed = [torch.randn(10, 32), torch.randn(10, 32)]
    qs = [[torch.randn(3, 32), torch.randn(5, 32)], [torch.randn(4, 32)]]
    seqs = [torch.cat([f, *q]) for f, q in zip(fixed, qs, strict=True)]
    spans = []
    for q in qs:
        start, sp = 10, []
        for e in q:
            sp.append((start, start + e.shape[0]))
            start += e.shape[0]
        spans.append(sp)
    emb, allow, pos = branch_batch(seqs, spans, 10)
    with torch.no_grad():
        h = lm.model(inputs_embeds=emb, attention_mask=allow, position_ids=pos).last_hidden_state
        for b, (f, q) in enumerate(zip(fixed, qs, strict=True)):
            for e, (_, stop) in zip(q, spans[b], strict=True):
                alone = lm.model(inputs_embeds=torch.cat([f, e])[None]).last_hidden_state[0, -1]
                torch.testing.assert_close(h[b, stop - 1], alone, atol=1e-5, rtol=0)


def test_training_radius_range_changes_only_the_object_sizes() -> None:
    """A wider training radius range (to decouple object area from count) redraws only the radii: same objects,
    positions' quadrants and questions; the default is the held-out distribution; out-of-quadrant ranges refuse."""
    import numpy as np

    from backend.tokens.illava import scenes

    for seed in range(5):
        a, b = scenes.make_scene(seed), scenes.make_scene(seed, radius_range=(0.05, 0.19))
        assert [(o.color, o.shape, o.quadrant) for o in a.objects] == [(o.color, o.shape, o.quadrant) for o in b.objects]
        assert [q.text for q in a.questions] == [q.text for q in b.questions]
        assert all(0.05 * 224 <= o.radius <= 0.19 * 224 for o in b.objects)
        assert np.array_equal(a.image, scenes.make_scene(seed, radius_range=scenes.RADIUS_RANGE).image)
    with pytest.raises(ValueError, match="radius_range"):
        scenes.make_scene(0, radius_range=(0.1, 0.3))


def test_equal_area_training_scenes_decouple_area_from_count() -> None:
    """``--equal-area`` training scenes: only the radii change (same objects, quadrants and questions), the radius of
    one object of the same total area stays in the range whatever the count, so the object area (in pixels and in
    object patches) carries almost no information about the count, unlike the held-out distribution."""
    import numpy as np

    from backend.tokens.illava import scenes

    for seed in range(5):
        a, b = scenes.make_scene(seed), scenes.make_scene(seed, area_range=(0.1, 0.2))
        assert [(o.color, o.shape, o.quadrant) for o in a.objects] == [(o.color, o.shape, o.quadrant) for o in b.objects]
        assert [q.text for q in a.questions] == [q.text for q in b.questions]
    train = scenes.scenes(200, "train", area_range=(0.1, 0.2))
    heldout = scenes.scenes(200, "train")
    for data, low, high in ((train, -0.25, 0.25), (heldout, 0.8, 1.0)):
        k = np.array([len(s.objects) for s in data])
        big = np.array([np.sqrt(sum((o.radius / 224) ** 2 for o in s.objects)) for s in data])
        patches = np.array([(scenes.patch_coverage(s) >= 0.25).sum() for s in data])
        assert low <= np.corrcoef(k, big)[0, 1] <= high
        assert low <= np.corrcoef(k, patches)[0, 1] <= high
    big = [np.sqrt(sum((o.radius / 224) ** 2 for o in s.objects)) for s in train]
    assert 0.1 - 0.02 <= min(big) and max(big) <= 0.2 + 1e-6
    assert all(scenes.EQUAL_AREA_CLIP[0] * 224 - 1e-6 <= o.radius <= 0.2 * 224 + 1e-6 for s in train for o in s.objects)
    with pytest.raises(ValueError, match="area_range"):
        scenes.make_scene(0, area_range=(0.1, 0.3))


def test_run_vit_probe_sees_every_block_without_changing_the_output() -> None:
    """:func:`diagnose` reads every block's attention through ``run_vit``'s probe: the probe sees each block's
    probabilities (rows sum to 1) and tokens, and the output equals the fused-attention forward."""
    import torch

    from backend.models import load
    from backend.tokens.illava.patch import vit

    torch.manual_seed(0)
    ad = vit.apply_patch(load("dinov2").model)
    px = torch.randn(1, 3, 56, 56)
    seen = []

    def probe(i, probs, ts):  # noqa: ANN001, ANN202
        seen.append(i)
        assert probs.shape == (1, ad.heads, ts.n, ts.n)
        torch.testing.assert_close(probs.sum(-1), torch.ones(1, ad.heads, ts.n))

    ref = vit.run_vit(ad, px).tokens
    # explicit softmax vs fused attention in 12 blocks: float rounding only
    torch.testing.assert_close(vit.run_vit(ad, px, probe=probe).tokens, ref, atol=1e-4, rtol=0)
    assert seen == list(range(ad.num_layers))


def test_token_drop_augmentation_keeps_a_sorted_subset_of_the_same_size() -> None:
    """``--token-drop``: every scene of a step keeps the same number of its own tokens, in patch order, at least the
    minimum share; the tokens are copied, not mixed."""
    from backend.train.illava import drop_tokens

    gen = torch.Generator().manual_seed(0)
    img = torch.randn(4, 256, 8)
    sizes = set()
    for _ in range(20):
        out, keep = drop_tokens(img, 0.25, gen)
        k = out.shape[1]
        sizes.add(k)
        assert 64 <= k <= 256 and keep.shape == (4, k)
        assert bool((keep[:, 1:] > keep[:, :-1]).all())
        assert torch.equal(out, torch.stack([img[b, keep[b]] for b in range(4)]))
    assert len(sizes) > 5


def test_share_drop_augmentation_varies_the_object_share_and_keeps_every_object() -> None:
    """``--share-drop``: every scene of a step keeps the same number of its own tokens in patch order; the object
    patches' share of them goes both above and below their share of the image (up to the factor R, give or take
    rounding), and every object keeps at least one patch whenever the row keeps at least one object patch per object."""
    from backend.tokens.illava import scenes
    from backend.train.illava import share_drop_tokens

    gen = torch.Generator().manual_seed(0)
    n = 256
    frac = torch.zeros(2, n)
    obj = torch.zeros(2, n, dtype=torch.long)
    for j, (a, b) in enumerate([(0, 10), (50, 58), (100, 104)]):  # 22 object patches: image share 0.086
        frac[:, a:b], obj[:, a:b] = 1.0, j
    frac[1, 200:202] = 0.1  # under OBJECT_COVERAGE (0.25): background
    img = torch.randn(2, n, 8)
    ratios = []
    for _ in range(60):
        out, keep, share = share_drop_tokens(img, obj, frac, 0.25, 2.5, gen)
        k = out.shape[1]
        assert 64 <= k <= n and keep.shape == (2, k) and share.shape == (2,)
        assert bool((keep[:, 1:] > keep[:, :-1]).all())
        assert torch.equal(out, torch.stack([img[b, keep[b]] for b in range(2)]))
        is_obj = (frac >= scenes.OBJECT_COVERAGE).gather(1, keep)
        torch.testing.assert_close(is_obj.float().mean(1), share.float())
        for b in range(2):
            kept_objects = set(obj[b, keep[b]][is_obj[b]].tolist())
            if int(is_obj[b].sum()) >= 3:
                assert kept_objects == {0, 1, 2}
        ratios += (share / (22 / n)).tolist()
    assert min(ratios) < 0.6 and max(ratios) > 1.6 and max(ratios) <= 2.5 * 1.1 and min(ratios) >= 1 / 2.5 * 0.9 - 0.05


def test_share_drop_tilt_favours_edges_or_interiors_both_ways_and_is_off_by_default() -> None:
    """``--share-drop P,KMIN,R,T``: with T > 0 the object patches kept lean towards the edges (low coverage) in some
    scenes and towards the interiors in others; the same patches, counts and every-object rule as without it; with
    T = 0 the draws are exactly those of the three-number form."""
    from backend.train.illava import share_drop_tokens

    n = 256
    frac = torch.zeros(1, n)
    obj = torch.zeros(1, n, dtype=torch.long)
    frac[0, 10:30], frac[0, 30:50] = 1.0, 0.3  # one object: 20 interior and 20 edge patches
    obj[0, 40:50] = 1  # a second object made of edge patches only
    img = torch.randn(1, n, 4)
    a, b = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    for _ in range(10):
        x, kx, sx = share_drop_tokens(img, obj, frac, 0.25, 2.5, a)
        y, ky, sy = share_drop_tokens(img, obj, frac, 0.25, 2.5, b, tilt=0.0)
        assert torch.equal(kx, ky) and torch.equal(sx, sy)
    gen = torch.Generator().manual_seed(0)
    lean = []
    for _ in range(300):
        _, keep, share = share_drop_tokens(img, obj, frac, 0.25, 2.5, gen, tilt=3.0)
        inner = int(((keep >= 10) & (keep < 30)).sum())
        edge = int(((keep >= 30) & (keep < 50)).sum())
        assert inner + edge == round(float(share[0]) * keep.shape[1])
        if 0 < inner + edge < 40:
            assert int(((keep >= 40) & (keep < 50)).sum()) >= 1  # the edge-only object keeps a patch
            lean.append(inner / (inner + edge))
    lean_t = torch.tensor(lean)
    assert float((lean_t > 0.8).float().mean()) > 0.05 and float((lean_t < 0.2).float().mean()) > 0.05
