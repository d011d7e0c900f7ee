"""MCD: one conditional diffusion model that imputes any missing channels from any observed subset.

Paper: "Controllable diffusion for multi-channel biological data" (MCD; tansey-lab). What is implemented:

- Random channel masking: at every training step each sample draws its observed set ``S_o`` with one Bernoulli(p) per
  channel (p itself uniform in [0.25, 0.75] per sample), keeping at least one observed and one missing channel. The
  observation patterns of :data:`HELDOUT_PATTERNS` are rejected and redrawn, so they are never seen in training; they
  lie one channel away from a drawn pattern (:func:`distance_to_training`). With ``MCDConfig.apart = APART`` (the
  trainer's ``--apart``), every set that observes a channel of both groups (the epithelial and the cell-state markers)
  is redrawn too, and the patterns of :data:`FAR_PATTERNS` (two or more channels of each group) lie two or more
  channels away from every training pattern. The shipped model is trained without that rule. The
  condition is ``c = x * m`` (zeros off ``S_o``) together with the mask ``m`` itself (zero is a valid standardised value,
  so the network is told which zeros are missing); the target is the full panel.
- EDM (Karras et al. 2022): log-normal sigma (P_std 1.2, P_mean -0.4 instead of the image default -1.2: the
  conditional structure that imputation needs is learned at the higher noise levels, and on our short CPU budget the
  default left the model's conditional mean below per-pixel ridge), the c_skip / c_out / c_in / c_noise
  preconditioning, the lambda(sigma) loss weight, and the deterministic Heun sampler on the rho = 7 schedule. Different
  seeds give different posterior samples; the page and the claims average M of them.
- The dual network: a denoiser U-Net ``D`` over the noisy panel and a condition encoder ``E`` over (c, m) with the same
  resolutions; at every resolution, on the way down and up, ``z_l = D_l(x_t) + SE(E_l(c))`` where SE is a
  squeeze-excitation gate (channel weights from the spatial mean), which keeps the encoder's spatial maps. Channel
  self-attention over the flattened (channels x pixels) latents at the bottleneck and the last decoder level (attention
  between feature channels, each token one channel's whole map, L2-normalised, so any H x W works), and an SE
  recalibration of the output channels.
- H = W = 1: down-sampling is skipped below 2 x 2 and up-sampling follows the skip's size, so per-cell vectors
  ``(N, C, 1, 1)`` run through the same network and trainer (3 x 3 convolutions see only their centre tap).

Left out: the paper's SiD distillation to one-step sampling (the Heun sampler is used throughout, its cost per step
is reported), its larger backbone and real IMC / MRI data (not available offline; see :mod:`.tissue`).

Shapes: panels ``x`` (B, C, H, W) standardised per channel; masks ``m`` (B, C) in {0, 1} (1 = observed).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# observed-channel sets never drawn in training (indices into tissue.CHANNELS)
HELDOUT_PATTERNS: tuple[tuple[int, ...], ...] = ((0, 1, 3, 5, 7), (0, 2, 6, 8), (0, 3, 9, 10, 11), (0, 1, 2, 3, 4, 5))
# two channel groups never observed together in training: epithelial (panCK, E-cadherin) and cell state (Ki67,
# PD-L1, HLA-DR)
APART: tuple[tuple[int, ...], tuple[int, ...]] = ((1, 2), (9, 10, 11))
# observed sets holding two or more channels of each group: far from every training pattern
FAR_PATTERNS: tuple[tuple[int, ...], ...] = ((0, 1, 2, 9, 10, 11), (1, 2, 10, 11))


@dataclass
class MCDConfig:
    channels: int = 12
    widths: tuple[int, ...] = (24, 32, 48)
    emb: int = 64
    heads: int = 4
    sigma_data: float = 1.0
    p_mean: float = -0.4  # EDM's image default is -1.2; see the module docstring
    p_std: float = 1.2
    p_low: float = 0.25
    p_high: float = 0.75
    steps: int = 3500
    batch: int = 24
    lr: float = 2e-3
    seed: int = 0
    heldout: tuple[tuple[int, ...], ...] = field(default_factory=lambda: HELDOUT_PATTERNS)
    apart: tuple[tuple[int, ...], ...] = ()  # channel groups never observed together (APART); () = no rule


def config_dict(cfg: MCDConfig) -> dict:
    d = asdict(cfg)
    d["widths"] = list(cfg.widths)
    d["heldout"] = [list(p) for p in cfg.heldout]
    d["apart"] = [list(p) for p in cfg.apart]
    return d


def config_from(d: dict) -> MCDConfig:
    d = dict(d)
    d["widths"] = tuple(d["widths"])
    d["heldout"] = tuple(tuple(p) for p in d["heldout"])
    d["apart"] = tuple(tuple(p) for p in d.get("apart", ()))  # files trained without the group rule
    return MCDConfig(**d)


# ------------------------------------------------------------------------------------------------------------- blocks
def _down(x: torch.Tensor) -> torch.Tensor:
    return F.avg_pool2d(x, 2) if min(x.shape[-2:]) >= 2 else x


def _up(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return x if x.shape[-2:] == like.shape[-2:] else F.interpolate(x, size=like.shape[-2:], mode="nearest")


class SE(nn.Module):
    """Squeeze-excitation: ``x * sigmoid(W2 relu(W1 mean_hw(x)))``, a per-channel gate that keeps spatial maps."""

    def __init__(self, ch: int, r: int = 4):
        super().__init__()
        self.fc1 = nn.Linear(ch, max(4, ch // r))
        self.fc2 = nn.Linear(max(4, ch // r), ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.sigmoid(self.fc2(F.silu(self.fc1(x.mean((-2, -1))))))
        return x * g[:, :, None, None]


class ChannelAttention(nn.Module):
    """Self-attention between feature channels, each token a channel's flattened map (B, heads, d, d) scores."""

    def __init__(self, ch: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(min(8, ch), ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.temp = nn.Parameter(torch.full((heads, 1, 1), 4.0))
        self.proj = nn.Conv2d(ch, ch, 1)
        nn.init.zeros_(self.proj.weight)
        nn.init.zeros_(self.proj.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        q = F.normalize(q, dim=-1)
        k = F.normalize(k, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) * self.temp, dim=-1)
        return x + self.proj((att @ v).reshape(b, c, h, w))


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, emb: int | None):
        super().__init__()
        self.n1 = nn.GroupNorm(min(8, cin), cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.n2 = nn.GroupNorm(min(8, cout), cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.emb = nn.Linear(emb, cout) if emb else None
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, e: torch.Tensor | None = None) -> torch.Tensor:
        h = self.c1(F.silu(self.n1(x)))
        if self.emb is not None and e is not None:
            h = h + self.emb(e)[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class MCDNet(nn.Module):
    """Denoiser U-Net D plus condition encoder E with SE injection at every resolution; returns the raw F output."""

    def __init__(self, cfg: MCDConfig):
        super().__init__()
        c, ws, e = cfg.channels, cfg.widths, cfg.emb
        self.cfg = cfg
        self.freqs = nn.Parameter(torch.randn(e // 2) * 4.0, requires_grad=False)
        self.emb = nn.Sequential(nn.Linear(e, e), nn.SiLU(), nn.Linear(e, e))
        self.d_in = nn.Conv2d(c, ws[0], 3, padding=1)
        self.e_in = nn.Conv2d(2 * c, ws[0], 3, padding=1)
        self.down = nn.ModuleList()
        self.enc = nn.ModuleList()
        self.se_down = nn.ModuleList()
        prev = ws[0]
        for w in ws:
            self.down.append(ResBlock(prev, w, e))
            self.enc.append(ResBlock(prev, w, None))
            self.se_down.append(SE(w))
            prev = w
        self.mid_att = ChannelAttention(ws[-1], cfg.heads)
        self.mid = ResBlock(ws[-1], ws[-1], e)
        self.up = nn.ModuleList()
        self.se_up = nn.ModuleList()
        for i in reversed(range(len(ws))):
            self.up.append(ResBlock(prev + ws[i], ws[i], e))
            self.se_up.append(SE(ws[i]))
            prev = ws[i]
        self.out_att = ChannelAttention(ws[0], cfg.heads)
        self.out_norm = nn.GroupNorm(min(8, ws[0]), ws[0])
        self.out = nn.Conv2d(ws[0], c, 3, padding=1)
        self.out_se = SE(c, r=2)

    def forward(self, x: torch.Tensor, c_noise: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        f = c_noise[:, None] * self.freqs[None]
        emb = self.emb(torch.cat([f.sin(), f.cos()], 1))
        h, g = self.d_in(x), self.e_in(cond)
        skips, feats = [], []
        for i, (blk, enc, se) in enumerate(zip(self.down, self.enc, self.se_down, strict=True)):
            if i > 0:
                h, g = _down(h), _down(g)
            g = enc(g)
            h = blk(h, emb) + se(g)  # z_l = D_l(x_t) + SE(E_l(c))
            skips.append(h)
            feats.append(g)
        h = self.mid(self.mid_att(h), emb)
        for j, (blk, se) in enumerate(zip(self.up, self.se_up, strict=True)):
            i = len(skips) - 1 - j
            h = _up(h, skips[i])
            h = blk(torch.cat([h, skips[i]], 1), emb) + se(feats[i])
        h = self.out_att(h)
        return self.out_se(self.out(F.silu(self.out_norm(h))))


class MCD(nn.Module):
    """EDM-preconditioned denoiser ``D(x; sigma, c, m)`` (Karras et al. 2022, eq. 7)."""

    def __init__(self, cfg: MCDConfig):
        super().__init__()
        self.cfg = cfg
        self.net = MCDNet(cfg)

    def forward(self, x: torch.Tensor, sigma: torch.Tensor, cond: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        sd = self.cfg.sigma_data
        s = sigma.reshape(-1, 1, 1, 1)
        c_skip = sd**2 / (s**2 + sd**2)
        c_out = s * sd / (s**2 + sd**2).sqrt()
        c_in = 1 / (s**2 + sd**2).sqrt()
        m = mask[:, :, None, None].expand_as(cond)
        f = self.net(c_in * x, sigma.log().reshape(-1) / 4, torch.cat([cond * m, m], 1))
        return c_skip * x + c_out * f


class MaskedRegressor(nn.Module):
    """The deterministic counterpart of :class:`MCD`: the same :class:`MCDNet` (same condition path, injection and
    attention), fed a zero panel at a fixed noise level, trained with MSE on the missing channels under the same random
    masking. ``forward(cond, mask)`` returns the predicted full panel (B, C, H, W)."""

    def __init__(self, cfg: MCDConfig):
        super().__init__()
        self.cfg = cfg
        self.net = MCDNet(cfg)

    def forward(self, cond: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[:, :, None, None].expand_as(cond)
        zero = torch.zeros_like(cond)
        return self.net(zero, torch.zeros(len(cond)), torch.cat([cond * m, m], 1))


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# ------------------------------------------------------------------------------------------------------------ masking
def pattern_mask(observed: Sequence[int], channels: int) -> np.ndarray:
    m = np.zeros(channels, np.float32)
    m[list(observed)] = 1.0
    return m


def allowed(mask: Sequence[bool], cfg: MCDConfig) -> bool:
    """Whether an observation mask (C booleans) can be drawn in training: 1..C-1 observed, not a held-out pattern,
    and not observing a channel of every group of ``cfg.apart``."""
    m = tuple(bool(v) for v in mask)
    k = sum(m)
    if not 0 < k < cfg.channels:
        return False
    if m in {tuple(pattern_mask(p, cfg.channels).astype(bool).tolist()) for p in cfg.heldout}:
        return False
    return not (cfg.apart and all(any(m[i] for i in g) for g in cfg.apart))


@lru_cache(maxsize=8)
def _allowed_codes(channels: int, heldout: tuple, apart: tuple) -> np.ndarray:
    cfg = MCDConfig(channels=channels, heldout=heldout, apart=apart)
    codes = (np.arange(2**channels)[:, None] >> np.arange(channels)[None] & 1).astype(bool)
    return codes[np.array([allowed(row, cfg) for row in codes])]


def distance_to_training(observed: Sequence[int], cfg: MCDConfig) -> int:
    """Hamming distance from the observed set to the nearest mask that training can draw (0 = drawn in training)."""
    target = pattern_mask(observed, cfg.channels).astype(bool)
    ok = _allowed_codes(cfg.channels, tuple(cfg.heldout), tuple(cfg.apart))
    return int((ok != target[None]).sum(1).min())


def sample_masks(n: int, cfg: MCDConfig, gen: torch.Generator) -> torch.Tensor:
    """(n, C) training masks: Bernoulli(p) per channel, redrawn until :func:`allowed`."""
    c = cfg.channels
    out = torch.empty(n, c)
    for i in range(n):
        while True:
            p = cfg.p_low + (cfg.p_high - cfg.p_low) * torch.rand((), generator=gen)
            m = torch.rand(c, generator=gen) < p
            if allowed(m.tolist(), cfg):
                break
        out[i] = m.float()
    return out


# ----------------------------------------------------------------------------------------------------------- training
@dataclass
class TrainLog:
    loss: list[float]
    seconds: float
    steps: int


class Standardiser:
    """Per-channel standardisation fitted on the training panels (mean, std of shape (C,))."""

    def __init__(self, mean: np.ndarray, std: np.ndarray):
        self.mean = np.asarray(mean, np.float32)
        self.std = np.asarray(std, np.float32)

    @classmethod
    def fit(cls, x: np.ndarray) -> Standardiser:
        return cls(x.mean((0, 2, 3)), x.std((0, 2, 3)) + 1e-6)

    def fwd(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean[:, None, None]) / self.std[:, None, None]

    def inv(self, z: np.ndarray) -> np.ndarray:
        return z * self.std[:, None, None] + self.mean[:, None, None]


def _augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    if x.shape[-1] == 1:
        return x
    k = int(torch.randint(4, (), generator=gen))
    x = torch.rot90(x, k, (-2, -1))
    return x.flip(-1) if bool(torch.rand((), generator=gen) < 0.5) else x


def train(z: np.ndarray, cfg: MCDConfig, progress=None, log_every: int = 100, regressor: bool = False,
          init: dict | None = None) -> tuple[MCD | MaskedRegressor, TrainLog]:
    """EDM training on standardised panels ``z`` (N, C, H, W) with random channel masking; returns (model, log).
    ``regressor=True`` trains :class:`MaskedRegressor` instead: the same data, masks and optimiser, MSE on the
    missing channels. ``init``: a state dict to start from (e.g. a trained MCD's, whose keys the regressor shares)."""
    from backend.runtime import report

    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = MaskedRegressor(cfg) if regressor else MCD(cfg)
    if init is not None:
        model.load_state_dict({k: v.float() for k, v in init.items()})
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=max(cfg.steps, 40),
                                                pct_start=0.05)
    data = torch.as_tensor(z)
    losses, t0, run = [], time.perf_counter(), 0.0
    for step in range(cfg.steps):
        idx = torch.randint(len(data), (cfg.batch,), generator=gen)
        x0 = _augment(data[idx], gen)
        m = sample_masks(cfg.batch, cfg, gen)
        if regressor:
            miss = (1 - m)[:, :, None, None]
            loss = (miss * (model(x0, m) - x0) ** 2).sum() / (miss.sum() * x0.shape[-1] * x0.shape[-2])
        else:
            sigma = (cfg.p_mean + cfg.p_std * torch.randn(cfg.batch, generator=gen)).exp()
            xt = x0 + sigma[:, None, None, None] * torch.randn(x0.shape, generator=gen)
            den = model(xt, sigma, x0, m)
            sd = cfg.sigma_data
            w = (sigma**2 + sd**2) / (sigma * sd) ** 2
            loss = (w[:, None, None, None] * (den - x0) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        run = loss.item() if step == 0 else 0.98 * run + 0.02 * loss.item()
        if (step + 1) % log_every == 0 or step + 1 == cfg.steps:
            losses.append(round(run, 5))
            report(progress, (step + 1) / cfg.steps, f"step {step + 1}/{cfg.steps} loss {run:.4f}")
    model.eval()
    return model, TrainLog(losses, time.perf_counter() - t0, cfg.steps)


# ----------------------------------------------------------------------------------------------------------- sampling
def sigma_schedule(steps: int, smin: float = 0.002, smax: float = 80.0, rho: float = 7.0) -> torch.Tensor:
    i = torch.arange(steps, dtype=torch.float64)
    s = (smax ** (1 / rho) + i / max(steps - 1, 1) * (smin ** (1 / rho) - smax ** (1 / rho))) ** rho
    return torch.cat([s, torch.zeros(1, dtype=torch.float64)]).float()


@torch.no_grad()
def impute(model: MCD, z: np.ndarray, observed: Sequence[int], n_samples: int = 4, steps: int = 18, seed: int = 0,
           batch: int = 64) -> np.ndarray:
    """Posterior samples ``(n_samples, N, C, H, W)`` (standardised) given the observed channels of ``z`` (N, C, H, W).

    Deterministic Heun (EDM Algorithm 1) from seeded Gaussian noise; observed channels are copied into the output."""
    from backend.errors import InputError

    if not 1 <= steps <= 200:
        raise InputError(f"steps must be between 1 and 200 (got {steps})")
    c = model.cfg.channels
    if z.ndim != 4 or z.shape[1] != c:
        raise InputError(f"the stack must have shape (N, {c}, H, W); got {tuple(z.shape)}")
    obs = sorted(set(int(o) for o in observed))
    if not obs or len(obs) >= c or obs[0] < 0 or obs[-1] >= c:
        raise InputError(f"observed channels must be 1 to {c - 1} distinct indices in 0..{c - 1}; got {list(observed)}")
    mask = torch.as_tensor(pattern_mask(obs, c))
    batch = batch if z.shape[-1] * z.shape[-2] > 1 else max(batch, 4096)  # vectors are cheap: larger batches
    x = torch.as_tensor(z, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    sig = sigma_schedule(steps)
    reps = x.repeat(n_samples, 1, 1, 1)
    out = torch.empty_like(reps)
    noise = torch.randn(reps.shape, generator=gen)
    for a in range(0, len(reps), batch):
        cond = reps[a:a + batch]
        m = mask.expand(len(cond), c)
        xi = noise[a:a + batch] * sig[0]
        for i in range(steps):
            s0, s1 = sig[i], sig[i + 1]
            d0 = (xi - model(xi, s0.expand(len(xi)), cond, m)) / s0
            xn = xi + (s1 - s0) * d0
            if s1 > 0:
                d1 = (xn - model(xn, s1.expand(len(xi)), cond, m)) / s1
                xn = xi + (s1 - s0) * 0.5 * (d0 + d1)
            xi = xn
        out[a:a + batch] = xi
    out = out.reshape(n_samples, *x.shape)
    out[:, :, obs] = x[None, :, obs]
    return out.numpy()


@torch.no_grad()
def regress(model: MaskedRegressor, z: np.ndarray, observed: Sequence[int], batch: int = 64) -> np.ndarray:
    """The masked regressor's prediction ``(N, C, H, W)`` (standardised) from the observed channels of ``z``; observed
    channels are copied into the output."""
    c = model.cfg.channels
    obs = sorted(set(int(o) for o in observed))
    mask = torch.as_tensor(pattern_mask(obs, c))
    x = torch.as_tensor(z, dtype=torch.float32)
    batch = batch if z.shape[-1] * z.shape[-2] > 1 else max(batch, 4096)
    out = torch.cat([model(x[a:a + batch], mask.expand(len(x[a:a + batch]), c)) for a in range(0, len(x), batch)])
    out[:, obs] = x[:, obs]
    return out.numpy()


def nfe(steps: int) -> int:
    """Network evaluations of the Heun sampler with ``steps`` steps."""
    return 2 * steps - 1

