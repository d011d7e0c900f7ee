"""T1's reward model: a logistic head on the tiny reasoner's own penultimate-layer state at the last token of a
candidate (prompt and candidate read in one forward pass), trained on the reasoner's sampled solutions labelled by
their final answer (``python -m backend.train t1``).

- :func:`features` ``(reasoner, prompts, candidates)`` -> [M, c]: the hidden state of layer ``-2`` at each
  candidate's last token; ``prompts`` are token-id lists (a cache's ``prompt_ids``) or questions, ``candidates`` are
  token-id lists or texts (a pasted solution is tokenised with a leading space, as the model writes it).
- :class:`RewardModel`: standardisation of the features and Linear(c, 1); ``score`` -> r in (0, 1).
- :func:`fit` ``(X, y)`` -> :class:`RewardModel`: class-balanced logistic regression (L2, full-batch L-BFGS).

Shapes: features [M, c] float32 with c the reasoner's width; labels [M] in {0, 1}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

LAYER = -2


def _ids(reasoner: Any, prompt: Any, cand: Any) -> list[int]:
    p = list(prompt) if not isinstance(prompt, str) else list(reasoner.prompt_ids(prompt))
    c = list(cand) if not isinstance(cand, str) else reasoner.tokenizer.encode(" " + cand.strip())
    limit = int(reasoner.config.max_positions)
    return (p + c)[-limit:]


@torch.no_grad()
def features(reasoner: Any, prompts: list[Any], candidates: list[Any], layer: int = LAYER,
             batch: int = 64) -> np.ndarray:
    """[M, c] hidden states of ``layer`` at the last token of each (prompt, candidate) pair."""
    model = reasoner.model
    pad = reasoner.tokenizer.pad_token_id
    out = []
    seqs = [_ids(reasoner, p, c) for p, c in zip(prompts, candidates, strict=True)]
    for i in range(0, len(seqs), batch):
        part = seqs[i : i + batch]
        T = max(len(s) for s in part)
        ids = torch.full((len(part), T), pad, dtype=torch.long)
        mask = torch.zeros((len(part), T), dtype=torch.long)
        for j, s in enumerate(part):  # right padding: positions stay 0..len-1
            ids[j, : len(s)] = torch.tensor(s)
            mask[j, : len(s)] = 1
        hs = model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[layer]
        last = torch.tensor([len(s) - 1 for s in part])
        out.append(hs[torch.arange(len(part)), last].float().numpy())
    return np.concatenate(out) if out else np.zeros((0, model.config.hidden_size), dtype=np.float32)


@dataclass
class RewardModel:
    """r(x, y) = sigmoid(w . (h - mean) / std + b) on the features of :func:`features`."""

    mean: np.ndarray
    std: np.ndarray
    w: np.ndarray
    b: float

    def logits(self, X: np.ndarray) -> np.ndarray:
        return ((np.asarray(X, dtype=np.float64) - self.mean) / self.std) @ self.w + self.b

    def score(self, X: np.ndarray) -> np.ndarray:
        """r in (0, 1), clipped to [1e-6, 1 - 1e-6] so that a veto (f = 0) always decides against it."""
        return np.clip(1.0 / (1.0 + np.exp(-self.logits(X))), 1e-6, 1 - 1e-6)

    def state(self) -> dict[str, torch.Tensor]:
        return {"mean": torch.tensor(self.mean), "std": torch.tensor(self.std), "w": torch.tensor(self.w),
                "b": torch.tensor([self.b], dtype=torch.float64)}

    @classmethod
    def from_state(cls, s: dict[str, torch.Tensor]) -> RewardModel:
        return cls(s["mean"].double().numpy(), s["std"].double().numpy(), s["w"].double().numpy(), float(s["b"][0]))


def fit(X: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 200) -> RewardModel:
    """Class-balanced L2 logistic regression on standardised features (deterministic: L-BFGS from zero)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean, std = X.mean(0), X.std(0) + 1e-6
    Z = torch.tensor((X - mean) / std)
    t = torch.tensor(y)
    pos = max(float(t.sum()), 1.0)
    neg = max(float(len(t) - t.sum()), 1.0)
    wts = torch.where(t > 0.5, len(t) / (2 * pos), len(t) / (2 * neg))
    w = torch.zeros(Z.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(Z @ w + b, t, weight=wts)
                + l2 * (w * w).sum() / 2)
        loss.backward()
        return loss

    opt.step(closure)
    return RewardModel(mean, std, w.detach().numpy().copy(), float(b.detach()[0]))
