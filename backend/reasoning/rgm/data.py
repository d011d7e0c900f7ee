"""Sampled traces of the tiny reasoner with what the SPRM needs: the penultimate-layer state at every step end, the
outcome of the trace and its first wrong step against the grammar's gold solution.

:func:`collect` ``(reasoner, problems, n, temperature, seed)`` -> :class:`Traces`: ``n`` samples per problem in one
batch each (:mod:`backend.reasoning.candidates` in memory), one forward pass per chunk of samples over prompt and
sample (``output_hidden_states``) read at :func:`backend.reasoning.rgm.sprm.step_positions`.

Shapes: ``features[i]`` [S_i, c] for sample i (row-major over problems x samples), ``outcome`` [P, N] bool,
``first_wrong`` [P][N] int or None, ``n_steps`` [P, N].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

LAYER = -2


@dataclass
class Traces:
    """Samples of P problems x N, with per-step features, outcomes and first wrong steps."""

    questions: list[str]
    answers: list[int]
    texts: list[list[str]]
    outcome: np.ndarray
    first_wrong: list[list[int | None]]
    n_steps: np.ndarray
    features: list[np.ndarray]
    final: np.ndarray

    def padded(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(features [P N, S_max, c], mask [P N, S_max]) with zero padding."""
        S = max(1, max(f.shape[0] for f in self.features))
        c = self.features[0].shape[1]
        x = torch.zeros(len(self.features), S, c)
        m = torch.zeros(len(self.features), S, dtype=torch.bool)
        for i, f in enumerate(self.features):
            x[i, : f.shape[0]] = torch.from_numpy(f)
            m[i, : f.shape[0]] = True
        return x, m


@torch.no_grad()
def step_features(reasoner: Any, prompts: list[list[int]], samples: list[list[int]], batch: int = 64) -> list[np.ndarray]:
    """[S_i, c] penultimate-layer states at the step ends of each sample (prompt + sample in one pass)."""
    from .sprm import step_positions

    tok = reasoner.tokenizer
    ends = {tok.index[" ;"], tok.index[";"]}
    out: list[np.ndarray] = []
    for i in range(0, len(samples), batch):
        ps, ss = prompts[i : i + batch], samples[i : i + batch]
        seqs = [list(p) + list(s) for p, s in zip(ps, ss, strict=True)]
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), T), dtype=torch.long)
        for j, s in enumerate(seqs):
            ids[j, : len(s)] = torch.tensor(s)
            mask[j, : len(s)] = 1
        hs = reasoner.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[LAYER]
        for j, (p, s) in enumerate(zip(ps, ss, strict=True)):
            pos = step_positions(list(s), ends, tok.think_open_id, tok.think_close_id) if s else []
            idx = torch.tensor([len(p) + q for q in pos], dtype=torch.long)
            out.append(hs[j, idx].float().numpy() if len(pos) else np.zeros((0, hs.shape[-1]), dtype=np.float32))
    return out


def collect(reasoner: Any, problems: list, n: int, temperature: float = 0.8, seed: int = 0,
            cache: Any = None) -> Traces:
    """See the module docstring (``cache``: a :class:`backend.reasoning.candidates.CandidateCache` to read and
    extend; None samples in memory)."""
    from ..candidates import CandidateCache
    from ..sampling import SamplingConfig
    from ..tasks import MARKERS, extract_answer
    from .traces import first_wrong_step, parse_steps

    cache = cache if cache is not None else CandidateCache(None)
    cfg = SamplingConfig(n=n, max_new_tokens=400, temperature=temperature)
    sets = cache.sample(reasoner, [p.question for p in problems], cfg, seed=seed)
    m = MARKERS["tinyreasoner"]
    texts = [[c.text for c in s.candidates] for s in sets]
    outcome = np.array([[extract_answer(t, m) == p.answer for t in row] for row, p in zip(texts, problems,
                                                                                           strict=True)])
    fw = [[first_wrong_step(parse_steps(t), p.steps) for t in row] for row, p in zip(texts, problems, strict=True)]
    feats = step_features(reasoner, [s.prompt_ids for s in sets for _ in s.candidates],
                          [c.tokens for s in sets for c in s.candidates])
    final = np.array([[np.nan if (a := extract_answer(t, m)) is None else float(a) for t in row] for row in texts])
    n_steps = np.array([[f.shape[0] for f in feats[i * n : (i + 1) * n]] for i in range(len(problems))])
    return Traces([p.question for p in problems], [p.answer for p in problems], texts, outcome, fw, n_steps, feats,
                  final)
