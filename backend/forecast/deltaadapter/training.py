"""One trainer for every learned piece of the page (backbones, adapters, masks, LoRA, fine-tuning, calibrators).

Adam (or AdamW) on mini-batches, at most ``epochs`` passes, early stopping on the validation loss with ``patience``,
the best state restored at the end, optional gradient clipping. Wall time and the loss curves are returned so the page
and the benchmark can put costs beside quality.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from backend.runtime import CancelToken, Progress, report


@dataclass
class FitConfig:
    """``epochs``/``patience``/``lr`` follow the official scripts (about 10 epochs, early stopping, Adam 1e-3)."""

    epochs: int = 10
    lr: float = 1e-3
    batch: int = 64
    patience: int = 3
    weight_decay: float = 0.0
    optimizer: str = "adam"
    clip: float | None = None


@dataclass
class FitLog:
    train: list[float] = field(default_factory=list)
    val: list[float] = field(default_factory=list)
    seconds: float = 0.0
    epochs_run: int = 0


def fit(params: list[torch.nn.Parameter], loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        modules: list[torch.nn.Module], x: torch.Tensor, y: torch.Tensor, xv: torch.Tensor, yv: torch.Tensor,
        cfg: FitConfig, seed: int = 0, val_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
        progress: Progress | None = None, cancel: CancelToken | None = None) -> FitLog:
    """Train ``params`` on ``loss_fn(xb, yb)``; ``val_fn`` (default ``loss_fn`` under no_grad, modules in eval mode)
    picks the best epoch. ``modules`` are switched between train and eval mode and restored to their best state."""
    g = torch.Generator().manual_seed(seed)
    opt_cls = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
    opt = opt_cls(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    val_fn = val_fn or loss_fn
    log = FitLog()
    best, best_state, bad = float("inf"), None, 0
    t0 = time.perf_counter()
    n = len(x)
    for ep in range(cfg.epochs):
        for m in modules:
            m.train()
        perm = torch.randperm(n, generator=g)
        tot = 0.0
        for i in range(0, n, cfg.batch):
            idx = perm[i:i + cfg.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(x[idx], y[idx])
            loss.backward()
            if cfg.clip:
                torch.nn.utils.clip_grad_norm_(params, cfg.clip)
            opt.step()
            tot += float(loss.detach()) * len(idx)
        for m in modules:
            m.eval()
        with torch.no_grad():
            v = float(val_fn(xv, yv))
        log.train.append(tot / n)
        log.val.append(v)
        log.epochs_run = ep + 1
        if v < best - 1e-7:
            best, bad = v, 0
            best_state = [{k: t.detach().clone() for k, t in m.state_dict().items()} for m in modules]
        else:
            bad += 1
        report(progress, (ep + 1) / cfg.epochs, f"epoch {ep + 1}: val {v:.4f}")
        if cancel is not None:
            cancel.check()
        if bad >= cfg.patience:
            break
    if best_state is not None:
        for m, s in zip(modules, best_state, strict=True):
            m.load_state_dict(s)
    for m in modules:
        m.eval()
    log.seconds = time.perf_counter() - t0
    return log


def count(params: list[torch.nn.Parameter]) -> int:
    return int(sum(p.numel() for p in params))
