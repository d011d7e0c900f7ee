"""Forecasting methods of Method Lab: ``precip/`` (RainPro-8 style probabilistic precipitation nowcasting with pysteps
baselines); other subpackages (e.g. ``crowd/``) live beside it. Importing this package imports nothing heavy."""
