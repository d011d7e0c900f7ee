"""Evaluation of the shipped PBFM models: distribution error and residual per method and seed, the Pareto front,
the gradient geometry of one training step, and an uploaded field against the samples.

The models are the files of ``python -m backend.train pbfm`` (``assets/pbfm_<case>_<method>_s<seed>.safetensors``);
distribution error is the energy distance of ``n`` samples to held-out solver fields (data seed 99, never trained
on), residual the mean |R| of the same samples (:mod:`backend.physics.pbfm.pdes`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
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


def get_method(method: str) -> B.Method:
    """A method of :data:`~backend.physics.pbfm.pbfm.METHODS` or a model of
    :data:`~backend.physics.pbfm.pbfm.DIAGNOSTICS`."""
    return B.DIAGNOSTICS.get(method) if method in B.DIAGNOSTICS else B.METHODS.get(method)


def load_model(case: str, method: str, seed: int = 0) -> tuple[B.Velocity, B.Normaliser]:
    """The trained velocity model of ``method`` (a :data:`backend.physics.pbfm.pbfm.METHODS` or
    :data:`~backend.physics.pbfm.pbfm.DIAGNOSTICS` name) and its normaliser."""
    from ... import weights
    m = get_method(method)
    c = get_case(case)
    if c.name not in m.cases:
        raise InputError(f"{B.METHODS.label(method) if method in B.METHODS else method} has no {c.name} models "
                         f"(it is trained for {', '.join(m.cases)}).")
    path = asset_path(c.name, m.weights, seed)
    cfg = m.config(B.PBFMConfig(case=c.name))
    model = B.Velocity(int(np.prod(c.shape)), cfg)
    meta = weights.load_into(model, path)
    norm = B.Normaliser(np.asarray(meta.extra["mean"]), np.asarray(meta.extra["std"]), c.shape)
    return model, norm


def channel_scales(case: str) -> np.ndarray:
    """The per-channel standard deviation ``[C]`` of the 500 held-out solver fields: the scale that standardises
    each channel before a distance is taken (on raw Darcy fields log k, std about 0.8, outweighs u, std about 0.07,
    and a raw distance hardly sees u)."""
    h = heldout(case, 500)
    axes = tuple(i for i in range(h.ndim) if i != 1)
    return h.std(axis=axes)


def standardise(fields: np.ndarray, case: str) -> np.ndarray:
    """``fields`` ``[n, C, ...]`` with each channel divided by its held-out standard deviation."""
    sc = channel_scales(case)
    return np.asarray(fields) / sc.reshape(1, -1, *[1] * (np.ndim(fields) - 2))


def standardised_energy_distance(x: np.ndarray, held: np.ndarray, case: str | None = None) -> float:
    """Energy distance on standardised channels (the case is inferred from the shape when not named)."""
    name = case or next(c for c in ("darcy", "heat") if get_case(c).shape == tuple(np.shape(x)[1:]))
    return B.energy_distance(standardise(x, name), standardise(held, name))


@lru_cache(maxsize=4)
def _heldout(case: str, n: int) -> np.ndarray:
    return get_case(case).fields(n, HELDOUT_SEED)


def heldout(case: str, n: int = 500) -> np.ndarray:
    """The first ``n`` of the held-out solver fields (data seed 99; the first ``n`` of a draw of 500, so a smaller
    set is a fixed subset of the 500)."""
    return _heldout(get_case(case).name, max(n, 500))[:n].copy()


@dataclass
class Evaluated:
    """One model's ``n`` samples scored against the held-out fields: per-sample residuals and the distances an
    energy distance is made of (on standardised channels), kept so that intervals can resample the samples.

    ``d_xh[i]``: mean distance of sample ``i`` to the held-out fields; ``d_xx``: ``[n, n]`` distances between the
    samples; ``hh``: mean distance between distinct held-out fields."""

    method: str
    seed: int
    samples: np.ndarray
    residual: np.ndarray
    d_xh: np.ndarray
    d_xx: np.ndarray
    hh: float
    seconds: float

    def energy_distance(self, w: np.ndarray | None = None) -> float:
        """Energy distance with sample weights ``w`` (bootstrap counts; None: each sample once). Pairs of copies of
        one sample are left out of the within-set term, as the unbiased estimator leaves out ``i = j``."""
        if w is None:
            w = np.ones(len(self.residual))
        W = float(w.sum())
        xx = float(w @ self.d_xx @ w) / max(W * W - float(w @ w), 1e-12)
        return 2.0 * float(w @ self.d_xh) / W - xx - self.hh


def _distances(x: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    A = torch.as_tensor(x.reshape(len(x), -1), dtype=torch.float64)
    H = torch.as_tensor(held.reshape(len(held), -1), dtype=torch.float64)
    hh = float(torch.cdist(H, H).sum() / (len(H) * (len(H) - 1)))
    return torch.cdist(A, H).mean(1).numpy(), torch.cdist(A, A).numpy(), hh


def evaluate(case: str, method: str, seed: int, n: int, steps: int = 50, n_held: int = 500) -> Evaluated:
    """Draw ``n`` samples of ``method``'s seed-``seed`` model (noise seed ``1000 + seed``: every method starts from
    the same noise, so sample ``i`` of two methods is a pair) and score them against the first ``n_held`` held-out
    fields on standardised channels."""
    c = get_case(case)
    held = standardise(heldout(c.name, n_held), c.name)
    model, norm = load_model(c.name, method, seed)
    clock = time.perf_counter()
    m = get_method(method)
    x = m(model, norm, c, n, steps=steps, seed=1000 + seed)
    sec = time.perf_counter() - clock
    d_xh, d_xx, hh = _distances(standardise(x, c.name), held)
    return Evaluated(method, seed, x, mean_abs_residual(c, x), d_xh, d_xx, hh, sec)


@dataclass
class MethodScore:
    method: str
    seed: int
    energy_distance: float  # standardised channels
    ed_channels: list[float]  # per channel, standardised
    energy_distance_raw: float
    mean_residual: float
    noise_std: float
    noise_rel: float
    solution_error: float | None  # Darcy: median relative RMS error of u against the solver's u for its log k
    sample_seconds: float

    def as_dict(self) -> dict[str, object]:
        return {"method": self.method, "label": label(self.method), "seed": self.seed,
                "energy_distance": self.energy_distance, "ed_channels": self.ed_channels,
                "energy_distance_raw": self.energy_distance_raw, "mean_residual": self.mean_residual,
                "noise_std": self.noise_std, "noise_rel": self.noise_rel, "solution_error": self.solution_error,
                "sample_seconds": self.sample_seconds}


def label(method: str) -> str:
    return B.DIAGNOSTICS.label(method) if method in B.DIAGNOSTICS else B.METHODS.label(method)


def method_score(case: str, ev: Evaluated, n_held: int = 500) -> MethodScore:
    """The page's numbers of one evaluated model."""
    c = get_case(case)
    held = heldout(c.name, n_held)
    r = float(ev.residual.mean())
    ne = noise_equivalent(c.name, r)
    sol = float(np.median(darcy_solution_error(ev.samples))) if c.name == "darcy" else None
    return MethodScore(ev.method, ev.seed, ev.energy_distance(), channel_energy_distances(ev.samples, held, c.name),
                       B.energy_distance(ev.samples, held), r, ne["noise_std"], ne["noise_rel"], sol, ev.seconds)


def score(case: str, methods: list[str], seeds: tuple[int, ...] = (0, 1, 2), n: int = 256, steps: int = 50,
          progress: Progress | None = None, n_held: int = 500,
          keep: dict | None = None) -> tuple[list[MethodScore], dict[str, np.ndarray]]:
    """Every method x seed: the distribution error (energy distance to the first ``n_held`` held-out fields on
    standardised channels, and per channel), the mean residual and its noise-equivalent of ``n`` samples; plus the
    seed-0 samples per method. ``keep``: a dict that receives the :class:`Evaluated` of every (method, seed)."""
    c = get_case(case)
    out, examples = [], {}
    jobs = [(m, s) for m in methods for s in seeds]
    for j, (m, s) in enumerate(jobs):
        ev = evaluate(c.name, m, s, n, steps, n_held)
        if keep is not None:
            keep[(m, s)] = ev
        out.append(method_score(c.name, ev, n_held))
        if s == seeds[0]:
            examples[m] = ev.samples
        report(progress, (j + 1) / len(jobs), f"{label(m)}, seed {s}")
    return out, examples


def summarise(scores: list[MethodScore]) -> list[dict[str, object]]:
    """Per method: mean and spread (min, max) over seeds of both axes, the per-channel distances, the
    noise-equivalent std, and whether it is on the Pareto front of the methods' means (point estimates)."""
    by: dict[str, list[MethodScore]] = {}
    for s in scores:
        by.setdefault(s.method, []).append(s)
    rows = []
    for m, ss in by.items():
        ed = np.array([s.energy_distance for s in ss])
        rs = np.array([s.mean_residual for s in ss])
        ch = np.mean([s.ed_channels for s in ss], axis=0)
        sol = [s.solution_error for s in ss if s.solution_error is not None]
        rows.append({"method": m, "label": label(m), "seeds": len(ss), "energy_distance": float(ed.mean()),
                     "ed_min": float(ed.min()), "ed_max": float(ed.max()),
                     **{f"ed_channel_{i}": float(v) for i, v in enumerate(ch)},
                     "energy_distance_raw": float(np.mean([s.energy_distance_raw for s in ss])),
                     "mean_residual": float(rs.mean()), "res_min": float(rs.min()), "res_max": float(rs.max()),
                     "noise_std": float(np.mean([s.noise_std for s in ss])),
                     "noise_rel": float(np.mean([s.noise_rel for s in ss])),
                     "solution_error": float(np.mean(sol)) if sol else None,
                     "sample_seconds": float(np.mean([s.sample_seconds for s in ss]))})
    pts = np.array([[r["energy_distance"], r["mean_residual"]] for r in rows])
    for i, r in enumerate(rows):
        r["pareto"] = not any(np.all(pts[j] <= pts[i]) and np.any(pts[j] < pts[i]) for j in range(len(rows)) if j != i)
    return rows


# ------------------------------------------------------------------------------------------------ paired intervals
def _pooled(evs: dict, method: str, seeds: tuple[int, ...]) -> list[Evaluated]:
    return [evs[(method, s)] for s in seeds]


def _seed_weights(idx: np.ndarray, n: int, k: int) -> list[np.ndarray]:
    w = np.bincount(idx.astype(int), minlength=n * k).astype(float)
    return [w[i * n:(i + 1) * n] for i in range(k)]


def compare(evs: dict, a: str, b: str, seeds: tuple[int, ...], n_boot: int = 1000, seed: int = 0,
            ratio: bool = True) -> dict:
    """``a`` minus ``b`` on both axes, with paired percentile-bootstrap intervals: the units are the (model seed,
    sample) pairs, sample ``i`` of both methods drawn from the same noise; a resample keeps the units of both
    methods together and recomputes each seed's energy distance (then the mean over seeds) and the mean residual.
    Returns ``{"ed": PairedCI, "res": PairedCI, "res_ratio": PairedCI}`` (``res_ratio``: ``b``'s mean residual over
    ``a``'s; left out when not ``ratio``) and the same over the model seeds alone (``ed_seeds``, ``res_seeds``, ``res_ratio_seeds``: Student-t
    intervals of the per-seed differences, which see the spread between trained models and not the estimator's).
    """
    from ...stats import paired_bootstrap, paired_ci

    A, Bv = _pooled(evs, a, seeds), _pooled(evs, b, seeds)
    n, k = len(A[0].residual), len(seeds)
    units = np.arange(n * k)
    ra, rb = np.concatenate([e.residual for e in A]), np.concatenate([e.residual for e in Bv])

    def ed_diff(idx: np.ndarray) -> float:
        ws = _seed_weights(idx, n, k)
        return float(np.mean([ea.energy_distance(w) - eb.energy_distance(w) for ea, eb, w in zip(A, Bv, ws)
                              if w.sum() > 1]))

    ed_a, ed_b = [e.energy_distance() for e in A], [e.energy_distance() for e in Bv]
    res_a, res_b = [float(e.residual.mean()) for e in A], [float(e.residual.mean()) for e in Bv]
    out = {"ed_seeds": paired_ci(ed_a, ed_b), "res_seeds": paired_ci(res_a, res_b),
           "ed": paired_bootstrap(ed_diff, units, n_boot=n_boot, seed=seed),
           "res": paired_bootstrap(lambda i: float(ra[i.astype(int)].mean() - rb[i.astype(int)].mean()), units,
                                   n_boot=n_boot, seed=seed)}
    if ratio:
        out["res_ratio_seeds"] = paired_ci(np.array(res_b) / np.array(res_a), np.zeros(k))
        out["res_ratio"] = paired_bootstrap(lambda i: float(rb[i.astype(int)].mean() / ra[i.astype(int)].mean()),
                                            units, n_boot=n_boot, seed=seed)
    return out


def pareto_reading(evs: dict, seeds: tuple[int, ...], ours: str = "pbfm", n_boot: int = 1000) -> dict:
    """``ours`` against every other evaluated method with the estimator's noise and the seeds: per competitor the
    gains of ``ours`` (competitor minus ours, positive = ours better) on both axes, relative to ours, with two
    intervals each: the paired bootstrap over samples (the estimator's noise) and the Student-t interval over the
    model seeds; an axis's interval is the union of the two.

    Against one competitor ``ours`` is resolved off the front when both axes' intervals lie below zero, resolved on
    it when one axis's interval lies above zero, and unresolved otherwise; the axis that decides (``axis``) is the
    one above zero, else one whose interval holds zero, else the nearer to zero. The decisive competitor is the
    worst for ``ours`` (resolved off, then unresolved, then resolved on; within a class the smaller lower end), and
    ``edge`` is its deciding axis's interval: above zero when ``ours`` is resolved on the front against every
    method, below zero when some method is better on both axes beyond the noise, holding zero otherwise."""
    methods = sorted({m for m, _ in evs if m != ours})
    ours_ed = abs(float(np.mean([evs[(ours, s)].energy_distance() for s in seeds])))
    ours_res = float(np.mean([evs[(ours, s)].residual.mean() for s in seeds]))
    rows = {}
    for m in methods:
        cmp = compare(evs, m, ours, seeds, n_boot=n_boot, ratio=False)
        axes = {}
        for ax, scale in (("ed", ours_ed), ("res", ours_res)):
            bt, sd = cmp[ax], cmp[f"{ax}_seeds"]
            axes[ax] = {"gain": bt.mean / scale, "samples": [bt.low / scale, bt.high / scale],
                        "seeds": [sd.low / scale, sd.high / scale], "lower": min(bt.low, sd.low) / scale,
                        "upper": max(bt.high, sd.high) / scale}
        above = [ax for ax in axes if axes[ax]["lower"] > 0]
        if above:
            axis, cls = max(above, key=lambda ax: axes[ax]["lower"]), 2
        elif all(a["upper"] < 0 for a in axes.values()):
            axis, cls = max(axes, key=lambda ax: axes[ax]["upper"]), 0
        else:
            axis, cls = max((ax for ax in axes if axes[ax]["upper"] >= 0), key=lambda ax: axes[ax]["lower"]), 1
        rows[m] = {"axes": axes, "axis": axis, "class": cls, "key": (cls, axes[axis]["lower"]),
                   "dominates_point": all(a["gain"] < 0 for a in axes.values()),
                   "dominates_resolved": cls == 0}
    decisive = min(rows, key=lambda m: rows[m]["key"])
    d = rows[decisive]["axes"][rows[decisive]["axis"]]
    return {"rows": rows, "decisive": decisive, "axis": rows[decisive]["axis"], "edge_gain": d["gain"],
            "edge": [d["lower"], d["upper"]], "edge_samples": d["samples"], "edge_seeds": d["seeds"],
            "on_front_resolved": all(r["class"] == 2 for r in rows.values()),
            "off_front_resolved": any(r["class"] == 0 for r in rows.values()),
            "unresolved": sorted(m for m, r in rows.items() if r["class"] == 1),
            "dominating_point": sorted(m for m, r in rows.items() if r["dominates_point"])}


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


# ------------------------------------------------------------------------------------------------ physical or not
PHYSICAL_CHANNEL = {"darcy": 1, "heat": 0}  # u: the channel the PDE determines (Darcy's log k is free data)


def channel_energy_distances(x: np.ndarray, held: np.ndarray, case: str) -> list[float]:
    """Energy distance per channel (each channel on its own, standardised)."""
    xs, hs = standardise(x, case), standardise(held, case)
    return [B.energy_distance(xs[:, c], hs[:, c]) for c in range(xs.shape[1])]


@lru_cache(maxsize=4)
def unit_noise_residual(case: str, n: int = 500, seed: int = 7) -> float:
    """Mean |R| of held-out solver fields plus white noise of standard deviation 1 on the physical channel. Both
    residuals are linear in that channel and zero on the solver's fields, so noise of std ``s`` gives ``s`` times
    this: the noise-equivalent std of a residual ``r`` is ``r`` divided by it."""
    c = get_case(case)
    h = heldout(c.name, n)
    ch = PHYSICAL_CHANNEL[c.name]
    h[:, ch] = h[:, ch] + np.random.default_rng(seed).standard_normal(h[:, ch].shape)
    return float(mean_abs_residual(c, h).mean())


def noise_equivalent(case: str, residual: float) -> dict[str, float]:
    """The white-noise std on the physical channel of solver fields with the same mean |R| as ``residual``, absolute
    and as a fraction of that channel's held-out standard deviation."""
    name = get_case(case).name
    s = float(residual) / unit_noise_residual(name)
    return {"noise_std": s, "noise_rel": s / float(channel_scales(name)[PHYSICAL_CHANNEL[name]])}


def darcy_solution_error(x: np.ndarray) -> np.ndarray:
    """Per Darcy sample ``[n]``: the RMS difference between its u and the solver's u for its own log k, relative
    to the RMS of the solver's u (0 for a physical field; 1 for u = 0)."""
    from .pdes import darcy_solve

    u_star = darcy_solve(x[:, 0])
    return np.sqrt(((x[:, 1] - u_star) ** 2).mean(1) / (u_star**2).mean(1))


def reference_fields(case: str, n: int = 500, noise: float = 0.0, zero_physical: bool = False,
                     seed: int = 3) -> np.ndarray:
    """Solver fields of another data seed (7), with white noise of std ``noise`` on the physical channel, or that
    channel set to 0 (``zero_physical``): references that show what the two axes reward."""
    c = get_case(case)
    f = c.fields(n, 7).copy()
    ch = PHYSICAL_CHANNEL[c.name]
    if zero_physical:
        f[:, ch] = 0.0
    if noise:
        f[:, ch] = f[:, ch] + noise * np.random.default_rng(seed).standard_normal(f[:, ch].shape)
    return f
