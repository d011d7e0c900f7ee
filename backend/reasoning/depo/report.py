"""Reading GRPO runs: rollout tokens to reach an accuracy, the speed-up against full-data GRPO, mean curves.

- :func:`tokens_to_reach` ``(curve, target)``: the rollout tokens at which a held-out accuracy curve (rows with
  ``tokens`` and ``accuracy``, in order) first reaches ``target``, linearly interpolated between the two evaluations
  around the crossing; None when it never does.
- :func:`speedup` ``(full_runs, runs, share=0.95)``: target = ``share`` x the mean final accuracy of the full-data
  runs; per seed (runs paired by seed) tokens_full / tokens_ours; the ratio of the mean tokens; ``reached`` False
  when a run never reaches the target; ``measurable`` False when the starting policy already meets the target
  (full-data GRPO did not improve, so the tokens to reach it say nothing).
- :func:`mean_curve`: the curves of several seeds averaged at each evaluation step (tokens and accuracy).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def tokens_to_reach(curve: list[dict], target: float) -> float | None:
    """Rollout tokens where ``curve`` first reaches ``target`` (interpolated); None if never."""
    prev = None
    for row in curve:
        if row["accuracy"] >= target:
            if prev is None or row["accuracy"] == prev["accuracy"]:
                return float(row["tokens"])
            f = (target - prev["accuracy"]) / (row["accuracy"] - prev["accuracy"])
            return float(prev["tokens"] + f * (row["tokens"] - prev["tokens"]))
        prev = row
    return None


def final_accuracy(run: dict) -> float:
    """The last evaluation's held-out accuracy of a run log."""
    return float(run["curve"][-1]["accuracy"])


def speedup(full_runs: list[dict], runs: list[dict], share: float = 0.95) -> dict[str, Any]:
    """Speed-up of ``runs`` over ``full_runs`` at ``share`` of full-data GRPO's mean final accuracy (see the module
    docstring). Runs are paired by their config's seed."""
    target = share * float(np.mean([final_accuracy(r) for r in full_runs]))
    by_seed = {r["config"]["seed"]: r for r in full_runs}
    per_seed, full_tok, our_tok = [], [], []
    reached = True
    for r in runs:
        f = by_seed.get(r["config"]["seed"])
        tf = tokens_to_reach(f["curve"], target) if f else None
        to = tokens_to_reach(r["curve"], target)
        if to is None:
            reached = False
        full_tok.append(tf)
        our_tok.append(to)
        per_seed.append(None if (tf is None or to is None or to <= 0) else tf / to)
    ok_full = [t for t in full_tok if t is not None]
    ok_ours = [t for t in our_tok if t is not None]
    ratio = None
    if reached and ok_full and ok_ours and float(np.mean(ok_ours)) > 0:
        ratio = float(np.mean(ok_full)) / float(np.mean(ok_ours))
    start = float(np.mean([r["curve"][0]["accuracy"] for r in full_runs]))
    return {"target": target, "share": share, "reached": reached, "tokens_full": full_tok, "tokens_ours": our_tok,
            "per_seed": per_seed, "speedup": ratio, "start_accuracy": start,
            "measurable": bool(start < target)}


def mean_curve(runs: list[dict]) -> list[dict]:
    """Seeds averaged per evaluation index: rows of step, mean tokens, mean accuracy, its min and max."""
    n = min(len(r["curve"]) for r in runs)
    out = []
    for i in range(n):
        rows = [r["curve"][i] for r in runs]
        acc = [x["accuracy"] for x in rows]
        out.append({"step": rows[0]["step"], "tokens": float(np.mean([x["tokens"] for x in rows])),
                    "accuracy": float(np.mean(acc)), "low": float(min(acc)), "high": float(max(acc))})
    return out
