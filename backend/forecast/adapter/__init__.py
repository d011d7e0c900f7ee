"""delta-Adapter: bounded post-processing of a frozen time-series forecaster (Liang et al., "The Forecast After the
Forecast: A Post-Processing Shift in Time Series", ICLR 2026, arXiv 2601.20280).

Modules (read in this order):

* ``data``         the synthetic multichannel series with its documented regime shift, the packaged real series
                   (statsmodels' weekly Mauna Loa CO2 and US quarterly macro growth rates), the user's CSV, windows and
                   the four chronological splits;
* ``backbones``    the frozen forecasters: DLinear, a PatchTST-style patch transformer, an MLP; training and shipped
                   weights;
* ``training``     one early-stopping trainer shared by every learned post-processor;
* ``adapters``     Ada-X, Ada-Y, Ada-X+Y (additive / multiplicative, bounded by delta through tanh) and the
                   Gumbel-sigmoid feature mask with a budget;
* ``calibration``  the Quantile Calibrator, the Conformal Corrector, split conformal, empirical residual quantiles, CQR,
                   ACI and the coverage metrics;
* ``baselines``    full fine-tuning, LoRA, RevIN-style re-normalisation, the online last-layer refit, the residual EWMA;
* ``pipeline``     one run on a preset or a series: every method on the same post-shift data, costs beside quality;
* ``interface``    the registries (methods, calibrators, backbones, presets);
* ``cli``          ``python -m backend deltaadapter ...``.

Importing this package imports nothing heavy.
"""
