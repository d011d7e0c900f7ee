"""TinyHiDDeN: small learned image watermarks of the HiDDeN family, trained by the project on CPU.

HiDDeN: "HiDDeN: Hiding Data With Deep Networks", Zhu, Kaplan, Johnson, Fei-Fei, ECCV 2018 (arXiv 1807.09937). The
attribution paper (Jiang et al., "Watermark-based Attribution of AI-Generated Content", arXiv 2404.04254) runs on top of
a 64-bit HiDDeN; its released checkpoint is not distributed, so the lab trains its own (``python -m backend.train
attribution``). HiDDeN's recipe is kept: a learned encoder conditioned on the image and the message, a learned decoder,
trained end to end through differentiable noise layers (:func:`backend.watermark.attacks.noise_layer`: crop, resize,
brightness/contrast, blur, noise, straight-through JPEG) on message BCE plus an image-quality term.

Any image size (both variants): the encoder sees the image resized to a ``size x size`` working frame (64 px) and
returns a residual there, which is upsampled bilinearly to the full image and added; the decoder reads the whole image
resized to the frame. Resizing an image therefore does not move the watermark, and JPEG at full resolution mostly
leaves the smooth, upsampled residual alone.

Two variants:

- :class:`TinyHiDDeN` (``arch = "frame"``): conv-BN-ReLU blocks over the image, the message mapped by a linear layer to
  planes concatenated with the features (``msg_grid = 1`` is HiDDeN's broadcast), a 3x3 conv to the residual; decoder
  with three stride-2 stages and a position-aware linear read-out (or HiDDeN's global average pool, ``dec_pool="avg"``,
  which learned far slower in our CPU budget). A crop shifts and zooms the frame, and this read-out cannot follow:
  after 1,000 CPU steps it reached 0.95 bit accuracy without attack, 0.67 after a 25 % crop (see the manifest).
- :class:`TileHiDDeN` (``arch = "tile"``, shipped): the same recipe with a periodic layout so crops can be
  synchronised. The message becomes one ``period x period`` RGB tile (a learned linear code), repeated over the frame
  and multiplied by a learned image-adaptive gain (conv-BN-ReLU blocks); the decoder's conv features are folded
  (averaged over whole tiles, which also averages the image content away) and read out by a linear layer at the right
  cyclic phase. Training knows each crop's scale and offset and reads out at the true phase; at decode time the decoder
  searches crop scales x all phases (FFT cross-correlation) and keeps the most confident read-out. Image content that
  is itself periodic with the tile (a stripe grating) would pile up in the fold like the code does; the decode-time
  search clips spectral outliers of the folded tile (``spectral_clip``, our addition) so it cannot swamp the code.

Strength (a deviation, stated): the residual is rescaled per image to a fixed PSNR budget (``target_psnr``, the knob
deployed HiDDeN-family watermarks expose). That pins the image MSE term of HiDDeN's loss at the budget, so training
minimises message BCE plus an SSIM term that decides where the budget goes; the budget starts low (strong residual) and
anneals to the target during a warm-up, which replaces HiDDeN's MSE warm-up. No adversarial discriminator and no
LPIPS (no downloadable perceptual weights offline).

Tensors: images ``(B, 3, H, W)`` float in [0, 1]; messages ``(B, n_bits)`` float in {0, 1}; logits ``(B, n_bits)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import weights
from ..runtime import ASSETS

DEFAULT_WEIGHTS = ASSETS / "attribution_tinyhidden.safetensors"


@dataclass(frozen=True)
class TinyHiDDeNConfig:
    """Architecture and embedding defaults of the shipped model (paper: n = 64 bits; HiDDeN: 4 blocks of 64 channels
    at 128 px; the lab's miniature: 64 px working size, 32 channels)."""

    n_bits: int = 64
    size: int = 64
    enc_channels: int = 16
    enc_blocks: int = 2
    msg_channels: int = 16
    msg_grid: int = 8
    dec_channels: int = 32
    dec_pool: str = "flatten"  # "avg": HiDDeN's global average pool; "flatten": position-aware linear read-out
    target_psnr: float = 36.0
    spectral_norm: bool = False  # for Lipschitz-constrained variants (re-watermarking defence); off for attribution


def _conv(cin: int, cout: int, k: int = 3, stride: int = 1, sn: bool = False) -> nn.Module:
    conv = nn.Conv2d(cin, cout, kernel_size=k, stride=stride, padding=k // 2)
    return nn.utils.parametrizations.spectral_norm(conv) if sn else conv


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin: int, cout: int, stride: int = 1, sn: bool = False):
        super().__init__(_conv(cin, cout, 3, stride, sn), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Encoder(nn.Module):
    """``(image (B,3,S,S) in [0,1], bits (B,n)) -> residual (B,3,S,S)`` (unscaled; see :func:`scale_residual`).

    Image features and the message are mixed at half the working size (``S/2``; CPU budget), then upsampled and turned
    into the residual by a 3x3 convolution at the working size."""

    def __init__(self, cfg: TinyHiDDeNConfig):
        super().__init__()
        self.cfg = cfg
        sn = cfg.spectral_norm
        c = cfg.enc_channels
        blocks = [ConvBNReLU(3, c, stride=2, sn=sn)]
        blocks += [ConvBNReLU(c, c, sn=sn) for _ in range(cfg.enc_blocks - 1)]
        self.features = nn.Sequential(*blocks)
        self.message = nn.Linear(cfg.n_bits, cfg.msg_channels * cfg.msg_grid**2)
        self.after_concat = ConvBNReLU(c + cfg.msg_channels + 3, 2 * c, sn=sn)
        self.final = _conv(2 * c, 3, k=3, sn=sn)

    def forward(self, image: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        cfg = self.cfg
        b, _, h, w = image.shape
        x = image * 2 - 1
        feats = self.features(x)
        hh, ww = feats.shape[-2:]
        planes = self.message(bits * 2 - 1).view(b, cfg.msg_channels, cfg.msg_grid, cfg.msg_grid)
        planes = F.interpolate(planes, size=(hh, ww), mode="bilinear", align_corners=False)
        small = F.interpolate(x, size=(hh, ww), mode="bilinear", align_corners=False, antialias=True)
        mixed = self.after_concat(torch.cat([feats, planes, small], dim=1))
        return self.final(F.interpolate(mixed, size=(h, w), mode="bilinear", align_corners=False))


class Decoder(nn.Module):
    """``image (B,3,S,S) in [0,1] -> logits (B,n)`` (HiDDeN-style: strided conv blocks, global average pool, linear)."""

    def __init__(self, cfg: TinyHiDDeNConfig):
        super().__init__()
        c, sn = cfg.dec_channels, cfg.spectral_norm
        self.body = nn.Sequential(
            ConvBNReLU(3, c, sn=sn),
            ConvBNReLU(c, c, stride=2, sn=sn),
            ConvBNReLU(c, 2 * c, stride=2, sn=sn),
            ConvBNReLU(2 * c, 2 * c, stride=2, sn=sn),
            ConvBNReLU(2 * c, 4 * c, sn=sn),
        )
        self.pool = cfg.dec_pool
        if self.pool == "avg":
            self.head = nn.Linear(4 * c, cfg.n_bits)
        else:
            g = cfg.size // 8
            self.squeeze = _conv(4 * c, c, k=1, sn=sn)
            self.head = nn.Linear(c * g * g, cfg.n_bits)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        h = self.body(image * 2 - 1)
        if self.pool == "avg":
            return self.head(h.mean(dim=(2, 3)))
        return self.head(self.squeeze(h).flatten(1))


class TinyHiDDeN(nn.Module):
    def __init__(self, cfg: TinyHiDDeNConfig | None = None):
        super().__init__()
        self.cfg = cfg or TinyHiDDeNConfig()
        self.encoder = Encoder(self.cfg)
        self.decoder = Decoder(self.cfg)

    # -- the any-size wrappers --------------------------------------------------------------------------------
    def residual(self, images: torch.Tensor, bits: torch.Tensor, target_psnr: float | None = None) -> torch.Tensor:
        """Full-size residual ``(B,3,H,W)`` for ``images (B,3,H,W)``, scaled to ``target_psnr`` dB (default: config)."""
        s = self.cfg.size
        small = resize(images, (s, s))
        r = self.encoder(small, bits)
        r = F.interpolate(r, size=images.shape[-2:], mode="bilinear", align_corners=False)
        return scale_residual(r, self.cfg.target_psnr if target_psnr is None else target_psnr)

    def embed(self, images: torch.Tensor, bits: torch.Tensor, target_psnr: float | None = None) -> torch.Tensor:
        """Watermarked images ``(B,3,H,W)`` in [0, 1]."""
        return (images + self.residual(images, bits, target_psnr)).clamp(0, 1)

    def decode_logits(self, images: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, n)`` of images of any size ``(B,3,H,W)`` (resized to the working size first)."""
        s = self.cfg.size
        return self.decoder(resize(images, (s, s)))


def resize(images: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """Bilinear resize with antialiasing when shrinking (``(B,C,H,W)`` -> ``(B,C,*size)``)."""
    if tuple(images.shape[-2:]) == tuple(size):
        return images
    shrink = size[0] < images.shape[-2] or size[1] < images.shape[-1]
    return F.interpolate(images, size=size, mode="bilinear", align_corners=False, antialias=shrink)


def scale_residual(r: torch.Tensor, target_psnr: float) -> torch.Tensor:
    """Rescale each residual ``(B,3,H,W)`` so that its RMS equals the PSNR budget: rms = 10^(-psnr/20) (range 1)."""
    target_rms = 10.0 ** (-target_psnr / 20.0)
    rms = r.pow(2).mean(dim=(1, 2, 3), keepdim=True).clamp_min(1e-12).sqrt()
    return r * (target_rms / rms)


# ---------------------------------------------------------------------------------------- periodic-tile variant
@dataclass(frozen=True)
class TileHiDDeNConfig:
    """The shipped attribution watermark: HiDDeN's recipe (learned encoder conditioned on image and message, learned
    decoder, trained end to end through noise layers on BCE + an image-quality term) with a periodic layout so that
    crops can be synchronised: the message becomes one ``period x period`` RGB tile, repeated over the working frame
    and modulated by a learned, image-adaptive gain; the decoder's convolutional features are folded (averaged) over
    the tiles and read out by a linear layer at the right cyclic phase. At decode time the scale (crop size) and phase
    (crop position) are unknown, so the decoder searches ``scales`` x all ``period**2`` phases and keeps the most
    confident read-out (phases via FFT cross-correlation: cheap)."""

    n_bits: int = 64
    size: int = 64
    period: int = 16
    mask_channels: int = 16
    feat_channels: int = 16
    target_psnr: float = 36.0
    # crop sides searched at decode time: a geometric grid from 1 down to 0.65 (a crop keeping 42 % of the area)
    scales: tuple[float, ...] = tuple(round(0.97**k, 4) for k in range(15))
    # decode time: spectral magnitudes of the folded tile above this multiple of their median (per channel) are
    # clipped to it (phase kept), so image content that happens to be periodic with the tile (a stripe grating)
    # cannot swamp the code; 0 switches it off. Training's aligned read-out never clips.
    spectral_clip: float = 6.0
    arch: str = "tile"


class TileEncoder(nn.Module):
    """``(image (B,3,S,S), bits (B,n)) -> residual (B,3,S,S)``: a linear code tile times an image-adaptive gain."""

    def __init__(self, cfg: TileHiDDeNConfig):
        super().__init__()
        self.cfg = cfg
        p, c = cfg.period, cfg.mask_channels
        self.code = nn.Linear(cfg.n_bits, 3 * p * p)
        self.gain = nn.Sequential(ConvBNReLU(3, c), ConvBNReLU(c, c), _conv(c, 1, 3))

    def forward(self, image: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        b, _, h, w = image.shape
        p = self.cfg.period
        tile = self.code(bits * 2 - 1).view(b, 3, p, p)
        pattern = tile.repeat(1, 1, -(-h // p), -(-w // p))[:, :, :h, :w]
        return pattern * F.softplus(self.gain(image * 2 - 1) + 1.0)


class TileDecoder(nn.Module):
    """Features ``(B,C,S,S)`` -> folded tile ``(B,C,P,P)`` at a scale -> logits at a phase (or at every phase)."""

    def __init__(self, cfg: TileHiDDeNConfig):
        super().__init__()
        self.cfg = cfg
        c, f = cfg.mask_channels, cfg.feat_channels
        self.body = nn.Sequential(ConvBNReLU(3, c), ConvBNReLU(c, c), _conv(c, f, 3))
        self.head = nn.Linear(f * cfg.period**2, cfg.n_bits)

    def features(self, frame: torch.Tensor) -> torch.Tensor:
        return self.body(frame * 2 - 1)

    def fold(self, feats: torch.Tensor, scale: float) -> torch.Tensor:
        """Resize features so one period spans ``period`` px (a crop of side ``scale`` was blown up by 1/scale), then
        average all whole tiles: ``(B,C,S,S) -> (B,C,P,P)``."""
        p, s = self.cfg.period, self.cfg.size
        side = max(p, int(round(s * scale)))
        if side != feats.shape[-1]:
            feats = F.interpolate(feats, size=(side, side), mode="bilinear", align_corners=False,
                                  antialias=side < feats.shape[-1])
        k = side // p
        t = feats[:, :, : k * p, : k * p]
        b, c = t.shape[:2]
        return t.reshape(b, c, k, p, k, p).mean(dim=(2, 4))

    def fold_fast(self, feats: torch.Tensor, scale: float) -> torch.Tensor:
        """:meth:`fold` for inference without gradients, as ``M @ feats @ M.T`` with one ``(P, S)`` matrix per scale.

        The fold is linear and separable (bilinear resizing, with or without antialiasing, filters rows and columns
        separately; the tile average too), so ``M`` is read off by folding the ``S`` images that are one unit row
        each (constant along the other axis, which the fold keeps constant)."""
        cache = self.__dict__.setdefault("_fold_cache", {})
        s = self.cfg.size
        if scale not in cache:
            with torch.no_grad():
                rows = torch.eye(s).view(s, 1, s, 1).expand(s, 1, s, s).contiguous()  # image k: row k is 1
                cache[scale] = self.fold(rows, scale)[:, 0, :, 0].T.contiguous()  # (P, S)
        m = cache[scale]
        return m @ feats @ m.T

    def readout(self, tile: torch.Tensor, phase_y: torch.Tensor, phase_x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B,n)`` after rolling each folded tile by its phase (the crop offset modulo the period)."""
        rolled = torch.stack([torch.roll(t, shifts=(int(py), int(px)), dims=(1, 2))
                              for t, py, px in zip(tile, phase_y, phase_x, strict=True)])
        return self.head(rolled.flatten(1))

    def all_phases(self, tile: torch.Tensor) -> torch.Tensor:
        """Logits at every phase ``(B, P*P, n)`` by circular cross-correlation (FFT); index = py * P + px."""
        p, n = self.cfg.period, self.cfg.n_bits
        # logits[py, px] = sum_c,y,x w[c, y, x] * tile[c, y - py, x - px]  (roll by +phase, then the linear layer)
        ft = torch.fft.rfft2(tile)  # (B, C, P, P//2+1)
        b, c = ft.shape[:2]
        if self.cfg.spectral_clip > 0:  # content periodic with the tile piles up in a few bins: clip them
            mag = ft.abs().detach()
            limit = self.cfg.spectral_clip * mag.flatten(2).median(dim=2).values[..., None, None]
            # straight-through: the forward pass clips, gradients (white-box attacks) pass as if it did not, so the
            # clip cannot mask them (measured: PGD at eps 4/255 failed through the clip's own gradient, 0.94 bits)
            clipped = ft * torch.clamp(limit / mag.clamp_min(1e-12), max=1.0)
            ft = ft + (clipped - ft).detach() if ft.requires_grad else clipped
        fw = self._weight_spectrum()  # (F, C, n) conjugated, F = P * (P//2+1) frequencies
        prod = torch.matmul(ft.reshape(b, c, -1).permute(2, 0, 1), fw)  # (F, B, n): sum over channels per frequency
        corr = torch.fft.irfft2(prod.permute(1, 2, 0).reshape(b, n, p, -1).conj(), s=(p, p))
        return (corr.reshape(tile.shape[0], n, p * p) + self.head.bias[None, :, None]).transpose(1, 2)

    def _weight_spectrum(self) -> torch.Tensor:
        """conj(FFT) of the read-out weights, cached until the weights change (used at decode time only)."""
        w = self.head.weight
        key = (w.data_ptr(), w._version)
        cached = getattr(self, "_fw", None)
        if cached is None or cached[0] != key:
            p = self.cfg.period
            fw = torch.fft.rfft2(w.detach().view(self.cfg.n_bits, -1, p, p)).conj()  # (n, C, P, P//2+1)
            self._fw = (key, fw.reshape(fw.shape[0], fw.shape[1], -1).permute(2, 1, 0).contiguous())
        return self._fw[1]


class TileHiDDeN(nn.Module):
    def __init__(self, cfg: TileHiDDeNConfig | None = None):
        super().__init__()
        self.cfg = cfg or TileHiDDeNConfig()
        self.encoder = TileEncoder(self.cfg)
        self.decoder = TileDecoder(self.cfg)

    residual = TinyHiDDeN.residual
    embed = TinyHiDDeN.embed

    def frame(self, images: torch.Tensor) -> torch.Tensor:
        s = self.cfg.size
        return resize(images, (s, s))

    def decode_aligned(self, images: torch.Tensor, scale: float, phase_y: torch.Tensor,
                       phase_x: torch.Tensor) -> torch.Tensor:
        """Training path: logits when the crop scale and phases are known (differentiable)."""
        return self.decoder.readout(self.decoder.fold(self.decoder.features(self.frame(images)), scale),
                                    phase_y, phase_x)

    def decode_search(self, images: torch.Tensor, scales: tuple[float, ...] | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """Inference path: logits ``(B,n)`` of the most confident (scale, phase) hypothesis, and the hypotheses
        ``(B,3)`` = (scale, phase_y, phase_x). Confidence = mean |logit| after dividing each scale's logits by their
        RMS over all phases and bits (so that folding fewer tiles is not favoured)."""
        feats = self.decoder.features(self.frame(images))
        p = self.cfg.period
        best_logits, best_conf, best_hyp = None, None, None
        fold = self.decoder.fold if (torch.is_grad_enabled() and feats.requires_grad) else self.decoder.fold_fast
        for sc in scales or self.cfg.scales:
            logits = self.decoder.all_phases(fold(feats, sc))  # (B, P*P, n)
            z = logits / logits.pow(2).mean(dim=(1, 2), keepdim=True).clamp_min(1e-12).sqrt()
            conf, idx = z.abs().mean(dim=2).max(dim=1)
            chosen = logits[torch.arange(logits.shape[0]), idx]
            hyp = torch.stack([torch.full_like(conf, sc), (idx // p).float(), (idx % p).float()], dim=1)
            if best_conf is None:
                best_logits, best_conf, best_hyp = chosen, conf, hyp
            else:
                better = conf > best_conf
                best_logits = torch.where(better[:, None], chosen, best_logits)
                best_hyp = torch.where(better[:, None], hyp, best_hyp)
                best_conf = torch.maximum(conf, best_conf)
        return best_logits, best_hyp

    def decode_logits(self, images: torch.Tensor) -> torch.Tensor:
        """Logits of images of any size (search over crop scale and phase; differentiable through the chosen one)."""
        return self.decode_search(images)[0]


# ------------------------------------------------------------------------------------------------- weights i/o
MADE_BY = "python -m backend.train attribution"
# decode-time search settings: not stored with the weights, the class defaults apply at load time
DECODE_SETTINGS = ("scales", "spectral_clip")


def save(model: TinyHiDDeN | TileHiDDeN, path: str | Path, *, command: str = "", data_seeds: dict | None = None,
         quality: dict | None = None, extra: dict | None = None) -> Path:
    """Save weights through :mod:`backend.weights` with the architecture config (no decode-time settings)."""
    config = {k: v for k, v in asdict(model.cfg).items() if k not in DECODE_SETTINGS}
    return weights.save(path, model, config=config, command=command, data_seeds=data_seeds, quality=quality,
                        extra=extra)


def config_from(config: dict) -> TinyHiDDeNConfig | TileHiDDeNConfig:
    """The model config of a weights file's ``config`` (decode-time settings keep the class defaults)."""
    kind = TileHiDDeNConfig if config.get("arch") == "tile" else TinyHiDDeNConfig
    names = {f.name for f in fields(kind)} - set(DECODE_SETTINGS)
    return kind(**{k: v for k, v in config.items() if k in names})


def load(path: str | Path | None = None) -> TinyHiDDeN | TileHiDDeN:
    """Load shipped or trained weights (safetensors only, :func:`backend.weights.load`) into an eval-mode model."""
    state, meta = weights.load(Path(path) if path is not None else DEFAULT_WEIGHTS, made_by=MADE_BY)
    cfg = config_from(meta.config)
    model = TileHiDDeN(cfg) if isinstance(cfg, TileHiDDeNConfig) else TinyHiDDeN(cfg)
    model.load_state_dict(state)
    model.eval()
    for param in model.parameters():
        param.requires_grad_(False)
    return model


def weights_metadata(path: str | Path | None = None) -> weights.WeightsMeta:
    """The metadata of a weights file (:class:`backend.weights.WeightsMeta`)."""
    return weights.read_meta(Path(path) if path is not None else DEFAULT_WEIGHTS)


def count_parameters(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


def macs(model: TinyHiDDeN | TileHiDDeN, which: str = "decoder") -> int:
    """Multiply-adds of one embedding (encoder) or one full decode at the working size (convolutions and linear layers).

    The decode goes through ``decode_logits``, so for the tile model it counts the whole crop-scale search."""
    total = 0
    s = model.cfg.size

    def hook(mod: nn.Module, inp: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
        nonlocal total
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1] * (mod.in_channels // mod.groups)
            total += int(out.numel() * k)
        elif isinstance(mod, nn.Linear):
            total += int(mod.in_features * mod.out_features)

    part = model.decoder if which == "decoder" else model.encoder
    handles = [m.register_forward_hook(hook) for m in part.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        x = torch.zeros(1, 3, s, s)
        if which == "decoder":
            model.decode_logits(x)
        else:
            model.encoder(x, torch.zeros(1, model.cfg.n_bits))
    for h in handles:
        h.remove()
    return total


# ------------------------------------------------------------------------------------------------ numpy helpers
def to_tensor(img: np.ndarray) -> torch.Tensor:
    """``(H,W,3)`` uint8 -> ``(1,3,H,W)`` float in [0, 1]."""
    return torch.from_numpy(np.array(img, dtype=np.uint8, copy=True)).permute(2, 0, 1).unsqueeze(0).float().div(255.0)


def to_uint8(t: torch.Tensor) -> np.ndarray:
    """``(1,3,H,W)`` or ``(3,H,W)`` in [0, 1] -> ``(H,W,3)`` uint8 (rounded)."""
    t = t[0] if t.dim() == 4 else t
    return (t.clamp(0, 1) * 255.0).round().byte().permute(1, 2, 0).numpy()


def psnr_for_rms(rms: float) -> float:
    return math.inf if rms <= 0 else -20.0 * math.log10(rms)
