"""The Lipschitz-constrained, "self-aware" watermark (SRW) and its training pieces, as a CPU miniature.

Paper: "The Self-Re-Watermarking Trap: From Exploit to Resilience", Senthuran, Xiang, Natgunanathan, Thayasivam,
ICLR 2026 (OpenReview st1hrLTP14); official code GitHub SVithurabiman/SRW (read to understand the recipe, not copied).

What the paper does (kept here):

- Every convolution and linear layer of the encoder and the decoder is wrapped in spectral normalisation (torch's
  ``spectral_norm``, 5 power iterations), followed by GroupNorm(4, affine=False) and ReLU: the layers' sensitivity to
  their input is limited.
- Encoder: a U-Net over the image concatenated with a message plane (bits -> +-1 -> two spectral-normed linear layers to
  H*W -> two spectral-normed convolutions -> one plane); output ``clamp(x + s_f * residual, -1, 1)``, s_f = 0.9.
- Decoder: spectral-normed conv-GN-ReLU blocks with a residual add, flatten, spectral-normed linear to L logits.
- Training (:func:`training_step`): the clean term BCE(D(x_w~), m) through one random distortion (switched on once the
  clean bit error rate is below 0.15); the self-re-watermarking term BCE(D(E(x_w~, m')), m) with gradients through both
  encoder calls; the PGD-overwrite term BCE(D(x_pgd), m), x_pgd a targeted L-inf attack toward m' whose epsilon is 0
  during a warm-up and then ramps linearly to 0.06 by one fifth of training; the fidelity term on x_w. Both adversarial
  terms are labelled with the ORIGINAL message m. Adaptive loss weights (:class:`AdaptiveWeights`).

The miniature (deviations, all stated on the page and in the manifest):

- 32 x 32 working frame and 16 bits (paper: 128 x 128, 30 bits); a 2-level U-Net of 32/64 channels (paper: 4 levels up
  to 1024 channels) and no frozen ImageNet ResNet-50 branch (needs downloaded weights); the decoder uses two stride-2
  blocks before the flatten (paper: stride 1 at 128 px). Any image size is read at the paper's
  128 x 128 working resolution as 4 x 4 frames of 32 x 32 (:data:`TILES`): the image is resized to 128 px square and
  cut into 16 frames; the encoder marks each frame with the same message (each residual capped at the frame PSNR
  floor); the tiled residual is upsampled bilinearly to the image size and added; the decoder averages its logits
  over the 16 frames of the marked image resized the same way. Why not one frame per image (the whole image resized
  to 32 x 32, as the attribution TinyHiDDeN does): measured on the development photos of
  :mod:`backend.watermark.photos` (``python -m backend.watermark.rewatermark.diagnose``), the one-frame srw loses
  clean bits on detailed, high-contrast frames: per bit, a 32 dB residual moves the spectral-normed decoder's logits
  by about 3-5 (the plain twin's by 7-9) while its logits on a detailed unmarked frame reach 4-7, and the
  upsampling round trip (:func:`round_trip`) returns only about 0.82 of the residual to the frame. A 2 dB stronger
  residual fixes most of those bits; JPEG history, colour and clipping change nothing; retraining through the round
  trip on squashed, contrast-raised frames, or pulling the decoder's logits on the cover to 0 (``null_weight``, an
  addition to the paper's losses; options of :mod:`backend.train.rewatermark`), did not help. Tiling attacks the
  cause: a frame that covers a quarter of the image per side holds about two thirds of the detail (mean RMS detail
  0.064 vs 0.098), and the content's responses differ from frame to frame while the mark's agree, so averaging 16
  frames outvotes the content (development clean accuracy 0.966 -> 1.000 for srw; every variant, and the self
  re-watermarking reading of each, keeps its order). The price is fidelity at the same PSNR: the residual holds
  finer patterns, so SSIM falls (development photos: 0.983 with one frame, 0.942 tiled). The weights are the same:
  the frame networks are trained on 32 x 32 frames either way.
- Fidelity = MSE + 0.5 (1 - SSIM) instead of MSE + 0.5 LPIPS-VGG (VGG weights are not available offline); the MSE
  weight is 0 for the first 30 % of steps and then ramps (the spec's warm-up against the encoder collapsing to identity).
- A residual cap: the residual is scaled down (never up) so the frame PSNR is at least ``psnr_floor`` dB (32 dB). The
  paper controls strength only through the loss weights; the cap is the same for every variant, so the comparison between
  variants is at a common maximum strength. Measured (``python -m backend.train rewatermark --psnr-floor 0``): without the cap (``--psnr-floor 0``, the paper's
  ``clamp(x + s_f * residual)``) the same plain recipe ends at 27.0 dB and still keeps A after one self-re-watermarking
  round (0.733 on 256 validation frames, 0.664 on the 8-image ci subset; capped: 0.744 / 0.727), so the cap is not what
  stops the one-round overwrite; it is kept so every variant meets the 30 dB floor.
- Distortions: identity, real JPEG Q40 with a straight-through gradient, Gaussian blur, pixel dropout, cropout,
  Gaussian noise and rescaling (paper also: rotation +-30 deg and flips, which a flatten read-out cannot follow at
  this size).
- 5 PGD iterations during training (paper: 20), step = eps / 4 (the paper's code ramps the step together with eps).

Why no certificate: torch's spectral norm normalises each convolution's weight reshaped to (out, in*k*k); the true
operator norm of a 3x3 convolution can then be close to 3 (:func:`conv_operator_norm` measures it), and
GroupNorm without affine divides by the group's standard deviation, which has no global Lipschitz bound. So "every
layer <= 1" does not certify the network; :func:`sensitivity` measures it empirically instead.

Tensors: inside the networks images are ``(B, 3, S, S)`` in [-1, 1] (the paper's range); the public wrappers
(:meth:`SRWModel.embed`, :meth:`SRWModel.decode_logits`) take ``(B, 3, H, W)`` in [0, 1] like
:mod:`backend.watermark.learned`. Messages ``(B, n)`` float in {0, 1}.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from backend import weights
from backend.registry import Registry, choose
from backend.runtime import ASSETS


@dataclass(frozen=True)
class Variant:
    """One training recipe of the SRW family (the paper's ablation): spectral norm on every layer, the
    re-embedding loss, the PGD-overwrite loss. Called, it builds the untrained model of the recipe."""

    name: str
    spectral_norm: bool
    reembed: bool
    pgd: bool

    def __call__(self, **config: object) -> SRWModel:
        return SRWModel(SRWConfig(spectral_norm=self.spectral_norm, variant=self.name, **config))


VARIANTS: Registry[Variant] = Registry("SRW variant")
VARIANTS.add("plain", Variant("plain", spectral_norm=False, reembed=False, pgd=False),
             label="plain (no constraint, no adversarial terms)", kind="baseline")
VARIANTS.add("sn", Variant("sn", spectral_norm=True, reembed=False, pgd=False), label="spectral norm only",
             kind="ablation")
VARIANTS.add("reemb", Variant("reemb", spectral_norm=False, reembed=True, pgd=False), label="re-embedding loss only",
             kind="ablation")
VARIANTS.add("sn_reemb", Variant("sn_reemb", spectral_norm=True, reembed=True, pgd=False),
             label="spectral norm + re-embedding loss", kind="ablation")
VARIANTS.add("srw", Variant("srw", spectral_norm=True, reembed=True, pgd=True),
             label="SRW: spectral norm + re-embedding + PGD losses", kind="ours")


def weights_path(variant: str) -> Path:
    return ASSETS / f"rewatermark_{variant}.safetensors"


@dataclass(frozen=True)
class SRWConfig:
    """Architecture and embedding settings (paper values in brackets)."""

    n_bits: int = 16  # [30]
    size: int = 32  # working frame [128]
    channels: int = 16
    groups: int = 4  # GroupNorm(4, affine=False) [same]
    spectral_norm: bool = True  # [every conv and linear layer]
    power_iterations: int = 5  # [5]
    strength: float = 0.9  # s_f [0.9]
    psnr_floor: float = 32.0  # residual cap, dB at the frame (a deviation, see the module docstring; 0 disables)
    variant: str = "srw"


def _sn(module: nn.Module, cfg: SRWConfig) -> nn.Module:
    if not cfg.spectral_norm:
        return module
    return nn.utils.parametrizations.spectral_norm(module, n_power_iterations=cfg.power_iterations)


class Block(nn.Sequential):
    """(spectral-normed) conv 3x3 -> GroupNorm(groups, affine=False) -> ReLU."""

    def __init__(self, cin: int, cout: int, cfg: SRWConfig, stride: int = 1):
        super().__init__(_sn(nn.Conv2d(cin, cout, 3, stride, 1), cfg), nn.GroupNorm(cfg.groups, cout, affine=False),
                         nn.ReLU())


class SRWEncoder(nn.Module):
    """``(x (B,3,S,S) in [-1,1], bits (B,n)) -> residual (B,3,S,S)`` in [-1, 1] units, already times ``s_f`` and
    capped (see :func:`cap_residual`)."""

    def __init__(self, cfg: SRWConfig):
        super().__init__()
        self.cfg = cfg
        c, s = cfg.channels, cfg.size
        self.msg_linear = nn.Sequential(_sn(nn.Linear(cfg.n_bits, 256), cfg), nn.ReLU(),
                                        _sn(nn.Linear(256, s * s), cfg))
        self.msg_conv = nn.Sequential(_sn(nn.Conv2d(1, 8, 3, 1, 1), cfg), nn.ReLU(), _sn(nn.Conv2d(8, 1, 3, 1, 1), cfg))
        self.inc = Block(4, c, cfg)
        self.down1 = Block(c, 2 * c, cfg, stride=2)
        self.down2 = Block(2 * c, 2 * c, cfg, stride=2)
        self.mid = Block(2 * c, 2 * c, cfg)
        self.up1 = Block(4 * c, c, cfg)
        self.up2 = Block(2 * c, c, cfg)
        self.out = _sn(nn.Conv2d(c, 3, 1), cfg)

    def forward(self, x: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        b, _, h, w = x.shape
        plane = self.msg_conv(self.msg_linear(bits * 2 - 1).view(b, 1, self.cfg.size, self.cfg.size))
        if plane.shape[-2:] != (h, w):
            plane = F.interpolate(plane, size=(h, w), mode="bilinear", align_corners=False)
        e0 = self.inc(torch.cat([x, plane], 1))
        e1 = self.down1(e0)
        e2 = self.mid(self.down2(e1))
        d1 = self.up1(torch.cat([F.interpolate(e2, size=e1.shape[-2:], mode="bilinear", align_corners=False), e1], 1))
        d0 = self.up2(torch.cat([F.interpolate(d1, size=e0.shape[-2:], mode="bilinear", align_corners=False), e0], 1))
        r = self.cfg.strength * torch.tanh(self.out(d0))
        return cap_residual(r, self.cfg.psnr_floor)


class SRWDecoder(nn.Module):
    """``x (B,3,S,S) in [-1,1] -> logits (B,n)``: conv-GN-ReLU blocks (two with stride 2), a residual block, flatten,
    spectral-normed linear."""

    def __init__(self, cfg: SRWConfig):
        super().__init__()
        c = cfg.channels
        self.b1 = Block(3, c, cfg)
        self.b2 = Block(c, c, cfg, stride=2)
        self.b3 = Block(c, c, cfg, stride=2)
        self.b4 = Block(c, c, cfg)
        g = cfg.size // 4
        self.head = _sn(nn.Linear(c * g * g, cfg.n_bits), cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.b3(self.b2(self.b1(x)))
        h = h + self.b4(h)
        return self.head(h.flatten(1))


def cap_residual(r: torch.Tensor, psnr_floor: float) -> torch.Tensor:
    """Scale each residual ``(B,3,H,W)`` (range [-1, 1], i.e. 2 units = 255 levels) down so that the image PSNR is at
    least ``psnr_floor`` dB; residuals already weaker are unchanged. ``psnr_floor <= 0`` disables the cap."""
    if psnr_floor <= 0:
        return r
    cap = 2.0 * 10.0 ** (-psnr_floor / 20.0)
    rms = r.pow(2).mean(dim=(1, 2, 3), keepdim=True).clamp_min(1e-12).sqrt()
    return r * torch.clamp(cap / rms, max=1.0)


def _rms(r: torch.Tensor) -> torch.Tensor:
    return r.pow(2).mean(dim=(1, 2, 3), keepdim=True).clamp_min(1e-12).sqrt()


def upsample_residual(r_frame: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """A frame residual ``(B,3,S,S)`` brought to the image size ``(H, W)`` as the any-size API embeds it: bilinear
    upsampling, rescaled to the frame's RMS (so the image PSNR equals the frame PSNR)."""
    if tuple(r_frame.shape[-2:]) == tuple(size):
        return r_frame
    r = F.interpolate(r_frame, size=size, mode="bilinear", align_corners=False)
    return r * (_rms(r_frame) / _rms(r))


def round_trip(r_frame: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """What the decoder's frame holds of a frame residual ``(B,3,S,S)`` embedded into an ``(H, W)`` image: upsampled
    by :func:`upsample_residual`, then resized back to the frame like the decoder's input. Measured on photographs of
    256-1600 px, 0.79-0.83 of the residual survives (projection gain): the frame's finest patterns do not come back."""
    return resize(upsample_residual(r_frame, size), tuple(r_frame.shape[-2:]))


def resize(images: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    if tuple(images.shape[-2:]) == tuple(size):
        return images
    shrink = size[0] < images.shape[-2] or size[1] < images.shape[-1]
    return F.interpolate(images, size=size, mode="bilinear", align_corners=False, antialias=shrink)


#: Frames per side of the any-size path: an image is resized to ``TILES * 32`` = 128 px square (the paper's working
#: resolution) and read as ``TILES**2`` frames of 32 x 32 that all carry the same message; the decoder averages their
#: logits. Chosen on the development photos only, 8 messages per photo (srw): bits wrong 43 / 2 / 0 of 1,280 with
#: 1 / 2 x 2 / 4 x 4 frames (smallest signed logit -2.39 / -0.51 / +1.05). The price is fidelity at the same PSNR:
#: the residual holds finer patterns, so SSIM falls (development photos at 32.1 dB: 0.983 / 0.968 / 0.942).
TILES = 4


def to_tiles(x: torch.Tensor, tiles: int, s: int) -> torch.Tensor:
    """``(B,C,tiles*s,tiles*s)`` -> ``(B*tiles**2,C,s,s)``, frames in row-major order per image."""
    if tiles == 1:
        return x
    b, c = x.shape[:2]
    t = x.reshape(b, c, tiles, s, tiles, s).permute(0, 2, 4, 1, 3, 5)
    return t.reshape(b * tiles * tiles, c, s, s)


def from_tiles(t: torch.Tensor, tiles: int, s: int) -> torch.Tensor:
    """The inverse of :func:`to_tiles`."""
    if tiles == 1:
        return t
    c = t.shape[1]
    x = t.reshape(-1, tiles, tiles, c, s, s).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(-1, c, tiles * s, tiles * s)


class SRWModel(nn.Module):
    """Encoder + decoder with the any-size wrappers on ``(B,3,H,W)`` images in [0, 1]."""

    def __init__(self, cfg: SRWConfig | None = None):
        super().__init__()
        self.cfg = cfg or SRWConfig()
        self.encoder = SRWEncoder(self.cfg)
        self.decoder = SRWDecoder(self.cfg)

    # frame-level (training) API, [-1, 1]
    def embed_frame(self, x: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        return (x + self.encoder(x, bits)).clamp(-1, 1)

    # any-size API, [0, 1]
    def residual(self, images: torch.Tensor, bits: torch.Tensor, target_psnr: float | None = None,
                 tiles: int = TILES) -> torch.Tensor:
        """Full-size residual ``(B,3,H,W)`` in [0, 1] units: the image resized to ``tiles * S`` square, cut into
        ``tiles**2`` frames, each frame's residual (same message, each capped at the frame PSNR floor), the tiled
        residual upsampled to ``(H, W)``. ``target_psnr`` rescales it to exactly that PSNR (used only to compare
        models at matched PSNR)."""
        s = self.cfg.size
        x = to_tiles(resize(images, (tiles * s, tiles * s)) * 2 - 1, tiles, s)
        r_frames = self.encoder(x, bits.repeat_interleave(tiles * tiles, dim=0)) / 2
        r = upsample_residual(from_tiles(r_frames, tiles, s), tuple(images.shape[-2:]))
        if target_psnr is not None:
            r = r * (10.0 ** (-target_psnr / 20.0) / _rms(r))
        return r

    def embed(self, images: torch.Tensor, bits: torch.Tensor, target_psnr: float | None = None,
              tiles: int = TILES) -> torch.Tensor:
        return (images + self.residual(images, bits, target_psnr, tiles)).clamp(0, 1)

    def decode_logits(self, images: torch.Tensor, tiles: int = TILES) -> torch.Tensor:
        """``(B,3,H,W)`` in [0, 1] -> ``(B, n)`` logits: the mean of the decoder's logits over the ``tiles**2``
        frames of the image resized to ``tiles * S`` square."""
        s = self.cfg.size
        logits = self.decoder(to_tiles(resize(images, (tiles * s, tiles * s)) * 2 - 1, tiles, s))
        return logits.view(images.shape[0], tiles * tiles, -1).mean(1)


# ------------------------------------------------------------------------------------------ training components
def pgd_epsilon(step: int, total_steps: int, warmup: int = 100, max_eps: float = 0.06, ramp_fraction: float = 0.2
                ) -> float:
    """The PGD curriculum: 0 for ``warmup`` steps, then linear up to ``max_eps`` at ``ramp_fraction`` of training,
    then constant (units of the [-1, 1] image range)."""
    if step < warmup:
        return 0.0
    end = max(warmup + 1, int(ramp_fraction * total_steps))
    return float(max_eps * min(1.0, (step - warmup) / (end - warmup)))


def pgd_overwrite(decode: callable, x: torch.Tensor, target: torch.Tensor, eps: float, step_size: float,
                  iters: int, lo: float = -1.0, hi: float = 1.0) -> torch.Tensor:
    """Targeted L-inf PGD: push ``decode(x')`` toward the bits ``target`` within ``||x' - x||_inf <= eps`` and the
    pixel range ``[lo, hi]``. Starts at ``x``; returns the last iterate (detached). ``eps = 0`` returns ``x``."""
    x = x.detach()
    if eps <= 0 or iters <= 0:
        return x.clone()
    adv = x.clone()
    for _ in range(iters):
        adv.requires_grad_(True)
        with torch.enable_grad():
            loss = F.binary_cross_entropy_with_logits(decode(adv), target)
            (g,) = torch.autograd.grad(loss, adv)
        with torch.no_grad():
            adv = adv - step_size * g.sign()
            adv = torch.max(torch.min(adv, x + eps), x - eps).clamp(lo, hi)
    return adv.detach()


BASE_WEIGHTS = (27.0, 6.75, 3.5, 3.5)  # encoder, decoder, adv (PGD), re-embedding
WEIGHT_SHIFT = (2.5, -1.5, -1.0, -1.0)


@dataclass
class AdaptiveWeights:
    """The paper's adaptive loss weights: readiness = mean(1 - min(BER_clean/0.2, 1), 1 - min(BER_over/0.2, 1)),
    alpha = 0.7 progress + 0.3 readiness, target = base + alpha * shift, new = 0.8 previous + 0.2 target."""

    weights: list[float] = field(default_factory=lambda: list(BASE_WEIGHTS))
    smoothing: float = 0.8

    @staticmethod
    def alpha(progress: float, ber_clean: float, ber_over: float) -> float:
        readiness = 0.5 * ((1 - min(ber_clean / 0.2, 1.0)) + (1 - min(ber_over / 0.2, 1.0)))
        return 0.7 * progress + 0.3 * readiness

    @staticmethod
    def targets(alpha: float) -> list[float]:
        return [b + alpha * s for b, s in zip(BASE_WEIGHTS, WEIGHT_SHIFT, strict=True)]

    def update(self, progress: float, ber_clean: float, ber_over: float) -> list[float]:
        tgt = self.targets(self.alpha(progress, ber_clean, ber_over))
        self.weights = [self.smoothing * w + (1 - self.smoothing) * t for w, t in zip(self.weights, tgt, strict=True)]
        return self.weights


def _blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    k = int(2 * math.ceil(2 * sigma) + 1)
    t = torch.arange(k, dtype=x.dtype) - k // 2
    g = torch.exp(-(t**2) / (2 * sigma**2))
    g = g / g.sum()
    c = x.shape[1]
    x = F.conv2d(F.pad(x, (k // 2, k // 2, 0, 0), mode="reflect"), g.view(1, 1, 1, k).expand(c, 1, 1, k), groups=c)
    return F.conv2d(F.pad(x, (0, 0, k // 2, k // 2), mode="reflect"), g.view(1, 1, k, 1).expand(c, 1, k, 1), groups=c)


NOISES = ("identity", "jpeg", "blur", "dropout", "cropout", "noise", "scale")


def distort(x_w: torch.Tensor, x: torch.Tensor, rng: np.random.Generator, kind: str | None = None) -> torch.Tensor:
    """One random training distortion of ``x_w`` (B,3,S,S) in [-1, 1] (``x`` = the cover, for dropout/cropout)."""
    from backend.watermark.attacks import jpeg_straight_through

    kind = choose(kind, NOISES, "training distortion") if kind else NOISES[int(rng.integers(len(NOISES)))]
    if kind == "identity":
        return x_w
    if kind == "jpeg":  # real JPEG Q40 forward, identity gradient
        return jpeg_straight_through((x_w + 1) / 2, 40) * 2 - 1
    if kind == "blur":
        return _blur(x_w, float(rng.uniform(0.5, 1.5)))
    if kind == "dropout":  # keep each watermarked pixel with p = 1 - rate, else the cover pixel
        rate = float(rng.uniform(0.30, 0.45))
        keep = torch.from_numpy(rng.random((x_w.shape[0], 1, *x_w.shape[-2:])) >= rate).to(x_w.dtype)
        return x_w * keep + x * (1 - keep)
    if kind == "cropout":  # a random window of 65 % of the area stays watermarked, the rest is the cover
        h, w = x_w.shape[-2:]
        side = math.sqrt(1 - 0.35)
        ch, cw = int(round(h * side)), int(round(w * side))
        y0, x0 = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        mask = torch.zeros(1, 1, h, w, dtype=x_w.dtype)
        mask[..., y0:y0 + ch, x0:x0 + cw] = 1
        return x_w * mask + x * (1 - mask)
    if kind == "noise":
        return (x_w + torch.randn_like(x_w) * float(rng.uniform(0.01, 0.06))).clamp(-1, 1)
    s = float(rng.uniform(0.7, 1.3))  # the remaining kind: scale
    h, w = x_w.shape[-2:]
    mid = F.interpolate(x_w, size=(max(8, int(h * s)), max(8, int(w * s))), mode="bilinear", align_corners=False,
                        antialias=s < 1)
    return F.interpolate(mid, size=(h, w), mode="bilinear", align_corners=False, antialias=s > 1)


def fidelity_loss(x_w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """MSE + 0.5 (1 - SSIM) on [-1, 1] images (the paper: MSE + 0.5 LPIPS-VGG)."""
    from backend.watermark.metrics import ssim_torch

    return F.mse_loss(x_w, x) + 0.5 * (1 - ssim_torch((x_w + 1) / 2, (x + 1) / 2)).mean()


@dataclass
class StepOutput:
    loss: torch.Tensor
    terms: dict[str, float]
    ber_clean: float
    ber_over: float


def _ber(logits: torch.Tensor, bits: torch.Tensor) -> float:
    return float(((logits > 0).float() != bits).float().mean())


def training_step(model: SRWModel, x: torch.Tensor, m: torch.Tensor, m_adv: torch.Tensor, weights: list[float],
                  rng: np.random.Generator, *, reembed: bool, pgd: bool, use_noise: bool, eps: float,
                  pgd_iters: int = 5, mse_scale: float = 1.0, image_size: tuple[int, int] | None = None,
                  null_weight: float = 0.0) -> StepOutput:
    """One SRW training step's loss on a frame batch ``x (B,3,S,S)`` in [-1, 1].

    loss = w_enc * mse_scale * fidelity(x_w, x) + w_dec BCE(D(x_w~), m) + w_adv BCE(D(x_pgd), m)
    + w_re BCE(D(E(x_w~, m')), m); terms switched off by ``reembed``/``pgd`` are not computed. With ``image_size``
    ``(H, W)``, every embedding (the owner's and the re-embedding) reaches the decoder through :func:`round_trip` at
    that size, as in the any-size API; the fidelity term stays on the frame residual (whose RMS the API keeps).
    ``null_weight`` > 0 adds ``null_weight * mean(D(x)^2)``: the decoder's logits on the unmarked cover pulled to 0,
    so content does not speak for the message (a Lipschitz decoder moves its logits by a 32 dB residual only so far,
    about 3-5 here, while its response to a detailed cover is not bounded by the residual)."""
    w_enc, w_dec, w_adv, w_re = weights

    def embed(frames: torch.Tensor, bits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = model.encoder(frames, bits)
        x_w = (frames + r).clamp(-1, 1)
        if image_size is None:
            return x_w, x_w
        return x_w, (frames + round_trip(r, image_size)).clamp(-1, 1)

    x_w, x_read = embed(x, m)
    x_t = distort(x_read, x, rng) if use_noise else x_read
    logits = model.decoder(x_t)
    fid = fidelity_loss(x_w, x)
    bce = F.binary_cross_entropy_with_logits(logits, m)
    loss = w_enc * mse_scale * fid + w_dec * bce
    terms = {"fidelity": float(fid.detach()), "bce_clean": float(bce.detach())}
    if null_weight > 0:
        null = model.decoder(x).pow(2).mean()
        loss = loss + null_weight * null
        terms["null"] = float(null.detach())
    over = []
    if reembed:
        x_rw = embed(x_t, m_adv)[1]  # gradients flow through both encoder calls
        lrw = model.decoder(x_rw)
        bce_re = F.binary_cross_entropy_with_logits(lrw, m)
        loss = loss + w_re * bce_re
        terms["bce_reembed"] = float(bce_re.detach())
        over.append(_ber(lrw, m))
    if pgd:
        x_adv = pgd_overwrite(model.decoder, x_t, m_adv, eps, max(eps / 4, 1e-4), pgd_iters)
        ladv = model.decoder(x_adv)
        bce_adv = F.binary_cross_entropy_with_logits(ladv, m)
        loss = loss + w_adv * bce_adv
        terms["bce_pgd"] = float(bce_adv.detach())
        over.append(_ber(ladv, m))
    ber_clean = _ber(logits, m)
    return StepOutput(loss, terms, ber_clean, float(np.mean(over)) if over else ber_clean)


# ---------------------------------------------------------------------------------------------- sensitivity
def conv_operator_norm(conv: nn.Conv2d, size: int, iters: int = 50, seed: int = 0) -> float:
    """The true L2 operator norm of a convolution (weights as used, bias ignored) on ``size x size`` inputs, by power
    iteration on ``conv^T conv`` (a lower estimate that converges from below)."""
    w = conv.weight.detach()
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(1, w.shape[1], size, size, generator=g)
    v = v / v.norm()
    sigma = 0.0
    for _ in range(iters):
        u = F.conv2d(v, w, None, conv.stride, conv.padding)
        sigma = float(u.norm())
        v = F.conv_transpose2d(u, w, None, conv.stride, conv.padding, output_padding=_out_pad(conv, size, u))
        v = v / v.norm().clamp_min(1e-12)
    return sigma


def _out_pad(conv: nn.Conv2d, size: int, u: torch.Tensor) -> int:
    s = conv.stride[0]
    if s == 1:
        return 0
    k, p = conv.kernel_size[0], conv.padding[0]
    return size - ((u.shape[-1] - 1) * s - 2 * p + k)


def layer_norms(model: SRWModel) -> list[dict[str, object]]:
    """Per layer: the spectral norm of the reshaped weight (what spectral normalisation controls) and, for
    convolutions, the true operator norm at the layer's input size."""
    model.eval()
    sizes: dict[str, int] = {}
    hooks = []
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Conv2d):
            hooks.append(mod.register_forward_hook(lambda m, i, o, n=name: sizes.__setitem__(n, i[0].shape[-1])))
    with torch.no_grad():
        s = model.cfg.size
        model.decoder(torch.zeros(1, 3, s, s))
        model.encoder(torch.zeros(1, 3, s, s), torch.zeros(1, model.cfg.n_bits))
    for h in hooks:
        h.remove()
    out = []
    for name, mod in model.named_modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            w = mod.weight.detach()
            reshaped = float(torch.linalg.matrix_norm(w.reshape(w.shape[0], -1), ord=2))
            row = {"layer": name, "kind": "Conv2d" if isinstance(mod, nn.Conv2d) else "Linear",
                   "reshaped_sigma": reshaped}
            row["operator_norm"] = conv_operator_norm(mod, sizes[name]) if isinstance(mod, nn.Conv2d) else reshaped
            out.append(row)
    return out


def sensitivity(f: callable, x: torch.Tensor, n_random: int = 16, radius: float = 1e-2, adv_steps: int = 10,
                seed: int = 0) -> dict[str, np.ndarray]:
    """Empirical sensitivity ratios ``||f(x + d) - f(x)|| / ||d||`` of a function on ``x (B, ...)``: ``random``
    ``(B * n_random,)`` for Gaussian directions with ``||d|| = radius * ||x||``-scaled, and ``adversarial`` ``(B,)``
    after ``adv_steps`` of gradient ascent on the ratio (power iteration on the local Jacobian)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        fx = f(x)
    r = radius * math.sqrt(x[0].numel())  # ||d|| ~ radius per pixel
    rand = []
    for _ in range(n_random):
        d = torch.randn(x.shape, generator=g)
        d = d * (r / d.flatten(1).norm(dim=1).view(-1, *[1] * (x.dim() - 1)))
        with torch.no_grad():
            rand.append(((f(x + d) - fx).flatten(1).norm(dim=1) / r).numpy())
    d = torch.randn(x.shape, generator=g)
    for _ in range(adv_steps):
        d = d * (r / d.flatten(1).norm(dim=1).view(-1, *[1] * (x.dim() - 1)))
        d.requires_grad_(True)
        with torch.enable_grad():
            obj = (f(x + d) - fx).pow(2).sum()
            (gd,) = torch.autograd.grad(obj, d)
        d = gd.detach()
    d = d * (r / d.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *[1] * (x.dim() - 1)))
    with torch.no_grad():
        adv = ((f(x + d) - fx).flatten(1).norm(dim=1) / r).numpy()
    return {"random": np.concatenate(rand), "adversarial": adv}


# ------------------------------------------------------------------------------------------------- weights i/o
MADE_BY = "python -m backend.train rewatermark"


def save(model: SRWModel, path: str | Path, *, command: str = "", steps: int | None = None,
         data_seeds: dict | None = None, quality: dict | None = None) -> Path:
    """Save an SRW-family model through :mod:`backend.weights` (config = :class:`SRWConfig`; training steps in
    ``extra``)."""
    return weights.save(path, model, config=asdict(model.cfg), command=command, data_seeds=data_seeds,
                        quality=quality, extra={} if steps is None else {"steps": int(steps)})


def load(path: str | Path) -> SRWModel:
    """Load an SRW-family model (eval mode, no gradients on parameters) from safetensors."""
    state, meta = weights.load(path, made_by=MADE_BY)
    names = {f.name for f in fields(SRWConfig)}
    model = SRWModel(SRWConfig(**{k: v for k, v in meta.config.items() if k in names}))
    model.load_state_dict(state)
    model.eval()
    for prm in model.parameters():
        prm.requires_grad_(False)
    return model


def metadata(path: str | Path) -> weights.WeightsMeta:
    """The metadata of a weights file (:class:`backend.weights.WeightsMeta`; ``extra["steps"]``: training steps)."""
    return weights.read_meta(path)


def count_parameters(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters()))
