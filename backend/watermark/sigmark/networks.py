"""The networks of the tiny latent video diffusion model (:class:`CausalVAE3D`, :class:`SpaceTimeDenoiser`).

Module-level classes, built from a :class:`~backend.watermark.sigmark.tiny.TinyConfig` by
:func:`backend.watermark.sigmark.channel.build_models`; their state-dict keys are the tensor names of
``assets/sigmark_tiny_vldm.safetensors`` (prefixed ``vae.`` / ``den.``). Layout ``[B, C, F, H, W]``, videos in [-1, 1].
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from backend.watermark.sigmark.tiny import TEMPORAL, TinyConfig


class CausalTemporalConv(nn.Module):
    """Conv over time with past-only padding (first frame replicated): output t sees frames <= t."""

    def __init__(self, ch: int, k: int = 3):
        super().__init__()
        self.k = k
        self.conv = nn.Conv3d(ch, ch, (k, 1, 1))

    def forward(self, x):  # [B, C, F, H, W]
        pad = x[:, :, :1].expand(-1, -1, self.k - 1, -1, -1)
        return self.conv(torch.cat([pad, x], dim=2))


def per_frame(conv: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Apply a 2D module to every frame of ``[B, C, F, H, W]``."""
    b, c, f, h, w = x.shape
    y = conv(x.permute(0, 2, 1, 3, 4).reshape(b * f, c, h, w))
    return y.reshape(b, f, *y.shape[1:]).permute(0, 2, 1, 3, 4)


class CausalVAE3D(nn.Module):
    """Causal 3D VAE: frame 0 -> latent 0 alone; frames 4(j-1)+1..4j -> latent j (slot-specific filters).
    Spatial factor ``cfg.spatial = 2^levels``: a 2x2 space-to-depth (patchify) then ``levels - 1`` stride-2 convs;
    ``vae_hidden_full`` channels after the patchify, ``vae_hidden`` below."""

    def __init__(self, cfg: TinyConfig):
        super().__init__()
        h, h0, z = cfg.vae_hidden, cfg.vae_hidden_full, cfg.latent_channels
        levels = int(round(math.log2(cfg.spatial)))
        if 2**levels != cfg.spatial or levels < 1:
            raise ValueError(f"spatial factor must be a power of 2 >= 2; got {cfg.spatial}")
        self.e_in = nn.Conv2d(12, h0, 3, padding=1)
        self.e_t1 = CausalTemporalConv(h0)
        self.e_down = nn.ModuleList(nn.Conv2d(h0 if i == 0 else h, h, 4, stride=2, padding=1)
                                    for i in range(levels - 1))
        self.e_mid = nn.ModuleList(nn.Conv2d(h, h, 3, padding=1) for _ in range(levels - 1))
        top = h if levels > 1 else h0
        self.e_t2 = CausalTemporalConv(top)
        self.e_first = nn.Conv2d(top, 2 * z, 3, padding=1)
        self.e_group = nn.Conv2d(TEMPORAL * top, 2 * z, 3, padding=1)
        self.d_in = nn.Conv2d(z, top, 3, padding=1)
        self.d_t1 = CausalTemporalConv(top, 2)
        self.d_first = nn.Conv2d(top, top, 3, padding=1)
        self.d_group = nn.Conv2d(top, TEMPORAL * top, 3, padding=1)
        self.d_t2 = CausalTemporalConv(top)
        outs = [h] * (levels - 2) + [h0]
        self.d_up = nn.ModuleList(nn.ConvTranspose2d(h, outs[i], 4, stride=2, padding=1)
                                  for i in range(levels - 1))
        self.d_mid = nn.ModuleList(nn.Conv2d(outs[i], outs[i], 3, padding=1) for i in range(levels - 1))
        self.d_out = nn.Conv2d(h0, 12, 3, padding=1)

    def encode(self, x):
        """x [B, 3, F, H, W] in [-1, 1] -> (mean, logvar) each [B, z, 1 + L, H/s, W/s] (s = cfg.spatial)."""
        b, _, f, _, _ = x.shape
        lat = 1 + (f - 1) // TEMPORAL
        a = F.silu(per_frame(lambda v: self.e_in(F.pixel_unshuffle(v, 2)), x))
        a = a + F.silu(self.e_t1(a))
        for down, mid in zip(self.e_down, self.e_mid):
            a = F.silu(per_frame(down, a))
            a = a + F.silu(per_frame(mid, a))
        a = a + F.silu(self.e_t2(a))
        first = self.e_first(a[:, :, 0])
        rest = a[:, :, 1:]
        c, hh, ww = rest.shape[1], rest.shape[3], rest.shape[4]
        groups = rest.reshape(b, c, lat - 1, TEMPORAL, hh, ww).permute(0, 2, 3, 1, 4, 5)
        groups = groups.reshape(b * (lat - 1), TEMPORAL * c, hh, ww)
        g = self.e_group(groups).reshape(b, lat - 1, -1, hh, ww).permute(0, 2, 1, 3, 4)
        stats = torch.cat([first[:, :, None], g], dim=2)
        mean, logvar = stats.chunk(2, dim=1)
        return mean, logvar.clamp(-12, 4)

    def decode(self, z):
        """z [B, zc, 1 + L, h, w] -> video [B, 3, 1 + 4L, s h, s w] (no output squashing)."""
        b, _, lat, hh, ww = z.shape
        a = F.silu(per_frame(self.d_in, z))
        a = a + F.silu(self.d_t1(a))
        first = F.silu(self.d_first(a[:, :, 0]))[:, :, None]
        c = a.shape[1]
        g = F.silu(per_frame(self.d_group, a[:, :, 1:]))  # [B, 4c, L, h, w]
        g = g.reshape(b, TEMPORAL, c, lat - 1, hh, ww).permute(0, 2, 3, 1, 4, 5).reshape(b, c, -1, hh, ww)
        a = torch.cat([first, g], dim=2)
        a = a + F.silu(self.d_t2(a))
        for up, mid in zip(self.d_up, self.d_mid):
            a = F.silu(per_frame(up, a))
            a = a + F.silu(per_frame(mid, a))
        return per_frame(lambda v: F.pixel_shuffle(self.d_out(v), 2), a)


class TemporalAttention(nn.Module):
    """Self-attention over the latent frames at every spatial position (the temporal layers of video latent
    diffusion models, e.g. Blattmann et al., arXiv 2304.08818): pre-GroupNorm, learned frame-position
    embedding, multi-head attention, zero-initialised output so that a fresh layer is the identity."""

    def __init__(self, ch: int, heads: int = 4, max_frames: int = 16):
        super().__init__()
        self.norm = nn.GroupNorm(8, ch)
        self.pos = nn.Parameter(torch.zeros(1, max_frames, ch))
        self.attn = nn.MultiheadAttention(ch, heads, batch_first=True)
        nn.init.zeros_(self.attn.out_proj.weight)
        nn.init.zeros_(self.attn.out_proj.bias)

    def forward(self, x):  # [B, C, F, H, W]
        b, c, f, h, w = x.shape
        y = self.norm(x.reshape(b, c, f * h, w)).reshape(x.shape)
        y = y.permute(0, 3, 4, 2, 1).reshape(b * h * w, f, c) + self.pos[:, :f]
        y = self.attn(y, y, y, need_weights=False)[0]
        return x + y.reshape(b, h, w, f, c).permute(0, 4, 3, 1, 2)


class Block(nn.Module):
    """Denoiser block: per-frame conv with the timestep embedding, a temporal conv, optional temporal attention."""

    def __init__(self, ch: int, temb: int, temporal_attention: bool = False):
        super().__init__()
        self.n1 = nn.GroupNorm(8, ch)
        self.c1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.t = nn.Linear(temb, ch)
        self.n2 = nn.GroupNorm(8, ch)
        self.tc = nn.Conv3d(ch, ch, (3, 1, 1), padding=(1, 0, 0), padding_mode="replicate")
        self.c2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.ta = TemporalAttention(ch) if temporal_attention else None

    def forward(self, x, emb):
        b, c, f, h, w = x.shape
        y = per_frame(self.c1, F.silu(self.n1(x.reshape(b, c, f * h, w)).reshape(x.shape)))
        y = y + self.t(emb)[:, :, None, None, None]
        y = F.silu(self.n2(y.reshape(b, c, f * h, w)).reshape(x.shape))
        y = y + self.tc(y)
        x = x + per_frame(self.c2, y)
        return x if self.ta is None else self.ta(x)


class SpaceTimeDenoiser(nn.Module):
    """eps-prediction on latents [B, zc, 1 + L, h, w] with diffusers' sinusoidal timestep embedding."""

    def __init__(self, cfg: TinyConfig):
        super().__init__()
        from diffusers.models.embeddings import TimestepEmbedding, Timesteps

        ch = cfg.den_hidden
        self.proj = Timesteps(ch, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.temb = TimestepEmbedding(ch, 2 * ch)
        self.inp = nn.Conv2d(cfg.latent_channels, ch, 3, padding=1)
        self.blocks = nn.ModuleList(Block(ch, 2 * ch, cfg.den_temporal_attention)
                                    for _ in range(cfg.den_blocks))
        self.norm = nn.GroupNorm(8, ch)
        self.out = nn.Conv2d(ch, cfg.latent_channels, 3, padding=1)

    def forward(self, x, t):
        b, c, f, h, w = x.shape
        emb = self.temb(self.proj(t.reshape(-1).expand(b)).to(x.dtype))
        a = per_frame(self.inp, x)
        for blk in self.blocks:
            a = blk(a, emb)
        a = F.silu(self.norm(a.reshape(b, a.shape[1], f * h, w)).reshape(a.shape))
        return per_frame(self.out, a)
