"""RGM's SPRM pieces: the head's shape, the SPR loss by hand (only steps whose verdict agrees with the outcome are
trained, classes balanced as released), the plain-BCE baseline, the aggregations, the step positions of the tiny
reasoner's format, and the first-wrong-step labels with their AUROC."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.reasoning.rgm.sprm import AGGREGATIONS, SPRMHead, aggregate, bce_loss, spr_loss, step_positions
from backend.reasoning.rgm.traces import auroc, first_wrong_step, parse_steps, step_labels


def _bce(x, y):
    return -(y * math.log(1 / (1 + math.exp(-x))) + (1 - y) * math.log(1 - 1 / (1 + math.exp(-x))))


LOGITS = torch.tensor([[2.0, -1.0, 0.5], [-3.0, 1.0, 0.0]])
OUTCOME = torch.tensor([1, 0])
MASK = torch.tensor([[True, True, True], [True, True, False]])


def test_head_shape_and_parameters():
    h = SPRMHead(16)
    assert h(torch.zeros(3, 5, 16)).shape == (3, 5)
    assert sum(p.numel() for p in h.parameters()) == 16 * 32 + 32 + 32 + 1


def test_spr_loss_by_hand():
    # kept: (0, 0) and (0, 2) agree with y = 1, (1, 0) agrees with y = 0; (0, 1) and (1, 1) disagree, (1, 2) is padding
    # positives 2 + 1 = 3, negatives 1 + 1 = 2: weight 1.5 * 2 / 5 = 0.6 each positive, 3 / 5 = 0.6 the negative
    want = (_bce(2.0, 1) + _bce(0.5, 1) + _bce(-3.0, 0)) / 3
    assert float(spr_loss(LOGITS, OUTCOME, MASK)) == pytest.approx(want, rel=1e-5)
    # the baseline trains every real step: 3 positives (w = 1.5 * 3 / 7), 2 negatives (w = 4 / 7)
    wp, wn = 1.5 * 3 / 7, 4 / 7
    base = (wp * (_bce(2, 1) + _bce(-1, 1) + _bce(0.5, 1)) + wn * (_bce(-3, 0) + _bce(1, 0))) / (3 * wp + 2 * wn)
    assert float(bce_loss(LOGITS, OUTCOME, MASK)) == pytest.approx(base, rel=1e-5)


def test_spr_loss_gives_no_gradient_to_steps_that_disagree():
    x = LOGITS.clone().requires_grad_(True)
    spr_loss(x, OUTCOME, MASK).backward()
    assert x.grad[0, 1] == 0 and x.grad[1, 1] == 0 and x.grad[1, 2] == 0
    assert x.grad[0, 0] != 0 and x.grad[1, 0] != 0


def test_aggregations():
    s = torch.tensor([[0.5, 0.8, 0.2], [0.9, 0.6, 0.3]])
    m = torch.tensor([[True, True, True], [True, True, False]])
    got = {k: aggregate(s, m, k) for k in AGGREGATIONS}
    assert torch.allclose(got["geometric"], torch.tensor([(0.5 * 0.8 * 0.2) ** (1 / 3), (0.9 * 0.6) ** 0.5]))
    assert torch.allclose(got["product"], torch.tensor([0.08, 0.54]))
    assert torch.allclose(got["arithmetic"], torch.tensor([0.5, 0.75]))
    assert torch.allclose(got["last"], torch.tensor([0.2, 0.6]))
    # the product falls with length for the same per-step quality; the geometric mean does not
    long = torch.full((1, 8), 0.9)
    short = torch.full((1, 2), 0.9)
    assert aggregate(long, long > 0, "product") < aggregate(short, short > 0, "product")
    assert torch.isclose(aggregate(long, long > 0), aggregate(short, short > 0))


def test_step_positions_of_the_tiny_reasoner_format():
    OPEN, CLOSE, SEMI = 5, 6, 7
    toks = [OPEN, 9, 9, SEMI, 9, SEMI, 9, CLOSE, 3]
    assert step_positions(toks, {SEMI}, OPEN, CLOSE) == [3, 5, 7]
    assert step_positions([OPEN, SEMI, 9, SEMI, SEMI, 9], {SEMI}, OPEN, CLOSE) == [3, 5]  # no close: last token


def test_first_wrong_step_and_auroc():
    gold = ("12 + 5 = 17", "17 * 3 = 51", "51 - 4 = 47")
    assert first_wrong_step(list(gold), gold) is None
    assert first_wrong_step(["12 + 5 = 17", "17 * 3 = 52", "52 - 4 = 48"], gold) == 1
    assert first_wrong_step(["12 + 5 = 17", "17 * 3 = 51"], gold) == 1  # stops early: its last step is wrong
    assert first_wrong_step(parse_steps("<think> 12 - 5 = 7 ; 7 * 3 = 21 </think> 21"), gold) == 0
    assert list(step_labels(4, 2)) == [1, 1, 0, 0]
    assert auroc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert auroc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    assert auroc([0.5, 0.5], [1, 0]) == 0.5
    assert math.isnan(auroc([0.5], [1]))
    rng = np.random.default_rng(0)
    s, y = rng.random(200), rng.random(200) < 0.5
    pairs = np.mean([(a > b) + 0.5 * (a == b) for a in s[y] for b in s[~y]])
    assert auroc(s, y) == pytest.approx(pairs)


def test_collect_train_and_score_on_a_small_model():
    from backend.models import tinyreasoner as tr
    from backend.reasoning import tasks
    from backend.reasoning.rgm.data import collect
    from backend.reasoning.rgm.fit import locate_auroc, step_scores, train_head, trajectory_scores

    torch.manual_seed(0)
    cfg = tr.TinyReasonerConfig(n_layer=2, hidden=32, n_head=2, intermediate=64)
    model, tok = tr.build(cfg, tr.base_vocab())
    reasoner = tr.TinyReasoner(model.eval(), tok, cfg, {})
    probs = tasks.generate(3, "grammar", seed=1, steps=(1, 2))
    traces = collect(reasoner, probs, 2, seed=0)
    assert traces.outcome.shape == (3, 2) and len(traces.features) == 6
    assert all(f.shape[1] == 32 and f.shape[0] == s for f, s in zip(traces.features, traces.n_steps.ravel(),
                                                                    strict=True))
    head = train_head(traces, "spr", seed=0, epochs=2)
    scores = step_scores(head, traces)
    assert all(((s > 0) & (s < 1)).all() for s in scores)
    assert trajectory_scores(scores, traces).shape == (3, 2)
    a = locate_auroc(scores, traces)
    assert math.isnan(a) or 0 <= a <= 1
