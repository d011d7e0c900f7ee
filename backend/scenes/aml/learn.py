"""Training and evaluation of the head with each masking (``MASKINGS``), on cached features.

One step: a batch of ``batch`` samples; unless the masking needs no map (``none``), pass 1 computes PatchMax from the head's
current features under ``torch.no_grad`` and the masking picks blocks; pass 2 is the ordinary loss (BCE + Dice) on the
masked input, and only pass 2 has a gradient (the paper). ``unmasked_weight`` > 0 adds that share of the loss on the
unmasked input (the official ``train.py`` back-propagates 0.5 x each pass); the shipped runs use 0. Every run sees the
same batches for a given seed (the batch order and the initial weights depend on the seed only), so the arms differ
by the masking alone. Evaluation every ``eval_every`` steps on the in-distribution ``val`` split and the ``heldout``
source gives the mIoU curves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from .features import FeatureSet
from .masking import MASKINGS, MaskConfig, apply_blocks, patchmax, projection
from .model import HeadConfig, RefSegHead, iou_parts, normalise_images, predict_masks, scores, seg_loss, target_28


@dataclass(frozen=True)
class TrainConfig:
    masking: str = "aml"
    steps: int = 400
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 1e-4
    seed: int = 0
    eval_every: int = 80
    unmasked_weight: float = 0.0
    head: HeadConfig = field(default_factory=HeadConfig)
    mask: MaskConfig = field(default_factory=MaskConfig)


@dataclass
class TrainResult:
    model: RefSegHead
    seconds: float
    curves: dict[str, list[float]]
    losses: list[float]
    masked_share: float


@torch.no_grad()
def evaluate(model: RefSegHead, data: FeatureSet, batch: int = 100) -> dict[str, float]:
    """mIoU, oIoU and prec@0.5/0.7/0.9 (percent) of ``model`` on ``data`` (full images, no masking)."""
    model.eval()
    inters, unions = [], []
    for i in range(0, len(data), batch):
        sl = slice(i, i + batch)
        logits = model(data.patches[sl], data.tokens[sl], data.token_mask[sl], normalise_images(data.images[sl]))
        a, b = iou_parts(predict_masks(logits), data.masks[sl])
        inters.append(a)
        unions.append(b)
    return scores(torch.cat(inters), torch.cat(unions))


def train(cfg: TrainConfig, data: FeatureSet, evals: dict[str, FeatureSet] | None = None,
          log=None, token=None) -> TrainResult:  # noqa: ANN001
    """Train a head with ``cfg.masking`` on ``data``; ``evals`` (name -> set) are scored every ``eval_every`` steps."""
    mask_fn = MASKINGS.get(cfg.masking)
    torch.manual_seed(cfg.seed)
    model = RefSegHead(cfg.head)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=cfg.steps, pct_start=0.1)
    order = torch.Generator().manual_seed(1000 + cfg.seed)
    draws = torch.Generator().manual_seed(2000 + cfg.seed)
    proj = projection(cfg.head.width, cfg.mask.proj_dim, cfg.mask.proj_seed)
    pixels_all = normalise_images(data.images)
    targets_all = target_28(data.masks)
    curves: dict[str, list[float]] = {"step": []}
    losses: list[float] = []
    masked, seen = 0, 0
    t0 = time.perf_counter()
    eval_time = 0.0
    for step in range(cfg.steps):
        if token is not None:
            token.check()
        idx = torch.randint(len(data), (cfg.batch,), generator=order)
        patches, tokens, tmask = data.patches[idx].float(), data.tokens[idx].float(), data.token_mask[idx]
        pixels, target = pixels_all[idx], targets_all[idx]
        model.train()
        if getattr(mask_fn, "needs_patchmax", True):
            with torch.no_grad():
                vis, txt = model.features(patches, tokens)
                pm = patchmax(vis, txt, tmask, cfg.mask, proj)
            blocks = mask_fn(pm, cfg.mask, draws)
            masked += int(blocks.sum())
            seen += blocks.numel()
            mp, mpx = apply_blocks(patches, pixels, blocks)
            loss = seg_loss(model(mp, tokens, tmask, mpx), target)
            if cfg.unmasked_weight > 0:
                loss = (1 - cfg.unmasked_weight) * loss + cfg.unmasked_weight * seg_loss(
                    model(patches, tokens, tmask, pixels), target)
        else:
            loss = seg_loss(model(patches, tokens, tmask, pixels), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if evals and ((step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps):
            te = time.perf_counter()
            curves["step"].append(step + 1)
            for name, ev in evals.items():
                curves.setdefault(f"{name}_miou", []).append(round(evaluate(model, ev)["miou"], 3))
            eval_time += time.perf_counter() - te
            if log:
                log(f"{cfg.masking} s{cfg.seed} step {step + 1} loss {sum(losses[-50:]) / len(losses[-50:]):.3f} "
                    + " ".join(f"{k} {v[-1]:.1f}" for k, v in curves.items() if k != "step")
                    + f" masked {masked / max(seen, 1):.2f}")
    model.eval()
    return TrainResult(model, time.perf_counter() - t0 - eval_time, curves, losses, masked / max(seen, 1))
