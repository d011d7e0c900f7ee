"""Video attacks on float arrays ``[F, H, W, 3]`` in [0, 1]: ``fn(video, value, rng) -> (video, frame_map)``, where
``frame_map[i]`` is the source index of output frame ``i`` (-1 for inserted frames), so evaluations know which frames
survived. ``value`` is the step's parsed parameter; names, parameters and units are the table of
:mod:`backend.watermark.attacks` (one grammar for images and videos), which parses chains.

Temporal attacks keep frame 0 (the causal VAE's lone first frame and I2V condition), as in SIGMark's
``apply_disturbances.py``. Spatial attacks work frame by frame and keep the frame size (the extractor works at the
generator's size), so ``crop`` and ``resize`` scale back.
"""

from __future__ import annotations

import io
import math

import numpy as np

from backend.errors import InputError


def _places(rng: np.random.Generator, n_frames: int, k: int, p: int) -> list[int]:
    """P non-overlapping starts (>= 1) for blocks of K frames in a video of n_frames."""
    span = n_frames - 1
    if k * p >= span:
        raise InputError(f"Cannot remove {k * p} of the {span} frames after frame 0.")
    starts: list[int] = []
    for _ in range(200):
        s = int(rng.integers(1, n_frames - k + 1))
        if all(abs(s - o) > k for o in starts):
            starts.append(s)
        if len(starts) == p:
            return sorted(starts)
    raise InputError("Could not place the temporal edits without overlap; use fewer or shorter edits.")


def drop(video, arg, rng):
    k, p = arg
    keep = np.ones(len(video), bool)
    for s in _places(rng, len(video), k, p):
        keep[s:s + k] = False
    idx = np.flatnonzero(keep)
    return video[idx], idx


def insert(video, arg, rng):
    k, p = arg
    starts = sorted(int(s) for s in rng.choice(np.arange(1, len(video)), size=p, replace=False))
    frames, fmap = [], []
    for i in range(len(video)):
        if i in starts:
            for _ in range(k):
                frames.append(rng.uniform(0, 1, video.shape[1:]).astype(np.float32))
                fmap.append(-1)
        frames.append(video[i])
        fmap.append(i)
    return np.stack(frames), np.array(fmap)


def swap(video, arg, rng):
    p = int(arg)
    v = video.copy()
    fmap = np.arange(len(video))
    for s in _places(rng, len(video) - 1, 2, p):
        v[[s, s + 1]] = v[[s + 1, s]]
        fmap[[s, s + 1]] = fmap[[s + 1, s]]
    return v, fmap


def trim_start(video, arg, rng):  # noqa: ARG001
    k = int(arg)
    idx = np.concatenate([[0], np.arange(1 + k, len(video))])
    return video[idx], idx


def trim_end(video, arg, rng):  # noqa: ARG001
    k = int(arg)
    idx = np.arange(0, len(video) - k)
    return video[idx], idx


def clip(video, arg, rng):
    k = int(arg)
    if k >= len(video) - 1:
        raise InputError(f"clip:{k} keeps the whole video; use fewer than {len(video) - 1} frames.")
    start = int(rng.integers(1, len(video) - k + 1))
    idx = np.concatenate([[0], np.arange(start, start + k)])
    return video[idx], idx


def fps(video, arg, rng):  # noqa: ARG001
    r = float(arg)
    if not 0.2 <= r <= 5:
        raise InputError("fps:R needs 0.2 <= R <= 5.")
    n_out = max(2, int(round((len(video) - 1) * r)) + 1)
    idx = np.clip(np.round(np.arange(n_out) / r).astype(int), 0, len(video) - 1)
    return video[idx], idx


def per_frame(fn):
    def run(video, arg, rng):
        return np.stack([fn(f, arg, rng) for f in video]).astype(np.float32), np.arange(len(video))

    return run


def _to_pil(frame):
    from PIL import Image

    return Image.fromarray((np.clip(frame, 0, 1) * 255).round().astype(np.uint8))


def _from_pil(img):
    return np.asarray(img, dtype=np.float32)[..., :3] / 255.0


def frame_jpeg(frame, arg, rng):  # noqa: ARG001
    buf = io.BytesIO()
    _to_pil(frame).save(buf, format="JPEG", quality=int(round(min(100, max(1, float(arg))))))
    from PIL import Image

    return _from_pil(Image.open(buf).convert("RGB"))


def frame_noise(frame, arg, rng):
    # the grammar's sigma is in 0-255 units, frames are in [0, 1]
    return np.clip(frame + (float(arg) / 255.0) * rng.standard_normal(frame.shape), 0, 1)


def frame_blur_sigma(frame, arg, rng):  # noqa: ARG001
    from PIL import ImageFilter

    return _from_pil(_to_pil(frame).filter(ImageFilter.GaussianBlur(float(arg))))


def frame_crop(frame, arg, rng):  # noqa: ARG001
    from PIL import Image

    f = math.sqrt(1.0 - float(arg))  # the grammar gives the fraction of the AREA cut away
    h, w = frame.shape[:2]
    ch, cw = max(2, int(round(h * f))), max(2, int(round(w * f)))
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    return _from_pil(_to_pil(frame[y0:y0 + ch, x0:x0 + cw]).resize((w, h), Image.BICUBIC))


def frame_resize(frame, arg, rng):  # noqa: ARG001
    from PIL import Image

    s = float(arg)
    h, w = frame.shape[:2]
    small = _to_pil(frame).resize((max(2, int(w * s)), max(2, int(h * s))), Image.BICUBIC)
    return _from_pil(small.resize((w, h), Image.BICUBIC))


def frame_brightness(frame, arg, rng):  # noqa: ARG001
    return np.clip(frame * float(arg), 0, 1)


def mp4(video, arg, rng):  # noqa: ARG001
    """Re-encode through MP4 (OpenCV's mp4v) and decode again; falls back to per-frame JPEG 75 without OpenCV."""
    from backend.io.video import decode_video, encode_mp4

    try:
        data = encode_mp4(video, fps=8)
        out = decode_video(data, "x.mp4").frames
    except (InputError, ImportError):
        return per_frame(frame_jpeg)(video, 75, rng)
    n = min(len(out), len(video))
    out = np.concatenate([out[:n], np.repeat(out[n - 1:n], len(video) - n, axis=0)]) if n < len(video) else out[:n]
    return out.astype(np.float32), np.arange(len(video))


def on_uint8(fn):
    """A per-frame version of an image attack ``fn(img uint8, strength, rng)`` for float frames in [0, 1]."""

    def run(frame, arg, rng):
        return _from_pil(fn((np.clip(frame, 0, 1) * 255).round().astype(np.uint8), arg, rng))

    return run
