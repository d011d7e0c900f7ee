"""Nowcast: probabilistic precipitation nowcasting up to 8 hours from radar, satellite and NWP in one forward pass.

Paper: R. Pablos Sarabia, J. Nyborg, M. Birk, J. L. Sjørup, A. L. Vesterholt, I. Assent, "RainPro-8: An Efficient Deep
Learning Model to Estimate Rainfall Probabilities over 8 Hours" (ICLR 2026; arXiv 2505.10271). One compact network
fuses the three sources and gives, for every lead, the probability that rain exceeds each threshold of a ladder.

Implemented: a seeded synthetic world with the three sources and documented NWP errors (``synthetic``); the compact
multi-source network with ordered exceedance outputs and the MSE U-Net baseline (``model``); the methods, with pysteps
as the classical anchor (``baselines``); the verification scores, CRPS, CSI, FSS, Brier, reliability and rank
histograms (``verify``); validated radar uploads and forecast export (``io``); running and scoring methods on a case or
over held-out cases, and the claim checks (``pipeline``); the jobs (``jobs``). Left out: the paper's radar, satellite
and NWP archives over Europe (not available offline: the synthetic world stands in) and its 36.7M-parameter backbone
(scaled down to about 1.2M parameters to train on one CPU core).

| name | label | kind | what |
|------|-------|------|------|
| ``model`` | RainPro-8 mini (ours) | ours | the multi-source network: exceedance probabilities for every lead in one pass |
| ``unet`` | U-Net (MSE) | baseline | the same backbone and inputs, one rain rate per lead, trained with MSE |
| ``nwp`` | NWP channel | reference | the NWP-like channel itself (hourly, coarse; linear in time, bilinear in space) |
| ``persistence`` | Persistence | baseline | pysteps eulerian: the last radar frame, unchanged |
| ``extrapolation`` | LK extrapolation | baseline | pysteps Lucas-Kanade motion and semi-Lagrangian extrapolation |
| ``sprog`` | S-PROG | baseline | pysteps S-PROG (cascade and AR(2) per level) |
| ``steps`` | STEPS (20) | baseline | pysteps STEPS ensemble of 20 members |
| ``steps_blended`` | Blended STEPS (20) | baseline | pysteps blending.steps: STEPS blended with the NWP channel |

(``baselines.METHODS``: each entry, called as ``method(inp, n_leads, seed=, progress=)``, returns a
``verify.Forecast``; ``needs_nwp`` entries are skipped on the radar-only path of uploads.)

Shapes: radar ``(4, 64, 64)`` mm/h (oldest first), satellite ``(4, 64, 64)`` K (the network reads the last 2), NWP
``(9, 16, 16)`` mm/h hourly; forecasts ``rain`` ``(T, 64, 64)`` mm/h, ``probs`` ``(T, K, 64, 64)`` for K = 8
thresholds, ensembles ``(20, T, 64, 64)``; T <= 32 leads of 15 minutes. ``run_forecast(case seed or radar sequence,
ForecastConfig) -> ForecastResult`` and ``run_evaluate(EvaluateConfig) -> EvaluateResult`` return JSON-able
summaries.

Importing this package imports neither torch nor pysteps.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "METHODS": "baselines", "Method": "baselines", "NowcastInputs": "baselines", "get_method": "baselines",
    "MODEL_FILE": "baselines", "UNET_FILE": "baselines",
    "NowcastConfig": "model", "NowcastNet": "model", "load_model": "model",
    "WorldConfig": "synthetic", "Case": "synthetic", "make_case": "synthetic", "make_cases": "synthetic",
    "Forecast": "verify", "Scores": "verify", "THRESHOLDS_MMH": "verify",
    "RadarSequence": "io", "load_radar": "io", "to_model_grid": "io",
    "NowcastRun": "pipeline", "run_nowcast": "pipeline", "run_case": "pipeline", "evaluate": "pipeline",
    "check_claims": "pipeline",
    "ForecastConfig": "jobs", "ForecastResult": "jobs", "run_forecast": "jobs", "EvaluateConfig": "jobs",
    "EvaluateResult": "jobs", "run_evaluate": "jobs",
})
