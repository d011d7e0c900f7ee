"""DEPO's online rollout pruning: explorability per sample, the keep share of a batch, the replay of the least-explored.

- :func:`explorability` of one sample (prompt) at one epoch, from its G rollouts: sum over rollouts of |A_i| H(o_i),
  A = (r - mean r) / (std r + eps) within the group (:func:`backend.reasoning.grpo.group_advantages`) and H(o_i) the
  rollout's mean per-token entropy of the policy (nats). Incorrect rollouts whose entropy exceeds ``ratio`` times the
  mean entropy of the group's correct rollouts are dropped as pathological (rambling high-entropy failures). A group
  whose rollouts are all correct or all wrong has A = 0 everywhere, hence explorability exactly 0.
- :class:`Pruner` keeps, per sample, the explorability of every epoch it was rolled out in; its score is the mean over
  its last ``history`` epochs. At each step it keeps the top ``keep_share(epoch)`` of the batch (samples never rolled
  out are always kept; the share decays linearly from 1 to the ``floor`` over ``decay_epochs``), prunes the rest
  before any rollout (their tokens are saved), and adds ``replay`` samples of the pruned pool that were rolled out the
  fewest times (the least explored; ties: pruned longest ago), so no sample is starved.

Shapes: rewards, entropies, correct [G] per sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def explorability(rewards: Any, entropies: Any, ratio: float = 1.5, eps: float = 1e-4) -> float:
    """sum_i |A_i| H_i over the kept rollouts of one group (``rewards`` in {0, 1}, ``entropies`` the rollouts' mean
    token entropies); 0 for all-correct and all-wrong groups."""
    import torch

    from ..grpo import group_advantages

    r = np.asarray(rewards, dtype=np.float64)
    h = np.asarray(entropies, dtype=np.float64)
    adv = group_advantages(torch.as_tensor(r, dtype=torch.float32)[None], True, eps)[0].double().numpy()
    correct = r > 0.5
    keep = np.ones_like(correct)
    if correct.any():
        keep = correct | (h <= ratio * h[correct].mean())
    return float(np.sum(np.abs(adv[keep]) * h[keep]))


def keep_share(epoch: int, floor: float = 0.4, decay_epochs: int = 4) -> float:
    """The share of each batch kept at ``epoch`` (0-based): 1 at epoch 0, linearly down to ``floor`` at
    ``decay_epochs``, then ``floor``."""
    if decay_epochs <= 0:
        return floor
    return max(floor, 1.0 - (1.0 - floor) * epoch / decay_epochs)


@dataclass
class Pruner:
    """Per-sample explorability history and the pruning decision of each step (see the module docstring)."""

    floor: float = 0.4
    decay_epochs: int = 4
    history: int = 2
    replay: int = 1
    scores: dict[int, dict[int, float]] = field(default_factory=dict)   # sample -> {epoch: explorability}
    rollouts: dict[int, int] = field(default_factory=dict)              # sample -> epochs rolled out
    pruned_at: dict[int, int] = field(default_factory=dict)             # sample -> step it was last pruned

    def score(self, i: int) -> float:
        """Mean explorability over the sample's last ``history`` epochs (inf when never rolled out)."""
        s = self.scores.get(i)
        if not s:
            return math.inf
        last = [s[e] for e in sorted(s)[-self.history:]]
        return float(np.mean(last))

    def choose(self, batch: list[int], epoch: int, step: int) -> tuple[list[int], list[int], list[int]]:
        """(kept, pruned, replayed) sample ids of one batch: the top share by score, and up to ``replay`` of the
        least-explored pruned samples outside the batch."""
        n_keep = max(1, math.ceil(keep_share(epoch, self.floor, self.decay_epochs) * len(batch) - 1e-9))
        order = sorted(batch, key=lambda i: (-self.score(i), i))
        kept, pruned = order[:n_keep], order[n_keep:]
        for i in pruned:
            self.pruned_at[i] = step
        pool = [i for i in self.pruned_at if i not in batch and self.pruned_at[i] < step]
        pool.sort(key=lambda i: (self.rollouts.get(i, 0), self.pruned_at[i], i))
        replayed = pool[:self.replay] if pruned else []
        for i in replayed:
            del self.pruned_at[i]
        return kept, pruned, replayed

    def record(self, i: int, epoch: int, value: float) -> None:
        """Store sample ``i``'s explorability at ``epoch`` (the latest value of an epoch wins)."""
        self.scores.setdefault(i, {})[epoch] = float(value)
        self.rollouts[i] = self.rollouts.get(i, 0) + 1
