"""The models: the image-conditioned trajectory VAE, the latent rectified-flow model and the deterministic regressor.

Shapes: a trajectory grid is ``[B, G, G, T, 2]`` (pixels); the networks see it as ``[B, 2T, G, G]`` divided by
:data:`SCALE`. Image tokens are frozen DINOv2 ViT-S/14 patch tokens of the 112 x 112 image, ``[B, 64, 384]``
(an 8 x 8 patch map), projected and bilinearly resized to the grid where a convolution needs them.

- :class:`TrajVAE`: encoder (trajectories + image map + Fourier coordinates -> two 3 x 3 convolutions, one of
  stride 2) -> latent ``[B, zc, G/2, G/2]`` (spatial downsampling only: time stays whole in the channels);
  decoder (latent upsampled + image map + Fourier coordinates -> convolutions -> ``[B, 2T, G, G]``). Loss: Huber
  reconstruction + beta KL, both summed over a sample.
- :class:`FlowNet`: the velocity field ``v(z_t, I, t)`` over the latent cells as tokens: self-attention,
  cross-attention to the image tokens, an MLP, adaptive on the flow time. Trained with ``||v - (z_1 - z_0)||^2`` on
  ``z_t = (1 - t) z_0 + t z_1``, ``z_0 ~ N(0, I)``; sampled by Euler steps from ``t = 0`` to 1.
- :class:`Regressor`: the same image map and coordinates -> convolutions -> one trajectory grid (MSE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

SCALE = 16.0  # pixels per network unit
TOKENS = 384


@dataclass(frozen=True)
class NetConfig:
    """Sizes of the three networks (a miniature of the paper's spatio-temporal transformers)."""

    grid: int = 14
    steps: int = 8
    zc: int = 4
    width: int = 32
    img: int = 24
    fourier: int = 4
    d: int = 64
    heads: int = 4
    blocks: int = 2
    beta: float = 0.01


def fourier(grid: int, n: int) -> torch.Tensor:
    """Fourier features of the grid coordinates ``[1, 4n, G, G]``."""
    c = (torch.arange(grid, dtype=torch.float32) + 0.5) / grid
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    freqs = (2.0 ** torch.arange(n, dtype=torch.float32)) * math.pi
    feats = [f(v[None] * freqs[:, None, None]) for v in (xx, yy) for f in (torch.sin, torch.cos)]
    return torch.cat(feats, 0)[None]


class ImageMap(nn.Module):
    """Patch tokens ``[B, 64, 384]`` -> a projected map ``[B, img, G, G]`` (bilinear from 8 x 8)."""

    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.proj = nn.Linear(TOKENS, cfg.img)
        self.grid = cfg.grid

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        b, n, _ = tokens.shape
        s = int(round(math.sqrt(n)))
        m = self.proj(tokens).transpose(1, 2).reshape(b, -1, s, s)
        return F.interpolate(m, size=(self.grid, self.grid), mode="bilinear", align_corners=False)


def _conv_stack(cin: int, width: int, cout: int, depth: int = 3) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(cin, width, 3, padding=1), nn.GELU()]
    for _ in range(depth - 1):
        layers += [nn.Conv2d(width, width, 3, padding=1), nn.GELU()]
    layers.append(nn.Conv2d(width, cout, 1))
    return nn.Sequential(*layers)


def to_channels(traj: torch.Tensor) -> torch.Tensor:
    """``[B, G, G, T, 2]`` pixels -> ``[B, 2T, G, G]`` network units."""
    b, g, _, t, _ = traj.shape
    return (traj / SCALE).reshape(b, g, g, 2 * t).permute(0, 3, 1, 2).contiguous()


def from_channels(x: torch.Tensor) -> torch.Tensor:
    """``[B, 2T, G, G]`` network units -> ``[B, G, G, T, 2]`` pixels."""
    b, c, g, _ = x.shape
    return (x.permute(0, 2, 3, 1).reshape(b, g, g, c // 2, 2) * SCALE).contiguous()


class TrajVAE(nn.Module):
    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.img_enc, self.img_dec = ImageMap(cfg), ImageMap(cfg)
        self.register_buffer("coords", fourier(cfg.grid, cfg.fourier), persistent=False)
        nf = 4 * cfg.fourier
        self.enc = nn.Sequential(nn.Conv2d(2 * cfg.steps + cfg.img + nf, cfg.width, 3, padding=1), nn.GELU(),
                                 nn.Conv2d(cfg.width, cfg.width, 3, stride=2, padding=1), nn.GELU(),
                                 nn.Conv2d(cfg.width, 2 * cfg.zc, 1))
        self.dec = _conv_stack(cfg.zc + cfg.img + nf, cfg.width, 2 * cfg.steps, depth=4)

    def encode(self, x: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` ``[B, 2T, G, G]`` -> mean, log-variance ``[B, zc, G/2, G/2]``."""
        c = self.coords.expand(x.shape[0], -1, -1, -1)
        h = self.enc(torch.cat([x, self.img_enc(tokens), c], 1))
        return h.chunk(2, 1)

    def decode(self, z: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """``z`` ``[B, zc, G/2, G/2]`` -> ``[B, 2T, G, G]``."""
        g = self.cfg.grid
        up = F.interpolate(z, size=(g, g), mode="nearest")
        c = self.coords.expand(z.shape[0], -1, -1, -1)
        return self.dec(torch.cat([up, self.img_dec(tokens), c], 1))

    def loss(self, x: torch.Tensor, tokens: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        mu, logvar = self.encode(x, tokens)
        eps = torch.randn(mu.shape, generator=generator)
        z = mu + torch.exp(0.5 * logvar) * eps
        b = x.shape[0]
        rec = F.huber_loss(self.decode(z, tokens), x, delta=1.0, reduction="sum") / b
        kl = 0.5 * (mu.pow(2) + logvar.exp() - 1 - logvar).sum() / b
        return rec + self.cfg.beta * kl


class _Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.n1, self.n2, self.n3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.sa = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ca = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.ada = nn.Linear(d, 2 * d)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        scale, shift = self.ada(temb)[:, None].chunk(2, -1)
        h = self.n1(x) * (1 + scale) + shift
        x = x + self.sa(h, h, h, need_weights=False)[0]
        h = self.n2(x)
        x = x + self.ca(h, ctx, ctx, need_weights=False)[0]
        return x + self.mlp(self.n3(x))


class FlowNet(nn.Module):
    """Velocity ``v(z_t, tokens, t)``: ``z_t`` ``[B, zc, g, g]``, tokens ``[B, 64, 384]``, ``t`` ``[B]``."""

    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        g = cfg.grid // 2
        self.inp = nn.Linear(cfg.zc, cfg.d)
        self.pos = nn.Parameter(torch.randn(1, g * g, cfg.d) * 0.02)
        self.ctx = nn.Linear(TOKENS, cfg.d)
        self.ctx_pos = nn.Parameter(torch.randn(1, 64, cfg.d) * 0.02)
        self.temb = nn.Sequential(nn.Linear(16, cfg.d), nn.GELU(), nn.Linear(cfg.d, cfg.d))
        self.blocks = nn.ModuleList(_Block(cfg.d, cfg.heads) for _ in range(cfg.blocks))
        self.out = nn.Sequential(nn.LayerNorm(cfg.d), nn.Linear(cfg.d, cfg.zc))

    def forward(self, z: torch.Tensor, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        b, c, g, _ = z.shape
        x = self.inp(z.flatten(2).transpose(1, 2)) + self.pos
        ctx = self.ctx(tokens) + self.ctx_pos[:, : tokens.shape[1]]
        freqs = torch.exp(torch.linspace(0, math.log(1000.0), 8))
        tt = t[:, None] * freqs[None]
        temb = self.temb(torch.cat([torch.sin(tt), torch.cos(tt)], -1))
        for blk in self.blocks:
            x = blk(x, ctx, temb)
        return self.out(x).transpose(1, 2).reshape(b, c, g, g)


def flow_loss(net: FlowNet, z1: torch.Tensor, tokens: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Rectified-flow loss ``||v(z_t, I, t) - (z_1 - z_0)||^2`` with ``t ~ U(0, 1)``."""
    z0 = torch.randn(z1.shape, generator=generator)
    t = torch.rand(z1.shape[0], generator=generator)
    zt = (1 - t)[:, None, None, None] * z0 + t[:, None, None, None] * z1
    return F.mse_loss(net(zt, tokens, t), z1 - z0)


@torch.no_grad()
def sample_latents(net: FlowNet, tokens: torch.Tensor, k: int, seed: int, steps: int = 12) -> torch.Tensor:
    """K latents per image by Euler steps from noise: tokens ``[B, 64, 384]`` -> ``[B, K, zc, g, g]``. Sample ``j``
    of image ``b`` starts from the noise of ``torch.Generator().manual_seed(seed + j)`` so K futures are K seeds."""
    b = tokens.shape[0]
    g = net.cfg.grid // 2
    noise = torch.stack([torch.randn((b, net.cfg.zc, g, g), generator=torch.Generator().manual_seed(seed + j))
                         for j in range(k)], 1)
    z = noise.reshape(b * k, net.cfg.zc, g, g)
    tok = tokens.repeat_interleave(k, 0)
    for i in range(steps):
        t = torch.full((b * k,), i / steps)
        z = z + net(z, tok, t) / steps
    return z.reshape(b, k, net.cfg.zc, g, g)


class Regressor(nn.Module):
    """The deterministic baseline: tokens ``[B, 64, 384]`` -> ``[B, 2T, G, G]``."""

    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.img = ImageMap(cfg)
        self.register_buffer("coords", fourier(cfg.grid, cfg.fourier), persistent=False)
        self.net = _conv_stack(cfg.img + 4 * cfg.fourier, cfg.width, 2 * cfg.steps, depth=4)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        c = self.coords.expand(tokens.shape[0], -1, -1, -1)
        return self.net(torch.cat([self.img(tokens), c], 1))
