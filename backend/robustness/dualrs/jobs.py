"""Dual randomized smoothing as one pure job: what the page, the CLI and the benchmark call.

- :func:`run_certify`: train one expert per noise level and the variance estimator, CERTIFY the test points with every
  global sigma and with dual RS, the certified-accuracy curves and the map of the chosen sigma, and optionally the
  attack check of every certificate (``dualrs certify`` and the page).

The config is a frozen dataclass validated on construction (InputError saying what to change; training and CERTIFY's
budget are :class:`backend.robustness.dualrs.configs.TrainConfig` and ``CertifyConfig``, also validated); the result
holds the per-point certificates of the test points (a few hundred numbers per method), the curves, the map and the
JSON summary, never the models.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, sub_progress
from .configs import CertifyConfig, TrainConfig
from .data2d import DATASETS, Dataset2D, make_dataset

if TYPE_CHECKING:  # dualrs imports torch; the page imports this module before any job runs
    from .dualrs import DualRSResult

MAX_TEST = 20_000

# The page's choices (the CLI takes any value the configs accept).
SIGMA_CHOICES = (0.06, 0.12, 0.25, 0.5, 1.0, 2.0)
N_CHOICES = (500, 1000, 2000, 4000, 10_000, 20_000)
ALPHA_CHOICES = (0.01, 0.001, 0.0001)
TEST_CHOICES = (50, 100, 200, 300, 500)


@dataclass(frozen=True)
class RunConfig:
    """One run: the preset ``data`` (:data:`backend.robustness.dualrs.data2d.DATASETS`; ignored when the job is given
    a dataset), ``train`` and ``certify``, the first ``max_test`` test points, ``attack`` (also attack every
    certified point inside its radius), ``seed``. The defaults are the CLI's."""

    data: str = "moons"
    train: TrainConfig = TrainConfig()
    certify: CertifyConfig = CertifyConfig()
    max_test: int = 500
    attack: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", DATASETS.key(self.data))
        if not isinstance(self.train, TrainConfig) or not isinstance(self.certify, CertifyConfig):
            raise InputError("RunConfig takes a TrainConfig and a CertifyConfig.")
        if not 1 <= int(self.max_test) <= MAX_TEST:
            raise InputError(f"The number of test points must be between 1 and {MAX_TEST} (got {self.max_test}).")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"The seed must be a whole number >= 0; got {self.seed!r}.")


@dataclass
class CertifyResult:
    """``run``: the certificates, curves and chosen-sigma map of :func:`backend.robustness.dualrs.dualrs.run`
    (:class:`~backend.robustness.dualrs.dualrs.DualRSResult`, the models dropped); beside it the class names, the
    seed, ``summary`` (:meth:`DualRSResult.summary`), ``samples_per_point`` (the CERTIFY samples per method key) and
    ``attack`` (with the attack check: its summary and the per-point radius, flips and lowest votes)."""

    run: DualRSResult
    class_names: list[str]
    seed: int
    summary: dict[str, Any]
    samples_per_point: dict[str, int]
    attack: dict[str, Any] | None = None

    def curves_every(self, step: int = 10) -> dict[str, list[float]]:
        """Every ``step``-th point of the radius grid and of each curve, rounded to 4 digits (the CLI's report)."""
        return {"radius": [round(float(r), 4) for r in self.run.radii[::step]],
                **{k: [round(float(v), 4) for v in c[::step]] for k, c in self.run.curves.items()}}

    def to_dict(self) -> dict[str, Any]:
        """The run's fields and the ones beside it as one flat dict (the page's session state); ``attack`` only when
        the check ran."""
        out = {f.name: getattr(self.run, f.name) for f in fields(self.run) if f.name != "models"}
        out.update({f.name: getattr(self, f.name) for f in fields(self) if f.name != "run"})
        if out["attack"] is None:
            del out["attack"]
        return out


def run_certify(data: Dataset2D | None, config: RunConfig, progress: Progress | None = None,
                token: CancelToken | None = None) -> CertifyResult:
    """Train, certify (and with ``config.attack`` attack) on ``data`` (None: the preset ``config.data`` drawn with
    ``config.seed``)."""
    from .attack import attack_run
    from .dualrs import DUAL_KEY, run

    progress = checked(progress, token)
    if data is None:
        data = make_dataset(config.data, seed=config.seed)
    res = run(data, config.train, config.certify, seed=config.seed, max_test=int(config.max_test),
              keep_models=config.attack, progress=sub_progress(progress, 0.0, 0.8 if config.attack else 1.0))
    per_point = {k: res.samples["global (per point)"] for k in res.global_keys()}
    per_point[DUAL_KEY] = res.samples["dual (per point)"]
    attack = None
    if config.attack:
        a = attack_run(res, seed=config.seed + 1, progress=sub_progress(progress, 0.8, 1.0))
        attack = {"summary": a.summary(), "index": a.index, "radius": a.radius, "flipped": a.flipped,
                  "class_vote": a.min_class_vote, "sigma_vote": a.min_sigma_vote}
    return CertifyResult(replace(res, models=None), class_names=data.class_names, seed=config.seed,
                         summary=res.summary(), samples_per_point=per_point, attack=attack)
