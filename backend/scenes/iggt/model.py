"""The miniature IGGT network and its losses.

``IGGTNet``: the DINOv2 patch tokens of each view ``[B, V, 16, 16, 384]`` are normalised and embedded (a linear map to
``dim``), a learned patch-position embedding and a view embedding (the first view is the reference, as VGGT marks its
first frame) are added, then ``pairs`` pairs of transformer blocks alternate *frame* attention (tokens of one view)
and *global* attention (the tokens of all views together: the cross-view attention). A DPT-style head upsamples the
tokens of each view to the 64 x 64 output grid (x2 with a convolution, then x2) and fuses them with a shallow convolution of the view's
pixels; a depth branch predicts log z-depth, and the instance branch, which also reads the depth branch's hidden
features (the geometry it injects into the instance features; the paper does this with window-shifted
cross-attention), predicts an 8-d feature per pixel. ``cross_view=False`` replaces global attention by frame
attention (an ablation).

Losses: depth, the mean absolute error of log depth over pixels that hit a surface; the multi-view contrastive loss
of the paper on pixels sampled from all views of a scene (``sampled`` per view, weighted so every instance gets
pixels): ``lambda_pull * mean_{same instance} d + lambda_push * mean_{different} max(0, M - d)``, ``d`` the Euclidean
distance of two pixels' features, with the paper's ``lambda_pull = 2``, ``lambda_push = 1``, ``M = 1`` (means over
pairs where the paper writes sums: the weights stay the paper's, the scale does not depend on the pixel count). Floor
and sky count as one more instance, so objects are pushed away from the background too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .data import DINO_DIM, OUT, PATCHES


@dataclass(frozen=True)
class NetConfig:
    """Width, heads and depth of the trunk; the feature size of the instance head; cross-view attention on/off."""

    dim: int = 64
    heads: int = 4
    pairs: int = 2
    mlp: int = 2
    feat_dim: int = 8
    cross_view: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LossConfig:
    """The paper's contrastive weights and margin; pixels sampled per view; the depth loss weight."""

    lambda_pull: float = 2.0
    lambda_push: float = 1.0
    margin: float = 1.0
    sampled: int = 128
    depth_weight: float = 1.0


class Block(nn.Module):
    """Pre-norm transformer block: multi-head self-attention and an MLP, both residual."""

    def __init__(self, dim: int, heads: int, mlp: int):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp * dim), nn.GELU(), nn.Linear(mlp * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x [B, N, dim]`` -> ``[B, N, dim]``."""
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.proj(a)
        return x + self.mlp(self.n2(x))


def _conv(cin: int, cout: int, k: int = 3) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k, padding=k // 2)


class IGGTNet(nn.Module):
    """``forward(dino [B, V, 16, 16, 384], rgb [B, V, 64, 64, 3])`` -> ``(log_depth [B, V, 64, 64],
    features [B, V, 64, 64, feat_dim])``."""

    def __init__(self, config: NetConfig | None = None):
        super().__init__()
        c = config or NetConfig()
        self.config = c
        self.norm_in = nn.LayerNorm(DINO_DIM)
        self.embed = nn.Linear(DINO_DIM, c.dim)
        self.pos = nn.Parameter(torch.randn(PATCHES * PATCHES, c.dim) * 0.02)
        self.view = nn.Parameter(torch.randn(2, c.dim) * 0.02)  # [reference view, other views]
        self.frame = nn.ModuleList(Block(c.dim, c.heads, c.mlp) for _ in range(c.pairs))
        self.glob = nn.ModuleList(Block(c.dim, c.heads, c.mlp) for _ in range(c.pairs))
        self.norm_out = nn.LayerNorm(c.dim)
        self.up1 = _conv(c.dim, 32, 1)
        self.up2 = _conv(32, 32)
        self.stem = nn.Sequential(_conv(3, 8), nn.GELU())
        self.fuse = _conv(40, 24)
        self.depth_hidden = _conv(24, 8)
        self.depth_out = _conv(8, 1, 1)
        self.inst_hidden = _conv(32, 16, 1)
        self.inst_out = _conv(16, c.feat_dim, 1)
        nn.init.constant_(self.depth_out.bias, math.log(2.5))

    def trunk(self, dino: torch.Tensor) -> torch.Tensor:
        """``[B, V, 16, 16, 384]`` -> tokens ``[B, V, 256, dim]`` after the alternating attention."""
        b, v = dino.shape[:2]
        n = PATCHES * PATCHES
        x = self.embed(self.norm_in(dino.reshape(b, v, n, DINO_DIM))) + self.pos
        which = torch.ones(v, dtype=torch.long, device=dino.device)
        which[0] = 0
        x = x + self.view[which][None, :, None, :]
        d = x.shape[-1]
        for fb, gb in zip(self.frame, self.glob, strict=True):
            x = fb(x.reshape(b * v, n, d)).reshape(b, v, n, d)
            if self.config.cross_view:
                x = gb(x.reshape(b, v * n, d)).reshape(b, v, n, d)
            else:
                x = gb(x.reshape(b * v, n, d)).reshape(b, v, n, d)
        return self.norm_out(x)

    def forward(self, dino: torch.Tensor, rgb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, v = dino.shape[:2]
        x = self.trunk(dino)
        d = x.shape[-1]
        x = x.reshape(b * v, PATCHES, PATCHES, d).permute(0, 3, 1, 2)
        x = F.gelu(self.up1(x))
        x = F.gelu(self.up2(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)))
        x = F.interpolate(x, size=(OUT, OUT), mode="bilinear", align_corners=False)
        s = self.stem(rgb.reshape(b * v, OUT, OUT, 3).permute(0, 3, 1, 2))
        h = F.gelu(self.fuse(torch.cat([x, s], 1)))
        dh = F.gelu(self.depth_hidden(h))
        log_depth = self.depth_out(dh)[:, 0]
        f = self.inst_out(F.gelu(self.inst_hidden(torch.cat([h, dh], 1))))
        return (log_depth.reshape(b, v, OUT, OUT),
                f.permute(0, 2, 3, 1).reshape(b, v, OUT, OUT, self.config.feat_dim))


def count_parameters(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def depth_loss(log_depth: torch.Tensor, depth: torch.Tensor) -> torch.Tensor:
    """Mean |log z_pred - log z| over pixels with a finite true depth (``[..., H, W]`` both)."""
    ok = torch.isfinite(depth)
    if not ok.any():
        return log_depth.sum() * 0.0
    return (log_depth[ok] - torch.log(depth[ok])).abs().mean()


def sample_pixels(instance: torch.Tensor, per_view: int, generator: torch.Generator) -> torch.Tensor:
    """Flat pixel indices ``[V, per_view]`` into ``[V, H * W]``, drawn with weights inversely proportional to each
    pixel's instance area in its view (so small objects are sampled as often as the floor)."""
    v = instance.shape[0]
    flat = instance.reshape(v, -1).long()
    counts = torch.zeros(v, int(flat.max()) + 1, dtype=torch.float32)
    counts.scatter_add_(1, flat, torch.ones_like(flat, dtype=torch.float32))
    w = 1.0 / counts.gather(1, flat)
    return torch.multinomial(w, per_view, replacement=True, generator=generator)


def contrastive_loss(feats: torch.Tensor, labels: torch.Tensor, cfg: LossConfig) -> tuple[torch.Tensor, dict]:
    """Pull/push loss over sampled pixels of all views of one scene: ``feats [N, D]``, ``labels [N]``."""
    dist = torch.cdist(feats, feats).clamp_min(0)
    dist = torch.sqrt(dist * dist + 1e-8)
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool)
    pos, neg = same & ~eye, ~same
    pull = dist[pos].mean() if pos.any() else dist.sum() * 0.0
    push = F.relu(cfg.margin - dist[neg]).mean() if neg.any() else dist.sum() * 0.0
    loss = cfg.lambda_pull * pull + cfg.lambda_push * push
    return loss, {"pull": float(pull.detach()), "push": float(push.detach())}


def scene_losses(log_depth: torch.Tensor, feats: torch.Tensor, depth: torch.Tensor, instance: torch.Tensor,
                 cfg: LossConfig, generator: torch.Generator) -> tuple[torch.Tensor, dict]:
    """Depth plus contrastive loss of a batch: ``log_depth [B, V, H, W]``, ``feats [B, V, H, W, D]``, targets
    ``depth [B, V, H, W]`` and ``instance [B, V, H, W]``."""
    ld = depth_loss(log_depth, depth)
    total_c, pulls, pushes = 0.0, [], []
    b, v = instance.shape[:2]
    for i in range(b):
        idx = sample_pixels(instance[i], cfg.sampled, generator)  # [V, K]
        f = torch.stack([feats[i, j].reshape(-1, feats.shape[-1])[idx[j]] for j in range(v)]).reshape(-1, feats.shape[-1])
        lab = torch.stack([instance[i, j].reshape(-1)[idx[j]] for j in range(v)]).reshape(-1)
        lc, parts = contrastive_loss(f, lab, cfg)
        total_c = total_c + lc
        pulls.append(parts["pull"])
        pushes.append(parts["push"])
    lc = total_c / b
    loss = cfg.depth_weight * ld + lc
    return loss, {"depth": float(ld.detach()), "contrastive": float(lc.detach()), "pull": sum(pulls) / b, "push": sum(pushes) / b}
