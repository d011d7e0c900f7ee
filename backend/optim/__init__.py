"""Optimisation methods. ``dada``: Dual Averaging with Distance Adaptation (ICLR 2026) as a numpy reference and a
``torch.optim.Optimizer`` (``from backend.optim.dada import DADA``); ``baselines``: GD, AdaGrad-norm, DoG and the race;
``problems``: L1, ill-conditioned quadratics, |x|^p worst-case chains, logistic/softmax regression, box/simplex
constraints. CLI group ``dada`` (``backend.optim.cli``)."""
