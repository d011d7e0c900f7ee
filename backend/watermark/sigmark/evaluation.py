"""SIGMark's methods table (SIGMark, its ablations and the two baselines), extraction costs, and the evaluation of
every method on the same seeds under an attack chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from backend.registry import Registry
from backend.runtime import Progress, report, sub_progress
from backend.watermark.sigmark.baselines import VideoMarkStore, VideoShieldStore
from backend.watermark.sigmark.channel import Channel
from backend.watermark.sigmark.gfprc import SIGMarkConfig, conform_length, frame_blocks, generate
from backend.watermark.sigmark.sgo import bit_accuracy, extract


# ------------------------------------------------------------------------------------------- method registry
@dataclass
class MethodResult:
    """Uniform result of one watermark method on one (attacked) video."""

    message: np.ndarray
    frame_bits: np.ndarray
    seconds: float
    detected: bool | None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    name: str
    blind: bool
    description: str


METHODS: Registry[Method] = Registry("SIGMark method")
METHODS.add("sigmark", Method("sigmark", True, "GF-PRC + SGO (blind)"), label="SIGMark (GF-PRC + SGO)", kind="ours",
            color="#1f77b4")
METHODS.add("sigmark_nosgo", Method("sigmark_nosgo", True, "GF-PRC, naive re-grouping (ablation, blind)"),
            label="SIGMark without SGO", kind="ablation", color="#ff7f0e")
METHODS.add("sigmark_oracle_cuts", Method("sigmark_oracle_cuts", True, "diagnostic, not deployable: SGO given the true "
                                          "cut positions (isolates the phase search and placement from the "
                                          "segmentation)"),
            label="SGO given the true cuts (diagnostic)", kind="reference", color="#9467bd")
METHODS.add("videoshield", Method("videoshield", False, "Gaussian-Shading templates per video (non-blind)"),
            label="VideoShield-style templates (non-blind)", kind="baseline", color="#2ca02c")
METHODS.add("videomark", Method("videomark", False, "one PRC key, per-frame messages matched to the nearest stored "
                                "message by edit distance (non-blind, no SGO)"),
            label="VideoMark-style nearest stored message (non-blind)", kind="baseline", color="#8c564b")
get_method = METHODS.get


def extraction_cost(method: str, n_stored: int, n_frames: int, n: int, m: int = 32) -> int:
    """Operation count of one extraction: SIGMark Lf^2 Detect scores (each r ~ n products) + Lf decodes, whatever
    N; VideoShield N Lf^2 n bit comparisons; VideoMark Lf Detects + Lf decodes, then (32 bits per latent frame)
    N Lf edit distances of m x m cells per latent frame."""
    get_method(method)
    if method.startswith("sigmark"):
        return n_frames * n_frames * n + n_frames * n
    if method == "videomark":
        return 2 * n_frames * n + n_frames * n_stored * n_frames * m * m
    return n_stored * n_frames * n_frames * n


def cut_segments(frame_map: np.ndarray) -> list[list[int]]:
    """True segments of an attacked video from its frame map (``frame_map[i]`` = source frame of output frame i, -1
    for inserted frames): frames 1.. split wherever the source index does not advance by one."""
    fm = np.asarray(frame_map)
    segs, cur = [], [1]
    for j in range(2, len(fm)):
        if fm[j] == -1 or fm[j] != fm[j - 1] + 1:
            segs.append(cur)
            cur = []
        cur.append(j)
    segs.append(cur)
    return segs


def evaluate_attack(channel: Channel, seed: int, message: np.ndarray, attack: str | None,
                    methods: tuple[str, ...] = ("sigmark", "sigmark_nosgo", "videoshield", "videomark"),
                    store: VideoShieldStore | None = None, cfg: SIGMarkConfig | None = None,
                    attack_seed: int = 0, progress: Progress | None = None,
                    vm_store: VideoMarkStore | None = None) -> dict[str, dict]:
    """Generate the watermarked video(s) for ``seed``, apply ``attack``, extract with each method (every method gets
    its own watermarked video from the same seed and the same attack seed; the baselines' records join ``store`` /
    ``vm_store``, which may hold decoys).

    Returns {method: bit_accuracy dict + seconds + detected}."""
    from backend.watermark.attacks import apply_video_chain

    cfg = cfg or SIGMarkConfig()
    lf = channel.latent_shape[1] - 1
    m = cfg.bits_per_frame
    out: dict[str, dict] = {}
    need_sig = [x for x in methods if x.startswith("sigmark")]
    steps = len(methods) + 1
    if need_sig:
        gen = generate(channel, seed, message, cfg, sub_progress(progress, 0, 1 / steps))
        attacked, amap = (apply_video_chain(gen.video, attack, seed=attack_seed) if attack
                          else (gen.video, np.arange(len(gen.video))))
        for i, name in enumerate(need_sig):
            ex = extract(channel, attacked, cfg, sgo=(name != "sigmark_nosgo"), message_bits=len(message),
                         progress=sub_progress(progress, (1 + i) / steps, (2 + i) / steps),
                         segments=cut_segments(amap) if name == "sigmark_oracle_cuts" else None)
            acc = bit_accuracy(ex, message, lf, m)
            out[name] = {**acc, "seconds": ex.seconds, "detected": ex.detected,
                         "keys": ex.key_idx.tolist()}
    if "videoshield" in methods:
        store = store or VideoShieldStore(channel, m)
        idx = store.register(np.asarray(message, np.uint8)[:m])
        video = channel.generate(store.initial_noise(idx, seed))
        attacked, _ = apply_video_chain(video, attack, seed=attack_seed) if attack else (video, None)
        z_hat = channel.recover_noise(conform_length(attacked, channel.frames))
        res = store.extract_noise(z_hat)
        truth = np.asarray(message, np.uint8)[:m]
        per = np.where(np.isnan(res["frame_bits"][:, 0]), 0.5, (res["frame_bits"] == truth[None]).mean(axis=1))
        out["videoshield"] = {"message_acc": float((res["message"] == truth).mean()), "frame_acc": float(per.mean()),
                              "frame_acc_real": float("nan"), "per_frame": per.tolist(),
                              "seconds": res["seconds"], "detected": None, "identified": res["index"] == idx}
    if "videomark" in methods:
        vm_store = vm_store or VideoMarkStore(channel, m, bp_iters=cfg.bp_iters, video_fpr=cfg.video_fpr)
        idx = vm_store.register(np.asarray(message, np.uint8))
        video = channel.generate(vm_store.initial_noise(idx, seed))
        attacked, _ = apply_video_chain(video, attack, seed=attack_seed) if attack else (video, None)
        z_hat = channel.recover_noise(conform_length(attacked, channel.frames))
        res = vm_store.extract_noise(z_hat, len(message), cfg.posterior_variance)
        truth = frame_blocks(message, lf, m)
        per = (res["frame_bits"] == truth).mean(axis=1)
        out["videomark"] = {"message_acc": float((res["message"] == np.asarray(message)).mean()),
                            "frame_acc": float(per.mean()), "frame_acc_real": float("nan"), "per_frame": per.tolist(),
                            "seconds": res["seconds"], "detected": res["detected"],
                            "identified": all(o[0] == idx for o in res["owners"]),
                            "edit_distances": res["edit_distances"]}
    report(progress, 1.0, "done")
    return out


def aggregate(rows: list[dict[str, dict]]) -> dict[str, dict[str, float]]:
    """Mean of each metric over videos, per method."""
    out: dict[str, dict[str, float]] = {}
    for name in rows[0]:
        out[name] = {}
        for key in ("message_acc", "frame_acc", "frame_acc_real"):
            vals = [r[name][key] for r in rows if not math.isnan(r[name][key])]
            out[name][key] = float(np.mean(vals)) if vals else float("nan")
        if rows[0][name].get("detected") is not None:
            out[name]["detect_rate"] = float(np.mean([r[name]["detected"] for r in rows]))
    return out


