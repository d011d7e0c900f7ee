"""End-to-end evaluation of watermark-based attribution on real images: embed each user's watermark, post-process,
decode, detect and attribute against the whole user pool, and put the paper's bounds next to the empirical rates.

Used by the page's evaluation tab, ``python -m backend attribution evaluate``, the claim tests and the benchmark.
Pools of up to 10^4 users come from the selection strategies (A-BSTA pools are cached on disk by
(strategy, n, N, seed, depth); a shipped 10^4-user A-BSTA pool is used when it matches); larger pools use random codes.

Per attack the result reports bit accuracy (the empirical beta), TDR, TAR, attribution accuracy (argmax right,
whatever tau), and the Thm 1 / Thm 4 lower bounds evaluated at the measured beta with the pool's alpha_min / alpha_max,
plus the FDR on clean (never watermarked) images with the Thm 3 bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from backend.errors import InputError
from backend.runtime import ASSETS, Progress, cache_dir, report, sub_progress
from backend.watermark import attacks as _attacks
from backend.watermark import codes as _codes
from backend.watermark.attribution import bounds as A
from backend.watermark.metrics import psnr, ssim


# ------------------------------------------------------------------------------------------------------- pools
def shipped_pool_path(strategy: str, n: int, num_users: int, seed: int, depth: int) -> Path:
    return ASSETS / f"attribution_pool_{strategy}_n{n}_N{num_users}_seed{seed}_d{depth}.npy"


def cached_pool(strategy: str, num_users: int, n: int = 64, seed: int = 0, depth: int = 4,
                progress: Progress | None = None) -> np.ndarray:
    """Packed codes ``(num_users,)`` of a selection strategy, from the shipped asset or the user cache if present
    (A-BSTA and NRG are sequential, so a cached longer pool's prefix is the same pool), else computed and cached."""
    method = _codes.get_method(strategy)
    strat = method.name
    if not method.sequential:  # drawn at once from the seed: nothing to cache
        return method(num_users, n=n, seed=seed, progress=progress)
    if num_users > method.max_users:
        raise InputError(f"{strat} serves up to {method.max_users:,} users here; use random codes "
                         f"for {num_users:,} users.")
    folder = cache_dir() / "attribution_pools"
    for cand in sorted([*ASSETS.glob(f"attribution_pool_{strat}_n{n}_N*_seed{seed}_d{depth}.npy"),
                        *folder.glob(f"{strat}_n{n}_N*_seed{seed}_d{depth}.npy")]):
        size = int(cand.name.split("_N")[1].split("_")[0])
        if size >= num_users:
            arr = np.load(cand, allow_pickle=False)
            if arr.dtype == np.uint64 and arr.size == size:
                return arr[:num_users].copy()
    codes = _codes.select(strat, num_users, n=n, seed=seed, depth=depth, progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{strat}_n{n}_N{num_users}_seed{seed}_d{depth}.npy", codes, allow_pickle=False)
    return codes


# ------------------------------------------------------------------------------------------------------ images
def clean_decode_set(count: int, seed: int = 0, min_side: int = 64, max_side: int = 256) -> list[np.ndarray]:
    """Many never-watermarked images for false-detection rates: crops (``min_side``-``max_side`` px) of the held-out
    photos and held-out procedural images (a quarter). Deterministic in ``seed``."""
    from backend.watermark.datasets import HELDOUT_SEED_BASE, heldout_images, procedural_image

    rng = np.random.default_rng(seed + 7)
    n_proc = count // 4
    out = heldout_images(count - n_proc, seed=seed + 1, min_side=min_side, max_side=max_side, photo_fraction=1.0)
    out += [procedural_image(HELDOUT_SEED_BASE + 5_000_000 + seed * 100_003 + i,
                             int(rng.integers(min_side, max(min_side, max_side // 2) + 1)))
            for i in range(n_proc)]
    return out


# ------------------------------------------------------------------------------------------------------ config
@dataclass
class EvalConfig:
    """One evaluation. ``tau=None`` picks tau from ``target_fpr`` with the Thm 3 bound (``gamma``: how far the decoder's
    bits on clean content may lean away from 1/2; s = pool size)."""

    backend: str = "tinyhidden"
    attacks: tuple[str, ...] = ("none", "jpeg:50", "resize:0.5", "crop:0.25")
    num_users: int = 10_000
    strategy: str = "absta"
    depth: int = 4
    target_fpr: float = 1e-4
    gamma: float = 0.0
    tau: float | None = None
    psnr: float | None = None
    clean_decodes: int = 0
    seed: int = 0


@dataclass
class AttackRow:
    attack: str
    images: int
    bit_accuracy: float
    bit_accuracy_std: float
    tdr: float
    tar: float
    attribution_accuracy: float
    tdr_lower_bound: float | None
    tar_lower_bound: float
    decode_ms: float
    per_image_bit_accuracy: list[float] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


@dataclass
class EvalResult:
    config: dict
    backend_label: str
    n_bits: int
    tau: float
    num_users: int
    max_pairwise_ba: float
    psnr_mean: float
    psnr_min: float
    ssim_mean: float
    embed_ms: float
    rows: list[AttackRow]
    fdr: float | None
    fdr_decodes: int
    fdr_upper_bound: float
    clean_bit_frequency: list[float] | None
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def _std_err(p: float, m: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / max(m, 1))


def evaluate(images: list[np.ndarray], cfg: EvalConfig | None = None, pool: A.UserPool | None = None,
             backend: object | None = None, clean_images: list[np.ndarray] | None = None,
             clean_decoded: tuple[np.ndarray, np.ndarray] | None = None,
             progress: Progress | None = None) -> EvalResult:
    """Run the evaluation. ``images`` are the content to watermark (each image gets a random user of the pool);
    ``pool`` defaults to ``cfg.num_users`` codes of ``cfg.strategy``; ``clean_images`` (or ``cfg.clean_decodes``
    generated ones) give the false-detection rate; ``clean_decoded`` = their ``(bits, ok)`` if already decoded."""
    from backend.watermark.registry import get_method as get_backend

    cfg = cfg or EvalConfig()
    t_start = time.perf_counter()
    if not images:
        raise InputError("No images to evaluate.")
    be = backend or get_backend(cfg.backend, target_psnr=cfg.psnr)
    n = be.n_bits
    if pool is None:
        packed = cached_pool(cfg.strategy, cfg.num_users, n=n, seed=cfg.seed, depth=cfg.depth,
                             progress=sub_progress(progress, 0.0, 0.1))
        pool = A.UserPool(packed, n)
    if pool.n != n:
        raise InputError(f"the pool has {pool.n}-bit codes, the backend embeds {n} bits")
    N = len(pool)
    tau = cfg.tau if cfg.tau is not None else A.tau_for_fpr(n, N, cfg.target_fpr, cfg.gamma)
    stats = _codes.pool_stats(pool.codes, n, max_exact=20_000)
    alpha_max, alpha_min = stats.max_ba, stats.min_ba
    rng = np.random.default_rng(cfg.seed)
    usable = [im for im in images if min(im.shape[:2]) >= be.min_side
              and im.shape[0] * im.shape[1] >= (65536 if be.min_side >= 256 else 0)]
    if not usable:
        raise InputError(f"{be.label} needs images of at least {be.min_side} px per side.")
    targets = rng.choice(N, size=len(usable), replace=N < len(usable))
    wms, psnrs, ssims = [], [], []
    t = time.perf_counter()
    for i, (img, u) in enumerate(zip(usable, targets, strict=True)):
        wm = be.embed(img, pool.bits(int(u)))
        wms.append(wm)
        psnrs.append(psnr(img, wm))
        ssims.append(ssim(img, wm))
        report(progress, 0.1 + 0.3 * (i + 1) / len(usable), f"embedding {i + 1}/{len(usable)}")
    embed_ms = 1000 * (time.perf_counter() - t) / len(usable)
    rows = []
    for a_i, spec in enumerate(cfg.attacks):
        ctx = None
        if _attacks.needs_context(spec):
            def detect(imgs: list[np.ndarray]) -> np.ndarray:
                bits, ok = be.decode_batch(imgs)
                return pool.match(bits, tau, k=1).detected & ok

            ctx = _attacks.AdversarialContext(detect=detect, n_bits=n,
                                              decoder_logits=getattr(be, "decoder_logits", None))
        attacked = []
        for i, wm in enumerate(wms):
            attacked.append(_attacks.apply_chain(wm, spec, seed=cfg.seed * 7919 + i, context=ctx))
        t = time.perf_counter()
        bits, ok = be.decode_batch(attacked)
        decode_ms = 1000 * (time.perf_counter() - t) / len(attacked)
        truth = pool.bits(targets)
        per_acc = np.where(ok, (bits == truth).mean(axis=1), 0.5)
        m = pool.match(bits, tau, k=1)
        detected = m.detected & ok
        correct = (m.user_index == targets) & ok
        beta = float(per_acc.mean())
        tar_lb = A.tar_lower_bound(n, min(max(beta, 0.0), 1.0), tau, alpha_max)
        tdr_lb = A.tdr_lower_bound(n, beta, tau, alpha_min) if tau < beta else None
        extra = {"undecodable": int((~ok).sum())}
        if ctx is not None:
            extra["queries"] = ctx.queries_used
            same = [(a, w) for a, w in zip(attacked, wms, strict=True) if a.shape == w.shape]
            extra["linf_255_mean"] = float(np.mean([np.abs(a.astype(int) - w.astype(int)).max() for a, w in same]
                                                   or [0]))
            extra["psnr_vs_watermarked_db"] = float(np.mean([min(psnr(w, a), 99.0) for a, w in same] or [99.0]))
        rows.append(AttackRow(spec, len(attacked), beta, float(per_acc.std()), float(detected.mean()),
                              float((detected & correct).mean()), float(correct.mean()), tdr_lb, tar_lb, decode_ms,
                              [round(float(v), 4) for v in per_acc], extra))
        report(progress, 0.4 + 0.45 * (a_i + 1) / len(cfg.attacks), f"attack {spec} done")
    fdr = None
    freq = None
    n_clean = 0
    if clean_decoded is None:
        clean = clean_images if clean_images is not None else (
            clean_decode_set(cfg.clean_decodes, seed=cfg.seed) if cfg.clean_decodes else [])
        clean_decoded = be.decode_batch(clean) if clean else None
    if clean_decoded is not None:
        bits, ok = clean_decoded
        n_clean = int(len(ok))
        fdr = float((pool.match(bits, tau, k=1).detected & ok).mean())
        freq = [round(float(v), 4) for v in bits[ok].mean(axis=0)] if ok.any() else None
    report(progress, 1.0, "done")
    return EvalResult(
        config=asdict(cfg), backend_label=be.label, n_bits=n, tau=tau, num_users=N, max_pairwise_ba=alpha_max,
        psnr_mean=float(np.mean(psnrs)), psnr_min=float(np.min(psnrs)), ssim_mean=float(np.mean(ssims)),
        embed_ms=embed_ms, rows=rows, fdr=fdr, fdr_decodes=n_clean,
        fdr_upper_bound=A.fdr_upper_bound_independent(N, n, tau, cfg.gamma), clean_bit_frequency=freq,
        seconds=time.perf_counter() - t_start,
    )


def bound_slack(rate: float, m: int, k: float = 3.0) -> float:
    """The spec's sampling slack: k standard errors of an empirical rate over m trials."""
    return k * _std_err(rate, m)


# ----------------------------------------------------------------------------------------------- page helpers
def amplify_residual(original: np.ndarray, watermarked: np.ndarray, gain: float | None = None) -> np.ndarray:
    """The embedded difference made visible: 128 + gain x (watermarked - original), clipped (uint8)."""
    diff = watermarked.astype(np.float32) - original.astype(np.float32)
    if gain is None:
        gain = 60.0 / max(float(np.percentile(np.abs(diff), 99)), 1.0)
    return np.clip(128 + gain * diff, 0, 255).astype(np.uint8)


def embed_and_attribute(img: np.ndarray, user_index: int, pool: A.UserPool, backend: str = "tinyhidden",
                        psnr_db: float | None = None, attack: str = "none", tau: float | None = None,
                        target_fpr: float = 1e-4, top: int = 5, seed: int = 0,
                        progress: Progress | None = None) -> dict:
    """The page's main job: embed user ``user_index``'s watermark (index into ``pool``), post-process, decode, detect
    and attribute among all users. Returns small results (uint8 images, bit arrays, numbers)."""
    from backend.watermark.registry import get_method as get_backend

    be = get_backend(backend, target_psnr=psnr_db)
    if be.n_bits != pool.n:
        raise InputError(f"{be.label} embeds {be.n_bits} bits; the users' codes have {pool.n}.")
    if min(img.shape[:2]) < be.min_side or img.shape[0] * img.shape[1] < (65536 if be.min_side >= 256 else 0):
        raise InputError(f"{be.label} needs at least {be.min_side} x {be.min_side} pixels; this image is "
                         f"{img.shape[1]} x {img.shape[0]}.")
    tau = tau if tau is not None else A.tau_for_fpr(pool.n, len(pool), target_fpr)
    ref = pool.bits(int(user_index))
    report(progress, 0.1, "embedding")
    t = time.perf_counter()
    wm = be.embed(img, ref)
    embed_s = time.perf_counter() - t
    report(progress, 0.4, f"post-processing: {attack}")
    ctx = None
    if _attacks.needs_context(attack):
        def detect(imgs: list[np.ndarray]) -> np.ndarray:
            bits, ok = be.decode_batch(imgs)
            return pool.match(bits, tau, k=1).detected & ok

        ctx = _attacks.AdversarialContext(detect=detect, n_bits=pool.n,
                                          decoder_logits=getattr(be, "decoder_logits", None),
                                          progress=sub_progress(progress, 0.4, 0.8))
    attacked = _attacks.apply_chain(wm, attack, seed=seed, context=ctx)
    report(progress, 0.8, "decoding and matching")
    t = time.perf_counter()
    bits, ok = be.decode_batch([attacked])
    decode_s = time.perf_counter() - t
    t = time.perf_counter()
    m = pool.match(bits[0], tau, k=top)
    match_s = time.perf_counter() - t
    matches = int(round(float(m.score[0]) * pool.n))
    return {
        "backend": be.name, "backend_label": be.label, "user_id": int(pool.ids[user_index]),
        "original": img, "watermarked": wm, "residual": amplify_residual(img, wm), "attacked": attacked,
        "psnr": psnr(img, wm), "ssim": ssim(img, wm), "attack": attack, "decodable": bool(ok[0]),
        "decoded": bits[0], "reference": ref, "bit_accuracy": float((bits[0] == ref).mean()) if ok[0] else None,
        "tau": tau, "tau_bits": A.detection_threshold(pool.n, tau), "detected": bool(m.detected[0] and ok[0]),
        "p_value": A.detection_p_value(matches, pool.n, len(pool)),
        "attributed_user": int(pool.ids[m.user_index[0]]) if m.detected[0] and ok[0] else None,
        "top_users": [int(pool.ids[i]) for i in m.top_index[0]], "top_scores": [float(s) for s in m.top_score[0]],
        "num_users": len(pool), "n_bits": pool.n,
        "seconds": {"embed": embed_s, "decode": decode_s, "match": match_s},
        "queries": ctx.queries_used if ctx else None,
    }


def compare_strategies(num_users: int, n: int = 64, seed: int = 0, depth: int = 4,
                       progress: Progress | None = None) -> dict[str, tuple[np.ndarray, float, float]]:
    """Pools of every selection strategy at the same (n, N, seed): ``{name: (pairwise counts, max BA, seconds)}``."""
    out = {}
    names = list(_codes.STRATEGIES)
    for i, name in enumerate(names):
        t = time.perf_counter()
        packed = _codes.select(name, num_users, n=n, seed=seed, depth=depth)
        seconds = time.perf_counter() - t
        st = _codes.pool_stats(packed, n)
        out[name] = (st.counts, st.max_ba, seconds)
        report(progress, (i + 1) / len(names), f"{name}: max pairwise BA {st.max_ba:.3f}")
    return out


def expected_max_ba_random(num_users: int, n: int) -> float:
    """Union-bound estimate of the largest pairwise BA of ``num_users`` random n-bit codes: the largest k/n whose
    expected number of pairs agreeing in >= k bits is still >= 1 (about 0.80 / 0.84 / 0.92 at N = 10^3 / 10^4 / 10^6
    for n = 64)."""
    from scipy.stats import binom

    pairs = num_users * (num_users - 1) / 2
    if pairs <= 0:
        return 0.5
    for k in range(n, n // 2 - 1, -1):
        if pairs * binom.sf(k - 1, n, 0.5) >= 1.0:
            return k / n
    return 0.5


def theory_vs_users(n: int, betas: dict[str, float], tau: float, users: np.ndarray) -> dict[str, tuple]:
    """Thm 4 TAR lower bounds (random codes, union-bound alpha_max) per named beta and the Thm 3 FDR bound (gamma 0)
    against the number of users."""
    out: dict[str, tuple] = {}
    amax = np.array([expected_max_ba_random(int(u), n) for u in users])
    for name, beta in betas.items():
        out[f"TAR bound, {name} (beta {beta:.3f})"] = (users, np.array(
            [A.tar_lower_bound(n, min(1.0, beta), tau, a) for a in amax]))
    out["FDR bound (Thm 3)"] = (users, np.array([A.fdr_upper_bound_independent(int(u), n, tau) for u in users]))
    return out


def measured_betas(path: Path, backend: str = "tinyhidden",
                   picks: tuple[tuple[str, float], ...] = (("jpeg", 50.0), ("resize", 0.5), ("crop", 0.25)),
                   strategy: str = "absta") -> dict[str, float]:
    """Bit accuracies measured in a shipped evaluation file (``assets/attribution_eval.json``) for a few attacks, with
    the codes of ``strategy``."""
    import json

    if not Path(path).is_file():
        return {}
    out = {}
    for sweep in json.loads(Path(path).read_text()).get("sweeps", []):
        for r in sweep["rows"]:
            if r["backend"] == backend and r["strategy"] == strategy and (sweep["attack"], r["strength"]) in picks:
                out[f"{backend} after {sweep['attack']}:{r['strength']:g}"] = float(r["bit_accuracy"])
    return out


def simulate_vs_users(n: int, beta: float, tau: float, users: list[int], decodes: int = 2000,
                      seed: int = 0, progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Empirical TAR (beta-accurate decodes of random users) and FDR (uniform decodes) on random pools."""
    rng = np.random.default_rng(seed)
    tar, fdr = [], []
    for i, N in enumerate(users):
        pool = A.UserPool(_codes.select_random(int(N), n=n, seed=seed + i), n)
        targets = rng.choice(int(N), decodes)
        r = A.detection_attribution_rates(A.simulate_decodes(pool, targets, beta, seed=seed + i), targets, pool, tau)
        tar.append(r.tar)
        fdr.append(A.false_detection_rate(rng.integers(0, 2, (decodes, n)).astype(np.uint8), pool, tau))
        report(progress, (i + 1) / len(users), f"simulated {N:,} users")
    return {"users": np.asarray(users), "tar": np.asarray(tar), "fdr": np.asarray(fdr)}


def _sweep_case(case: tuple, seed: int, progress: Progress | None = None) -> list[dict]:
    """One (backend, strategy) of :func:`strength_sweep`: every strength of the attack, seeded by the sweep seed."""
    from backend.watermark.registry import get_method as get_backend

    images, attack, strengths, be, st, num_users, clean, decoded, target_fpr = case
    if decoded is None and clean:
        decoded = get_backend(be).decode_batch(clean)
    specs = tuple(f"{attack}:{v:g}" for v in strengths)
    cfg = EvalConfig(backend=be, attacks=specs, num_users=num_users, strategy=st, target_fpr=target_fpr, seed=seed)
    res = evaluate(images, cfg, clean_decoded=decoded, progress=progress)
    return [{"backend": be, "strategy": st, "strength": float(v), "bit_accuracy": row.bit_accuracy,
             "tdr": row.tdr, "tar": row.tar, "attribution_accuracy": row.attribution_accuracy,
             "tar_lower_bound": row.tar_lower_bound, "fdr": res.fdr, "fdr_decodes": res.fdr_decodes,
             "tau": res.tau, "psnr": res.psnr_mean, "ssim": res.ssim_mean, "embed_ms": res.embed_ms,
             "decode_ms": row.decode_ms, "max_pairwise_ba": res.max_pairwise_ba, "users": res.num_users}
            for v, row in zip(strengths, res.rows, strict=True)]


def strength_sweep(images: list[np.ndarray], attack: str, strengths: list[float], backends: list[str],
                   strategies: list[str], num_users: int = 1000, clean: list[np.ndarray] | None = None,
                   target_fpr: float = 1e-4, seed: int = 0, progress: Progress | None = None,
                   executor: str = "local") -> list[dict]:
    """Rows (backend, strategy, strength, bit accuracy, TDR, TAR, FDR, bounds, PSNR) for the evaluation tab.

    One case per (backend, strategy), every case seeded by ``seed`` (the same users, images and attack seeds for
    every backend and strategy); ``executor="ray"`` runs the cases as Ray tasks (``backend.executor.map_cases``)
    with the same numbers."""
    from backend.executor import map_cases
    from backend.watermark.registry import get_method as get_backend

    jobs = [(b, s) for b in backends for s in strategies]
    decoded: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if clean and executor == "local":  # decoded once per backend here; a Ray task decodes its own
        decoded = {b: get_backend(b).decode_batch(clean) for b in backends}
    cases = [(images, attack, list(strengths), be, st, num_users, None if decoded else clean, decoded.get(be),
              target_fpr) for be, st in jobs]
    if executor == "local":  # in turn, with the page's progress (and cancel) inside each case
        out = [_sweep_case(c, int(seed), sub_progress(progress, j / len(cases), (j + 1) / len(cases)))
               for j, c in enumerate(cases)]
    else:
        out = map_cases(_sweep_case, cases, executor=executor, progress=progress, seeds=[int(seed)] * len(cases))
    return [row for rows in out for row in rows]
