"""Evaluation of the shipped PBFM models: distribution error and residual per method and seed, the Pareto front,
the gradient geometry of one training step, and an uploaded field against the samples.

The models are the files of ``python -m backend.train pbfm`` (``assets/pbfm_<case>_<method>_s<seed>.safetensors``);
distribution error is the energy distance of ``n`` samples to held-out solver fields (data seed 99, never trained
on), residual the mean |R| of the same samples (:mod:`backend.physics.pbfm.pdes`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ...errors import InputError
from ...runtime import ASSETS, Progress, report
from . import pbfm as B
from .pdes import Case, get_case, mean_abs_residual

HELDOUT_SEED = 99


def asset_path(case: str, stem: str, seed: int) -> Path:
    """``assets/pbfm_<case>_<stem>_s<seed>.safetensors``: the file ``python -m backend.train pbfm`` writes."""
    return ASSETS / f"pbfm_{case}_{stem}_s{seed}.safetensors"


def load_model(case: str, method: str, seed: int = 0) -> tuple[B.Velocity, B.Normaliser]:
    """The trained velocity model of ``method`` (a :data:`backend.physics.pbfm.pbfm.METHODS` name) and its normaliser."""
    from ... import weights
    m = B.METHODS.get(method)
    c = get_case(case)
    path = asset_path(c.name, m.weights, seed)
    cfg = B.PBFMConfig(case=c.name)
    model = B.Velocity(int(np.prod(c.shape)), cfg)
    meta = weights.load_into(model, path)
    norm = B.Normaliser(np.asarray(meta.extra["mean"]), np.asarray(meta.extra["std"]), c.shape)
    return model, norm


def heldout(case: str, n: int = 500) -> np.ndarray:
    return get_case(case).fields(n, HELDOUT_SEED)


@dataclass
class MethodScore:
    method: str
    seed: int
    energy_distance: float
    mean_residual: float
    sample_seconds: float

    def as_dict(self) -> dict[str, object]:
        return {"method": self.method, "label": B.METHODS.label(self.method), "seed": self.seed,
                "energy_distance": self.energy_distance, "mean_residual": self.mean_residual,
                "sample_seconds": self.sample_seconds}


def score(case: str, methods: list[str], seeds: tuple[int, ...] = (0, 1, 2), n: int = 256, steps: int = 50,
          progress: Progress | None = None) -> tuple[list[MethodScore], dict[str, np.ndarray]]:
    """Every method x seed: energy distance and mean residual of ``n`` samples; plus the seed-0 samples per method."""
    c = get_case(case)
    held = heldout(c.name, max(n, 256))
    out, examples = [], {}
    jobs = [(m, s) for m in methods for s in seeds]
    for j, (m, s) in enumerate(jobs):
        model, norm = load_model(c.name, m, s)
        clock = time.perf_counter()
        x = B.METHODS.get(m)(model, norm, c, n, steps=steps, seed=1000 + s)
        sec = time.perf_counter() - clock
        out.append(MethodScore(m, s, B.energy_distance(x, held), float(mean_abs_residual(c, x).mean()), sec))
        if s == seeds[0]:
            examples[m] = x
        report(progress, (j + 1) / len(jobs), f"{B.METHODS.label(m)}, seed {s}")
    return out, examples


def summarise(scores: list[MethodScore]) -> list[dict[str, object]]:
    """Per method: mean and spread (min, max) over seeds of both axes, and whether it is on the Pareto front of the
    methods' means."""
    by: dict[str, list[MethodScore]] = {}
    for s in scores:
        by.setdefault(s.method, []).append(s)
    rows = []
    for m, ss in by.items():
        ed = np.array([s.energy_distance for s in ss])
        rs = np.array([s.mean_residual for s in ss])
        rows.append({"method": m, "label": B.METHODS.label(m), "seeds": len(ss), "energy_distance": float(ed.mean()),
                     "ed_min": float(ed.min()), "ed_max": float(ed.max()), "mean_residual": float(rs.mean()),
                     "res_min": float(rs.min()), "res_max": float(rs.max()),
                     "sample_seconds": float(np.mean([s.sample_seconds for s in ss]))})
    pts = np.array([[r["energy_distance"], r["mean_residual"]] for r in rows])
    for i, r in enumerate(rows):
        r["pareto"] = not any(np.all(pts[j] <= pts[i]) and np.any(pts[j] < pts[i]) for j in range(len(rows)) if j != i)
    return rows


def gradient_dial(case: str, seed: int = 0, batch: int = 128) -> dict[str, object]:
    """One training step's gradients of the shipped PBFM model: g_FM, g_res, their sum and the ConFIG vector, in
    the plane spanned by g_FM and g_res (coordinates), with their cosines and norms."""
    c = get_case(case)
    model, norm = load_model(c.name, "pbfm", seed)
    model.train()
    cfg = B.PBFMConfig(case=c.name)
    fields = c.fields(cfg.n_train, cfg.data_seed)
    X = torch.as_tensor(norm.encode(fields), dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    x1 = X[torch.randint(0, len(X), (batch,), generator=gen)]
    x0 = torch.randn(x1.shape, generator=gen)
    t = torch.rand(batch, generator=gen)
    xt = (1 - t[:, None]) * x0 + t[:, None] * x1
    model.zero_grad()
    ((model(xt, t) - (x1 - x0)) ** 2).mean().backward()
    g_fm = B.grad_vector(model).double()
    model.zero_grad()
    R = c.residual(norm.decode_t(B._unroll(model, xt, t, cfg.max_unroll)))
    (t * R.abs().reshape(batch, -1).mean(1)).mean().backward()
    g_res = B.grad_vector(model).double()
    g_cf = B.config_update(g_fm, g_res).double()
    e1 = g_fm / g_fm.norm()
    r = g_res - (g_res @ e1) * e1
    e2 = r / r.norm() if float(r.norm()) > 0 else torch.zeros_like(e1)
    vecs = {"g_fm": g_fm, "g_res": g_res, "sum": g_fm + g_res, "config": g_cf}
    cos = torch.nn.functional.cosine_similarity
    return {"coords": {k: [float(v @ e1), float(v @ e2)] for k, v in vecs.items()},
            "norms": {k: float(v.norm()) for k, v in vecs.items()},
            "cos": {"fm_res": float(cos(g_fm, g_res, 0)), "config_fm": float(cos(g_cf, g_fm, 0)),
                    "config_res": float(cos(g_cf, g_res, 0)), "sum_res": float(cos(g_fm + g_res, g_res, 0))}}


def nearest_samples(field: np.ndarray, samples: dict[str, np.ndarray], k: int = 3) -> dict[str, list[int]]:
    """Indices of the ``k`` samples of each method nearest to ``field`` (Euclidean)."""
    f = np.asarray(field, dtype=float).reshape(-1)
    out = {}
    for m, x in samples.items():
        d = np.linalg.norm(x.reshape(len(x), -1) - f, axis=1)
        out[m] = np.argsort(d, kind="stable")[:k].tolist()
    return out


def check_field(case: Case, field: np.ndarray) -> dict[str, object]:
    """An uploaded field's residual map and mean |R|."""
    if tuple(field.shape) != case.shape:
        raise InputError(f"The field has shape {tuple(field.shape)}; the {case.name} case needs {case.shape}.")
    R = case.residual(field[None].astype(np.float64))[0]
    return {"residual": R, "mean_residual": float(np.abs(R).mean())}


def config_check(pairs: int = 100, dim: int = 50, seed: int = 0) -> dict[str, float]:
    """ConFIG on random conflicting pairs (cosine < 0): the worst gap between the two cosines, the smallest cosine,
    and the largest difference between the written-out rule and the package (float64)."""
    gen = torch.Generator().manual_seed(seed)
    gaps, mins, diffs, done = [], [], [], 0
    while done < pairs:
        g1 = torch.randn(dim, generator=gen, dtype=torch.float64)
        g2 = torch.randn(dim, generator=gen, dtype=torch.float64) * float(torch.rand(1, generator=gen) * 5 + 0.1)
        if float(g1 @ g2) >= 0:
            continue
        g = B.config_update(g1, g2)
        c1 = float(torch.nn.functional.cosine_similarity(g, g1, 0))
        c2 = float(torch.nn.functional.cosine_similarity(g, g2, 0))
        gaps.append(abs(c1 - c2))
        mins.append(min(c1, c2))
        diffs.append(float((g - B.config_direction(g1, g2)).norm() / g.norm()))
        done += 1
    return {"pairs": pairs, "max_cos_gap": max(gaps), "min_cos": min(mins), "max_rel_diff_to_rule": max(diffs)}
