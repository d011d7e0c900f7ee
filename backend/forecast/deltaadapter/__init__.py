"""delta-Adapter: bounded post-processing of a frozen time-series forecaster, a sparse input mask and two calibrators.

Paper: Liang et al., "The Forecast After the Forecast: A Post-Processing Shift in Time Series" (ICLR 2026; arXiv
2601.20280). A deployed forecaster stays frozen; small modules learn a bounded nudge of its input and a bounded
correction of its output (tanh keeps every edit within delta), a Gumbel-sigmoid mask picks the inputs that matter under
a budget, and two calibrators turn point forecasts into intervals.

Implemented: the synthetic multichannel series with its documented regime shift, two real series that ship inside
statsmodels, the user's CSV, windows and the four chronological splits (``data``); the frozen forecasters DLinear, a
PatchTST-style patch transformer and an MLP, their training and shipped weights (``backbones``); one early-stopping
trainer (``training``); Ada-X, Ada-Y, Ada-X+Y and the feature mask (``adapters``); the Quantile Calibrator, the
Conformal Corrector, split conformal, residual quantiles, CQR, ACI and the coverage metrics (``calibration``); full
fine-tuning, LoRA, RevIN-style re-normalisation, the online last-layer refit and the residual EWMA (``baselines``);
one run on a preset or a series with costs beside quality (``pipeline``); the registries (``interface``) and the jobs
(``jobs``). Left out: the paper's benchmark datasets (not available offline: the synthetic series and the two
statsmodels series stand in) and backbones larger than one CPU core trains in minutes.

| name | label | kind | what |
|------|-------|------|------|
| ``ada_xy`` | Ada-X+Y (ours) | ours | input nudge and output correction, each bounded by delta |
| ``ada_x`` | Ada-X (input nudge) | ablation | the input nudge only |
| ``ada_y`` | Ada-Y (output correction) | ablation | the output correction only, seeing the forecast |
| ``frozen`` | Frozen backbone | reference | the deployed model, untouched (every gain is measured against it) |
| ``finetune`` | Full fine-tuning | baseline | every backbone weight trained on the post-shift data |
| ``lora`` | LoRA (rank 4) | baseline | a low-rank update of every linear weight (Hu et al., ICLR 2022) |
| ``revin`` | RevIN re-normalisation | baseline | per-window standardisation around the frozen model (Kim et al., ICLR 2022) |
| ``refit`` | Last-layer refit (online RLS) | baseline | ridge towards the frozen weights, the closed form of recursive least squares |
| ``ewma`` | Residual EWMA | baseline | the forecast plus an exponentially weighted mean of observed residuals |
| ``cc`` | Conformal Corrector (ours) | ours | a scale net and the finite-sample rank ceil((n+1)(1-alpha)) |
| ``qc`` | Quantile Calibrator (ours) | ours | monotone quantile heads on the frozen forecast |
| ``cc_plain`` | CC, plain quantile (paper's code) | ablation | the empirical 1-alpha quantile of the scaled scores |
| ``split`` | Split conformal (constant width) | baseline | abs(y - y_hat) scores, finite-sample rank |
| ``residual`` | Empirical residual quantiles | baseline | signed residual quantiles per horizon step |
| ``cqr`` | CQR on QC | baseline | conformalised quantile regression (Romano et al. 2019) |
| ``aci`` | ACI (online) | baseline | adaptive conformal inference, gamma 0.005 (Gibbs and Candes 2021) |
| ``mapie`` | mapie split conformal | reference | mapie's SplitConformalRegressor, prefit (the reference for ``split``) |
| ``dlinear`` | DLinear | reference | backbone: trend and remainder, one linear map each |
| ``patchtst`` | PatchTST-style transformer | reference | backbone: patches of each channel through a transformer encoder |
| ``mlp`` | MLP | reference | backbone: two hidden layers on the flattened window |
| ``synthetic`` | Synthetic: 6 channels, documented shift | reference | series preset |
| ``co2`` | Mauna Loa CO2, weekly (statsmodels) | reference | series preset |
| ``macro`` | US macro growth, quarterly (statsmodels) | reference | series preset |

(``interface.METHODS``: ``method(ctx) -> Fit``; ``interface.CALIBRATORS``: ``calibrator(alpha, scored, cal_split,
test_split) -> Interval``; ``interface.BACKBONES``: ``backbone(lookback, horizon, channels)`` builds the architecture;
``interface.PRESETS``: ``preset()`` loads the series.)

Shapes: a series ``(T, d)``, channel 0 the target; windows ``x (N, L, d)`` and ``y (N, H, 1)``; every backbone maps
``(B, L, d)`` to ``(B, H, 1)``. ``run_adapt`` / ``run_select`` / ``run_calibrate`` (a preset name or a series, a
config, optionally a user's backbone state) return JSON-able summaries.

Importing this package imports nothing heavy.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "METHODS": "interface", "CALIBRATORS": "interface", "BACKBONES": "interface", "PRESETS": "interface",
    "AdaptContext": "interface", "Fit": "interface", "Calibrator": "interface", "Scored": "interface",
    "Series": "data", "Windows": "data", "make_windows": "data", "read_csv": "data",
    "load_shipped": "backbones", "load_user": "backbones", "read_state": "backbones",
    "adapt": "pipeline", "versus_lora": "pipeline", "select": "pipeline", "calibrate": "pipeline", "delta_sweep": "pipeline",
    "AdaptConfig": "jobs", "AdaptReport": "jobs", "run_adapt": "jobs", "SelectConfig": "jobs", "SelectReport": "jobs",
    "run_select": "jobs", "CalibrateConfig": "jobs", "CalibrateReport": "jobs", "run_calibrate": "jobs",
})
