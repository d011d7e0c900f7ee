"""SIGMark's methods table (SIGMark, its ablation, a diagnostic and the two baselines), extraction costs, and the
evaluation of every method on the same seeds under an attack chain.

Every entry of :data:`METHODS` is the method itself: a function ``(trial: Trial, progress=None) -> dict`` that
extracts the message of ``trial``'s watermarked video after its attack and scores it (bit accuracies, seconds,
detection); ``fn.blind`` says whether it needs no per-video record, ``fn.cost(n_stored, n_frames, n, m)`` counts the
operations of one extraction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from backend.registry import Registry
from backend.runtime import Progress, report, sub_progress
from backend.watermark.sigmark.baselines import VideoMarkStore, VideoShieldStore
from backend.watermark.sigmark.channel import Channel
from backend.watermark.sigmark.gfprc import (
    SIGMarkConfig,
    bits_to_hex,
    conform_length,
    frame_blocks,
    generate,
)
from backend.watermark.sigmark.sgo import bit_accuracy, extract


@dataclass
class MethodResult:
    """Uniform result of one watermark method on one (attacked) video."""

    message: np.ndarray
    frame_bits: np.ndarray
    seconds: float
    detected: bool | None
    extra: dict = field(default_factory=dict)


@dataclass
class Trial:
    """One test of every method: the watermarked video(s) of ``seed`` carrying ``message`` (uint8 bits), attacked by
    ``attack`` (a chain of :mod:`backend.watermark.attacks`, None: none) with ``attack_seed``. The baselines' records
    join ``store`` / ``vm_store`` (fresh ones when None; they may hold decoys). The SIGMark variants share one
    generated and attacked video (:meth:`sigmark_video`)."""

    channel: Channel
    seed: int
    message: np.ndarray
    attack: str | None
    attack_seed: int = 0
    cfg: SIGMarkConfig = field(default_factory=SIGMarkConfig)
    store: VideoShieldStore | None = None
    vm_store: VideoMarkStore | None = None
    _sigmark: dict = field(default_factory=dict, repr=False)

    @property
    def latent_frames(self) -> int:
        return self.channel.latent_shape[1] - 1

    def attacked(self, video: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``video`` after the trial's attack, and its frame map (source frame of each output frame, -1: inserted)."""
        from backend.watermark.attacks import apply_video_chain

        if not self.attack:
            return video, np.arange(len(video))
        return apply_video_chain(video, self.attack, seed=self.attack_seed)

    def sigmark_video(self, progress: Progress | None = None) -> dict:
        """The GF-PRC-watermarked video of the trial (generated once): ``video``, ``attacked``, ``frame_map``,
        ``seconds`` (generation)."""
        if not self._sigmark:
            gen = generate(self.channel, self.seed, self.message, self.cfg, progress)
            attacked, fmap = self.attacked(gen.video)
            self._sigmark.update(video=gen.video, attacked=attacked, frame_map=fmap, seconds=gen.seconds)
        return self._sigmark


Method = Callable[..., dict]
METHODS: Registry[Method] = Registry("SIGMark method")
get_method = METHODS.get


def _method(name: str, *, blind: bool, cost: Callable[[int, int, int, int], int], label: str, kind: str,
            color: str, about: str) -> Callable[[Method], Method]:
    """Register the decorated function under ``name`` with its blindness and its extraction cost."""

    def deco(fn: Method) -> Method:
        fn.blind = blind  # type: ignore[attr-defined]
        fn.cost = cost  # type: ignore[attr-defined]
        return METHODS.add(name, fn, label=label, kind=kind, color=color, about=about)

    return deco


def _cost_sigmark(n_stored: int, n_frames: int, n: int, m: int) -> int:  # noqa: ARG001 - blind: N does not count
    return n_frames * n_frames * n + n_frames * n


def _cost_videoshield(n_stored: int, n_frames: int, n: int, m: int) -> int:  # noqa: ARG001
    return n_stored * n_frames * n_frames * n


def _cost_videomark(n_stored: int, n_frames: int, n: int, m: int) -> int:
    return 2 * n_frames * n + n_frames * n_stored * n_frames * m * m


def _sigmark_run(trial: Trial, sgo: bool, oracle_cuts: bool, progress: Progress | None) -> dict:
    """Extract the trial's attacked GF-PRC video blindly (with SGO, without, or SGO given the true cuts)."""
    cfg = trial.cfg
    wm = trial.sigmark_video(sub_progress(progress, 0, 0.5))
    ex = extract(trial.channel, wm["attacked"], cfg, sgo=sgo, message_bits=len(trial.message),
                 progress=sub_progress(progress, 0.5, 1.0),
                 segments=cut_segments(wm["frame_map"]) if oracle_cuts else None)
    acc = bit_accuracy(ex, trial.message, trial.latent_frames, cfg.bits_per_frame)
    return {**acc, "seconds": ex.seconds, "detected": ex.detected, "keys": ex.key_idx.tolist(),
            "message_hex": bits_to_hex(ex.message), "scores": ex.scores.tolist(),
            "thresholds": ex.thresholds.tolist(), "interpolated": ex.interpolated.tolist(),
            "segments": [[s[0], s[-1]] for s in ex.sgo.get("segments", [])]}


@_method("sigmark", blind=True, cost=_cost_sigmark, label="SIGMark (GF-PRC + SGO)", kind="ours", color="#1f77b4",
         about="GF-PRC + SGO (blind)")
def run_sigmark(trial: Trial, progress: Progress | None = None) -> dict:
    """SIGMark: blind GF-PRC extraction after SGO's re-grouping."""
    return _sigmark_run(trial, True, False, progress)


@_method("sigmark_nosgo", blind=True, cost=_cost_sigmark, label="SIGMark without SGO", kind="ablation",
         color="#ff7f0e", about="GF-PRC, naive re-grouping (ablation, blind)")
def run_sigmark_nosgo(trial: Trial, progress: Progress | None = None) -> dict:
    """Ablation: blind GF-PRC extraction after naive re-grouping (trim or pad to the model's frame count)."""
    return _sigmark_run(trial, False, False, progress)


@_method("sigmark_oracle_cuts", blind=True, cost=_cost_sigmark, label="SGO given the true cuts (diagnostic)",
         kind="reference", color="#9467bd", about="diagnostic, not deployable: SGO given the true cut positions "
         "(isolates the phase search and placement from the segmentation)")
def run_sigmark_oracle_cuts(trial: Trial, progress: Progress | None = None) -> dict:
    """Diagnostic: SGO handed the true cut positions of the attack (from its frame map)."""
    return _sigmark_run(trial, True, True, progress)


@_method("videoshield", blind=False, cost=_cost_videoshield, label="VideoShield-style templates (non-blind)",
         kind="baseline", color="#2ca02c", about="Gaussian-Shading templates per video (non-blind)")
def run_videoshield(trial: Trial, progress: Progress | None = None) -> dict:
    """VideoShield-style: the first m bits in a per-video Gaussian-Shading template, matched against every record."""
    channel, m = trial.channel, trial.cfg.bits_per_frame
    store = trial.store or VideoShieldStore(channel, m)
    truth = np.asarray(trial.message, np.uint8)[:m]
    idx = store.register(truth)
    video = channel.generate(store.initial_noise(idx, trial.seed), sub_progress(progress, 0, 0.5))
    attacked, _ = trial.attacked(video)
    z_hat = channel.recover_noise(conform_length(attacked, channel.frames))
    res = store.extract_noise(z_hat)
    per = np.where(np.isnan(res["frame_bits"][:, 0]), 0.5, (res["frame_bits"] == truth[None]).mean(axis=1))
    report(progress, 1.0, "videoshield done")
    return {"message_acc": float((res["message"] == truth).mean()), "frame_acc": float(per.mean()),
            "frame_acc_real": float("nan"), "per_frame": per.tolist(), "seconds": res["seconds"], "detected": None,
            "identified": res["index"] == idx}


@_method("videomark", blind=False, cost=_cost_videomark,
         label="VideoMark-style nearest stored message (non-blind)", kind="baseline", color="#8c564b",
         about="one PRC key, per-frame messages matched to the nearest stored message by edit distance (non-blind, "
         "no SGO)")
def run_videomark(trial: Trial, progress: Progress | None = None) -> dict:
    """VideoMark-style: one PRC key for all videos, each decoded latent frame replaced by the nearest stored
    per-frame message (edit distance)."""
    channel, cfg = trial.channel, trial.cfg
    m = cfg.bits_per_frame
    vm_store = trial.vm_store or VideoMarkStore(channel, m, bp_iters=cfg.bp_iters, video_fpr=cfg.video_fpr)
    message = np.asarray(trial.message, np.uint8)
    idx = vm_store.register(message)
    video = channel.generate(vm_store.initial_noise(idx, trial.seed), sub_progress(progress, 0, 0.5))
    attacked, _ = trial.attacked(video)
    z_hat = channel.recover_noise(conform_length(attacked, channel.frames))
    res = vm_store.extract_noise(z_hat, len(message), cfg.posterior_variance)
    per = (res["frame_bits"] == frame_blocks(message, trial.latent_frames, m)).mean(axis=1)
    report(progress, 1.0, "videomark done")
    return {"message_acc": float((res["message"] == message).mean()), "frame_acc": float(per.mean()),
            "frame_acc_real": float("nan"), "per_frame": per.tolist(), "seconds": res["seconds"],
            "detected": res["detected"], "identified": all(o[0] == idx for o in res["owners"]),
            "edit_distances": res["edit_distances"]}


# the methods ``evaluate`` compares: every entry but the diagnostic (kind ``reference``), in registry order
DEFAULT_METHODS: tuple[str, ...] = tuple(n for n in METHODS.names() if METHODS.kind(n) != "reference")


def extraction_cost(method: str, n_stored: int, n_frames: int, n: int, m: int = 32) -> int:
    """Operation count of one extraction: SIGMark Lf^2 Detect scores (each r ~ n products) + Lf decodes, whatever
    N; VideoShield N Lf^2 n bit comparisons; VideoMark Lf Detects + Lf decodes, then (32 bits per latent frame)
    N Lf edit distances of m x m cells per latent frame."""
    return get_method(method).cost(n_stored, n_frames, n, m)


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
                    methods: tuple[str, ...] = DEFAULT_METHODS,
                    store: VideoShieldStore | None = None, cfg: SIGMarkConfig | None = None,
                    attack_seed: int = 0, progress: Progress | None = None,
                    vm_store: VideoMarkStore | None = None) -> dict[str, dict]:
    """Generate the watermarked video(s) for ``seed``, apply ``attack``, extract with each method of ``methods``
    (every method gets its own watermarked video from the same seed and the same attack seed; the baselines' records
    join ``store`` / ``vm_store``, which may hold decoys).

    Returns {method: bit_accuracy dict + seconds + detected}."""
    trial = Trial(channel, seed, message, attack, attack_seed, cfg or SIGMarkConfig(), store, vm_store)
    return run_methods(trial, methods, progress)


def run_methods(trial: Trial, methods: tuple[str, ...], progress: Progress | None = None) -> dict[str, dict]:
    """{method: its result on ``trial``} for each name of ``methods`` (through :data:`METHODS`)."""
    names = [METHODS.key(x) for x in methods]
    out = {name: get_method(name)(trial, sub_progress(progress, i / len(names), (i + 1) / len(names)))
           for i, name in enumerate(names)}
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


