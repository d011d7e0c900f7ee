"""Safe video decoding and encoding for uploads and downloads (MP4, WebM, GIF, lossless NPZ and PNG-frame ZIP).

Limits are checked before and while decoding (bytes, frames, pixels per frame); every failure is an ``InputError``
with a message that says what to change. MP4/WebM go through OpenCV's bundled FFmpeg (via a temporary file), GIF
through Pillow. Videos are float32 ``[F, H, W, 3]`` in [0, 1].
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from dataclasses import dataclass

import numpy as np

from backend.errors import InputError

from .archives import ZIP_ERRORS, load_npz, open_zip, read_member

MAX_BYTES = 20 * 2**20
MAX_FRAMES = 240
MAX_SIDE = 1024
MIN_FRAMES = 5
KINDS = ("mp4", "webm", "gif", "npz", "zip")


@dataclass
class DecodedVideo:
    frames: np.ndarray  # [F, H, W, 3] float32 in [0, 1]
    fps: float
    kind: str


def _kind(name: str, data: bytes) -> str:
    if data[:4] == b"PK\x03\x04":  # an NPZ is a ZIP of .npy members: told apart by content, not by the file name
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                names = zf.namelist()
        except ZIP_ERRORS:
            raise InputError(f"'{name}' is a damaged or truncated ZIP archive.") from None
        return "npz" if names and all(n.endswith(".npy") for n in names) else "zip"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[4:8] == b"ftyp":
        return "mp4"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "webm"
    raise InputError(f"'{name}' is not a supported video (MP4, WebM, GIF, or a lossless NPZ / ZIP of PNG frames "
                     "downloaded from this page).")


def _check_frames(frames: list[np.ndarray] | np.ndarray, name: str) -> np.ndarray:
    if len(frames) < MIN_FRAMES:
        raise InputError(f"'{name}' has {len(frames)} frames; at least {MIN_FRAMES} are needed.")
    shapes = {f.shape for f in frames}
    if len(shapes) != 1:
        raise InputError(f"'{name}' has frames of different sizes.")
    return np.stack(frames).astype(np.float32)


def _check_size(h: int, w: int, name: str) -> None:
    if max(h, w) > MAX_SIDE:
        raise InputError(f"'{name}' is {w}x{h} pixels; the limit is {MAX_SIDE} per side.")


def decode_video(data: bytes, name: str = "upload") -> DecodedVideo:
    """Decode an uploaded video; raises InputError for anything unsupported, too large, too long or too short."""
    if len(data) > MAX_BYTES:
        raise InputError(f"'{name}' is {len(data) / 2**20:.1f} MB; the limit is {MAX_BYTES // 2**20} MB.")
    if len(data) < 16:
        raise InputError(f"'{name}' is empty or truncated.")
    kind = _kind(name, data)
    try:
        if kind == "npz":
            z = load_npz(data, f"'{name}'", max_array_bytes=8 * MAX_BYTES, max_total=8 * MAX_BYTES)
            if "video" not in z:
                raise InputError(f"'{name}' has no 'video' array (expected a lossless download from this page).")
            v = z["video"]
            fps_arr = z.get("fps", np.float32(8.0))
            if fps_arr.size != 1 or fps_arr.dtype.kind not in "fiu" or not 0.1 <= float(fps_arr.ravel()[0]) <= 240:
                raise InputError(f"'{name}': 'fps' must be one number between 0.1 and 240.")
            fps = float(fps_arr.ravel()[0])
            if v.ndim != 4 or v.shape[-1] != 3 or v.dtype != np.uint8:
                raise InputError(f"'{name}': 'video' must be uint8 [frames, height, width, 3].")
            if len(v) > MAX_FRAMES:
                raise InputError(f"'{name}' has {len(v)} frames; the limit is {MAX_FRAMES}.")
            _check_size(v.shape[1], v.shape[2], name)
            return DecodedVideo(_check_frames(list(v / 255.0), name), fps, kind)
        if kind == "zip":
            from PIL import Image

            with open_zip(data, f"'{name}'", max_total=8 * MAX_BYTES) as zf:
                names = sorted(n for n in zf.namelist() if n.lower().endswith(".png"))
                if not names:
                    raise InputError(f"'{name}' holds no PNG frames.")
                if len(names) > MAX_FRAMES:
                    raise InputError(f"'{name}' has {len(names)} frames; the limit is {MAX_FRAMES}.")
                frames = []
                for n in names:
                    img = Image.open(io.BytesIO(read_member(zf, n, f"'{name}'")), formats=["PNG"])
                    _check_size(img.height, img.width, name)
                    frames.append(np.asarray(img.convert("RGB"), np.float32) / 255.0)
            return DecodedVideo(_check_frames(frames, name), 8.0, kind)
        if kind == "gif":
            from PIL import Image, ImageSequence

            img = Image.open(io.BytesIO(data))
            _check_size(img.height, img.width, name)
            frames, durs = [], []
            for fr in ImageSequence.Iterator(img):
                if len(frames) >= MAX_FRAMES:
                    raise InputError(f"'{name}' has more than {MAX_FRAMES} frames; trim it.")
                frames.append(np.asarray(fr.convert("RGB"), np.float32) / 255.0)
                durs.append(max(1, int(fr.info.get("duration", 125) or 125)))
            # GIF writers merge identical consecutive frames into one longer frame: expand them again
            base = min(durs)
            reps = [max(1, round(d / base)) for d in durs]
            if sum(reps) > MAX_FRAMES:
                raise InputError(f"'{name}' has more than {MAX_FRAMES} frames; trim it.")
            frames = [f for f, r in zip(frames, reps) for _ in range(r)]
            return DecodedVideo(_check_frames(frames, name), 1000.0 / base, kind)
        return _decode_cv2(data, name, kind)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - decoder failures on hostile files become user errors
        raise InputError(f"Could not decode '{name}' as {kind.upper()} ({type(err).__name__}); the file may be "
                         "corrupt or use an unsupported codec.") from err


def _decode_cv2(data: bytes, name: str, kind: str) -> DecodedVideo:
    import cv2

    fd, path = tempfile.mkstemp(suffix="." + kind)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        cap = cv2.VideoCapture(path)
        if not cap.isOpened():
            raise InputError(f"Could not open '{name}': unsupported codec or corrupt file.")
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 8.0)
        frames = []
        while True:
            ok, fr = cap.read()
            if not ok:
                break
            if len(frames) >= MAX_FRAMES:
                raise InputError(f"'{name}' has more than {MAX_FRAMES} frames; trim it.")
            _check_size(fr.shape[0], fr.shape[1], name)
            frames.append(cv2.cvtColor(fr, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0)
        cap.release()
        if not frames:
            raise InputError(f"No frame of '{name}' could be decoded (unsupported codec?).")
        return DecodedVideo(_check_frames(frames, name), fps, kind)
    finally:
        os.unlink(path)


def to_uint8(video: np.ndarray) -> np.ndarray:
    return (np.clip(video, 0, 1) * 255).round().astype(np.uint8)


def upscale(video: np.ndarray, factor: int) -> np.ndarray:
    """Nearest-neighbour upscaling for viewing (tiny frames)."""
    return np.repeat(np.repeat(video, factor, axis=1), factor, axis=2)


def _encode_cv2(video: np.ndarray, fps: float, fourcc: str, suffix: str) -> bytes:
    import cv2

    v = to_uint8(video)
    fd, path = tempfile.mkstemp(suffix=suffix)
    os.close(fd)
    try:
        w = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*fourcc), float(fps), (v.shape[2], v.shape[1]))
        if not w.isOpened():
            raise InputError(f"This server's OpenCV cannot write {suffix} ({fourcc}).")
        for f in v:
            w.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
        w.release()
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(path)


def encode_mp4(video: np.ndarray, fps: float = 8.0) -> bytes:
    """MP4 (MPEG-4 part 2, 'mp4v'): for viewing; lossy with 4:2:0 colour, itself an attack at tiny sizes."""
    return _encode_cv2(video, fps, "mp4v", ".mp4")


def encode_webm(video: np.ndarray, fps: float = 8.0) -> bytes:
    """WebM (VP8): plays in browsers (the page's players)."""
    return _encode_cv2(video, fps, "VP80", ".webm")


def encode_gif(video: np.ndarray, fps: float = 8.0) -> bytes:
    from PIL import Image

    frames = [Image.fromarray(f) for f in to_uint8(video)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=int(1000 / fps), loop=0)
    return buf.getvalue()


def encode_npz(video: np.ndarray, fps: float = 8.0) -> bytes:
    """Lossless: uint8 ``video`` [F, H, W, 3] and ``fps`` in a compressed NPZ."""
    buf = io.BytesIO()
    np.savez_compressed(buf, video=to_uint8(video), fps=np.float32(fps))
    return buf.getvalue()


def encode_png_zip(video: np.ndarray) -> bytes:
    """Lossless: one PNG per frame (frame_000.png, ...) in a ZIP."""
    from PIL import Image

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, f in enumerate(to_uint8(video)):
            b = io.BytesIO()
            Image.fromarray(f).save(b, format="PNG")
            zf.writestr(f"frame_{i:03d}.png", b.getvalue())
    return buf.getvalue()
