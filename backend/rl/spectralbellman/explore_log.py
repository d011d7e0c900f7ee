"""The DeepSea(N) evaluation log: episodes to solve per agent variant, size and seed, and its paired evaluation.

A *variant* is one agent of :data:`backend.rl.spectralbellman.agents.AGENTS` with fixed settings; a *family* groups
the variants of one agent that form its tuning grid (the best variant per N, by median then mean episodes over the
seeds, stands for the family: the grid is chosen on the evaluation seeds, which favours the references). The grids:

* TS with the true features and RLSVI (one-hot features): ``lambda`` in {0.01, 0.1, 1} at ``sigma_exp`` = 0.1 and
  ``sigma_exp`` in {0.01, 1} at ``lambda`` = 0.01 (RLSVI at ``lambda`` = 1 at the smallest size only). Before the treasure is seen the fitted Q is about zero, so the
  sampled Q is ``sqrt(sigma_exp)`` times a draw and its greedy action does not depend on ``sigma_exp``; the prior
  weight ``lambda`` sets how much noisier never-tried directions are than tried ones and is the knob that matters.
* UCB-VI: ``beta`` in {0.01, 0.1, 1}; RND: bonus weight in {0.1, 0.5, 2} (0.1 at the smallest size only).
* TS + SBM (ours): the page's settings (``lambda`` = 1, ``sigma_exp`` = 0.1) and, at the smallest size only,
  ``lambda`` in {0.01, 0.1}; its two ablations at the page's settings, compared with ours at the same settings: the
  features of never-visited pairs zeroed (also on the ``lambda`` grid at the smallest size) and, at the smallest
  size only, nu centred on the normalised fit.

:func:`make_log` runs the grid (``python -m backend.train spectralbellman`` writes ``assets/spectralbellman_deepsea_log
.json``); :func:`evaluate` turns a log into medians, quartiles, the tuned choice per family and paired intervals of
the log-ratio of episodes (ours / reference) over the seeds: the same seed is the same DeepSea instance (the same
action flips) for every agent. Unsolved runs count as budget + 1.

Shapes: a log is a JSON dict with ``runs`` a list of ``{variant, agent, family, params, N, seed, episodes_to_solve,
seconds}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...registry import Registry
from ...runtime import Progress, report
from ...stats import paired_ci
from .agents import AGENTS, AgentConfig
from .mdps import deepsea


def _ts_grid() -> list[dict]:
    return [{"lam": 0.01, "sigma_exp": 0.1}, {"lam": 0.1, "sigma_exp": 0.1}, {"lam": 1.0, "sigma_exp": 0.1},
            {"lam": 0.01, "sigma_exp": 0.01}, {"lam": 0.01, "sigma_exp": 1.0}]


def _rlsvi_grid() -> list[dict]:
    # lambda = 1 at the smallest size only: there it is RLSVI's worst setting by a factor of 4, and at N = 20 a run
    # of it takes minutes
    return [({**p, "small_only": True} if p["lam"] == 1.0 else p) for p in _ts_grid()]


def _ours_grid() -> list[dict]:
    return [{}, {"lam": 0.01}, {"lam": 0.1}]  # {} = the page's settings (lambda 1, sigma_exp 0.1)


def _as_set() -> list[dict]:
    return [{}]


def _as_set_small() -> list[dict]:
    return [{"small_only": True}]


def _ucb_grid() -> list[dict]:
    return [{"ucb_beta": b} for b in (0.01, 0.1, 1.0)]


def _rnd_grid() -> list[dict]:
    # weight 0.1 at the smallest size only: at N = 20 it leaves 2 of the first 5 seeds unsolved within the budget
    # (weights 0.5 and 2 solve every one), and each unsolved run takes minutes
    return [{"rnd_beta": 0.1, "small_only": True}, {"rnd_beta": 0.5}, {"rnd_beta": 2.0}]


# The log's agent families (names of backend.rl.spectralbellman.agents.AGENTS) and their settings grids. Kind: ours;
# ablation (compared with ours at the page's settings); reference (the strongest baselines the exploration claim is
# bounded by, each at its tuned setting); baseline (weak ones, run at the smallest size only; none at present: random
# features and epsilon-greedy never solve DeepSea(10) within 1,000 episodes and run on the page instead).
FAMILIES: Registry[Callable[[], list[dict]]] = Registry("DeepSea log family")
FAMILIES.add("ts_sbm", _ours_grid, kind="ours")
FAMILIES.add("ts_sbm_zero", _ours_grid, kind="ablation")
FAMILIES.add("ts_sbm_mixed", _as_set_small, kind="ablation")
FAMILIES.add("ts_true", _ts_grid, kind="reference")
FAMILIES.add("rlsvi", _rlsvi_grid, kind="reference")
FAMILIES.add("ucbvi", _ucb_grid, kind="reference")
FAMILIES.add("rnd", _rnd_grid, kind="reference")

OURS = FAMILIES.names("ours")[0]
REFERENCES = tuple(FAMILIES.names("reference"))
ABLATIONS = tuple(FAMILIES.names("ablation"))
WEAK = tuple(FAMILIES.names("baseline"))

LOG_NAME = "spectralbellman_deepsea_log.json"
TIERS = {  # sizes, seeds, episode budget
    "full": ((10, 20), 10, 1000),
    "ci": ((6, 10), 10, 400),
}


def variants(sizes: tuple[int, ...]) -> list[dict]:
    """The grid: ``{variant, agent, family, params, sizes}`` per variant, in the order of :data:`FAMILIES`. The weak
    baselines, and ours and its ablations at settings other than the page's, run at the smallest size only (the
    online SBM runs are the expensive ones: at the larger size ours runs untuned, which favours the references)."""
    out: list[dict] = []
    for fam in FAMILIES:
        small_only = fam in WEAK
        for entry in FAMILIES.get(fam)():
            params = {k: v for k, v in entry.items() if k != "small_only"}
            tag = ",".join(f"{k}={v:g}" for k, v in params.items())
            tuned_sbm = (bool(params) and FAMILIES.kind(fam) in ("ours", "ablation")) or entry.get("small_only", False)
            out.append({"variant": f"{fam}[{tag}]" if tag else fam, "agent": fam, "family": fam, "params": params,
                        "sizes": [min(sizes)] if small_only or tuned_sbm else list(sizes)})
    return out


def make_log(tier: str = "full", progress: Progress | None = None, out: Path | None = None,
             only: tuple[str, ...] | None = None, resume: dict | None = None) -> dict:
    """Run every variant on DeepSea(N) for the tier's sizes and seeds (``only``: these families; ``resume``: a log
    of the same tier whose rows are kept and not rerun). With ``out`` the log is rewritten after every run, so a
    stopped run leaves its finished rows."""
    sizes, seeds, budget = TIERS[tier]
    grid = [v for v in variants(sizes) if only is None or v["family"] in only]
    log = {"env": "deepsea", "tier": tier, "sizes": list(sizes), "seeds": list(range(seeds)), "budget": budget,
           "censored_value": budget + 1, "variants": grid, "runs": []}
    done = set()
    if resume is not None:
        if (resume["sizes"], resume["budget"]) != (list(sizes), budget):
            raise ValueError("the log to resume is of another tier")
        everything = variants(sizes)
        keep = {(v["variant"], N) for v in everything for N in v["sizes"]}  # rows outside the grid are dropped
        log["variants"] = everything
        log["runs"] = [r for r in resume["runs"] if (r["variant"], r["N"]) in keep]
        done = {(r["variant"], r["N"], r["seed"]) for r in log["runs"]}
    # the claim's agents first at every size, the weak baselines last
    todo = [(N, seed, v) for weak in (False, True) for N in sizes for v in grid
            if N in v["sizes"] and (v["family"] in WEAK) == weak for seed in range(seeds)
            if (v["variant"], N, seed) not in done]
    for i, (N, seed, v) in enumerate(todo):
        mdp = deepsea(int(N), seed=seed)
        cfg = AgentConfig(episodes=budget, seed=seed, stop_when_solved=True, **v["params"])
        t0 = time.perf_counter()
        run = AGENTS.get(v["agent"])(mdp, cfg, None)
        log["runs"].append({"variant": v["variant"], "agent": v["agent"], "family": v["family"],
                            "params": v["params"], "N": int(N), "seed": seed,
                            "episodes_to_solve": run.episodes_to_solve,
                            "seconds": round(time.perf_counter() - t0, 3)})
        report(progress, (i + 1) / len(todo), f"DeepSea({N}) seed {seed}: {v['variant']}")
        if out is not None:
            Path(out).write_text(json.dumps(log, indent=1) + "\n")
    rank = {v["variant"]: i for i, v in enumerate(log["variants"])}
    log["runs"].sort(key=lambda r: (r["N"], rank.get(r["variant"], len(rank)), r["seed"]))
    if out is not None:
        Path(out).write_text(json.dumps(log, indent=1) + "\n")
    return log


def _table(log: dict) -> dict[str, dict[int, np.ndarray]]:
    """variant -> N -> episodes per seed in seed order (censored at budget + 1)."""
    cens = log["censored_value"]
    rows: dict[str, dict[int, dict[int, float]]] = {}
    for r in log["runs"]:
        v = r["episodes_to_solve"]
        rows.setdefault(r["variant"], {}).setdefault(int(r["N"]), {})[int(r["seed"])] = float(cens if v is None else v)
    return {v: {N: np.array([d[s] for s in sorted(d)]) for N, d in per.items()} for v, per in rows.items()}


def matched_tuning(log: dict, N: int, family: str, other: str) -> tuple[str, str]:
    """The best variant of ``family`` and of ``other`` at size ``N`` over the ``lambda`` values both were run with
    (``sigma_exp`` at the page's 0.1): the two tuned on the same grid."""
    tab = _table(log)
    fam = {v["variant"]: v for v in log["variants"]}

    def lam_of(v: str) -> float:
        return float(fam[v]["params"].get("lam", 1.0))

    def ok(v: str) -> bool:
        return N in tab.get(v, {}) and float(fam[v]["params"].get("sigma_exp", 0.1)) == 0.1

    mine = [v for v in fam if fam[v]["family"] == family and ok(v)]
    theirs = [v for v in fam if fam[v]["family"] == other and ok(v)]
    lams = {lam_of(v) for v in mine} & {lam_of(v) for v in theirs}

    def best(vs: list[str]) -> str:
        vs = [v for v in vs if lam_of(v) in lams]
        return min(vs, key=lambda v: (float(np.median(tab[v][N])), float(np.mean(tab[v][N]))))

    return best(mine), best(theirs)


def evaluate(log: dict) -> dict:
    """Per N: every variant's median / quartiles / solved count, the tuned variant of each family, the strongest
    reference, and paired 95 % t-intervals of the mean log-ratio ln(episodes ours / episodes other) over the seeds
    (negative: ours solves sooner) against every tuned reference family and both ablations."""
    tab = _table(log)
    fam = {v["variant"]: v["family"] for v in log["variants"]}
    cens = log["censored_value"]
    out: dict = {"sizes": {}, "budget": log["budget"], "seeds": len(log["seeds"])}
    for N in log["sizes"]:
        per: dict = {"variants": {}, "tuned": {}}
        for v, d in tab.items():
            if N in d:
                x = d[N]
                per["variants"][v] = {"median": float(np.median(x)), "q25": float(np.percentile(x, 25)),
                                      "q75": float(np.percentile(x, 75)), "mean": float(x.mean()),
                                      "solved": int((x < cens).sum()), "runs": int(x.size),
                                      "values": [int(e) for e in x]}
        families = sorted({fam[v] for v in per["variants"]})
        for f in families:
            cands = [v for v in per["variants"] if fam[v] == f]
            best = min(cands, key=lambda v: (per["variants"][v]["median"], per["variants"][v]["mean"]))
            per["tuned"][f] = best
        refs = [f for f in REFERENCES if f in per["tuned"]]
        strongest = min(refs, key=lambda f: (per["variants"][per["tuned"][f]]["median"],
                                             per["variants"][per["tuned"][f]]["mean"])) if refs else None
        per["strongest"] = strongest
        per["log_ratio"] = {}
        if OURS in per["tuned"]:  # ours tuned against the tuned references; the ablations against ours as set
            pairs = [(per["tuned"][OURS], f, per["tuned"][f]) for f in refs]
            pairs += [(OURS, a, a) for a in ABLATIONS if a in per["tuned"] and OURS in tab]
            for mine, f, other in pairs:
                if tab[mine][N].shape != tab[other][N].shape:
                    raise ValueError(f"{mine} and {other} at N = {N} were not run on the same seeds")
                ci = paired_ci(np.log(tab[mine][N]), np.log(tab[other][N]))
                per["log_ratio"][f] = {"mean": ci.mean, "ci": [ci.low, ci.high], "pairs": ci.n,
                                       "ratio_geomean": float(np.exp(ci.mean)), "ours": mine, "other": other}
        out["sizes"][str(N)] = per
    return out


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


__all__ = ["ABLATIONS", "FAMILIES", "LOG_NAME", "OURS", "REFERENCES", "TIERS", "evaluate", "load", "make_log",
           "matched_tuning", "variants"]
