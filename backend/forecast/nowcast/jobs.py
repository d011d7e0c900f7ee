"""Nowcasting as pure jobs: what the page and the CLI call.

- :func:`run_forecast`: one case, either a seeded synthetic case (radar, satellite and NWP) or an uploaded radar
  sequence on the model grid (the radar-only path), forecast by the chosen methods of
  :data:`backend.forecast.nowcast.baselines.METHODS` and scored against the truth when it is known; the page's figure
  data and the forecasts as an NPZ or NetCDF file.
- :func:`run_evaluate`: scores pooled over held-out synthetic cases and the paper's claims checked on them.

Configs are frozen dataclasses validated on construction (InputError saying what to change); results hold small
JSON-able summaries (the figure data are float16 maps of one case).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked
from .baselines import METHODS, NowcastInputs
from .io import RadarSequence
from .pipeline import MAX_LEADS, TEST_SEED0

FORMATS = ("npz", "nc")  # the forecast file's formats
EXECUTORS = ("local", "ray")  # where run_evaluate forecasts its cases
MAX_CASES = 200
UPLOAD_NOTE = "radar-only path: no satellite or NWP for uploads"


def _methods(names: tuple[str, ...] | list[str] | str) -> tuple[str, ...]:
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not names:
        raise InputError("Pick at least one method.")
    return tuple(METHODS.key(n) for n in names)


def _leads(leads: int) -> int:
    if not 1 <= int(leads) <= MAX_LEADS:
        raise InputError(f"Leads must be between 1 and {MAX_LEADS} (15-minute steps, 8 h); got {leads}.")
    return int(leads)


@dataclass(frozen=True)
class ForecastConfig:
    """``methods`` (names of :data:`~backend.forecast.nowcast.baselines.METHODS`), ``leads`` 15-minute leads (1-32);
    ``seed``: the stochastic methods' seed on an upload (a synthetic case runs them with its own seed); ``hold_out``:
    an upload's first 4 frames are the input and the rest the truth (else its last 4 frames, no truth); ``export``:
    the format of the forecast file (``npz`` or ``nc``). The defaults are the CLI's."""

    methods: tuple[str, ...] = tuple(METHODS.names("ours"))
    leads: int = MAX_LEADS
    seed: int = 0
    hold_out: bool = True
    export: str = "npz"

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", _methods(self.methods))
        object.__setattr__(self, "leads", _leads(self.leads))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "hold_out", bool(self.hold_out))
        object.__setattr__(self, "export", choose(self.export, FORMATS, "forecast file format"))


@dataclass
class ForecastResult:
    """``source``: ``{"case_seed": s}`` or ``{"input": file name}``; ``methods``: those that ran (``skipped``: the
    others and why); ``table``: one row per method (CRPS, CSI, time, costs); ``scores``: per method the
    ``verify.Scores`` summary (empty without a truth); ``view``: the page's figure data
    (:func:`backend.forecast.nowcast.pipeline.compact`); ``forecast_file``: the forecasts in ``export`` format."""

    source: dict[str, object]
    methods: list[str]
    skipped: dict[str, str]
    leads: int
    timestep_min: float
    pixel_km: float
    notes: list[str]
    table: list[dict]
    scores: dict[str, dict]
    view: dict = field(default_factory=dict, repr=False)
    forecast_file: bytes = field(default=b"", repr=False)
    export: str = "npz"

    @property
    def assets(self) -> list[Path]:
        """The shipped weights the run loaded."""
        return [w for w in (METHODS[m].weights for m in self.methods) if w is not None]

    def summary(self) -> dict[str, object]:
        """The CLI's JSON: the run without the figure data, CRPS and CSI at 1 mm/h per lead per method."""
        return {"source": self.source, "methods": self.methods, "skipped": self.skipped, "leads": self.leads,
                "timestep_min": self.timestep_min, "pixel_km": self.pixel_km, "notes": self.notes,
                "table": self.table,
                "scores": {k: {"crps": v["crps"], "csi_1mmh": v["csi"]["1.0"]} for k, v in self.scores.items()}}


def run_forecast(source: int | RadarSequence, config: ForecastConfig, name: str = "upload",
                 progress: Progress | None = None, token: CancelToken | None = None) -> ForecastResult:
    """Forecast one case: ``source`` a synthetic case seed, or a radar sequence on the model grid
    (:func:`backend.forecast.nowcast.io.to_model_grid` of a decoded ``radar`` upload named ``name``)."""
    from . import io as pio
    from .pipeline import compact, run_case, run_nowcast

    progress = checked(progress, token)
    if isinstance(source, RadarSequence):
        x, truth = pio.split_sequence(source.frames, 4, hold_out=config.hold_out)
        inp = NowcastInputs(radar=x, pixel_km=source.pixel_km, timestep_min=source.timestep_min)
        run = run_nowcast(inp, config.methods, config.leads, seed=config.seed, truth=truth, progress=progress,
                          notes=[*source.notes, UPLOAD_NOTE])
        where: dict[str, object] = {"input": name}
        view = compact(run)
    else:
        seed = int(source)
        case, run = run_case(seed, config.methods, config.leads, progress=progress)
        where = {"case_seed": seed}
        view = compact(run, case.satellite, case.nwp)
    data = pio.forecast_netcdf(run) if config.export == "nc" else pio.forecast_npz(run)
    return ForecastResult(where, list(run.forecasts), run.skipped, run.n_leads, run.timestep_min, run.pixel_km,
                          run.notes, run.table(), run.scores, view, data, config.export)


@dataclass(frozen=True)
class EvaluateConfig:
    """``cases`` held-out synthetic cases from seed ``start`` (>= 20000: never used in training or validation),
    ``methods`` (default: every method), ``leads``; ``executor``: ``local`` or ``ray`` (one task per case)."""

    cases: int = 8
    start: int = TEST_SEED0
    methods: tuple[str, ...] = tuple(METHODS)
    leads: int = MAX_LEADS
    executor: str = "local"

    def __post_init__(self) -> None:
        if not 1 <= int(self.cases) <= MAX_CASES:
            raise InputError(f"--cases must be 1-{MAX_CASES}.")
        if int(self.start) < TEST_SEED0:
            raise InputError(f"--start must be >= {TEST_SEED0} (lower seeds are training and validation cases).")
        object.__setattr__(self, "cases", int(self.cases))
        object.__setattr__(self, "start", int(self.start))
        object.__setattr__(self, "methods", _methods(self.methods))
        object.__setattr__(self, "leads", _leads(self.leads))
        object.__setattr__(self, "executor", choose(self.executor, EXECUTORS, "executor"))


@dataclass
class EvaluateResult:
    """``summaries``: per method the ``verify.Scores`` summary pooled over the cases ``seeds``; ``claims``: the
    checks of :func:`backend.forecast.nowcast.pipeline.check_claims` with their numbers."""

    seeds: list[int]
    methods: list[str]
    summaries: dict[str, dict]
    claims: dict[str, dict]

    def summary(self) -> dict[str, object]:
        return {"seeds": self.seeds, "methods": self.methods, "summaries": self.summaries, "claims": self.claims}


def run_evaluate(config: EvaluateConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> EvaluateResult:
    """Score ``config.methods`` over the held-out synthetic cases and check the claims."""
    from .pipeline import check_claims, evaluate, heldout_seeds

    progress = checked(progress, token)
    seeds = heldout_seeds(config.cases, config.start)
    summaries = evaluate(seeds, list(config.methods), config.leads, progress=progress, executor=config.executor)
    return EvaluateResult(seeds, list(config.methods), summaries, check_claims(summaries))
