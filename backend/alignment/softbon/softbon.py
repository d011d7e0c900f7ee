"""Soft Best-of-N (SBoN) sampling, its exact policy, the KL bound and the regret decomposition.

Paper: Aminian, Shenfeld, Asadi, Beirami, Mroueh, "Best-of-N through the Smoothing Lens: KL Divergence and Regret
Analysis", ICLR 2026 (arXiv 2507.05913). No public code exists; this module follows the paper's definitions:

- SBoN: draw Y_1..Y_N i.i.d. from pi_ref, return Y_Z with P(Z = i) = softmax_i(beta * r(Y_i)). beta -> infinity is
  hard Best-of-N (ties split uniformly), beta = 0 is plain sampling from pi_ref. :func:`sample_sbon` is that algorithm,
  literally (the row maximum is subtracted before ``exp``, so beta = 1e4 is fine).
- The exact policy of SBoN on a finite response space (:func:`sbon_policy`). With w_k = exp(beta (r_k - max r)) the
  softmax choice is an exponential race (pick the smallest E_i / w_{Y_i}, E_i ~ Exp(1)), which gives the closed form

      pi_SBoN(y) = N pi_ref(y) * integral_0^inf w_y exp(-w_y t) M(t)^(N-1) dt,   M(t) = sum_k pi_ref(k) exp(-w_k t).

  We integrate in s = log t with the trapezoid rule (the integrand is smooth and decays doubly exponentially on the
  right and exponentially on the left, so the rule converges geometrically; the result matches brute-force
  enumeration of all K^N tuples to ~1e-12, see the tests). When beta times the smallest reward gap exceeds
  40 + log N, the policy is hard BoN's to within total variation (N - 1) exp(-beta gap) < 1e-17 and we return that.
- Calibrated rewards (:func:`calibrate`): r -> P_{Y ~ pi_ref}(r(Y) <= r), the reward's CDF under the reference
  (uniform on [0, 1] under pi_ref for a continuous reward); any increasing transform of the true reward calibrates to
  the same values, so its tilted error is 0.
- Lemma 4.1: KL(pi_SBoN || pi_ref) <= log(N / (1 + (N - 1) exp(-beta))) for rewards in [0, 1]; for a reward of range
  R it reads log(N / (1 + (N - 1) exp(-beta R))) (the lemma bounds the density ratio, and beta R is what enters).
  We also show the hard-BoN bound log N - 1 + 1/N (Beirami et al.), which the lemma's limit log N loosens.
- Theorem 5.2 (regret vs the optimal policy, calibrated rewards): regret <= sqrt(eps_beta) (sqrt(C_hat) + sqrt(C_star))
  + 2 sqrt(0.5 log(1 + (C_hat - 1) / N)) + log(C_star) / beta, with the tilted error
  eps_beta = (1/beta) log E_ref[exp(beta (r* - r_hat)^2)] and coverage C = 1 / pi_ref(argmax set)
  (:func:`regret_terms`).

Demo design (ours, from the project spec): a discrete response space of K items with pi_ref ~ Dirichlet(a 1_K),
true rewards r* ~ U(0, 1), a proxy r_hat = r* + noise * N(0, 1) and a fraction of "hackable" items whose proxy sits
above every honest item while their true reward is low. A text mode scores pasted candidate answers by MiniLM cosine
similarity to a reference answer (the proxy) under a uniform pi_ref over the candidates.

Public API: :class:`InstanceConfig`, :func:`make_instance`, :func:`text_instance`, :func:`sbon_policy`,
:func:`bon_policy`, :func:`get_method`, :func:`sample_sbon`, :func:`kl_divergence`, :func:`kl_bound`,
:func:`bon_kl_bound`, :func:`regret_terms`, :class:`SweepConfig`, :func:`sweep` -> :class:`SweepResult`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report

# ----------------------------------------------------------------------------------------------------- instances


MAX_K = 5000


@dataclass(frozen=True)
class InstanceConfig:
    """A random discrete alignment problem, checked on construction (InputError).

    ``k`` responses; ``dirichlet_alpha`` the concentration of pi_ref ~ Dirichlet(alpha 1_K) (1 = uniform on the
    simplex); ``noise`` the proxy's Gaussian noise std; ``hack_frac`` the fraction of hackable items (proxy in
    ``[1 + hack_gap/2, 1 + hack_gap]``, true reward in ``[0, hack_true_max]``).
    """

    k: int = 200
    dirichlet_alpha: float = 1.0
    noise: float = 0.0
    hack_frac: float = 0.0
    hack_gap: float = 0.1
    hack_true_max: float = 0.2

    def __post_init__(self) -> None:
        if not 2 <= self.k <= MAX_K:
            raise InputError(f"The response space must have 2..{MAX_K} items; got {self.k}.")
        if not (self.dirichlet_alpha > 0 and self.noise >= 0 and 0 <= self.hack_frac < 1):
            raise InputError("Need dirichlet_alpha > 0, noise >= 0 and a hackable fraction in [0, 1).")


@dataclass
class Instance:
    """A finite response space. All arrays have shape ``[K]``; ``labels`` name the responses (text mode)."""

    pi_ref: np.ndarray
    true_reward: np.ndarray | None
    proxy: np.ndarray
    hackable: np.ndarray
    labels: list[str] = field(default_factory=list)

    @property
    def k(self) -> int:
        return int(self.pi_ref.shape[0])


def make_instance(cfg: InstanceConfig | None = None, seed: int = 0) -> Instance:
    """Draw a random instance (deterministic in ``seed``)."""
    cfg = cfg or InstanceConfig()
    rng = np.random.default_rng(seed)
    pi_ref = rng.dirichlet(np.full(cfg.k, cfg.dirichlet_alpha))
    pi_ref = np.maximum(pi_ref, 1e-300)
    pi_ref /= pi_ref.sum()
    true = rng.uniform(0.0, 1.0, cfg.k)
    proxy = true + cfg.noise * rng.standard_normal(cfg.k)
    hackable = np.zeros(cfg.k, dtype=bool)
    n_hack = round(cfg.hack_frac * cfg.k)
    if n_hack:
        idx = rng.choice(cfg.k, n_hack, replace=False)
        hackable[idx] = True
        true[idx] = rng.uniform(0.0, cfg.hack_true_max, n_hack)
        top = proxy[~hackable].max() if (~hackable).any() else 1.0
        proxy[idx] = max(top, 1.0) + cfg.hack_gap * rng.uniform(0.5, 1.0, n_hack)
    return Instance(pi_ref=pi_ref, true_reward=true, proxy=proxy, hackable=hackable)


def split_candidates(text: str) -> list[str]:
    """Candidate answers from pasted text: blocks separated by blank lines, or one per line if there are no blocks."""
    blocks = [b.strip() for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]
    if len(blocks) <= 1:
        blocks = [line.strip() for line in text.splitlines() if line.strip()]
    return blocks


CANDIDATES_MAX_BYTES = 512 * 1024


def read_candidates(data: bytes, name: str = "the upload", max_candidates: int = 64, max_chars: int = 2000) -> list[str]:
    """Candidate answers from an uploaded UTF-8 text file (see :func:`split_candidates`): 2..``max_candidates``
    answers of at most ``max_chars`` characters, else InputError."""
    from ...io.text import decode_text

    cands = split_candidates(decode_text(data, max_bytes=CANDIDATES_MAX_BYTES, name=name))
    if len(cands) < 2:
        raise InputError(f"{name} holds {len(cands)} answer(s); at least two are needed (separate them by blank lines "
                         "or put one per line).")
    if len(cands) > max_candidates:
        raise InputError(f"{name} holds {len(cands)} answers; the limit is {max_candidates}.")
    too_long = [i + 1 for i, c in enumerate(cands) if len(c) > max_chars]
    if too_long:
        raise InputError(f"Answer(s) {', '.join(map(str, too_long[:5]))} of {name} are longer than {max_chars} "
                         "characters; shorten them.")
    return cands


def text_instance(
    candidates: Sequence[str],
    reference: str,
    embed: Callable[[list[str]], np.ndarray],
    true_scores: Sequence[float] | None = None,
    max_candidates: int = 64,
    max_chars: int = 2000,
) -> Instance:
    """Proxy rewards for pasted candidate answers: cosine similarity of each candidate's embedding to the reference's.

    ``embed(list of texts) -> [B, H]`` L2-normalised embeddings (e.g. MiniLM's ``TextEncoder.embed``). pi_ref is
    uniform over the candidates (they stand for N i.i.d. draws of a model). ``true_scores`` (optional, one per
    candidate) are the user's own judgement, used as the true reward.
    """
    cands = [c.strip() for c in candidates if c and c.strip()]
    if len(cands) < 2:
        raise InputError("Paste at least two candidate answers (separate them by blank lines or put one per line).")
    if len(cands) > max_candidates:
        raise InputError(f"{len(cands)} candidates pasted; the limit is {max_candidates}.")
    if not reference or not reference.strip():
        raise InputError("Give a reference answer: the proxy reward is each candidate's similarity to it.")
    too_long = [i + 1 for i, c in enumerate(cands) if len(c) > max_chars]
    if too_long or len(reference) > max_chars:
        raise InputError(f"Each text must be at most {max_chars} characters (too long: candidates {too_long or '-'}).")
    true = None
    if true_scores is not None and len(true_scores) > 0:
        if len(true_scores) != len(cands):
            raise InputError(f"Give one true score per candidate: {len(cands)} candidates, {len(true_scores)} scores.")
        true = np.asarray(true_scores, dtype=float)
        if not np.isfinite(true).all():
            raise InputError("True scores must be finite numbers.")
    emb = np.asarray(embed([reference.strip(), *cands]), dtype=float)
    sims = emb[1:] @ emb[0]
    k = len(cands)
    return Instance(
        pi_ref=np.full(k, 1.0 / k), true_reward=true, proxy=sims, hackable=np.zeros(k, dtype=bool), labels=cands
    )


# ------------------------------------------------------------------------------------------------------- rewards


def calibrate(reward: np.ndarray, pi_ref: np.ndarray) -> np.ndarray:
    """Calibrated reward ``F(r(y)) = P_{Y ~ pi_ref}(r(Y) <= r(y))`` in ``(0, 1]``; shape ``[K]``."""
    reward = np.asarray(reward, dtype=float)
    order = np.argsort(reward, kind="stable")
    sorted_r = reward[order]
    cdf = np.cumsum(pi_ref[order])
    # ties share the CDF value of their last member
    last = np.searchsorted(sorted_r, sorted_r, side="right") - 1
    out = np.empty_like(reward)
    out[order] = np.minimum(cdf[last], 1.0)
    return out


def _check(pi_ref: np.ndarray, reward: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    pi_ref = np.asarray(pi_ref, dtype=float)
    reward = np.asarray(reward, dtype=float)
    if pi_ref.ndim != 1 or pi_ref.shape != reward.shape:
        raise InputError("pi_ref and the reward must be 1-D arrays of the same length.")
    if not (np.isfinite(reward).all() and np.isfinite(pi_ref).all()) or (pi_ref < 0).any():
        raise InputError("Rewards must be finite and pi_ref non-negative.")
    if n < 1:
        raise InputError(f"N must be at least 1; got {n}.")
    return pi_ref / pi_ref.sum(), reward


# ------------------------------------------------------------------------------------------------------ policies


def bon_policy(pi_ref: np.ndarray, reward: np.ndarray, n: int) -> np.ndarray:
    """Exact hard Best-of-N policy ``[K]``: the highest of N draws, ties split uniformly among the tied draws.

    A reward level v with reference mass m above mass F_< of lower levels is the maximum with probability
    (F_< + m)^N - F_<^N, shared among the level's items in proportion to their reference mass.
    """
    pi_ref, reward = _check(pi_ref, reward, n)
    if n == 1:
        return pi_ref.copy()
    levels, inverse = np.unique(reward, return_inverse=True)
    mass = np.bincount(inverse, weights=pi_ref, minlength=levels.size)
    below = np.concatenate([[0.0], np.cumsum(mass)[:-1]])
    p_level = np.clip(below + mass, 0.0, 1.0) ** n - below**n
    share = np.divide(pi_ref, mass[inverse], out=np.zeros_like(pi_ref), where=mass[inverse] > 0)
    return p_level[inverse] * share


def _log_grid(lw: np.ndarray, h: float) -> np.ndarray:
    lo, hi = -36.0 + float((-lw).min()), 4.0 + float((-lw).max())
    return np.arange(lo, hi + h, h)


def sbon_policies(pi_ref: np.ndarray, reward: np.ndarray, ns: Sequence[int], beta: float, h: float = 0.1) -> np.ndarray:
    """Exact SBoN policies for several N at one beta: ``[len(ns), K]`` (see the module docstring for the formula)."""
    ns = [int(n) for n in ns]
    pi_ref, reward = _check(pi_ref, reward, min(ns))
    if beta < 0:
        raise InputError("beta must be >= 0 (beta = 0 is plain sampling, beta = inf hard BoN).")
    if beta == 0:
        return np.tile(pi_ref, (len(ns), 1))
    levels = np.unique(reward)
    gap = float(np.diff(levels).min()) if levels.size > 1 else math.inf
    if not math.isfinite(beta) or beta * gap > 40.0 + math.log(max(ns)):
        return np.stack([bon_policy(pi_ref, reward, n) for n in ns])
    lw = beta * (reward - reward.max())  # log weights <= 0
    s = _log_grid(lw, h)  # [G]
    support = pi_ref > 0
    log_pi = np.where(support, np.log(np.where(support, pi_ref, 1.0)), -np.inf)
    # pass 1: log M(e^s) = logsumexp_k (log pi_k - exp(s + lw_k)); pass 2: the per-item integrals. Chunks of K bound
    # the memory at ~4e6 doubles whatever the grid length.
    chunk = max(1, int(4e6 // max(1, s.size)))
    log_m = np.full(s.shape, -np.inf)
    integrals = np.empty((len(ns), reward.size))
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, reward.size, chunk):
            eu = np.exp(s[None, :] + lw[start : start + chunk, None])  # [k, G]: w_k t
            log_m = np.logaddexp(log_m, _logsumexp(log_pi[start : start + chunk, None] - eu, axis=0))
        log_m = np.minimum(log_m, 0.0)
        weights = np.exp(np.outer(np.asarray(ns, float) - 1.0, log_m))  # [len(ns), G]: M(t)^(N-1)
        for start in range(0, reward.size, chunk):
            u = s[None, :] + lw[start : start + chunk, None]
            kernel = np.exp(u - np.exp(u))  # w_y t exp(-w_y t) in the variable s = log t: a Gumbel-type bump
            integrals[:, start : start + chunk] = h * (weights @ kernel.T)  # trapezoid (zero at both grid ends)
    out = np.asarray(ns, float)[:, None] * pi_ref[None, :] * integrals
    out /= out.sum(1, keepdims=True)  # removes the ~1e-13 quadrature error in total mass
    out[np.asarray(ns) == 1] = pi_ref  # one draw: exactly pi_ref
    return out


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def sbon_policy(pi_ref: np.ndarray, reward: np.ndarray, n: int, beta: float) -> np.ndarray:
    """Exact SBoN policy ``[K]`` for one (N, beta); beta = inf gives :func:`bon_policy`, beta = 0 gives pi_ref."""
    return sbon_policies(pi_ref, reward, [n], beta)[0]


def sampling_policy(pi_ref: np.ndarray, reward: np.ndarray, n: int, beta: float = 0.0) -> np.ndarray:
    """Plain sampling (one draw from pi_ref): the beta = 0 baseline."""
    pi_ref, _ = _check(pi_ref, reward, n)
    return pi_ref.copy()


def tilted_policy(pi_ref: np.ndarray, reward: np.ndarray, n: int, beta: float) -> np.ndarray:
    """The tilted policy pi_ref exp(beta r) / Z: the N -> infinity limit of SBoN (the KL-regularised optimum)."""
    pi_ref, reward = _check(pi_ref, reward, 1)
    if not math.isfinite(beta):
        best = reward == reward.max()
        return np.where(best, pi_ref, 0.0) / pi_ref[best].sum()
    logits = np.log(np.maximum(pi_ref, 1e-300)) + beta * (reward - reward.max())
    p = np.exp(logits - logits.max())
    return p / p.sum()


def hard_bon_policy(pi_ref: np.ndarray, reward: np.ndarray, n: int, beta: float = math.inf) -> np.ndarray:
    """Hard Best-of-N in the registry's signature (``beta`` is ignored: it is infinite)."""
    return bon_policy(pi_ref, reward, n)


POLICIES: Registry[Callable[[np.ndarray, np.ndarray, int, float], np.ndarray]] = Registry("selection policy")
POLICIES.add("sbon", sbon_policy, label="Soft Best-of-N", kind="ours",
             about="Soft Best-of-N (softmax over N proxy rewards at inverse temperature beta)")
POLICIES.add("bon", hard_bon_policy, label="hard Best-of-N", kind="baseline",
             about="hard Best-of-N (beta = infinity)")
POLICIES.add("sampling", sampling_policy, label="plain sampling", kind="reference",
             about="plain sampling from pi_ref (beta = 0, or N = 1)")
POLICIES.add("tilted", tilted_policy, label="tilted policy", kind="reference",
             about="tilted policy pi_ref exp(beta r)/Z (the N = infinity limit)")

# A selection policy by name (case-insensitive): ``f(pi_ref, reward, n, beta) -> policy [K]``; an unknown name raises
# InputError listing the valid ones.
get_method = POLICIES.get


# ------------------------------------------------------------------------------------------------------ sampling


@dataclass
class SampleResult:
    """Monte Carlo SBoN: ``chosen [num_tuples]`` item indices; ``estimate [K]`` the Rao-Blackwellised policy estimate
    (average over tuples of the softmax weights per item); ``empirical [K]`` the histogram of ``chosen``."""

    chosen: np.ndarray
    estimate: np.ndarray
    empirical: np.ndarray


def sample_sbon(
    pi_ref: np.ndarray,
    reward: np.ndarray,
    n: int,
    beta: float,
    num_tuples: int = 40_000,
    seed: int = 0,
    chunk: int = 8192,
) -> SampleResult:
    """The SBoN algorithm itself: ``num_tuples`` times, draw N responses from pi_ref, pick one by softmax(beta r).

    The row maximum is subtracted before ``exp`` (beta = inf picks uniformly among the tied maxima: hard BoN).
    """
    pi_ref, reward = _check(pi_ref, reward, n)
    rng = np.random.default_rng(seed)
    k = pi_ref.size
    cdf = np.cumsum(pi_ref)
    cdf[-1] = 1.0
    chosen = np.empty(num_tuples, dtype=np.int64)
    estimate = np.zeros(k)
    for start in range(0, num_tuples, chunk):
        m = min(chunk, num_tuples - start)
        idx = np.minimum(np.searchsorted(cdf, rng.random((m, n)), side="right"), k - 1)  # [m, N]
        r = reward[idx]
        if math.isfinite(beta):
            logits = beta * (r - r.max(1, keepdims=True))
            w = np.exp(logits)
        else:
            w = (r == r.max(1, keepdims=True)).astype(float)
        w /= w.sum(1, keepdims=True)
        pick = (w.cumsum(1) < rng.random((m, 1))).sum(1)
        pick = np.minimum(pick, n - 1)
        chosen[start : start + m] = idx[np.arange(m), pick]
        estimate += np.bincount(idx.ravel(), weights=w.ravel(), minlength=k)
    estimate /= num_tuples
    empirical = np.bincount(chosen, minlength=k) / num_tuples
    return SampleResult(chosen=chosen, estimate=estimate, empirical=empirical)


# ------------------------------------------------------------------------------------------------- KL and regret


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) in nats for distributions on the same finite set (0 log 0 = 0)."""
    p = np.asarray(p, float)
    q = np.asarray(q, float)
    mask = p > 0
    return float(np.sum(p[mask] * (np.log(p[mask]) - np.log(q[mask]))))


def kl_bound(n: int | np.ndarray, beta: float | np.ndarray, reward_range: float = 1.0) -> np.ndarray | float:
    """Lemma 4.1: log(N / (1 + (N - 1) exp(-beta R))) for rewards of range R (R = 1 for [0, 1] rewards)."""
    n = np.asarray(n, float)
    beta = np.asarray(beta, float)
    with np.errstate(over="ignore"):
        out = np.log(n) - np.log1p((n - 1) * np.exp(-beta * reward_range))
    return float(out) if out.ndim == 0 else out


def bon_kl_bound(n: int | np.ndarray) -> np.ndarray | float:
    """Hard-BoN bound log N - 1 + 1/N (Beirami et al. 2024), the sharper limit of the lemma's log N."""
    n = np.asarray(n, float)
    out = np.log(n) - 1.0 + 1.0 / n
    return float(out) if out.ndim == 0 else out


def tilted_error(true: np.ndarray, proxy: np.ndarray, pi_ref: np.ndarray, beta: float) -> float:
    """eps_beta = (1/beta) log E_ref[exp(beta (r* - r_hat)^2)]: MSE as beta -> 0, squared sup-norm as beta -> inf."""
    d2 = (np.asarray(true, float) - np.asarray(proxy, float)) ** 2
    if beta == 0:
        return float(np.sum(pi_ref * d2))
    if not math.isfinite(beta):
        return float(d2[pi_ref > 0].max())
    a = beta * d2
    m = a.max()
    return float((m + math.log(np.sum(pi_ref * np.exp(a - m)))) / beta)


def coverage(reward: np.ndarray, pi_ref: np.ndarray) -> float:
    """C_inf = 1 / pi_ref(set of responses with the highest reward)."""
    reward = np.asarray(reward, float)
    return float(1.0 / pi_ref[reward == reward.max()].sum())


def regret_terms(true_cal: np.ndarray, proxy_cal: np.ndarray, pi_ref: np.ndarray, n: int, beta: float) -> dict:
    """Theorem 5.2's three terms (calibrated rewards): proxy error, finite-sample error, softening bias, and total."""
    eps = tilted_error(true_cal, proxy_cal, pi_ref, beta)
    c_hat, c_star = coverage(proxy_cal, pi_ref), coverage(true_cal, pi_ref)
    proxy_term = math.sqrt(max(eps, 0.0)) * (math.sqrt(c_hat) + math.sqrt(c_star))
    sample_term = 2.0 * math.sqrt(0.5 * math.log1p((c_hat - 1.0) / n))
    soft_term = math.log(c_star) / beta if math.isfinite(beta) and beta > 0 else (0.0 if beta else math.inf)
    return {
        "eps_beta": eps,
        "coverage_proxy": c_hat,
        "coverage_true": c_star,
        "proxy_error": proxy_term,
        "finite_sample": sample_term,
        "softening_bias": soft_term,
        "bound": proxy_term + sample_term + soft_term,
    }


# --------------------------------------------------------------------------------------------------------- sweep


def proxy_reward(inst: Instance) -> np.ndarray:
    """The raw proxy reward ``[K]``."""
    return inst.proxy


def calibrated_reward(inst: Instance) -> np.ndarray:
    """The proxy's CDF under pi_ref ``[K]`` (:func:`calibrate`)."""
    return calibrate(inst.proxy, inst.pi_ref)


def true_reward(inst: Instance) -> np.ndarray:
    """The true reward ``[K]`` (an oracle selection); InputError when the instance has none."""
    if inst.true_reward is None:
        raise InputError("This instance has no true reward to select with.")
    return inst.true_reward


REWARDS: Registry[Callable[[Instance], np.ndarray]] = Registry("selection reward")
REWARDS.add("proxy", proxy_reward, label="raw proxy", kind="baseline", about="the proxy reward as it is")
REWARDS.add("calibrated", calibrated_reward, label="calibrated proxy", kind="ours",
            about="the proxy's CDF under pi_ref (Theorem 5.2's setting)")
REWARDS.add("true", true_reward, label="true reward (oracle)", kind="reference",
            about="selection with the true reward (the KL claim's setting)")

MAX_N = 4096
MAX_BETA = 1e5


@dataclass(frozen=True)
class SweepConfig:
    """Grid of a sweep, checked on construction (InputError). ``reward``: what SBoN selects with (:data:`REWARDS`):
    ``proxy`` (raw), ``calibrated`` (proxy CDF under pi_ref) or ``true`` (oracle selection). ``betas`` are inverse
    temperatures (the finite ones are used); hard BoN is added as beta = inf."""

    ns: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    betas: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
    reward: str = "proxy"

    def __post_init__(self) -> None:
        object.__setattr__(self, "ns", tuple(self.ns))
        object.__setattr__(self, "betas", tuple(self.betas))
        object.__setattr__(self, "reward", REWARDS.key(self.reward))
        ns = sorted({int(n) for n in self.ns})
        betas = sorted({float(b) for b in self.betas if math.isfinite(b)})
        if not ns or ns[0] < 1 or ns[-1] > MAX_N:
            raise InputError(f"N must lie in 1..{MAX_N}.")
        if not betas or betas[0] < 0 or betas[-1] > MAX_BETA:
            raise InputError(f"beta must lie in [0, {MAX_BETA:g}].")


@dataclass
class SweepResult:
    """Expected true reward, KL and bounds over the (N, beta) grid; arrays are ``[len(ns), len(betas) + 1]`` where the
    last column is hard BoN (beta = inf). ``policies`` keeps the exact policies ``[len(ns), len(betas) + 1, K]``."""

    ns: list[int]
    betas: list[float]
    true_reward: np.ndarray | None
    proxy_reward: np.ndarray
    kl: np.ndarray
    kl_bound: np.ndarray
    bon_kl_bound: np.ndarray
    best_beta: list[float]
    best_true: list[float]
    bon_true: list[float]
    sampling_true: float | None
    reward_range: float
    policies: np.ndarray
    config: dict

    def to_dict(self) -> dict:
        """JSON-friendly summary (no policies)."""

        def clean(a: np.ndarray | None) -> list | None:
            if a is None:
                return None
            return [[None if not math.isfinite(v) else round(float(v), 6) for v in row] for row in np.asarray(a)]

        return {
            "ns": self.ns,
            "betas": [b if math.isfinite(b) else "inf" for b in self.betas],
            "expected_true_reward": clean(self.true_reward),
            "expected_selection_reward": clean(self.proxy_reward),
            "kl": clean(self.kl),
            "kl_bound_lemma41": clean(self.kl_bound),
            "bon_kl_bound": [round(float(v), 6) for v in self.bon_kl_bound],
            "best_beta_per_n": [b if math.isfinite(b) else "inf" for b in self.best_beta],
            "best_true_per_n": self.best_true,
            "bon_true_per_n": self.bon_true,
            "sampling_true": self.sampling_true,
            "reward_range": self.reward_range,
            "config": self.config,
        }


def selection_reward(inst: Instance, which: str) -> np.ndarray:
    """The reward SBoN selects with (a name of :data:`REWARDS`)."""
    return REWARDS.get(which)(inst)


def regret_table(inst: Instance, res: SweepResult) -> dict[int, list[dict]]:
    """Theorem 5.2 per N: for each finite beta > 0 of ``res``, the actual regret of SBoN on calibrated rewards and the
    three terms of the bound (``{N: [{"beta", "regret", ...regret_terms}]}``)."""
    if inst.true_reward is None:
        return {}
    tc, pc = calibrate(inst.true_reward, inst.pi_ref), calibrate(inst.proxy, inst.pi_ref)
    return {
        n: [
            {
                "beta": b,
                "regret": float(tc.max() - sbon_policy(inst.pi_ref, pc, n, b) @ tc),
                **regret_terms(tc, pc, inst.pi_ref, n, b),
            }
            for b in res.betas
            if 0 < b < math.inf
        ]
        for n in res.ns
    }


def sweep(inst: Instance, cfg: SweepConfig | None = None, progress: Progress | None = None) -> SweepResult:
    """Exact SBoN over the (N, beta) grid plus hard BoN: expected true/proxy reward, KL(pi || pi_ref) and Lemma 4.1."""
    cfg = cfg or SweepConfig()
    ns = sorted({int(n) for n in cfg.ns})
    betas = sorted({float(b) for b in cfg.betas if math.isfinite(b)})
    r_sel = selection_reward(inst, cfg.reward)
    rng_r = float(r_sel.max() - r_sel.min())
    all_betas = [*betas, math.inf]
    pols = np.zeros((len(ns), len(all_betas), inst.k))
    for j, beta in enumerate(all_betas):
        report(progress, j / len(all_betas), f"exact SBoN policies at beta = {beta:g}")
        pols[:, j] = sbon_policies(inst.pi_ref, r_sel, ns, beta)
    report(progress, 1.0, "done")
    kl = np.array([[kl_divergence(pols[i, j], inst.pi_ref) for j in range(len(all_betas))] for i in range(len(ns))])
    bound = kl_bound(np.array(ns)[:, None], np.array(all_betas)[None, :], max(rng_r, 1e-300))
    proxy_r = pols @ r_sel
    true_r = pols @ inst.true_reward if inst.true_reward is not None else None
    best_beta, best_true, bon_true = [], [], []
    if true_r is not None:
        for i in range(len(ns)):
            j = int(np.argmax(true_r[i] >= true_r[i].max() - 1e-12))  # smallest beta among (numerical) ties
            best_beta.append(all_betas[j])
            best_true.append(round(float(true_r[i, j]), 6))
            bon_true.append(round(float(true_r[i, -1]), 6))
    return SweepResult(
        ns=ns,
        betas=all_betas,
        true_reward=true_r,
        proxy_reward=proxy_r,
        kl=kl,
        kl_bound=np.asarray(bound),
        bon_kl_bound=np.asarray(bon_kl_bound(np.array(ns))),
        best_beta=best_beta,
        best_true=best_true,
        bon_true=bon_true,
        sampling_true=float(inst.pi_ref @ inst.true_reward) if inst.true_reward is not None else None,
        reward_range=rng_r,
        policies=pols,
        config={"ns": list(cfg.ns), "betas": list(cfg.betas), "reward": cfg.reward},
    )
