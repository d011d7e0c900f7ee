"""Classical image watermarks from the ``invisible-watermark`` library (the one Stable Diffusion shipped): the
baselines a practitioner already knows. ``METHODS`` holds them (each entry ``Classical(method)``, called with
``n_bits``, makes the watermark):

- ``dwtDctSvd``: Haar DWT of the U channel (YUV), 4x4 blocks of the approximation band, DCT, SVD; one bit per block by
  quantising the largest singular value (scale 36), bits repeated over the image, majority by averaging. The strong one.
- ``dwtDct``: the same DWT/DCT blocks without the SVD (quantises one DCT coefficient); weaker.

The library works on BGR uint8 images of at least 256 x 256 pixels (r * c >= 65536); smaller images cannot be embedded
or decoded (:class:`InputError` on embed; ``decode`` returns None so evaluations count a miss). Installed with
``--no-deps`` beside our torch and one OpenCV build (``opencv-python-headless``) plus PyWavelets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..registry import Registry

MIN_PIXELS = 256 * 256


class ClassicalWatermark:
    """``embed(img (H,W,3) uint8 RGB, bits (n,)) -> img``; ``decode(img) -> bits (n,) uint8 | None``."""

    min_side = 256
    differentiable = False

    def __init__(self, method: str = "dwtDctSvd", n_bits: int = 64):
        method = METHODS.get(method).method  # the library's spelling; InputError listing the valid names
        self.method = method
        self.name = method
        self.n_bits = n_bits
        self.label = f"invisible-watermark {method}"

    @staticmethod
    def fits(img: np.ndarray) -> bool:
        return img.shape[0] * img.shape[1] >= MIN_PIXELS

    def embed(self, img: np.ndarray, bits: np.ndarray) -> np.ndarray:
        from imwatermark import WatermarkEncoder

        if not self.fits(img):
            raise InputError(f"{self.method} needs images of at least 256 x 256 pixels; this one is "
                             f"{img.shape[1]} x {img.shape[0]}.")
        enc = WatermarkEncoder()
        enc.set_watermark("bits", [int(b) for b in np.asarray(bits).reshape(-1)])
        bgr = np.ascontiguousarray(img[..., ::-1])
        out = enc.encode(bgr, self.method)
        return np.ascontiguousarray(np.clip(out, 0, 255).astype(np.uint8)[..., ::-1])

    def decode(self, img: np.ndarray) -> np.ndarray | None:
        from imwatermark import WatermarkDecoder

        if not self.fits(img):
            return None
        dec = WatermarkDecoder("bits", self.n_bits)
        bits = dec.decode(np.ascontiguousarray(img[..., ::-1]), self.method)
        return np.asarray(bits, dtype=np.uint8).reshape(-1)

    def decode_batch(self, imgs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """``(B, n)`` bits and a ``(B,)`` bool mask of images that could be decoded (the rest get zeros)."""
        out = np.zeros((len(imgs), self.n_bits), np.uint8)
        ok = np.zeros(len(imgs), bool)
        for i, im in enumerate(imgs):
            bits = self.decode(im)
            if bits is not None:
                out[i], ok[i] = bits, True
        return out, ok


@dataclass(frozen=True)
class Classical:
    """One invisible-watermark method: ``Classical(method)(n_bits) -> ClassicalWatermark``. ``method`` is the
    library's spelling (case-sensitive in the library; the registry's keys are lower-case)."""

    method: str

    def __call__(self, n_bits: int = 64) -> ClassicalWatermark:
        return ClassicalWatermark(self.method, n_bits)


METHODS: Registry[Classical] = Registry("invisible-watermark method")
METHODS.add("dwtDctSvd", Classical("dwtDctSvd"), label="invisible-watermark DWT-DCT-SVD", color="#d62728",
            about="classical, strong")
METHODS.add("dwtDct", Classical("dwtDct"), label="invisible-watermark DWT-DCT", color="#ff7f0e",
            about="classical, weak")
