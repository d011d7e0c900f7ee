"""Claims of the AML page, re-evaluated on the shipped heads (``python -m backend.train aml``: 3 maskings x 5 seeds,
400 steps of 32 samples each from the same 1,600 training scenes; seed s gives every masking the same initial
weights and batches).

ci tier: the first 150 scenes of the held-out source (other backdrops, textures, clutter and phrasings than the
training scenes). full tier: the first 1,000.

Claims: (1) AML's held-out mIoU and oIoU exceed the unmasked training's, (2) and random block masking's at AML's
rate, paired over the 5 seeds (95 % t intervals; "not resolved" when an interval contains zero); (3) the training-time
overhead of AML's extra pass, from the training seconds each head recorded (evaluation excluded).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.scenes.aml import jobs as J
from backend.scenes.aml.masking import MASKINGS
from backend.stats import paired_ci

OURS = MASKINGS.names("ours")[0]
NONE = next(m for m in MASKINGS.names("baseline") if not getattr(MASKINGS[m], "needs_patchmax", True))
RANDOM = next(m for m in MASKINGS.names("baseline") if m != NONE)
CI_N, FULL_N = 150, 1000


@pytest.fixture(scope="module")
def heldout() -> J.EvalResult:
    return J.run_evaluate(J.EvalConfig(split="heldout", n=CI_N))


def _key(masking: str, metric: str) -> str:
    return f"{masking}_{metric}".replace("@0.", "_at_0")


def _values(res: J.EvalResult, masking: str, metric: str) -> list[float]:
    return [r[metric] for r in sorted(res.rows, key=lambda r: r["seed"]) if r["masking"] == masking]


def _gain(res: J.EvalResult, base: str, record_claim) -> None:  # noqa: ANN001
    mi = paired_ci(_values(res, OURS, "miou"), _values(res, base, "miou"))
    oi = paired_ci(_values(res, OURS, "oiou"), _values(res, base, "oiou"))
    record_claim(**mi.numbers("miou_gain"), **oi.numbers("oiou_gain"),
                 aml_miou_per_seed=_values(res, OURS, "miou"), baseline_miou_per_seed=_values(res, base, "miou"),
                 **{_key(m, k): round(res.means[m][k], 3) for m in (OURS, base) for k in J.METRICS})
    assert mi.mean > 0 and oi.mean > 0


CAUSE = (
    "Diagnosed cause: the first pass scores alignment with the head's own features while the head is learning. "
    "PatchMax (the largest softmax weight over the expression's tokens) is low where a patch matches several words "
    "at once, and on templated expressions that is the referent itself (its colour and its shape word): after "
    "training, over 400 training scenes, AML zeroes 5.7 % of the referent's blocks against 2.8 % of all blocks (seed "
    "0), 13.2 % against 5.2 % (seed 3); and seed 1 collapsed (PatchMax 0.30 everywhere, 91 % of blocks zeroed, "
    "held-out mIoU 21.5), a feedback loop in which a head that cannot see learns no alignment. The paper starts from "
    "pretrained Swin-B / BERT encoders fine-tuned end to end, and its official train.py also back-propagates the "
    "unmasked pass; the miniature trains a small head from scratch with the paper's masked-only loss."
)
MEASURED = ("held-out source, 150 scenes, 5 seeds: mIoU AML 36.99, random blocks 44.48, no masking 46.88 (oIoU "
            "37.13 / 42.81 / 45.52; prec@0.5 28.8 / 42.4 / 46.5); per seed AML 49.4 / 21.8 / 42.6 / 27.5 / 43.7 "
            "against no masking 42.7 / 51.4 / 48.0 / 46.4 / 45.9. ")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: AML minus no masking, mIoU -9.89 (95 % "
                   "interval -27.69 to +7.91), oIoU -8.39 (-25.69 to +8.91); " + MEASURED + CAUSE)
def test_aml_beats_no_masking_on_heldout(heldout, record_claim) -> None:
    _gain(heldout, NONE, record_claim)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: AML minus random blocks at AML's rate, mIoU "
                   "-7.49 (95 % interval -26.37 to +11.40), oIoU -5.68 (-23.49 to +12.14); " + MEASURED + "Random "
                   "blocks at the same per-sample count avoid the referent no more than elsewhere, so they cost less. "
                   + CAUSE)
def test_aml_beats_random_masking_on_heldout(heldout, record_claim) -> None:
    _gain(heldout, RANDOM, record_claim)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: AML's training runs took +42.1 % longer than the "
                   "unmasked ones (mean of the per-seed ratios; 95 % interval -11 % to +95 %; per seed 56.5 / 95.8 / "
                   "63.9 / 66.0 / 45.0 s against 58.5 / 53.2 / 59.9 / 34.3 / 33.4 s, 400 steps; the random control "
                   "+13.6 %), above the bound of +34.4 %. Cause: the first pass (the head's projections, the Gaussian "
                   "projection, the token softmax) and the pixel-level selection (bilinear upsampling to 112 x 112 and "
                   "a sort over 12,544 pixels per sample) are a large share of a step of a 91k-parameter head, where "
                   "the paper's Swin-B forward and backward dominate; the runs also shared the machine with other "
                   "jobs. benchmarks/aml.py, with the step times side by side (median of 5 interleaved rounds of 20 "
                   "steps), measures +54.9 % per step (82.4 ms against 53.1 ms; random blocks +55.2 %, since they "
                   "compute AML's count).")
def test_aml_training_time_overhead(heldout, record_claim) -> None:
    """Per seed: AML's training seconds over the unmasked run's, minus 1 (the extra no-gradient pass and the
    masking); bound: at most twice the paper's +17.2 %."""
    a = np.array(_values(heldout, OURS, "train_seconds"), float)
    b = np.array(_values(heldout, NONE, "train_seconds"), float)
    ratio = a / b - 1
    ci = paired_ci(ratio, np.zeros_like(ratio))
    record_claim(**ci.numbers("overhead"), aml_seconds=a.tolist(), none_seconds=b.tolist(), bound=0.344)
    assert ci.mean <= 0.344


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: on 1,000 held-out "
                   "scenes, 5 seeds, mIoU AML 35.23, random blocks 42.78, no masking 44.72 (oIoU 34.92 / 40.86 / "
                   "42.90); AML minus no masking -9.49 (95 % interval -26.01 to +7.03), minus random blocks -7.55 "
                   "(-24.49 to +9.38). " + CAUSE)
def test_full_aml_against_both_baselines(record_claim) -> None:
    res = J.run_evaluate(J.EvalConfig(split="heldout", n=FULL_N))
    out = {}
    for base in (NONE, RANDOM):
        mi = paired_ci(_values(res, OURS, "miou"), _values(res, base, "miou"))
        out.update(mi.numbers(f"miou_gain_vs_{base}"))
    record_claim(**out, **{_key(m, k): round(res.means[m][k], 3) for m in res.means for k in J.METRICS})
    assert out[f"miou_gain_vs_{NONE}"] > 0 and out[f"miou_gain_vs_{RANDOM}"] > 0
