"""SIGMark's jobs: what the page, the CLI, the benchmark and the sweeps call. Each is
``run_<what>(inputs..., config, progress=None, token=None) -> <What>Result`` with a frozen config that validates
itself (InputError with the same words for the page and the CLI) and a result of small summaries (``to_json()``).

- :func:`run_generate`: a (watermarked) video from a seed (``sigmark generate``).
- :func:`run_trial`: generate -> attack -> extract: the watermarked video of a seed (and the unwatermarked one from
  the same seed), one attack chain, and each chosen method of :data:`~.evaluation.METHODS` on it (the page's demo).
- :func:`run_extract`: blind extraction from a decoded video (the page's upload, ``sigmark extract``).
- :func:`run_evaluate`: bit accuracy of every method under one attack chain, averaged over videos with seeded
  messages (``sigmark evaluate``, the page's comparison of all methods).
- :func:`run_table`: :func:`run_evaluate` for several attack chains, one case per (attack, video), locally or as
  Ray tasks (``sigmark table``); :func:`table_case` is one case.

Every video of the evaluation is the one of :func:`video_seed` with the message of :func:`evaluation_messages`, and
the i-th video is attacked with attack seed i, so a row of the table is what ``evaluate`` reports for that attack.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from backend.errors import InputError
from backend.registry import choose
from backend.runtime import CancelToken, Progress, checked, report, sub_progress
from backend.watermark.sigmark.evaluation import DEFAULT_METHODS, METHODS
from backend.watermark.sigmark.gfprc import SIGMarkConfig, bits_to_hex, generate, parse_hex
from backend.watermark.sigmark.inputs import DEFAULT_MESSAGE, TABLE_ATTACKS
from backend.watermark.sigmark.messages import check_message_bits, message_options

EXECUTORS = ("local", "ray")  # where run_table runs its cases

DEMO_METHODS: tuple[str, ...] = (*METHODS.names("ours"), *METHODS.names("ablation"))  # SIGMark with and without SGO
MAX_VIDEOS = 64
MAX_SEED = 2**31 - 1


# ------------------------------------------------------------------------------------------------------ checks
def _check_seed(seed: int, what: str = "seed") -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise InputError(f"The {what} must be an integer between 0 and {MAX_SEED}; got {seed!r}.")


def _check_attack(attack: str) -> None:
    """``none`` or a chain in the grammar of :mod:`backend.watermark.attacks` (a bad chain fails before the model
    loads)."""
    from backend.watermark.attacks import parse_chain

    if not isinstance(attack, str) or not attack.strip():
        raise InputError("The attack must be 'none' or a chain such as drop:2 or drop:1+jpeg:50.")
    if attack != "none":
        parse_chain(attack, "video")


def _method_keys(methods: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if not methods:
        raise InputError(f"Name at least one method: {', '.join(METHODS.names())}.")
    return tuple(METHODS.key(m) for m in methods)


def _check_videos(videos: int) -> None:
    if isinstance(videos, bool) or not isinstance(videos, (int, np.integer)) or not 1 <= videos <= MAX_VIDEOS:
        raise InputError(f"The number of videos must be between 1 and {MAX_VIDEOS}; got {videos!r}.")


def _tiny():
    from backend.watermark.sigmark.channel import get_channel

    return get_channel("tiny")


def _channel_options(channel: Any, cfg: SIGMarkConfig) -> tuple[int, ...]:
    return message_options(channel.latent_shape[1] - 1, cfg.bits_per_frame)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


class _Result:
    """``to_json()``: the dataclass's fields as plain JSON values, without the fields in ``_NOT_JSON`` (videos)."""

    _NOT_JSON: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {k: _jsonable(v) for k, v in asdict(self).items() if k not in self._NOT_JSON}  # type: ignore[call-overload]


# ---------------------------------------------------------------------------------------------------- generate
@dataclass(frozen=True)
class GenerateConfig:
    """A video from ``seed``: GF-PRC-watermarked with the hex ``message`` (one of :func:`~.gfprc.message_options`
    bits), or from plain N(0, I) noise of the same seed when ``watermark`` is False."""

    message: str = DEFAULT_MESSAGE
    seed: int = 0
    watermark: bool = True

    def __post_init__(self) -> None:
        _check_seed(self.seed)
        if self.watermark:
            parse_hex(self.message)


@dataclass
class GenerateResult(_Result):
    video: np.ndarray  # [F, H, W, 3] float in [0, 1]
    frames: int
    size: list[int]
    watermarked: bool
    message_hex: str | None
    seconds: float
    _NOT_JSON = ("video",)


def run_generate(config: GenerateConfig, progress: Progress | None = None, token: CancelToken | None = None
                 ) -> GenerateResult:
    """Generate the (watermarked) video of ``config`` with the tiny video diffusion model."""
    progress = checked(progress, token)
    ch, cfg = _tiny(), SIGMarkConfig()
    msg = parse_hex(config.message, _channel_options(ch, cfg)) if config.watermark else None
    gen = generate(ch, config.seed, msg, cfg, progress)
    report(progress, 1.0, "done")
    return GenerateResult(gen.video, int(gen.video.shape[0]), list(gen.video.shape[1:3]), msg is not None,
                          None if msg is None else bits_to_hex(msg), round(gen.seconds, 3))


# ------------------------------------------------------------------------------------------------------- trial
@dataclass(frozen=True)
class TrialConfig:
    """Generate -> attack -> extract for one seed: the hex ``message``, the ``attack`` chain (``none``: no attack)
    with ``attack_seed`` (None: the video seed), and ``methods`` (names of :data:`~.evaluation.METHODS`). ``plain``
    also generates the unwatermarked video of the same seed."""

    message: str = DEFAULT_MESSAGE
    seed: int = 7
    attack: str = "none"
    methods: tuple[str, ...] = DEMO_METHODS
    attack_seed: int | None = None
    plain: bool = True

    def __post_init__(self) -> None:
        _check_seed(self.seed)
        if self.attack_seed is not None:
            _check_seed(self.attack_seed, "attack seed")
        parse_hex(self.message)
        _check_attack(self.attack)
        object.__setattr__(self, "methods", _method_keys(self.methods))


@dataclass
class TrialResult(_Result):
    message: str
    seed: int
    attack: str
    gen_s: float  # generation of the watermarked video
    gen_plain_s: float | None  # of the unwatermarked one (None: not generated)
    frame_map: list[int]  # source frame of each attacked frame (-1: inserted)
    methods: dict[str, dict]  # name -> bit accuracies, recovered message, detection, Detect scores, keys, seconds
    video_wm: np.ndarray  # uint8 [F, H, W, 3]
    video_attacked: np.ndarray  # uint8 [F', H, W, 3]
    video_plain: np.ndarray | None = None  # uint8 [F, H, W, 3]
    _NOT_JSON = ("video_wm", "video_attacked", "video_plain")


def run_trial(config: TrialConfig, progress: Progress | None = None, token: CancelToken | None = None) -> TrialResult:
    """The watermarked video of ``config.seed`` (and the plain one), attacked, and each method's extraction."""
    from backend.io import video as vio
    from backend.watermark.sigmark.evaluation import Trial, run_methods

    progress = checked(progress, token)
    ch, cfg = _tiny(), SIGMarkConfig()
    msg = parse_hex(config.message, _channel_options(ch, cfg))
    trial = Trial(ch, config.seed, msg, None if config.attack == "none" else config.attack,
                  config.seed if config.attack_seed is None else config.attack_seed, cfg)
    wm = trial.sigmark_video(sub_progress(progress, 0, 0.2))
    plain = generate(ch, config.seed, None, cfg, sub_progress(progress, 0.2, 0.35)) if config.plain else None
    methods = run_methods(trial, config.methods, sub_progress(progress, 0.35, 1.0))
    return TrialResult(config.message, config.seed, config.attack, wm["seconds"],
                       None if plain is None else plain.seconds,
                       np.asarray(wm["frame_map"]).tolist(), methods, vio.to_uint8(wm["video"]),
                       vio.to_uint8(wm["attacked"]), None if plain is None else vio.to_uint8(plain.video))


# ----------------------------------------------------------------------------------------------------- extract
@dataclass(frozen=True)
class ExtractConfig:
    """Blind extraction of a ``bits``-bit message (one of :func:`~.gfprc.message_options`), with SGO's re-grouping
    or (``sgo`` False, the ablation) naive re-grouping."""

    bits: int = 32
    sgo: bool = True

    def __post_init__(self) -> None:
        check_message_bits(self.bits)


@dataclass
class ExtractResult(_Result):
    frames: int
    kind: str | None  # the decoded container (npz, zip, mp4, ...), None for raw frames
    detected: bool
    message_hex: str
    keys: list[int]  # best key (1-based) of each inverted latent frame
    passes: list[bool]
    decode_ok: list[bool]
    interpolated: list[bool]
    scores: list[list[float]]
    thresholds: list[list[float]]
    video_fpr: float
    seconds: float


def run_extract(video: Any, config: ExtractConfig, progress: Progress | None = None,
                token: CancelToken | None = None) -> ExtractResult:
    """Blind extraction from ``video``: a decoded video of the ``video`` input kind
    (``backend.io.video.DecodedVideo``, resized to the model's frame size) or frames ``[F, H, W, 3]`` in [0, 1]."""
    from backend.watermark.sigmark.channel import fit_video
    from backend.watermark.sigmark.sgo import extract

    progress = checked(progress, token)
    ch, cfg = _tiny(), SIGMarkConfig()
    check_message_bits(config.bits, _channel_options(ch, cfg))
    frames = fit_video(ch, video) if hasattr(video, "frames") else np.asarray(video, np.float32)
    ex = extract(ch, frames, cfg, sgo=config.sgo, message_bits=config.bits, progress=progress)
    return ExtractResult(len(frames), getattr(video, "kind", None), bool(ex.detected), bits_to_hex(ex.message),
                         ex.key_idx.tolist(), ex.passes.tolist(), ex.decode_ok.tolist(), ex.interpolated.tolist(),
                         ex.scores.tolist(), ex.thresholds.tolist(), cfg.video_fpr, round(ex.seconds, 3))


# ---------------------------------------------------------------------------------------------------- evaluate
def video_seed(seed: int, index: int) -> int:
    """The generation seed of the ``index``-th video of an evaluation with ``seed``."""
    return 10_000 + seed * 100 + index


def evaluation_messages(videos: int, seed: int, bits: int = 32) -> list[np.ndarray]:
    """The ``bits``-bit message of each video, drawn in order from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, bits).astype(np.uint8) for _ in range(videos)]


def table_case(case: tuple, seed: int) -> dict[str, dict]:
    """One (attack, video) cell ``(attack, index, message, methods)``: video seed ``seed``, attack seed = the video's
    index. A module-level function of picklable arguments (Ray tasks)."""
    from backend.watermark.sigmark.evaluation import evaluate_attack

    attack, index, message, methods = case
    return evaluate_attack(_tiny(), seed, message, None if attack == "none" else attack, methods=methods,
                           attack_seed=index)


def _rows(attacks: tuple[str, ...], methods: tuple[str, ...], videos: int, seed: int, executor: str,
          progress: Progress | None) -> list[list[dict]]:
    from backend.executor import map_cases

    msgs = evaluation_messages(videos, seed)
    cases = [(a, i, msgs[i], methods) for a in attacks for i in range(videos)]
    rows = map_cases(table_case, cases, executor=executor, progress=progress,
                     seeds=[video_seed(seed, case[1]) for case in cases])
    return [rows[k * videos:(k + 1) * videos] for k in range(len(attacks))]


@dataclass(frozen=True)
class EvaluateConfig:
    """Every method of ``methods`` on ``videos`` seeded videos (random 32-bit messages from ``seed``) under one
    ``attack`` chain (``none``: no attack)."""

    attack: str = "none"
    videos: int = 4
    seed: int = 0
    methods: tuple[str, ...] = DEFAULT_METHODS

    def __post_init__(self) -> None:
        _check_videos(self.videos)
        _check_seed(self.seed)
        _check_attack(self.attack)
        object.__setattr__(self, "methods", _method_keys(self.methods))


@dataclass
class EvaluateResult(_Result):
    attack: str
    videos: int
    methods: dict[str, dict[str, float]]  # name -> mean message_acc, frame_acc, frame_acc_real (, detect_rate)


def run_evaluate(config: EvaluateConfig, progress: Progress | None = None, token: CancelToken | None = None
                 ) -> EvaluateResult:
    """Bit accuracy per method under ``config.attack``, averaged over the videos (see :func:`aggregate`)."""
    from backend.watermark.sigmark.evaluation import aggregate

    progress = checked(progress, token)
    rows = _rows((config.attack,), config.methods, config.videos, config.seed, "local", progress)[0]
    return EvaluateResult(config.attack, config.videos, aggregate(rows))


# ------------------------------------------------------------------------------------------------------- table
@dataclass(frozen=True)
class TableConfig:
    """:class:`EvaluateConfig` for each chain of ``attacks`` (the same videos, messages and attack seeds), run
    ``local`` ly or as Ray tasks (``ray``: one task per (attack, video))."""

    attacks: tuple[str, ...] = TABLE_ATTACKS
    methods: tuple[str, ...] = DEFAULT_METHODS
    videos: int = 4
    seed: int = 0
    executor: str = "local"

    def __post_init__(self) -> None:
        _check_videos(self.videos)
        _check_seed(self.seed)
        if not self.attacks:
            raise InputError("Name at least one attack chain (or none).")
        for a in self.attacks:
            _check_attack(a)
        object.__setattr__(self, "attacks", tuple(self.attacks))
        object.__setattr__(self, "methods", _method_keys(self.methods))
        object.__setattr__(self, "executor", choose(self.executor, EXECUTORS, "executor"))


@dataclass
class TableResult(_Result):
    videos: int
    rows: list[dict] = field(default_factory=list)  # [{"attack": chain, "methods": {name: means}}]


def run_table(config: TableConfig, progress: Progress | None = None, token: CancelToken | None = None) -> TableResult:
    """The attack table: one :func:`run_evaluate` row per attack chain."""
    from backend.watermark.sigmark.evaluation import aggregate

    progress = checked(progress, token)
    rows = _rows(config.attacks, config.methods, config.videos, config.seed, config.executor, progress)
    return TableResult(config.videos, [{"attack": a, "methods": aggregate(r)}
                                       for a, r in zip(config.attacks, rows, strict=True)])

