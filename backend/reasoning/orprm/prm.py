"""OR-PRM's process reward model here: a logistic head on features of each modelling step, read against the
problem's statement, trained on step labels at the first flaw (``python -m backend.train orprm``).

The paper's OR-PRM is a generative LLM that critiques each step in words and corrects the first flaw; this one is
discriminative: it scores each step of a formulation (sets, parameters, variables, objective, one per constraint
block, the recorded solution) with P(no flaw up to this step).

Features of step t (:data:`FEATURES`, each in [0, 1]; 1 where a feature does not apply to the step's kind):

- ``found``: share of the step's numbers that the problem states anywhere (parameters);
- ``placed``: share of the step's numbers equal to the stated number of the same entity (parameters);
- ``structure``: agreement of the step's structure with the statement (set members, parameter indices, variable
  indices and domains, objective sense and terms, a constraint block's index, sense and terms);
- ``coverage``: every stated constraint block that belongs before this one is present (constraint steps); share
  of the stated blocks present (solution step);
- ``executes``, ``feasible``, ``reproduced``: the solution step's outcome: the model solves; its solution
  satisfies the stated constraints; the recorded optimum equals the stated objective there;

then the running minimum of the seven over steps 1..t (a flaw stays visible in later steps) and a one-hot of the
step's kind. Shapes: features [S, F] per formulation (S steps, F = 20); the model's ``w`` [F].

- :func:`step_features` ``(stated, form)`` -> ([S, F], the shared :class:`backend.reasoning.orprm.gates.Context`);
- :func:`step_labels` ``(n_steps, flaw_step)`` -> [S] in {0, 1} (1 before the first flaw, 0 from it on);
- :class:`PRM`: ``step_scores(X)`` -> [S] in (0, 1), ``score(X)`` = the minimum step score;
- :func:`fit` ``(X, y)`` -> :class:`PRM`: class-balanced L2 logistic regression (L-BFGS, deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .formulation import STEP_KINDS, steps, violations
from .gates import REL_TOL, Context, _terms

GROUNDING = ("found", "placed", "structure", "coverage", "executes", "feasible", "reproduced")
FEATURES = GROUNDING + tuple(f"min_{g}" for g in GROUNDING) + tuple(f"kind_{k}" for k in STEP_KINDS)


def _values(p: dict) -> np.ndarray:
    return np.asarray(p["values"], dtype=float).ravel()


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b) <= 1e-9 * np.maximum(1.0, np.abs(b))


def _parameters(stated: dict, form: dict) -> tuple[float, float, float]:
    pool = np.concatenate([_values(p) for p in stated["parameters"].values()] or [np.zeros(0)])
    found, placed, n = 0.0, 0.0, 0
    for name, p in form["parameters"].items():
        v = _values(p)
        n += v.size
        found += float(sum(_close(x, pool).any() for x in v)) if pool.size else 0.0
        s = stated["parameters"].get(name)
        if s is not None and s["over"] == p["over"] and _values(s).size == v.size:
            placed += float(_close(v, _values(s)).sum())
    names = [p for p in stated["parameters"] if p in form["parameters"]
             and form["parameters"][p]["over"] == stated["parameters"][p]["over"]]
    struct = len(names) / max(1, len(stated["parameters"]))
    return (found / n if n else 1.0), (placed / n if n else 1.0), struct


def _variables(stated: dict, form: dict) -> float:
    sv = {v["name"]: v for v in stated["variables"]}
    ok = [float(v["name"] in sv and sv[v["name"]]["over"] == v["over"] and sv[v["name"]]["domain"] == v["domain"])
          for v in form["variables"]]
    return float(np.mean(ok)) * min(1.0, len(form["variables"]) / max(1, len(stated["variables"])))


def _objective(stated: dict, form: dict) -> float:
    a, b = form["objective"], stated["objective"]
    return 0.5 * float(a["sense"] == b["sense"]) + 0.5 * float(_terms(a["terms"]) == _terms(b["terms"]))


def _constraint(stated: dict, con: dict) -> float:
    sc = {c["name"]: c for c in stated["constraints"]}.get(con["name"])
    if sc is None:
        return 0.0
    return float(np.mean([1.0, sc["over"] == con["over"], sc["sense"] == con["sense"],
                          _terms(sc["terms"]) == _terms(con["terms"])]))


def _coverage(stated: dict, form: dict, upto: int | None) -> float:
    """``upto``: the index of a constraint block of ``form`` (its stated predecessors present before it), or None
    for the share of every stated block present."""
    names = [c["name"] for c in stated["constraints"]]
    have = [c["name"] for c in form["constraints"]]
    if upto is None:
        return sum(n in have for n in names) / max(1, len(names))
    me = have[upto]
    if me not in names:
        return 1.0
    before = names[: names.index(me)]
    return float(all(n in have[:upto] for n in before))


def _solution(ctx: Context) -> tuple[float, float, float]:
    sol = ctx.solved()
    if sol is None or sol.status != "optimal":
        return 0.0, 0.0, 0.0
    x = ctx.mapped()
    if x is None:
        return 1.0, 0.0, 0.0
    m = ctx.stated_model
    assert m is not None
    feasible = float(not violations(m, x))
    value = float(m.c @ x)
    label = ctx.form.get("label")
    reproduced = 1.0 if label is None else float(abs(float(label) - value) <= REL_TOL * max(1.0, abs(value)))
    return 1.0, feasible, reproduced


def step_features(stated: dict, form: dict, ctx: Context | None = None) -> tuple[np.ndarray, Context]:
    """[S, F] features of ``form``'s steps against the problem's statement ``stated`` (see the module docstring)."""
    ctx = ctx if ctx is not None else Context(stated, form)
    rows = []
    block = 0
    for st in steps(form):
        g = dict.fromkeys(GROUNDING, 1.0)
        if st.kind == "sets":
            g["structure"] = float(np.mean([form["sets"].get(s) == v for s, v in stated["sets"].items()] or [1.0]))
        elif st.kind == "parameters":
            g["found"], g["placed"], g["structure"] = _parameters(stated, form)
        elif st.kind == "variables":
            g["structure"] = _variables(stated, form)
        elif st.kind == "objective":
            g["structure"] = _objective(stated, form)
        elif st.kind == "constraint":
            g["structure"] = _constraint(stated, form["constraints"][block])
            g["coverage"] = _coverage(stated, form, block)
            block += 1
        else:
            g["coverage"] = _coverage(stated, form, None)
            g["executes"], g["feasible"], g["reproduced"] = _solution(ctx)
        rows.append([g[k] for k in GROUNDING] + [float(st.kind == k) for k in STEP_KINDS])
    X = np.asarray(rows, dtype=float)
    G = X[:, : len(GROUNDING)]
    prefix = np.minimum.accumulate(G, axis=0)
    return np.concatenate([G, prefix, X[:, len(GROUNDING):]], axis=1), ctx


def step_labels(n_steps: int, flaw_step: int | None) -> np.ndarray:
    """[S]: 1 before the first flawed step, 0 from it on (all 1 for a clean formulation)."""
    y = np.ones(n_steps)
    if flaw_step is not None:
        y[min(flaw_step, n_steps - 1):] = 0.0
    return y


@dataclass
class PRM:
    """P(no flaw up to step t) = sigmoid(w . (x_t - mean) / std + b)."""

    mean: np.ndarray
    std: np.ndarray
    w: np.ndarray
    b: float

    def step_scores(self, X: np.ndarray) -> np.ndarray:
        z = ((np.asarray(X, dtype=float) - self.mean) / self.std) @ self.w + self.b
        return np.clip(1.0 / (1.0 + np.exp(-z)), 1e-6, 1 - 1e-6)

    def score(self, X: np.ndarray) -> float:
        """A formulation's score: its weakest step."""
        return float(self.step_scores(X).min())

    @property
    def parameters(self) -> int:
        return int(self.w.size + 1)

    def state(self) -> dict[str, Any]:
        import torch

        return {"mean": torch.tensor(self.mean), "std": torch.tensor(self.std), "w": torch.tensor(self.w),
                "b": torch.tensor([self.b], dtype=torch.float64)}

    @classmethod
    def from_state(cls, s: dict[str, Any]) -> PRM:
        return cls(s["mean"].double().numpy(), s["std"].double().numpy(), s["w"].double().numpy(), float(s["b"][0]))


def fit(X: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> PRM:
    """Class-balanced L2 logistic regression on standardised features (L-BFGS from zero: deterministic)."""
    from scipy.optimize import minimize

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    mean, std = X.mean(0), X.std(0) + 1e-6
    Z = (X - mean) / std
    pos, neg = max(y.sum(), 1.0), max(len(y) - y.sum(), 1.0)
    wt = np.where(y > 0.5, len(y) / (2 * pos), len(y) / (2 * neg))

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = Z @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        ll = wt * (np.logaddexp(0.0, z) - y * z)
        g = wt * (p - y)
        return float(ll.mean() + l2 * w @ w / 2), np.append(Z.T @ g / len(y) + l2 * w, g.mean())

    res = minimize(loss, np.zeros(Z.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return PRM(mean, std, res.x[:-1].copy(), float(res.x[-1]))
