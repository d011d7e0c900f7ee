"""GLOT's headline claims on our miniature (MiniLM, 90% distractors), against the shipped heads.

ci tier: the shipped heads (``assets/glot_heads_<variant>.safetensors``, trained by ``python -m backend.train glot`` on
2000 texts) are evaluated on a fixed subset of the eval split (the first ``N_CI`` of the 500 eval texts; the backbone
states are computed once per session). The bag-of-words control is trained on the same 2000 training texts.
full tier: the same claims on all 500 eval texts, and a retraining from scratch at full scale.

Claims:
- released generator: GLOT >= 0.90;
- hard variant: GLOT beats mean, max, CLS and the unigram bag of words by at least 10 points;
- relational variant: the measured ordering (pinned below from the recorded run): GLOT and AdaPool both beat mean
  pooling by 30+ points and tie with each other within seed noise.
"""

from __future__ import annotations

import json

import pytest
import torch

from backend.runtime import ASSETS
from backend.tokens.glot import stress
from backend.tokens.glot.backbone import encode, load_backbone
from backend.tokens.glot.heads import evaluate_heads, load_heads

N_CI = 160
RESULTS = ASSETS / "glot_results.json"


def _heads(variant: str):
    path = ASSETS / f"glot_heads_{variant}.safetensors"
    if not path.is_file():
        pytest.fail(f"{path.name} is missing: run `python -m backend.train glot`")
    models, meta = load_heads(path)
    # one flat view of the file's settings: how the heads are built, the split they were trained on, their accuracy
    return models, {**meta.config, **meta.data_seeds, "accuracy": meta.quality["accuracy"]}


@pytest.fixture(scope="session")
def minilm():
    return load_backbone("minilm")


def _accuracy(minilm, variant: str, n_eval: int) -> tuple[dict[str, float], dict, stress.StressData]:
    models, meta = _heads(variant)
    assert meta["backbone"] == "minilm" and meta["ratio"] == 0.9
    data = stress.generate(n_eval, meta["ratio"], meta["position"], variant, meta["data_seed"] + 10_000)
    full = stress.generate(meta["n_eval"], meta["ratio"], meta["position"], variant, meta["data_seed"] + 10_000)
    assert data.texts == full.texts[:n_eval]  # the ci subset is a prefix of the recorded eval split
    states = encode(minilm, data.texts, meta["max_tokens"])
    assert states.truncated == 0  # every needle reaches the model
    return evaluate_heads(models, states, data.labels, meta["glot_config"]["tau"]), meta, data


class _Lazy(dict):
    """Evaluates a variant's shipped heads on first access (once per session)."""

    def __init__(self, minilm) -> None:
        super().__init__()
        self.minilm = minilm

    def __missing__(self, variant: str):
        self[variant] = _accuracy(self.minilm, variant, N_CI)
        return self[variant]

    def items(self):
        return [(v, self[v]) for v in stress.VARIANTS]


@pytest.fixture(scope="session")
def ci_acc(minilm) -> _Lazy:
    return _Lazy(minilm)


def _bow_unigram(variant: str, meta: dict, data: stress.StressData) -> float:
    train = stress.generate(meta["n_train"], meta["ratio"], meta["position"], variant, meta["data_seed"])
    return stress.bag_of_words(train.texts, train.labels, data.texts, data.labels, ngrams=1).accuracy


def test_released_generator_glot_at_least_090(ci_acc, record_claim) -> None:
    acc, meta, _ = ci_acc["released"]
    record_claim(glot=acc["glot"], adapool=acc["adapool"], mean=acc["mean"], n_eval=N_CI)
    assert acc["glot"] >= 0.90, acc


def test_hard_variant_glot_beats_set_poolings_and_bag_of_words(ci_acc, record_claim) -> None:
    acc, meta, data = ci_acc["hard"]
    bow = _bow_unigram("hard", meta, data)
    record_claim(glot=acc["glot"], mean=acc["mean"], max=acc["max"], cls=acc["cls"], bow_unigram=bow, n_eval=N_CI)
    for rival, value in {"mean": acc["mean"], "max": acc["max"], "cls": acc["cls"], "bow-unigram": bow}.items():
        assert acc["glot"] >= value + 0.10, (rival, acc, bow)


@pytest.mark.xfail(strict=False, reason=(
    "measured on the shipped heads (500 eval texts, 90% distractors): hard variant GLOT 0.976 vs AdaPool 0.956, "
    "released generator 0.998 vs 0.976, relational 0.925 +- 0.100 vs 0.965 +- 0.020 (3 head seeds): AdaPool does "
    "not collapse on our miniature as it does in the paper (about 60%). MiniLM's self-attention already mixes the "
    "needle's context into each token's state, so a per-token attention readout suffices and the token graph adds "
    "no measurable accuracy"))
def test_hard_variant_glot_beats_adapool(ci_acc, record_claim) -> None:
    """The paper's stress test at 90% distractors: GLOT above attention pooling (AdaPool) by the same 10-point margin
    as the set poolings above."""
    acc, _, _ = ci_acc["hard"]
    record_claim(glot=acc["glot"], adapool=acc["adapool"], n_eval=N_CI)
    assert acc["glot"] >= acc["adapool"] + 0.10, acc


def test_shipped_heads_match_their_recorded_accuracy(ci_acc) -> None:
    """On the ci prefix each head is within sampling noise of the accuracy recorded on the full eval split."""
    for variant, (acc, meta, _) in ci_acc.items():
        for name, recorded in meta["accuracy"].items():
            se = max((recorded * (1 - recorded) / N_CI) ** 0.5, 0.01)
            assert abs(acc[name] - recorded) <= 4 * se, (variant, name, acc[name], recorded)


def test_relational_ordering_is_the_recorded_one(ci_acc) -> None:
    """The page reports GLOT vs AdaPool vs mean on the relational variant whatever the outcome; this pins the ordering
    measured by the training run (seeds 0-2 in glot_results.json) and checks the shipped heads reproduce it."""
    acc, _, _ = ci_acc["relational"]
    rec = json.loads(RESULTS.read_text())["heads"]["relational"]["summary"]
    by = {r["method"]: r for r in rec if r["ratio"] == 0.9}
    assert by["glot"]["seeds"] == 3 and by["adapool"]["seeds"] == 3 and by["mean"]["seeds"] == 3
    _check_relational(acc, by)


def _check_relational(acc: dict[str, float], recorded: dict[str, dict]) -> None:
    for better, worse, margin in RELATIONAL_ORDER:
        assert recorded[better]["accuracy"] >= recorded[worse]["accuracy"] + margin, (better, worse, recorded)
        assert acc[better] >= acc[worse] + margin, (better, worse, acc)
    # GLOT vs AdaPool: a tie within seed noise (the graph does not help over AdaPool here, see the module docstring)
    g, a = recorded["glot"], recorded["adapool"]
    assert abs(g["accuracy"] - a["accuracy"]) <= g["accuracy_std"] + a["accuracy_std"], (g, a)


# Measured by `python -m backend.train glot` (relational, 90% distractors, head seeds 0-2, 500 eval texts):
# mean 0.545 +- 0.008, AdaPool 0.965 +- 0.020, GLOT 0.925 +- 0.100 (seeds: 0.996, 0.996, 0.784).
# Both attention readouts beat mean pooling by far; GLOT and AdaPool tie within seed noise. MiniLM's own
# self-attention already writes the first noun into the second noun's state, so a per-token readout suffices.
RELATIONAL_ORDER: list[tuple[str, str, float]] = [("glot", "mean", 0.30), ("adapool", "mean", 0.30)]


# ------------------------------------------------------------------------------------------------------ full tier
@pytest.mark.full
def test_full_eval_split_claims(minilm, record_claim) -> None:
    rel, _, _ = _accuracy(minilm, "released", stress.N_EVAL)
    record_claim(released_glot=rel["glot"], released_glot_bound=0.90, n_eval=stress.N_EVAL)
    assert rel["glot"] >= 0.90
    hard, meta, data = _accuracy(minilm, "hard", stress.N_EVAL)
    bow = _bow_unigram("hard", meta, data)
    record_claim(**{f"hard_{k}": hard[k] for k in ("glot", "mean", "max", "cls")}, hard_bow_unigram=bow,
                 hard_margin=0.10)
    assert all(hard["glot"] >= v + 0.10 for v in (hard["mean"], hard["max"], hard["cls"], bow))
    record_claim(recorded_diff_bound=0.01)
    for variant in stress.VARIANTS:
        acc, meta, _ = _accuracy(minilm, variant, stress.N_EVAL)
        record_claim(**{f"{variant}_max_diff_to_recorded": max((abs(acc[n] - v) for n, v in meta["accuracy"].items()),
                                                               default=0.0)})
        for name, recorded in meta["accuracy"].items():
            assert abs(acc[name] - recorded) <= 0.01, (variant, name)  # same states, same heads: same numbers


@pytest.mark.full
def test_full_retraining_reproduces_the_claims(minilm) -> None:
    from backend.tokens.glot.experiments import StressConfig, run_stress

    torch.manual_seed(0)
    res = run_stress(StressConfig(variant="released", ratios=(0.9,), poolings=("glot",), bow=False), backbone=minilm,
                     example=False)
    assert res.rows[0]["accuracy"] >= 0.90
    res = run_stress(StressConfig(variant="hard", ratios=(0.9,), poolings=("mean", "max", "cls", "glot")),
                     backbone=minilm, example=False)
    acc = {r["pooling"]: r["accuracy"] for r in res.rows}
    uni = next(b["accuracy"] for b in res.bow if b["name"] == "bow-unigram")
    assert all(acc["glot"] >= v + 0.10 for v in (acc["mean"], acc["max"], acc["cls"], uni)), (acc, uni)
    res = run_stress(StressConfig(variant="relational", ratios=(0.9,), poolings=("mean", "adapool", "glot"),
                                  seeds=(0, 1, 2), bow=False), backbone=minilm, example=False)
    summary = {r["method"]: r for r in res.summary()}
    for better, worse, margin in RELATIONAL_ORDER:
        assert summary[better]["accuracy"] >= summary[worse]["accuracy"] + margin, summary
