"""Sampling, scoring, SFT and GRPO for a :class:`backend.reasoning.bridge.model.BridgedLM` (both arms).

- :func:`sample_width` ``(reasoner, model, questions, n, ...)`` -> :class:`backend.reasoning.sampling.Samples`: N
  samples per question through the sampling engine; with Bridge blocks the N samples of a question are one group
  (they attend to each other at every step), without them they are independent draws of the same policy.
- :func:`score` ``(samples, problems)`` -> per question: right samples, pass@N (any right), majority vote right,
  distinct right solutions (different texts with the right answer), generated tokens.
- :func:`sft_sets` builds the warm-up data: for each training problem a set of ``n`` right solutions (the base
  policy's own right samples, topped up with the generator's reference solution); :func:`sft_step` one
  teacher-forced update on a few sets (a set is one group of the Bridge).
- :func:`grpo_update`: one GRPO step (:func:`backend.reasoning.grpo.grpo_step`) on ``n`` rollouts per problem,
  reward 1 for the right final answer; with Bridge the rollouts and the teacher-forced pass are grouped the same way.

Shapes: questions [B]; samples [B, N, T]; SFT sets ``(prompt ids, [n completion id lists])``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..sampling import Samples, SamplingConfig, TinyReasonerAdapter, sample
from ..tasks import MARKERS, Problem, extract_answer, format_solution

MAX_NEW_TOKENS = 256


class BridgeAdapter(TinyReasonerAdapter):
    """The tiny reasoner's prompt format and tokenizer over a :class:`BridgedLM`."""

    def __init__(self, reasoner: Any, model: Any):
        super().__init__(reasoner)
        self.model = model
        self.name = "tinyreasoner + Bridge" if model.has_bridge else "tinyreasoner"


def sample_width(reasoner: Any, model: Any, questions: list[Any], n: int, temperature: float = 1.0, seed: int = 0,
                 max_new_tokens: int = MAX_NEW_TOKENS, progress: Any = None, cancel: Any = None) -> Samples:
    """N samples per question (see the module docstring); deterministic for the seed."""
    cfg = SamplingConfig(n=n, max_new_tokens=max_new_tokens, temperature=temperature)
    lm = BridgeAdapter(reasoner, model)
    with model.grouped(n, len(questions) * n):
        return sample(lm, list(questions), cfg, seed=seed, progress=progress, cancel=cancel)


@dataclass
class Scores:
    """Per question [B]: right samples (of N), pass@N, majority right, distinct right texts, generated tokens."""

    right: np.ndarray
    passed: np.ndarray
    majority: np.ndarray
    distinct: np.ndarray
    tokens: np.ndarray
    n: int

    @property
    def accuracy(self) -> float:
        return float(self.right.mean() / self.n)

    def summary(self) -> dict[str, float]:
        return {"accuracy": self.accuracy, "pass_at_n": float(self.passed.mean()),
                "majority": float(self.majority.mean()), "distinct_right": float(self.distinct.mean()),
                "tokens_per_sample": float(self.tokens.mean() / self.n)}


def answers(samples: Samples) -> list[list[int | None]]:
    m = MARKERS["tinyreasoner"]
    return [[extract_answer(t, m) for t in row] for row in samples.text]


def score(samples: Samples, problems: list[Problem]) -> Scores:
    """Scores of ``samples`` [B, N] against the problems' exact answers."""
    ans = answers(samples)
    B, N = len(problems), samples.config.n
    right, passed, maj, distinct = (np.zeros(B, dtype=int) for _ in range(4))
    for b, p in enumerate(problems):
        ok = [a == p.answer for a in ans[b]]
        right[b], passed[b] = sum(ok), any(ok)
        votes = Counter(a for a in ans[b] if a is not None)
        maj[b] = bool(votes) and max(votes.items(), key=lambda kv: (kv[1], -ans[b].index(kv[0])))[0] == p.answer
        distinct[b] = len({samples.text[b][i].strip() for i in range(N) if ok[i]})
    return Scores(right, passed, maj, distinct, samples.lengths.sum(-1).numpy().astype(int), N)


# --------------------------------------------------------------------------------------------------------- SFT

def sft_sets(reasoner: Any, problems: list[Problem], n: int, seed: int = 0,
             temperature: float = 1.0) -> list[tuple[list[int], list[list[int]]]]:
    """For each problem ``n`` right solutions: the base policy's right samples (seed ``seed``), then the reference
    solution ``<think> steps </think> answer`` repeated to fill the set; each completion ends with ``<eos>``."""
    tok = reasoner.tokenizer
    s = sample(reasoner, [p.question for p in problems], SamplingConfig(n=n, max_new_tokens=MAX_NEW_TOKENS,
                                                                       temperature=temperature), seed=seed)
    ans = answers(s)
    out = []
    for b, p in enumerate(problems):
        good = [s.tokens(b, i) for i in range(n) if ans[b][i] == p.answer and s.finish_reason[b][i] == "eos"]
        ref = tok.encode(" " + format_solution(p)) + [tok.eos_token_id]
        out.append((s.prompt_ids[b], (good + [ref] * n)[:n]))
    return out


def _teacher_batch(sets: list[tuple[list[int], list[list[int]]]], pad: int) -> tuple[list[list[int]], Any, Any]:
    prompts = [p for p, comps in sets for _ in comps]
    comps = [c for _, cs in sets for c in cs]
    T = max(len(c) for c in comps)
    ids = torch.full((len(comps), T), pad, dtype=torch.long)
    mask = torch.zeros((len(comps), T), dtype=torch.bool)
    for r, c in enumerate(comps):
        ids[r, : len(c)] = torch.tensor(c)
        mask[r, : len(c)] = True
    return prompts, ids, mask


def sft_step(model: Any, optimizer: Any, sets: list[tuple[list[int], list[list[int]]]]) -> float:
    """One teacher-forced cross-entropy step on the completions of ``sets`` (each set one group); the mean loss."""
    from ..grpo import completion_logprobs

    n = len(sets[0][1])
    prompts, ids, mask = _teacher_batch(sets, model.pad_id)
    model.train()
    with model.grouped(n, len(prompts)):
        logp = completion_logprobs(model, prompts, ids, mask, model.pad_id)
    loss = -(logp.sum() / mask.sum())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    return float(loss.detach())


# --------------------------------------------------------------------------------------------------------- GRPO

def grpo_update(reasoner: Any, model: Any, optimizer: Any, problems: list[Problem], n: int, seed: int,
                temperature: float = 1.0, max_new_tokens: int = MAX_NEW_TOKENS) -> dict[str, float]:
    """One GRPO step on ``n`` rollouts per problem; returns reward, rollout tokens, seconds of sampling and update."""
    from ..grpo import GRPOConfig, batch_from_samples, grpo_step

    t0 = time.perf_counter()
    s = sample_width(reasoner, model, [p.question for p in problems], n, temperature, seed, max_new_tokens)
    t1 = time.perf_counter()
    rewards = torch.tensor(score_matrix(s, problems), dtype=torch.float32)
    batch = batch_from_samples(s, rewards)
    batch.pad_id = model.pad_id
    with model.grouped(n, len(problems) * n):
        res = grpo_step(model, optimizer, batch, GRPOConfig(temperature=1.0))
    return {"reward": float(rewards.mean()), "tokens": int(s.generated_tokens), "sample_s": t1 - t0,
            "update_s": time.perf_counter() - t1, "loss": res.loss}


def score_matrix(samples: Samples, problems: list[Problem]) -> list[list[float]]:
    """[B, N] 1.0 where a sample's final answer is right."""
    ans = answers(samples)
    return [[float(a == p.answer) for a in ans[b]] for b, p in enumerate(problems)]
