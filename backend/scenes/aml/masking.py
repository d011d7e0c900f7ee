"""AML's alignment-aware masking and its controls (the ``MASKINGS`` registry).

Pass 1 (no gradient, :func:`patchmax`): the head's visual features ``[B, N, D]`` and text features ``[B, T, D]`` are
L2-normalised and multiplied by one fixed Gaussian matrix ``G [D, d]`` (entries N(0, 1/d); Johnson-Lindenstrauss:
inner products survive, so projected dot products are the cosines up to about 2 / sqrt(d)); similarities divided by
a temperature, a softmax over each patch's tokens (padding left out) and the maximum over tokens: PatchMax ``[B, N]``.
The official code (``model/models_aug/amlris.py``, ``TextGuidedVisualEnhancer``) takes the softmax over the text axis
(``F.softmax(attention_weights, dim=-1)`` on ``[B, N_patch, N_text]``) and ``.max(dim=-1)`` over tokens; we do the same.

Filtering (:func:`aml_blocks`): PatchMax is upsampled bilinearly to pixels; pixels below ``tau`` are weak; a random
share ``rho`` of the weak pixels is selected (``rho`` counts the pixels that are MASKED: the official
``mask_image_with_relevance`` takes ``num_to_mask = max(1, len(low_ids) // 4)`` of the low-relevance ids, so
rho = 0.25 selects a quarter of them and spares three quarters); every block holding a selected pixel is zeroed. The
block is one 14-pixel DINOv2 patch (an 8 x 8 grid on the 112-pixel image; the paper's 32-pixel blocks on 480-pixel
images are a 15 x 15 grid), so masking acts on the cached patch token of the block and on the block's pixels in the
image path. Pass 2 is the ordinary loss on the masked input; inference is unchanged.

| name | label | kind | what |
|------|-------|------|------|
| ``aml`` | AML (ours) | ours | zero the blocks of weakly aligned pixels (PatchMax < tau, share rho) |
| ``random`` | Random blocks | baseline | zero as many blocks as AML would, chosen uniformly |
| ``none`` | No masking | baseline | the ordinary training |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from ...registry import Registry
from .data import GRID, PATCH, SIZE


@dataclass(frozen=True)
class MaskConfig:
    """The paper's ``tau`` = 0.4 and ``rho`` = 0.25; ``proj_dim`` d of the random projection; ``temperature`` of the
    similarity softmax (cosines lie in [-1, 1]; without a temperature the softmax over ~10 tokens is nearly flat and
    no patch reaches tau); ``proj_seed`` fixes G."""

    tau: float = 0.4
    rho: float = 0.25
    proj_dim: int = 256
    temperature: float = 0.05
    proj_seed: int = 0


def projection(width: int, dim: int, seed: int = 0) -> torch.Tensor:
    """The fixed Gaussian matrix ``[width, dim]`` with entries N(0, 1/dim)."""
    g = torch.Generator().manual_seed(int(seed))
    return torch.randn(width, dim, generator=g) / dim ** 0.5


@torch.no_grad()
def patchmax(vis: torch.Tensor, txt: torch.Tensor, token_mask: torch.Tensor, cfg: MaskConfig = MaskConfig(),
             proj: torch.Tensor | None = None) -> torch.Tensor:
    """PatchMax ``[B, N]`` in (0, 1] from visual ``[B, N, D]`` and text ``[B, T, D]`` features."""
    proj = projection(vis.shape[-1], cfg.proj_dim, cfg.proj_seed) if proj is None else proj
    v = F.normalize(vis.float(), dim=-1) @ proj
    t = F.normalize(txt.float(), dim=-1) @ proj
    sim = (v @ t.transpose(1, 2)) / cfg.temperature
    sim = sim.masked_fill(~token_mask[:, None, :], float("-inf"))
    return torch.softmax(sim, -1).max(-1).values


def upsample(pm: torch.Tensor) -> torch.Tensor:
    """PatchMax ``[B, 64]`` -> pixel map ``[B, 112, 112]`` (bilinear)."""
    return F.interpolate(pm.view(-1, 1, GRID, GRID), size=(SIZE, SIZE), mode="bilinear", align_corners=False)[:, 0]


def aml_blocks(pm: torch.Tensor, cfg: MaskConfig, generator: torch.Generator) -> torch.Tensor:
    """Blocks to zero, bool ``[B, 8, 8]``: a random ``rho`` share (rounded down, at least one) of the pixels whose
    upsampled PatchMax is below ``tau`` is selected; a block with a selected pixel is masked."""
    weak = (upsample(pm) < cfg.tau).flatten(1)
    b, hw = weak.shape
    r = torch.rand(b, hw, generator=generator)
    r = torch.where(weak, r, torch.full_like(r, 2.0))
    n_weak = weak.sum(1)
    k = torch.where(n_weak > 0, torch.clamp((n_weak.float() * cfg.rho).floor().long(), min=1), torch.zeros_like(n_weak))
    kth = torch.sort(r, 1).values.gather(1, (k - 1).clamp_min(0)[:, None])
    chosen = weak & (r <= kth) & (k[:, None] > 0)
    return chosen.view(b, GRID, PATCH, GRID, PATCH).any(4).any(2)


def random_blocks(counts: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``counts[b]`` uniformly chosen blocks per sample, bool ``[B, 8, 8]``."""
    b = counts.shape[0]
    r = torch.rand(b, GRID * GRID, generator=generator)
    rank = r.argsort(1).argsort(1)
    return (rank < counts[:, None]).view(b, GRID, GRID)


def apply_blocks(patches: torch.Tensor, pixels: torch.Tensor, blocks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero the masked blocks: patch tokens ``[B, 64, C]`` and normalised pixels ``[B, 3, 112, 112]``."""
    keep = (~blocks).float()
    p = patches.float() * keep.flatten(1)[:, :, None]
    px = pixels * keep.repeat_interleave(PATCH, 1).repeat_interleave(PATCH, 2)[:, None]
    return p, px


def mask_aml(pm: torch.Tensor, cfg: MaskConfig, generator: torch.Generator) -> torch.Tensor:
    return aml_blocks(pm, cfg, generator)


def mask_random(pm: torch.Tensor, cfg: MaskConfig, generator: torch.Generator) -> torch.Tensor:
    """As many blocks as AML selects for the same sample and draw, placed uniformly."""
    return random_blocks(aml_blocks(pm, cfg, generator).flatten(1).sum(1), generator)


def mask_none(pm: torch.Tensor, cfg: MaskConfig, generator: torch.Generator) -> torch.Tensor:  # noqa: ARG001
    return torch.zeros(pm.shape[0], GRID, GRID, dtype=torch.bool)


mask_none.needs_patchmax = False  # training skips pass 1 for this control


MASKINGS: Registry[Callable[..., torch.Tensor]] = Registry("masking")
MASKINGS.add("aml", mask_aml, label="AML (ours)", kind="ours")
MASKINGS.add("random", mask_random, label="Random blocks (same rate)", kind="baseline")
MASKINGS.add("none", mask_none, label="No masking", kind="baseline")
