"""The forecasters: the latent flow generator and its baselines, one registry.

Each method is ``fn(models, tokens, k, seed) -> samples`` with ``tokens`` ``[B, 64, 384]`` (DINOv2 patch tokens)
and ``samples`` float32 numpy ``[B, K, G, G, T, 2]`` (pixels); ``models`` is a :class:`Models` bundle of one
training seed. The same ``seed`` gives the same samples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ...registry import Registry
from .model import FlowNet, NetConfig, Regressor, TrajVAE, from_channels, sample_latents
from .world import make_scene


@dataclass
class Models:
    """The shipped networks of one training seed plus the retrieval bank."""

    seed: int
    cfg: NetConfig
    vae: TrajVAE
    flow: FlowNet
    zscale: torch.Tensor
    reg: Regressor
    sigma: torch.Tensor  # [T, 2] network units
    bank_tokens: torch.Tensor  # [N, 384] mean patch tokens of training scenes
    bank_seeds: np.ndarray  # [N]
    flow_steps: int = 12

    def parameters(self, method: Callable[..., Any]) -> int:
        """The number of trained (or stored) values the method reads: the attributes named in its ``uses``."""
        total = 0
        for attr in getattr(method, "uses", ()):
            obj = getattr(self, attr)
            total += sum(p.numel() for p in obj.parameters()) if isinstance(obj, torch.nn.Module) else int(obj.numel())
        return total


@torch.no_grad()
def run_flow(models: Models, tokens: torch.Tensor, k: int, seed: int) -> np.ndarray:
    """K futures per image: latent Euler samples from K noise seeds, unscaled and decoded."""
    b = tokens.shape[0]
    z = sample_latents(models.flow, tokens, k, seed, steps=models.flow_steps)
    z = z.reshape(b * k, *z.shape[2:]) * models.zscale[None, :, None, None]
    x = models.vae.decode(z, tokens.repeat_interleave(k, 0))
    out = from_channels(x)
    return out.reshape(b, k, *out.shape[1:]).numpy()


@torch.no_grad()
def run_regressor(models: Models, tokens: torch.Tensor, k: int, seed: int) -> np.ndarray:  # noqa: ARG001
    """The deterministic regressor: one prediction, repeated K times (its best-of-K is its MSE)."""
    out = from_channels(models.reg(tokens)).numpy()
    return np.repeat(out[:, None], k, 1)


@torch.no_grad()
def run_noisy_regressor(models: Models, tokens: torch.Tensor, k: int, seed: int) -> np.ndarray:
    """The regressor plus independent Gaussian noise per point with the training residuals' spread per step and
    axis, K draws (``torch.Generator().manual_seed(seed)``)."""
    mean = models.reg(tokens)  # [B, 2T, G, G]
    b, c, g, _ = mean.shape
    gen = torch.Generator().manual_seed(seed)
    sig = models.sigma.reshape(c)[None, None, :, None, None]
    x = mean[:, None] + sig * torch.randn((b, k, c, g, g), generator=gen)
    out = from_channels(x.reshape(b * k, c, g, g))
    return out.reshape(b, k, *out.shape[1:]).numpy()


def run_retrieval(models: Models, tokens: torch.Tensor, k: int, seed: int) -> np.ndarray:  # noqa: ARG001
    """The realised futures of the K training scenes whose mean patch token is nearest (cosine) to the image's."""
    q = torch.nn.functional.normalize(tokens.mean(1), dim=-1)
    bank = torch.nn.functional.normalize(models.bank_tokens, dim=-1)
    idx = (q @ bank.T).topk(k, dim=-1).indices.numpy()
    cache: dict[int, np.ndarray] = {}
    out = []
    for row in idx:
        futs = []
        for i in row:
            s = int(models.bank_seeds[i])
            if s not in cache:
                cache[s] = make_scene(s, stride=models.cfg.grid and 112 // models.cfg.grid,
                                      steps=models.cfg.steps).future
            futs.append(cache[s])
        out.append(np.stack(futs))
    return np.stack(out).astype(np.float32)


def run_static(models: Models, tokens: torch.Tensor, k: int, seed: int) -> np.ndarray:  # noqa: ARG001
    """Nothing moves."""
    g, t = models.cfg.grid, models.cfg.steps
    return np.zeros((tokens.shape[0], k, g, g, t, 2), np.float32)


run_flow.uses = ("vae", "flow", "zscale")  # type: ignore[attr-defined]
run_regressor.uses = ("reg",)  # type: ignore[attr-defined]
run_noisy_regressor.uses = ("reg", "sigma")  # type: ignore[attr-defined]
run_retrieval.uses = ("bank_tokens",)  # type: ignore[attr-defined]
run_static.uses = ()  # type: ignore[attr-defined]

METHODS: Registry[Callable[..., Any]] = Registry("forecaster")
METHODS.add("flow", run_flow, label="Latent flow (ours)", kind="ours")
METHODS.add("regressor", run_regressor, label="Regressor", kind="baseline")
METHODS.add("noisy_regressor", run_noisy_regressor, label="Regressor + noise", kind="baseline")
METHODS.add("retrieval", run_retrieval, label="Nearest-neighbour retrieval", kind="baseline")
METHODS.add("static", run_static, label="Static (no motion)", kind="reference")
get_method = METHODS.get
