"""Training and scoring of the SPRM head on collected traces (:mod:`backend.reasoning.rgm.data`).

- :func:`train_head` ``(traces, loss, seed)`` -> :class:`~backend.reasoning.rgm.sprm.SPRMHead`: AdamW (lr 1e-3,
  weight decay 0.01) over mini-batches of 64 traces for ``epochs`` passes, the step logits trained with the named
  loss of :data:`~backend.reasoning.rgm.sprm.LOSSES` against each trace's outcome; deterministic for the seed.
- :func:`step_scores` ``(head, traces)`` -> list of [S_i] step scores in (0, 1) (dropout off).
- :func:`locate_auroc` ``(scores, traces)``: the AUROC of step scores separating the steps before a wrong trace's
  first wrong step from the steps at and after it (traces with a known first wrong step only).
- :func:`trajectory_scores` ``(scores, traces, how)`` -> [P, N] via :func:`~backend.reasoning.rgm.sprm.aggregate`.
"""

from __future__ import annotations

import numpy as np
import torch

from .data import Traces
from .sprm import LOSSES, SPRMHead, aggregate
from .traces import auroc, step_labels


def train_head(traces: Traces, loss: str = "spr", seed: int = 0, epochs: int = 30, lr: float = 1e-3) -> SPRMHead:
    """See the module docstring."""
    fn = LOSSES.get(loss)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x, m = traces.padded()
    y = torch.from_numpy(traces.outcome.reshape(-1).astype(np.float32))
    head = SPRMHead(x.shape[-1])
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.01)
    head.train()
    for _ in range(epochs):
        order = torch.randperm(x.shape[0], generator=g)
        for i in range(0, len(order), 64):
            b = order[i : i + 64]
            out = fn(head(x[b]), y[b], m[b])
            opt.zero_grad()
            out.backward()
            opt.step()
    head.eval()
    return head


@torch.no_grad()
def step_scores(head: SPRMHead, traces: Traces) -> list[np.ndarray]:
    head.eval()
    return [torch.sigmoid(head(torch.from_numpy(f))).numpy() if f.shape[0] else np.zeros(0) for f in traces.features]


def locate_auroc(scores: list[np.ndarray], traces: Traces) -> float:
    """See the module docstring."""
    s, y = [], []
    flat_fw = [f for row in traces.first_wrong for f in row]
    flat_ok = traces.outcome.reshape(-1)
    for sc, fw, ok in zip(scores, flat_fw, flat_ok, strict=True):
        if ok or fw is None or sc.size == 0:
            continue
        lab = step_labels(sc.size, min(fw, sc.size - 1))
        s.append(sc)
        y.append(lab)
    if not s:
        return float("nan")
    return auroc(np.concatenate(s), np.concatenate(y))


def trajectory_scores(scores: list[np.ndarray], traces: Traces, how: str = "geometric") -> np.ndarray:
    """[P, N] trajectory scores (a trace without steps scores 0)."""
    S = max(1, max(x.size for x in scores))
    pad = torch.zeros(len(scores), S, dtype=torch.float64)
    mask = torch.zeros(len(scores), S, dtype=torch.bool)
    for i, x in enumerate(scores):
        pad[i, : x.size] = torch.from_numpy(x.astype(np.float64))
        mask[i, : x.size] = True
    out = aggregate(pad.clamp_min(1e-12), mask, how).numpy()
    out[~mask.any(1).numpy()] = 0.0
    return out.reshape(traces.outcome.shape)
