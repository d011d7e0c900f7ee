"""Measuring a reduction plan on the tiny VLM: accuracy on held-out scene questions (:func:`evaluate`), prefill time
(:func:`time_prefill`), one image and question in full (:func:`analyze`, what the page shows) and the method x budget
sweep (:func:`sweep`).

Prefill time is measured per request (batch 1) from pixels to the answer logits, float32 on CPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from ...registry import choose
from ...runtime import Progress, report
from . import merging, scenes
from .plan import ReductionPlan, StepRecord, plan_for_budget
from .tiny_vlm import Answer, Costs, TinyVLM, question_ids

# ====================================================================================================== evaluation
#: The LM position ids of the image tokens that leave the encoder (see :func:`evaluate`).
IMAGE_POSITIONS = ("sequence", "source")


@dataclass
class EvalResult:
    """Accuracy of one plan on held-out scene questions (closed answer sets, log-likelihood scoring)."""

    plan: dict[str, Any]
    label: str
    n_scenes: int
    n_questions: int
    accuracy: float
    chance: float
    per_type: dict[str, float]
    tokens_to_llm: int
    image_tokens_mean_llm: float
    macs: int
    seconds: float
    predictions: list[str] = field(default_factory=list)

    def to_dict(self, with_predictions: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_predictions:
            d.pop("predictions")
        return d


def evaluate(vlm: TinyVLM, scene_list: Sequence[scenes.Scene], plan: ReductionPlan | None = None,
             progress: Progress | None = None,
             encoder_scores: Callable[[scenes.Scene, merging.TokenSet], torch.Tensor] | None = None,
             image_positions: str = "sequence") -> EvalResult:
    """Answer every question of ``scene_list`` with ``plan``. Each image is encoded once (with the plan's encoder
    merges) and its prefix cached; the questions of a scene then run as one batch (exactly the per-request answers,
    see :meth:`LlamaRunner.questions`). ``encoder_scores(scene, tokens)`` (diagnostics only) replaces the encoder
    ranking signal (see :func:`.patch.vit.run_vit`). ``image_positions``: the LM position ids of the image tokens that leave
    the encoder: ``"sequence"`` (consecutive, as LLaVA-style models feed them, the released code's behaviour) or
    ``"source"`` (a diagnostic: each token at the position its own patch has in the unreduced prompt, tokens in
    patch order, the question after all 256 patch positions)."""
    image_positions = choose(image_positions, IMAGE_POSITIONS, "image_positions")
    plan = plan or ReductionPlan()
    plan.validate(vlm.adapter.num_layers, vlm.runner.num_layers, vlm.n_patches)
    steps = plan.llm_steps()
    first = min(steps) if steps else None
    t0 = time.perf_counter()
    correct, total, chance = 0, 0, 0.0
    by_type: dict[str, list[int]] = {}
    preds: list[str] = []
    vit_counts: list[int] = []
    llm_counts: list[int] = []
    text_lens: list[int] = []
    for si, scene in enumerate(scene_list):
        px = vlm.pixels([scene.pil()])
        p_img = vlm.seeded(plan, px)
        override = None if encoder_scores is None else (lambda ts, sc=scene: encoder_scores(sc, ts))
        emb, src, run = vlm.encode(px, p_img, scores_override=override)
        prefix = torch.cat([vlm.prefix_emb, emb], 1)
        if image_positions == "source":
            own = run.state.pos[:, vlm.adapter.prefix :] - vlm.adapter.prefix  # [1, N'] patch of each token
            order = own[0].argsort()
            emb, src, own = emb[:, order], src[:, order], own[:, order]
            prefix = torch.cat([vlm.prefix_emb, emb], 1)
            pos = torch.cat([torch.arange(vlm.img_start)[None], vlm.img_start + own], 1)
            cache = vlm.runner.prefix_cache(prefix, upto=first, pos=pos, next_pos=vlm.img_start + vlm.n_patches)
        else:
            cache = vlm.runner.prefix_cache(prefix, upto=first)
        qe, lens = vlm.question_embeds([q.text for q in scene.questions])
        out = vlm.runner.questions(cache, qe, lens, vlm.img_start, emb.shape[1], src, p_img)
        logits = vlm.answer_logits(out.last)
        for q, lg in zip(scene.questions, logits, strict=True):
            ans = vlm.pick(lg, q.candidates).answer
            ok = int(ans == q.answer)
            preds.append(ans)
            correct += ok
            total += 1
            chance += q.chance
            by_type.setdefault(q.kind, []).append(ok)
        vit_counts, llm_counts = run.tokens_per_layer, out.image_tokens_per_layer
        text_lens.extend(int(x) for x in lens)
        report(progress, (si + 1) / len(scene_list), f"{plan.label()}: scene {si + 1}/{len(scene_list)}")
    costs = vlm.costs(vit_counts, llm_counts, int(round(float(np.mean(text_lens))))) if text_lens else None
    return EvalResult(
        plan=plan.to_dict(), label=plan.label(), n_scenes=len(scene_list), n_questions=total,
        accuracy=correct / max(1, total), chance=chance / max(1, total),
        per_type={k: sum(v) / len(v) for k, v in sorted(by_type.items())},
        tokens_to_llm=int(vit_counts[-1] - vlm.adapter.prefix) if vit_counts else 0,
        image_tokens_mean_llm=float(np.mean(llm_counts)) if llm_counts else 0.0,
        macs=costs.total if costs else 0, seconds=time.perf_counter() - t0, predictions=preds,
    )


# =========================================================================================================== timing
def time_prefill(vlm: TinyVLM, image: Any, question: str, plans: dict[str, ReductionPlan | None],
                 repeats: int = 5, progress: Progress | None = None) -> dict[str, dict[str, float]]:
    """Median wall time of one request (batch 1, pixels -> answer logits) for each plan, measured interleaved
    (round-robin, after one warm-up each) so that load changes hit all plans alike. ``plans`` maps a name to a plan;
    the value ``None`` means the unreduced model on the libraries' fast path (:meth:`TinyVLM.reference_prefill`).
    Returns ``{name: {"median_s", "min_s", "runs"}}``."""
    px = vlm.pixels([image])
    names = list(plans)
    times: dict[str, list[float]] = {n: [] for n in names}

    def once(name: str) -> float:
        plan = plans[name]
        t = time.perf_counter()
        if plan is None:
            vlm.reference_prefill(px, question)
        else:
            vlm.prefill(px, question, vlm.seeded(plan, px))
        return time.perf_counter() - t

    for n in names:
        once(n)
    for rep in range(int(repeats)):
        for n in names:
            times[n].append(once(n))
        report(progress, (rep + 1) / repeats, f"timing {rep + 1}/{repeats}")
    return {n: {"median_s": float(np.median(v)), "min_s": float(np.min(v)), "runs": len(v)} for n, v in times.items()}


# ========================================================================================================= analysis
@dataclass
class Analysis:
    """Everything the page shows for one image and question: answers with and without reduction, each step's
    records on the patch grid, token counts per layer, per-layer costs and prefill times (seconds)."""

    question: str
    plan: dict[str, Any]
    label: str
    grid: int
    image: np.ndarray  # [S, S, 3] uint8, the encoder's input
    full: Answer
    reduced: Answer
    vit_records: list[StepRecord]
    llm_records: list[StepRecord]
    vit_tokens: list[int]
    llm_image_tokens: list[int]
    llm_image_tokens_full: list[int]
    costs_full: Costs
    costs_reduced: Costs
    time_full_s: float
    time_reduced_s: float

    def summary(self) -> dict[str, Any]:
        return {
            "question": self.question, "plan": self.plan, "label": self.label,
            "answer_full": asdict(self.full), "answer_reduced": asdict(self.reduced),
            "encoder_tokens_per_layer": self.vit_tokens, "llm_image_tokens_per_layer": self.llm_image_tokens,
            "tokens_to_llm": self.vit_tokens[-1] - 1,
            "steps": [r.to_dict() for r in self.vit_records + self.llm_records],
            "macs_full": self.costs_full.total, "macs_reduced": self.costs_reduced.total,
            "prefill_full_s": round(self.time_full_s, 4), "prefill_reduced_s": round(self.time_reduced_s, 4),
            "speedup": round(self.time_full_s / max(self.time_reduced_s, 1e-9), 3),
        }


def analyze(vlm: TinyVLM, image: Any, question: str, plan: ReductionPlan, repeats: int = 3,
            candidates: Sequence[str] | None = None, progress: Progress | None = None) -> Analysis:
    """Answer ``question`` about ``image`` (a PIL image) with and without ``plan`` and record every step."""
    plan.validate(vlm.adapter.num_layers, vlm.runner.num_layers, vlm.n_patches)
    cands = list(candidates or scenes.candidates_for(question))
    question_ids(vlm.lm.tokenizer, question)  # validates the question
    report(progress, 0.05, "encoding and answering (unreduced)")
    px = vlm.pixels([image])
    p_img = vlm.seeded(plan, px)
    full_logits, vit0, llm0 = vlm.prefill(px, question, None)
    report(progress, 0.25, "answering with reduction")
    red_logits, vit1, llm1 = vlm.prefill(px, question, p_img, record=True)
    report(progress, 0.4, "timing prefill")
    times = time_prefill(vlm, image, question, {"full": None, "reduced": p_img}, repeats=repeats,
                         progress=lambda f, m="": report(progress, 0.4 + 0.6 * f, m))
    text_len = len(question_ids(vlm.lm.tokenizer, question))
    img = np.asarray(image.convert("RGB").resize((vlm.image_size, vlm.image_size)))
    return Analysis(
        question=question, plan=plan.to_dict(), label=plan.label(), grid=vlm.grid, image=img,
        full=vlm.pick(full_logits, cands), reduced=vlm.pick(red_logits, cands),
        vit_records=vit1.records, llm_records=llm1.records, vit_tokens=vit1.tokens_per_layer,
        llm_image_tokens=llm1.image_tokens_per_layer, llm_image_tokens_full=llm0.image_tokens_per_layer,
        costs_full=vlm.costs(vit0.tokens_per_layer, llm0.image_tokens_per_layer, text_len),
        costs_reduced=vlm.costs(vit1.tokens_per_layer, llm1.image_tokens_per_layer, text_len),
        time_full_s=times["full"]["median_s"], time_reduced_s=times["reduced"]["median_s"],
    )


# ============================================================================================================ sweep
SWEEP_METHODS = tuple(merging.METHODS.names(kind="ours") + merging.METHODS.names(kind="baseline"))
SWEEP_KEEPS = (2 / 3, 1 / 3, 2 / 9)


def sweep(vlm: TinyVLM, n_scenes: int = 40, keeps: Sequence[float] = SWEEP_KEEPS,
          methods: Sequence[str] = SWEEP_METHODS, time_repeats: int = 3, start: int = 0,
          progress: Progress | None = None) -> list[dict[str, Any]]:
    """Accuracy vs tokens kept vs prefill time for every method on ``n_scenes`` held-out scenes (all their
    questions), each at the image-token budgets ``keeps`` (fractions of 256), plus the unreduced model.

    Rows: ``method, keep, label, accuracy, chance, per_type, tokens_to_llm, image_tokens_mean_llm, macs,
    prefill_s, speedup`` (prefill of one request, median, interleaved with the unreduced reference; ``speedup`` =
    reference / method)."""
    from .scenes import scenes as make_scenes

    if n_scenes < 1:
        raise InputError("The sweep needs at least one scene.")
    data = make_scenes(int(n_scenes), "heldout", start=start)
    unreduced = ReductionPlan()
    configs: list[tuple[str, float, ReductionPlan]] = [(unreduced.method, 1.0, unreduced)]
    for keep in keeps:
        for m in methods:
            configs.append((merging.get_method(m).name, float(keep), plan_for_budget(m, keep, vlm.n_patches)))
    rows = []
    for ci, (m, keep, plan) in enumerate(configs):
        sub = lambda f, msg="", ci=ci: report(progress, (ci + 0.8 * f) / len(configs), msg)  # noqa: E731
        res = evaluate(vlm, data, plan, progress=sub)
        t = time_prefill(vlm, data[0].pil(), data[0].questions[0].text, {"ref": None, "plan": plan},
                         repeats=time_repeats)
        rows.append({
            "method": m, "keep": round(keep, 4), "label": res.label, "accuracy": res.accuracy, "chance": res.chance,
            "per_type": res.per_type, "n_questions": res.n_questions, "tokens_to_llm": res.tokens_to_llm,
            "image_tokens_mean_llm": res.image_tokens_mean_llm, "macs": res.macs,
            "prefill_s": t["plan"]["median_s"], "reference_s": t["ref"]["median_s"],
            "speedup": t["ref"]["median_s"] / max(t["plan"]["median_s"], 1e-9),
        })
        report(progress, (ci + 1) / len(configs), f"{res.label}: accuracy {res.accuracy:.3f}")
    return rows
