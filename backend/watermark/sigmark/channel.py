"""Generation channels for SIGMark: a tiny latent video diffusion model (causal 3D VAE + space-time denoiser, DDIM
sampling and DDIM inversion) trained by the project, and an instant analytic channel for unit tests.

SIGMark (arXiv 2603.02882) hides its watermark in the initial noise z_T of a latent video diffusion model whose VAE is
*causal* in time: video frame 0 is encoded alone into latent frame 0, then every group of ``T = 4`` frames
``4(j-1)+1 .. 4j`` into latent frame ``j``; temporal convolutions only look at the past. No pretrained video diffusion
weights are available offline, so :class:`TinyChannel` reproduces that structure at miniature size:

- clips of ``F = 1 + 4 L`` frames (default 25 = 1 + 4*6) of 32x32 RGB in [-1, 1];
- :class:`~.networks.CausalVAE3D`: x4 spatial, x4 temporal, 16 latent channels -> latents ``[B, 16, 1 + L, 8, 8]`` (1024 values per
  latent frame, the PRC code length ``n`` of the lab). The first frame is encoded alone, so it needs more pixel values
  (3 * 32 * 32 = 3072) than latent values (1024): at 16x16 with x2 (768 < 1024) the decoder cannot be injective on latent
  frame 0, its round trip is lost, and the loss leaks into every later frame through the denoiser's temporal mixing;
- :class:`~.networks.SpaceTimeDenoiser`: a noise-prediction net (per-frame 2D convs + temporal convs + diffusers' timestep
  embedding), trained to predict either eps or (the shipped weights) the velocity ``v = sqrt(a) eps - sqrt(1 - a) x0``
  (Salimans & Ho, arXiv 2202.00512), with an optional temporal self-attention layer per block. With eps prediction
  the tiny net kept an error floor of ~0.005 MSE at t >= 800, where the trivial answer eps = sqrt(1 - a) x_t errs by
  only a = alpha_bar (0.0015 .. 0.00004); x0 = (x_t - sqrt(1 - a) eps) / sqrt(a) multiplies that error by 1 / sqrt(a)
  (x0 predictions of std 7-11 from pure noise), the first DDIM steps inject it as signal, and the samples came out
  over-dispersed (latent std 1.85 at 25 steps, 2.15 at 50, vs 1.44 for data latents) and flickering. v targets x0 at
  high noise and eps at low noise, so nothing is amplified (the shipped weights: sample latent std 0.93 vs 1.03 for data);
- sampling with diffusers' ``DDIMScheduler``; inversion either with diffusers' ``DDIMInverseScheduler`` (same
  config; ``fixed_point = 0``) or, by default, as the exact inverse of that DDIM sampler, each step solved by K
  fixed-point iterations (``fixed_point = K``; the round-trip sign-flip rate of z_T is recorded in the manifest).

Channels share one interface (:class:`Channel`): ``encode_video``, ``decode_latents``, ``sample(z_T)``, ``invert(z0)``,
``temporal_factor``, ``latent_channels``; ``get_channel(name)`` lists valid names. The watermark code in
:mod:`backend.watermark.sigmark` only talks to this interface, so a diffusers video pipeline with a causal 3D VAE can be
wrapped the same way (not shipped: no such weights exist offline here).

Shapes: videos are float32 numpy/torch arrays ``[F, H, W, 3]`` in [0, 1] at the public boundary (``[B, 3, F, H, W]`` in
[-1, 1] inside the networks); latents ``[C, 1 + L, h, w]``.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import InputError
from backend.registry import choose
from backend.runtime import ASSETS, Progress, report
from backend.watermark.sigmark.tiny import TEMPORAL, TinyConfig

# the shipped weights; SIGMARK_WEIGHTS=<file> evaluates candidate weights (claims tests, benchmark) without replacing them
WEIGHTS = Path(os.environ.get("SIGMARK_WEIGHTS") or ASSETS / "sigmark_tiny_vldm.safetensors")
MADE_BY = "python -m backend.train sigmark"


# ----------------------------------------------------------------------------------------------- synthetic clips
def synthetic_clips(n: int, seed: int, frames: int = 25, size: int = 32) -> np.ndarray:
    """Procedural training/evaluation clips: a panning textured background plus 1-2 bouncing shapes.

    Returns float32 ``[n, frames, size, size, 3]`` in [0, 1]. Fully determined by ``seed``. Lengths (radii, speeds,
    pans, texture periods) are drawn for a 16-pixel frame and scaled by ``size / 16``.
    """
    rng = np.random.default_rng(seed)
    u = size / 16.0
    t = np.arange(frames, dtype=np.float32)[None, :, None, None]
    yy, xx = np.meshgrid(np.arange(size, dtype=np.float32), np.arange(size, dtype=np.float32), indexing="ij")
    yy, xx = yy[None, None], xx[None, None]
    # background: base colour + gradient + a sinusoidal texture panned by a camera velocity
    base = rng.uniform(0.1, 0.6, (n, 1, 1, 1, 3)).astype(np.float32)
    grad_dir = rng.uniform(0, 2 * np.pi, (n, 1, 1, 1))
    freq = rng.uniform(0.3, 0.9, (n, 1, 1, 1)) / u
    tex_dir = rng.uniform(0, 2 * np.pi, (n, 1, 1, 1))
    pan = u * rng.uniform(-0.6, 0.6, (n, 2, 1, 1, 1)) * (rng.random((n, 1, 1, 1, 1)) < 0.6)
    px = xx + pan[:, 0] * t
    py = yy + pan[:, 1] * t
    grad = (np.cos(grad_dir) * px + np.sin(grad_dir) * py) / size
    tex = np.sin(freq * (np.cos(tex_dir) * px + np.sin(tex_dir) * py))
    amp = rng.uniform(0.03, 0.15, (n, 1, 1, 1, 1))
    video = base + 0.2 * grad[..., None] + amp * tex[..., None]
    video = np.broadcast_to(video, (n, frames, size, size, 3)).copy()
    for _ in range(2):
        present = rng.random(n) < 0.8
        r = u * rng.uniform(1.8, 4.0, n)
        pos = rng.uniform(3 * u, size - 3 * u, (n, 2))
        vel = u * rng.uniform(0.3, 1.2, (n, 2)) * rng.choice([-1, 1], (n, 2))
        square = rng.random(n) < 0.5
        colour = rng.uniform(0, 1, (n, 3)).astype(np.float32)
        # bounce: reflect the unconstrained trajectory into [r, size - r]
        lo, hi = r[:, None, None], size - r[:, None, None]
        raw = pos[:, None, :] + vel[:, None, :] * np.arange(frames)[None, :, None] - lo
        span = hi - lo
        m = np.mod(raw, 2 * span)
        traj = lo + np.where(m > span, 2 * span - m, m)  # [n, frames, 2]
        cy = traj[:, :, 0][:, :, None, None]
        cx = traj[:, :, 1][:, :, None, None]
        rr = r[:, None, None, None]
        d_circle = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2) - rr
        d_square = np.maximum(np.abs(yy - cy), np.abs(xx - cx)) - rr
        d = np.where(square[:, None, None, None], d_square, d_circle)
        mask = np.clip(0.5 - d / u, 0, 1) * present[:, None, None, None]
        video = video * (1 - mask[..., None]) + colour[:, None, None, None, :] * mask[..., None]
    return np.clip(video, 0, 1).astype(np.float32)


# ----------------------------------------------------------------------------------------------------- networks
def _torch():
    import torch

    return torch


def check_frames(frames: int) -> int:
    """Latent frame count ``1 + (F - 1) / 4``; raises InputError unless ``F = 1 + 4 L`` with L >= 1."""
    if frames < 1 + TEMPORAL or (frames - 1) % TEMPORAL:
        raise InputError(f"The causal VAE needs 1 + 4*L frames (5, 9, 13, ...); got {frames}. Trim the video first.")
    return 1 + (frames - 1) // TEMPORAL


def build_models(cfg: TinyConfig):
    """Fresh (vae, denoiser) modules for ``cfg`` (the classes are in :mod:`.networks`)."""
    from backend.watermark.sigmark.networks import CausalVAE3D, SpaceTimeDenoiser

    return CausalVAE3D(cfg), SpaceTimeDenoiser(cfg)


def schedulers(cfg: TinyConfig):
    """(DDPMScheduler for training, DDIMScheduler for sampling, DDIMInverseScheduler for inversion), one config
    (the same ``prediction_type`` in all three)."""
    from diffusers import DDIMInverseScheduler, DDIMScheduler, DDPMScheduler

    common = dict(num_train_timesteps=cfg.train_timesteps, beta_schedule=cfg.beta_schedule, clip_sample=False,
                  prediction_type=cfg.prediction_type)
    return (DDPMScheduler(**common), DDIMScheduler(**common, set_alpha_to_one=True),
            DDIMInverseScheduler(**common, set_alpha_to_one=False))


# ------------------------------------------------------------------------------------------------------ channels
class Channel:
    """Interface of a generation channel (latents ``[C, 1+L, h, w]``, videos ``[F, H, W, 3]`` in [0, 1])."""

    name: str = "channel"
    temporal_factor: int = TEMPORAL
    latent_channels: int = 16
    frames: int = 25
    size: int = 32
    spatial_factor: int = 4

    @property
    def latent_shape(self) -> tuple[int, int, int, int]:
        lat = 1 + (self.frames - 1) // self.temporal_factor
        return (self.latent_channels, lat, self.size // self.spatial_factor, self.size // self.spatial_factor)

    def encode_video(self, video: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def decode_latents(self, z0: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def sample(self, z_t: np.ndarray, progress: Progress | None = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def invert(self, z0: np.ndarray, progress: Progress | None = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def generate(self, z_t: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        """z_T -> video ``[F, H, W, 3]`` in [0, 1] (quantised to 8 bits, as any saved video is)."""
        video = self.decode_latents(self.sample(z_t, progress))
        return np.round(np.clip(video, 0, 1) * 255) / 255

    def recover_noise(self, video: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        """Video -> estimated initial noise ``[C, 1+L, h, w]`` (encode, then invert)."""
        return self.invert(self.encode_video(video), progress)


class TinyChannel(Channel):
    """The project's tiny latent video diffusion model (weights in ``assets/sigmark_tiny_vldm.safetensors``)."""

    name = "tiny"

    def __init__(self, path: Path | str = WEIGHTS, steps: int | None = None):
        torch = _torch()
        from backend import weights

        path = Path(path)
        state, meta = weights.load(path, made_by=MADE_BY)
        self.cfg = TinyConfig(**meta.config)
        if steps is not None:
            self.cfg.steps = steps
        self.frames, self.size, self.latent_channels = self.cfg.frames, self.cfg.size, self.cfg.latent_channels
        self.spatial_factor = self.cfg.spatial
        self.vae, self.den = build_models(self.cfg)
        self.vae.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("vae.")})
        self.den.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("den.")})
        self.vae.eval()
        self.den.eval()
        for p in [*self.vae.parameters(), *self.den.parameters()]:
            p.requires_grad_(False)
        _, self.ddim, self.inverse = schedulers(self.cfg)
        self.path = path
        self.fixed_point = self.cfg.fixed_point
        self.decoder_inv_steps = self.cfg.decoder_inv_steps
        self.n_params = {"vae": sum(p.numel() for p in self.vae.parameters()),
                         "denoiser": sum(p.numel() for p in self.den.parameters())}
        self._torch = torch

    # videos [F, H, W, 3] in [0, 1] <-> network layout [1, 3, F, H, W] in [-1, 1]
    def encode_video(self, video: np.ndarray) -> np.ndarray:
        """Video ``[F, H, W, 3]`` -> latent (distribution mode x scaling factor) ``[C, 1+L, h, w]``."""
        torch = self._torch
        video = np.asarray(video, dtype=np.float32)
        if video.ndim != 4 or video.shape[-1] != 3:
            raise InputError(f"Expected a video [frames, height, width, 3]; got shape {tuple(video.shape)}.")
        check_frames(video.shape[0])
        if video.shape[1:3] != (self.size, self.size):
            raise InputError(f"The tiny model works at {self.size}x{self.size}; got {video.shape[1:3]}.")
        x = torch.from_numpy(video * 2 - 1).permute(3, 0, 1, 2)[None]
        with torch.no_grad():
            mean, _ = self.vae.encode(x)
        z = mean * self.cfg.scaling_factor
        if self.decoder_inv_steps > 0:
            z = self._decoder_inversion(x, z)
        return z[0].numpy()

    def decode_latents(self, z0: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            x = self.vae.decode(torch.from_numpy(np.asarray(z0, np.float32))[None] / self.cfg.scaling_factor)
        return ((x[0].permute(1, 2, 3, 0).numpy() + 1) / 2).astype(np.float32)

    def _loop(self, sched: Any, z: np.ndarray, progress: Progress | None, label: str) -> np.ndarray:
        """One DDIM pass; ``z`` [C, L, h, w] or a batch [B, C, L, h, w] (same output layout)."""
        torch = self._torch
        sched.set_timesteps(self.cfg.steps)
        z = np.asarray(z, np.float32)
        batched = z.ndim == 5
        x = torch.from_numpy(z if batched else z[None])
        n = len(sched.timesteps)
        with torch.no_grad():
            for i, t in enumerate(sched.timesteps):
                eps = self.den(x, torch.as_tensor(t, dtype=torch.float32))
                x = sched.step(eps, t, x).prev_sample
                report(progress, (i + 1) / n, f"{label} step {i + 1}/{n}")
        return x.numpy() if batched else x[0].numpy()

    def generate_batch(self, z_t: np.ndarray) -> np.ndarray:
        """Batched ``generate``: z_T [B, C, 1+L, h, w] -> videos [B, F, H, W, 3] (8-bit quantised)."""
        torch = self._torch
        z0 = self._loop(self.ddim, z_t, None, "DDIM sampling")
        with torch.no_grad():
            x = self.vae.decode(torch.from_numpy(z0) / self.cfg.scaling_factor)
        v = ((x.permute(0, 2, 3, 4, 1).numpy() + 1) / 2).astype(np.float32)
        return np.round(np.clip(v, 0, 1) * 255) / 255

    def recover_noise_batch(self, videos: np.ndarray) -> np.ndarray:
        """Batched ``recover_noise``: videos [B, F, H, W, 3] (aligned, F = 1 + 4L) -> z_T estimates."""
        torch = self._torch
        check_frames(videos.shape[1])
        x = torch.from_numpy(np.asarray(videos, np.float32) * 2 - 1).permute(0, 4, 1, 2, 3)
        with torch.no_grad():
            mean, _ = self.vae.encode(x)
        z = mean * self.cfg.scaling_factor
        if self.decoder_inv_steps > 0:
            z = self._decoder_inversion(x, z)
        return self.invert(z.numpy())

    def sample(self, z_t: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        """DDIM: z_T ``[C, 1+L, h, w]`` -> z_0 (deterministic, eta = 0)."""
        return self._loop(self.ddim, z_t, progress, "DDIM sampling")

    def invert(self, z0: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        """DDIM inversion: z_0 [C, L, h, w] (or a batch) -> estimated z_T."""
        if self.fixed_point <= 0:
            return self._loop(self.inverse, z0, progress, "DDIM inversion")
        return self._invert_fixed_point(z0, progress)

    def _invert_fixed_point(self, z0: np.ndarray, progress: Progress | None) -> np.ndarray:
        """Invert exactly the DDIM sampler used by :meth:`sample`: each step solves x_t = sqrt(a_t) x0(x_t) +
        sqrt(1 - a_t) eps(x_t, t) by ``fixed_point`` iterations, with x0 from the previous (less noisy) latent."""
        torch = self._torch
        self.ddim.set_timesteps(self.cfg.steps)
        ac = self.ddim.alphas_cumprod
        stride = self.cfg.train_timesteps // self.cfg.steps
        z0 = np.asarray(z0, np.float32)
        batched = z0.ndim == 5
        x = torch.from_numpy(z0 if batched else z0[None])
        ts = list(reversed(self.ddim.timesteps.tolist()))
        v_pred = self.cfg.prediction_type == "v_prediction"

        def eps_at(xt, tt, a_t):  # the net's noise estimate at x_t (v -> eps: eps = sqrt(a) v + sqrt(1 - a) x_t)
            out = self.den(xt, tt)
            return a_t.sqrt() * out + (1 - a_t).sqrt() * xt if v_pred else out

        with torch.no_grad():
            for i, t in enumerate(ts):
                a_t = ac[t]
                a_p = ac[t - stride] if t - stride >= 0 else self.ddim.final_alpha_cumprod
                tt = torch.as_tensor(t, dtype=torch.float32)
                # first guess: the net at the less noisy latent, as diffusers' inverse scheduler does; exact for eps,
                # for v the guess converts at x (close to x_t, the fixed-point iterations fix the rest)
                eps = eps_at(x, tt, a_t)
                for _ in range(self.fixed_point):
                    x0 = (x - (1 - a_p).sqrt() * eps) / a_p.sqrt()
                    xt = a_t.sqrt() * x0 + (1 - a_t).sqrt() * eps
                    eps = eps_at(xt, tt, a_t)
                x0 = (x - (1 - a_p).sqrt() * eps) / a_p.sqrt()
                x = a_t.sqrt() * x0 + (1 - a_t).sqrt() * eps
                report(progress, (i + 1) / len(ts), f"DDIM inversion step {i + 1}/{len(ts)}")
        return x.numpy() if batched else x[0].numpy()

    def _decoder_inversion(self, video_t, z_init):
        """Refine the encoder's latent ``z_init`` [B, C, L, h, w] so that the clamped decoding matches the video
        ``video_t`` [B, 3, F, H, W] in [-1, 1]: ``decoder_inv_steps`` Adam steps on |clamp(D(z)) - x|^2 (PRC's
        decoder inversion; the clamp because a saved video holds the decoder's output clipped to its range)."""
        torch = self._torch
        z = z_init.clone().requires_grad_(True)
        opt = torch.optim.Adam([z], lr=self.cfg.decoder_inv_lr)
        with torch.enable_grad():
            for _ in range(self.decoder_inv_steps):
                rec = self.vae.decode(z / self.cfg.scaling_factor).clamp(-1, 1)
                loss = ((rec - video_t) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        return z.detach()


class AnalyticChannel(Channel):
    """Instant stand-in for unit tests only (never for claims): z_0 = z_T; latent frame j -> 4 frames
    ``A_i z_j + eps B z_(j-1)`` with fixed random orthogonal per-slot maps and a small causal leak; the encoder inverts
    aligned groups exactly; ``noise`` adds N(0, s^2) to the recovered noise (renormalised)."""

    name = "analytic"

    def __init__(self, frames: int = 25, size: int = 32, latent_channels: int = 16, latent_hw: int = 8,
                 leak: float = 0.1, noise: float = 0.0, seed: int = 1234):
        self.frames, self.size, self.latent_channels, self.latent_hw = frames, size, latent_channels, latent_hw
        self.leak, self.noise = leak, noise
        n = latent_channels * latent_hw**2
        self.d = size * size * 3
        if self.d < n:
            raise ValueError("the analytic channel needs size*size*3 >= latent size")
        rng = np.random.default_rng(seed)
        # per-slot maps with orthonormal columns: a random signed selection of n of the d pixel values
        self.maps = [(rng.permutation(self.d)[:n], rng.choice([-1.0, 1.0], n)) for _ in range(TEMPORAL + 2)]
        self._rng = np.random.default_rng(seed + 1)

    def _fwd(self, i: int, z: np.ndarray) -> np.ndarray:
        idx, sg = self.maps[i]
        x = np.zeros(self.d)
        x[idx] = sg * z
        return x

    def _adj(self, i: int, x: np.ndarray) -> np.ndarray:
        idx, sg = self.maps[i]
        return sg * x[idx]

    def decode_latents(self, z0: np.ndarray) -> np.ndarray:
        c, lat, h, w = z0.shape
        flat = z0.reshape(c, lat, h * w).transpose(1, 0, 2).reshape(lat, -1)
        frames = [self._fwd(TEMPORAL, flat[0])]
        for j in range(1, lat):
            for i in range(TEMPORAL):
                frames.append(self._fwd(i, flat[j]) + self.leak * self._fwd(TEMPORAL + 1, flat[j - 1]))
        vid = np.stack(frames).reshape(len(frames), self.size, self.size, 3)
        return (0.5 + 0.1 * vid).astype(np.float32)

    def encode_video(self, video: np.ndarray) -> np.ndarray:
        video = np.asarray(video, np.float64)
        lat = check_frames(video.shape[0])
        x = ((video - 0.5) / 0.1).reshape(video.shape[0], -1)
        out = [self._adj(TEMPORAL, x[0])]
        for j in range(1, lat):
            grp = x[1 + TEMPORAL * (j - 1): 1 + TEMPORAL * j]
            leak = self.leak * self._fwd(TEMPORAL + 1, out[j - 1])
            est = np.mean([self._adj(i, grp[i] - leak) for i in range(TEMPORAL)], axis=0)
            out.append(est)
        hw = self.latent_hw
        z = np.stack(out).reshape(lat, self.latent_channels, hw * hw).transpose(1, 0, 2)
        return z.reshape(self.latent_channels, lat, hw, hw).astype(np.float32)

    @property
    def latent_shape(self) -> tuple[int, int, int, int]:
        return (self.latent_channels, 1 + (self.frames - 1) // TEMPORAL, self.latent_hw, self.latent_hw)

    def sample(self, z_t: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        report(progress, 1.0, "analytic channel")
        return np.asarray(z_t, np.float32)

    def invert(self, z0: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        report(progress, 1.0, "analytic channel")
        if self.noise <= 0:
            return np.asarray(z0, np.float32)
        noisy = z0 + self.noise * self._rng.standard_normal(z0.shape)
        return (noisy / math.sqrt(1 + self.noise**2)).astype(np.float32)

    def generate(self, z_t: np.ndarray, progress: Progress | None = None) -> np.ndarray:
        return self.decode_latents(self.sample(z_t, progress))  # no quantisation: the analytic channel is exact


_CHANNELS = ("tiny", "analytic")
_cache: dict[str, Channel] = {}


def get_channel(name: str = "tiny", **kwargs: Any) -> Channel:
    """A channel by name (``tiny``: the trained model, cached; ``analytic``: unit tests only)."""
    name = choose(name, _CHANNELS, "channel")
    if name == "tiny":
        if kwargs:
            return TinyChannel(**kwargs)
        if "tiny" not in _cache:
            _cache["tiny"] = TinyChannel()
        return _cache["tiny"]
    return AnalyticChannel(**kwargs)


def save_weights(path: str | Path, vae: Any, den: Any, cfg: TinyConfig, *, command: str = "",
                 data_seeds: dict | None = None, quality: dict | None = None) -> Path:
    """Write both networks (tensor names ``vae.*`` and ``den.*``) with ``cfg`` through :mod:`backend.weights`."""
    from backend import weights

    state = {f"vae.{k}": v for k, v in vae.state_dict().items()}
    state.update({f"den.{k}": v for k, v in den.state_dict().items()})
    return weights.save(path, state, config=asdict(cfg), command=command, data_seeds=data_seeds, quality=quality)


def read_config(path: str | Path) -> TinyConfig:
    """The :class:`TinyConfig` a weights file was trained with."""
    from backend import weights

    return TinyConfig(**weights.read_meta(path).config)


def load_video_for(channel: Channel, data: bytes, name: str):
    """Decode an uploaded video (the registered input kind ``video``: ``backend.io.video``) and bring it to the
    channel's frame size. Returns (frames ``[F, size, size, 3]`` in [0, 1], the decoded video record)."""
    from backend.io.registry import decode

    dec = decode("video", data, name=name)
    return fit_video(channel, dec), dec


def fit_video(channel: Channel, dec) -> np.ndarray:
    """The frames of a decoded video (``backend.io.video.DecodedVideo``) at the channel's frame size (area resampling
    when they are rescaled)."""
    from PIL import Image

    v = dec.frames
    if v.shape[1:3] != (channel.size, channel.size):
        v = np.stack([np.asarray(Image.fromarray((f * 255).round().astype(np.uint8)).resize(
            (channel.size, channel.size), Image.BOX), np.float32) / 255 for f in v])
    return v
