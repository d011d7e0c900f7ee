"""Safe image/text decoding: every bad input is an InputError with an actionable message."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from backend.errors import InputError
from backend.io import ImageLimits, decode_image, decode_text, sniff_image_type


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _png_header_only(w: int, h: int) -> bytes:
    """A PNG that declares w x h pixels (8-bit gray) with a tiny compressed body: a decompression bomb's header."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 1024)) + chunk(b"IEND", b"")


def test_roundtrip_rgb_png_jpeg_webp():
    arr = (np.random.default_rng(0).random((40, 60, 3)) * 255).astype(np.uint8)
    for fmt in ("PNG", "JPEG", "WEBP"):
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format=fmt)
        img = decode_image(buf.getvalue())
        assert img.mode == "RGB" and img.size == (60, 40)
        assert sniff_image_type(buf.getvalue()) == fmt


def test_zero_bytes():
    with pytest.raises(InputError, match="empty"):
        decode_image(b"")


def test_truncated_png():
    data = _png(Image.fromarray((np.random.default_rng(1).random((64, 64, 3)) * 255).astype(np.uint8)))
    with pytest.raises(InputError, match="truncated or corrupt"):
        decode_image(data[: len(data) // 2])


def test_text_named_png_is_sniffed():
    with pytest.raises(InputError, match="not an image"):
        decode_image(b"hello, I am a text file pretending to be a PNG\n" * 10, name="photo.png")


def test_png_bomb_refused_before_decoding():
    bomb = _png_header_only(30000, 30000)
    assert len(bomb) < 2000
    with pytest.raises(InputError, match="megapixels"):
        decode_image(bomb)


def test_tiff_16bit_refused_clearly():
    buf = io.BytesIO()
    Image.fromarray(np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)).save(buf, format="TIFF")
    with pytest.raises(InputError, match="TIFF.*Convert it to 8-bit PNG"):
        decode_image(buf.getvalue())


def test_16bit_png_rescaled():
    arr = (np.arange(64 * 64, dtype=np.uint16).reshape(64, 64) * 10)
    img = decode_image(_png(Image.fromarray(arr)))
    out = np.asarray(img)
    assert img.mode == "RGB" and out.min() == 0 and out.max() == 255


def test_byte_cap():
    data = _png(Image.fromarray((np.random.default_rng(2).random((64, 64, 3)) * 255).astype(np.uint8)))
    with pytest.raises(InputError, match="limit is"):
        decode_image(data, ImageLimits(max_bytes=100))


def test_alpha_on_white_and_exif_orientation():
    rgba = Image.new("RGBA", (32, 20), (255, 0, 0, 0))
    assert np.asarray(decode_image(_png(rgba)))[0, 0].tolist() == [255, 255, 255]
    img = Image.new("RGB", (40, 20), (0, 0, 255))
    exif = img.getexif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise on display
    buf = io.BytesIO()
    img.save(buf, format="JPEG", exif=exif)
    assert decode_image(buf.getvalue()).size == (20, 40)


def test_tiny_image_refused():
    with pytest.raises(InputError, match="at least"):
        decode_image(_png(Image.new("RGB", (4, 4))))


def test_text_decoding():
    assert decode_text("héllo".encode()) == "héllo"
    with pytest.raises(InputError, match="UTF-8"):
        decode_text(b"\xff\xfe\xfa abc")
    with pytest.raises(InputError, match="binary"):
        decode_text(b"abc\x00def")
    with pytest.raises(InputError, match="limit"):
        decode_text(b"a" * 100, max_bytes=10)
    with pytest.raises(InputError, match="empty"):
        decode_text(b"")


def test_pixel_limit_message_tells_size_from_limit():
    """2100 x 2100 over a 4-megapixel cap: the message must not round 4.41 down to the limit's own "4"."""
    data = _png_header_only(2100, 2100)
    with pytest.raises(InputError, match=r"4\.41 megapixels\); the limit is 4 megapixels"):
        decode_image(data, ImageLimits(max_pixels=4_000_000))


def test_binary_upload_message_fits_csv_pages():
    """A binary file uploaded where a CSV is expected is told to upload text, not specifically a .txt file."""
    with pytest.raises(InputError, match=r"\.csv"):
        decode_text(b"PK\x03\x04\x00\x00binary", name="tracks.csv")
