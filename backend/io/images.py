"""Image uploads: sniff the format from the bytes, refuse what is too large before decoding pixels, then decode with
EXIF orientation applied and alpha composited on white.

Accepted: PNG, JPEG, WebP (8-bit or 16-bit; 16-bit is rescaled to 8-bit). Refused with a clear message: everything else
(TIFF, GIF, BMP, SVG, text, ...), empty or truncated files, files above ``max_bytes``, images above ``max_pixels`` or
``max_side`` (this is how decompression bombs are caught: the header is read, the pixels never are).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps

from ..errors import InputError

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
)
ACCEPTED = ("PNG", "JPEG", "WEBP")


def _mp(pixels: int) -> str:
    """Megapixels for a message: whole numbers stay whole (``40``), others get the digits that tell them apart."""
    mp = pixels / 1e6
    return f"{mp:.0f}" if mp == round(mp) else f"{mp:.2f}"


@dataclass(frozen=True)
class ImageLimits:
    """Upload limits. Defaults: 20 MB, 40 megapixels, 12,000 px per side, at least 16 px per side."""

    max_bytes: int = 20 * 1024 * 1024
    max_pixels: int = 40_000_000
    max_side: int = 12_000
    min_side: int = 16

    def describe(self) -> str:
        return (
            f"PNG, JPEG or WebP; at most {self.max_bytes / 2**20:.0f} MB, {_mp(self.max_pixels)} megapixels and "
            f"{self.max_side:,} px per side"
        )


def sniff_image_type(data: bytes) -> str | None:
    """The format named by the file's first bytes (``"PNG"``, ``"JPEG"``, ``"WEBP"``, ``"TIFF"``, ...), or None."""
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    return None


def _to_rgb8(img: Image.Image) -> Image.Image:
    """Convert any decoded mode to 8-bit RGB: 16-bit and float grayscale are rescaled, alpha goes on white."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        import numpy as np

        arr = np.asarray(img, dtype=np.float64)
        lo, hi = float(arr.min()), float(arr.max())
        scale = 255.0 / (hi - lo) if hi > lo else 0.0
        img = Image.fromarray(((arr - lo) * scale).round().astype("uint8"), mode="L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(background, rgba)
    return img.convert("RGB")


def decode_image(data: bytes, limits: ImageLimits | None = None, name: str = "the upload") -> Image.Image:
    """Decode an uploaded image safely.

    Args:
        data: the raw bytes of the upload.
        limits: size limits (defaults: :class:`ImageLimits`).
        name: how to call the file in messages.
    Returns:
        An 8-bit RGB ``PIL.Image`` with EXIF orientation applied, fully loaded (no file handle kept).
    Raises:
        InputError: empty, too large, not an accepted format, a decompression bomb, truncated or corrupt.
    """
    lim = limits or ImageLimits()
    if not data:
        raise InputError(f"{name} is empty (0 bytes). Choose an image file: {lim.describe()}.")
    if len(data) > lim.max_bytes:
        raise InputError(
            f"{name} is {len(data) / 2**20:.1f} MB; the limit is {lim.max_bytes / 2**20:.0f} MB. "
            "Resize or compress it and upload again."
        )
    kind = sniff_image_type(data)
    if kind not in ACCEPTED:
        what = f"a {kind} file" if kind else "not an image this lab can read (its content is not PNG, JPEG or WebP)"
        hint = " Convert it to 8-bit PNG first." if kind == "TIFF" else ""
        raise InputError(f"{name} is {what}. Accepted: {lim.describe()}.{hint}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data), formats=[kind])
            w, h = img.size  # header only: no pixels decoded yet
            if w * h > lim.max_pixels or max(w, h) > lim.max_side:
                raise InputError(
                    f"{name} is {w:,} x {h:,} pixels ({_mp(w * h)} megapixels); the limit is "
                    f"{_mp(lim.max_pixels)} megapixels and {lim.max_side:,} px per side. Downscale it first."
                )
            if min(w, h) < lim.min_side:
                raise InputError(f"{name} is only {w} x {h} pixels; at least {lim.min_side} px per side are needed.")
            img.load()
            img = ImageOps.exif_transpose(img)
            return _to_rgb8(img)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise InputError(
            f"{name} declares an enormous image (a decompression bomb?) far above the limit of "
            f"{_mp(lim.max_pixels)} megapixels; it was refused before decoding ({err})"
        ) from None
    except (OSError, SyntaxError, ValueError) as err:
        raise InputError(
            f"{name} could not be decoded as {kind}: it looks truncated or corrupt ({type(err).__name__}). "
            "Export it again and retry."
        ) from None
