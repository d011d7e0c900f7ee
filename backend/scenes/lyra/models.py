"""The networks of the Lyra miniature: the frozen teacher (a camera-conditioned view generator), the student (one image
-> 3-D Gaussians in one forward pass) and the monocular depth network (the teacher's 3-D cache and the depth-warp
baseline).

- :class:`Teacher` ``(image [B, 3, H, W], deltas [B]) -> view [B, 3, H, W]``: like GEN3C (the paper's teacher), it
  conditions on a 3-D cache: the first view splatted at its depth network's depth into the target view
  (:meth:`Teacher.cache`, warped colour and coverage), then a U-Net with a camera-conditioned fully connected
  bottleneck (the orbit offset's code, :func:`views.camera_code`) and FiLM at every decoder scale refines it (fills
  disocclusions, fixes the warp). Trained with L1 on true renders (the stand-in for a video diffusion model that
  learnt its 3-D knowledge from videos); imperfect by design (small, deterministic, blurry). Its latent
  (:meth:`Teacher.encode`) and depth are what our student reads beside the image (the paper's student decodes the
  video latents).
- :class:`Student` ``(image, latent, disparity) -> maps [B, G, 15, H / s, W / s]``: a small U-Net giving G Gaussians
  per s x s cell: an inverse-depth correction of the teacher's depth, a 3-D offset, 3 log-scales (relative to the
  cell's footprint), a quaternion, an opacity logit and a colour residual on the cell's colour;
  :func:`gaussians_from_maps` unprojects them through the first camera.
- :class:`DepthNet` ``(image) -> depth [B, H, W]``: the same U-Net trunk, trained on true first-view depth.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..splat import Gaussians
from .views import FAR, camera_code

NEAR = 0.8
PARAMS_PER_GAUSSIAN = 15


@dataclass(frozen=True)
class NetConfig:
    """Widths of the U-Nets (``widths`` per scale 1, 1/2, 1/4), the teacher's latent (``latent`` channels at 4 x 4)
    and mixer width, the student's Gaussians per cell (``gaussians_per_pixel``) and cell size in pixels (``stride``)."""

    widths: tuple[int, int, int] = (16, 32, 48)
    latent: int = 32
    mixer: int = 256
    gaussians_per_pixel: int = 1
    stride: int = 2

    def to_dict(self) -> dict:
        return asdict(self)


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.GroupNorm(4, cout), nn.SiLU(),
                         nn.Conv2d(cout, cout, 3, 1, 1), nn.GroupNorm(4, cout), nn.SiLU())


class UNet(nn.Module):
    """Three scales (``widths``), an optional per-sample conditioning vector (FiLM on every decoder scale) and an
    optional bottleneck input added at 1/4 scale. ``forward(x [B, cin, H, W], cond [B, c] | None, extra) ->
    [B, cout, H, W]``."""

    def __init__(self, cin: int, cout: int, widths=(24, 48, 64), cond: int = 0, extra: int = 0):
        super().__init__()
        a, b, c = widths
        self.e1, self.e2, self.e3 = _block(cin, a), _block(a, b, 2), _block(b, c, 2)
        self.extra = nn.Conv2d(extra, c, 1) if extra else None
        self.d3 = _block(c, c)
        self.d2 = _block(c + b, b)
        self.d1 = _block(b + a, a)
        self.out = nn.Conv2d(a, cout, 3, 1, 1)
        self.film = nn.ModuleList([nn.Linear(cond, 2 * w) for w in (c, b, a)]) if cond else None

    def _mod(self, h: torch.Tensor, i: int, cond: torch.Tensor | None) -> torch.Tensor:
        if self.film is None or cond is None:
            return h
        g, s = self.film[i](cond).chunk(2, -1)
        return h * (1 + g[..., None, None]) + s[..., None, None]

    def forward(self, x: torch.Tensor, cond: torch.Tensor | None = None, extra: torch.Tensor | None = None,
                bottleneck=None) -> torch.Tensor:
        h1 = self.e1(x)
        h2 = self.e2(h1)
        h3 = self.e3(h2)
        if self.extra is not None and extra is not None:
            h3 = h3 + self.extra(F.interpolate(extra, size=h3.shape[-2:], mode="bilinear", align_corners=False))
        if bottleneck is not None:
            h3 = bottleneck(h3)
        u3 = self._mod(self.d3(h3), 0, cond)
        u2 = self._mod(self.d2(torch.cat([F.interpolate(u3, scale_factor=2.0, mode="nearest"), h2], 1)), 1, cond)
        u1 = self._mod(self.d1(torch.cat([F.interpolate(u2, scale_factor=2.0, mode="nearest"), h1], 1)), 2, cond)
        return self.out(u1)


class Teacher(nn.Module):
    """The camera-conditioned view generator (see the module docstring). ``forward(image, deltas, cache=None)`` ->
    the imagined view in [0, 1]; ``cache(image, deltas)`` -> its 3-D cache render ``[B, 4, H, W]`` (the first view
    splatted at the depth network's depth into the target view, and its coverage); ``encode(image)`` -> the latent
    ``[B, latent, 4, 4]``; ``depth`` is its monocular depth network."""

    def __init__(self, cfg: NetConfig = NetConfig(), size: int = 32):
        super().__init__()
        c = cfg.widths[2]
        self.cfg = cfg
        self.depth = DepthNet(cfg)
        self.unet = UNet(7, 3, cfg.widths, cond=16)
        self.cam = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Linear(16, 16))
        self.to_latent = nn.Conv2d(c, cfg.latent, 1)
        self.side = size // 8
        n = cfg.latent * self.side * self.side
        self.mixer = nn.Sequential(nn.Linear(n + 16, cfg.mixer), nn.SiLU(), nn.Linear(cfg.mixer, c * self.side ** 2))

    @torch.no_grad()
    def cache(self, image: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
        """The 3-D cache seen from the offsets ``deltas [B]``: warped first view and coverage, ``[B, 4, H, W]``."""
        from ..splat import render_gaussians
        from .views import relative_viewmats, sky_colour

        g = depth_warp_gaussians(image, self.depth(image), _K(image.shape[-1]))
        size = image.shape[-1]
        r = render_gaussians(g.means, g.scales, g.quats, g.opacities, g.colors, _K(size),
                             relative_viewmats(deltas.tolist(), size), size, size, background=sky_colour(image),
                             tile=4)
        return torch.cat([r.rgb.permute(0, 3, 1, 2), r.alpha[:, None]], 1)

    def _input(self, image: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        return torch.cat([image * 2 - 1, cache[:, :3] * 2 - 1, cache[:, 3:]], 1)

    def encode(self, image: torch.Tensor) -> torch.Tensor:
        u = self.unet
        x = self._input(image, torch.cat([image, torch.ones_like(image[:, :1])], 1))
        h3 = u.e3(u.e2(u.e1(x)))
        return self.to_latent(F.avg_pool2d(h3, 2))

    def forward(self, image: torch.Tensor, deltas: torch.Tensor, cache: torch.Tensor | None = None) -> torch.Tensor:
        if cache is None:
            cache = self.cache(image, deltas)
        cond = self.cam(camera_code(deltas))
        B = image.shape[0]

        def mix(h3: torch.Tensor) -> torch.Tensor:
            z = self.to_latent(F.avg_pool2d(h3, 2)).flatten(1)
            m = self.mixer(torch.cat([z, cond], 1)).view(B, -1, self.side, self.side)
            return h3 + F.interpolate(m, size=h3.shape[-2:], mode="nearest")

        out = self.unet(self._input(image, cache), cond, bottleneck=mix)
        return torch.sigmoid(out + torch.logit(cache[:, :3].clamp(0.02, 0.98)))


class Student(nn.Module):
    """The feed-forward Gaussian decoder: ``forward(image [B, 3, H, W], latent [B, l, h, w] | None)`` ->
    ``maps [B, G, 15, H, W]`` (see :func:`gaussians_from_maps`)."""

    def __init__(self, cfg: NetConfig = NetConfig()):
        super().__init__()
        self.cfg = cfg
        G = cfg.gaussians_per_pixel
        self.unet = UNet(6, G * PARAMS_PER_GAUSSIAN, cfg.widths, extra=cfg.latent)

    def forward(self, image: torch.Tensor, latent: torch.Tensor | None = None,
                disparity: torch.Tensor | None = None) -> torch.Tensor:
        B, _, H, W = image.shape
        yy = torch.linspace(-1, 1, H).view(1, 1, H, 1).expand(B, 1, H, W)
        xx = torch.linspace(-1, 1, W).view(1, 1, 1, W).expand(B, 1, H, W)
        disp = torch.zeros(B, 1, H, W) if disparity is None else disparity[:, None] * 2 - 1
        out = F.avg_pool2d(self.unet(torch.cat([image * 2 - 1, xx, yy, disp], 1), extra=latent), self.cfg.stride)
        return out.view(B, self.cfg.gaussians_per_pixel, PARAMS_PER_GAUSSIAN, H // self.cfg.stride, W // self.cfg.stride)


def _K(size: int) -> torch.Tensor:
    from .views import intrinsics

    return intrinsics(size)


def to_disparity(depth: torch.Tensor) -> torch.Tensor:
    """Depth in [NEAR, FAR] -> normalised inverse depth in [0, 1]."""
    return ((1.0 / depth - 1.0 / FAR) / (1.0 / NEAR - 1.0 / FAR)).clamp(0, 1)


class DepthNet(nn.Module):
    """Monocular depth of the first view, ``[B, H, W]`` in [NEAR, FAR] (the teacher's 3-D cache and the depth-warp
    baseline)."""

    def __init__(self, cfg: NetConfig = NetConfig()):
        super().__init__()
        self.unet = UNet(5, 1, cfg.widths)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        B, _, H, W = image.shape
        yy = torch.linspace(-1, 1, H).view(1, 1, H, 1).expand(B, 1, H, W)
        xx = torch.linspace(-1, 1, W).view(1, 1, 1, W).expand(B, 1, H, W)
        disp = torch.sigmoid(self.unet(torch.cat([image * 2 - 1, xx, yy], 1))[:, 0])
        return 1.0 / (1.0 / FAR + disp * (1.0 / NEAR - 1.0 / FAR))


def pixel_rays(K: torch.Tensor, H: int, W: int, stride: int = 1) -> torch.Tensor:
    """Camera-frame directions with z = 1 through the centres of the ``stride x stride`` pixel blocks of an
    ``H x W`` image, ``[H / stride, W / stride, 3]``."""
    off = (stride - 1) / 2
    v, u = torch.meshgrid(torch.arange(0, H, stride, dtype=K.dtype) + off,
                          torch.arange(0, W, stride, dtype=K.dtype) + off, indexing="ij")
    return torch.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], torch.ones_like(u)], -1)


def gaussians_from_maps(maps: torch.Tensor, image: torch.Tensor, K: torch.Tensor,
                        disparity: torch.Tensor | None = None) -> Gaussians:
    """Gaussians ``[B, G h w, ...]`` in the first camera's frame from student maps ``[B, G, 15, h, w]`` (one cell per
    ``s x s`` block of the first views ``image [B, 3, H, W]``, s = H / h): depth z in [NEAR, FAR] from inverse
    depth, mean = ray z + offset (up to 0.15 z), scales = the cell's footprint s z / f times exp(log-scale)
    (clamped), unit quaternion, sigmoid opacity, colour = sigmoid(logit of the cell's mean colour + residual). The
    inverse depth is a correction of ``disparity [B, H, W]`` (the teacher's depth, normalised) when given."""
    B, G, _, h, w = maps.shape
    stride = image.shape[-1] // w
    m = maps.permute(0, 1, 3, 4, 2)                                                # [B, G, h, w, 15]
    prior = torch.full_like(m[..., 0], -1.0) if disparity is None else \
        torch.logit(F.avg_pool2d(disparity[:, None], stride).clamp(0.01, 0.99))       # [B, 1, h, w]
    disp = torch.sigmoid(m[..., 0] + prior - 0.5 * torch.arange(G, dtype=maps.dtype).view(1, G, 1, 1))
    z = 1.0 / (1.0 / FAR + disp * (1.0 / NEAR - 1.0 / FAR))
    rays = pixel_rays(K, image.shape[-2], image.shape[-1], stride)
    means = rays * z[..., None] + 0.15 * torch.tanh(m[..., 1:4]) * z[..., None]
    foot = stride * z / K[0, 0]
    scales = foot[..., None] * torch.exp(torch.clamp(m[..., 4:7] - 0.5, -3.0, 2.0))
    quats = m[..., 7:11] + torch.tensor([1.0, 0, 0, 0], dtype=maps.dtype)
    opac = torch.sigmoid(m[..., 11] + 1.0)
    pooled = F.avg_pool2d(image, stride) if stride > 1 else image
    base = torch.logit(pooled.clamp(0.02, 0.98)).permute(0, 2, 3, 1)[:, None]     # [B, 1, h, w, 3]
    cols = torch.sigmoid(base + m[..., 12:15])
    flat = lambda x, c: x.reshape(B, G * h * w, *c)  # noqa: E731
    return Gaussians(flat(means, (3,)), flat(scales, (3,)), flat(quats, (4,)), flat(opac, ()), flat(cols, (3,)))


def depth_warp_gaussians(image: torch.Tensor, depth: torch.Tensor, K: torch.Tensor, stride: int = 1) -> Gaussians:
    """The depth-warp baseline as Gaussians: every pixel (``stride`` 1) or ``stride x stride`` cell of ``image
    [B, 3, H, W]`` an opaque isotropic disc of its footprint at ``depth [B, H, W]`` (cells: mean colour, mean inverse
    depth): a forward warp by splatting; holes show the background."""
    B, _, H, W = image.shape
    rays = pixel_rays(K, H, W, stride)
    if stride > 1:
        depth = 1.0 / F.avg_pool2d(1.0 / depth[:, None], stride)[:, 0]
        image = F.avg_pool2d(image, stride)
    n = rays.shape[0] * rays.shape[1]
    means = (rays * depth[..., None]).reshape(B, n, 3)
    s = (stride * depth / K[0, 0] * 0.6).reshape(B, n, 1).expand(B, n, 3)
    quats = torch.tensor([1.0, 0, 0, 0]).expand(B, n, 4)
    return Gaussians(means, s.contiguous(), quats.contiguous(), torch.full((B, n), 0.98),
                     image.permute(0, 2, 3, 1).reshape(B, n, 3))
