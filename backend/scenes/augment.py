"""Augmentations shared by the pages that train on scenes, from kornia (``kornia.augmentation``): a random resized
crop, colour jitter, Gaussian blur and flips, applied to a batch of images and, with the same geometry, to their
label maps (instance ids and depth, resampled by nearest neighbour so ids stay ids and depths stay depths of real
surfaces). The colour changes touch the images only.

Deterministic for a seed: the random parameters are drawn from torch's generator seeded with ``seed`` inside
``torch.random.fork_rng``, so the global random state is left as it was and the same inputs, config and seed give the
same outputs. ``augmenter(config)`` returns the kornia module itself for a page that wants to call it in a loop.

Shapes: images float ``[B, 3, H, W]`` in [0, 1] (or uint8 ``[B, H, W, 3]`` arrays, converted); instances integer
``[B, H, W]``; depth float ``[B, H, W]``; outputs at ``config.size`` (default: the input size).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import InputError

from .render import Frame


@dataclass(frozen=True)
class AugmentConfig:
    """The augmentations and their ranges. ``size``: output side or ``(height, width)`` (None: the input's);
    ``crop_scale`` / ``crop_ratio``: area share and aspect ratio of the random crop, taken with probability
    ``p_crop``; colour jitter (``brightness``, ``contrast``, ``saturation``, ``hue``) with probability ``p_jitter``;
    Gaussian blur (``blur_sigma``, kernel ``blur_kernel``) with ``p_blur``; flips with ``p_hflip`` / ``p_vflip``;
    ``resample``: the images' interpolation ("bilinear" or "nearest"; label maps always use nearest)."""

    size: int | tuple[int, int] | None = None
    crop_scale: tuple[float, float] = (0.35, 1.0)
    crop_ratio: tuple[float, float] = (3 / 4, 4 / 3)
    p_crop: float = 1.0
    brightness: float = 0.3
    contrast: float = 0.3
    saturation: float = 0.3
    hue: float = 0.05
    p_jitter: float = 0.8
    blur_sigma: tuple[float, float] = (0.1, 1.5)
    blur_kernel: int = 5
    p_blur: float = 0.3
    p_hflip: float = 0.5
    p_vflip: float = 0.0
    resample: str = "bilinear"

    def __post_init__(self) -> None:
        for name in ("p_crop", "p_jitter", "p_blur", "p_hflip", "p_vflip"):
            if not 0 <= getattr(self, name) <= 1:
                raise InputError(f"{name} is a probability: give a number from 0 to 1, not {getattr(self, name)}.")
        if not 0 < self.crop_scale[0] <= self.crop_scale[1] <= 1:
            raise InputError(f"crop_scale must satisfy 0 < low <= high <= 1, got {self.crop_scale}.")
        if not 0 < self.crop_ratio[0] <= self.crop_ratio[1]:
            raise InputError(f"crop_ratio must satisfy 0 < low <= high, got {self.crop_ratio}.")
        if min(self.brightness, self.contrast, self.saturation) < 0 or not 0 <= self.hue <= 0.5:
            raise InputError("brightness, contrast and saturation must be >= 0 and hue in [0, 0.5].")
        if not 0 < self.blur_sigma[0] <= self.blur_sigma[1] or self.blur_kernel < 3 or self.blur_kernel % 2 == 0:
            raise InputError(f"blur needs 0 < sigma low <= high and an odd kernel >= 3, got {self.blur_sigma}, "
                             f"{self.blur_kernel}.")
        if self.resample not in ("bilinear", "nearest"):
            raise InputError(f"resample must be 'bilinear' or 'nearest', got {self.resample!r}.")
        if self.size is not None and min(self._size_tuple()) < 8:
            raise InputError(f"size must be at least 8 pixels a side, got {self.size}.")

    def _size_tuple(self) -> tuple[int, int]:
        s = self.size
        return (int(s), int(s)) if isinstance(s, int) else (int(s[0]), int(s[1]))

    def output_size(self, h: int, w: int) -> tuple[int, int]:
        """The ``(height, width)`` of the outputs for ``h`` x ``w`` inputs."""
        return (h, w) if self.size is None else self._size_tuple()


@dataclass
class Augmented:
    """The augmented batch: ``images`` float ``[B, 3, h, w]`` in [0, 1], ``instances`` int64 ``[B, h, w]`` and
    ``depth`` float32 ``[B, h, w]`` (None where not given), ``matrix`` float ``[B, 3, 3]`` (the geometric transform
    from input to output pixel coordinates)."""

    images: torch.Tensor
    instances: torch.Tensor | None
    depth: torch.Tensor | None
    matrix: torch.Tensor


def augmenter(config: AugmentConfig, size: tuple[int, int]):  # noqa: ANN201 - kornia AugmentationSequential
    """The kornia pipeline for inputs of ``size`` ``(H, W)``: crop, flips, jitter, blur; data keys ``input`` and
    ``mask`` (the label maps, nearest)."""
    import kornia.augmentation as K

    out = config.output_size(*size)
    ops = [K.RandomResizedCrop(out, scale=config.crop_scale, ratio=config.crop_ratio, p=config.p_crop,
                               resample=config.resample)]
    if config.p_crop < 1 and out != tuple(size):  # uncropped images still come out at the output size
        ops.append(K.Resize(out, resample=config.resample))
    if config.p_hflip > 0:
        ops.append(K.RandomHorizontalFlip(p=config.p_hflip))
    if config.p_vflip > 0:
        ops.append(K.RandomVerticalFlip(p=config.p_vflip))
    if config.p_jitter > 0:
        ops.append(K.ColorJitter(config.brightness, config.contrast, config.saturation, config.hue,
                                 p=config.p_jitter))
    if config.p_blur > 0:
        k = config.blur_kernel
        ops.append(K.RandomGaussianBlur((k, k), config.blur_sigma, p=config.p_blur))
    return K.AugmentationSequential(*ops, data_keys=["input", "mask"])


def _images(images: torch.Tensor | np.ndarray) -> torch.Tensor:
    if isinstance(images, np.ndarray):
        if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
            raise InputError(f"image arrays must be uint8 [B, H, W, 3], got {images.dtype} {images.shape}.")
        return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255.0
    if images.ndim != 4 or images.shape[1] != 3:
        raise InputError(f"image tensors must be [B, 3, H, W], got {tuple(images.shape)}.")
    return images.float()


def to_tensors(frames: Sequence[Frame]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Frames as a batch: images float ``[B, 3, H, W]`` in [0, 1], instances int64 ``[B, H, W]``, depth float32
    ``[B, H, W]``."""
    images = _images(np.stack([f.image for f in frames]))
    instances = torch.from_numpy(np.stack([f.instances for f in frames]).astype(np.int64))
    depth = torch.from_numpy(np.stack([f.depth for f in frames]).astype(np.float32))
    return images, instances, depth


def augment_batch(images: torch.Tensor | np.ndarray, instances: torch.Tensor | np.ndarray | None = None,
            depth: torch.Tensor | np.ndarray | None = None, config: AugmentConfig = AugmentConfig(),
            seed: int = 0) -> Augmented:
    """One random augmentation per image of the batch, the same geometry applied to its instance and depth maps."""
    x = _images(images)
    b, _, h, w = x.shape
    maps = []
    for m in (instances, depth):
        if m is None:
            continue
        t = torch.as_tensor(m)
        if tuple(t.shape) != (b, h, w):
            raise InputError(f"label maps must be [B, H, W] = {(b, h, w)}, got {tuple(t.shape)}.")
        maps.append(t.to(torch.float32))  # ids up to 2**24 are exact in float32
    labels = torch.stack(maps, 1) if maps else torch.zeros(b, 1, h, w)
    pipeline = augmenter(config, (h, w))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        out, lab = pipeline(x, labels)
    matrix = pipeline.transform_matrix
    if matrix is None:
        matrix = torch.eye(3).expand(b, 3, 3)
    k = 0
    inst = dep = None
    if instances is not None:
        inst = lab[:, k].round().to(torch.int64)
        k += 1
    if depth is not None:
        dep = lab[:, k].contiguous()
    return Augmented(out.clamp(0, 1), inst, dep, matrix)
