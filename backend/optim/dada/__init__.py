"""DADA: Dual Averaging with Distance Adaptation.

Paper: Moshtaghifar, Rodomanov, Vankov, Stich, "DADA: Dual Averaging with Distance Adaptation" (ICLR 2026;
arXiv 2501.10258). A parameter-free universal first-order method for convex problems ``min_{x in Q} f(x)``: dual
averaging of gradients normalised by their norms, weighted by a distance estimate ``rbar_k`` that grows with how far
the iterates have travelled from ``x_0``, with ``beta_k = 2 sqrt 2 sqrt(k + 1)``.

Implemented: the method as a batched numpy reference (``dada_numpy``) and as a ``torch.optim.Optimizer`` (``DADA``,
with projection and best-iterate tracking); the baselines GD and AdaGrad-norm over a learning-rate grid and DoG; the
convex test problems (L1, ill-conditioned quadratics, the ``|x|^p`` worst-case chains, logistic / softmax regression on
a bundled or uploaded table; box and simplex constraints; exact or numerical ``f*``); the race and the sensitivity to
the initial guess ``rbar`` (``jobs``). Left out: general norms (every norm here is Euclidean) and the paper's large
experiments (the chain at the paper's d = 10,000 runs in the full test tier only); the formulas follow a secondary
public summary of the paper (see the ``dada`` module).

| name | label | kind | what |
|------|-------|------|------|
| ``dada`` | DADA | ours | dual averaging with distance adaptation (parameter-free) |
| ``dog`` | DoG | baseline | distance over gradients (parameter-free) |
| ``adagrad_norm`` | AdaGrad-norm | baseline | one scalar AdaGrad step size, learning-rate grid |
| ``gd`` | GD | baseline | projected gradient descent, learning-rate grid |
| ``quadratic`` | Ill-conditioned quadratic | reference | problem: ``1/2 sum lambda_i (x_i - c_i)^2``, exact ``f*`` |
| ``l1`` | L1 (nonsmooth) | reference | problem: ``||A (x - x_true)||_1 / n``, ``f* = 0`` |
| ``powerchain`` | ``|x|^p`` worst-case chain | reference | problem: the zero-chain of order p, exact ``f*`` |
| ``logistic`` | Logistic / softmax regression | reference | problem: L2-regularised regression on a table |
| ``breast_cancer`` | Breast cancer | reference | bundled data set: 569 rows, 30 features, 2 classes |
| ``wine`` | Wine | reference | bundled data set: 178 rows, 13 features, 3 classes |
| ``iris`` | Iris | reference | bundled data set: 150 rows, 4 features, 3 classes |

(``baselines.METHODS``, ``problems.PROBLEMS``, ``problems.DATASETS``.)

Shapes (numpy float64; ``B`` settings run as one batch, ``K`` iterations, ``d`` the dimension):
``dada_numpy(value_and_grad: [B, d] -> ([B], [B, d]), x0: [d], K) -> Trace`` with ``f``, ``rbar``: ``[B, K + 1]`` and
``x_last``, ``x_best``: ``[B, d]``; ``Problem.f``/``grad``/``project`` act on ``[..., d]``; ``Table.X``: ``[n, p]``
standardised features plus a bias column, ``Table.y``: ``[n]`` labels 0..C-1. ``run_race`` / ``run_sensitivity``
return JSON-able summaries (curves as lists).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "DADA": "dada", "dada_numpy": "dada", "default_rbar": "dada", "Trace": "dada",
    "METHODS": "baselines", "get_method": "baselines", "race": "baselines", "RaceCurves": "baselines",
    "PROBLEMS": "problems", "DATASETS": "problems", "Problem": "problems", "Table": "problems",
    "make_problem": "problems", "load_csv_table": "problems", "bundled_table": "problems",
    "ProblemConfig": "jobs", "RaceConfig": "jobs", "SensitivityConfig": "jobs", "RaceResult": "jobs",
    "SensitivityResult": "jobs", "run_race": "jobs", "run_sensitivity": "jobs",
})
