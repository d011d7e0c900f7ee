"""The pure entry points of the AML page: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_evaluate` ``(EvalConfig)`` -> :class:`EvalResult`: every shipped head (each masking of ``MASKINGS``,
  each seed) re-scored on the first ``n`` samples of the ``heldout`` source (other backdrops, textures and phrasings)
  or the in-distribution ``val`` split: mIoU, oIoU, prec@0.5/0.7/0.9 per head, their means, the paired gains of AML
  over each baseline with 95 % intervals over seeds, the mIoU curves recorded during training, and the training
  seconds (the time overhead of the masking passes).
- :func:`run_segment` ``(image, SegmentConfig, mask=None)`` -> :class:`SegmentResult`: one image and expression through
  each masking's head of one seed: the head's PatchMax map, the blocks its training masking would zero, and its
  predicted mask (with its IoU when a ground-truth ``mask`` is given, as for the presets).

The configs are frozen and check themselves (:class:`backend.errors.InputError`); results are small summaries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import ASSETS, CancelToken, Progress, checked, report

TRAIN_SIZE = 1600
EVAL_SIZE = 300
SEEDS = (0, 1, 2, 3, 4)
SPLITS = ("heldout", "val")
MAX_CHARS = 120
MAX_EVAL = 1000
TRAIN_COMMAND = "python -m backend.train aml"
METRICS = ("miou", "oiou", "prec@0.5", "prec@0.7", "prec@0.9")


def weights_path(masking: str, seed: int) -> Path:
    """``assets/aml_<masking>_s<seed>.safetensors``."""
    return ASSETS / f"aml_{masking}_s{int(seed)}.safetensors"


def load_head(masking: str, seed: int = 0) -> tuple[Any, dict]:
    """A shipped head (float32, eval mode) and its metadata ``{"config", "quality", "extra"}``."""
    import torch

    from ... import weights
    from .masking import MASKINGS
    from .model import HeadConfig, RefSegHead

    masking = MASKINGS.key(masking)
    tensors, meta = weights.load(weights_path(masking, seed), made_by=TRAIN_COMMAND)
    head = RefSegHead(HeadConfig(**meta.config.get("head", {})))
    head.load_state_dict({k: v.to(torch.float32) for k, v in tensors.items()})
    head.eval()
    return head, {"config": meta.config, "quality": meta.quality, "extra": meta.extra}


def _maskings(names: tuple[str, ...] | str) -> tuple[str, ...]:
    from .masking import MASKINGS

    if isinstance(names, str):
        names = tuple(n for n in names.split(",") if n.strip())
    return tuple(MASKINGS.key(n.strip()) for n in names) if names else tuple(MASKINGS)


def _seeds(seeds: tuple[int, ...]) -> tuple[int, ...]:
    seeds = tuple(int(s) for s in seeds)
    bad = [s for s in seeds if s not in SEEDS]
    if bad or not seeds:
        raise InputError(f"Seeds must be among the shipped {', '.join(map(str, SEEDS))}; got {list(seeds)}.")
    return seeds


def check_text(text: str) -> str:
    """The expression, stripped; empty or longer than MAX_CHARS characters raises InputError."""
    text = " ".join(str(text).split())
    if not text:
        raise InputError("The expression is empty: describe the object to segment, e.g. 'the red circle'.")
    if len(text) > MAX_CHARS:
        raise InputError(f"The expression has {len(text)} characters; at most {MAX_CHARS} are read (the heads were "
                         "trained on expressions of up to about 50).")
    return text


# ------------------------------------------------------------------------------------------------------ evaluate
@dataclass(frozen=True)
class EvalConfig:
    """``split``: ``heldout`` (another source) or ``val``; ``n``: its first n samples (10 to 1000); ``seeds`` of the
    shipped heads; ``maskings``: names (default: all)."""

    split: str = "heldout"
    n: int = EVAL_SIZE
    seeds: tuple[int, ...] = SEEDS
    maskings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise InputError(f"split must be one of {', '.join(SPLITS)}; got {self.split!r}.")
        if not 10 <= int(self.n) <= MAX_EVAL:
            raise InputError(f"n must be 10 to {MAX_EVAL} samples; got {self.n}.")
        object.__setattr__(self, "seeds", _seeds(self.seeds))
        object.__setattr__(self, "maskings", _maskings(self.maskings))


@dataclass
class EvalResult:
    """``rows``: one per head (masking, seed, the metrics in percent, training seconds, masked share);
    ``means`` masking -> metric -> mean over seeds; ``paired`` baseline -> metric -> {gain, low, high, n} (AML minus
    the baseline, 95 % t interval over seeds); ``curves`` masking -> {"step": [...], "val": [[per seed]],
    "heldout": [[...]]}; ``seconds`` masking -> mean training seconds; ``overhead`` masking -> mean per-seed ratio
    of its training seconds to the unmasked run's, minus 1; ``labels``, ``params``, ``eval_seconds``."""

    split: str
    n: int
    rows: list[dict]
    means: dict[str, dict[str, float]]
    paired: dict[str, dict[str, dict[str, float]]]
    curves: dict[str, dict[str, list]]
    seconds: dict[str, float]
    overhead: dict[str, float]
    labels: dict[str, str]
    params: int
    eval_seconds: float
    config: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("split", "n", "rows", "means", "paired", "curves", "seconds",
                                              "overhead", "labels", "params", "eval_seconds", "config")}


def eval_set(split: str, n: int):  # noqa: ANN201 - a FeatureSet
    from .features import build

    return build(0, int(n), split)


def run_evaluate(config: EvalConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> EvalResult:
    """Re-score the shipped heads (see the module docstring)."""
    from ...stats import paired_ci
    from .learn import evaluate
    from .masking import MASKINGS

    progress = checked(progress, token)
    t0 = time.perf_counter()
    report(progress, 0.0, f"features of {config.n} {config.split} samples (cached after the first run)")
    data = eval_set(config.split, config.n)
    rows, curves = [], {}
    total = len(config.maskings) * len(config.seeds)
    params = 0
    for i, (m, s) in enumerate((m, s) for m in config.maskings for s in config.seeds):
        report(progress, 0.2 + 0.8 * i / total, f"{MASKINGS.label(m)}, seed {s}")
        head, meta = load_head(m, s)
        params = sum(p.numel() for p in head.parameters())
        sc = evaluate(head, data)
        q = meta["quality"]
        rows.append({"masking": m, "seed": s, **{k: round(sc[k], 3) for k in METRICS},
                     "train_seconds": q.get("seconds"), "masked_share": q.get("masked_share")})
        c = curves.setdefault(m, {"step": meta["extra"].get("curves", {}).get("step", []), "val": [],
                                  "heldout": []})
        for name in ("val", "heldout"):
            c[name].append(meta["extra"].get("curves", {}).get(f"{name}_miou", []))
    means = {m: {k: float(np.mean([r[k] for r in rows if r["masking"] == m])) for k in METRICS}
             for m in config.maskings}
    ours = [m for m in config.maskings if MASKINGS.kind(m) == "ours"]
    paired: dict[str, dict[str, dict[str, float]]] = {}
    seconds = {m: float(np.mean([r["train_seconds"] or 0.0 for r in rows if r["masking"] == m]))
               for m in config.maskings}
    overhead: dict[str, float] = {}
    plain = [m for m in config.maskings if not getattr(MASKINGS[m], "needs_patchmax", True)]
    if ours and len(config.seeds) >= 2:
        o = ours[0]
        for b in config.maskings:
            if b == o:
                continue
            paired[b] = {}
            for k in METRICS:
                a = [r[k] for r in rows if r["masking"] == o]
                bb = [r[k] for r in rows if r["masking"] == b]
                ci = paired_ci(a, bb)
                paired[b][k] = {"gain": round(float(ci.mean), 3), "low": round(float(ci.low), 3),
                                "high": round(float(ci.high), 3), "n": int(ci.n)}
    if plain:
        base = {r["seed"]: r["train_seconds"] for r in rows if r["masking"] == plain[0]}
        for m in config.maskings:
            ratios = [r["train_seconds"] / base[r["seed"]] - 1 for r in rows
                      if r["masking"] == m and r["train_seconds"] and base.get(r["seed"])]
            if ratios:
                overhead[m] = float(np.mean(ratios))
    report(progress, 1.0, "done")
    return EvalResult(config.split, int(config.n), rows, means, paired, curves, seconds, overhead,
                      {m: MASKINGS.label(m) for m in config.maskings}, int(params),
                      round(time.perf_counter() - t0, 2),
                      {"split": config.split, "n": int(config.n), "seeds": list(config.seeds),
                       "maskings": list(config.maskings)})


# ------------------------------------------------------------------------------------------------------- segment
@dataclass(frozen=True)
class SegmentConfig:
    """``text``: the referring expression (1 to MAX_CHARS characters); ``seed``: which shipped seed's heads;
    ``tau`` and ``rho`` of the masking shown (the paper's 0.4 and 0.25); ``draw``: the seed of the rho draw;
    ``maskings``: names (default: all)."""

    text: str
    seed: int = 0
    tau: float = 0.4
    rho: float = 0.25
    draw: int = 0
    maskings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", check_text(self.text))
        _seeds((self.seed,))
        if not 0.0 < float(self.tau) < 1.0:
            raise InputError(f"tau must lie strictly between 0 and 1; got {self.tau}.")
        if not 0.0 < float(self.rho) <= 1.0:
            raise InputError(f"rho must lie in (0, 1]; got {self.rho}.")
        object.__setattr__(self, "maskings", _maskings(self.maskings))


@dataclass
class SegmentResult:
    """``image`` uint8 ``[112, 112, 3]`` (what the heads saw); ``panels``: per masking {masking, label, patchmax
    ``[8, 8]`` floats, blocks ``[8, 8]`` bools, mask bool ``[112, 112]``, area (pixels), iou (percent, or None)};
    ``gt`` bool ``[112, 112]`` or None; ``tokens``: the expression's word pieces; ``seconds``."""

    image: np.ndarray
    text: str
    tokens: list[str]
    panels: list[dict]
    gt: np.ndarray | None
    seconds: float
    config: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """JSON-able: per masking its IoU, area, bounding box, masked blocks and the mask as run lengths."""
        out = []
        for p in self.panels:
            ys, xs = np.nonzero(p["mask"])
            bbox = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else None
            out.append({"masking": p["masking"], "label": p["label"], "iou": p["iou"], "area": p["area"],
                        "bbox": bbox, "masked_blocks": int(np.sum(p["blocks"])),
                        "patchmax_mean": round(float(np.mean(p["patchmax"])), 4), "mask_rle": rle(p["mask"])})
        return {"text": self.text, "tokens": self.tokens, "size": int(self.image.shape[0]),
                "gt_area": None if self.gt is None else int(self.gt.sum()), "panels": out, "config": self.config}


def rle(mask: np.ndarray) -> list[int]:
    """Run lengths of a bool mask in row-major order, starting with a run of False (possibly 0)."""
    flat = np.asarray(mask, bool).ravel()
    change = np.flatnonzero(np.diff(flat.astype(np.int8))) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    runs = np.diff(bounds).tolist()
    return ([0] + runs) if flat.size and flat[0] else runs


def to_square(image: Any) -> np.ndarray:
    """A PIL image or uint8 array -> uint8 ``[112, 112, 3]`` (squashed, bicubic, as the encoder preprocesses)."""
    from PIL import Image

    from .data import SIZE

    pil = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, np.uint8))
    return np.asarray(pil.convert("RGB").resize((SIZE, SIZE), Image.Resampling.BICUBIC), np.uint8)


def run_segment(image: Any, config: SegmentConfig, mask: np.ndarray | None = None,
                progress: Progress | None = None, token: CancelToken | None = None,
                encoders: tuple[Any, Any] | None = None) -> SegmentResult:
    """Segment ``config.text`` in ``image`` with each masking's head (see the module docstring). ``encoders``:
    ``(vision, text)`` already loaded (the page's cached ones), else the embedded defaults are loaded."""
    import torch

    from .features import encode_images, encode_texts
    from .masking import MASKINGS, MaskConfig, patchmax, projection
    from .model import iou_parts, normalise_images, predict_masks

    progress = checked(progress, token)
    t0 = time.perf_counter()
    img = to_square(image)
    if mask is not None:
        mask = np.asarray(mask, bool)
        if mask.shape != img.shape[:2]:
            raise InputError(f"The ground-truth mask must be {img.shape[0]} x {img.shape[1]}; got {mask.shape}.")
    vision, text_enc = encoders or (None, None)
    if text_enc is None:
        from ...models.text import load_text_encoder

        text_enc = load_text_encoder()
    report(progress, 0.1, "DINOv2 patch features and MiniLM token features")
    patches = encode_images(img[None], vision)
    tokens, tmask = encode_texts([config.text], text_enc)
    pieces = text_enc.tokenizer.convert_ids_to_tokens(text_enc.tokenizer(config.text)["input_ids"])
    pixels = normalise_images(torch.from_numpy(np.array(img[None])))
    mcfg = MaskConfig(tau=config.tau, rho=config.rho)
    panels = []
    for i, m in enumerate(config.maskings):
        report(progress, 0.3 + 0.7 * i / len(config.maskings), f"{MASKINGS.label(m)}")
        head, meta = load_head(m, config.seed)
        mc = MaskConfig(**{**meta["config"].get("mask", {}), "tau": config.tau, "rho": config.rho})
        with torch.no_grad():
            vis, txt = head.features(patches, tokens)
            pm = patchmax(vis, txt, tmask, mc, projection(vis.shape[-1], mc.proj_dim, mc.proj_seed))
            blocks = MASKINGS[m](pm, mcfg, torch.Generator().manual_seed(int(config.draw)))
            pred = predict_masks(head(patches, tokens, tmask, pixels))
        iou = None
        if mask is not None:
            a, b = iou_parts(pred, torch.from_numpy(mask[None]))
            iou = round(100 * float(a[0] / max(float(b[0]), 1.0)), 3)
        panels.append({"masking": m, "label": MASKINGS.label(m), "patchmax": pm[0].view(8, 8).numpy().round(4),
                       "blocks": blocks[0].numpy(), "mask": pred[0].numpy(), "area": int(pred[0].sum()),
                       "iou": iou})
    report(progress, 1.0, "done")
    return SegmentResult(img, config.text, pieces, panels, mask, round(time.perf_counter() - t0, 3),
                         {"text": config.text, "seed": config.seed, "tau": config.tau, "rho": config.rho,
                          "draw": config.draw, "maskings": list(config.maskings)})


def preset_sample(name: str) -> tuple[np.ndarray, str, np.ndarray]:
    """A named preset of :data:`inputs.PRESETS`: ``(image uint8 [112, 112, 3], expression, mask bool)``."""
    from ...registry import choose
    from .data import make_sample
    from .inputs import PRESETS

    spec = PRESETS[choose(name, list(PRESETS), "preset")]
    s = make_sample(spec["index"], spec["source"])
    return s.image, s.text, s.mask
