"""Watermarking methods of Method Lab: one sub-package per method beside the pieces they share.

Methods (each with its ``cli`` module, the catalog's ``python -m backend <id> ...`` group):

- :mod:`.attribution`: watermark-based attribution (arXiv 2404.04254): ``bounds`` (the paper's bounds, matching,
  rates), ``evaluation`` (end-to-end evaluation), ``users`` (the SQLite users database), ``jobs``, ``inputs``,
  ``cli``.
- :mod:`.rewatermark`: the self-re-watermarking trap: ``core`` (victims, the attacks, evaluation), ``lipschitz``
  (the Lipschitz-constrained SRW encoder/decoder and its training step), ``diagnose``, ``jobs``, ``inputs``, ``cli``.
- :mod:`.sigmark`: SIGMark blind video watermarking: ``messages``, ``gfprc``, ``sgo``, ``baselines``, ``evaluation``,
  ``tiny``, ``channel`` (the tiny video diffusion model), ``networks`` (its network classes), ``jobs``, ``inputs``,
  ``cli``.

Shared pieces:

- :mod:`.registry`: image watermark backends (``BACKENDS``, a :class:`backend.registry.Registry` whose entries load
  the backend when called; ``get_method``).
- :mod:`.learned`: the TinyHiDDeN encoder/decoder (HiDDeN family); :mod:`.classical`: invisible-watermark baselines
  (``METHODS``, each entry called with ``n_bits`` makes the watermark).
- :mod:`.codes`: watermark selection (``STRATEGIES``: Random / NRG / A-BSTA, each entry called selects codes) and bit
  packing; :mod:`.prc`: the PRC watermark code.
- :mod:`.attacks`: the one attack grammar for images and videos (``"jpeg:50+resize:0.5"``, a table of attacks with
  units), WEvade-style adversarial attacks and the differentiable training noise layers.
- :mod:`.metrics`: PSNR, SSIM (numpy and differentiable torch), bitwise accuracy.
- :mod:`.datasets`: offline training/held-out images (scikit-image photos + procedural images).

Importing this package imports nothing heavy.
"""
