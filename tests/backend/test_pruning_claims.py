"""Claims of RCPU on SmolLM2-135M-Instruct (the embedded model) and the shipped sweep tables.

ci tier: a fixed small subset (8 calibration segments of 128 tokens, 8 held-out windows) reruns the headline:
rotation compensation gives lower held-out perplexity than no compensation at 20 % and 30 %; one layer's captured
activations show least squares overfitting at small N. The shipped tables (assets/pruning_sweep.json,
assets/pruning_lab.json) are checked for the same claims at the sweep's scale.
full tier: reruns the shipped headline cells (N = 32, 32 held-out windows) and checks they reproduce.
"""

from __future__ import annotations

import copy
import json

import pytest

from backend.runtime import ASSETS

SWEEP = ASSETS / "pruning_sweep.json"
LAB = ASSETS / "pruning_lab.json"


@pytest.fixture(scope="module")
def smollm2():
    from backend.models import load

    return load("smollm2")


@pytest.fixture(scope="module")
def split(smollm2):
    from backend.compression import corpus

    return corpus.tokenize_split(smollm2.tokenizer)


def _ppl(lm, calib, eval_ids, ratio, comp, score="variance"):
    from backend.compression.lm import perplexity
    from backend.compression.pruning.pruning import PruneConfig, prune_llama

    if comp == "dense":
        return perplexity(lm.model, eval_ids)
    m = copy.deepcopy(lm.model)
    prune_llama(m, calib, PruneConfig(ratio=ratio, score=score, compensation=comp, n_calib=calib.shape[0]))
    return perplexity(m, eval_ids)


@pytest.fixture(scope="module")
def ci_headline(smollm2, split):
    calib = split.calib_segments(8, 128, seed=0)
    eval_ids = split.heldout_segments(8, 128)
    out = {"dense": _ppl(smollm2, calib, eval_ids, 0, "dense")}
    for ratio in (0.2, 0.3):
        for comp in ("none", "rotation"):
            out[(ratio, comp)] = _ppl(smollm2, calib, eval_ids, ratio, comp)
    print("ci-tier perplexities (N=8, 8 held-out windows):", out)
    return out


@pytest.mark.parametrize("ratio", [0.2, 0.3])
def test_rotation_beats_no_compensation_ci_subset(ci_headline, ratio, record_claim):
    record_claim(ppl_rotation=ci_headline[(ratio, "rotation")], ppl_none=ci_headline[(ratio, "none")],
                 ppl_dense=ci_headline["dense"])
    assert ci_headline[(ratio, "rotation")] < ci_headline[(ratio, "none")]
    assert ci_headline[(ratio, "rotation")] > ci_headline["dense"]  # pruning costs something


def test_least_squares_overfits_one_layer_at_small_n(smollm2, split, record_claim):
    """Layer 15, ratio 30 %, N = 8 segments: LS has the lower calibration error but the higher held-out error."""
    from backend.compression.pruning import lab

    caps = lab.capture_layer(smollm2.model, 15, split.calib_segments(8, 128, seed=0), split.heldout_segments(8, 128),
                             [8])
    for key in ("attn", "mlp"):
        p = lab.study_point(caps[key], 0.3, 8, 1e-4, "variance")["errors"]
        print(key, {k: (round(v["calib"], 4), round(v["heldout"], 4)) for k, v in p.items()})
        record_claim(**{f"{key}_{c}_{part}": p[c][part] for c in ("ls", "rotation") for part in ("calib", "heldout")})
        assert p["ls"]["calib"] < p["rotation"]["calib"] < p["none"]["calib"]
        assert p["ls"]["heldout"] > p["rotation"]["heldout"], key


# ------------------------------------------------------------------------------------------- shipped tables
def _rows():
    data = json.loads(SWEEP.read_text())
    return data, {(r["score"], r["compensation"], r["ratio"], r["n_calib"]): r for r in data["rows"]}


def test_shipped_sweep_headline_claim(record_claim):
    data, rows = _rows()
    n = data["settings"].get("n_main", 32)
    record_claim(**{f"ppl_{score}_{comp}_{int(ratio * 100)}": rows[(score, comp, ratio, n)]["perplexity"]
                    for ratio in (0.2, 0.3) for score, comp in (("variance", "rotation"), ("variance", "none"),
                                                                ("wanda_sp", "rotation"), ("wanda_sp", "none"))})
    for ratio in (0.2, 0.3):
        rot = rows[("variance", "rotation", ratio, n)]["perplexity"]
        none = rows[("variance", "none", ratio, n)]["perplexity"]
        assert rot < none, (ratio, rot, none)
        wanda = {c: rows[("wanda_sp", c, ratio, n)]["perplexity"] for c in ("none", "rotation")}
        assert wanda["rotation"] < wanda["none"]
    for r in data["rows"]:  # bookkeeping: kept counts follow the ratio, effective <= stored
        assert r["heads_dropped"] == 30 * int(r["ratio"] * 9 + 1e-9)
        assert r["intermediate_size"] == 1536 - int(r["ratio"] * 1536 + 1e-9)
        assert r["params_effective"] <= r["params_stored"] < data["dense"]["params"]


@pytest.mark.parametrize("ratio", [0.1, 0.2, 0.3])
@pytest.mark.xfail(strict=False, reason=(
    "measured in the shipped sweep (SmolLM2-135M, N = 32, 32 held-out windows of 128 tokens): FLAP (fluctuation "
    "score + mean bias) is ahead of RCPU (variance + rotation) at low ratios, perplexity 22.87 vs 23.03 (10%), "
    "28.57 vs 29.59 (20%), 44.25 vs 48.27 (30%); RCPU leads from 40% (77.6 vs 79.9) and 50% (122.7 vs 172.8). The "
    "paper's own margin over FLAP at 30% on Llama-7B is 0.24 perplexity (18.35 vs 18.59) and reverses on Llama-2-13B "
    "(16.99 vs 16.71)"))
def test_shipped_sweep_rcpu_beats_flap(ratio, record_claim):
    """The paper's comparison with FLAP at the headline ratios (its Table of perplexities), read from the shipped
    sweep at its main calibration size."""
    data, rows = _rows()
    n = data["settings"].get("n_main", 32)
    rcpu = rows[("variance", "rotation", ratio, n)]["perplexity"]
    flap = rows[("fluctuation", "bias", ratio, n)]["perplexity"]
    record_claim(ppl_rcpu=rcpu, ppl_flap=flap)
    assert rcpu < flap, (ratio, rcpu, flap)


def test_shipped_sweep_rcpu_beats_flap_at_high_ratios(record_claim):
    """At 40% and 50% RCPU's rotation is ahead of FLAP's mean bias in the shipped sweep."""
    data, rows = _rows()
    n = data["settings"].get("n_main", 32)
    got = {int(r * 100): (rows[("variance", "rotation", r, n)]["perplexity"],
                          rows[("fluctuation", "bias", r, n)]["perplexity"]) for r in (0.4, 0.5)}
    record_claim(**{f"ppl_{k}_{p}": v[i] for k, v in got.items() for i, p in enumerate(("rcpu", "flap"))})
    assert all(rcpu < flap for rcpu, flap in got.values()), got


def test_shipped_lab_shows_overfitting_of_least_squares(record_claim):
    data = json.loads(LAB.read_text())
    small = min(data["n_list"])
    record_claim(n_calib=small)
    for sub in ("attn", "mlp"):
        rs = {r["compensation"]: r for r in data["rows"]
              if r["sublayer"] == sub and r["n_calib"] == small and r["ratio"] == 0.3 and r["score"] == "variance"}
        record_claim(**{f"{sub}_{c}_{part}": rs[c][f"{part}_err"] for c in ("ls", "rotation")
                        for part in ("calib", "heldout")})
        assert rs["ls"]["calib_err"] < rs["rotation"]["calib_err"]
        assert rs["ls"]["heldout_err"] > rs["rotation"]["heldout_err"], sub


@pytest.mark.full
def test_full_scale_headline_reproduces_shipped_sweep(smollm2, split, record_claim):
    data, rows = _rows()
    n, n_eval = data["settings"].get("n_main", 32), data["settings"]["n_eval"]
    calib = split.calib_segments(n, 128, seed=0)
    eval_ids = split.heldout_segments(n_eval, 128)
    for ratio in (0.2, 0.3):
        got = {c: _ppl(smollm2, calib, eval_ids, ratio, c) for c in ("none", "rotation")}
        record_claim(**{f"ppl_{c}_{int(ratio * 100)}": v for c, v in got.items()})
        for c, v in got.items():
            assert v == pytest.approx(rows[("variance", c, ratio, n)]["perplexity"], rel=1e-3)
        assert got["rotation"] < got["none"]


def test_encoder_rotation_keeps_embeddings_closer_than_no_compensation():
    """MiniLM (encoder case), ratio 30 %, 16 calibration paragraphs: embedding cosine to the dense model."""
    from backend.compression.pruning.encoder import run_encoder_pruning
    from backend.compression.pruning.pruning import PruneConfig
    from backend.models import load

    enc = load("minilm")
    got = {c: run_encoder_pruning(enc, PruneConfig(ratio=0.3, compensation=c, n_calib=16), n_eval=32)
           for c in ("none", "rotation")}
    print({c: round(v["cosine_mean"], 4) for c, v in got.items()})
    assert got["rotation"]["cosine_mean"] > got["none"]["cosine_mean"]
    assert got["rotation"]["params_pruned"] < got["rotation"]["params_dense"]
    assert got["rotation"]["heads_kept_per_layer"] == [12 - 3] * 6 and got["rotation"]["intermediate_size"] == 1076
