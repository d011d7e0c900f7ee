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
MAX_SAMPLES = 4096
MAX_STEPS = 1000


@dataclass(frozen=True)
class SampleConfig:
    """``n`` samples per model in ``steps`` Euler steps, for each of ``methods`` (names of
    :data:`backend.physics.pbfm.pbfm.METHODS`) and model ``seeds`` on the PDE ``case``."""

    case: str = "darcy"
    n: int = 256
    steps: int = 50
    methods: tuple[str, ...] = tuple(METHODS)
    seeds: tuple[int, ...] = MODEL_SEEDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "case", get_case(self.case).name)
        if not 1 <= int(self.n) <= MAX_SAMPLES:
            raise InputError(f"Draw 1 to {MAX_SAMPLES:,} samples (got {self.n}).")
        if not 1 <= int(self.steps) <= MAX_STEPS:
            raise InputError(f"Sampling steps must be 1 to {MAX_STEPS:,} (got {self.steps}).")
        if not self.methods:
            raise InputError(f"Choose at least one method of: {', '.join(METHODS)}.")
        object.__setattr__(self, "methods", tuple(METHODS.key(m) for m in self.methods))
        if not self.seeds or any(int(s) not in MODEL_SEEDS for s in self.seeds):
            raise InputError(f"Seeds must be among {', '.join(map(str, MODEL_SEEDS))} (the shipped models; got "
                             f"{list(self.seeds)}).")
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))


@dataclass
class SampleResult:
    """``rows``: per method, the seed means and spreads of both axes and ``pareto``; ``runs``: one row per method x
    seed; ``examples``: four seed-0 samples per method, ``example_residuals`` the residual of the first, ``solver``
    four held-out solver fields (nested lists)."""

    case: str
    n: int
    steps: int
    seeds: list[int]
    rows: list[dict[str, object]]
    runs: list[dict[str, object]]
    examples: dict[str, list] = field(default_factory=dict)
    example_residuals: dict[str, list] = field(default_factory=dict)
    solver: list = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


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
                        heldout(config.case, 4).tolist())


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
