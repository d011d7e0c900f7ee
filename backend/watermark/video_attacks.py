"""Video disturbances for the SIGMark page, in one registry (``get_attack(name)``, ``apply_chain("drop:2+jpeg:50")``).

Temporal (frame 0, the causal VAE's lone first frame and I2V condition, is always kept, as in SIGMark's
``apply_disturbances.py``): ``drop:K`` or ``drop:KxP`` (P places of K consecutive frames), ``insert:K`` / ``insert:KxP``
(noise frames), ``swap:P`` (P swaps of adjacent frames), ``trim_start:K``, ``trim_end:K``, ``clip:K`` (frame 0 + K
consecutive frames from a random start), ``fps:R`` (frame-rate change by nearest-frame resampling, R = new/old rate).

Spatial, per frame: ``jpeg:Q`` (Pillow), ``mp4`` (OpenCV mp4v re-encode when available), ``noise:SIGMA`` (Gaussian,
[0, 1] units), ``blur:RADIUS`` (Gaussian), ``crop:FRAC`` (centre crop of that side fraction, resized back),
``resize:SCALE`` (down and back up), ``brightness:FACTOR``.

Videos are float arrays ``[F, H, W, 3]`` in [0, 1]; each attack returns ``(video, frame_map)`` where ``frame_map[i]``
is the source index of output frame ``i`` (-1 for inserted frames), so evaluations know which frames survived.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from backend.errors import InputError

Attack = Callable[[np.ndarray, float | str | None, np.random.Generator], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class AttackSpec:
    name: str
    kind: str  # "temporal" | "spatial"
    fn: Attack
    default: str
    help: str


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


def _kp(arg: float | str | None, default_k: int) -> tuple[int, int]:
    if arg is None:
        return default_k, 1
    s = str(arg)
    if "x" in s:
        k, p = s.split("x", 1)
        return int(k), int(p)
    return int(float(s)), 1


def drop(video, arg, rng):
    k, p = _kp(arg, 2)
    keep = np.ones(len(video), bool)
    for s in _places(rng, len(video), k, p):
        keep[s:s + k] = False
    idx = np.flatnonzero(keep)
    return video[idx], idx


def insert(video, arg, rng):
    k, p = _kp(arg, 2)
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
    p = int(float(arg or 1))
    v = video.copy()
    fmap = np.arange(len(video))
    for s in _places(rng, len(video) - 1, 2, p):
        v[[s, s + 1]] = v[[s + 1, s]]
        fmap[[s, s + 1]] = fmap[[s + 1, s]]
    return v, fmap


def trim_start(video, arg, rng):  # noqa: ARG001
    k = int(float(arg or 4))
    idx = np.concatenate([[0], np.arange(1 + k, len(video))])
    return video[idx], idx


def trim_end(video, arg, rng):  # noqa: ARG001
    k = int(float(arg or 4))
    idx = np.arange(0, len(video) - k)
    return video[idx], idx


def clip(video, arg, rng):
    k = int(float(arg or 12))
    if k >= len(video) - 1:
        raise InputError(f"clip:{k} keeps the whole video; use fewer than {len(video) - 1} frames.")
    start = int(rng.integers(1, len(video) - k + 1))
    idx = np.concatenate([[0], np.arange(start, start + k)])
    return video[idx], idx


def fps(video, arg, rng):  # noqa: ARG001
    r = float(arg or 0.8)
    if not 0.2 <= r <= 5:
        raise InputError("fps:R needs 0.2 <= R <= 5.")
    n_out = max(2, int(round((len(video) - 1) * r)) + 1)
    idx = np.clip(np.round(np.arange(n_out) / r).astype(int), 0, len(video) - 1)
    return video[idx], idx


def _per_frame(fn):
    def run(video, arg, rng):
        return np.stack([fn(f, arg, rng) for f in video]).astype(np.float32), np.arange(len(video))

    return run


def _to_pil(frame):
    from PIL import Image

    return Image.fromarray((np.clip(frame, 0, 1) * 255).round().astype(np.uint8))


def _from_pil(img):
    return np.asarray(img, dtype=np.float32)[..., :3] / 255.0


def _jpeg(frame, arg, rng):  # noqa: ARG001
    buf = io.BytesIO()
    _to_pil(frame).save(buf, format="JPEG", quality=int(float(arg or 50)))
    from PIL import Image

    return _from_pil(Image.open(buf).convert("RGB"))


def _noise(frame, arg, rng):
    return np.clip(frame + float(arg or 0.03) * rng.standard_normal(frame.shape), 0, 1)


def _blur(frame, arg, rng):  # noqa: ARG001
    from PIL import ImageFilter

    return _from_pil(_to_pil(frame).filter(ImageFilter.GaussianBlur(float(arg or 0.5))))


def _crop(frame, arg, rng):  # noqa: ARG001
    from PIL import Image

    f = float(arg or 0.85)
    h, w = frame.shape[:2]
    ch, cw = max(2, int(round(h * f))), max(2, int(round(w * f)))
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    return _from_pil(_to_pil(frame[y0:y0 + ch, x0:x0 + cw]).resize((w, h), Image.BICUBIC))


def _resize(frame, arg, rng):  # noqa: ARG001
    from PIL import Image

    s = float(arg or 0.75)
    h, w = frame.shape[:2]
    small = _to_pil(frame).resize((max(2, int(w * s)), max(2, int(h * s))), Image.BICUBIC)
    return _from_pil(small.resize((w, h), Image.BICUBIC))


def _brightness(frame, arg, rng):  # noqa: ARG001
    return np.clip(frame * float(arg or 1.2), 0, 1)


def mp4(video, arg, rng):  # noqa: ARG001
    """Re-encode through MP4 (OpenCV's mp4v) and decode again; falls back to per-frame JPEG 75 without OpenCV."""
    from backend.io.video import decode_video, encode_mp4

    try:
        data = encode_mp4(video, fps=8)
        out = decode_video(data, "x.mp4").frames
    except (InputError, ImportError):
        return _per_frame(_jpeg)(video, 75, rng)
    n = min(len(out), len(video))
    out = np.concatenate([out[:n], np.repeat(out[n - 1:n], len(video) - n, axis=0)]) if n < len(video) else out[:n]
    return out.astype(np.float32), np.arange(len(video))


ATTACKS: dict[str, AttackSpec] = {a.name: a for a in [
    AttackSpec("drop", "temporal", drop, "2", "drop K consecutive frames (drop:KxP: at P places)"),
    AttackSpec("insert", "temporal", insert, "2", "insert K noise frames (insert:KxP: at P places)"),
    AttackSpec("swap", "temporal", swap, "1", "swap P pairs of adjacent frames"),
    AttackSpec("trim_start", "temporal", trim_start, "4", "remove K frames after frame 0"),
    AttackSpec("trim_end", "temporal", trim_end, "4", "remove the last K frames"),
    AttackSpec("clip", "temporal", clip, "12", "keep frame 0 and K consecutive frames"),
    AttackSpec("fps", "temporal", fps, "0.8", "frame-rate change by factor R (nearest frame)"),
    AttackSpec("jpeg", "spatial", _per_frame(_jpeg), "50", "per-frame JPEG at quality Q"),
    AttackSpec("mp4", "spatial", mp4, "", "MP4 (mp4v) re-encoding"),
    AttackSpec("noise", "spatial", _per_frame(_noise), "0.03", "Gaussian noise of std SIGMA"),
    AttackSpec("blur", "spatial", _per_frame(_blur), "0.5", "Gaussian blur of radius R px"),
    AttackSpec("crop", "spatial", _per_frame(_crop), "0.85", "centre crop FRAC of each side, resized back"),
    AttackSpec("resize", "spatial", _per_frame(_resize), "0.75", "downscale by SCALE and back"),
    AttackSpec("brightness", "spatial", _per_frame(_brightness), "1.2", "multiply brightness by FACTOR"),
]}


def get_attack(name: str) -> AttackSpec:
    if name not in ATTACKS:
        raise InputError(f"Unknown attack {name!r}; valid: {', '.join(ATTACKS)}.")
    return ATTACKS[name]


def apply_chain(video: np.ndarray, chain: str | None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``"name[:arg]+name[:arg]..."`` in order. Returns (video, frame_map into the input's frames)."""
    video = np.asarray(video, np.float32)
    fmap = np.arange(len(video))
    if not chain or chain == "none":
        return video, fmap
    rng = np.random.default_rng(seed)
    for part in chain.split("+"):
        name, _, arg = part.strip().partition(":")
        spec = get_attack(name)
        try:
            video, m = spec.fn(video, arg or spec.default or None, rng)
        except ValueError as err:
            if isinstance(err, InputError):
                raise
            raise InputError(f"Bad argument for attack {part!r}: {err}") from err
        fmap = np.where(m >= 0, fmap[np.clip(m, 0, None)], -1)
    return video, fmap
