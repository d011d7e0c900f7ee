"""Image watermarking methods of Method Lab.

Shared building blocks (reused by the attribution, re-watermarking and SIGMark pages):

- :mod:`.registry`: image watermark backends behind ``get_method(name)`` (the learned TinyHiDDeN, invisible-watermark's
  dwtDctSvd and dwtDct).
- :mod:`.attacks`: post-processing attacks behind ``get_method(name)`` and ``apply_chain("jpeg:50+resize:0.5")``,
  WEvade-style white-box and query-limited black-box attacks, and the differentiable training noise layers.
- :mod:`.metrics`: PSNR, SSIM (numpy and differentiable torch), bitwise accuracy.
- :mod:`.learned`: the TinyHiDDeN encoder/decoder (HiDDeN family), safetensors i/o.
- :mod:`.datasets`: offline training/held-out images (scikit-image photos + procedural images).

Watermark-based attribution (arXiv 2404.04254): :mod:`.attribution` (bounds, matching, rates), :mod:`.codes`
(Random / NRG / A-BSTA selection, bit packing), :mod:`.users` (the SQLite users database), :mod:`.attribution_eval`
(end-to-end evaluation), :mod:`.cli` (``python -m backend attribution ...``).

Importing this package imports nothing heavy.
"""
