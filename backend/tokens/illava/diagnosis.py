"""Why iLLaVA's encoder stage costs the tiny VLM's counting answers: ranking signals per encoder block, which object
patches survive each merge, and counting controls (:func:`diagnose`; ``python -m backend illava diagnose``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ...registry import Registry
from ...runtime import Progress, report
from . import merging, scenes
from .evaluation import evaluate
from .patch.vit import run_vit
from .plan import ReductionPlan, plan_for_budget
from .scenes import INTERIOR_COVERAGE, OBJECT_COVERAGE
from .tiny_vlm import TinyVLM

OURS = merging.METHODS.names(kind="ours")[0]  # the released code's iLLaVA merge
RANDOM = next(n for n in merging.METHODS if merging.METHODS[n].fn is merging.random_drop)  # the random control
SIZE_FACTORS = (0.7, 1.0, 1.3)  # object-radius factors of the size control (training radii: 0.09-0.13 of the image)


Control = Callable[[dict[str, Any]], tuple[ReductionPlan | None, Any]]

# The counting controls of :func:`diagnose`, in the order they run: each picks its plan (and, for the ground-truth
# control, the encoder ranking that replaces S_avg) from the diagnosis' plans ``plan``, ``encoder_only``, ``random``
# and scorer ``oracle``.
COUNTING_CONTROLS: Registry[Control] = Registry("counting control")
COUNTING_CONTROLS.add("unreduced", lambda p: (None, None), label="Unreduced", kind="reference", color="#444444",
                      about="the unreduced model")
COUNTING_CONTROLS.add("illava_code", lambda p: (p["plan"], None), label="iLLaVA (code plan)", kind="ours",
                      about="iLLaVA's plan at the diagnosis budget, encoder and LLM stages")
COUNTING_CONTROLS.add("illava_code_encoder_only", lambda p: (p["encoder_only"], None),
                      label="iLLaVA encoder stage only", kind="ablation", about="the same encoder merges, no LLM stage")
COUNTING_CONTROLS.add("random", lambda p: (p["random"], None), label="Random drop", kind="baseline",
                      about="random dropping at the same budget and placement")
COUNTING_CONTROLS.add("ground_truth_ranking_encoder_only", lambda p: (p["encoder_only"], p["oracle"]),
                      label="Encoder stage, ranking = object masks", kind="reference",
                      about="iLLaVA's encoder merges ranked by the true object masks (objects first)")


def _count_answers(vlm: TinyVLM, data: Sequence[scenes.Scene], plan: ReductionPlan | None,
                   encoder_scores: Callable[[scenes.Scene, merging.TokenSet], torch.Tensor] | None = None,
                   image_positions: str = "sequence") -> dict[str, Any]:
    """Accuracy on the counting questions of ``data`` and how the wrong answers miss (over / under the truth)."""
    from dataclasses import replace

    only = [replace(s, questions=[q for q in s.questions if q.kind == "count"]) for s in data]
    only = [s for s in only if s.questions]
    res = evaluate(vlm, only, plan, encoder_scores=encoder_scores, image_positions=image_positions)
    truth = [q.answer for s in only for q in s.questions]
    idx = {w: i for i, w in enumerate(scenes.COUNTS)}
    over = sum(idx[p] > idx[t] for p, t in zip(res.predictions, truth, strict=True))
    under = sum(idx[p] < idx[t] for p, t in zip(res.predictions, truth, strict=True))
    return {"plan": res.label, "questions": len(truth), "accuracy": round(res.accuracy, 4), "overcounts": int(over),
            "undercounts": int(under)}


def diagnose(vlm: TinyVLM, n_scenes: int = 36, keep: float = 1 / 3, start: int = 0,
             progress: Progress | None = None) -> dict[str, Any]:
    """Why iLLaVA's encoder stage costs the counting answers of the tiny VLM (held-out scenes ``start ...``).

    1. Ranking signal of the unreduced encoder at every block: where object patches (coverage >=
       :data:`OBJECT_COVERAGE`) rank by ``S_avg`` (0 = most attended), the object share of the 16 most attended
       tokens, and the token norms (the register-artifact check of Darcet et al., arXiv 2309.16588: artifacts are
       background tokens with norms far above the rest that absorb attention). The class token's attention row is
       reported beside it for reference (the released code averages over every query; SigLIP has no class token).
    2. iLLaVA's plan (``illava_code`` at ``keep``) vs random dropping: share of object / background patches whose
       own token survives each encoder merge (object patches also split into interior ones, fully covered, and edge
       ones, partly covered: an attention-received ranking can keep an object's outline and drop its inside; each
       share is a mean over the scenes that have such patches), the
       object share of the tokens that reach the LM relative to the image, and objects left with no token of their
       own.
    3. Counting answers (accuracy, over- and under-counts) of the unreduced model, iLLaVA, its encoder stage alone,
       random dropping, and a ground-truth control: iLLaVA's encoder merge at the same layers and r with the
       ranking replaced by the object masks (objects first), which keeps every object token.
    4. The unreduced model's counting answers on the same scenes with every object's radius scaled by
       :data:`SIZE_FACTORS` (same objects, so the same true counts): whether it reads the count from object area.
    """
    data = scenes.scenes(int(n_scenes), "heldout", start=start)
    plan = plan_for_budget(OURS, keep, vlm.n_patches)
    rnd = plan_for_budget(RANDOM, keep, vlm.n_patches)
    compared = {p.method: p for p in (plan, rnd)}  # iLLaVA's encoder merges and random dropping, side by side
    ad, pre = vlm.adapter, vlm.adapter.prefix
    cov = {s.seed: torch.from_numpy(scenes.patch_coverage(s, vlm.patch)).float() for s in data}
    blocks: dict[int, dict[str, list[float]]] = {}
    kept: dict[str, dict[int, dict[str, list[float]]]] = {name: {} for name in compared}
    share: dict[str, list[float]] = {name: [] for name in compared}
    lost = dict.fromkeys(compared, 0)
    n_obj = []
    with torch.inference_mode():
        for si, s in enumerate(data):
            obj = cov[s.seed] >= OBJECT_COVERAGE
            inside = cov[s.seed] >= INTERIOR_COVERAGE
            parts = {"object": obj, "background": ~obj, "object_interior": inside, "object_edge": obj & ~inside}
            parts = {k: m.numpy() for k, m in parts.items() if bool(m.any())}  # a part a scene lacks is not averaged
            n_obj.append(int(obj.sum()))
            px = vlm.pixels([s.pil()])

            def probe(i: int, probs: torch.Tensor, ts: merging.TokenSet, obj: torch.Tensor = obj) -> None:
                s_avg = probs.mean((1, 2))[0, pre:]
                cls_row = probs[0, :, 0, pre:].mean(0)
                norms = ts.x[0, pre:].norm(dim=-1)
                rank = torch.empty_like(s_avg)
                rank[s_avg.argsort(descending=True)] = torch.arange(len(s_avg), dtype=s_avg.dtype)
                rank_cls = torch.empty_like(s_avg)
                rank_cls[cls_row.argsort(descending=True)] = torch.arange(len(s_avg), dtype=s_avg.dtype)
                top = s_avg.argsort(descending=True)[:16]
                med = float(norms.median())
                b = blocks.setdefault(i, {})
                for key, val in (("object_rank", float(rank[obj].mean()) / len(s_avg)),
                                 ("object_rank_cls_query", float(rank_cls[obj].mean()) / len(s_avg)),
                                 ("top16_object_share", float(obj[top].float().mean())),
                                 ("top16_attention_share", float(s_avg[top].sum())),
                                 ("top16_norm_over_median", float(norms[top].mean()) / med),
                                 ("max_norm_over_median", float(norms.max()) / med)):
                    b.setdefault(key, []).append(val)

            run_vit(ad, px, None, probe=probe)  # the unreduced encoder, every block's attention probabilities
            for name, pl in compared.items():
                run = run_vit(ad, px, vlm.seeded(pl, px), record=True)
                for rec in run.records:
                    d = kept[name].setdefault(rec.layer, {})
                    for part, m in parts.items():
                        d.setdefault(f"{part}_kept", []).append(float(rec.own[m].mean()))
                    d.setdefault("tokens_after", []).append(rec.n_after)
                pos = run.state.pos[0, pre:] - pre
                share[name].append(float(obj[pos].float().mean()) / max(float(obj.float().mean()), 1e-9))
                lost[name] += sum(int(not (obj & torch.from_numpy(scenes.patch_coverage(
                    scenes.Scene(s.seed, s.image, [o]), vlm.patch) >= OBJECT_COVERAGE))[pos].any()) for o in s.objects)
            report(progress, 0.4 * (si + 1) / len(data), f"encoder signals: scene {si + 1}/{len(data)}")

    def mean(d: dict[str, list[float]]) -> dict[str, float]:
        return {k: round(float(np.mean(v)), 4) for k, v in d.items()}

    def oracle(scene: scenes.Scene, ts: merging.TokenSet) -> torch.Tensor:
        c = torch.cat([torch.ones(pre), cov[scene.seed]])  # protected prefix, then the patches
        return (c[ts.pos] >= OBJECT_COVERAGE).float() + 1e-3 * c[ts.pos]  # objects first, then by coverage

    enc_only = ReductionPlan("illava_code", vit_layers=plan.vit_layers, vit_r=plan.vit_r)
    counting = {}
    plans = {"plan": plan, "encoder_only": enc_only, "random": rnd, "oracle": oracle}
    for j, name in enumerate(COUNTING_CONTROLS):
        pl, scorer = COUNTING_CONTROLS[name](plans)
        counting[name] = _count_answers(vlm, data, pl, scorer)
        report(progress, 0.4 + 0.5 * (j + 1) / len(COUNTING_CONTROLS), f"counting: {name}")
    by_size = {}  # the unreduced model on the same scenes with every object's radius scaled
    for f in SIZE_FACTORS:
        by_size[str(f)] = _count_answers(vlm, [scenes.with_object_scale(s, f) for s in data], None)
    report(progress, 1.0, "counting vs object size")
    return {
        "scenes": len(data), "start": start, "keep": keep, "plan": plan.label(), "random_plan": rnd.label(),
        "object_coverage": OBJECT_COVERAGE, "object_patches_mean": round(float(np.mean(n_obj)), 2),
        "encoder_blocks": {i: mean(b) for i, b in blocks.items()},
        "kept_per_merge_layer": {n: {i: mean(d) for i, d in v.items()} for n, v in kept.items()},
        "object_share_reaching_lm_over_image": {n: round(float(np.mean(v)), 4) for n, v in share.items()},
        "objects_without_own_token": lost,
        "counting": counting,
        "counting_unreduced_by_object_scale": by_size,
    }
