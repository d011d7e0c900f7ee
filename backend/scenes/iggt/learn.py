"""Training and inference of the miniature IGGT network on cached multi-view data (:func:`backend.scenes.iggt.data.dataset`).

:func:`train`: AdamW (learning rate ``lr``, cosine decay, weight decay 1e-4) for ``steps`` steps of ``batch``
scenes; each item takes 2 or 3 of the scene's cached views in a random order (so every view is sometimes the
reference), and the loss is :func:`backend.scenes.iggt.model.scene_losses`. Same seed and data, same weights (torch
generator and numpy stream keyed by the seed; one thread). :func:`predict`: the network on one
:class:`backend.scenes.iggt.data.ViewSet` -> log depth ``[V, 64, 64]`` and features ``[V, 64, 64, 8]`` (numpy).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from .model import IGGTNet, LossConfig, NetConfig, scene_losses


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 400
    batch: int = 4
    lr: float = 2e-3
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def _batch(data: dict[str, np.ndarray], rng: np.random.Generator, batch: int) -> tuple[torch.Tensor, ...]:
    s, v = data["dino"].shape[:2]
    idx = rng.choice(s, size=batch, replace=False)
    nv = int(rng.integers(2, min(3, v) + 1))
    order = np.stack([rng.permutation(v)[:nv] for _ in idx])
    take = (idx[:, None], order)
    dino = torch.from_numpy(data["dino"][take].astype(np.float32))
    rgb = torch.from_numpy(data["rgb"][take].astype(np.float32) / 255.0)
    depth = torch.from_numpy(data["depth"][take].astype(np.float32))
    inst = torch.from_numpy(data["instance"][take].astype(np.int64))
    return dino, rgb, depth, inst


def train(data: dict[str, np.ndarray], cfg: TrainConfig, net: NetConfig | None = None,
          loss_cfg: LossConfig | None = None, log: Any = print) -> tuple[IGGTNet, dict]:
    """Train a fresh :class:`IGGTNet` (init from ``torch.manual_seed(cfg.seed)``); returns it and a summary."""
    torch.manual_seed(cfg.seed)
    model = IGGTNet(net)
    lc = loss_cfg or LossConfig()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * min(s, cfg.steps) / cfg.steps)))
    rng = np.random.default_rng([cfg.seed, 11])
    gen = torch.Generator().manual_seed(cfg.seed)
    t0 = time.perf_counter()
    hist: list[dict] = []
    model.train()
    for step in range(cfg.steps):
        dino, rgb, depth, inst = _batch(data, rng, cfg.batch)
        ld, f = model(dino, rgb)
        loss, parts = scene_losses(ld, f, depth, inst, lc, gen)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        hist.append(parts)
        if log and (step % 50 == 0 or step == cfg.steps - 1):
            last = hist[-50:]
            log(f"seed {cfg.seed} step {step}: " + ", ".join(
                f"{k} {np.mean([h[k] for h in last]):.4f}" for k in parts) + f" ({time.perf_counter() - t0:.0f} s)")
    model.eval()
    last = hist[-50:]
    return model, {"seconds": round(time.perf_counter() - t0, 1),
                   **{f"final_{k}": round(float(np.mean([h[k] for h in last])), 4) for k in hist[-1]}}


def predict(model: IGGTNet, dino: np.ndarray, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``dino [V, 16, 16, 384]``, ``rgb [V, 64, 64, 3]`` in [0, 1] -> log depth ``[V, 64, 64]``, features
    ``[V, 64, 64, 8]`` (float32 numpy)."""
    with torch.inference_mode():
        ld, f = model(torch.from_numpy(np.asarray(dino, np.float32))[None],
                      torch.from_numpy(np.asarray(rgb, np.float32))[None])
    return ld[0].numpy(), f[0].numpy()


def weights_path(seed: int, folder: Any = None) -> Any:
    """``assets/iggt_seed<seed>.safetensors`` (or the same name in ``folder``)."""
    from pathlib import Path

    from ...runtime import ASSETS

    return Path(folder or ASSETS) / f"iggt_seed{int(seed)}.safetensors"


def load_model(seed: int = 0, path: Any = None) -> IGGTNet:
    """A shipped network (``python -m backend.train iggt``) or another file of that script."""
    from ... import weights

    p = path or weights_path(seed)
    meta = weights.read_meta(p) if p.is_file() else None
    model = IGGTNet(NetConfig(**(meta.config.get("net", {}) if meta else {})))
    weights.load_into(model, p, made_by="python -m backend.train iggt")
    return model
