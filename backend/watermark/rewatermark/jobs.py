"""The jobs of self-re-watermarking: what the page and the CLI run. Each is
``run_<what>(inputs..., config, progress=None, token=None) -> <What>Result`` with a frozen config that validates itself
(InputError with the same words for the page and the CLI) and a result of small summaries.

- :func:`run_attack`: one image through the attacks for each chosen victim model: embed A, self-re-watermark B
  ``rounds`` times, re-watermark once with another trained encoder (cross-model), PGD overwrite toward B; per stage
  the bit accuracy on A and on B, PSNR and SSIM, the decoded bits, and A's robustness to common distortions
  (``rewatermark run``, the page's "Attack one image").
- :func:`run_evaluate`: mean metrics per model over a list of images (:func:`~.core.evaluate`;
  ``rewatermark evaluate``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.errors import InputError
from backend.runtime import CancelToken, Progress, checked, sub_progress
from backend.watermark.rewatermark import lipschitz as L
from backend.watermark.rewatermark.core import (
    MODELS,
    EvalConfig,
    decoded_stages,
    distortion_accuracy,
    evaluate,
    run_story,
    story_rows,
)

MAX_ROUNDS = 10
MAX_TILES = 8
MAX_PGD_EPS = 1.0  # [-1, 1] image units: 1 is half the range
MAX_PGD_ITERS = 500
DEFAULT_MODELS: tuple[str, ...] = tuple(MODELS[k].name for k in MODELS.names("ours"))  # the defended model
# the undefended twin and the defended model: what ``rewatermark evaluate`` compares by default
EVAL_MODELS: tuple[str, ...] = tuple(MODELS[k].name for k in MODELS.names("baseline")[:1] + MODELS.names("ours"))
DISTORTIONS: tuple[str, ...] = EvalConfig().distortions  # the common distortions A is read through


def _models(models: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if isinstance(models, str) or not models:
        raise InputError(f"Name at least one model: {', '.join(MODELS[k].name for k in MODELS)}.")
    return tuple(MODELS.get(m).name for m in models)


def _check_int(value: object, low: int, high: int | None, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low or (
            high is not None and value > high):
        span = f"between {low} and {high}" if high is not None else f"an integer of at least {low}"
        raise InputError(f"{what} must be {span}, got {value!r}.")


# ------------------------------------------------------------------------------------------------------- attack
@dataclass(frozen=True)
class AttackConfig:
    """The attacks on one image, for each of ``models`` (victims, :data:`~.core.MODELS` names): embed A;
    self-re-watermark B ``rounds`` times; re-watermark once with the encoder ``cross`` (None, or the victim itself:
    the victim's default other encoder, :data:`~.core.CROSS_ATTACKER`); PGD overwrite toward B at ``pgd_eps`` in
    [-1, 1] image units (0: off; step eps / 4, ``pgd_iters`` iterations). The SRW family reads an image as
    ``tiles`` x ``tiles`` frames of 32 px; ``seed`` draws the messages A and B."""

    models: tuple[str, ...] = DEFAULT_MODELS
    rounds: int = 3
    cross: str | None = None
    pgd_eps: float = 0.03
    pgd_iters: int = 50
    tiles: int = L.TILES
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _models(self.models))
        if self.cross is not None:
            object.__setattr__(self, "cross", MODELS.get(self.cross).name)
        _check_int(self.rounds, 1, MAX_ROUNDS, "rounds")
        if isinstance(self.tiles, bool) or not isinstance(self.tiles, (int, np.integer)) or not (
                1 <= self.tiles <= MAX_TILES):
            raise InputError(f"tiles must be between 1 and {MAX_TILES} frames per side, got {self.tiles}.")
        if not isinstance(self.pgd_eps, (int, float, np.floating)) or not 0 <= self.pgd_eps <= MAX_PGD_EPS:
            raise InputError(f"The PGD eps must be between 0 (off) and {MAX_PGD_EPS:g} in [-1, 1] image units, "
                             f"got {self.pgd_eps}.")
        _check_int(self.pgd_iters, 1, MAX_PGD_ITERS, "The PGD iterations")
        _check_int(self.seed, 0, None, "The seed")

    @property
    def pgd(self) -> tuple[float, float, int] | None:
        """``(eps, step, iterations)`` of the PGD overwrite, None when off."""
        eps = float(self.pgd_eps)
        return (eps, max(eps / 4, 1e-4), int(self.pgd_iters)) if eps > 0 else None


@dataclass
class Attack:
    """One victim through the attacks. Accuracies on A (the owner's message: recovery) and on B (the attacker's:
    success) after each self-re-watermarking round; ``images`` (uint8 ``(H, W, 3)``): ``x``, ``x_w``,
    ``rw1``..``rwK``, ``cross``, ``pgd``; ``decoded``: the victim's bits ``(n,)`` of each but ``x``; ``rows``: the
    per-stage table; ``distortions``: accuracy on A after each of :data:`DISTORTIONS`."""

    model: str
    label: str
    n_bits: int
    bits_a: np.ndarray
    bits_b: np.ndarray
    clean: float
    acc_a: list[float]
    acc_b: list[float]
    psnr: dict[str, float]
    ssim: dict[str, float]
    cross: dict[str, object]
    pgd: dict[str, object]
    seconds: dict[str, float]
    rows: list[dict[str, object]]
    images: dict[str, np.ndarray] = field(repr=False)
    decoded: dict[str, np.ndarray] = field(repr=False)
    distortions: dict[str, float]

    def to_json(self) -> dict[str, object]:
        """The numbers of ``rewatermark run --json`` (no images)."""
        return {"model": self.model, "label": self.label, "n_bits": self.n_bits,
                "bits_a": "".join(map(str, self.bits_a)), "bits_b": "".join(map(str, self.bits_b)),
                "clean_acc": self.clean, "self_acc_a": self.acc_a, "self_acc_b": self.acc_b, "psnr": self.psnr,
                "ssim": self.ssim, "cross": self.cross, "pgd": self.pgd, "seconds": self.seconds}


@dataclass
class AttackResult:
    """Every victim of :class:`AttackConfig` (``models``: name -> :class:`Attack`) and the settings of the run."""

    models: dict[str, Attack]
    rounds: int
    cross: str | None
    pgd_eps: float
    tiles: int
    seed: int


def run_attack(image: np.ndarray, config: AttackConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> AttackResult:
    """``image``: ``(H, W, 3)`` uint8 RGB (at least the victim's ``min_side`` px per side)."""
    progress = checked(progress, token)
    out: dict[str, Attack] = {}
    n = len(config.models)
    for i, model in enumerate(config.models):
        cross = config.cross if config.cross is not None and config.cross != model else None
        story = run_story(model, image, config.rounds, config.seed, cross_attacker=cross, pgd=config.pgd,
                          progress=sub_progress(progress, i / n, (i + 1) / n), tiles=config.tiles)
        out[model] = Attack(model=story.model, label=story.label, n_bits=story.n_bits, bits_a=story.bits_a,
                            bits_b=story.bits_b, clean=story.acc_clean, acc_a=story.acc_a, acc_b=story.acc_b,
                            psnr=story.psnr, ssim=story.ssim, cross=story.cross, pgd=story.pgd,
                            seconds=story.seconds, rows=story_rows(story), images=story.images,
                            decoded=decoded_stages(story, config.tiles),
                            distortions=distortion_accuracy(story, DISTORTIONS, config.seed, config.tiles))
    return AttackResult(out, int(config.rounds), config.cross, float(config.pgd_eps), int(config.tiles),
                        int(config.seed))


# ----------------------------------------------------------------------------------------------------- evaluate
@dataclass(frozen=True)
class EvaluateConfig:
    """Mean metrics of each of ``models`` over a set of images: ``rounds`` self-re-watermarking rounds, cross-model
    re-watermarking, PGD overwrite at eps 0.01 / 0.03 / 0.06 with ``pgd_iters`` iterations, the common distortions at
    the model's own strength and at 34 dB (:class:`~.core.EvalConfig`); ``seed`` draws the messages."""

    models: tuple[str, ...] = EVAL_MODELS
    rounds: int = 5
    pgd_iters: int = 50
    tiles: int = L.TILES
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _models(self.models))
        _check_int(self.rounds, 1, MAX_ROUNDS, "rounds")
        _check_int(self.pgd_iters, 1, MAX_PGD_ITERS, "The PGD iterations")
        if isinstance(self.tiles, bool) or not isinstance(self.tiles, (int, np.integer)) or not (
                1 <= self.tiles <= MAX_TILES):
            raise InputError(f"tiles must be between 1 and {MAX_TILES} frames per side, got {self.tiles}.")
        _check_int(self.seed, 0, None, "The seed")

    def eval_config(self) -> EvalConfig:
        return EvalConfig(rounds=int(self.rounds), pgd_iters=int(self.pgd_iters), seed=int(self.seed),
                          tiles=int(self.tiles))


@dataclass
class EvaluateResult:
    """``models``: name -> the mean metrics of :func:`~.core.evaluate`; ``n_images``: the images given."""

    models: dict[str, dict]
    n_images: int

    def to_json(self) -> dict[str, object]:
        return {"models": self.models, "n_images": self.n_images}


def run_evaluate(images: list[np.ndarray], config: EvaluateConfig, names: list[str] | None = None,
                 progress: Progress | None = None, token: CancelToken | None = None) -> EvaluateResult:
    """``images``: ``(H, W, 3)`` uint8 RGB arrays; ``names`` (one per image) adds per-image rows and the worst
    images to each model's result."""
    progress = checked(progress, token)
    res = evaluate(list(config.models), images, config.eval_config(), progress=progress, names=names)
    return EvaluateResult(res, len(images))


__all__ = ["DEFAULT_MODELS", "DISTORTIONS", "EVAL_MODELS", "Attack", "AttackConfig", "AttackResult",
           "EvaluateConfig", "EvaluateResult", "run_attack", "run_evaluate"]
