"""Model compression methods. ``pruning``: RCPU structured pruning with rotation-constrained compensation
(arXiv 2510.07782) and its baselines (Wanda-sp, FLAP, ridge least squares); ``corpus`` the offline text, ``lmtools``
measuring and exporting pruned LMs, ``lab`` the one-layer study, ``jobs`` the page/CLI jobs, ``cli`` the
``python -m backend pruning`` group. Importing this package imports no torch."""
