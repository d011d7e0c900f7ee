"""The PBFM comparison as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_sample`: every chosen method x seed of the shipped models: energy distance to held-out solver fields and
  mean |residual| of ``n`` samples, the per-method summary with the Pareto front, and a few seed-0 samples to plot.
- :func:`run_gradient_dial`: one training step's FM and residual gradients of the shipped PBFM model and the ConFIG
  direction, in the plane of the two gradients.
- :func:`run_residual`: the residual of one field (a decoded ``pde_field`` upload) beside the solver's own fields.
- :func:`run_config_check`: ConFIG's equal-cosine property on random conflicting gradient pairs.

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able summaries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked
from .pbfm import METHODS
from .pdes import CASES, get_case

MODEL_SEEDS = (0, 1, 2)  # the seeds of the shipped models
# reference: solver fields + white noise on the physical channel, its std this fraction of the channel's std
NOISE_LEVELS = (0.01, 0.03, 0.1, 0.3, 1.0)


def available(case: str) -> tuple[str, ...]:
    """The methods with shipped models for ``case``."""
    name = get_case(case).name
    return tuple(m for m in METHODS if name in METHODS.get(m).cases)
MAX_SAMPLES = 4096
MAX_STEPS = 1000


@dataclass(frozen=True)
class SampleConfig:
    """``n`` samples per model in ``steps`` Euler steps, for each of ``methods`` (names of
    :data:`backend.physics.pbfm.pbfm.METHODS`; None: every method with models for the case) and model ``seeds`` on
    the PDE ``case``."""

    case: str = "darcy"
    n: int = 256
    steps: int = 50
    methods: tuple[str, ...] | None = None
    seeds: tuple[int, ...] = MODEL_SEEDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "case", get_case(self.case).name)
        if self.methods is None:
            object.__setattr__(self, "methods", available(self.case))
        if not 1 <= int(self.n) <= MAX_SAMPLES:
            raise InputError(f"Draw 1 to {MAX_SAMPLES:,} samples (got {self.n}).")
        if not 1 <= int(self.steps) <= MAX_STEPS:
            raise InputError(f"Sampling steps must be 1 to {MAX_STEPS:,} (got {self.steps}).")
        if not self.methods:
            raise InputError(f"Choose at least one method of: {', '.join(METHODS)}.")
        object.__setattr__(self, "methods", tuple(METHODS.key(m) for m in self.methods))
        missing = [m for m in self.methods if self.case not in METHODS.get(m).cases]
        if missing:
            raise InputError(f"No {self.case} models for {', '.join(missing)} (trained on Darcy only); choose among "
                             f"{', '.join(available(self.case))}.")
        if not self.seeds or any(int(s) not in MODEL_SEEDS for s in self.seeds):
            raise InputError(f"Seeds must be among {', '.join(map(str, MODEL_SEEDS))} (the shipped models; got "
                             f"{list(self.seeds)}).")
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))


@dataclass
class SampleResult:
    """``rows``: per method, the seed means and spreads of both axes (energy distance on standardised channels, per
    channel, and the mean |residual| with its noise-equivalent std) and ``pareto``; ``runs``: one row per method x
    seed; ``references``: solver fields of another data seed with white noise on the physical channel (one row per
    std) and with that channel set to 0, scored the same way; ``examples``: four seed-0 samples per method,
    ``example_residuals`` the residual of the first, ``solver`` four held-out solver fields (nested lists)."""

    case: str
    n: int
    steps: int
    seeds: list[int]
    rows: list[dict[str, object]]
    runs: list[dict[str, object]]
    examples: dict[str, list] = field(default_factory=dict)
    example_residuals: dict[str, list] = field(default_factory=dict)
    solver: list = field(default_factory=list)
    references: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def references(case: str, n: int) -> list[dict[str, object]]:
    """Solver fields (data seed 7) with white noise on the physical channel, its std each fraction of
    :data:`NOISE_LEVELS` of that channel's held-out std, and with that channel set to 0, on the page's two axes (what
    a solver with a noisy output would score)."""
    from . import pbfm as B
    from .evaluation import (
        PHYSICAL_CHANNEL,
        channel_energy_distances,
        channel_scales,
        heldout,
        reference_fields,
        standardised_energy_distance,
    )
    from .pdes import mean_abs_residual

    c = get_case(case)
    held = heldout(c.name, 500)
    sd = float(channel_scales(c.name)[PHYSICAL_CHANNEL[c.name]])
    out = []
    for label, f in [*((f"solver + noise {s:g} std", reference_fields(c.name, n, noise=s * sd)) for s in NOISE_LEVELS),
                     ("solver, physical channel 0", reference_fields(c.name, n, zero_physical=True))]:
        out.append({"label": label, "energy_distance": standardised_energy_distance(f, held, c.name),
                    "ed_channels": channel_energy_distances(f, held, c.name),
                    "energy_distance_raw": B.energy_distance(f, held),
                    "mean_residual": float(mean_abs_residual(c, f).mean())})
    return out


def run_sample(config: SampleConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> SampleResult:
    """Score every method x seed of ``config`` on the shipped models."""
    from .evaluation import heldout, score, summarise

    progress = checked(progress, token)
    scores, examples = score(config.case, list(config.methods), config.seeds, n=int(config.n),
                             steps=int(config.steps), progress=progress)
    c = get_case(config.case)
    return SampleResult(config.case, int(config.n), int(config.steps), list(config.seeds), summarise(scores),
                        [s.as_dict() for s in scores], {m: x[:4].tolist() for m, x in examples.items()},
                        {m: c.residual(x[:1])[0].tolist() for m, x in examples.items()},
                        heldout(config.case, 4).tolist(), references(config.case, int(config.n)))


@dataclass(frozen=True)
class DialConfig:
    """One batch of ``batch`` training pairs (seed ``seed``) through the shipped PBFM model of that seed."""

    case: str = "darcy"
    seed: int = 0
    batch: int = 128

    def __post_init__(self) -> None:
        object.__setattr__(self, "case", get_case(self.case).name)
        if int(self.seed) not in MODEL_SEEDS:
            raise InputError(f"The seed must be one of {', '.join(map(str, MODEL_SEEDS))} (got {self.seed}).")
        if not 2 <= int(self.batch) <= 2000:
            raise InputError(f"The batch must hold 2 to 2,000 pairs (got {self.batch}).")


@dataclass
class DialResult:
    """``coords``: each vector (``g_fm``, ``g_res``, ``sum``, ``config``) in the plane of g_FM and g_res;
    ``norms`` their lengths; ``cos`` the cosines between them."""

    coords: dict[str, list[float]]
    norms: dict[str, float]
    cos: dict[str, float]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def run_gradient_dial(config: DialConfig, progress: Progress | None = None,
                      token: CancelToken | None = None) -> DialResult:
    """The two losses' gradients and the ConFIG direction on one training step of the shipped PBFM model."""
    from .evaluation import gradient_dial

    checked(progress, token)
    d = gradient_dial(config.case, int(config.seed), int(config.batch))
    return DialResult(d["coords"], d["norms"], d["cos"])  # type: ignore[arg-type]


@dataclass(frozen=True)
class ResidualConfig:
    """The case of the field (``None``: the case whose shape the field has)."""

    case: str | None = None

    def __post_init__(self) -> None:
        if self.case is not None:
            object.__setattr__(self, "case", get_case(self.case).name)


@dataclass
class ResidualResult:
    """The field's mean |R| and residual map (nested lists), and the mean |R| of 16 of the solver's own fields."""

    case: str
    mean_residual: float
    solver_mean_residual: float
    residual: list


def run_residual(field: np.ndarray, config: ResidualConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> ResidualResult:
    """The residual of ``field`` (``[C, ...]``, a decoded ``pde_field``) under its case's discretisation."""
    from .evaluation import check_field
    from .pdes import mean_abs_residual

    checked(progress, token)
    field = np.asarray(field, dtype=np.float64)
    if config.case is not None:
        case = get_case(config.case)
    else:
        case = next((c for c in CASES.values() if c.shape == field.shape), None)
        if case is None:
            raise InputError(f"The field has shape {field.shape}; expected one of "
                             f"{', '.join(f'{c.name} {list(c.shape)}' for c in CASES.values())}.")
    chk = check_field(case, field)
    own = float(mean_abs_residual(case, case.fields(16, 99)).mean())
    return ResidualResult(case.name, float(chk["mean_residual"]), own, np.asarray(chk["residual"]).tolist())


@dataclass(frozen=True)
class ConfigCheckConfig:
    """``pairs`` random conflicting gradient pairs (cosine < 0) of dimension ``dim``."""

    pairs: int = 100
    dim: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= int(self.pairs) <= 100_000:
            raise InputError(f"Draw 1 to 100,000 pairs (got {self.pairs}).")
        if not 2 <= int(self.dim) <= 100_000:
            raise InputError(f"The dimension must be 2 to 100,000 (got {self.dim}).")


@dataclass
class ConfigCheckResult:
    """The worst gap between the two cosines, the smallest cosine, and the largest relative difference between the
    written-out rule and the ``conflictfree`` package (float64)."""

    pairs: int
    max_cos_gap: float
    min_cos: float
    max_rel_diff_to_rule: float


def run_config_check(config: ConfigCheckConfig, progress: Progress | None = None,
                     token: CancelToken | None = None) -> ConfigCheckResult:
    """ConFIG on ``config.pairs`` random conflicting pairs."""
    from .evaluation import config_check

    checked(progress, token)
    return ConfigCheckResult(**config_check(int(config.pairs), int(config.dim), int(config.seed)))


@dataclass(frozen=True)
class DiagnosticsConfig:
    """``n`` Darcy samples (50 Euler steps) of the seed-0 FM and PBFM models and of the diagnostic models."""

    n: int = 256

    def __post_init__(self) -> None:
        if not 16 <= int(self.n) <= MAX_SAMPLES:
            raise InputError(f"Draw 16 to {MAX_SAMPLES:,} samples (got {self.n}).")


@dataclass
class DiagnosticsResult:
    """One row per model: its training settings (hidden width, steps, normalisation), the energy distance on
    standardised channels and per channel, the mean |residual|, its noise-equivalent std (absolute and relative to
    u's std) and the median relative error of u against the solver's u for the sample's own log k."""

    n: int
    rows: list[dict[str, object]]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def run_diagnostics(config: DiagnosticsConfig, progress: Progress | None = None,
                    token: CancelToken | None = None) -> DiagnosticsResult:
    """Why the samples are not physical: the shipped FM and PBFM models (seed 0) beside FM with more capacity, more
    steps and per-node normalisation."""
    from . import pbfm as B
    from .evaluation import get_method, score, summarise

    progress = checked(progress, token)
    plain = next(m for m in B.METHODS if not B.METHODS.get(m).residual and B.METHODS.get(m).trained)
    names = [plain, *B.METHODS.names("ours"), *B.DIAGNOSTICS]
    rows = summarise(score("darcy", names, (0,), n=int(config.n), progress=progress)[0])
    for r in rows:
        cfg = get_method(str(r["method"])).config(B.PBFMConfig())
        r.update(hidden=cfg.hidden, train_steps=cfg.steps,
                 normalisation="per node" if cfg.per_node_norm else "per channel")
        r.pop("pareto", None)
    return DiagnosticsResult(int(config.n), rows)
