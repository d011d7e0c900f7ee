"""GRPO post-training of the tiny VLM on 2 x 2 jigsaws (policy (b); the scorer and the evaluations are :mod:`.vlm`).

One step: ``batch`` training puzzles (a few hundred distinct procedural scenes, scene seeds from
:data:`~.vlm.TRAIN_SEED0`, disjoint from every held-out set), each scored over its 24 answers from the cached encoder
tokens; ``group`` answers drawn per puzzle from the policy (the softmax of the 24 scores, temperature 1); the graded
reward (gamma = 0.2, + 0.2 format); group-normalised advantages and :func:`backend.reasoning.grpo.grpo_loss` with no
KL term (``beta = 0``; one update per batch of samples, so the ratio is 1 and the gradient is the policy gradient);
the gradient norm clipped at 1; one Adam step on the projector (unless its ``lr`` is 0) and, with ``lora_rank`` > 0, on LoRA adapters of the
language model's attention (q and v projections of every layer, on top of the iLLaVA adapters already merged).
The vision encoder and every other weight stay as shipped.

Every ``eval_every`` steps the learning curve is measured on the first ``curve_puzzles`` held-out scene puzzles
(exact-solve rate, probability of the true order, expected reward). :func:`train_and_save` evaluates before and
after (held-out scenes and photographs; the scene questions) and writes the trained tensors (float16) with the
whole record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from . import vlm as V


@dataclass(frozen=True)
class VLMTrainConfig:
    """``steps`` Adam steps of ``batch`` puzzles x ``group`` sampled answers; ``lr`` the projector's learning rate
    (0: the projector stays as shipped),
    ``lora_rank`` (0: projector only) and ``lora_lr`` the adapters'; ``train_puzzles`` distinct training puzzles
    (cycled in a fresh random order each pass); ``eval_every`` / ``curve_puzzles`` the held-out learning curve."""

    steps: int = 300
    batch: int = 2
    group: int = 16
    lr: float = 1e-3
    lora_rank: int = 8
    lora_lr: float = 1e-3
    train_puzzles: int = 400
    eval_every: int = 50
    curve_puzzles: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.steps <= 5000 or not 1 <= self.batch <= 32 or not 2 <= self.group <= 256:
            raise InputError("steps 1-5000, batch 1-32 and group 2-256, please.")
        if not 0 <= self.lora_rank <= 64 or self.lr < 0 or self.lora_lr <= 0:
            raise InputError("lora_rank 0-64, a projector learning rate of 0 (frozen) or more and a positive LoRA "
                             "learning rate, please.")
        if self.lr == 0 and self.lora_rank == 0:
            raise InputError("Nothing to train: the projector is frozen (lr 0) and there is no LoRA (rank 0).")


def _curve_point(scorer: V.JigsawScorer, tokens: torch.Tensor, truth: np.ndarray, step: int) -> dict[str, float]:
    m = V.jigsaw_metrics(scorer, tokens, truth)
    return {"step": int(step), "solve": round(float(np.mean(m["exact"])), 4),
            "p_true": round(float(np.mean(m["p_true"])), 4), "reward": round(float(np.mean(m["reward"])), 4)}


def train(base: Any, cfg: VLMTrainConfig, log: Callable[[str], None] | None = None
          ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None, dict[str, Any]]:
    """GRPO (see the module docstring) from ``base`` (left as it was); returns the trained projector's tensors, the
    LoRA adapters' (or None) and the history: per step ``reward`` (mean over the batch's sampled answers),
    ``p_truth`` (mean probability of the true order), ``exact`` (share of sampled answers that are exact); ``curve``:
    held-out points; ``seconds``."""
    import copy

    from ...reasoning.grpo import GRPOConfig, group_advantages, grpo_loss
    from ...tokens.illava.projector import LoRA

    torch.manual_seed(cfg.seed)
    scorer0 = V.JigsawScorer(base)
    tokens, truth = V.puzzle_tokens(scorer0, "scenes", cfg.train_puzzles)
    ctoks, ctruth = V.puzzle_tokens(scorer0, "scenes_val", cfg.curve_puzzles)
    table = V.reward_table(truth)  # [N, 24]
    t_idx = V.truth_index(truth)

    lm = base.lm.model
    flags = {id(p): p.requires_grad for p in lm.parameters()}
    for p in lm.parameters():
        p.requires_grad_(False)
    new = copy.copy(base)
    proj = copy.deepcopy(base.projector)
    proj.train()
    for p in proj.parameters():
        p.requires_grad_(cfg.lr > 0)
    new.projector = proj
    groups = [{"params": list(proj.parameters()), "lr": cfg.lr}] if cfg.lr > 0 else []
    lora, handles = None, []
    if cfg.lora_rank:
        lora = LoRA(lm.model.layers, rank=cfg.lora_rank, alpha=2.0 * cfg.lora_rank)
        handles = lora.attach(lm.model.layers)
        groups.append({"params": list(lora.parameters()), "lr": cfg.lora_lr})
    scorer = V.JigsawScorer(new)
    opt = torch.optim.Adam(groups)
    gcfg = GRPOConfig(beta=0.0)
    gen = torch.Generator().manual_seed(50_000 + cfg.seed)
    hist: dict[str, Any] = {"reward": [], "p_truth": [], "exact": [], "curve": []}
    t0 = time.perf_counter()
    order: list[int] = []
    try:
        hist["curve"].append(_curve_point(scorer, ctoks, ctruth, 0))
        for step in range(1, int(cfg.steps) + 1):
            if len(order) < cfg.batch:
                order += torch.randperm(len(tokens), generator=gen).tolist()
            idx, order = order[:cfg.batch], order[cfg.batch:]
            logp = torch.log_softmax(scorer.scores_from_tokens(tokens[idx], grad=True), -1)  # [B, 24]
            pick = torch.multinomial(logp.detach().exp(), cfg.group, replacement=True, generator=gen)  # [B, G]
            rewards = torch.from_numpy(np.take_along_axis(table[idx], pick.numpy(), 1)).float()
            adv = group_advantages(rewards).flatten()
            lp = logp.gather(1, pick).reshape(-1, 1)
            loss, _ = grpo_loss(lp, lp.detach(), adv, torch.ones_like(lp), gcfg)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
            opt.step()
            hist["reward"].append(round(float(rewards.mean()), 4))
            hist["p_truth"].append(round(float(logp.detach().exp()[torch.arange(len(idx)), t_idx[idx]].mean()), 4))
            hist["exact"].append(round(float((pick == torch.from_numpy(t_idx[idx])[:, None]).float().mean()), 4))
            if step % cfg.eval_every == 0 or step == cfg.steps:
                hist["curve"].append(_curve_point(scorer, ctoks, ctruth, step))
            if log and (step % 10 == 0 or step == 1):
                last = hist["curve"][-1]
                log(f"vlm step {step}: reward {np.mean(hist['reward'][-10:]):.3f} p(truth) "
                    f"{np.mean(hist['p_truth'][-10:]):.3f} | held-out at step {last['step']}: solve {last['solve']:.3f} "
                    f"p(true) {last['p_true']:.3f} ({time.perf_counter() - t0:.0f} s)")
    finally:
        for h in handles:
            h.remove()
        for p in lm.parameters():
            p.requires_grad_(flags[id(p)])
    hist["seconds"] = round(time.perf_counter() - t0, 1)
    hist["seconds_per_step"] = round(hist["seconds"] / max(1, int(cfg.steps)), 3)
    state = {k: v.detach().half() for k, v in proj.state_dict().items()}
    lstate = {k: v.detach().half() for k, v in lora.tensors().items()} if lora is not None else None
    return state, lstate, hist


def _paired(after: list[float], before: list[float]) -> dict[str, Any]:
    from ...stats import paired_ci

    ci = paired_ci(after, before)
    return {"before": round(float(np.mean(before)), 4), "after": round(float(np.mean(after)), 4),
            "change": round(ci.mean, 4), "change_ci": [round(float(ci.low), 4), round(float(ci.high), 4)], "n": ci.n}


def jigsaw_summary(before: dict[str, dict[str, list]], after: dict[str, dict[str, list]]) -> dict[str, Any]:
    """Per source: solve rate, p(true order) and expected reward before and after with paired 95 % t intervals over
    the puzzles, and p(true order) after against chance 1/24."""
    from ...stats import paired_ci

    out: dict[str, Any] = {}
    for src in before:
        d = {m: _paired(after[src][m], before[src][m]) for m in ("exact", "p_true", "reward", "tiles")}
        vs = paired_ci(after[src]["p_true"], [V.CHANCE] * len(after[src]["p_true"]))
        d["p_true_after_vs_chance"] = {"gain": round(float(vs.mean), 4),
                                       "gain_ci": [round(float(vs.low), 4), round(float(vs.high), 4)]}
        out[src] = d
    return out


def train_and_save(cfg: VLMTrainConfig, qa_scenes: int, command: str, out_dir: Path | None = None,
                   log: Callable[[str], None] | None = None, eval_counts: dict[str, int] | None = None) -> Path:
    """Evaluate the base model, train, evaluate the post-trained one, write the file (see the module docstring).
    ``eval_counts``: held-out puzzles per source (default :data:`~.vlm.EVAL_COUNTS`)."""
    from ... import weights
    from ...stats import paired_bootstrap

    log = log or (lambda m: None)
    t0 = time.perf_counter()
    base = V.load_base()
    sc = V.JigsawScorer(base)
    counts = dict(eval_counts or V.EVAL_COUNTS)
    before = {src: V.jigsaw_eval(sc, src, n) for src, n in counts.items()}
    log(f"jigsaw before: {({k: float(np.mean(v['exact'])) for k, v in before.items()})} "
        f"({time.perf_counter() - t0:.0f} s)")
    state, lora, hist = train(base, cfg, log=log)
    new = V.with_weights(base, state, lora)
    sc2 = V.JigsawScorer(new)
    after = {src: V.jigsaw_eval(sc2, src, n) for src, n in counts.items()}
    summary = jigsaw_summary(before, after)
    log(f"jigsaw after: {summary} ({time.perf_counter() - t0:.0f} s)")
    qa_before, kinds = V.qa_range(base, qa_scenes)
    log(f"questions before: {np.mean(qa_before):.4f} ({time.perf_counter() - t0:.0f} s)")
    qa_after, _ = V.qa_range(new, qa_scenes)
    ci = paired_bootstrap(lambda a, b: float(np.mean(a) - np.mean(b)), qa_after, qa_before, seed=0)
    quality = {
        "jigsaw": summary,
        "jigsaw_solve_before": {k: round(float(np.mean(v["exact"])), 4) for k, v in before.items()},
        "jigsaw_solve_after": {k: round(float(np.mean(v["exact"])), 4) for k, v in after.items()},
        "qa_questions": len(qa_before), "qa_scenes": int(qa_scenes),
        "qa_accuracy_before": round(float(np.mean(qa_before)), 4),
        "qa_accuracy_after": round(float(np.mean(qa_after)), 4),
        "qa_change": round(ci.mean, 4), "qa_change_ci": [round(ci.low, 4), round(ci.high, 4)],
        "train_seconds": hist["seconds"], "seconds_per_step": hist["seconds_per_step"],
        "training": {"steps": cfg.steps, "batch": cfg.batch, "group": cfg.group, "train_puzzles": cfg.train_puzzles,
                     "lr": cfg.lr, "lora_rank": cfg.lora_rank, "lora_lr": cfg.lora_lr,
                     "projector_params": int(sum(v.numel() for v in state.values())),
                     "lora_params": int(sum(v.numel() for k, v in (lora or {}).items() if k != "lora.scale"))},
        "command": "python -m backend jigsaw vlm --json"}
    log(f"quality {quality}")
    path = (out_dir / V.VLM_FILE.name) if out_dir else V.VLM_FILE
    tensors = dict(state)
    tensors.update(lora or {})
    weights.save(path, tensors,
                 config={"base": "assets/illava_projector.safetensors", **asdict(cfg), "reward": "graded",
                         "gamma": 0.2, "kl": 0.0, "jigsaw_px": V.JIGSAW_PX, "question": V.QUESTION,
                         "lora_targets": ["q_proj", "v_proj"] if lora else []},
                 command=command,
                 data_seeds={"train": ["scenes", V.TRAIN_SEED0, V.TRAIN_SEED0 + cfg.train_puzzles],
                             "train_shuffles": V.TRAIN_SHUFFLE0,
                             "eval": {src: [src, 0, n, V.EVAL_SEED] for src, n in counts.items()},
                             "qa": ["illava heldout", 0, int(qa_scenes)], "samples": 50_000 + cfg.seed},
                 quality=quality, extra={"history": hist, "qa_before": qa_before, "qa_after": qa_after,
                                         "qa_kinds": kinds, "jigsaw_before": before, "jigsaw_after": after})
    log(f"wrote {path.name} in {time.perf_counter() - t0:.0f} s")
    return path
