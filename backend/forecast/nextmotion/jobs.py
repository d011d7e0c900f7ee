"""The pure entry points of the motion-forecasting page: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_sample` ``(image or None, SampleConfig)`` -> :class:`SampleResult`: K futures of one image from every
  chosen method, with best-of-K MSE and coverage per method where the scene's truth is known (a preset scene), and
  the paper's whole-grid LRTL (rank 5).
- :func:`run_eval` ``(EvalConfig)`` -> :class:`EvalResult`: every method on held-out ambiguous scenes with one
  training seed's models: per-scene best-of-K MSE, coverage and LRTL, and each method's Frechet motion distance.

Models load through :func:`load_models` (one training seed's shipped files; cached per seed).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, report
from ...weights import ASSETS

BANK_FILE = ASSETS / "nextmotion_bank.safetensors"
SEEDS = (0, 1, 2)
MAX_K = 32
STRIDES = (8, 16)
MAX_EVAL_SCENES = 200
TRAIN_COMMAND = "python -m backend.train nextmotion"


def gen_file(seed: int) -> Path:
    return ASSETS / f"nextmotion_gen_s{seed}.safetensors"


def reg_file(seed: int) -> Path:
    return ASSETS / f"nextmotion_reg_s{seed}.safetensors"


def _check_methods(methods: tuple[str, ...] | None) -> tuple[str, ...]:
    from .methods import METHODS

    if methods is None:
        return tuple(METHODS.names())
    if isinstance(methods, str):
        methods = tuple(m for m in methods.split(",") if m.strip())
    if not methods:
        raise InputError("Choose at least one method.")
    return tuple(METHODS.key(m.strip()) for m in methods)


def _check_common(k: int, model_seed: int) -> None:
    if not 1 <= int(k) <= MAX_K:
        raise InputError(f"K (the number of sampled futures) must be 1-{MAX_K}; got {k}.")
    if int(model_seed) not in SEEDS:
        raise InputError(f"The training seed must be one of {list(SEEDS)} (the shipped models); got {model_seed}.")


@dataclass(frozen=True)
class SampleConfig:
    """K futures of one image: a preset scene (``scene_seed`` and ``kind``, with its truth) when no image is given;
    ``stride`` 8 shows the models' 14 x 14 grid, 16 every other point; noise seed ``seed``; models of training seed
    ``model_seed``; ``methods`` None = every registered method."""

    scene_seed: int = 200_000
    kind: str = "peak"
    k: int = 8
    stride: int = 8
    seed: int = 0
    model_seed: int = 0
    methods: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        from .world import KINDS

        object.__setattr__(self, "kind", choose(self.kind, KINDS, "scene kind"))
        if int(self.stride) not in STRIDES:
            raise InputError(f"The grid stride must be 8 (the models' 14 x 14 grid) or 16 (every other point); "
                             f"got {self.stride}.")
        if not 0 <= int(self.scene_seed) < 2**31:
            raise InputError(f"The scene seed must be 0 to 2^31 - 1; got {self.scene_seed}.")
        _check_common(self.k, self.model_seed)
        object.__setattr__(self, "methods", _check_methods(self.methods))


@dataclass
class SampleResult:
    """``image`` uint8 ``[112, 112, 3]``; ``samples[name]`` float32 ``[K, g, g, T, 2]`` (pixels, at the stride);
    ``points`` ``[g, g, 2]`` the grid's pixel positions; ``truth`` the realised future (None for an upload),
    ``outcomes`` all possible futures of the preset; ``rows``: per method its label, best-of-K MSE and coverage
    (preset scenes), LRTL (whole grid, rank 5, mean over samples), seconds and parameters."""

    image: np.ndarray
    samples: dict[str, np.ndarray]
    points: np.ndarray
    truth: np.ndarray | None
    outcomes: np.ndarray | None
    rows: list[dict[str, Any]]
    source: str
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """JSON-able: the rows, and each method's K mean tracks of its moving points (``[K, T, 2]``, pixels)."""
        tracks = {}
        for name, s in self.samples.items():
            mag = np.abs(s).sum((-1, -2))  # [K, g, g]
            moving = mag > 1.0
            tr = [(s[j][moving[j]].mean(0) if moving[j].any() else np.zeros(s.shape[-2:])) for j in range(len(s))]
            tracks[name] = np.round(np.stack(tr), 2).tolist()
        return {"source": self.source, "rows": self.rows, "mean_tracks": tracks,
                "notes": self.notes}


@functools.lru_cache(maxsize=4)
def load_models(model_seed: int = 0) -> Any:
    """The shipped networks of one training seed (float32) and the retrieval bank."""

    from ... import weights
    from .methods import Models
    from .model import FlowNet, NetConfig, Regressor, TrajVAE

    tensors, meta = weights.load(gen_file(model_seed), made_by=TRAIN_COMMAND)
    cfg = NetConfig(**meta.config)
    vae, flow = TrajVAE(cfg), FlowNet(cfg)
    vae.load_state_dict({k[4:]: v.float() for k, v in tensors.items() if k.startswith("vae.")})
    flow.load_state_dict({k[5:]: v.float() for k, v in tensors.items() if k.startswith("flow.")})
    rt, _ = weights.load(reg_file(model_seed), made_by=TRAIN_COMMAND)
    reg = Regressor(cfg)
    reg.load_state_dict({k: v.float() for k, v in rt.items() if k != "sigma"})
    bank, _ = weights.load(BANK_FILE, made_by=TRAIN_COMMAND)
    for m in (vae, flow, reg):
        m.eval()
    return Models(seed=model_seed, cfg=cfg, vae=vae, flow=flow, zscale=tensors["zscale"].float(), reg=reg,
                  sigma=rt["sigma"].float(), bank_tokens=bank["mean_tokens"].float(),
                  bank_seeds=bank["seeds"].numpy())


@functools.lru_cache(maxsize=1)
def _encoder() -> Any:
    from ...models.vision import load_vision_encoder

    return load_vision_encoder(None)


def image_tokens(images: list[np.ndarray]) -> Any:
    """uint8 images -> DINOv2 patch tokens ``[B, 64, 384]`` at 112 px."""
    from .data import encode_images

    return encode_images(_encoder(), images)


def _as_image(image: Any) -> np.ndarray:
    from PIL import Image

    if isinstance(image, np.ndarray):
        image = Image.fromarray(image.astype(np.uint8))
    return np.asarray(image.convert("RGB").resize((112, 112), Image.Resampling.BICUBIC), dtype=np.uint8)


def run_sample(image: Any, config: SampleConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> SampleResult:
    """K futures of ``image`` (PIL or uint8 array; None = the preset scene of ``config``) from every chosen method."""
    from .methods import METHODS
    from .metrics import best_of_k, coverage, grid_lrtl
    from .world import grid_points, make_scene

    progress = checked(progress, token)
    scene = None
    notes: list[str] = []
    if image is None:
        scene = make_scene(int(config.scene_seed), config.kind)
        img = scene.image
        source = f"{config.kind} scene {config.scene_seed}"
    else:
        img = _as_image(image)
        source = "uploaded image"
        notes.append("The models learnt from simulated scenes only: an image unlike them gives motion unlike "
                     "anything real.")
    report(progress, 0.1, "encoding the image (DINOv2)")
    tokens = image_tokens([img])
    models = load_models(int(config.model_seed))
    step = config.stride // 8
    samples: dict[str, np.ndarray] = {}
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(config.methods):
        report(progress, 0.2 + 0.7 * i / len(config.methods), f"sampling {METHODS.label(name)}")
        t0 = time.perf_counter()
        full = METHODS.get(name)(models, tokens, int(config.k), int(config.seed))[0]
        secs = time.perf_counter() - t0
        samples[name] = full[:, ::step, ::step]
        row: dict[str, Any] = {"method": name, "label": METHODS.label(name), "seconds": round(secs, 4),
                               "parameters": models.parameters(METHODS.get(name))}
        if scene is not None:
            row["best_of_k_mse"] = round(best_of_k(full, scene.future), 3)
            row["coverage"] = round(coverage(full, scene.futures), 3) if scene.ambiguous else None
        row["lrtl"] = round(float(np.mean([grid_lrtl(s) for s in full])), 3)
        rows.append(row)
    report(progress, 1.0, "done")
    pts = grid_points(8)[::step, ::step]
    truth = scene.future[::step, ::step] if scene is not None else None
    outcomes = scene.futures[:, ::step, ::step] if scene is not None else None
    if scene is not None:
        rows.append({"method": "truth", "label": "Ground truth", "seconds": 0.0, "parameters": 0,
                     "best_of_k_mse": 0.0, "coverage": 1.0 if scene.ambiguous else None,
                     "lrtl": round(grid_lrtl(scene.future), 6)})
    return SampleResult(image=img, samples=samples, points=pts, truth=truth, outcomes=outcomes, rows=rows,
                        source=source, notes=notes)


@dataclass(frozen=True)
class EvalConfig:
    """Every method on ``scenes`` held-out ambiguous scenes (peak and corner alternating, seeds from ``start``)
    with the models of training seed ``model_seed``, ``k`` samples each from noise seed ``seed``; ``methods`` None =
    every registered method."""

    scenes: int = 40
    start: int = 200_000
    k: int = 8
    seed: int = 0
    model_seed: int = 0
    methods: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not 2 <= int(self.scenes) <= MAX_EVAL_SCENES:
            raise InputError(f"The number of scenes must be 2-{MAX_EVAL_SCENES}; got {self.scenes}.")
        _check_common(self.k, self.model_seed)
        object.__setattr__(self, "methods", _check_methods(self.methods))


@dataclass
class EvalResult:
    """Per method: per-scene ``best_of_k`` (px^2), ``coverage``, ``lrtl`` (whole grid, rank 5, mean over samples);
    ``frechet`` (motion features of all samples vs all possible outcomes); ``truth_lrtl`` per scene."""

    best_of_k: dict[str, list[float]]
    coverage: dict[str, list[float]]
    lrtl: dict[str, list[float]]
    frechet: dict[str, float]
    truth_lrtl: list[float]
    seconds: dict[str, float]


def run_eval(config: EvalConfig, progress: Progress | None = None, token: CancelToken | None = None) -> EvalResult:
    from .data import ambiguous_test, cached_features
    from .methods import METHODS
    from .metrics import best_of_k, coverage, frechet, grid_lrtl, motion_features

    progress = checked(progress, token)
    scenes = ambiguous_test(int(config.scenes), int(config.start))
    report(progress, 0.05, "encoding the scenes (DINOv2)")
    tokens = cached_features("ambiguous", scenes)
    models = load_models(int(config.model_seed))
    outcomes = np.concatenate([s.futures for s in scenes])
    bok: dict[str, list[float]] = {}
    cov: dict[str, list[float]] = {}
    lr: dict[str, list[float]] = {}
    fd: dict[str, float] = {}
    secs: dict[str, float] = {}
    for i, name in enumerate(config.methods):
        report(progress, 0.1 + 0.9 * i / len(config.methods), f"evaluating {METHODS.label(name)}")
        t0 = time.perf_counter()
        samp = METHODS.get(name)(models, tokens, int(config.k), int(config.seed))
        secs[name] = round(time.perf_counter() - t0, 3)
        bok[name] = [best_of_k(s, sc.future) for s, sc in zip(samp, scenes, strict=True)]
        cov[name] = [coverage(s, sc.futures) for s, sc in zip(samp, scenes, strict=True)]
        lr[name] = [float(np.mean([grid_lrtl(x) for x in s])) for s in samp]
        fd[name] = frechet(motion_features(samp.reshape(-1, *samp.shape[2:])), motion_features(outcomes))
    truth = [grid_lrtl(sc.future) for sc in scenes]
    report(progress, 1.0, "done")
    return EvalResult(best_of_k=bok, coverage=cov, lrtl=lr, frechet=fd, truth_lrtl=truth, seconds=secs)
