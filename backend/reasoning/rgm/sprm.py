"""The self-supervised process reward model (SPRM) of the Reflective Generative Model (MetaStone-S1), on the
tiny reasoner: a small head on the policy's own hidden states scores every reasoning step, trained from
final-answer correctness alone.

- Steps: in the paper a step ends at each token that starts a ``.\\n\\n`` run inside ``<think> ... </think>`` (not
  the token right after ``<think>``). The tiny reasoner writes ``<think> s1 ; s2 ; s3 </think> answer``, so a step
  ends at each `` ;`` token inside the thinking span and the last one at ``</think>`` (:func:`step_positions`).
- Features: the penultimate layer's hidden state at each step-end token (``hidden_layer = -2`` of the sampling
  engine), [S, c].
- Head (:class:`SPRMHead`): Linear(c, 2c) -> ReLU -> Dropout(0.5) -> Linear(2c, 1); the score is the sigmoid of its
  logit.
- SPR loss (:func:`spr_loss`): BCE-with-logits of every step's logit against the trajectory's outcome y in {0, 1},
  kept only where the step's own verdict agrees with the outcome (logit > 0 and y = 1, or logit < 0 and y = 0), so
  "right answer, wrong step" noise is not trained; positives and negatives are balanced as in the released code (each
  weighted by the other class's share, positives by a further 1.5). :func:`bce_loss` is the baseline that copies y
  to every step.
- Trajectory score (:func:`aggregate`): the geometric mean of the step scores (the paper's), their product, their
  arithmetic mean, or the last step's (an outcome reward model).

Shapes: ``logits`` [B, S] with ``mask`` [B, S] (True at real steps), ``outcome`` [B] in {0, 1}.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ...registry import Registry


class SPRMHead(nn.Module):
    """Linear(c, 2c) -> ReLU -> Dropout(p) -> Linear(2c, 1): a step's logit from its hidden state [..., c]."""

    def __init__(self, c: int, dropout: float = 0.5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(c, 2 * c), nn.ReLU(), nn.Dropout(dropout), nn.Linear(2 * c, 1))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.net(h).squeeze(-1)


def step_positions(tokens: list[int], step_end_ids: set[int], think_open: int, think_close: int) -> list[int]:
    """Indices of the step-end tokens of one generated sequence: each step-end token inside the thinking span that
    does not directly follow ``<think>`` nor repeat the token before it, then ``</think>`` itself (the end of the
    last step). A sequence without ``</think>`` ends its last step at its last token."""
    start = tokens.index(think_open) if think_open in tokens else -1
    end = tokens.index(think_close) if think_close in tokens else len(tokens)
    out = [i for i in range(start + 1, end)
           if tokens[i] in step_end_ids and i != start + 1 and not (i > 0 and tokens[i - 1] in step_end_ids)]
    last = end if end < len(tokens) else len(tokens) - 1
    if last >= 0 and (not out or out[-1] != last):
        out.append(last)
    return out


def _balanced_bce(logits: torch.Tensor, target: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    bce = nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    pos, neg = keep * target, keep * (1 - target)
    n_pos, n_neg = pos.sum() + 1, neg.sum() + 1
    w = 1.5 * pos * (n_neg / (n_pos + n_neg)) + neg * (n_pos / (n_pos + n_neg))
    return (bce * w).sum() / (w.sum() + 1e-5)


def spr_loss(logits: torch.Tensor, outcome: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The SPR loss (see the module docstring): logits [B, S], outcome [B], mask [B, S] -> a scalar."""
    y = outcome.float()[:, None].expand_as(logits)
    agree = ((logits > 0) & (y > 0.5)) | ((logits < 0) & (y < 0.5))
    return _balanced_bce(logits, y, (mask & agree).float())


def bce_loss(logits: torch.Tensor, outcome: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The baseline: the same balanced BCE with the outcome copied to every step (no agreement filter)."""
    y = outcome.float()[:, None].expand_as(logits)
    return _balanced_bce(logits, y, mask.float())


def _geometric(s: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    n = m.sum(-1).clamp_min(1)
    return torch.exp((torch.log(s.clamp_min(1e-12)) * m).sum(-1) / n)


def _product(s: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return torch.exp((torch.log(s.clamp_min(1e-12)) * m).sum(-1))


def _arithmetic(s: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return (s * m).sum(-1) / m.sum(-1).clamp_min(1)


def _last(s: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    idx = (m.cumsum(-1) * m).argmax(-1)
    return s.gather(-1, idx[:, None]).squeeze(-1)


AGGREGATIONS: Registry[Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = Registry("aggregation")
AGGREGATIONS.add("geometric", _geometric, label="Geometric mean (the paper's)", kind="ours")
AGGREGATIONS.add("product", _product, label="Product", kind="ablation")
AGGREGATIONS.add("arithmetic", _arithmetic, label="Arithmetic mean", kind="ablation")
AGGREGATIONS.add("last", _last, label="Last step (outcome RM)", kind="baseline")


def aggregate(scores: torch.Tensor, mask: torch.Tensor, how: str = "geometric") -> torch.Tensor:
    """Trajectory scores [B] from step scores in (0, 1) [B, S] over the real steps ``mask`` [B, S]."""
    return AGGREGATIONS.get(how)(scores, mask.to(scores.dtype))


LOSSES: Registry[Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = Registry("PRM loss")
LOSSES.add("spr", spr_loss, label="SPR loss (ours)", kind="ours")
LOSSES.add("bce", bce_loss, label="BCE, outcome copied to every step", kind="baseline")
