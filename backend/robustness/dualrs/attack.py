"""Empirical check of dual RS certificates: attack every certified point inside its certified L2 ball.

For a test point x0 with dual prediction y_hat, chosen sigma s_hat and certified radius R, we search the ball
B(x0, factor * R) for an x' whose dual-RS prediction differs from y_hat:

1. PGD (L2, normalised gradient steps, projection onto the ball) on differentiable surrogates of the two smoothed
   votes, with a fixed set of noise draws (common random numbers): the expert's mean softmax probability of y_hat under
   noise s_hat, the estimator's mean softmax probability of s_hat under noise sigma_e, and their sum; each from the
   centre and from random starts.
2. Random search: points drawn uniformly in the ball and on its boundary circle.
3. Screening by the surrogates, then the ``keep`` most promising candidates per point are evaluated exactly as dual RS
   predicts: a fresh Monte Carlo vote of the estimator picks sigma(x'), a fresh vote of that sigma's expert picks the
   class (``eval_samples`` draws each). A class different from y_hat is a *raw* flip.
4. A raw flip is a Monte Carlo reading; near the edge of the ball the certified votes may sit only a little above 1/2,
   where a 5,000-draw estimate can land below it by chance. Each raw flip is therefore re-checked with
   ``confirm_samples`` fresh draws per stage; it counts as a *flip* (a certificate violation) only if the dual
   prediction still differs and one certified vote (the expert's for y_hat or the estimator's for s_hat) has a
   Clopper-Pearson upper bound below 1/2 at level ``confirm_alpha``. Both counts are reported.

The certificate says (with probability >= 1 - alpha) that inside the ball the estimator's vote for s_hat and the
expert's vote for y_hat both stay above 1/2, so no flip should be found at ``factor = 1``; ``factor > 1`` is the
control that shows the attack does find flips where no certificate holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import beta as beta_dist

from ...runtime import Progress, report, timed
from .dualrs import ABSTAIN, MLP, DualRSResult, sample_counts


@dataclass
class AttackConfig:
    """Budget of the attack per point (see the module docstring)."""

    pgd_steps: int = 15
    random_starts: int = 1
    surrogate_samples: int = 32
    random_points: int = 32
    keep: int = 3
    eval_samples: int = 5000
    confirm_samples: int = 50_000
    confirm_alpha: float = 0.001
    factor: float = 1.0


@dataclass
class AttackResult:
    """Per attacked point ``[m]``: the ball radius used, whether a flip was found, the worst candidate ``[m, 2]``, and
    the smallest Monte Carlo vote shares seen among evaluated candidates (class vote of y_hat under s_hat, estimator
    vote of s_hat). ``index`` maps attacked points back to the test set."""

    index: np.ndarray
    radius: np.ndarray
    flipped: np.ndarray
    raw_flipped: np.ndarray
    worst: np.ndarray
    min_class_vote: np.ndarray
    min_sigma_vote: np.ndarray
    seconds: float
    factor: float

    @property
    def attacked(self) -> int:
        return int(self.index.size)

    @property
    def flips(self) -> int:
        return int(self.flipped.sum())

    def summary(self) -> dict:
        return {
            "factor": self.factor,
            "attacked_points": self.attacked,
            "flips": self.flips,
            "raw_flips": int(self.raw_flipped.sum()),
            "min_class_vote": round(float(self.min_class_vote.min()), 4) if self.attacked else None,
            "min_sigma_vote": round(float(self.min_sigma_vote.min()), 4) if self.attacked else None,
            "seconds": round(self.seconds, 2),
        }


def _soft_vote(model: MLP, x: torch.Tensor, noise: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean softmax probability of ``target [m]`` at ``x [m, 2]`` over ``noise [S, 2]`` -> ``[m]``."""
    m, s = x.shape[0], noise.shape[0]
    probs = torch.softmax(model((x[:, None, :] + noise[None]).reshape(-1, 2)), -1).reshape(m, s, -1)
    return probs.mean(1).gather(1, target[:, None])[:, 0]


def _project(x: torch.Tensor, x0: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    d = x - x0
    norm = d.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return x0 + d * torch.clamp(radius[:, None] / norm, max=1.0)


def attack_dual(
    estimator: MLP,
    experts: Sequence[MLP],
    sigmas: Sequence[float],
    sigma_e: float,
    x0: np.ndarray,
    y_hat: np.ndarray,
    s_hat: np.ndarray,
    radius: np.ndarray,
    cfg: AttackConfig | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> AttackResult:
    """Attack the dual-RS prediction of every point with ``y_hat != ABSTAIN`` and ``radius > 0``.

    ``x0 [m, 2]``, ``y_hat``, ``s_hat`` (the chosen sigma's index), ``radius`` from :func:`dual_certify`.
    """
    cfg = cfg or AttackConfig()
    clock = timed()
    idx = np.flatnonzero((np.asarray(y_hat) != ABSTAIN) & (np.asarray(radius) > 0))
    gen = torch.Generator().manual_seed(seed)
    xs = torch.as_tensor(np.asarray(x0)[idx], dtype=torch.float32)
    ys = torch.as_tensor(np.asarray(y_hat)[idx], dtype=torch.long)
    ss = torch.as_tensor(np.asarray(s_hat)[idx], dtype=torch.long)
    rad = torch.as_tensor(np.asarray(radius)[idx] * cfg.factor, dtype=torch.float32)
    m = xs.shape[0]
    if m == 0:
        empty = np.zeros(0)
        none = empty.astype(bool)
        return AttackResult(idx, empty, none, none, np.zeros((0, 2)), empty, empty, clock(), cfg.factor)
    z = torch.randn((cfg.surrogate_samples, 2), generator=gen)
    noise_e = sigma_e * z

    def surrogates(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(class vote of y_hat under s_hat, estimator vote of s_hat), both ``[m]``, differentiable."""
        cls = torch.zeros(x.shape[0])
        for i, (expert, sigma) in enumerate(zip(experts, sigmas)):
            sel = torch.nonzero(ss == i)[:, 0]
            if sel.numel():
                cls = cls.index_put((sel,), _soft_vote(expert, x[sel], sigma * z, ys[sel]))
        return cls, _soft_vote(estimator, x, noise_e, ss)

    candidates = [xs.clone()]
    objectives = ("class", "sigma", "both")
    runs = [(obj, start) for obj in objectives for start in range(1 + cfg.random_starts)]
    for r, (obj, start) in enumerate(runs):
        report(progress, 0.7 * r / len(runs), f"PGD ({obj} objective, start {start}) on {m} points")
        if start == 0:
            x = xs.clone()
        else:
            d = torch.randn((m, 2), generator=gen)
            x = xs + d / d.norm(dim=1, keepdim=True) * rad[:, None] * torch.rand((m, 1), generator=gen).sqrt()
        step = 2.5 * rad / cfg.pgd_steps
        for _ in range(cfg.pgd_steps):
            x = x.detach().requires_grad_(True)
            cls, sig = surrogates(x)
            loss = {"class": cls, "sigma": sig, "both": cls + sig}[obj].sum()
            (grad,) = torch.autograd.grad(loss, x)
            g = grad / grad.norm(dim=1, keepdim=True).clamp_min(1e-12)
            x = _project(x.detach() - step[:, None] * g, xs, rad)
        candidates.append(x.detach())
    report(progress, 0.7, "random search")
    for k in range(cfg.random_points):
        d = torch.randn((m, 2), generator=gen)
        d = d / d.norm(dim=1, keepdim=True)
        frac = torch.ones((m, 1)) if k % 4 == 0 else torch.rand((m, 1), generator=gen).sqrt()
        candidates.append(xs + d * rad[:, None] * frac)
    cand = torch.stack(candidates, 1)  # [m, C, 2]
    with torch.no_grad():
        c = cand.shape[1]
        flat = cand.reshape(-1, 2)
        rep = lambda t: t.repeat_interleave(c)
        cls = torch.zeros(flat.shape[0])
        ss_f, ys_f = rep(ss), rep(ys)
        for i, (expert, sigma) in enumerate(zip(experts, sigmas)):
            sel = torch.nonzero(ss_f == i)[:, 0]
            if sel.numel():
                cls[sel] = _soft_vote(expert, flat[sel], sigma * z, ys_f[sel])
        sig = _soft_vote(estimator, flat, noise_e, ss_f)
        score = torch.minimum(cls, sig).reshape(m, c)
        keep = torch.argsort(score, dim=1)[:, : cfg.keep]  # [m, keep]
        kept = torch.gather(cand, 1, keep[..., None].expand(-1, -1, 2)).reshape(-1, 2)
    report(progress, 0.8, f"Monte Carlo check of {kept.shape[0]} candidates ({cfg.eval_samples} draws per stage)")
    ys_k, ss_k = ys.repeat_interleave(cfg.keep), ss.repeat_interleave(cfg.keep)
    votes_e = sample_counts(estimator, kept, sigma_e, cfg.eval_samples, gen).double() / cfg.eval_samples
    s_new = votes_e.argmax(1)
    pred = torch.full((kept.shape[0],), ABSTAIN, dtype=torch.long)
    class_vote = torch.zeros(kept.shape[0], dtype=torch.double)
    for i, (expert, sigma) in enumerate(zip(experts, sigmas)):
        sel_old = torch.nonzero(ss_k == i)[:, 0]  # the expert certified at x0: its vote for y_hat at x'
        if sel_old.numel():
            votes = sample_counts(expert, kept[sel_old], sigma, cfg.eval_samples, gen)
            class_vote[sel_old] = votes.gather(1, ys_k[sel_old][:, None])[:, 0].double() / cfg.eval_samples
            same = s_new[sel_old] == i
            pred[sel_old[same]] = votes[same].argmax(1)
        moved = torch.nonzero((s_new == i) & (ss_k != i))[:, 0]  # the estimator switched sigma at x'
        if moved.numel():
            pred[moved] = sample_counts(expert, kept[moved], sigma, cfg.eval_samples, gen).argmax(1)
    flipped = (pred != ys_k).reshape(m, cfg.keep)
    sigma_vote = votes_e.gather(1, ss_k[:, None])[:, 0].reshape(m, cfg.keep)
    class_vote = class_vote.reshape(m, cfg.keep)
    worst_j = torch.where(flipped.any(1), flipped.double().argmax(1), torch.minimum(class_vote, sigma_vote).argmin(1))
    worst = kept.reshape(m, cfg.keep, 2)[torch.arange(m), worst_j]
    confirmed = np.zeros(m, dtype=bool)
    raw = flipped.any(1).numpy()
    if raw.any():
        report(
            progress, 0.9, f"confirming {int(raw.sum())} raw flip(s) with {cfg.confirm_samples} fresh draws per stage"
        )
        rows = np.flatnonzero(raw)
        pts = worst[rows]
        s_old, y_old = ss[rows], ys[rows]
        n = cfg.confirm_samples
        ve = sample_counts(estimator, pts, sigma_e, n, gen)
        s2 = ve.argmax(1)
        ub_sigma = upper_confidence_bound(ve.gather(1, s_old[:, None])[:, 0].numpy(), n, cfg.confirm_alpha)
        for j, r in enumerate(rows):
            i_old, i_new = int(s_old[j]), int(s2[j])
            vc = sample_counts(experts[i_old], pts[j : j + 1], sigmas[i_old], n, gen)[0]
            ub_class = upper_confidence_bound(int(vc[y_old[j]]), n, cfg.confirm_alpha)
            if i_new != i_old:
                vc = sample_counts(experts[i_new], pts[j : j + 1], sigmas[i_new], n, gen)[0]
            new_pred = int(vc.argmax())
            violated = ub_class < 0.5 or ub_sigma[j] < 0.5  # a certified vote provably fell below 1/2
            confirmed[r] = new_pred != int(y_old[j]) and bool(violated)
    report(progress, 1.0, "attack done")
    return AttackResult(
        index=idx,
        radius=rad.numpy().astype(float),
        flipped=confirmed,
        raw_flipped=raw,
        worst=worst.numpy(),
        min_class_vote=class_vote.min(1).values.numpy(),
        min_sigma_vote=sigma_vote.min(1).values.numpy(),
        seconds=clock(),
        factor=cfg.factor,
    )


def upper_confidence_bound(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray | float:
    """One-sided (1 - alpha) Clopper-Pearson upper bound on a binomial proportion (1 when k = n)."""
    k = np.asarray(k)
    out = np.where(k < n, beta_dist.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return float(out) if out.ndim == 0 else out



def attack_run(
    res: DualRSResult,
    cfg: AttackConfig | None = None,
    seed: int = 1,
    progress: Progress | None = None,
) -> AttackResult:
    """:func:`attack_dual` on the certificates of a :func:`dualrs.run` result made with ``keep_models=True``."""
    if res.models is None:
        raise ValueError("attack_run needs a dualrs.run result made with keep_models=True")
    m = res.models
    return attack_dual(
        m["estimator"],
        m["dual_experts"],
        m["sigmas"],
        m["sigma_e"],
        res.x_test,
        res.dual["pred"],
        res.dual["sigma_idx"],
        res.dual["radius"],
        cfg,
        seed=seed,
        progress=progress,
    )
