"""The pure entry points of GLOT: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_stress`: the diagnostic stress test on cached states of a frozen backbone: every chosen pooling trained
  per distractor ratio and head seed, the bag-of-words controls, and (optionally) the page's view of one eval text
  (``glot stress``; the page's first tab).
- :func:`run_train`: every pooling and the controls trained on the user's labelled texts (``glot train --csv``; the
  page's CSV tab).
- :func:`run_lora`: the LoRA fine-tuning reference on the stress test (``glot lora``).
- :func:`run_heads`: the shipped heads on a fresh eval split (``glot heads``).

The configs are frozen and check themselves (:class:`backend.errors.InputError`, also through the frozen
:class:`~backend.tokens.glot.layers.GlotConfig`, :class:`~backend.tokens.glot.heads.TrainConfig` and
:class:`~backend.tokens.glot.experiments.StressConfig` they hold), so the page and the CLI refuse the same settings with
the same words. ``backbone`` is an already loaded :class:`~backend.tokens.glot.backbone.Backbone` (None: loaded by the
config's name: ``minilm``, ``smollm2``, or a local folder / cached hub name). Results are JSON-able dicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, report
from .experiments import StressConfig
from .heads import TrainConfig
from .layers import GlotConfig
from .stress import N_EVAL, N_TRAIN, POSITIONS, VARIANTS


def _backbone_name(name: Any) -> str:
    name = str(name or "").strip()
    if not name or len(name) > 300:
        raise InputError("Name a backbone: minilm, smollm2, or a local model folder / cached hub name "
                         "(at most 300 characters).")
    return name


@dataclass(frozen=True)
class StressJob:
    """A stress-test run: the data and poolings (``stress``), GLOT's graph settings, head training, the backbone's
    name, and whether to build the page's view of one eval text."""

    stress: StressConfig = field(default_factory=StressConfig)
    glot: GlotConfig = field(default_factory=GlotConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    backbone: str = "minilm"
    example: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "backbone", _backbone_name(self.backbone))


@dataclass(frozen=True)
class TrainJob:
    """Training every chosen pooling on labelled texts (a stratified 75/25 split drawn with ``seed``)."""

    poolings: tuple[str, ...] = field(default_factory=lambda: StressConfig().poolings)
    glot: GlotConfig = field(default_factory=GlotConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    backbone: str = "minilm"
    seed: int = 0
    max_tokens: int = 128

    def __post_init__(self) -> None:
        object.__setattr__(self, "poolings", StressConfig(poolings=self.poolings).poolings)
        object.__setattr__(self, "backbone", _backbone_name(self.backbone))
        if not 8 <= self.max_tokens <= 512:
            raise InputError(f"--max-tokens must be between 8 and 512, got {self.max_tokens}.")


@dataclass(frozen=True)
class LoraJob:
    """The LoRA reference: rank (alpha = rank), learning rate, epochs, batch size, and ``max_steps`` (a timing run:
    no accuracy) on one stress-test setting."""

    backbone: str = "minilm"
    variant: str = "hard"
    ratio: float = 0.9
    position: str = "random"
    n_train: int = N_TRAIN
    n_eval: int = N_EVAL
    rank: int = 64
    lr: float = 5e-4
    epochs: int = 1
    batch_size: int = 16
    max_tokens: int = 160
    max_steps: int | None = None
    seed: int = 0
    data_seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "backbone", _backbone_name(self.backbone))
        StressConfig(variant=self.variant, ratios=(self.ratio,), position=self.position, n_train=self.n_train,
                     n_eval=self.n_eval)
        object.__setattr__(self, "variant", choose(self.variant, VARIANTS, "variant"))
        object.__setattr__(self, "position", choose(self.position, POSITIONS, "needle position"))
        if not 1 <= self.rank <= 512 or not 0 < self.lr <= 1 or not 1 <= self.epochs <= 20:
            raise InputError("--rank must be 1-512, --lr in (0, 1] and --epochs 1-20.")
        if self.max_steps is not None and self.max_steps < 1:
            raise InputError("--max-steps must be at least 1.")


@dataclass(frozen=True)
class HeadsJob:
    """The shipped heads of one stress-test variant on ``n_eval`` fresh eval texts."""

    variant: str = "hard"
    n_eval: int = N_EVAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", choose(self.variant, VARIANTS, "variant"))
        if not 8 <= self.n_eval <= 20_000:
            raise InputError("The eval size must be between 8 and 20000 texts.")


def _backbone(name: str, backbone: Any) -> Any:
    if backbone is not None:
        return backbone
    from .backbone import load_backbone

    return load_backbone(name)


def run_stress(config: StressJob, backbone: Any = None, progress: Progress | None = None,
               token: CancelToken | None = None) -> dict[str, Any]:
    """``{rows, bow, encode_seconds, config, glot_config, train_config, backbone, backbone_params, summary}`` and,
    with ``config.example``, ``example`` (the page's view of one eval text: tokens, graph, readout weights,
    similarities)."""
    from .experiments import run_stress as sweep

    progress = checked(progress, token)
    res = sweep(config.stress, config.glot, config.train, backbone=_backbone(config.backbone, backbone),
                progress=progress, example=config.example)
    out = res.to_dict()
    if config.example:
        out["example"] = asdict(res.example) if res.example else None
    return out


def run_train(texts: Any, config: TrainJob, backbone: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, Any]:
    """Every pooling and the bag-of-words controls on ``texts`` (a parsed ``labelled_texts`` upload,
    :class:`~backend.tokens.glot.stress.LabelledTexts`): one row per method, the majority-class share, the sizes."""
    from .experiments import train_on_texts

    progress = checked(progress, token)
    return train_on_texts(texts, config.poolings, config.glot, config.train,
                          backbone=_backbone(config.backbone, backbone), seed=config.seed,
                          max_tokens=config.max_tokens, progress=progress)


def run_lora(config: LoraJob, backbone: Any = None, progress: Progress | None = None,
             token: CancelToken | None = None) -> dict[str, Any]:
    """The LoRA reference's accuracy (None on a timing run), trainable parameters and seconds per step / epoch."""
    from . import stress
    from .lora import lora_reference

    progress = checked(progress, token)
    bb = _backbone(config.backbone, backbone)
    tr, ev = stress.splits(config.variant, config.ratio, config.position, config.data_seed, config.n_train,
                           config.n_eval)
    timing = config.max_steps is not None
    res = lora_reference(bb, tr.texts, tr.labels, None if timing else ev.texts, None if timing else ev.labels,
                         rank=config.rank, alpha=config.rank, lr=config.lr, epochs=config.epochs,
                         batch_size=config.batch_size, max_tokens=config.max_tokens, max_steps=config.max_steps,
                         seed=config.seed, progress=progress)
    return {"lora": asdict(res), "backbone": bb.key}


def run_heads(config: HeadsJob, progress: Progress | None = None, token: CancelToken | None = None
              ) -> dict[str, Any]:
    """The accuracy of each shipped head (``assets/glot_heads_<variant>.safetensors``) on fresh eval texts (data seed
    + 10,000), beside the recorded one."""
    from ...runtime import ASSETS
    from . import stress
    from .backbone import encode, load_backbone
    from .heads import evaluate_heads, load_heads

    progress = checked(progress, token)
    path = ASSETS / f"glot_heads_{config.variant}.safetensors"
    models, meta = load_heads(path)
    cfg, seeds = meta.config, meta.data_seeds
    bb = load_backbone(cfg["backbone"])
    data = stress.generate(config.n_eval, seeds["ratio"], seeds["position"], config.variant,
                           seeds["data_seed"] + 10_000)
    states = encode(bb, data.texts, cfg["max_tokens"], progress=progress)
    acc = evaluate_heads(models, states, data.labels, cfg["glot_config"]["tau"])
    report(progress, 1.0, "done")
    return {"variant": config.variant, "n_eval": config.n_eval, "accuracy": acc,
            "recorded": meta.quality.get("accuracy"), "path": path.name}
