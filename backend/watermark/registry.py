"""One registry of image watermark backends (``BACKENDS``, ``get_method(name)``), shared by the watermark pages.

| name        | what                                                                    | n bits | PSNR       |
|-------------|-------------------------------------------------------------------------|--------|------------|
| tinyhidden  | the project's learned HiDDeN-family watermark (:mod:`.learned`)         | 64     | budgeted   |
| dwtDctSvd   | invisible-watermark, DWT-DCT-SVD (the strong classical one)             | 64     | about 37 dB|
| dwtDct      | invisible-watermark, DWT-DCT                                            | 64     | about 37 dB|

Every backend has ``embed(img, bits) -> img`` and ``decode_batch(imgs) -> (bits (B, n), ok (B,))`` on ``(H, W, 3)``
uint8 RGB images, ``n_bits``, ``min_side`` and ``label``. The learned one also exposes a differentiable
``decoder_logits`` (for the white-box attack) and ``residual_image`` (for display). A registry entry called
(``BACKENDS[name](weights)``) loads its backend; ``get_method`` caches loaded backends per process (they are small).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..registry import Registry
from .classical import METHODS as CLASSICAL


class LearnedWatermark:
    """The TinyHiDDeN backend on numpy images. ``target_psnr`` sets the embedding strength (dB)."""

    differentiable = True
    min_side = 32

    def __init__(self, weights: str | Path | None = None, target_psnr: float | None = None):
        from . import learned

        self.model = learned.load(weights)
        self.weights = Path(weights) if weights is not None else learned.DEFAULT_WEIGHTS
        self.n_bits = self.model.cfg.n_bits
        self.target_psnr = float(target_psnr if target_psnr is not None else self.model.cfg.target_psnr)
        self.name = "tinyhidden"
        kind = "periodic tile" if getattr(self.model.cfg, "arch", "frame") == "tile" else "frame"
        self.label = f"TinyHiDDeN (learned, {self.n_bits} bits, {kind})"

    def with_psnr(self, target_psnr: float) -> LearnedWatermark:
        clone = object.__new__(LearnedWatermark)
        clone.__dict__.update(self.__dict__)
        clone.target_psnr = float(target_psnr)
        return clone

    def _check(self, img: np.ndarray) -> None:
        if min(img.shape[:2]) < self.min_side:
            raise InputError(f"The learned watermark needs at least {self.min_side} px per side; this image is "
                             f"{img.shape[1]} x {img.shape[0]}.")

    def embed(self, img: np.ndarray, bits: np.ndarray) -> np.ndarray:
        import torch

        from .learned import to_tensor, to_uint8

        self._check(img)
        b = torch.from_numpy(np.asarray(bits, dtype=np.float32).reshape(1, -1))
        with torch.no_grad():
            return to_uint8(self.model.embed(to_tensor(img), b, self.target_psnr))

    def residual_image(self, img: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """The residual ``(H, W, 3)`` float in image units (0-255) before clipping."""
        import torch

        from .learned import to_tensor

        b = torch.from_numpy(np.asarray(bits, dtype=np.float32).reshape(1, -1))
        with torch.no_grad():
            r = self.model.residual(to_tensor(img), b, self.target_psnr)
        return (r[0].permute(1, 2, 0).numpy() * 255.0).astype(np.float32)

    def logits_batch(self, imgs: list[np.ndarray], chunk: int = 128) -> np.ndarray:
        """Decoder logits ``(B, n)``: each image resized to the working frame, then batched passes (the periodic model
        also searches the crop scale and phase)."""
        import torch

        from .learned import resize, to_tensor

        s = self.model.cfg.size
        out = []
        with torch.no_grad():
            for i in range(0, len(imgs), chunk):
                small = torch.cat([resize(to_tensor(im), (s, s)) for im in imgs[i:i + chunk]])
                out.append(self.model.decode_logits(small).numpy())
        return np.concatenate(out) if out else np.zeros((0, self.n_bits), np.float32)

    def decode_batch(self, imgs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        ok = np.array([min(im.shape[:2]) >= self.min_side for im in imgs], bool)
        return (self.logits_batch(imgs) > 0).astype(np.uint8), ok

    def decode(self, img: np.ndarray) -> np.ndarray:
        return self.decode_batch([img])[0][0]

    def decoder_logits(self, images: torch.Tensor) -> torch.Tensor:  # noqa: F821
        """Differentiable decode of ``(B,3,H,W)`` in [0, 1] (white-box access)."""
        return self.model.decode_logits(images)


class ClassicalBackend:
    """invisible-watermark wrapped to the registry interface."""

    differentiable = False

    def __init__(self, method: str, n_bits: int = 64):
        self.impl = CLASSICAL.get(method)(n_bits)
        self.name, self.label, self.n_bits, self.min_side = method, self.impl.label, n_bits, self.impl.min_side

    def embed(self, img: np.ndarray, bits: np.ndarray) -> np.ndarray:
        return self.impl.embed(img, bits)

    def decode_batch(self, imgs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return self.impl.decode_batch(imgs)

    def decode(self, img: np.ndarray) -> np.ndarray | None:
        return self.impl.decode(img)


@dataclass(frozen=True)
class BackendSpec:
    """A registry row, called (``spec(weights=None)``) to load the backend. ``name`` is the backend's exact spelling
    (invisible-watermark's method names are case-sensitive; registry keys are lower-case); ``learned``: a trained,
    differentiable watermark whose embedding strength is set by a PSNR budget (else a classical one)."""

    name: str
    description: str
    learned: bool = False

    def __call__(self, weights: str | Path | None = None) -> LearnedWatermark | ClassicalBackend:
        return LearnedWatermark(weights) if self.learned else ClassicalBackend(self.name)


BACKENDS: Registry[BackendSpec] = Registry("watermark backend")
BACKENDS.add("tinyhidden", BackendSpec("tinyhidden", "the project's learned HiDDeN-family watermark (64 bits, PSNR "
                                                     "budget set per call)", learned=True),
             label="TinyHiDDeN (learned)", kind="ours", color="#1f77b4", about="learned, HiDDeN family")
for _key in CLASSICAL:  # the classical baselines, with invisible-watermark's labels
    _e = CLASSICAL.entry(_key)
    BACKENDS.add(_e.obj.method, BackendSpec(_e.obj.method, f"{_e.label} ({_e.about})"), label=_e.label,
                 kind="baseline", color=_e.color, about=_e.about)
ALIASES = {"learned": "tinyhidden", "hidden": "tinyhidden"}


@functools.lru_cache(maxsize=4)
def _load(name: str, weights: str | None) -> LearnedWatermark | ClassicalBackend:
    return BACKENDS[name](weights)


def get_method(name: str, weights: str | Path | None = None, target_psnr: float | None = None):
    """The backend ``name`` (case-insensitive; ``learned`` = ``tinyhidden``); the InputError lists valid names."""
    spec = BACKENDS.get(ALIASES.get(name.strip().lower(), name))
    backend = _load(spec.name, str(weights) if weights is not None else None)
    if target_psnr is not None and isinstance(backend, LearnedWatermark):
        return backend.with_psnr(target_psnr)
    return backend
