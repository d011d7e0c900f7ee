"""Self-supervised training on the egocentric stream: the views (full frame or gaze-centred crop), the positive
pairs (two augmentations of one frame, or two frames of one clip at most ``delta_t`` apart) and the MoCo-v3 loop.

The stream (:func:`build_stream`) is ``clips`` clips of :func:`backend.scenes.ego.make_stream` with each frame's
gaze from spectral-residual saliency (:mod:`.gaze`). A *view* turns the stream into the images a model learns from:
``full`` keeps the 64-pixel frames, ``central`` cuts the ``crop`` x ``crop`` window around each gaze point. A
*positive* makes a batch of pairs from those images at 32 x 32: ``augment`` applies two independent draws of the
scene package's kornia augmentations (random resized crop of 20-100 % of the area, flips, colour jitter, blur) to
one image; ``temporal`` pairs a frame with a frame ``1..delta_t`` steps earlier or later in the same clip, each
augmented the same way (the paper's code augments temporal pairs too: the arms differ only in where the second view
comes from). An arm (:data:`ARMS`) is one view with one positive: the 2 x 2 ablation of the paper.

Shapes: stream frames uint8 ``[C, T, 64, 64, 3]``, gaze float ``[C, T, 2]``; a batch of pairs
``x1, x2 float [B, 3, 32, 32]`` in [0, 1].
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F  # noqa: N812

from ...errors import InputError
from ...registry import Registry
from ..augment import AugmentConfig
from ..ego import EgoConfig, make_stream
from .gaze import crops, gaze_points, spectral_residual
from .model import MoCo, ModelConfig

INPUT = 32  # encoder input side
CROP_RANGE = (16, 64)  # crop sides the page and CLI accept (64 = the whole frame)
DELTA_RANGE = (1, 12)
STREAM_SEEDS = (0, 10_000)
# MoCo v3's augmentations at 32 px (random resized crop 20-100 %, colour jitter 0.4/0.4/0.2/0.1 with p 0.8, blur, flips)
AUGMENT = AugmentConfig(size=INPUT, crop_scale=(0.2, 1.0), brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1,
                        p_blur=0.5)  # training clips use seeds from this range; photos for the probes use other streams


@dataclass(frozen=True)
class TrainConfig:
    """One training run: ``arm`` (a name of :data:`ARMS`), central ``crop`` side in pixels of the 64-pixel frame,
    ``delta_t`` (the largest time offset of a temporal positive, in frames), ``steps`` of ``batch`` pairs at learning
    rate ``lr`` (AdamW, cosine decay), ``clips`` of the stream, the model, and the ``seed`` of initialisation and
    sampling (the stream itself is fixed)."""

    arm: str = "central-temporal"
    crop: int = 32
    delta_t: int = 3
    steps: int = 500
    batch: int = 128
    lr: float = 2e-3
    clips: int = 160
    seed: int = 0
    model: ModelConfig = ModelConfig()

    def __post_init__(self) -> None:
        object.__setattr__(self, "arm", ARMS.key(self.arm))
        check_crop(self.crop)
        check_delta(self.delta_t)
        if not 1 <= self.steps <= 100_000 or not 8 <= self.batch <= 1024 or not 4 <= self.clips <= 5000:
            raise InputError("steps must be 1-100000, batch 8-1024 and clips 4-5000.")


def check_crop(crop: int) -> int:
    lo, hi = CROP_RANGE
    if not isinstance(crop, (int, np.integer)) or not lo <= int(crop) <= hi:
        raise InputError(f"The crop size must be a whole number of pixels from {lo} to {hi} (the frame is {hi} px); "
                         f"got {crop!r}.")
    return int(crop)


def check_delta(delta_t: int) -> int:
    lo, hi = DELTA_RANGE
    if not isinstance(delta_t, (int, np.integer)) or not lo <= int(delta_t) <= hi:
        raise InputError(f"DeltaT must be a whole number of frames from {lo} to {hi}; got {delta_t!r}.")
    return int(delta_t)


@dataclass
class Stream:
    """The training stream: ``frames`` uint8 ``[C, T, H, W, 3]``, ``gaze`` float ``[C, T, 2]`` (saliency peaks),
    ``instance`` / ``category`` / ``background`` int ``[C]`` (for diagnostics and the page's strip; training reads
    none of them), ``instances`` int32 ``[C, T, H, W]`` (the rendered instance maps, diagnostics only)."""

    frames: np.ndarray
    gaze: np.ndarray
    instance: np.ndarray
    category: np.ndarray
    background: np.ndarray
    instances: np.ndarray


def build_stream(clips: int, config: EgoConfig | None = None, first: int = STREAM_SEEDS[0]) -> Stream:
    """``clips`` stream clips (seeds ``first ..``; ``config`` default :class:`EgoConfig()`) with their saliency
    gaze."""
    cl = make_stream(range(first, first + clips), config or EgoConfig())
    frames = np.stack([c.images for c in cl])
    gaze = np.stack([gaze_points(spectral_residual(c.images)) for c in cl])
    return Stream(frames, gaze, np.array([c.instance for c in cl]), np.array([c.category for c in cl]),
                  np.array([c.background for c in cl]), np.stack([c.instances for c in cl]))


def to_input(images: np.ndarray) -> torch.Tensor:
    """uint8 ``[B, h, w, 3]`` -> float ``[B, 3, 32, 32]`` in [0, 1] (area-averaged when larger)."""
    x = torch.from_numpy(np.array(images, dtype=np.uint8)).permute(0, 3, 1, 2).float() / 255.0
    if x.shape[-1] != INPUT or x.shape[-2] != INPUT:
        x = F.interpolate(x, size=(INPUT, INPUT), mode="bilinear", antialias=True, align_corners=False)
    return x.clamp(0, 1)


# ---------------------------------------------------------------------------------------------------- views
def full_view(stream: Stream, crop: int) -> np.ndarray:
    """The whole frames: uint8 ``[C, T, H, W, 3]`` (``crop`` unused)."""
    return stream.frames


def central_view(stream: Stream, crop: int) -> np.ndarray:
    """The ``crop`` x ``crop`` windows around the gaze: uint8 ``[C, T, crop, crop, 3]``."""
    return np.stack([crops(f, g, crop) for f, g in zip(stream.frames, stream.gaze, strict=True)])


def view_image(view: Callable[[Stream, int], np.ndarray], image: np.ndarray, crop: int) -> np.ndarray:
    """One image through a view, with its own saliency gaze: uint8 ``[h, w, 3]`` (the page's strip)."""
    one = Stream(image[None, None], gaze_points(spectral_residual(image[None]))[None], np.zeros(1), np.zeros(1),
                 np.zeros(1), np.zeros((1, 1) + image.shape[:2], np.int32))
    return view(one, crop)[0, 0]


# ------------------------------------------------------------------------------------------------ positives
def augment_pairs(images: np.ndarray, clip: np.ndarray, t: np.ndarray, cfg: TrainConfig,
                  rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two independent augmentations (:func:`backend.scenes.augment_batch`) of each chosen frame."""
    from ..augment import augment_batch

    src = images[clip, t]
    s1, s2 = (int(v) for v in rng.integers(0, 2**31 - 1, 2))
    return augment_batch(src, config=AUGMENT, seed=s1).images, augment_batch(src, config=AUGMENT, seed=s2).images


def temporal_partner(t: np.ndarray, frames: int, delta_t: int, rng: np.random.Generator) -> np.ndarray:
    """A frame ``1..delta_t`` steps before or after each ``t`` (reflected at the clip's ends): int ``[B]``."""
    off = rng.integers(1, delta_t + 1, size=len(t)) * rng.choice([-1, 1], size=len(t))
    u = t + off
    u = np.where(u < 0, t - off, u)
    u = np.where(u >= frames, t - off, u)
    return np.clip(u, 0, frames - 1)


def temporal_pairs(images: np.ndarray, clip: np.ndarray, t: np.ndarray, cfg: TrainConfig,
                   rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Each chosen frame and a frame of the same clip within ``delta_t`` steps, each augmented independently (as
    in the paper's code, the same augmentations as :func:`augment_pairs`)."""
    from ..augment import augment_batch

    u = temporal_partner(t, images.shape[1], cfg.delta_t, rng)
    s1, s2 = (int(v) for v in rng.integers(0, 2**31 - 1, 2))
    return (augment_batch(images[clip, t], config=AUGMENT, seed=s1).images,
            augment_batch(images[clip, u], config=AUGMENT, seed=s2).images)


@dataclass(frozen=True)
class Arm:
    """One arm of the ablation: a view and a positive. Called on the view's images and chosen frames, it returns
    the batch of positive pairs."""

    view: Callable[[Stream, int], np.ndarray]
    positive: Callable[..., tuple[torch.Tensor, torch.Tensor]]

    @property
    def view_name(self) -> str:
        """``full`` or ``central`` (from the view function's name)."""
        return self.view.__name__.removesuffix("_view")

    @property
    def positive_name(self) -> str:
        """``augment`` or ``temporal`` (from the positive function's name)."""
        return self.positive.__name__.removesuffix("_pairs")

    def __call__(self, images: np.ndarray, clip: np.ndarray, t: np.ndarray, cfg: TrainConfig,
                 rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return self.positive(images, clip, t, cfg, rng)


ARMS: Registry[Arm] = Registry("training arm")
ARMS.add("central-temporal", Arm(central_view, temporal_pairs), label="Central + temporal (ours)", kind="ours",
         color="#d62728")
ARMS.add("full-augment", Arm(full_view, augment_pairs), label="Full frame + augmentation", kind="baseline",
         color="#1f77b4")
ARMS.add("central-augment", Arm(central_view, augment_pairs), label="Central + augmentation", kind="ablation",
         color="#ff7f0e")
ARMS.add("full-temporal", Arm(full_view, temporal_pairs), label="Full frame + temporal", kind="ablation",
         color="#2ca02c")


@dataclass
class TrainResult:
    """The trained model, the loss every 10 steps and the wall time."""

    model: MoCo
    losses: list[float]
    seconds: float


def train(cfg: TrainConfig, stream: Stream, log: Callable[[str], None] | None = None) -> TrainResult:
    """MoCo v3 on the arm's pairs: AdamW (weight decay 1e-4), warm-up over 5 % of the steps then cosine decay, key
    momentum from ``momentum`` to 1 on a cosine. Same config, stream and seed: same weights (one thread)."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng([cfg.seed, 61])
    arm = ARMS[cfg.arm]
    images = arm.view(stream, cfg.crop)
    model = MoCo(cfg.model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=1e-4)
    warm = max(1, cfg.steps // 20)
    n_clips, n_frames = images.shape[:2]
    losses: list[float] = []
    t0 = time.perf_counter()
    model.train()
    for step in range(cfg.steps):
        lr = cfg.lr * min(1.0, (step + 1) / warm) * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        clip = rng.integers(0, n_clips, cfg.batch)
        t = rng.integers(0, n_frames, cfg.batch)
        x1, x2 = arm(images, clip, t, cfg, rng)
        loss = model.loss(x1, x2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        m = 1 - (1 - cfg.model.momentum) * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))
        model.update_keys(m)
        if step % 10 == 0 or step == cfg.steps - 1:
            losses.append(round(float(loss.detach()), 4))
            if log and step % 100 == 0:
                log(f"{cfg.arm} seed {cfg.seed} step {step} loss {losses[-1]:.3f} "
                    f"({time.perf_counter() - t0:.0f} s)")
    model.eval()
    return TrainResult(model, losses, time.perf_counter() - t0)
