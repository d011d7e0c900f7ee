"""Run nowcasting methods on one case and score them; evaluate methods over held-out synthetic cases.

The jobs (:mod:`backend.forecast.nowcast.jobs`), the benchmark and the tests go through ``run_nowcast`` and
``evaluate``: pure functions ``(inputs, settings, progress) -> result`` (no UI), so they can also be handed to a worker
pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...runtime import Progress, report, sub_progress
from .baselines import METHODS, NowcastInputs, get_method
from .synthetic import Case, WorldConfig, make_case
from .verify import Forecast, Scores

DEFAULT_METHODS: tuple[str, ...] = tuple(METHODS)
TEST_SEED0 = 20000  # held-out synthetic cases: seeds 20000+ (training uses 1000+, validation 5000+)
MAX_LEADS = 32


@dataclass
class NowcastRun:
    """The result of ``run_nowcast``. forecasts: name -> Forecast; scores: name -> Scores.summary() (when the truth is
    known); truth: (T, H, W) mm/h or None; inputs: the radar inputs (n_in, H, W); notes: what was done to the input."""

    forecasts: dict[str, Forecast]
    scores: dict[str, dict]
    truth: np.ndarray | None
    inputs: np.ndarray
    n_leads: int
    timestep_min: float
    pixel_km: float
    seed: int
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def leads_min(self) -> list[float]:
        return [(i + 1) * self.timestep_min for i in range(self.n_leads)]

    def table(self) -> list[dict]:
        """One row per method: CRPS and CSI averaged by horizon, time and costs."""
        rows = []
        for name, fc in self.forecasts.items():
            s = self.scores.get(name)
            row = {"method": METHODS.label(name), "kind": fc.kind, "seconds": round(fc.seconds, 3)}
            if s:
                crps = np.asarray(s["crps"])
                csi = np.asarray(s["csi"]["1.0"])
                row.update({"CRPS 0-1 h": _avg(crps, 0, 4), "CRPS 1-8 h": _avg(crps, 4, self.n_leads),
                            "CSI@1 0-1 h": _avg(csi, 0, 4), "CSI@1 1-8 h": _avg(csi, 4, self.n_leads)})
            row.update({k: v for k, v in fc.costs.items() if k in ("parameters", "macs", "members", "passes")})
            rows.append(row)
        return rows


def _avg(x: np.ndarray, a: int, b: int) -> float | None:
    seg = x[a:b]
    return round(float(np.mean(seg)), 4) if len(seg) else None


def run_nowcast(inp: NowcastInputs, methods: tuple[str, ...] | list[str] = DEFAULT_METHODS, n_leads: int = MAX_LEADS,
                seed: int = 0, truth: np.ndarray | None = None, progress: Progress | None = None,
                notes: list[str] | None = None) -> NowcastRun:
    """Run ``methods`` on one set of inputs (radar (n_in, H, W) mm/h; satellite/NWP optional) for ``n_leads`` leads;
    score them against ``truth`` ((>= n_leads, H, W) mm/h) when given. Methods that need the NWP channel are skipped
    (with the reason) when it is absent."""
    if not 1 <= int(n_leads) <= MAX_LEADS:
        raise InputError(f"Leads must be between 1 and {MAX_LEADS} (15-minute steps, 8 h); got {n_leads}.")
    n_leads = int(n_leads)
    methods = [m.lower() for m in methods]
    for m in methods:
        get_method(m)
    if truth is not None:
        n_leads = min(n_leads, truth.shape[0])
    forecasts: dict[str, Forecast] = {}
    skipped: dict[str, str] = {}
    for i, name in enumerate(methods):
        part = sub_progress(progress, i / len(methods), (i + 1) / len(methods))
        report(part, 0.0, f"{METHODS.label(name)} ({i + 1}/{len(methods)})")
        if get_method(name).needs_nwp and inp.nwp is None:
            skipped[name] = "needs the NWP channel (radar-only input)"
            continue
        forecasts[name] = get_method(name)(inp, n_leads, seed=seed, progress=part)
    scores = {}
    if truth is not None:
        for name, fc in forecasts.items():
            s = Scores(n_leads)
            s.add(fc, truth[:n_leads])
            scores[name] = s.summary()
    report(progress, 1.0, "done")
    return NowcastRun(forecasts, scores, None if truth is None else truth[:n_leads], inp.radar, n_leads,
                      inp.timestep_min, inp.pixel_km, seed, list(notes or []), skipped)


def run_case(seed: int, methods=DEFAULT_METHODS, n_leads: int = MAX_LEADS, progress: Progress | None = None,
             cfg: WorldConfig | None = None) -> tuple[Case, NowcastRun]:
    """A seeded synthetic case with all its sources, forecast and scored against its truth."""
    case = make_case(int(seed), cfg or WorldConfig())
    run = run_nowcast(NowcastInputs.from_case(case), methods, n_leads, seed=int(seed), truth=case.truth,
                      progress=progress, notes=[f"synthetic case seed={seed}"])
    return case, run


def _add_case(acc: dict[str, Scores], name: str, fc: object, truth: np.ndarray, n_leads: int, seed: int,
              index: int) -> None:
    """Pool one case into ``acc[name]``; pysteps breaks rank-histogram ties with numpy's global stream, which is seeded
    here per (case seed, method index) and restored after, so the pooled scores do not depend on what ran before."""
    from ...executor import case_seed

    state = np.random.get_state()
    np.random.seed(case_seed(int(seed), index) % 2**32)
    try:
        acc.setdefault(name, Scores(n_leads)).add(fc, truth)
    finally:
        np.random.set_state(state)


def _forecast_case(methods_leads: tuple[tuple[str, ...], int], seed: int) -> dict[str, object]:
    """Every method's forecast of the synthetic case ``seed`` (one sweep case of :func:`evaluate`)."""
    methods, n_leads = methods_leads
    inp = NowcastInputs.from_case(make_case(int(seed)))
    return {name: get_method(name)(inp, n_leads, seed=int(seed)) for name in methods}


def evaluate(seeds: list[int], methods=DEFAULT_METHODS, n_leads: int = MAX_LEADS,
             progress: Progress | None = None, executor: str = "local") -> dict[str, dict]:
    """Scores of each method accumulated over the synthetic cases ``seeds`` (contingency tables and sums pooled over
    cases, as pysteps' accumulators do). Returns name -> Scores.summary().

    ``executor="ray"`` forecasts the cases as Ray tasks (``backend.executor.map_cases``) and pools them here in case
    order, so the scores equal the local run's."""
    acc: dict[str, Scores] = {}
    if executor != "local":
        from ...executor import map_cases

        forecasts = map_cases(_forecast_case, [(tuple(methods), n_leads)] * len(seeds), executor=executor,
                              seeds=[int(s) for s in seeds])
        for seed, fcs in zip(seeds, forecasts, strict=True):
            truth = make_case(int(seed)).truth[:n_leads]
            for i, name in enumerate(methods):
                _add_case(acc, name, fcs[name], truth, n_leads, seed, i)
        report(progress, 1.0, "done")
        return {k: v.summary() for k, v in acc.items()}
    for j, seed in enumerate(seeds):
        case = make_case(int(seed))
        inp = NowcastInputs.from_case(case)
        for i, name in enumerate(methods):
            part = sub_progress(progress, (j + i / len(methods)) / len(seeds), (j + (i + 1) / len(methods)) / len(seeds))
            report(part, 0.0, f"case {j + 1}/{len(seeds)}: {METHODS.label(name)}")
            fc = get_method(name)(inp, n_leads, seed=int(seed), progress=part)
            _add_case(acc, name, fc, case.truth[:n_leads], n_leads, seed, i)
    report(progress, 1.0, "done")
    return {k: v.summary() for k, v in acc.items()}


def heldout_seeds(n: int, start: int = TEST_SEED0) -> list[int]:
    """The held-out evaluation cases (never used in training or validation)."""
    return list(range(start, start + n))


def check_claims(summaries: dict[str, dict], first_hour: int = 4) -> dict[str, dict]:
    """The claims checked on evaluation summaries (name -> Scores.summary()), with the numbers behind each verdict.

    - crps_vs_<rival>: the model's CRPS, averaged over the leads beyond the first hour, is lower than the rival's
      (every other method scored; the paper's rivals are extrapolation, steps and steps_blended), plus the per-hour
      CRPS of both so curves can be reported;
    - csi_vs_extrapolation: the model's CSI at 1 mm/h averaged over leads from one hour on is >= extrapolation's;
    - csi_vs_<reference>: the model's CSI at 1 mm/h is >= the NWP channel's (the registry's reference) at every lead
      (``leads_below`` lists exceptions).
    """
    out: dict[str, dict] = {}
    ours = METHODS.names("ours")[0]
    m = summaries.get(ours)
    if m is None:
        return out
    crps_m = np.asarray(m["crps"])
    n = len(crps_m)
    hours = [(a, min(a + 4, n)) for a in range(first_hour, n, 4)]
    for rival in (r for r in METHODS if r != ours and r in summaries):
        crps_r = np.asarray(summaries[rival]["crps"])
        out[f"crps_vs_{rival}"] = {
            "holds": bool(crps_m[first_hour:].mean() < crps_r[first_hour:].mean()),
            "model_beyond_1h": round(float(crps_m[first_hour:].mean()), 5),
            "rival_beyond_1h": round(float(crps_r[first_hour:].mean()), 5),
            "hours_model_better": [bool(crps_m[a:b].mean() < crps_r[a:b].mean()) for a, b in hours],
        }
    csi_m = np.asarray(m["csi"]["1.0"])
    extrapolation = summaries.get("extrapolation")
    if extrapolation is not None:
        csi_e = np.asarray(extrapolation["csi"]["1.0"])
        out["csi_vs_extrapolation"] = {
            "holds": bool(csi_m[first_hour - 1:].mean() >= csi_e[first_hour - 1:].mean()),
            "model_from_1h": round(float(csi_m[first_hour - 1:].mean()), 4),
            "rival_from_1h": round(float(csi_e[first_hour - 1:].mean()), 4),
            "leads_below": [i + 1 for i in range(first_hour - 1, n) if csi_m[i] < csi_e[i]],
        }
    for reference in (r for r in METHODS.names("reference") if r in summaries):
        csi_n = np.asarray(summaries[reference]["csi"]["1.0"])
        below = [i + 1 for i in range(n) if csi_m[i] < csi_n[i]]
        out[f"csi_vs_{reference}"] = {"holds": not below, "leads_below": below, "model_mean": round(float(csi_m.mean()), 4),
                                      "rival_mean": round(float(csi_n.mean()), 4)}
    return out


def compact(run: NowcastRun, satellite: np.ndarray | None = None, nwp: np.ndarray | None = None,
            members: int = 4) -> dict:
    """A small, UI-friendly copy of a run (float16 maps, a few ensemble members, no models): what a page keeps in its
    session state so figures redraw without recomputing."""
    from .synthetic import upsample

    motion = next((fc.motion for fc in run.forecasts.values() if fc.motion is not None), None)
    out = {
        "leads_min": run.leads_min, "n_leads": run.n_leads, "timestep_min": run.timestep_min, "pixel_km": run.pixel_km,
        "seed": run.seed, "notes": run.notes, "skipped": run.skipped, "table": run.table(), "scores": run.scores,
        "inputs_last": run.inputs[-1].astype(np.float16),
        "truth": None if run.truth is None else run.truth.astype(np.float16),
        "rain": {k: fc.rain.astype(np.float16) for k, fc in run.forecasts.items() if fc.rain is not None},
        "probs": {k: fc.probs.astype(np.float16) for k, fc in run.forecasts.items()
                  if fc.probs is not None and fc.ensemble is None},
        "members": {k: fc.ensemble[:members].astype(np.float16) for k, fc in run.forecasts.items()
                    if fc.ensemble is not None},
        "motion": None if motion is None else motion.astype(np.float32),
        "satellite_last": None if satellite is None else satellite[-1].astype(np.float32),
        "nwp_first": None if nwp is None else upsample(nwp[:1], run.inputs.shape[-1])[0],
        "model_notes": {k: fc.note for k, fc in run.forecasts.items() if fc.note},
    }
    return out
