"""Dual randomized smoothing: certified L2 robustness with a per-input noise level chosen by a second smoothed model.

Papers:
- Sun, Mao, Vechev, "Dual Randomized Smoothing: Beyond Global Noise Variance", ICLR 2026 (arXiv 2512.01782).
- Cohen, Rosenfeld, Kolter, "Certified Adversarial Robustness via Randomized Smoothing", ICML 2019 (arXiv 1902.02918)
  for CERTIFY.

What this module implements, and what it followed:
- CERTIFY exactly as Cohen et al. (and their reference code): n0 noisy samples pick the top class c_A, n fresh samples
  count n_A, p_A's one-sided (1 - alpha) Clopper-Pearson lower bound is Beta.ppf(alpha, n_A, n - n_A + 1); abstain if
  it is < 1/2, else radius sigma * Phi^-1(p_A lower) (:func:`certify`).
- The dual framework (Theorem 4.2 of the paper): a variance estimator h_e smoothed at a fixed sigma_e >= max Sigma
  picks sigma(x) in Sigma and certifies its own radius R_sigma with CERTIFY at alpha/2; the classifier smoothed at the
  chosen sigma certifies R_c at alpha/2; the final radius is min(R_sigma, R_c), valid with probability >= 1 - alpha by a
  union bound (:func:`dual_certify`). If the estimator abstains, dual RS abstains (our choice: the paper's theorem
  needs a certified sigma).
- The classifier side is the paper's "router" variant: one expert MLP per sigma, trained with Gaussian noise at that
  sigma (Cohen's training). The same experts are the global-sigma baselines, so dual RS and the baselines differ only
  in the per-input choice of sigma. The paper's optional classifier fine-tuning round is available as
  ``TrainConfig.finetune_steps`` (each expert is fine-tuned on the training points routed to it); 0 by default, so
  that the comparison with the baselines stays like-for-like.
- Estimator training as in the paper: soft labels y_i proportional to exp(R_c(x, sigma_i)) with radii from 100 noise
  samples per sigma (CERTIFY's bound on those samples; radius 0 when the vote is wrong or abstains), class-balance
  weights w_e = 1/q_i (q_i = share of training points whose best sigma is sigma_i), and consistency regularisation
  lambda E KL(f_hat(x) || f(x + delta)) + eta H(f_hat(x)) with f_hat the mean prediction over m noisy copies
  (Jeong & Shin's form), all under delta ~ N(0, sigma_e^2). The paper's radius-dependent weight w_r(x)
  ("strong"/"weak" versions) is not specified in what we could read; we use w_r = 1.
- Left out: Cohen's PREDICT (abstaining prediction without a radius), denoised smoothing (the paper's base models are
  diffusion-denoised; ours are small MLPs trained under noise, as the spec's 2-D tier asks).

Public API: :class:`TrainConfig`, :class:`CertifyConfig`, :class:`MLP`, :func:`train_classifier`,
:func:`estimator_labels`, :func:`train_estimator`, :func:`certify`, :func:`dual_certify`, :func:`get_method`,
:func:`certified_accuracy`, :func:`run` -> :class:`DualRSResult`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from scipy.stats import beta as beta_dist
from scipy.stats import norm
from torch import nn

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report, setup_torch, sub_progress, timed
from .configs import CertifyConfig, TrainConfig
from .data2d import Dataset2D

ABSTAIN = -1


# ---------------------------------------------------------------------------------------------------------- models
class MLP(nn.Module):
    """``[B, 2] -> [B, classes]`` logits: a fixed input normalisation (from the training data), ``depth`` hidden ReLU
    layers of width ``hidden``."""

    def __init__(self, classes: int, hidden: int = 32, depth: int = 2, mean=(0.0, 0.0), scale: float = 1.0) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = 2
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, classes))
        self.net = nn.Sequential(*layers)
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("inv_scale", torch.tensor(1.0 / scale, dtype=torch.float32))
        self.classes = classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) * self.inv_scale)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.net.parameters())


def _fit(
    model: MLP,
    x: torch.Tensor,
    loss_fn: Callable[[MLP, torch.Tensor, torch.Tensor], torch.Tensor],
    steps: int,
    cfg: TrainConfig,
    gen: torch.Generator,
    progress: Progress | None,
    what: str,
) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(1, steps))
    model.train()
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (min(cfg.batch, x.shape[0]),), generator=gen)
        loss = loss_fn(model, x[idx], idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0:
            report(progress, step / steps, f"{what}: step {step}/{steps}, loss {loss.item():.3f}")
    model.eval()


def _new_model(classes: int, x: torch.Tensor, cfg: TrainConfig) -> MLP:
    mean = x.mean(0)
    scale = float(((x - mean) ** 2).sum(1).mean().sqrt() / math.sqrt(2)) or 1.0
    return MLP(classes, cfg.hidden, cfg.depth, tuple(mean.tolist()), scale)


def train_classifier(
    x: np.ndarray,
    y: np.ndarray,
    sigma: float,
    cfg: TrainConfig,
    seed: int = 0,
    progress: Progress | None = None,
    weights: np.ndarray | None = None,
    init: MLP | None = None,
    steps: int | None = None,
) -> MLP:
    """An expert for noise level ``sigma``: cross-entropy on ``x + N(0, sigma^2 I)`` (Cohen et al.'s training).

    ``weights`` (``[n]``, optional) reweight the training points; ``init`` continues from a model (fine-tuning).
    """
    setup_torch()
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xt, yt = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    wt = torch.as_tensor(weights, dtype=torch.float32) if weights is not None else None
    classes = int(max(y.max() + 1, 2)) if init is None else init.classes
    model = init if init is not None else _new_model(classes, xt, cfg)

    def loss_fn(m: MLP, xb: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        noisy = xb + sigma * torch.randn(xb.shape, generator=gen)
        per = nn.functional.cross_entropy(m(noisy), yt[idx], reduction="none")
        return (per * wt[idx]).sum() / wt[idx].sum().clamp_min(1e-12) if wt is not None else per.mean()

    _fit(model, xt, loss_fn, steps or cfg.expert_steps, cfg, gen, progress, f"expert sigma={sigma:g}")
    return model


# ------------------------------------------------------------------------------------------------------- certify
@torch.no_grad()
def sample_counts(
    model: MLP, x: torch.Tensor, sigma: float, num: int, gen: torch.Generator, batch_rows: int = 1 << 18
) -> torch.Tensor:
    """Votes of the base model under noise: ``[m, classes]`` counts of argmax f(x_i + delta), delta ~ N(0, s^2 I)."""
    x = torch.as_tensor(x, dtype=torch.float32).reshape(-1, 2)
    m, c = x.shape[0], model.classes
    counts = torch.zeros(m, c, dtype=torch.long)
    if num <= 0 or m == 0:
        return counts
    per_pt = max(1, min(num, batch_rows))
    pts = max(1, batch_rows // per_pt)
    for i in range(0, m, pts):
        xb = x[i : i + pts]
        p = xb.shape[0]
        for s in range(0, num, per_pt):
            k = min(per_pt, num - s)
            noise = torch.randn((p, k, 2), generator=gen) * sigma
            pred = model((xb[:, None, :] + noise).reshape(-1, 2)).argmax(-1).reshape(p, k)
            flat = (pred + c * torch.arange(p)[:, None]).reshape(-1)
            counts[i : i + p] += torch.bincount(flat, minlength=p * c).reshape(p, c)
    return counts


def lower_confidence_bound(n_a: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound on a binomial proportion (0 when n_A = 0)."""
    n_a = np.asarray(n_a)
    with np.errstate(invalid="ignore"):
        out = beta_dist.ppf(alpha, n_a, n - n_a + 1)
    return np.where(n_a > 0, out, 0.0)


@dataclass
class Certificates:
    """Per point ``[m]``: prediction (``ABSTAIN`` = -1), certified radius (0 when abstaining), p_A lower bound."""

    pred: np.ndarray
    radius: np.ndarray
    p_lower: np.ndarray


def certify(
    model: MLP,
    x: np.ndarray,
    sigma: float,
    n0: int,
    n: int,
    alpha: float,
    gen: torch.Generator,
    batch_rows: int = 1 << 18,
) -> Certificates:
    """Cohen et al.'s CERTIFY for each row of ``x [m, 2]``."""
    if n0 < 1 or n < 1 or not 0 < alpha < 1:
        raise InputError("CERTIFY needs n0 >= 1, n >= 1 and 0 < alpha < 1.")
    c_hat = sample_counts(model, torch.as_tensor(x), sigma, n0, gen, batch_rows).argmax(1)
    counts = sample_counts(model, torch.as_tensor(x), sigma, n, gen, batch_rows)
    n_a = counts.gather(1, c_hat[:, None])[:, 0].numpy()
    p_low = lower_confidence_bound(n_a, n, alpha)
    ok = p_low >= 0.5
    radius = np.where(ok, sigma * norm.ppf(np.clip(p_low, 0.5, 1.0)), 0.0)
    return Certificates(np.where(ok, c_hat.numpy(), ABSTAIN), radius, p_low)


@dataclass
class DualCertificates:
    """Dual RS per point ``[m]``: final prediction and radius min(R_sigma, R_c), the chosen sigma's index
    (``ABSTAIN`` when the estimator abstains), and both stage radii."""

    pred: np.ndarray
    radius: np.ndarray
    sigma_idx: np.ndarray
    r_sigma: np.ndarray
    r_c: np.ndarray


def dual_certify(
    estimator: MLP,
    experts: Sequence[MLP],
    sigmas: Sequence[float],
    sigma_e: float,
    x: np.ndarray,
    cfg: CertifyConfig,
    gen: torch.Generator,
) -> DualCertificates:
    """Dual RS: CERTIFY the estimator at sigma_e (alpha/2), then the chosen expert at its sigma (alpha/2)."""
    est = certify(estimator, x, sigma_e, cfg.n0, cfg.n, cfg.alpha / 2, gen, cfg.batch_rows)
    m = len(x)
    pred = np.full(m, ABSTAIN)
    r_c = np.zeros(m)
    for i, (expert, sigma) in enumerate(zip(experts, sigmas)):
        sel = np.flatnonzero(est.pred == i)
        if sel.size:
            c = certify(expert, x[sel], sigma, cfg.n0, cfg.n, cfg.alpha / 2, gen, cfg.batch_rows)
            pred[sel], r_c[sel] = c.pred, c.radius
    radius = np.where(pred != ABSTAIN, np.minimum(est.radius, r_c), 0.0)
    return DualCertificates(pred, radius, est.pred, est.radius, r_c)


def _global_method(models: dict, x: np.ndarray, cfg: CertifyConfig, gen: torch.Generator, sigma_idx: int = 0):
    return certify(
        models["experts"][sigma_idx], x, models["sigmas"][sigma_idx], cfg.n0, cfg.n, cfg.alpha, gen, cfg.batch_rows
    )


def _dual_method(models: dict, x: np.ndarray, cfg: CertifyConfig, gen: torch.Generator, **_: object):
    return dual_certify(models["estimator"], models["experts"], models["sigmas"], models["sigma_e"], x, cfg, gen)


METHODS: Registry[Callable[..., Certificates | DualCertificates]] = Registry("certification method")
METHODS.add("global", _global_method, label="global", kind="baseline", color="#1f77b4",
            about="Cohen et al.'s randomized smoothing with one global sigma (pass sigma_idx)")
METHODS.add("dual", _dual_method, label="dual RS", kind="ours", color="#000000",
            about="dual RS: smoothed variance estimator picks sigma(x), the expert at that sigma certifies; "
                  "radius = min")
DUAL_KEY = METHODS.names("ours")[0]  # the curve and table key of dual RS (the global baselines are "sigma=<s>")

# A certification method by name (case-insensitive): ``f(models, x, cfg, gen, **kw)``; an unknown name raises
# InputError listing the valid ones.
get_method = METHODS.get


# ---------------------------------------------------------------------------------------------- the estimator
def estimator_labels(
    experts: Sequence[MLP],
    sigmas: Sequence[float],
    x: np.ndarray,
    y: np.ndarray,
    num: int,
    alpha: float,
    gen: torch.Generator,
) -> np.ndarray:
    """Radii R_c(x, sigma_i) ``[m, |Sigma|]`` from ``num`` noise samples per sigma (0 if the vote is wrong/abstains)."""
    radii = np.zeros((len(x), len(sigmas)))
    for i, (expert, sigma) in enumerate(zip(experts, sigmas)):
        counts = sample_counts(expert, torch.as_tensor(x), sigma, num, gen)
        top = counts.argmax(1).numpy()
        p_low = lower_confidence_bound(counts.max(1).values.numpy(), num, alpha)
        good = (top == y) & (p_low >= 0.5)
        radii[:, i] = np.where(good, sigma * norm.ppf(np.clip(p_low, 0.5, 1.0)), 0.0)
    return radii


def train_estimator(
    x: np.ndarray, radii: np.ndarray, cfg: TrainConfig, seed: int = 0, progress: Progress | None = None
) -> tuple[MLP, np.ndarray]:
    """Train h_e on soft labels softmax(R_c(x, .)) with class-balance weights and consistency regularisation.

    Returns ``(estimator, q)`` with ``q [|Sigma|]`` the share of training points whose best sigma is each sigma.
    """
    setup_torch()
    gen = torch.Generator().manual_seed(seed + 1)
    torch.manual_seed(seed + 1)
    sigma_e = cfg.resolved_sigma_e()
    xt = torch.as_tensor(x, dtype=torch.float32)
    soft = torch.softmax(torch.as_tensor(radii, dtype=torch.float32), 1)  # y_i ~ exp(R_c(x, sigma_i))
    best = radii.argmax(1)
    q = np.bincount(best, minlength=radii.shape[1]) / len(best)
    w = torch.as_tensor(1.0 / np.maximum(q[best], 1e-12), dtype=torch.float32)
    w = w / w.mean()
    model = _new_model(radii.shape[1], xt, cfg)

    def loss_fn(m: MLP, xb: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        k = max(1, cfg.copies)
        noisy = xb[None] + sigma_e * torch.randn((k, *xb.shape), generator=gen)  # [k, B, 2]
        logp = torch.log_softmax(m(noisy.reshape(-1, 2)), -1).reshape(k, xb.shape[0], -1)
        soft_ce = -(soft[idx][None] * logp).sum(-1).mean(0)  # [B]
        p_mean = logp.exp().mean(0)  # f_hat(x)
        log_mean = torch.log(p_mean.clamp_min(1e-12))
        kl = (p_mean[None] * (log_mean[None] - logp)).sum(-1).mean(0)  # mean_j KL(f_hat || f(x + delta_j))
        ent = -(p_mean * log_mean).sum(-1)
        return (w[idx] * (soft_ce + cfg.lam * kl + cfg.eta * ent)).mean()

    _fit(model, xt, loss_fn, cfg.estimator_steps, cfg, gen, progress, "variance estimator")
    return model, q


@torch.no_grad()
def smoothed_votes(model: MLP, x: np.ndarray, sigma: float, num: int, seed: int = 0) -> np.ndarray:
    """Monte Carlo vote shares ``[m, classes]`` of the smoothed model (for maps and attack checks)."""
    gen = torch.Generator().manual_seed(seed)
    return (sample_counts(model, torch.as_tensor(x), sigma, num, gen).double() / num).numpy()


# ------------------------------------------------------------------------------------------------- evaluation
def certified_accuracy(pred: np.ndarray, radius: np.ndarray, y: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Certified accuracy at each radius ``[R]``: share of points predicted correctly with certified radius >= r."""
    ok = pred == y
    return np.array([float(np.mean(ok & (radius >= r))) for r in radii])


@dataclass
class DualRSResult:
    """Everything a page, the CLI or a benchmark needs. Per-method arrays are over the ``m`` test points.

    ``baselines[sigma] = {"pred", "radius"}``; ``dual`` holds ``pred, radius, sigma_idx, r_sigma, r_c``; ``curves``
    maps method name to certified accuracy over ``radii``; ``map_*`` is the chosen-sigma field on a grid
    (``map_sigma_idx [G, G]``, rows along y) from the smoothed estimator's Monte Carlo vote.
    """

    dataset: str
    sigmas: list[float]
    sigma_e: float
    x_test: np.ndarray
    y_test: np.ndarray
    x_train: np.ndarray
    y_train: np.ndarray
    baselines: dict[float, dict[str, np.ndarray]]
    dual: dict[str, np.ndarray]
    radii: np.ndarray
    curves: dict[str, np.ndarray]
    map_x: np.ndarray
    map_y: np.ndarray
    map_sigma_idx: np.ndarray
    map_vote: np.ndarray
    label_share: list[float]
    timings: dict[str, float]
    samples: dict[str, int]
    parameters: dict[str, int]
    scale: float
    train: dict
    certify: dict
    seed: int
    models: dict | None = field(default=None, repr=False)

    def global_keys(self) -> list[str]:
        """The curve keys of the global-sigma baselines (``sigma=<s>``), in the order of ``sigmas``."""
        return [f"sigma={s:g}" for s in self.baselines]

    def certificates(self) -> dict[str, dict[str, np.ndarray]]:
        """Curve key -> the certificates it was computed from: each global sigma, then dual RS."""
        out = dict(zip(self.global_keys(), self.baselines.values(), strict=True))
        out[DUAL_KEY] = self.dual
        return out

    def summary(self) -> dict:
        """A JSON-friendly summary (no per-point arrays)."""
        table = []
        certificates = self.certificates()
        for name, curve in self.curves.items():
            radius, pred = certificates[name]["radius"], certificates[name]["pred"]
            correct = pred == self.y_test
            table.append(
                {
                    "method": name,
                    "clean_accuracy": round(float(np.mean(correct)), 4),
                    "abstain_rate": round(float(np.mean(pred == ABSTAIN)), 4),
                    "average_certified_radius": round(float(np.mean(np.where(correct, radius, 0.0))), 4),
                    **{
                        f"acc@{r:g}": round(float(np.interp(r, self.radii, curve)), 4)
                        for r in (0.0, 0.25, 0.5, 1.0, 2.0)
                    },
                    "certify_seconds": round(self.timings.get(f"certify {name}", float("nan")), 3),
                }
            )
        best = np.max([self.curves[k] for k in self.global_keys()], axis=0)
        active = best > 0
        return {
            "method": "dualrs",
            "dataset": self.dataset,
            "sigmas": self.sigmas,
            "sigma_e": self.sigma_e,
            "test_points": len(self.y_test),
            "table": table,
            "dual_vs_best_single": {
                "share_of_radii_where_dual_ge_best": round(
                    float(np.mean(self.curves[DUAL_KEY][active] >= best[active])), 4
                ),
                "radii_compared": int(active.sum()),
            },
            "estimator_best_sigma_share": [round(v, 4) for v in self.label_share],
            "chosen_sigma_share_test": [
                round(float(np.mean(self.dual["sigma_idx"] == i)), 4) for i in range(len(self.sigmas))
            ],
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "samples": self.samples,
            "parameters": self.parameters,
            "scale": self.scale,
            "train": self.train,
            "certify": self.certify,
        }


def train_models(data: Dataset2D, cfg: TrainConfig, seed: int = 0, progress: Progress | None = None) -> dict:
    """Experts per sigma, then the estimator (and the optional fine-tuning round). Returns a dict of models + info."""
    clock = timed()
    sigmas = list(cfg.sigmas)
    k = len(sigmas)
    experts = [
        train_classifier(
            data.x_train, data.y_train, s, cfg, seed + 17 * i, sub_progress(progress, i / (k + 2), (i + 1) / (k + 2))
        )
        for i, s in enumerate(sigmas)
    ]
    t_experts = clock()
    report(progress, k / (k + 2), "soft labels: radii from noise samples")
    gen = torch.Generator().manual_seed(seed + 2)
    radii = estimator_labels(experts, sigmas, data.x_train, data.y_train, cfg.label_samples, cfg.label_alpha, gen)
    estimator, q = train_estimator(
        data.x_train, radii, cfg, seed, sub_progress(progress, (k + 0.2) / (k + 2), (k + 1) / (k + 2))
    )
    dual_experts = experts
    if cfg.finetune_steps > 0:
        gen_ft = torch.Generator().manual_seed(seed + 3)
        routed = certify(estimator, data.x_train, cfg.resolved_sigma_e(), 1, 64, 0.5, gen_ft).pred  # cheap routing
        dual_experts = []
        for i, (expert, s) in enumerate(zip(experts, sigmas)):
            clone = _new_model(expert.classes, torch.as_tensor(data.x_train), cfg)
            clone.load_state_dict(expert.state_dict())
            wts = np.where(routed == i, 1.0, 0.1)
            dual_experts.append(
                train_classifier(
                    data.x_train, data.y_train, s, cfg, seed + 31 * i, None, wts, clone, cfg.finetune_steps
                )
            )
    report(progress, 1.0, "models trained")
    return {
        "experts": experts,
        "dual_experts": dual_experts,
        "estimator": estimator,
        "sigmas": sigmas,
        "sigma_e": cfg.resolved_sigma_e(),
        "label_share": q.tolist(),
        "label_radii": radii,
        "timings": {"train experts": t_experts, "train estimator": clock() - t_experts},
    }


def run(
    data: Dataset2D,
    train: TrainConfig | None = None,
    cert: CertifyConfig | None = None,
    seed: int = 0,
    max_test: int = 500,
    map_resolution: int = 60,
    map_samples: int = 400,
    keep_models: bool = False,
    progress: Progress | None = None,
) -> DualRSResult:
    """Train everything, certify the test points with every global sigma and with dual RS, build curves and the map."""
    train = train or TrainConfig()
    cert = cert or CertifyConfig()
    if data.num_classes > 10:
        raise InputError("At most 10 classes are supported.")
    setup_torch()
    models = train_models(data, train, seed, sub_progress(progress, 0.0, 0.35))
    x_te, y_te = data.x_test[:max_test], data.y_test[:max_test]
    timings = dict(models["timings"])
    baselines: dict[float, dict[str, np.ndarray]] = {}
    k = len(train.sigmas)
    gen = torch.Generator().manual_seed(seed + 4)
    for i, s in enumerate(train.sigmas):
        report(
            progress, 0.35 + 0.45 * i / (k + 2), f"CERTIFY at global sigma = {s:g} ({len(x_te)} points, n = {cert.n})"
        )
        clock = timed()
        c = certify(models["experts"][i], x_te, s, cert.n0, cert.n, cert.alpha, gen, cert.batch_rows)
        timings[f"certify sigma={s:g}"] = clock()
        baselines[float(s)] = {"pred": c.pred, "radius": c.radius}
    report(progress, 0.35 + 0.45 * k / (k + 2), "dual RS: estimator then chosen expert (alpha/2 each)")
    clock = timed()
    d = dual_certify(models["estimator"], models["dual_experts"], train.sigmas, models["sigma_e"], x_te, cert, gen)
    timings["certify dual"] = clock()
    dual = {"pred": d.pred, "radius": d.radius, "sigma_idx": d.sigma_idx, "r_sigma": d.r_sigma, "r_c": d.r_c}
    all_r = np.concatenate([d.radius, *[b["radius"] for b in baselines.values()]])
    radii = np.linspace(0.0, max(float(all_r.max()) * 1.05, 1e-3), 201)
    curves = {f"sigma={s:g}": certified_accuracy(b["pred"], b["radius"], y_te, radii) for s, b in baselines.items()}
    curves[DUAL_KEY] = certified_accuracy(d.pred, d.radius, y_te, radii)
    report(progress, 0.85, "map of the chosen sigma")
    xmin, xmax, ymin, ymax = data.bounds(1.0)
    gx, gy = np.linspace(xmin, xmax, map_resolution), np.linspace(ymin, ymax, map_resolution)
    grid = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2).astype(np.float32)
    votes = smoothed_votes(models["estimator"], grid, models["sigma_e"], map_samples, seed + 5)
    report(progress, 1.0, "done")
    n_eval = cert.n0 + cert.n
    return DualRSResult(
        dataset=data.name, sigmas=[float(s) for s in train.sigmas], sigma_e=models["sigma_e"], x_test=x_te,
        y_test=y_te, x_train=data.x_train, y_train=data.y_train, baselines=baselines, dual=dual, radii=radii,
        curves=curves, map_x=gx, map_y=gy, map_sigma_idx=votes.argmax(1).reshape(map_resolution, map_resolution),
        map_vote=votes.max(1).reshape(map_resolution, map_resolution),
        label_share=[float(v) for v in models["label_share"]], timings=timings,
        samples={"global (per point)": n_eval, "dual (per point)": 2 * n_eval},
        parameters={"expert": models["experts"][0].num_parameters(), "estimator": models["estimator"].num_parameters()},
        scale=data.scale, train=asdict(train), certify=asdict(cert), seed=seed,
        models=models if keep_models else None,
    )
