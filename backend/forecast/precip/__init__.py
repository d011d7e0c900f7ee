"""Probabilistic precipitation nowcasting (catalog id ``nowcast``), after RainPro-8 (Pablos Sarabia et al., ICLR 2026,
arXiv 2505.10271), on a synthetic miniature world, with pysteps as the classical anchor.

Modules:
- ``synthetic``: the synthetic world (rain, satellite-like and NWP-like channels) and its documented error statistics.
- ``model``: the compact multi-source network with ordered exceedance outputs (and the MSE U-Net baseline).
- ``baselines``: the registry of nowcasting methods (``get_method(name)``): pysteps persistence, extrapolation, S-PROG,
  STEPS, blended STEPS, the NWP channel, the MSE U-Net and the model.
- ``verify``: CSI, FSS, Brier, threshold-integrated CRPS, reliability, rank histogram (pysteps where it serves).
- ``io``: validated radar uploads (NPZ, NetCDF classic, PNG stacks) and forecast export.
- ``pipeline``: run methods on a case and score them (used by the page, the CLI, the benchmark and the tests).
- ``cli``: ``python -m backend nowcast ...``.

Importing this package imports neither torch nor pysteps.
"""
