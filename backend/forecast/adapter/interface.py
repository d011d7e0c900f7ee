"""The registries of the delta-Adapter page (the pysteps ``interface`` pattern).

Adaptation methods (``METHODS``; the object is the method's key in :func:`.pipeline.adapt`):

| name     | kind     | method                                                                                  |
|----------|----------|-----------------------------------------------------------------------------------------|
| ada_xy   | ours     | Ada-X+Y: input nudge and output correction, bounded by delta (Liang et al., ICLR 2026)  |
| ada_x    | ablation | Ada-X only (input nudge)                                                                |
| ada_y    | ablation | Ada-Y only (output correction seeing the forecast)                                      |
| frozen   | baseline | the frozen backbone                                                                     |
| finetune | baseline | full fine-tuning of the backbone                                                        |
| lora     | baseline | LoRA-style low-rank update of its linear weights (Hu et al., ICLR 2022)                 |
| revin    | baseline | RevIN-style per-window re-normalisation (Kim et al., ICLR 2022)                         |
| refit    | baseline | online (recursive least squares) refit of the last linear layer                         |
| ewma     | baseline | residual EWMA bias correction                                                           |

Calibrators (``CALIBRATORS``): ``cc`` Conformal Corrector with the finite-sample rank (ours), ``cc_plain`` with the
paper's plain quantile (ablation), ``qc`` Quantile Calibrator (ours), ``split`` constant-width split conformal,
``residual`` empirical residual quantiles, ``cqr`` conformalised quantile regression on QC (Romano et al. 2019),
``aci`` adaptive conformal inference (Gibbs & Candes 2021), ``mapie`` mapie's split conformal (reference).

Backbones (``BACKBONES``): ``dlinear``, ``patchtst``, ``mlp``. Presets (``PRESETS``): ``synthetic``, ``co2``,
``macro``. This module imports no torch.
"""

from __future__ import annotations

from backend.registry import Registry

METHODS: Registry[str] = Registry("adaptation method")
METHODS.add("ada_xy", "ada_xy", label="Ada-X+Y (ours)", kind="ours", color="#d62728",
            about="input nudge + output correction, each bounded by delta")
METHODS.add("ada_x", "ada_x", label="Ada-X (input nudge)", kind="ablation", color="#ff7f0e",
            about="input nudge only")
METHODS.add("ada_y", "ada_y", label="Ada-Y (output correction)", kind="ablation", color="#e377c2",
            about="output correction only")
METHODS.add("frozen", "frozen", label="Frozen backbone", kind="baseline", color="#7f7f7f",
            about="the deployed model, untouched")
METHODS.add("finetune", "finetune", label="Full fine-tuning", kind="baseline", color="#1f77b4",
            about="every backbone weight trained on the post-shift data")
METHODS.add("lora", "lora", label="LoRA (rank 4)", kind="baseline", color="#17becf",
            about="low-rank update of every linear weight")
METHODS.add("revin", "revin", label="RevIN re-normalisation", kind="baseline", color="#2ca02c",
            about="per-window standardisation around the frozen model")
METHODS.add("refit", "refit", label="Last-layer refit (online RLS)", kind="baseline", color="#9467bd",
            about="ridge towards the frozen weights, the closed form of recursive least squares")
METHODS.add("ewma", "ewma", label="Residual EWMA", kind="baseline", color="#8c564b",
            about="forecast + exponentially weighted mean of observed residuals")

CALIBRATORS: Registry[str] = Registry("calibrator")
CALIBRATORS.add("cc", "cc", label="Conformal Corrector (ours)", kind="ours", color="#d62728",
                about="scale net + finite-sample rank ceil((n+1)(1-alpha))")
CALIBRATORS.add("qc", "qc", label="Quantile Calibrator (ours)", kind="ours", color="#ff7f0e",
                about="monotone quantile heads on the frozen forecast")
CALIBRATORS.add("cc_plain", "cc_plain", label="CC, plain quantile (paper's code)", kind="ablation",
                color="#e377c2", about="empirical 1-alpha quantile of the scores")
CALIBRATORS.add("split", "split", label="Split conformal (constant width)", kind="baseline", color="#1f77b4",
                about="|y - y_hat| scores, finite-sample rank")
CALIBRATORS.add("residual", "residual", label="Empirical residual quantiles", kind="baseline", color="#2ca02c",
                about="signed residual quantiles per horizon step")
CALIBRATORS.add("cqr", "cqr", label="CQR on QC", kind="baseline", color="#9467bd",
                about="conformalised quantile regression")
CALIBRATORS.add("aci", "aci", label="ACI (online)", kind="baseline", color="#8c564b",
                about="adaptive conformal inference, gamma 0.005")
CALIBRATORS.add("mapie", "mapie", label="mapie split conformal", kind="reference", color="#bcbd22",
                about="mapie 1.6 SplitConformalRegressor, prefit")

BACKBONES: Registry[str] = Registry("backbone")
BACKBONES.add("dlinear", "dlinear", label="DLinear", kind="reference", color="#7f7f7f")
BACKBONES.add("patchtst", "patchtst", label="PatchTST-style transformer", kind="reference", color="#393b79")
BACKBONES.add("mlp", "mlp", label="MLP", kind="reference", color="#637939")

PRESETS: Registry[str] = Registry("series preset")
PRESETS.add("synthetic", "synthetic", label="Synthetic: 6 channels, documented shift", kind="reference")
PRESETS.add("co2", "co2", label="Mauna Loa CO2, weekly (statsmodels)", kind="reference")
PRESETS.add("macro", "macro", label="US macro growth, quarterly (statsmodels)", kind="reference")

get_method = METHODS.get
get_calibrator = CALIBRATORS.get

__all__ = ["BACKBONES", "CALIBRATORS", "METHODS", "PRESETS", "get_calibrator", "get_method"]
