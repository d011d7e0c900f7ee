"""The compact multi-source nowcasting network of the miniature, after RainPro-8.

Paper: "RainPro-8: An Efficient Deep Learning Model to Estimate Rainfall Probabilities over 8 Hours", R. Pablos
Sarabia, J. Nyborg, M. Birk, J. L. Sjørup, A. L. Vesterholt, I. Assent, ICLR 2026, arXiv 2505.10271. The authors' code
is not public (the RainPro repository holds a README only), so this follows the abstract and the method spec
(shared/methods/precip-nowcast.md):

- inputs: radar (4 frames), satellite (2 frames), NWP (all 9 hourly frames of the run, upsampled to the radar grid),
  plus two availability flags (so one network also serves the radar-only path of uploads);
- backbone: a small U-Net (64 -> 32 -> 16 -> 8 px) whose bottleneck is a MaxViT-style block (block attention inside
  4 x 4 windows, then grid attention over a dilated 4 x 4 grid: local and long-range interactions), the paper's
  backbone family (MaxViT U-Net, 36.7M parameters) scaled down to about 1.2M parameters (~0.3 GMAC per pass);
  the raw inputs (x4) also enter the 1x1 output head beside the last decoder features (our choice: persistence and the
  NWP values are then one linear map away, which a CPU-sized training budget otherwise does not reach);
- output: for every lead (32, 15 min apart) in one forward pass, a softmax over K + 1 ordered rain-rate bins; the
  exceedance probability P(R >= t_k) is the sum of the bins from k upward, so it lies in [0, 1] and is non-increasing
  in the threshold by construction (the consistency the paper asks of its probability maps);
- loss: the sum over thresholds of the binary cross-entropy of P(R >= t_k) against 1[R >= t_k], computed stably in
  log space, plus the threshold-weighted CRPS (sum_k Brier_k x bin width; weight 4 in the shipped training, see
  backend/train/nowcast.py), both averaged over pixels and leads.

Also here: the deterministic U-Net baseline (same backbone and inputs, one rain-rate channel per lead, trained with MSE
on log1p rain) and a lead-conditioned variant (one pass per lead, as in MetNet) used only to time the single-pass
design against the one-pass-per-lead design.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ... import weights
from .verify import THRESHOLDS_MMH, bin_widths


@dataclass
class NowcastConfig:
    """Architecture of the miniature (defaults = the shipped weights)."""

    n_radar: int = 4
    n_sat: int = 2
    n_nwp: int = 9
    n_leads: int = 32
    thresholds: tuple[float, ...] = THRESHOLDS_MMH
    widths: tuple[int, ...] = (16, 32, 64, 128)
    heads: int = 4
    window: int = 4
    attn_blocks: int = 1
    input_skip: bool = True     # the raw inputs also feed the output head (persistence/NWP are one 1x1 conv away)
    skip_gain: float = 1.0      # fixed scale of those raw inputs in the head (preconditioning: sharper logits sooner)
    kind: str = "prob"          # "prob" (ordered bins), "mse" (deterministic U-Net), "lead" (one pass per lead)
    size: int = 64

    @property
    def in_channels(self) -> int:
        return self.n_radar + self.n_sat + self.n_nwp + 2 + (1 if self.kind == "lead" else 0)

    @property
    def out_channels(self) -> int:
        k1 = len(self.thresholds) + 1
        return {"prob": self.n_leads * k1, "mse": self.n_leads, "lead": k1}[self.kind]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["thresholds"] = list(self.thresholds)
        d["widths"] = list(self.widths)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> NowcastConfig:
        d = dict(d)
        d["thresholds"] = tuple(d["thresholds"])
        d["widths"] = tuple(d["widths"])
        d.setdefault("input_skip", False)  # weights written before the input skip existed
        d.setdefault("skip_gain", 1.0)
        return cls(**d)


# ------------------------------------------------------------------------------------------------------ inputs
def rain_transform(r: np.ndarray | torch.Tensor):
    """Rain rate (mm/h) -> network scale: log1p(R) / 2."""
    if isinstance(r, torch.Tensor):
        return torch.log1p(r.clamp_min(0)) / 2
    return np.log1p(np.maximum(r, 0)) / 2


def build_inputs(radar: np.ndarray, satellite: np.ndarray | None, nwp_fine: np.ndarray | None,
                 cfg: NowcastConfig) -> np.ndarray:
    """Stack one case's inputs: (C, H, W) float32.

    radar: (n_radar, H, W) mm/h, oldest first; satellite: (n_sat, H, W) K or None; nwp_fine: (n_nwp, H, W) mm/h
    (hourly NWP already upsampled to the radar grid) or None. Missing sources become zeros with their flag at 0.
    """
    h, w = radar.shape[-2:]
    sat = np.zeros((cfg.n_sat, h, w), np.float32) if satellite is None else (290.0 - satellite[-cfg.n_sat:]) / 50.0
    nwp = np.zeros((cfg.n_nwp, h, w), np.float32) if nwp_fine is None else rain_transform(nwp_fine)
    flags = np.stack([np.full((h, w), float(satellite is not None)), np.full((h, w), float(nwp_fine is not None))])
    return np.concatenate([rain_transform(radar[-cfg.n_radar:]), sat, nwp, flags]).astype(np.float32)


# ----------------------------------------------------------------------------------------------------- layers
class ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.n1 = nn.GroupNorm(min(8, c_in), c_in)
        self.c1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.n2 = nn.GroupNorm(min(8, c_out), c_out)
        self.c2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.c1(F.gelu(self.n1(x)))
        h = self.c2(F.gelu(self.n2(h)))
        return self.skip(x) + h


class PartitionAttention(nn.Module):
    """Multi-head self-attention inside groups of tokens: ``mode="block"`` groups each w x w window of neighbours,
    ``mode="grid"`` groups pixels that are H/w apart (a dilated grid spanning the whole map), as in MaxViT."""

    def __init__(self, dim: int, heads: int, window: int, mode: str) -> None:
        super().__init__()
        self.heads, self.window, self.mode = heads, window, mode
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def _split(self, x: torch.Tensor) -> torch.Tensor:  # (B, H, W, C) -> (B * groups, w*w, C)
        b, h, w_, c = x.shape
        p = self.window
        if self.mode == "block":
            x = x.view(b, h // p, p, w_ // p, p, c).permute(0, 1, 3, 2, 4, 5)
        else:
            x = x.view(b, p, h // p, p, w_ // p, c).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(-1, p * p, c)

    def _merge(self, x: torch.Tensor, shape: tuple[int, int, int, int]) -> torch.Tensor:
        b, h, w_, c = shape
        p = self.window
        if self.mode == "block":
            x = x.view(b, h // p, w_ // p, p, p, c).permute(0, 1, 3, 2, 4, 5)
        else:
            x = x.view(b, h // p, w_ // p, p, p, c).permute(0, 3, 1, 4, 2, 5)
        return x.reshape(b, h, w_, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, H, W, C)
        t = self._split(self.norm(x))
        n, length, c = t.shape
        q, k, v = self.qkv(t).view(n, length, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(n, length, c)
        x = x + self._merge(self.proj(a), x.shape)
        return x + self.mlp(self.norm2(x))


class MaxViTBlock(nn.Module):
    """Block attention then grid attention over a (B, C, H, W) map (H, W divisible by the window)."""

    def __init__(self, dim: int, heads: int, window: int, size: int) -> None:
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(1, size, size, dim))
        self.block = PartitionAttention(dim, heads, window, "block")
        self.grid = PartitionAttention(dim, heads, window, "grid")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.permute(0, 2, 3, 1) + self.pos
        h = self.grid(self.block(h))
        return h.permute(0, 3, 1, 2)


class NowcastNet(nn.Module):
    """U-Net with a MaxViT bottleneck. ``forward(x: (B, C_in, H, W)) -> (B, C_out, H, W)`` raw outputs (logits for
    ``kind="prob"``: view them as (B, n_leads, K + 1, H, W))."""

    def __init__(self, cfg: NowcastConfig | None = None) -> None:
        super().__init__()
        cfg = cfg or NowcastConfig()
        self.cfg = cfg
        w = cfg.widths
        self.stem = nn.Conv2d(cfg.in_channels, w[0], 3, padding=1)
        self.enc = nn.ModuleList([ResBlock(w[0], w[0])])
        self.down = nn.ModuleList()
        for a, b in pairwise(w):
            self.down.append(nn.Conv2d(a, b, 3, stride=2, padding=1))
            self.enc.append(ResBlock(b, b))
        bottleneck = cfg.size // 2 ** (len(w) - 1)
        self.mid = nn.Sequential(*[MaxViTBlock(w[-1], cfg.heads, cfg.window, bottleneck) for _ in range(cfg.attn_blocks)])
        self.up = nn.ModuleList()
        self.dec = nn.ModuleList()
        for a, b in pairwise(w[::-1]):
            self.up.append(nn.Conv2d(a, b, 3, padding=1))
            self.dec.append(ResBlock(2 * b, b))
        self.head_norm = nn.GroupNorm(8, w[0])
        self.head = nn.Conv2d(w[0] + (cfg.in_channels if cfg.input_skip else 0), cfg.out_channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inp = x
        h = self.enc[0](self.stem(x))
        skips = [h]
        for down, enc in zip(self.down, self.enc[1:]):
            h = enc(down(h))
            skips.append(h)
        h = self.mid(h)
        for up, dec, skip in zip(self.up, self.dec, skips[-2::-1]):
            h = up(F.interpolate(h, scale_factor=2, mode="nearest"))
            h = dec(torch.cat([h, skip], 1))
        h = F.gelu(self.head_norm(h))
        return self.head(torch.cat([h, self.cfg.skip_gain * inp], 1) if self.cfg.input_skip else h)


# ------------------------------------------------------------------------------------------- probabilities, loss
def exceedance_from_logits(logits: torch.Tensor, n_leads: int) -> torch.Tensor:
    """(B, n_leads * (K+1), H, W) logits -> (B, n_leads, K, H, W) P(R >= t_k) (bins k..K summed: monotone)."""
    b, _, h, w = logits.shape
    p = torch.softmax(logits.view(b, n_leads, -1, h, w), dim=2)
    tail = torch.flip(torch.cumsum(torch.flip(p, [2]), 2), [2])  # tail[k] = sum_{j >= k} p_j
    return tail[:, :, 1:].clamp(0.0, 1.0)


def ordered_loss(logits: torch.Tensor, target_mmh: torch.Tensor, cfg: NowcastConfig, crps_weight: float = 1.0,
                 leads: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Sum over thresholds of BCE(P(R >= t_k), 1[R >= t_k]) plus ``crps_weight`` x threshold-weighted CRPS.

    Both tail and head probabilities come from cumulative sums of one softmax, so P(R >= t_k) + P(R < t_k) = 1.

    logits: (B, n_leads * (K+1), H, W); target_mmh: (B, n_leads, H, W) mm/h. ``leads``: optional lead indices to
    score (training scores a random subset of leads per step: an unbiased, cheaper estimate of the same loss).
    """
    b, _, h, w = logits.shape
    z = logits.view(b, cfg.n_leads, -1, h, w)
    if leads is not None:
        z, target_mmh = z[:, leads], target_mmh[:, leads]
    p = torch.softmax(z, 2)
    cum = torch.cumsum(p, 2)
    head = cum[:, :, :-1].clamp(1e-7, 1.0)                     # P(R < t_k) = p_0 + ... + p_{k-1}
    tail = (cum[:, :, -1:] - cum[:, :, :-1]).clamp(1e-7, 1.0)  # P(R >= t_k) = p_k + ... + p_K
    thr = torch.tensor(cfg.thresholds, dtype=p.dtype, device=p.device).view(1, 1, -1, 1, 1)
    y = (target_mmh.unsqueeze(2) >= thr).to(p.dtype)
    bce = -(y * tail.log() + (1 - y) * head.log()).sum(2).mean()
    wts = torch.tensor(bin_widths(cfg.thresholds), dtype=p.dtype, device=p.device).view(1, 1, -1, 1, 1)
    crps = ((tail - y) ** 2 * wts).sum(2).mean()
    return bce + crps_weight * crps, {"bce": float(bce.detach()), "crps": float(crps.detach())}


# ------------------------------------------------------------------------------------------------ costs, I/O
def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def count_macs(model: NowcastNet) -> int:
    """Multiply-accumulates of one forward pass on one (C_in, size, size) input (convolutions, linears, attention)."""
    macs = 0

    def conv_hook(m: nn.Conv2d, _inp, out):
        nonlocal macs
        macs += out.numel() // out.shape[0] * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    def lin_hook(m: nn.Linear, inp, _out):
        nonlocal macs
        macs += inp[0].numel() // m.in_features * m.in_features * m.out_features

    def attn_hook(m: PartitionAttention, inp, _out):
        nonlocal macs
        _, h, w, c = inp[0].shape
        macs += 2 * h * w * (m.window**2) * c  # QK^T and AV for every token against its group

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(lin_hook))
        elif isinstance(m, PartitionAttention):
            hooks.append(m.register_forward_hook(attn_hook))
    with torch.no_grad():
        model(torch.zeros(1, model.cfg.in_channels, model.cfg.size, model.cfg.size))
    for h in hooks:
        h.remove()
    return int(macs)


TRAIN_COMMAND = "python -m backend.train nowcast"


def save_model(model: NowcastNet, path: str | Path, *, command: str = TRAIN_COMMAND,
               data_seeds: dict[str, Any] | None = None, quality: dict[str, Any] | None = None,
               extra: dict[str, Any] | None = None) -> Path:
    """Write the weights through :func:`backend.weights.save` (the config is the model's)."""
    return weights.save(path, model, config=model.cfg.to_dict(), command=command, data_seeds=data_seeds,
                        quality=quality, extra=extra)


def load_model(path: str | Path) -> tuple[NowcastNet, weights.WeightsMeta]:
    """Load weights written by :func:`save_model` (safetensors only). Returns (model in eval mode, metadata)."""
    state, meta = weights.load(path, made_by=TRAIN_COMMAND)
    model = NowcastNet(NowcastConfig.from_dict(meta.config))
    model.load_state_dict(state)
    model.eval()
    return model, meta


@dataclass
class Costs:
    parameters: int
    macs_per_pass: int
    passes: int

    @property
    def macs(self) -> int:
        return self.macs_per_pass * self.passes


def lead_maps(n_leads: int, size: int) -> torch.Tensor:
    """(n_leads, 1, size, size) lead-fraction maps for the lead-conditioned variant."""
    return torch.linspace(1 / n_leads, 1.0, n_leads).view(-1, 1, 1, 1).expand(-1, 1, size, size)
