"""Forecasting methods.

Method packages: :mod:`backend.forecast.nowcast` (RainPro-8 style probabilistic precipitation nowcasting with pysteps
baselines, its synthetic world and the ``radar`` input kind), :mod:`backend.forecast.crowd` (STDDN crowd simulation),
:mod:`backend.forecast.deltaadapter` (delta-Adapter post-processing of frozen forecasters) and
:mod:`backend.forecast.nextmotion` (What Happens Next?: K futures of a point-trajectory grid from one image).
Shared modules: none. Importing this package imports nothing heavy.
"""
