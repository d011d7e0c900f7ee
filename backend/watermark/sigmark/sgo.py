"""SGO (segment group ordering) and the full blind extraction of SIGMark from a possibly edited video.

Temporal edits shift frames across the causal VAE's 4-frame groups; SGO segments the frames at discontinuities, finds
each segment's group phase, places it at its absolute frame and interpolates the gaps (see
:mod:`backend.watermark.sigmark`).
"""

from __future__ import annotations

import time

import numpy as np

from backend.errors import InputError
from backend.runtime import Progress, report, sub_progress
from backend.watermark.sigmark.channel import TEMPORAL, Channel, check_frames
from backend.watermark.sigmark.gfprc import (
    Extraction,
    GlobalKeys,
    SIGMarkConfig,
    conform_length,
    extract_noise,
    frame_blocks,
    global_keys,
    score_frames,
)


# ----------------------------------------------------------------------------------------------------------- SGO
def segment_features(video: np.ndarray) -> np.ndarray:
    """The paper's neighbour features of consecutive frames ``video[i] -> video[i + 1]`` (Farneback optical flow on
    8-bit grey frames): median flow magnitude, forward-backward consistency error, motion-compensated residual (next
    frame warped back by the flow vs this frame), flow change (vs the previous transition's flow), mean absolute frame
    difference. ``video`` [F, H, W, 3] in [0, 1] -> [F - 1, 5]."""
    import cv2

    grey = [cv2.cvtColor(np.round(np.clip(f, 0, 1) * 255).astype(np.uint8), cv2.COLOR_RGB2GRAY) for f in video]
    h, w = grey[0].shape
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))

    def flow(a, b):
        return cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 2, 9, 3, 5, 1.1, 0)

    def warp(img, fl):
        return cv2.remap(img, gx + fl[..., 0], gy + fl[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    rows, prev = [], None
    for i in range(len(video) - 1):
        fw, bw = flow(grey[i], grey[i + 1]), flow(grey[i + 1], grey[i])
        nxt = np.asarray(video[i + 1], np.float32)
        rows.append([float(np.median(np.linalg.norm(fw, axis=-1))),
                     float(np.linalg.norm(fw + warp(bw, fw), axis=-1).mean()),
                     float(np.abs(warp(nxt, fw) - video[i]).mean()),
                     0.0 if prev is None else float(np.linalg.norm(fw - prev, axis=-1).mean()),
                     float(np.abs(nxt - video[i]).mean())])
        prev = fw
    return np.asarray(rows)


def _robust_z(x: np.ndarray, window: int, clip: float) -> np.ndarray:
    """Local robust z-score of each row of ``x`` [N, K]: (x - median) / (1.4826 MAD) over a centred window."""
    out = np.zeros_like(x, dtype=np.float64)
    half = window // 2
    for i in range(len(x)):
        w = x[max(0, i - half): i + half + 1]
        med = np.median(w, axis=0)
        mad = 1.4826 * np.median(np.abs(w - med), axis=0)
        out[i] = (x[i] - med) / (mad + 1e-3 * np.maximum(np.abs(med), 1e-3) + 1e-6)
    return np.clip(out, -clip, clip)


def segment_frames(video: np.ndarray, cfg: SIGMarkConfig | None = None) -> tuple[list[list[int]], np.ndarray]:
    """Split frames 1..F-1 at discontinuities (SGO step 1). Returns (segments as lists of frame indices, combined
    robust z-score of each transition [F-2]).

    The paper's rules: the five :func:`segment_features`, robust local z-scores (window ``sgo_window``, clipped),
    weighted sum ``sgo_weights``, smoothed (1/4, 1/2, 1/4); hysteresis cut regions (smoothed score >= mean + 3 std,
    grown while >= mean + 2 std; the cut at the region's highest raw score) plus hard cuts (raw score >=
    ``sgo_z_cut``, or MC residual / frame difference >= ``sgo_abs_cut`` and ``sgo_abs_rel`` x the median); segments
    shorter than ``sgo_min_segment`` frames merge with a neighbour across a weak (hysteresis-only) cut."""
    cfg = cfg or SIGMarkConfig()
    idx = list(range(1, len(video)))
    if len(idx) < 3:
        return [idx], np.zeros(max(0, len(idx) - 1))
    feats = segment_features(np.asarray(video[1:], np.float32))  # [len(idx) - 1, 5]
    z = _robust_z(feats, cfg.sgo_window, cfg.sgo_z_clip) @ np.asarray(cfg.sgo_weights)
    sm = np.convolve(np.pad(z, 1, mode="edge"), [0.25, 0.5, 0.25], mode="valid")
    hi, lo = sm.mean() + cfg.sgo_hysteresis[0] * sm.std(), sm.mean() + cfg.sgo_hysteresis[1] * sm.std()
    weak = np.zeros(len(z), bool)
    i = 0
    while i < len(sm):
        if sm[i] >= lo:
            j = i
            while j + 1 < len(sm) and sm[j + 1] >= lo:
                j += 1
            if sm[i:j + 1].max() >= hi:
                weak[i + int(np.argmax(z[i:j + 1]))] = True
            i = j + 1
        else:
            i += 1
    res, diff = feats[:, 2], feats[:, 4]
    abs_res = max(cfg.sgo_abs_cut, cfg.sgo_abs_rel * float(np.median(res)))
    abs_diff = max(cfg.sgo_abs_cut, cfg.sgo_abs_rel * float(np.median(diff)))
    hard = (z >= cfg.sgo_z_cut) | (res >= abs_res) | (diff >= abs_diff)
    weak &= ~hard
    # segments between cuts; cut_kind[k] = kind of the cut after segment k
    segs, kinds, cur = [], [], [idx[0]]
    for t in range(len(z)):
        if hard[t] or weak[t]:
            segs.append(cur)
            kinds.append("hard" if hard[t] else "weak")
            cur = []
        cur.append(idx[t + 1])
    segs.append(cur)
    while True:  # merge short segments across weak cuts (the neighbour with the lower cut score first)
        cand = []
        for k, sg in enumerate(segs):
            if len(sg) >= cfg.sgo_min_segment:
                continue
            for side in (k - 1, k):  # cut index between segs[side] and segs[side + 1]
                if 0 <= side < len(kinds) and kinds[side] == "weak":
                    cand.append((len(sg), float(z[segs[side][-1] - 1]), side))
        if not cand:
            break
        _, _, side = min(cand)
        segs[side:side + 2] = [segs[side] + segs[side + 1]]
        del kinds[side]
    return segs, z


def _phase_search(channel: Channel, keys: GlobalKeys, video: np.ndarray, seg: list[int], cfg: SIGMarkConfig,
                  per_test: float) -> dict | None:
    """Find the group phase of one segment. Returns {offset, key (1-based, of the group starting at seg[offset]),
    score} or None when no offset gives consecutive keys (windows holding only one full group, and segments of at
    most T frames: that group's best key must pass Detect). Offsets are ranked by the summed Detect margins
    S - threshold of their latent frames (our choice: margins stay comparable across window sizes)."""
    frames = video[seg]
    T = TEMPORAL
    best = None
    single = len(seg) <= T
    n_lat = 1 if single else 2
    windows = []
    for off in range(T if not single else 1):
        ctx = frames[off - 1] if off > 0 else frames[0]
        body = frames[off:off + n_lat * T]
        if len(body) == 0:
            continue
        n_real = len(body)
        body = np.concatenate([body, np.repeat(body[-1:], n_lat * T - len(body), axis=0)])
        windows.append((off, n_real, np.concatenate([ctx[None], body])))
    if not windows:
        return None
    minis = np.stack([w[2] for w in windows])
    batch = getattr(channel, "recover_noise_batch", None)  # one batched encode + inversion for the T offsets
    z_hats = batch(minis) if batch is not None else [channel.recover_noise(m) for m in minis]
    for (off, n_real, _), z_hat in zip(windows, z_hats):
        scores, thr, _ = score_frames(keys, z_hat, cfg, per_test)
        k = scores.argmax(axis=1)
        margin = scores[np.arange(len(k)), k] - thr[np.arange(len(k)), k]
        if single or n_real < 2 * T:
            # one full group in the window: accept its key if it passes Detect (the second latent is padding)
            if n_real >= T and margin[0] >= 0 and (best is None or margin[0] > best["score"]):
                best = {"offset": off, "key": int(k[0]) + 1, "score": float(margin[0])}
            elif single and margin[0] >= 0 and (best is None or margin[0] > best["score"]):
                best = {"offset": off, "key": int(k[0]) + 1, "score": float(margin[0])}
            continue
        if k[1] == k[0] + 1:
            s = float(margin.sum())
            if best is None or s > best["score"]:
                best = {"offset": off, "key": int(k[0]) + 1, "score": s}
    return best


def segment_group_ordering(channel: Channel, keys: GlobalKeys, video: np.ndarray, cfg: SIGMarkConfig | None = None,
                           progress: Progress | None = None, segments: list[list[int]] | None = None
                           ) -> tuple[np.ndarray, np.ndarray, dict]:
    """SGO: restore the causal VAE's frame grouping. Returns (re-grouped video [F, H, W, 3] with F = channel.frames,
    interpolated mask [F], info {segments, placements}). ``segments`` overrides the segmentation step (tests)."""
    cfg = cfg or SIGMarkConfig()
    F = channel.frames
    if segments is None:
        segs, z = segment_frames(video, cfg)
    else:
        segs, z = segments, np.zeros(0)
    per_test = cfg.video_fpr / (2 * keys.n_frames)
    out = np.zeros((F, *video.shape[1:]), np.float32)
    filled = np.zeros(F, bool)
    out[0], filled[0] = video[0], True
    placements = []
    found = []
    for i, seg in enumerate(segs):
        report(progress, i / max(1, len(segs)), f"SGO: phase search on segment {i + 1}/{len(segs)}")
        res = _phase_search(channel, keys, video, seg, cfg, per_test)
        found.append(res)
    order = sorted(range(len(segs)), key=lambda i: -(found[i]["score"] if found[i] else -np.inf))
    for i in order:
        res, seg = found[i], segs[i]
        if res is None:
            placements.append({"segment": seg, "placed": False})
            continue
        start = TEMPORAL * (res["key"] - 1) + 1 - res["offset"]
        pos = [start + j for j in range(len(seg))]
        for p, fi in zip(pos, seg):
            if 1 <= p < F and not filled[p]:
                out[p], filled[p] = video[fi], True
        placements.append({"segment": seg, "placed": True, "start": start, **res})
    if not any(p.get("placed") for p in placements):  # nothing aligned: fall back to naive re-grouping
        naive = conform_length(video, F)
        interp = np.zeros(F, bool)
        interp[len(video):] = True
        report(progress, 1.0, "SGO found no aligned segment; naive grouping")
        return naive, interp, {"segments": segs, "z_scores": z.tolist(), "placements": placements,
                               "fallback": True}
    real = filled.copy()
    idx = np.flatnonzero(filled)
    for p in range(F):
        if filled[p]:
            continue
        before = idx[idx < p]
        after = idx[idx > p]
        a = before[-1]
        if after.size:
            b = after[0]
            w = (p - a) / (b - a)
            out[p] = (1 - w) * out[a] + w * out[b]
        else:
            out[p] = out[a]
    report(progress, 1.0, "SGO done")
    return out, ~real, {"segments": segs, "z_scores": z.tolist(), "placements": placements}


def extract(channel: Channel, video: np.ndarray, cfg: SIGMarkConfig | None = None, sgo: bool = True,
            message_bits: int | None = None, progress: Progress | None = None,
            segments: list[list[int]] | None = None) -> Extraction:
    """Blind extraction from a (possibly edited) video ``[F', H, W, 3]``: SGO (optional), encode, invert, GF-PRC."""
    t0 = time.perf_counter()
    cfg = cfg or SIGMarkConfig()
    video = np.asarray(video, np.float32)
    if video.ndim != 4 or video.shape[-1] != 3:
        raise InputError(f"Expected a video [frames, height, width, 3]; got shape {tuple(video.shape)}.")
    if len(video) < 1 + TEMPORAL:
        raise InputError(f"The video has {len(video)} frames; at least {1 + TEMPORAL} are needed.")
    keys = global_keys(channel, cfg)
    info: dict = {}
    if sgo:
        regrouped, interp, info = segment_group_ordering(channel, keys, video, cfg, sub_progress(progress, 0, 0.5),
                                                         segments)
    else:
        regrouped = conform_length(video, channel.frames)
        interp = np.zeros(channel.frames, bool)
        interp[len(video):] = True
    check_frames(len(regrouped))
    z_hat = channel.recover_noise(regrouped, sub_progress(progress, 0.5, 0.95))
    ex = extract_noise(keys, z_hat, cfg, message_bits)
    ex.interpolated, ex.sgo = interp, info
    ex.seconds = time.perf_counter() - t0
    report(progress, 1.0, "extracted")
    return ex


def bit_accuracy(ex: Extraction, message: np.ndarray, n_frames: int, m: int) -> dict:
    """Message and per-latent-frame bit accuracy; ``frame_acc_real`` only counts latent frames whose 4 video frames
    are all real (no SGO interpolation / padding); frames no inverted latent claimed count as 0.5 (chance)."""
    truth = frame_blocks(message, n_frames, m)
    per = np.where(np.isnan(ex.frame_bits[:, 0]), 0.5, (ex.frame_bits == truth).mean(axis=1))
    real = np.ones(n_frames, bool)
    if ex.interpolated.size:
        for f in range(1, n_frames + 1):
            real[f - 1] = not ex.interpolated[1 + TEMPORAL * (f - 1): 1 + TEMPORAL * f].any()
    return {"message_acc": float((ex.message == np.asarray(message)).mean()), "frame_acc": float(per.mean()),
            "frame_acc_real": float(per[real].mean()) if real.any() else float("nan"),
            "per_frame": per.tolist(), "real_frames": real.tolist()}


