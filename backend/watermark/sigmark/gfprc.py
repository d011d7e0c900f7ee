"""GF-PRC, the watermark of SIGMark: global per-frame PRC keys, messages, watermarked initial noise, generation,
and blind extraction from recovered noise (which key each latent frame carries, its bits, the video-level test).

See :mod:`backend.watermark.sigmark` for the method as a whole.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backend.errors import InputError
from backend.runtime import Progress
from backend.watermark import prc
from backend.watermark.sigmark.channel import Channel
from backend.watermark.sigmark.messages import BITS_PER_FRAME, check_message_bits, message_options


@dataclass
class SIGMarkConfig:
    """Lab defaults (paper: n = 65536 per latent frame, 512 bits, 1 test bit; here n = C*h*w = 1024, see module doc)."""

    bits_per_frame: int = BITS_PER_FRAME  # m: message bits per latent frame block
    key_fpr: float = 1e-5  # PRC KeyGen false-positive rate -> b = 17 test bits (the paper's keys use 0.5 -> 1 bit)
    noise_rate: float | None = None  # None: PRC's eta = 1 - 2^(-secpar/g^2); the paper's SIGMark uses 0
    bp_iters: int = 200
    posterior_variance: float = 1.5
    video_fpr: float = 1e-6  # detection false-positive rate per video (joint aligned test + frames x keys, union)
    key_seed: int = 20260302  # the global key set (one per deployment)
    # SGO segmentation (the paper's features and rules; code ``utils/video_utils.py``)
    sgo_window: int = 31  # robust local z-scores: median / MAD over this many transitions, clipped at +-sgo_z_clip
    sgo_z_clip: float = 4.0
    sgo_weights: tuple[float, ...] = (0.15, 0.30, 0.30, 0.10, 0.15)  # median flow, fw-bw error, MC residual,
    # flow change, frame difference
    sgo_hysteresis: tuple[float, float] = (3.0, 2.0)  # cut regions: smoothed score >= mean + 3 std, grown to + 2 std
    sgo_z_cut: float = 3.2  # hard cut: combined robust z-score
    sgo_abs_cut: float = 0.10  # hard cut: MC residual or frame difference (in [0, 1] units) >= this ...
    sgo_abs_rel: float = 2.0  # ... and >= this many times the video's median (our addition: the paper's 0.10 assumes
    # smooth natural video, median frame difference ~0.02-0.03, where the rule is unchanged; the tiny model's samples
    # flicker: ~0.12-0.15 with an eps-prediction denoiser, ~0.067 inside a group and ~0.105 at group boundaries with
    # the shipped v-prediction one, where 0.10 alone would cut at every frame or every group)
    sgo_min_segment: int = 8  # shorter segments merge with a neighbour across a weak (hysteresis-only) cut


@dataclass
class Extraction:
    """Result of a blind extraction.

    ``message`` [M] recovered bits (majority vote); ``frame_bits`` [Lf, m] per absolute latent frame (NaN rows:
    no inverted frame claimed that key); ``key_idx`` [Lf'] best key (1-based) of each inverted latent frame;
    ``scores`` [Lf', Lf] Detect scores; ``passes`` [Lf'] Detect at the per-test FPR; ``decode_ok`` [Lf'] test bits
    matched; ``detected`` video-level decision; ``interpolated`` [F] frames SGO filled in (all False without SGO).
    """

    message: np.ndarray
    frame_bits: np.ndarray
    key_idx: np.ndarray
    scores: np.ndarray
    thresholds: np.ndarray
    passes: np.ndarray
    decode_ok: np.ndarray
    detected: bool
    interpolated: np.ndarray
    sgo: dict = field(default_factory=dict)
    seconds: float = 0.0


class GlobalKeys:
    """The GF-PRC key set: ``keys[f - 1]`` for latent frame ``f = 1..Lf`` (fixed storage, shared by all videos)."""

    def __init__(self, n: int, n_frames: int, cfg: SIGMarkConfig | None = None):
        self.cfg = cfg or SIGMarkConfig()
        rng = np.random.default_rng(self.cfg.key_seed)
        self.n, self.n_frames = n, n_frames
        self.keys = [prc.keygen(n, self.cfg.bits_per_frame, self.cfg.key_fpr, noise_rate=self.cfg.noise_rate,
                                bp_iters=self.cfg.bp_iters, seed=rng) for _ in range(n_frames)]

    def nbytes(self) -> int:
        return sum(k.nbytes() for k in self.keys)


_key_cache: dict[tuple, GlobalKeys] = {}


def global_keys(channel: Channel, cfg: SIGMarkConfig | None = None) -> GlobalKeys:
    cfg = cfg or SIGMarkConfig()
    c, lat, h, w = channel.latent_shape
    tag = (c * h * w, lat - 1, cfg.bits_per_frame, cfg.key_fpr, cfg.noise_rate, cfg.bp_iters, cfg.key_seed)
    if tag not in _key_cache:
        _key_cache[tag] = GlobalKeys(c * h * w, lat - 1, cfg)
    return _key_cache[tag]


# ------------------------------------------------------------------------------------------------------ messages
def parse_hex(message: str, total_bits_options: tuple[int, ...] | None = None) -> np.ndarray:
    """Hex string -> bits (MSB first); its length must give one of ``total_bits_options`` bits (default
    :func:`message_options`)."""
    s = message.strip().lower().removeprefix("0x")
    if not s or any(ch not in "0123456789abcdef" for ch in s):
        raise InputError(f"The message must be hexadecimal (0-9, a-f); got {message!r}.")
    bits = np.array([int(b) for ch in s for b in f"{int(ch, 16):04b}"], dtype=np.uint8)
    check_message_bits(bits.size, total_bits_options)
    return bits


def bits_to_hex(bits: np.ndarray) -> str:
    b = np.asarray(bits, dtype=np.uint8).reshape(-1)
    pad = (-b.size) % 4
    b = np.concatenate([b, np.zeros(pad, np.uint8)])
    return "".join(f"{int(''.join(map(str, b[i:i + 4])), 2):x}" for i in range(0, b.size, 4))


def frame_blocks(message: np.ndarray, n_frames: int, m: int) -> np.ndarray:
    """[Lf, m]: the block each latent frame carries (block ``(f-1) // fr``, fr = Lf / blocks)."""
    message = np.asarray(message, np.uint8).reshape(-1)
    blocks = message.size // m
    if message.size % m or blocks == 0 or n_frames % blocks:
        raise InputError(f"A message of {message.size} bits does not tile {n_frames} latent frames of {m} bits.")
    fr = n_frames // blocks
    return np.stack([message[((f // fr) * m):((f // fr) + 1) * m] for f in range(n_frames)])


# ----------------------------------------------------------------------------------------------------- embedding
def initial_noise(channel: Channel, seed: int, message: np.ndarray | None, cfg: SIGMarkConfig | None = None
                  ) -> np.ndarray:
    """z_T ``[C, 1 + Lf, h, w]`` for ``seed``: plain N(0, I) if ``message`` is None, else GF-PRC-watermarked with the
    SAME magnitudes |N| (so the two videos from one seed differ only through the signs)."""
    cfg = cfg or SIGMarkConfig()
    shape = channel.latent_shape
    if message is None:
        return prc_signed_noise(shape, seed, [], None)
    keys = global_keys(channel, cfg)
    return prc_signed_noise(shape, seed, keys.keys, frame_blocks(message, shape[1] - 1, cfg.bits_per_frame), stream=1)


def prc_signed_noise(shape: tuple[int, ...], seed: int, keys: Sequence[Any], blocks: np.ndarray | None,
                     stream: int = 1) -> np.ndarray:
    """z_T ``shape = [C, 1 + Lf, h, w]`` from ``seed``: N(0, I) magnitudes, and for each latent frame f >= 1 the signs
    of the PRC codeword of ``blocks[f - 1]`` under ``keys[f - 1]`` (codeword randomness from stream ``stream`` of
    ``seed``); latent frame 0 stays plain. ``blocks`` None: plain N(0, I). Shared by SIGMark (one key per latent frame)
    and the VideoMark-style baseline (the same key for every frame), so both watermark the same |N| for a seed."""
    base = np.random.default_rng([seed, 0]).standard_normal(shape).astype(np.float32)
    if blocks is None:
        return base
    rng = np.random.default_rng([seed, stream])
    z = base.copy()
    for f in range(1, shape[1]):
        signs = prc.encode(keys[f - 1], blocks[f - 1], rng).reshape(shape[0], shape[2], shape[3])
        z[:, f] = signs * np.abs(base[:, f])
    return z


@dataclass
class Generation:
    video: np.ndarray  # [F, H, W, 3] in [0, 1]
    z_t: np.ndarray
    message: np.ndarray | None
    seconds: float


def generate(channel: Channel, seed: int, message: np.ndarray | None, cfg: SIGMarkConfig | None = None,
             progress: Progress | None = None) -> Generation:
    """Generate a (watermarked if ``message`` is given) video from ``seed``."""
    t0 = time.perf_counter()
    z = initial_noise(channel, seed, message, cfg)
    video = channel.generate(z, progress)
    return Generation(video, z, None if message is None else np.asarray(message, np.uint8), time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------------- extraction
def score_frames(keys: GlobalKeys, z_hat: np.ndarray, cfg: SIGMarkConfig, per_test_fpr: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detect (score, threshold) of every inverted latent frame 1.. against every key, and the posteriors.

    z_hat [C, 1 + L', h, w] -> scores [L', Lf], thresholds [L', Lf], posteriors [L', n]."""
    lat = z_hat.shape[1]
    posts = np.stack([prc.posterior(z_hat[:, f].reshape(-1), cfg.posterior_variance) for f in range(1, lat)])
    scores = np.zeros((lat - 1, keys.n_frames))
    thr = np.zeros_like(scores)
    for i, p in enumerate(posts):
        for k, key in enumerate(keys.keys):
            scores[i, k], thr[i, k] = prc.detect_stats(key, p, per_test_fpr)
    return scores, thr, posts


def _detect(keys: GlobalKeys, z_hat: np.ndarray, cfg: SIGMarkConfig):
    """Scores, thresholds, posteriors, best key (0-based) and Detect pass of every inverted latent frame, and the
    joint aligned Detect. The per-video FPR is split in half: one joint PRC Detect over the concatenated checks of
    latent frames 1..min(L', Lf) with keys 1..min(L', Lf) (the aligned hypothesis: undisturbed or restored by SGO),
    and ``frames x keys`` single Detects at ``video_fpr / (2 frames keys)`` each (union bound)."""
    lat = z_hat.shape[1] - 1
    per_test = cfg.video_fpr / (2 * max(1, lat) * keys.n_frames)
    scores, thr, posts = score_frames(keys, z_hat, cfg, per_test)
    key_idx = scores.argmax(axis=1)  # 0-based key = latent frame key_idx + 1
    passes = scores[np.arange(len(key_idx)), key_idx] >= thr[np.arange(len(key_idx)), key_idx]
    terms = np.array([prc.detect_terms(keys.keys[f], posts[f]) for f in range(min(lat, keys.n_frames))])
    joint = bool(len(terms)) and terms[:, 0].sum() >= prc.threshold(terms[:, 1].sum(), terms[:, 2].sum(),
                                                                     cfg.video_fpr / 2)
    return scores, thr, posts, key_idx, passes, joint


def detect_noise(keys: GlobalKeys, z_hat: np.ndarray, cfg: SIGMarkConfig | None = None) -> bool:
    """Video-level zero-bit detection only (the ``detected`` field of :func:`extract_noise`, without BP decoding)."""
    out = _detect(keys, z_hat, cfg or SIGMarkConfig())
    return bool(out[5] or out[4].any())


def extract_noise(keys: GlobalKeys, z_hat: np.ndarray, cfg: SIGMarkConfig | None = None, message_bits: int | None = None
                  ) -> Extraction:
    """Blind GF-PRC extraction from an inverted latent ``z_hat [C, 1 + L', h, w]`` (any L'); ``message_bits`` (default
    m) must be one of :func:`message_options` for the key set's Lf (InputError otherwise)."""
    t0 = time.perf_counter()
    cfg = cfg or SIGMarkConfig()
    m, lf = cfg.bits_per_frame, keys.n_frames
    scores, thr, posts, key_idx, passes, joint = _detect(keys, z_hat, cfg)
    frame_bits = np.full((lf, m), np.nan)
    best_score = np.full(lf, -np.inf)
    decode_ok = np.zeros(len(key_idx), dtype=bool)
    for i, k in enumerate(key_idx):
        res = prc.decode(keys.keys[k], posts[i])
        decode_ok[i] = res.ok
        if res.message is not None and scores[i, k] > best_score[k]:
            frame_bits[k] = res.message  # out[key_idx[f]] = decoded[f]
            best_score[k] = scores[i, k]
    total = check_message_bits(message_bits or m, message_options(lf, m))
    blocks = total // m
    fr = lf // blocks
    message = np.zeros(total, dtype=np.uint8)
    for b in range(blocks):
        rows = frame_bits[b * fr:(b + 1) * fr]
        rows = rows[~np.isnan(rows[:, 0])]
        if len(rows):
            message[b * m:(b + 1) * m] = (rows.mean(axis=0) > 0.5).astype(np.uint8)
    return Extraction(message=message, frame_bits=frame_bits, key_idx=key_idx + 1, scores=scores, thresholds=thr,
                      passes=passes, decode_ok=decode_ok, detected=bool(joint or passes.any()),
                      interpolated=np.zeros(0, bool), seconds=time.perf_counter() - t0)


def conform_length(video: np.ndarray, frames: int) -> np.ndarray:
    """Naive re-grouping (no SGO): trim to ``frames`` or pad by repeating the last frame."""
    if len(video) >= frames:
        return video[:frames]
    return np.concatenate([video, np.repeat(video[-1:], frames - len(video), axis=0)])


